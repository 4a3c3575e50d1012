//! asdf-zarr's `zarr-1.0.0`: a zarr v2 array whose chunks are ASDF blocks.
//!
//! The node holds the array's `.zarray` metadata and `chunk_block_map`, the index of a block
//! holding a little-endian int32 array shaped like the chunk grid (C order): the block index of
//! each chunk, `-1` where the chunk was never written (it reads as `fill_value`). Each chunk
//! block holds the chunk as zarr encoded it: the full chunk shape (edge chunks padded), in the
//! array's `order`, compressed by the numcodecs `compressor` when there is one.

use std::borrow::Cow;
use std::ops::Range;

use asdf_yaml::{Node, Value};
use ndarray::{ArrayD, IxDyn, ShapeBuilder};

use crate::any::AnyArray;
use crate::chunked::{assemble, Decoded, Piece};
use crate::datatype::{parse_dims, ByteOrder, ScalarType};
use crate::element::Element;
use crate::error::{field_err, NdError, Result};
use crate::layout::{decode_vec, Layout};
use crate::meta::{check_limit, ReadLimits, MAX_NDIM};
use crate::region::{check_region, region_shape};
use crate::store::BlockStore;
use crate::values::with_scalar;

/// Tag prefix of asdf-zarr arrays (`…zarr-1.0.0`).
pub const ZARR_TAG_PREFIX: &str = "asdf://asdf-format.org/zarr/tags/zarr-";

/// Whether `tag` is an asdf-zarr array tag this crate reads (version 1.x).
pub fn is_zarr_tag(tag: &str) -> bool {
    tag.strip_prefix(ZARR_TAG_PREFIX)
        .is_some_and(|v| v.starts_with("1."))
}

/// A chunk that was never written.
const MISSING: i32 = -1;

/// A parsed asdf-zarr array stored in the file's blocks.
///
/// ```
/// use asdf_ndarray::{ArrayWriter, PendingBlock, ZarrArray};
/// // A 3 × 5 uint16 array in 2 × 2 chunks, stored as asdf-zarr does (uncompressed here).
/// let mut w = ArrayWriter::new();
/// let mut raw = |data: Vec<u8>| w.push_block(PendingBlock {
///     data: data.into(), compression: asdf_block::Label::NONE, encode: Default::default(),
/// });
/// let mut map = Vec::new();
/// for v in [1u16, 2, 0, 3, 4, 5] {
///     // chunk (0, 2) was never written: -1 in the map, read as the fill value 9
///     let chunk: Vec<u8> = (0..4).flat_map(|_| v.to_le_bytes()).collect();
///     let index = if v == 0 { -1 } else { raw(chunk) as i32 };
///     map.extend(index.to_le_bytes());
/// }
/// let map_block = raw(map);
/// let node = asdf_yaml::parse_str(&format!(
///     "{{.zarray: {{chunks: [2, 2], compressor: null, dtype: '<u2', fill_value: 9, \
///       filters: null, order: C, shape: [3, 5], zarr_format: 2}}, chunk_block_map: {map_block}}}"
/// )).unwrap();
/// let z = ZarrArray::from_node(&node).unwrap();
/// let a = z.array::<u16>(&w.memory_store()).unwrap();
/// assert_eq!(a, ndarray::array![[1, 1, 2, 2, 9], [1, 1, 2, 2, 9], [3, 3, 4, 4, 5]].into_dyn());
/// let part = z.region::<u16>(&w.memory_store(), &[1..3, 3..5]).unwrap();
/// assert_eq!(part, ndarray::array![[2, 9], [4, 5]].into_dyn());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ZarrArray {
    /// Shape of the array.
    pub shape: Vec<usize>,
    /// Shape of every chunk (edge chunks are stored padded to it).
    pub chunks: Vec<usize>,
    /// The element type.
    pub scalar: ScalarType,
    /// Byte order of the stored elements.
    pub byteorder: ByteOrder,
    /// Whether chunks are stored in Fortran (column-major) order.
    pub fortran: bool,
    /// The numcodecs compressor id (`zlib`, `blosc`, ...), `None` for raw chunks.
    pub compressor: Option<String>,
    /// `fill_value`: what never-written chunks read as (`None`: zero).
    pub fill_value: Option<Node>,
    /// Where the chunks are.
    pub storage: ZarrStorage,
}

