//! Arrays of an open file: by JSON Pointer, typed, viewed in place or dynamic.

use std::borrow::Cow;

use asdf_ndarray::{
    AnyArray, BlockStore, ChunkedArray, Element, NdArrayMeta, NdError, ReadLimits, ZarrArray,
    CHUNKED_TAG,
};
use asdf_yaml::pointer::push_token;
use asdf_yaml::{Node, Value};
use ndarray::{ArrayD, ArrayViewD};

use crate::error::{AsdfError, Result};
use crate::file::AsdfFile;

/// What kind of array a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayKind {
    /// `core/ndarray-1.x`.
    NdArray,
    /// `core/chunked-ndarray-1.0.0` (ASDF.jl's tiles).
    Chunked,
    /// asdf-zarr's `zarr-1.0.0`: a zarr v2 array whose chunks are blocks of the file.
    Zarr,
}

/// Whether `node` is an array, and which kind.
pub fn array_kind(node: &Node) -> Option<ArrayKind> {
    match node.tag() {
        Some(t) if asdf_ndarray::is_ndarray_tag(t) => Some(ArrayKind::NdArray),
        Some(CHUNKED_TAG) => Some(ArrayKind::Chunked),
        Some(t) if asdf_ndarray::is_zarr_tag(t) => Some(ArrayKind::Zarr),
        _ => None,
    }
}

/// Appends `/` and `token`'s text (which needs no escaping: a number or a bool).
fn write_token(path: &mut String, token: &dyn std::fmt::Display) {
    use std::fmt::Write;
    let _ = write!(path, "/{token}");
}

/// Collects the JSON Pointers of every array under `node` (not looking inside arrays).
pub fn find_arrays(node: &Node) -> Vec<(String, ArrayKind)> {
    find_array_nodes(node)
        .into_iter()
        .map(|(p, kind, _)| (p, kind))
        .collect()
}