/// Where an asdf-zarr array's chunks are stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZarrStorage {
    /// In the file's blocks, named by the chunk map held in block `chunk_block_map`.
    Blocks {
        /// The block holding the chunk map.
        chunk_block_map: i64,
    },
    /// As files of a zarr directory store (`DirectoryStore`, `NestedDirectoryStore`, or an
    /// `FSStore` on the local file system) at `path`, named by their chunk keys.
    Directory {
        /// The store's directory, as the node names it.
        path: String,
        /// What joins the grid coordinates of a chunk key (`.` or `/`).
        separator: char,
    },
}

/// The chunk grid's block indices (C order over the grid), `-1` for chunks never written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkMap {
    /// Chunks per dimension.
    pub grid: Vec<usize>,
    /// One block index per chunk.
    pub blocks: Vec<i32>,
}

impl ZarrArray {
    /// Parses and validates an asdf-zarr node with internal (block) storage. Arrays whose
    /// chunks live in an external zarr store need [`open`](Self::open), which reads the store's
    /// `.zarray`; the zarr features this crate does not read (filters, structured and string
    /// dtypes, zarr v3) are refused with the reason.
    pub fn from_node(node: &Node) -> Result<ZarrArray> {
        let Some(meta) = node.get(".zarray") else {
            let store = external_store(node)?;
            return Err(field_err(
                "store",
                format!(
                    "the chunks are in the external zarr store {:?}: read with ZarrArray::open",
                    store.0
                ),
            ));
        };
        let chunk_block_map = node
            .get("chunk_block_map")
            .and_then(Node::as_i64)
            .ok_or_else(|| field_err("chunk_block_map", "expected a block index"))?;
        Self::from_zarray(meta, ZarrStorage::Blocks { chunk_block_map })
    }

    /// Parses an asdf-zarr node of either storage: chunks in blocks, or in an external zarr
    /// directory store whose `.zarray` is read through [`BlockStore::zarr_file`].
    pub fn open(node: &Node, store: &(impl BlockStore + ?Sized)) -> Result<ZarrArray> {
        if node.get(".zarray").is_some() {
            return Self::from_node(node);
        }
        let (path, nested) = external_store(node)?;
        let text = store
            .zarr_file(&path, ".zarray")?
            .ok_or_else(|| field_err("store", format!("the zarr store {path:?} has no .zarray")))?;
        let meta = std::str::from_utf8(&text)
            .ok()
            .and_then(|t| asdf_yaml::parse_str(t).ok())
            .ok_or_else(|| field_err("store", format!("{path}/.zarray is not JSON")))?;
        let separator = match (
            nested,
            meta.get("dimension_separator").and_then(Node::as_str),
        ) {
            (true, _) | (false, Some("/")) => '/',
            (false, None | Some(".")) => '.',
            (false, Some(other)) => {
                return Err(field_err(
                    ".zarray.dimension_separator",
                    format!("{other:?}: expected . or /"),
                ))
            }
        };
        Self::from_zarray(&meta, ZarrStorage::Directory { path, separator })
    }

    /// Parses zarr v2 array metadata (`.zarray`) for chunks in `storage`.
    pub fn from_zarray(meta: &Node, storage: ZarrStorage) -> Result<ZarrArray> {
        let zarray = |name: &str| meta.get(name);
        let f = |name: &str| format!(".zarray.{name}");
        if zarray("zarr_format").and_then(Node::as_i64) != Some(2) {
            return Err(field_err(f("zarr_format"), "expected 2 (zarr v2)"));
        }
        let dims = |name: &str| {
            zarray(name)
                .and_then(parse_dims)
                .filter(|s| s.len() <= MAX_NDIM)
                .ok_or_else(|| {
                    field_err(
                        f(name),
                        format!("expected a list of at most {MAX_NDIM} integers ≥ 0"),
                    )
                })
        };
        let (shape, chunks) = (dims("shape")?, dims("chunks")?);
        if chunks.len() != shape.len() || chunks.contains(&0) {
            return Err(field_err(
                f("chunks"),
                format!("{chunks:?} must give a positive size per dimension of {shape:?}"),
            ));
        }
        let (scalar, byteorder) = parse_dtype(zarray("dtype"))?;
        let fortran = match zarray("order").and_then(Node::as_str) {
            Some("C") => false,
            Some("F") => true,
            _ => return Err(field_err(f("order"), "expected C or F")),
        };
        check_filters(zarray("filters"))?;
        Ok(ZarrArray {
            shape,
            chunks,
            scalar,
            byteorder,
            fortran,
            compressor: parse_compressor(zarray("compressor"))?,
            fill_value: zarray("fill_value").filter(|n| !n.is_null()).cloned(),
            storage,
        })
    }