/// [`find_arrays`] with each array's node, for callers that read many arrays (looking each
/// pointer up again would walk large mappings once per array).
pub fn find_array_nodes(node: &Node) -> Vec<(String, ArrayKind, &Node)> {
    type Out<'n> = Vec<(String, ArrayKind, &'n Node)>;
    fn walk<'n>(node: &'n Node, path: &mut String, out: &mut Out<'n>, depth: usize) {
        if depth > 10_000 {
            return;
        }
        if let Some(kind) = array_kind(node) {
            out.push((path.clone(), kind, node));
            return;
        }
        let len = path.len();
        match node.value() {
            Value::Map(m) => {
                for (k, v) in m.iter() {
                    match k.value() {
                        Value::Str(s) => push_token(path, s),
                        Value::Int(i) => write_token(path, i),
                        Value::Bool(b) => write_token(path, b),
                        _ => continue,
                    }
                    walk(v, path, out, depth + 1);
                    path.truncate(len);
                }
            }
            Value::Seq(items) => {
                for (i, v) in items.iter().enumerate() {
                    write_token(path, &i);
                    walk(v, path, out, depth + 1);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(node, &mut String::new(), &mut out, 0);
    out
}

/// The first block of an external (exploded) ASDF file named by `uri` in the file at `base`,
/// opened with `options` (those of the file naming it, whose policy on external files applies
/// with `base`'s directory as the allowed one). `opened` holds the distinct files opened so far,
/// against `options.max_external_files`.
pub(crate) fn external_block(
    base: Option<&std::path::Path>,
    uri: &str,
    options: &crate::OpenOptions,
    opened: &std::sync::Mutex<std::collections::HashSet<std::path::PathBuf>>,
) -> Result<Vec<u8>> {
    let err = |reason: String| AsdfError::External {
        uri: uri.to_string(),
        reason,
    };
    let base = base.ok_or_else(|| {
        err("the file was not opened from a path, so relative URIs have no base".into())
    })?;
    let path = crate::external::locate(uri, base, base, options.external_files)?;
    {
        let mut set = opened
            .lock()
            .map_err(|_| err("a thread reading external files panicked".into()))?;
        if !set.contains(&path) {
            if set.len() >= options.max_external_files {
                return Err(err(format!(
                    "the file names more than {} external files \
                     (OpenOptions::max_external_files)",
                    options.max_external_files
                )));
            }
            set.insert(path.clone());
        }
    }
    let file = crate::file::open_located(uri, &path, options)?;
    let data = file.block_data(0).map_err(|e| {
        err(format!(
            "its block 0: {}",
            crate::external::content_free(&e)
        ))
    })?;
    Ok(data.into_owned())
}

/// Whether an external array's URI names the file itself (empty, or only a fragment): its own
/// first block.
pub(crate) fn names_this_file(uri: &str) -> bool {
    uri.is_empty() || uri.starts_with('#')
}

/// The file `key` (a chunk key or `.zarray`) of the zarr directory store `store` named by the
/// file at `base`, under `options`' policy on external files (the store's directory is located
/// as an external file is; under `SameDirAndBelow` each chunk file is checked again, links
/// included). `None` when the store has no such file: a chunk never written.
pub(crate) fn zarr_store_file(
    base: Option<&std::path::Path>,
    store: &str,
    key: &str,
    options: &crate::OpenOptions,
) -> Result<Option<Vec<u8>>> {
    let err = |reason: String| AsdfError::External {
        uri: format!("{store}/{key}"),
        reason,
    };
    let plain_key = key == ".zarray"
        || (!key.contains("..")
            && !key.starts_with('/')
            && key
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == '/'));
    if !plain_key {
        return Err(err("not a zarr chunk key".into()));
    }
    if asdf_ndarray::is_remote_store(store) {
        #[cfg(feature = "remote")]
        return crate::remote::zarr_store::fetch_for_local(store, key, options);
        #[cfg(not(feature = "remote"))]
        return Err(err(
            "a zarr store on the network: reading it needs the `remote` feature of asdf".into(),
        ));
    }
    let base = base.ok_or_else(|| {
        err("the file was not opened from a path, so its zarr store has no base".into())
    })?;
    let dir = crate::external::locate(store, base, base, options.external_files)?;
    let candidate = dir.join(key);
    if !candidate.is_file() {
        return Ok(None);
    }
    let path = match options.external_files {
        crate::ExternalFiles::SameDirAndBelow => crate::external::confine(&candidate, base, &err)?,
        _ => candidate,
    };
    let limit = options.blocks.limits.max_decoded_block_size;
    let len = std::fs::metadata(&path)
        .map_err(|e| err(format!("cannot read it: {e}")))?
        .len();
    if len > limit {
        return Err(err(format!(
            "{len} bytes exceed the ceiling of {limit} bytes per block \
             (OpenOptions::blocks.limits.max_decoded_block_size)"
        )));
    }
    std::fs::read(&path)
        .map(Some)
        .map_err(|e| err(format!("cannot read it: {e}")))
}

impl<B: AsRef<[u8]>> AsdfFile<B> {
    /// Block `source`'s decoded data through the cache (charged to the decode budget already).
    pub(crate) fn cached_data(
        &self,
        source: i64,
    ) -> std::result::Result<Cow<'_, [u8]>, asdf_block::BlockError> {
        let info = self.blocks().info(source)?;
        if !info.header.is_compressed() {
            return self.blocks().data(source);
        }
        let i = info.index;
        if let Some(kept) = self.cache.get(i) {
            return Ok(Cow::Borrowed(kept));
        }
        let data = self.blocks().data(source)?;
        if self.cache.admit(i, data.len() as u64) {
            return Ok(self.cache.keep(i, data.into_owned()));
        }
        Ok(data)
    }
}

impl<B: AsRef<[u8]>> BlockStore for AsdfFile<B> {
    fn block(&self, source: i64) -> asdf_ndarray::Result<Cow<'_, [u8]>> {
        self.decoded.charge_nd(self.blocks().info(source)?)?;
        Ok(self.cached_data(source)?)
    }

    fn block_len(&self, source: i64) -> asdf_ndarray::Result<Option<u64>> {
        let info = self.blocks().info(source)?;
        if info.header.is_compressed() && self.cache.seen(info.index) {
            // Decoded before: the next reads go through the cache (`block`), which keeps a
            // block shared by several arrays instead of decoding it for each.
            return Ok(None);
        }
        let len = self.blocks().block_len(source)?;
        if len.is_some() {
            // Charged before the caller allocates (once per block: `block_into` is free then).
            self.decoded.charge_nd(self.blocks().info(source)?)?;
        }
        Ok(len)
    }

    fn block_into(&self, source: i64, dst: &mut [u8]) -> asdf_ndarray::Result<()> {
        let info = self.blocks().info(source)?;
        self.decoded.charge_nd(info)?;
        if info.header.is_compressed() {
            self.cache.note_use(info.index);
        }
        Ok(self.blocks().decode_into(source, dst)?)
    }

    fn block_range(
        &self,
        source: i64,
        range: std::ops::Range<u64>,
    ) -> asdf_ndarray::Result<Option<Vec<u8>>> {
        let info = self.blocks().info(source)?;
        if self.cache.seen(info.index) {
            return Ok(None); // decoded whole before: `block` reads it from the cache
        }
        self.decoded.charge_nd(info)?;
        Ok(self.blocks().data_range(source, range)?)
    }

    fn zarr_file(&self, store: &str, key: &str) -> asdf_ndarray::Result<Option<Vec<u8>>> {
        zarr_store_file(self.absolute_path(), store, key, &self.options)
            .map_err(|e| NdError::Usage(e.to_string()))
    }

    fn external(&self, uri: &str) -> asdf_ndarray::Result<Cow<'_, [u8]>> {
        if names_this_file(uri) {
            return self.block(0);
        }
        external_block(
            self.absolute_path(),
            uri,
            &self.options,
            &self.externals_opened,
        )
        .map(Cow::Owned)
        .map_err(|e| NdError::Usage(e.to_string()))
    }
}

impl<B: AsRef<[u8]> + Sync> AsdfFile<B> {
    fn node_at(&self, pointer: &str) -> Result<&Node> {
        self.pointer(pointer)
            .ok_or_else(|| AsdfError::NoNode(pointer.to_string()))
    }

    fn meta_at(&self, pointer: &str) -> Result<NdArrayMeta> {
        meta_of(pointer, self.node_at(pointer)?)
    }

    /// The array at `pointer` as an owned `ArrayD<T>` (copied, bytes swapped as needed;
    /// chunked arrays assembled). A clear error names the stored datatype if it is not `T`.
    ///
    /// ```
    /// use asdf::{AsdfFile, AsdfWriter, StoreOptions};
    /// let a = ndarray::array![[1.5f64, 2.5], [3.5, 4.5]];
    /// let mut w = AsdfWriter::new();
    /// let node = w.add(&a, &StoreOptions::compressed("zstd").unwrap()).unwrap();
    /// let tree = asdf::yaml::Node::mapping([("data", node)]);
    /// let bytes = w.to_bytes(tree, &Default::default()).unwrap();
    /// let f = AsdfFile::from_bytes(bytes, &Default::default()).unwrap();
    /// assert_eq!(f.array::<f64>("/data").unwrap(), a.into_dyn());
    /// assert!(f.array::<f32>("/data").unwrap_err().to_string().contains("float64"));
    /// ```
    pub fn array<T: Element>(&self, pointer: &str) -> Result<ArrayD<T>> {
        array_in(self.node_at(pointer)?, pointer, self, &self.array_limits)
    }