    /// The keys of the chunk files `region` touches (the whole array when `None`), in C order,
    /// for chunks in an external store (none for chunks in blocks): what a reader fetches
    /// before [`region_with`](Self::region_with) asks its store for them. At most
    /// [`MAX_CHUNK_FILES`].
    pub fn chunk_keys(&self, region: Option<&[Range<usize>]>) -> Result<Vec<String>> {
        let ZarrStorage::Directory { separator, .. } = &self.storage else {
            return Ok(Vec::new());
        };
        let full: Vec<Range<usize>> = self.shape.iter().map(|&n| 0..n).collect();
        let region = region.unwrap_or(&full);
        let inside = region.len() == self.shape.len()
            && region
                .iter()
                .zip(&self.shape)
                .all(|(r, &n)| r.start <= r.end && r.end <= n);
        if !inside {
            return Err(NdError::Usage(format!(
                "the region {region:?} is not inside the shape {:?}",
                self.shape
            )));
        }
        let grid = self.grid();
        let touched = Touched::new(&self.chunks, &grid, region);
        if touched.count > MAX_CHUNK_FILES {
            return Err(NdError::Usage(format!(
                "the region touches {} chunk files of the zarr store, more than the {MAX_CHUNK_FILES} \
                 one read fetches",
                touched.count
            )));
        }
        Ok((0..touched.count)
            .map(|k| chunk_key(&touched.at(k).0, *separator))
            .collect())
    }

    /// The block holding the chunk map, for chunks stored in blocks.
    pub fn chunk_block_map(&self) -> Option<i64> {
        match self.storage {
            ZarrStorage::Blocks { chunk_block_map } => Some(chunk_block_map),
            ZarrStorage::Directory { .. } => None,
        }
    }

    /// Chunks per dimension.
    pub fn grid(&self) -> Vec<usize> {
        self.shape
            .iter()
            .zip(&self.chunks)
            .map(|(&s, &c)| s.div_ceil(c))
            .collect()
    }

    /// The chunk map, read from its block: exactly one int32 per chunk, each `-1` or a
    /// non-negative block index.
    pub fn chunk_map(&self, store: &(impl BlockStore + ?Sized)) -> Result<ChunkMap> {
        let grid = self.grid();
        let count = crate::datatype::checked_product(&grid)
            .ok_or_else(|| field_err("chunk_block_map", "the chunk grid overflows"))?;
        let Some(chunk_block_map) = self.chunk_block_map() else {
            return Err(field_err(
                "store",
                "the chunks are files of a zarr store, not blocks",
            ));
        };
        let bytes = store.block(chunk_block_map)?;
        if Some(bytes.len()) != count.checked_mul(4) {
            return Err(field_err(
                "chunk_block_map",
                format!(
                    "block {chunk_block_map} holds {} bytes, the {grid:?} chunk grid needs \
                     {count} int32s",
                    bytes.len()
                ),
            ));
        }
        let blocks: Vec<i32> = bytes
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if let Some(bad) = blocks.iter().find(|&&b| b < MISSING) {
            return Err(field_err(
                "chunk_block_map",
                format!("block index {bad} is neither -1 (missing) nor a block"),
            ));
        }
        Ok(ChunkMap { grid, blocks })
    }

    /// The blocks holding the chunks `region` touches (every chunk when `None`), the chunk map's
    /// own block first.
    pub fn blocks_for(&self, map: &ChunkMap, region: Option<&[Range<usize>]>) -> Result<Vec<i64>> {
        let full: Vec<Range<usize>> = self.shape.iter().map(|&d| 0..d).collect();
        let region = region.unwrap_or(&full);
        check_region(&self.shape, region)?;
        if map.grid != self.grid() {
            return Err(NdError::Usage(format!(
                "the chunk map's grid {:?} is not the array's {:?}",
                map.grid,
                self.grid()
            )));
        }
        let touched = Touched::new(&self.chunks, &map.grid, region);
        let Some(map_block) = self.chunk_block_map() else {
            return Ok(Vec::new());
        };
        let mut out = vec![map_block];
        for k in 0..touched.count {
            let block = map.blocks[touched.at(k).1];
            if block != MISSING {
                out.push(i64::from(block));
            }
        }
        Ok(out)
    }

    /// The whole array, with the default [`ReadLimits`].
    pub fn array<T: Element>(
        &self,
        store: &(impl BlockStore + Sync + ?Sized),
    ) -> Result<ArrayD<T>> {
        self.array_with(store, &ReadLimits::default())
    }

    /// [`array`](Self::array) with explicit limits.
    pub fn array_with<T: Element>(
        &self,
        store: &(impl BlockStore + Sync + ?Sized),
        limits: &ReadLimits,
    ) -> Result<ArrayD<T>> {
        let full: Vec<Range<usize>> = self.shape.iter().map(|&d| 0..d).collect();
        self.region_with(store, &full, limits)
    }

    /// The sub-array `region` (one range per dimension), with the default [`ReadLimits`]:
    /// only the chunks it touches are read and decoded, in parallel.
    pub fn region<T: Element>(
        &self,
        store: &(impl BlockStore + Sync + ?Sized),
        region: &[Range<usize>],
    ) -> Result<ArrayD<T>> {
        self.region_with(store, region, &ReadLimits::default())
    }

    /// [`region`](Self::region) with explicit limits: the result, and each chunk decoded, are
    /// bounded by [`ReadLimits::max_expanded_bytes`] (never-written chunks take no space in
    /// the file).
    pub fn region_with<T: Element>(
        &self,
        store: &(impl BlockStore + Sync + ?Sized),
        region: &[Range<usize>],
        limits: &ReadLimits,
    ) -> Result<ArrayD<T>> {
        if T::SCALAR != self.scalar {
            return Err(NdError::TypeMismatch {
                stored: self.scalar.name().to_string(),
                requested: T::SCALAR.name().to_string(),
            });
        }
        let (out_shape, _) = region_shape::<T>(&self.shape, region, limits, "the zarr region")?;
        let chunk_bytes = crate::datatype::checked_product(&self.chunks)
            .and_then(|n| (n as u64).checked_mul(self.scalar.size() as u64));
        check_limit("one zarr chunk", chunk_bytes, 0, limits)?;
        let fill = self.fill::<T>()?;
        let map = match self.storage {
            ZarrStorage::Blocks { .. } => Some(self.chunk_map(store)?),
            ZarrStorage::Directory { .. } => None,
        };
        let grid = self.grid();
        let touched = Touched::new(
            &self.chunks,
            map.as_ref().map_or(&grid, |m| &m.grid),
            region,
        );
        let piece = |k: usize| -> Piece {
            let (at, _) = touched.at(k);
            let start: Vec<usize> = at.iter().zip(&self.chunks).map(|(&i, &c)| i * c).collect();
            let inter = region
                .iter()
                .zip(start.iter().zip(&self.chunks))
                .map(|(r, (&s, &c))| r.start.max(s)..r.end.min(s + c))
                .collect();
            (start, inter)
        };
        assemble(region, &out_shape, touched.count, piece, |k| {
            let (at, index) = touched.at(k);
            let block = map.as_ref().map(|m| m.blocks[index]);
            self.chunk::<T>(store, &at, block, fill)
        })
    }

    /// Chunk `at` (stored in block `block` of the chunk map, or as a file of the zarr store when
    /// `None`), decoded to its full (padded) shape: `fill` when never written.
    fn chunk<T: Element>(
        &self,
        store: &(impl BlockStore + ?Sized),
        at: &[usize],
        block: Option<i32>,
        fill: T,
    ) -> Result<Decoded<T>> {
        let shape = IxDyn(&self.chunks).set_f(self.fortran);
        let (stored, place) = match (&self.storage, block) {
            (_, Some(MISSING)) => return Ok(Decoded::Fill(fill)),
            (_, Some(b)) => (store.block(i64::from(b)), format!("block {b}")),
            (ZarrStorage::Directory { path, separator }, None) => {
                let key = chunk_key(at, *separator);
                match store.zarr_file(path, &key) {
                    Ok(None) => return Ok(Decoded::Fill(fill)),
                    got => (
                        got.map(|b| Cow::Owned(b.unwrap_or_default())),
                        format!("{path}/{key}"),
                    ),
                }
            }
            (ZarrStorage::Blocks { .. }, None) => {
                return Err(NdError::Usage(
                    "a chunk in blocks without a chunk map".into(),
                ))
            }
        };
        let err = |message: String| NdError::ZarrChunk {
            chunk: at.to_vec(),
            place: place.clone(),
            message,
        };
        let stored = stored.map_err(|e| err(e.to_string()))?;
        let layout = Layout::contiguous(self.chunks.clone(), self.scalar.size())?;
        let nbytes = layout.count * layout.itemsize;
        let decoded;
        let bytes: &[u8] = match &self.compressor {
            Some(id) => {
                decoded = asdf_block::numcodecs_decode(id, &stored, nbytes)
                    .map_err(|e| err(format!("{id} data is invalid: {}", e.message)))?;
                &decoded
            }
            None if stored.len() == nbytes => &stored,
            None => {
                return Err(err(format!(
                    "{} bytes stored, an uncompressed chunk has {nbytes}",
                    stored.len()
                )))
            }
        };
        let values = decode_vec::<T>(bytes, &layout, self.byteorder)?;
        ArrayD::from_shape_vec(shape, values)
            .map(Decoded::Array)
            .map_err(|e| NdError::Usage(format!("internal shape error: {e}")))
    }