    /// A zero-copy view of the array at `pointer`, borrowed from the file's memory map; an
    /// error says why when there cannot be one (compressed block, byte order, alignment).
    pub fn view<T: Element>(&self, pointer: &str) -> Result<ArrayViewD<'_, T>> {
        let meta = self.meta_at(pointer)?;
        // Refused from the header: asking the store would decode a compressed block whole
        // only to find that it cannot be viewed.
        if let Some(asdf_ndarray::Source::Block(b)) = meta.source {
            if self.block_is_compressed(b) {
                return Err(arr(
                    pointer,
                    NdError::NotViewable("the block is compressed: read the array instead".into()),
                ));
            }
        }
        meta.view::<T>(self).map_err(|e| arr(pointer, e))
    }

    /// Whether block `source` is stored compressed, from its header (`false` when there is no
    /// such block): what decides, before anything is decoded, whether an array's bytes can be
    /// used where they lie.
    pub fn block_is_compressed(&self, source: i64) -> bool {
        self.blocks()
            .info(source)
            .is_ok_and(|i| i.header.is_compressed())
    }

    /// The array at `pointer` whatever its datatype.
    pub fn read(&self, pointer: &str) -> Result<AnyArray> {
        read_in(self.node_at(pointer)?, pointer, self, &self.array_limits)
    }

    /// The sub-array `region` (one range per dimension) of the array at `pointer`. A chunked or
    /// asdf-zarr array decodes only the chunks the region touches; an uncompressed block-backed
    /// array is sliced from its zero-copy view (or copies only the region's rows when it cannot
    /// be viewed); an `lz4` block decodes only the 4 MiB chunks holding the region's rows;
    /// other arrays are read and sliced. `RemoteFile::read_region` (feature `remote`) reads only the byte ranges or
    /// chunks that cover the region.
    ///
    /// ```
    /// use asdf::{AsdfFile, AsdfWriter, StoreOptions};
    /// use ndarray::{s, Array2};
    /// let a = Array2::from_shape_fn((40, 50), |(i, j)| (i * 100 + j) as i32);
    /// let mut w = AsdfWriter::new();
    /// let node = w.add(&a, &StoreOptions::default()).unwrap();
    /// let bytes = w.to_bytes(asdf::yaml::Node::mapping([("a", node)]), &Default::default()).unwrap();
    /// let f = AsdfFile::from_bytes(bytes, &Default::default()).unwrap();
    /// let part = f.read_region::<i32>("/a", &[10..13, 20..50]).unwrap();
    /// assert_eq!(part, a.slice(s![10..13, 20..50]).into_dyn());
    /// assert!(f.read_region::<i32>("/a", &[0..41, 0..1]).is_err());
    /// ```
    pub fn read_region<T: Element>(
        &self,
        pointer: &str,
        region: &[std::ops::Range<usize>],
    ) -> Result<ArrayD<T>> {
        let node = self.node_at(pointer)?;
        // A block-backed array is sliced from its view when it has one (`view` refuses a
        // compressed block from its header, without decoding it).
        let in_block = matches!(
            meta_of(pointer, node).map(|m| m.source),
            Ok(Some(asdf_ndarray::Source::Block(_)))
        );
        if in_block {
            if let Ok(view) = self.view::<T>(pointer) {
                return slice_region(view, pointer, region);
            }
        }
        region_in(node, pointer, self, &self.array_limits, region)
    }

    /// The array at `pointer` and its mask (`true` = missing: inline `null`s, a `mask` array
    /// broadcast to the array's shape, or a sentinel value; `None` without a mask), within
    /// [`OpenOptions::arrays`](crate::OpenOptions::arrays).
    pub fn read_masked(&self, pointer: &str) -> Result<(AnyArray, Option<ArrayD<bool>>)> {
        self.meta_at(pointer)?
            .read_masked_with(self, &self.array_limits)
            .map_err(|e| arr(pointer, e))
    }

    /// The parsed ndarray node at `pointer` (shape, datatype, source, ...).
    pub fn meta(&self, pointer: &str) -> Result<NdArrayMeta> {
        self.meta_at(pointer)
    }

    /// The JSON Pointers of every array in the tree, in tree order.
    pub fn arrays(&self) -> Vec<(String, ArrayKind)> {
        find_arrays(self.tree())
    }
}