    /// `fill_value` as a `T`: zero when absent; `"NaN"`, `"Infinity"` and `"-Infinity"` as
    /// zarr's JSON writes them for floats.
    fn fill<T: Element>(&self) -> Result<T> {
        let Some(node) = &self.fill_value else {
            return Ok(T::default());
        };
        let special = match node.as_str() {
            Some("NaN") => Some(f64::NAN),
            Some("Infinity") => Some(f64::INFINITY),
            Some("-Infinity") => Some(f64::NEG_INFINITY),
            _ => None,
        };
        let node = match special {
            Some(v) => Node::from(v),
            None => node.clone(),
        };
        if let Some(v) = complex_fill::<T>(&node) {
            return Ok(v);
        }
        T::from_node(&node).ok_or_else(|| {
            field_err(
                ".zarray.fill_value",
                format!("{} is not a {} value", node.kind(), self.scalar.name()),
            )
        })
    }

    /// The whole array, whatever its datatype, with the default [`ReadLimits`].
    pub fn read(&self, store: &(impl BlockStore + Sync + ?Sized)) -> Result<AnyArray> {
        self.read_with(store, &ReadLimits::default())
    }

    /// [`read`](Self::read) with explicit limits.
    pub fn read_with(
        &self,
        store: &(impl BlockStore + Sync + ?Sized),
        limits: &ReadLimits,
    ) -> Result<AnyArray> {
        with_scalar!(self.scalar, T => Ok(AnyArray::from(self.array_with::<T>(store, limits)?)))
    }
}

/// The directory of an asdf-zarr node's external chunk store, and whether its keys nest
/// (`NestedDirectoryStore`). An `FSStore` on an object store or a web server is named by its URL
/// (`s3://bucket/path`, `gs://…`, `az://…`, `abfs://…`, `https://…`); other stores are refused
/// with their type.
fn external_store(node: &Node) -> Result<(String, bool)> {
    let store = node
        .get("store")
        .ok_or_else(|| field_err("store", "neither .zarray nor store: not an asdf-zarr node"))?;
    let kind = store
        .get("type_string")
        .and_then(Node::as_str)
        .unwrap_or("?");
    let path = || {
        store
            .get("path")
            .and_then(Node::as_str)
            .ok_or_else(|| field_err("store.path", "expected the store's directory"))
    };
    let nested = match kind {
        "DirectoryStore" => false,
        "NestedDirectoryStore" => true,
        "FSStore" => {
            let protocol = store.get("fs").and_then(Node::as_str).and_then(fs_protocol);
            return fs_store_location(protocol.as_deref(), path()?).map(|p| (p, false));
        }
        other => {
            return Err(field_err(
                "store",
                format!(
                    "chunks in a zarr {other} are not read (only DirectoryStore, \
                     NestedDirectoryStore and FSStore)"
                ),
            ))
        }
    };
    Ok((path()?.to_string(), nested))
}

/// Where an `FSStore`'s files are: its path on the local file system, or the URL of its
/// directory on an object store or web server (fsspec keeps paths without the protocol).
fn fs_store_location(protocol: Option<&str>, path: &str) -> Result<String> {
    let url = |scheme: &str| {
        let bare = path.split_once("://").map_or(path, |(_, rest)| rest);
        format!("{scheme}://{}", bare.trim_start_matches('/'))
    };
    Ok(match protocol {
        Some("file" | "local") => path.to_string(),
        Some("s3" | "s3a") => url("s3"),
        Some("gs" | "gcs") => url("gs"),
        Some("az" | "abfs" | "abfss" | "adl") => url("az"),
        Some("http" | "https") if path.starts_with("http://") || path.starts_with("https://") => {
            path.to_string()
        }
        other => {
            return Err(field_err(
                "store.fs",
                format!(
                    "chunks in an FSStore on {} are not read (local files, s3, gs, az, http \
                     and https are)",
                    other.unwrap_or("an unknown file system")
                ),
            ))
        }
    })
}

/// Whether a store location is a URL (an `FSStore` off the local file system), not a path.
pub fn is_remote_store(location: &str) -> bool {
    ["s3://", "gs://", "az://", "http://", "https://"]
        .iter()
        .any(|p| location.starts_with(p))
}

/// The location of an asdf-zarr node's external chunk store as [`ZarrArray::open`] passes it
/// to [`BlockStore::zarr_file`] (a path, or a URL per [`is_remote_store`]); `None` when the
/// chunks are in the file's blocks.
pub fn external_store_location(node: &Node) -> Result<Option<String>> {
    if node.get(".zarray").is_some() {
        return Ok(None);
    }
    external_store(node).map(|(location, _)| Some(location))
}

/// The key of the chunk at grid coordinates `at`.
fn chunk_key(at: &[usize], separator: char) -> String {
    let key: Vec<String> = at.iter().map(usize::to_string).collect();
    key.join(&separator.to_string())
}

/// The most chunk files one read of an external store fetches.
pub const MAX_CHUNK_FILES: usize = 1 << 20;

/// The `protocol` of an fsspec file system's JSON (a string or the first of a list).
fn fs_protocol(json: &str) -> Option<String> {
    let fs = asdf_yaml::parse_str(json).ok()?;
    let p = fs.get("protocol")?;
    p.as_str()
        .or_else(|| p.as_seq()?.first()?.as_str())
        .map(str::to_string)
}

/// A complex `fill_value` as zarr writes it, `[real, imaginary]`, when `T` is complex.
fn complex_fill<T: Element>(node: &Node) -> Option<T> {
    let [re, im] = node.as_seq()? else {
        return None;
    };
    let (re, im) = (re.as_f64()?, im.as_f64()?);
    let mut bytes = [0u8; 32];
    let n = match T::SCALAR {
        ScalarType::Complex64 => {
            bytes[..4].copy_from_slice(&(re as f32).to_le_bytes());
            bytes[4..8].copy_from_slice(&(im as f32).to_le_bytes());
            8
        }
        ScalarType::Complex128 => {
            bytes[..8].copy_from_slice(&re.to_le_bytes());
            bytes[8..16].copy_from_slice(&im.to_le_bytes());
            16
        }
        _ => return None,
    };
    Some(T::from_bytes(&bytes[..n], ByteOrder::Little))
}

/// A zarr v2 `dtype`: a NumPy type string of a number or bool.
fn parse_dtype(node: Option<&Node>) -> Result<(ScalarType, ByteOrder)> {
    let f = ".zarray.dtype";
    let text = node.and_then(Node::as_str).ok_or_else(|| {
        field_err(
            f,
            "expected a NumPy type string (structured dtypes are not read)",
        )
    })?;
    let t = array_core::TypeStr::parse(text).map_err(|e| field_err(f, e.to_string()))?;
    let scalar = t
        .scalar_type()
        .ok_or_else(|| field_err(f, format!("{text:?}: only numbers and bools are read")))?;
    Ok((scalar, t.order_or_native()))
}

/// A zarr v2 `compressor`: `null`, or a numcodecs config whose `id` is read here.
fn parse_compressor(node: Option<&Node>) -> Result<Option<String>> {
    let f = ".zarray.compressor";
    match node.map(Node::value) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => {
            let id = node
                .and_then(|n| n.get("id"))
                .and_then(Node::as_str)
                .ok_or_else(|| field_err(f, "expected null or a mapping with an id"))?;
            if !asdf_block::NUMCODECS_IDS.contains(&id) {
                return Err(field_err(
                    f,
                    format!(
                        "numcodecs compressor {id:?} is not read (read: {})",
                        asdf_block::NUMCODECS_IDS.join(", ")
                    ),
                ));
            }
            Ok(Some(id.to_string()))
        }
    }
}

/// zarr v2 `filters`: only `null` or an empty list is read.
fn check_filters(node: Option<&Node>) -> Result<()> {
    let Some(items) = node.and_then(Node::as_seq) else {
        return match node.map(Node::value) {
            None | Some(Value::Null) => Ok(()),
            Some(_) => Err(field_err(".zarray.filters", "expected null or a list")),
        };
    };
    match items.first() {
        None => Ok(()),
        Some(first) => Err(field_err(
            ".zarray.filters",
            format!(
                "filters are not read (first: {})",
                first.get("id").and_then(Node::as_str).unwrap_or("?")
            ),
        )),
    }
}