/// An array node, parsed by kind.
pub(crate) enum Parsed {
    /// `core/ndarray`.
    Nd(NdArrayMeta),
    /// ASDF.jl's chunked ndarray.
    Chunked(ChunkedArray),
    /// An asdf-zarr array.
    Zarr(ZarrArray),
}

/// Parses the array `node` (at `pointer`) by its kind (an asdf-zarr array in an external store
/// reads the store's `.zarray` through `store`).
pub(crate) fn parse_array(
    node: &Node,
    pointer: &str,
    store: &(impl BlockStore + ?Sized),
) -> Result<Parsed> {
    match array_kind(node) {
        Some(ArrayKind::Chunked) => ChunkedArray::from_node(node).map(Parsed::Chunked),
        Some(ArrayKind::Zarr) => ZarrArray::open(node, store).map(Parsed::Zarr),
        _ => return meta_of(pointer, node).map(Parsed::Nd),
    }
    .map_err(|e| arr(pointer, e))
}

/// The array `node` (at `pointer`) as an owned `ArrayD<T>`, its blocks read from `store`.
pub(crate) fn array_in<T: Element>(
    node: &Node,
    pointer: &str,
    store: &(impl BlockStore + Sync),
    limits: &ReadLimits,
) -> Result<ArrayD<T>> {
    match parse_array(node, pointer, store)? {
        Parsed::Nd(meta) => meta.array_with::<T>(store, limits),
        Parsed::Chunked(c) => c.array_with::<T>(store, limits),
        Parsed::Zarr(z) => z.array_with::<T>(store, limits),
    }
    .map_err(|e| arr(pointer, e))
}

/// The array `node` (at `pointer`) whatever its datatype, its blocks read from `store`.
pub(crate) fn read_in(
    node: &Node,
    pointer: &str,
    store: &(impl BlockStore + Sync),
    limits: &ReadLimits,
) -> Result<AnyArray> {
    match parse_array(node, pointer, store)? {
        Parsed::Nd(meta) => meta.read_with(store, limits),
        Parsed::Chunked(c) => c.read_with(store, limits),
        Parsed::Zarr(z) => z.read_with(store, limits),
    }
    .map_err(|e| arr(pointer, e))
}

/// The sub-array `region` of the array `node` (at `pointer`): the chunks it touches for a
/// chunked or zarr array or a chunked-`lz4` block, the whole array sliced otherwise.
pub(crate) fn region_in<T: Element>(
    node: &Node,
    pointer: &str,
    store: &(impl BlockStore + Sync),
    limits: &ReadLimits,
    region: &[std::ops::Range<usize>],
) -> Result<ArrayD<T>> {
    let part = match parse_array(node, pointer, store)? {
        Parsed::Nd(meta) => meta.region_with::<T>(store, region, limits),
        Parsed::Chunked(c) => c.region_with::<T>(store, region, limits),
        Parsed::Zarr(z) => z.region_with::<T>(store, region, limits),
    };
    part.map_err(|e| arr(pointer, e))
}

/// The sub-array `region` of `a` (at `pointer`), copied; an error unless it has one range per
/// dimension, each inside it.
pub(crate) fn slice_region<T: Clone>(
    a: ArrayViewD<'_, T>,
    pointer: &str,
    region: &[std::ops::Range<usize>],
) -> Result<ArrayD<T>> {
    asdf_ndarray::slice_region(a, region).map_err(|e| arr(pointer, e))
}

pub(crate) fn meta_of(pointer: &str, node: &Node) -> Result<NdArrayMeta> {
    match array_kind(node) {
        Some(ArrayKind::NdArray) => NdArrayMeta::from_node(node).map_err(|e| arr(pointer, e)),
        _ => Err(AsdfError::NotAnArray {
            pointer: pointer.to_string(),
            tag: node.tag().map(str::to_string),
        }),
    }
}

pub(crate) fn arr(pointer: &str, source: NdError) -> AsdfError {
    AsdfError::Array {
        pointer: pointer.to_string(),
        source,
    }
}