/// The chunks a region touches: a box of the chunk grid, enumerated in C order without being
/// listed (a region may touch millions of small chunks).
struct Touched<'g> {
    /// The touched grid coordinates, per dimension.
    spans: Vec<Range<usize>>,
    /// Chunks per dimension of the whole grid.
    grid: &'g [usize],
    /// How many chunks are touched.
    count: usize,
}

impl<'g> Touched<'g> {
    fn new(chunks: &[usize], grid: &'g [usize], region: &[Range<usize>]) -> Touched<'g> {
        let spans: Vec<Range<usize>> = region
            .iter()
            .zip(chunks)
            .map(|(r, &c)| match r.is_empty() {
                true => 0..0,
                false => r.start / c..(r.end - 1) / c + 1,
            })
            .collect();
        // At most one chunk per element of the region, which the caller has bounded.
        let count = spans.iter().map(ExactSizeIterator::len).product();
        Touched { spans, grid, count }
    }

    /// The grid coordinates of touched chunk `k` (`k < count`, C order) and its position in the
    /// chunk map.
    fn at(&self, mut k: usize) -> (Vec<usize>, usize) {
        let mut at = vec![0; self.spans.len()];
        for (d, span) in self.spans.iter().enumerate().rev() {
            at[d] = span.start + k % span.len();
            k /= span.len();
        }
        let index = at
            .iter()
            .zip(self.grid)
            .fold(0, |acc, (&i, &g)| acc * g + i);
        (at, index)
    }
}

#[cfg(test)]
// One-dimensional regions are one-element lists of ranges.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;
    use crate::write::{ArrayWriter, MemoryStore, PendingBlock};

    /// A store with `blocks` (raw) and the node of a `shape`/`chunks` int32 array whose chunk
    /// map is the last block; `extra` is spliced into `.zarray`.
    fn file(
        shape: &str,
        chunks: &str,
        blocks: Vec<Vec<u8>>,
        extra: &str,
    ) -> (ZarrArray, MemoryStore) {
        let mut w = ArrayWriter::new();
        let mut last = 0;
        for data in blocks {
            last = w.push_block(PendingBlock {
                data: data.into(),
                compression: asdf_block::Label::NONE,
                encode: Default::default(),
            });
        }
        let text = format!(
            "{{.zarray: {{chunks: {chunks}, compressor: null, dtype: '<i4', fill_value: 0, \
              filters: null, order: C, shape: {shape}, zarr_format: 2{extra}}}, \
              chunk_block_map: {last}}}"
        );
        let node = asdf_yaml::parse_str(&text).unwrap();
        (ZarrArray::from_node(&node).unwrap(), w.memory_store())
    }

    fn ints(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn a_huge_chunk_shape_is_refused_before_allocating() {
        let (z, store) = file("[2000000000]", "[2000000000]", vec![ints(&[-1])], "");
        let e = z.region::<i32>(&store, &[0..1]).unwrap_err();
        assert!(matches!(e, NdError::TooLarge { .. }), "{e}");
        // A never-written chunk of 4 GB is not materialised to read three of its values.
        let (z, store) = file("[1000000000]", "[1000000000]", vec![ints(&[-1])], "");
        let z = ZarrArray {
            fill_value: Some(Node::from(7)),
            ..z
        };
        let part = z.region::<i32>(&store, &[5..8]).unwrap();
        assert_eq!(part.as_slice().unwrap(), &[7, 7, 7]);
    }

    #[test]
    fn chunk_maps_must_match_the_grid_and_name_blocks() {
        let (z, store) = file("[4]", "[2]", vec![ints(&[-1])], "");
        let e = z.array::<i32>(&store).unwrap_err().to_string();
        assert!(e.contains("needs 2 int32s"), "{e}");
        let (z, store) = file("[4]", "[2]", vec![ints(&[-1, -5])], "");
        let e = z.array::<i32>(&store).unwrap_err().to_string();
        assert!(e.contains("-5"), "{e}");
        let (z, store) = file("[4]", "[2]", vec![ints(&[-1, 9])], "");
        let e = z.array::<i32>(&store).unwrap_err();
        assert!(
            matches!(&e, NdError::ZarrChunk { chunk, place, .. } if chunk == &[1] && place == "block 9"),
            "{e}"
        );
    }

    #[test]
    fn chunks_of_the_wrong_size_are_errors() {
        let (z, store) = file("[4]", "[2]", vec![ints(&[1, 2, 3]), ints(&[0, -1])], "");
        let e = z.array::<i32>(&store).unwrap_err().to_string();
        assert!(e.contains("12 bytes stored") && e.contains("8"), "{e}");
        let (z, store) = file("[4]", "[2]", vec![vec![1, 2, 3], ints(&[0, -1])], "");
        let z = ZarrArray {
            compressor: Some("zlib".into()),
            ..z
        };
        let e = z.array::<i32>(&store).unwrap_err().to_string();
        assert!(e.contains("zlib data is invalid"), "{e}");
    }

    #[test]
    fn fs_stores_are_named_by_their_url() {
        // The fsspec JSON in single quotes (YAML), as asdf-zarr writes it.
        let store = |protocol: &str, path: &str| {
            let text = format!(
                r#"{{store: {{type_string: FSStore, path: '{path}', fs: '{{"protocol": {protocol}}}'}}}}"#
            );
            external_store_location(&asdf_yaml::parse_str(&text).unwrap())
        };
        let cases = [
            (r#""s3""#, "bucket/cube.zarr", "s3://bucket/cube.zarr"),
            (
                r#"["s3", "s3a"]"#,
                "s3://bucket/c.zarr",
                "s3://bucket/c.zarr",
            ),
            (r#""gcs""#, "b/c.zarr", "gs://b/c.zarr"),
            (r#""abfs""#, "container/c.zarr", "az://container/c.zarr"),
            (r#""https""#, "https://h/c.zarr", "https://h/c.zarr"),
            (r#""file""#, "/data/c.zarr", "/data/c.zarr"),
        ];
        for (protocol, path, want) in cases {
            let got = store(protocol, path).unwrap();
            assert_eq!(got.as_deref(), Some(want), "{protocol} {path}");
            assert_eq!(is_remote_store(want), !want.starts_with('/'));
        }
        let e = store(r#""memory""#, "x").unwrap_err().to_string();
        assert!(e.contains("memory"), "{e}");
    }

    #[test]
    fn what_is_not_read_is_named() {
        for (extra, what) in [
            (", filters: [{id: delta, dtype: '<i4'}]", "delta"),
            (", compressor: {id: jpeg}", "jpeg"),
            (", zarr_format: 3", "zarr v2"),
            (", dtype: '<M8[ns]'", "M8"),
            (", order: K", "C or F"),
        ] {
            let text = format!(
                "{{.zarray: {{chunks: [2], compressor: null, dtype: '<i4', fill_value: 0, \
                  filters: null, order: C, shape: [4], zarr_format: 2{extra}}}, \
                  chunk_block_map: 0}}"
            );
            let e = ZarrArray::from_node(&asdf_yaml::parse_str(&text).unwrap())
                .unwrap_err()
                .to_string();
            assert!(e.contains(what), "{extra}: {e}");
        }
        let node = asdf_yaml::parse_str("{store: {type_string: KVStore, map: {}}}").unwrap();
        let e = ZarrArray::from_node(&node).unwrap_err().to_string();
        assert!(e.contains("KVStore"), "{e}");
        let node =
            asdf_yaml::parse_str("{store: {type_string: DirectoryStore, path: /x}}").unwrap();
        let e = ZarrArray::from_node(&node).unwrap_err().to_string();
        assert!(e.contains("ZarrArray::open"), "{e}");
        // Outside a file, a store resolves nothing.
        let e = ZarrArray::open(&node, &crate::NoBlocks)
            .unwrap_err()
            .to_string();
        assert!(e.contains("/x/.zarray"), "{e}");
    }

    #[test]
    fn regions_outside_the_array_are_refused() {
        let (z, store) = file("[4, 3]", "[2, 2]", vec![ints(&[-1; 4])], "");
        let map = z.chunk_map(&store).unwrap();
        assert!(z.blocks_for(&map, Some(&[0..5, 0..1])).is_err());
        assert!(z.blocks_for(&map, Some(&[0..1])).is_err());
        assert_eq!(z.blocks_for(&map, None).unwrap(), vec![0]);
        #[allow(clippy::reversed_empty_ranges)]
        let backwards = [2..1, 0..1];
        assert!(z.region::<i32>(&store, &backwards).is_err());
        let fill = z.region::<i32>(&store, &[1..4, 1..3]).unwrap();
        assert_eq!(fill, ArrayD::zeros(IxDyn(&[3, 2])));
    }
}
