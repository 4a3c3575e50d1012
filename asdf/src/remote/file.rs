//! An ASDF file read where it is stored, by byte ranges.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use asdf_block::{BlockInfo, BlockLayout, HEADER_LEN};
use asdf_ndarray::{
    AnyArray, BigInteger, BlockStore, ChunkedArray, Element, Mask, NdArrayMeta, Source, ZarrArray,
};
use asdf_yaml::Node;
use bytes::Bytes;
use ndarray::ArrayD;

use super::blocks::{Blocks, Want};
use super::exec::Exec;
use super::object::{RemoteObject, Traffic};
use super::options::RemoteOptions;
use super::{external, zarr_store};
use crate::arrays::{arr, array_in, array_kind, names_this_file, read_in, region_in, ArrayKind};
use crate::error::{AsdfError, Result};
use crate::file::{DecodeBudget, OpenOptions};
use crate::layout::{split, FileHeader};

/// An ASDF file on S3, GCS, Azure, an HTTP(S) server or a `file://` URL, read by byte ranges
/// (feature `remote`).
///
/// Opening reads the first and last [`first_read`](RemoteOptions::first_read) bytes in two
/// concurrent requests: the header and tree, and the block index. The tree is read further only
/// when it is longer. With a block index, no other block header is read on opening: an array's
/// block is read with its header in one request when the array is read, and
/// [`blocks`](Self::blocks) reads every header (concurrent, coalesced requests) when asked
/// for. A file without a valid index is walked from header to header on opening. Block data is
/// read only when an array needs it, and [`read_region`](Self::read_region) reads only the
/// chunks or byte ranges a region covers. Checksums and every limit of
/// [`OpenOptions`] apply as for local files, with one exception: a region of an uncompressed
/// block read by its rows cannot check the block's checksum, which covers the whole block (read
/// the array whole to check it). Every read is pinned to the ETag the first one saw.
///
/// ```no_run
/// use asdf::AsdfFile;
/// let f = AsdfFile::open_url("s3://my-bucket/products/r0001.asdf")?;
/// println!("{} blocks, tree {:?}", f.block_count(), f.tree().get("meta"));
/// let flux = f.array::<f32>("/roman/data")?;
/// let window = f.read_region::<f32>("/roman/data", &[2000..2030, 2000..2030])?;
/// println!("{:?} read in {:?}", window.shape(), f.traffic());
/// # Ok::<(), asdf::AsdfError>(())
/// ```
pub struct RemoteFile {
    object: RemoteObject,
    header: FileHeader,
    tree: Node,
    tree_range: Option<Range<usize>>,
    blocks: Blocks,
    warnings: Vec<String>,
    options: OpenOptions,
    /// What the file was opened with: the client settings its zarr stores are read with too.
    remote: RemoteOptions,
    decoded: DecodeBudget,
    /// Stored bytes of blocks read before, kept within `max_cached_block_bytes`.
    kept: Vec<OnceLock<Bytes>>,
    kept_bytes: AtomicU64,
    /// The `.zarray` of each external zarr store read so far, by the store's URL.
    zarr_meta: std::sync::Mutex<HashMap<String, Option<Bytes>>>,
    /// Last field: the runtime stops after everything that uses it.
    exec: Exec,
}

impl std::fmt::Debug for RemoteFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteFile")
            .field("object", &self.object)
            .field("blocks", &self.blocks.count())
            .finish_non_exhaustive()
    }
}

impl RemoteFile {
    /// Opens the file at `url`, blocking until its header, tree and block headers are read.
    pub fn open(url: &str, options: &RemoteOptions) -> Result<Self> {
        let (exec, handle) = Exec::own(url)?;
        Self::open_on(exec, &handle, url, options)
    }

    /// [`open`](Self::open) from async code, on the caller's tokio runtime.
    pub async fn open_async(url: &str, options: &RemoteOptions) -> Result<Self> {
        let handle = tokio::runtime::Handle::current();
        let (url, options) = (url.to_string(), options.clone());
        tokio::task::spawn_blocking(move || {
            let h = handle.clone();
            Self::open_on(Exec::Shared(handle), &h, &url, &options)
        })
        .await
        .map_err(|e| AsdfError::io("opening a remote file", std::io::Error::other(e)))?
    }

    fn open_on(
        exec: Exec,
        handle: &tokio::runtime::Handle,
        url: &str,
        options: &RemoteOptions,
    ) -> Result<Self> {
        let (object, ends) = handle.block_on(RemoteObject::open(url, options))?;
        let index = super::blocks::tail_index(&ends.tail).map(|(_, offsets)| offsets);
        let head = through_tree(&object, handle, ends.head, index.as_deref(), options)?;
        let sections = split(&head).map_err(|e| e.in_file(url))?;
        let (tree, warnings) =
            crate::file::parse_tree(&head, &sections, &options.open).map_err(|e| e.in_file(url))?;
        let start = sections.blocks_start as u64;
        let rest = Bytes::copy_from_slice(head.get(sections.blocks_start..).unwrap_or(&[]));
        let opening = vec![
            (start, rest),
            (object.size() - ends.tail.len() as u64, ends.tail),
        ];
        let blocks = handle.block_on(Blocks::locate(
            &object,
            start,
            options.open.blocks.use_index,
            opening,
        ))?;
        if let Some(layout) = blocks.scanned() {
            for w in &layout.warnings {
                log::warn!("{url}: {w}");
            }
        }
        for w in &warnings {
            log::warn!("{url}: {w}");
        }
        let open = &options.open;
        let n = blocks.count();
        Ok(RemoteFile {
            object,
            header: sections.header,
            tree,
            tree_range: sections.tree,
            blocks,
            warnings,
            decoded: DecodeBudget::new(
                open.max_total_decoded_bytes,
                open.blocks.limits.max_decoded_block_size,
                n,
            ),
            kept: (0..n).map(|_| OnceLock::new()).collect(),
            kept_bytes: AtomicU64::new(0),
            zarr_meta: Default::default(),
            options: open.clone(),
            remote: options.clone(),
            exec,
        })
    }
}

/// The file's first bytes through the end of its tree: `head` grown (to the first block the
/// index names, or by doubling) while the tree's end marker is not in it.
fn through_tree(
    object: &RemoteObject,
    handle: &tokio::runtime::Handle,
    mut head: Bytes,
    index: Option<&[u64]>,
    options: &RemoteOptions,
) -> Result<Bytes> {
    let size = object.size();
    loop {
        let have = head.len() as u64;
        let complete = match split(&head) {
            Ok(s) => (s.blocks_start as u64) < have || have == size,
            Err(AsdfError::MissingEndMarker { .. }) if have < size => false,
            Err(e) => return Err(e.in_file(object.url())),
        };
        if complete {
            return Ok(head);
        }
        let want = match index.and_then(|i| i.first()) {
            Some(&first) if first > have => first.saturating_add(HEADER_LEN as u64),
            _ => have.saturating_mul(2),
        }
        .min(size);
        if want > options.max_tree_bytes {
            return Err(object.error(
                None,
                format!(
                    "the tree is longer than {} bytes (RemoteOptions::max_tree_bytes)",
                    options.max_tree_bytes
                ),
            ));
        }
        let more = handle.block_on(object.fetch_one(have..want))?;
        let mut joined = Vec::new();
        joined
            .try_reserve_exact(want as usize)
            .map_err(|_| object.error(None, format!("cannot allocate {want} bytes")))?;
        joined.extend_from_slice(&head);
        joined.extend_from_slice(&more);
        head = Bytes::from(joined);
    }
}

impl RemoteFile {
    /// The file's URL.
    pub fn url(&self) -> &str {
        self.object.url()
    }

    /// The object's size in bytes.
    pub fn size(&self) -> u64 {
        self.object.size()
    }

    /// The object's ETag when the server gives one: every read of this file is pinned to it, so
    /// it names the version of the object that was read.
    pub fn etag(&self) -> Option<&str> {
        self.object.etag()
    }

    /// Requests sent and bytes received so far.
    pub fn traffic(&self) -> Traffic {
        self.object.traffic()
    }

    /// The `#ASDF` line and the comments after it.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The ASDF Standard version (`#ASDF_STANDARD`, `1.0.0` when absent).
    pub fn standard_version(&self) -> &str {
        &self.header.standard_version
    }

    /// The tree (an empty mapping for a file without one).
    pub fn tree(&self) -> &Node {
        &self.tree
    }

    /// The tree, taken out of the file (which closes).
    pub fn into_tree(self) -> Node {
        self.tree
    }

    /// The node at a JSON Pointer.
    pub fn pointer(&self, pointer: &str) -> Option<&Node> {
        self.tree.pointer(pointer)
    }

    /// Byte range of the YAML tree in the file, if it has one.
    pub fn tree_range(&self) -> Option<Range<usize>> {
        self.tree_range.clone()
    }

    /// The number of blocks (from the block index, or the scan).
    pub fn block_count(&self) -> usize {
        self.blocks.count()
    }

    /// Position and header of every block: read now (concurrent, coalesced requests) if the
    /// file was opened by its index and not every header is known.
    pub fn blocks(&self) -> Result<&[BlockInfo]> {
        Ok(&self.layout()?.blocks)
    }

    /// How the blocks were located (index used or walked), every header read as for
    /// [`blocks`](Self::blocks); its warnings say what a scan found odd.
    pub fn layout(&self) -> Result<&BlockLayout> {
        self.handle()?.block_on(self.layout_async())
    }

    /// [`layout`](Self::layout) from async code.
    pub async fn layout_async(&self) -> Result<&BlockLayout> {
        self.blocks.layout(&self.object).await
    }

    /// Non-fatal oddities found in the tree (the block scan's are in
    /// [`layout`](Self::layout)).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The options the file was opened with.
    pub fn open_options(&self) -> &OpenOptions {
        &self.options
    }

    /// The JSON Pointers of every array in the tree, in tree order.
    pub fn arrays(&self) -> Vec<(String, ArrayKind)> {
        crate::arrays::find_arrays(&self.tree)
    }

    /// The node at `pointer` read as `T` (see [`AsdfFile::get`](crate::AsdfFile::get)); its
    /// arrays are fetched when read by pointer.
    pub fn get<T: crate::astro::FromTree>(&self, pointer: &str) -> Result<T> {
        crate::astro::get(&self.tree, pointer)
    }

    /// The parsed ndarray node at `pointer`.
    pub fn meta(&self, pointer: &str) -> Result<NdArrayMeta> {
        crate::arrays::meta_of(pointer, self.node_at(pointer)?)
    }

    fn node_at(&self, pointer: &str) -> Result<&Node> {
        self.pointer(pointer)
            .ok_or_else(|| AsdfError::NoNode(pointer.to_string()))
    }

    fn handle(&self) -> Result<tokio::runtime::Handle> {
        self.exec.blocking_handle(self.url())
    }
}

/// The blocks one read needs, fetched: what the array layer reads them from.
struct Fetched<'a> {
    file: &'a RemoteFile,
    blocks: HashMap<usize, Bytes>,
    /// Files of an external zarr store by key (`None`: the store has none).
    zarr_files: HashMap<String, Option<Bytes>>,
    /// The decoded first blocks of external files (exploded arrays), by URI.
    externals: HashMap<String, Vec<u8>>,
}

impl Fetched<'_> {
    fn stored(&self, i: usize) -> Option<&Bytes> {
        self.blocks
            .get(&i)
            .or_else(|| self.file.kept.get(i).and_then(OnceLock::get))
    }

    /// Block `source`'s header and stored bytes, charged to the decode budget; an error when
    /// they were not fetched.
    fn charged(&self, source: i64) -> asdf_ndarray::Result<(&BlockInfo, &Bytes)> {
        let i = resolve(self.file.blocks.count(), source)?;
        let not_read = || {
            asdf_ndarray::NdError::Usage(format!("block {i} was not read from {}", self.file.url()))
        };
        let info = self.file.blocks.info(i).ok_or_else(not_read)?;
        let stored = self.stored(i).ok_or_else(not_read)?;
        self.file.decoded.charge_nd(info)?;
        Ok((info, stored))
    }
}

impl BlockStore for Fetched<'_> {
    fn block(&self, source: i64) -> asdf_ndarray::Result<Cow<'_, [u8]>> {
        let (info, stored) = self.charged(source)?;
        let (data, _) =
            asdf_block::decode_stored(info, Cow::Borrowed(&stored[..]), &self.file.options.blocks)
                .map_err(|e| e.in_file(self.file.url()))?;
        Ok(data)
    }

    /// The decoded size of a fetched block the array layer may decode straight into its own
    /// buffer (no intermediate copy of a large block), charged to the decode budget first.
    fn block_len(&self, source: i64) -> asdf_ndarray::Result<Option<u64>> {
        let i = resolve(self.file.blocks.count(), source)?;
        let (Some(info), Some(_)) = (self.file.blocks.info(i), self.stored(i)) else {
            return Ok(None);
        };
        let len = asdf_ndarray::direct_len(info, &self.file.options.blocks);
        if len.is_some() {
            self.file.decoded.charge_nd(info)?;
        }
        Ok(len)
    }

    fn block_into(&self, source: i64, dst: &mut [u8]) -> asdf_ndarray::Result<()> {
        let (info, stored) = self.charged(source)?;
        let options = &self.file.options.blocks;
        asdf_block::decode_stored_into(info, stored, options, false, dst)
            .map_err(|e| e.in_file(self.file.url()))?;
        Ok(())
    }

    fn block_range(&self, source: i64, range: Range<u64>) -> asdf_ndarray::Result<Option<Vec<u8>>> {
        let i = resolve(self.file.blocks.count(), source)?;
        let (Some(info), Some(stored)) = (self.file.blocks.info(i), self.stored(i)) else {
            return Ok(None);
        };
        self.file.decoded.charge_nd(info)?;
        asdf_block::decode_stored_range(info, stored, &self.file.options.blocks, range)
            .map_err(|e| e.in_file(self.file.url()).into())
    }

    fn external(&self, uri: &str) -> asdf_ndarray::Result<Cow<'_, [u8]>> {
        if names_this_file(uri) {
            return self.block(0);
        }
        match self.externals.get(uri) {
            Some(data) => Ok(Cow::Borrowed(data)),
            None => Err(asdf_ndarray::NdError::NoExternal(uri.to_string())),
        }
    }

    fn zarr_file(&self, store: &str, key: &str) -> asdf_ndarray::Result<Option<Vec<u8>>> {
        match self.zarr_files.get(key) {
            Some(got) => Ok(got.as_ref().map(|b| b.to_vec())),
            None => Err(asdf_ndarray::NdError::Usage(format!(
                "{store}/{key} was not read from the zarr store"
            ))),
        }
    }
}

/// Block `source` (negative counts from the end) of `count` blocks.
fn resolve(count: usize, source: i64) -> asdf_ndarray::Result<usize> {
    let n = count as i64;
    let i = if source < 0 { n + source } else { source };
    if (0..n).contains(&i) {
        Ok(i as usize)
    } else {
        Err(asdf_block::BlockError::NoSuchBlock {
            index: source,
            count,
        }
        .into())
    }
}

/// The blocks the array `node` reads, limited to the chunks `region` touches when given, and
/// the external files (exploded arrays) it names.
fn needed_blocks(
    node: &Node,
    pointer: &str,
    region: Option<&[Range<usize>]>,
) -> Result<(Vec<i64>, Vec<String>)> {
    let (mut out, mut external) = (Vec::new(), Vec::new());
    let mut add = |meta: &NdArrayMeta| {
        match &meta.source {
            Some(Source::Block(b)) => out.push(*b),
            Some(Source::External(uri)) if names_this_file(uri) => out.push(0),
            Some(Source::External(uri)) if !external.contains(uri) => external.push(uri.clone()),
            _ => {}
        }
        if let Some(Mask::Array(m)) = &meta.mask {
            if let Some(Source::Block(b)) = &m.source {
                out.push(*b);
            }
        }
    };
    match array_kind(node) {
        Some(ArrayKind::Chunked) => {
            let c = ChunkedArray::from_node(node).map_err(|e| arr(pointer, e))?;
            for chunk in &c.chunks {
                if region.is_none_or(|r| touches(r, &chunk.start, &chunk.shape)) {
                    add(&chunk.array);
                }
            }
        }
        _ => add(&crate::arrays::meta_of(pointer, node)?),
    }
    Ok((out, external))
}

/// Whether the box `start`/`shape` meets `region`.
fn touches(region: &[Range<usize>], start: &[usize], shape: &[usize]) -> bool {
    region
        .iter()
        .zip(start.iter().zip(shape))
        .all(|(r, (&s, &n))| r.start.max(s) < r.end.min(s.saturating_add(n)))
}

impl RemoteFile {
    /// Reads the stored bytes of `blocks` not kept from earlier reads, concurrently (with
    /// their headers, for blocks located by the index alone).
    async fn fetch_blocks(&self, blocks: &[i64]) -> Result<Fetched<'_>> {
        let mut wanted: Vec<usize> = Vec::new();
        for &b in blocks {
            let i = resolve(self.blocks.count(), b).map_err(|e| AsdfError::Array {
                pointer: String::new(),
                source: e,
            })?;
            if self.kept[i].get().is_none() && !wanted.contains(&i) {
                wanted.push(i);
            }
        }
        loop {
            if let Some(fetched) = self.try_fetch(&wanted).await? {
                return Ok(Fetched {
                    file: self,
                    blocks: fetched,
                    zarr_files: HashMap::new(),
                    externals: HashMap::new(),
                });
            }
            // A header read through the index did not check out: locate every block as the
            // local reader does, then read by that.
            self.layout_async().await?;
        }
    }

    /// The stored bytes of blocks `wanted`; `None` when a header read with its data does not
    /// check out.
    async fn try_fetch(&self, wanted: &[usize]) -> Result<Option<HashMap<usize, Bytes>>> {
        let wants: Vec<Want> = wanted.iter().map(|&i| self.blocks.want(i)).collect();
        let ranges: Vec<Range<u64>> = wants.iter().map(Want::range).collect();
        for (&i, r) in wanted.iter().zip(&ranges) {
            self.check_ceiling(&format!("block {i}"), r.clone())?;
        }
        // What the first reads hold (a small file entirely) is not requested again.
        let got = self
            .object
            .fetch_using(&ranges, self.blocks.opening())
            .await?;
        let mut fetched = HashMap::new();
        for ((&i, want), bytes) in wanted.iter().zip(&wants).zip(got) {
            let Some(stored) = self.blocks.stored(i, want, bytes, self.size()) else {
                return Ok(None);
            };
            self.keep(i, &stored);
            fetched.insert(i, stored);
        }
        Ok(Some(fetched))
    }

    /// Block `i`'s header: known, or read (a few bytes at its index offset), or found by
    /// scanning when that does not check out.
    async fn block_header(&self, i: usize) -> Result<BlockInfo> {
        if let Some(info) = self.blocks.info(i) {
            return Ok(*info);
        }
        if let Want::Span(span) = self.blocks.want(i) {
            let head = span.start..span.end.min(span.start + HEADER_LEN as u64);
            let bytes = self.object.fetch_one(head).await?;
            if let Some(info) = self.blocks.learn(i, &span, &bytes, self.size()) {
                return Ok(info);
            }
        }
        let layout = self.layout_async().await?;
        layout.blocks.get(i).copied().ok_or_else(|| {
            self.object
                .error(None, format!("block {i} is not among the blocks found"))
        })
    }

    /// Refuses to read `range` (for `what`) when it is longer than a block may decode to (see
    /// [`RemoteObject::check_ceiling`]).
    pub(crate) fn check_ceiling(&self, what: &str, range: Range<u64>) -> Result<()> {
        self.object
            .check_ceiling(what, range, &self.options.blocks.limits)
    }

    /// Keeps block `i`'s stored bytes for later reads when the budget allows.
    fn keep(&self, i: usize, bytes: &Bytes) {
        let size = bytes.len() as u64;
        let budget = self.options.max_cached_block_bytes;
        let reserved = self
            .kept_bytes
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |u| {
                u.checked_add(size).filter(|&t| t <= budget)
            })
            .is_ok();
        if reserved && self.kept[i].set(bytes.clone()).is_err() {
            self.kept_bytes.fetch_sub(size, Ordering::SeqCst);
        }
    }

    async fn fetch_for(
        &self,
        pointer: &str,
        region: Option<&[Range<usize>]>,
    ) -> Result<Fetched<'_>> {
        let node = self.node_at(pointer)?;
        if array_kind(node) == Some(ArrayKind::Zarr) {
            return self.fetch_zarr(node, pointer, region).await;
        }
        let (blocks, external) = needed_blocks(node, pointer, region)?;
        if external.len() > self.options.max_external_files {
            return Err(external::refused(
                &external[0],
                format!(
                    "the array names more than {} files (OpenOptions::max_external_files)",
                    self.options.max_external_files
                ),
            ));
        }
        // The file's own blocks and every external file, concurrently.
        let others = futures::future::try_join_all(external.iter().map(|u| self.external_block(u)));
        let (mut fetched, others) = futures::try_join!(self.fetch_blocks(&blocks), others)?;
        fetched.externals = external.into_iter().zip(others).collect();
        Ok(fetched)
    }

    /// The decoded first block of the external ASDF file `uri` (an exploded array), resolved
    /// against this file's URL within the policy on external files and read as a remote file of
    /// its own, with this file's options; its requests count in this file's traffic.
    async fn external_block(&self, uri: &str) -> Result<Vec<u8>> {
        let url = external::resolve(self.url(), uri, self.options.external_files)?;
        let other = Box::pin(RemoteFile::open_async(&url, &self.remote)).await?;
        let fetched = Box::pin(other.fetch_blocks(&[0])).await?;
        let data = fetched
            .block(0)
            .map(|d| d.into_owned())
            .map_err(|e| arr(&url, e));
        self.object.add(other.traffic());
        data
    }

    /// The blocks of an asdf-zarr array: its chunk map first (one round trip), then the blocks
    /// of the chunks `region` touches (all chunks when `None`) that were ever written.
    async fn fetch_zarr(
        &self,
        node: &Node,
        pointer: &str,
        region: Option<&[Range<usize>]>,
    ) -> Result<Fetched<'_>> {
        let external = asdf_ndarray::external_store_location(node).map_err(|e| arr(pointer, e))?;
        if let Some(location) = external {
            return self
                .fetch_zarr_files(node, pointer, &location, region)
                .await;
        }
        let z = ZarrArray::from_node(node).map_err(|e| arr(pointer, e))?;
        let Some(map_block) = z.chunk_block_map() else {
            return Err(arr(
                pointer,
                asdf_ndarray::NdError::Usage("a zarr array without a chunk map".into()),
            ));
        };
        let first = self.fetch_blocks(&[map_block]).await?;
        let map = z.chunk_map(&first).map_err(|e| arr(pointer, e))?;
        let blocks = z.blocks_for(&map, region).map_err(|e| arr(pointer, e))?;
        let mut fetched = self.fetch_blocks(&blocks[1..]).await?;
        fetched.blocks.extend(first.blocks);
        Ok(fetched)
    }

    /// The files of an asdf-zarr array in an external store (at `location`, as its node names
    /// it): its `.zarray` (read once per store), then the chunk files `region` touches (all
    /// when `None`), fetched concurrently and counted in this file's traffic.
    async fn fetch_zarr_files(
        &self,
        node: &Node,
        pointer: &str,
        location: &str,
        region: Option<&[Range<usize>]>,
    ) -> Result<Fetched<'_>> {
        let url = external::resolve(self.url(), location, self.options.external_files)?;
        let objects = zarr_store::ZarrObjects::new(&url, &self.remote)?;
        let known = self
            .zarr_meta
            .lock()
            .ok()
            .and_then(|m| m.get(&url).cloned());
        let meta = match known {
            Some(meta) => meta,
            None => {
                let key = [".zarray".to_string()];
                let got = objects.fetch(&key, Some(&self.object)).await?;
                let meta = got.into_values().next().flatten();
                if let Ok(mut m) = self.zarr_meta.lock() {
                    m.insert(url.clone(), meta.clone());
                }
                meta
            }
        };
        let mut fetched = Fetched {
            file: self,
            blocks: HashMap::new(),
            zarr_files: HashMap::from([(".zarray".to_string(), meta)]),
            externals: HashMap::new(),
        };
        let z = ZarrArray::open(node, &fetched).map_err(|e| arr(pointer, e))?;
        let keys = z.chunk_keys(region).map_err(|e| arr(pointer, e))?;
        let chunks = objects.fetch(&keys, Some(&self.object)).await?;
        fetched.zarr_files.extend(chunks);
        Ok(fetched)
    }

    /// The array at `pointer` as an owned `ArrayD<T>`; its blocks are read concurrently.
    pub fn array<T: Element>(&self, pointer: &str) -> Result<ArrayD<T>> {
        self.handle()?.block_on(self.array_async(pointer))
    }

    /// [`array`](Self::array) from async code.
    pub async fn array_async<T: Element>(&self, pointer: &str) -> Result<ArrayD<T>> {
        let store = self.fetch_for(pointer, None).await?;
        array_in(
            self.node_at(pointer)?,
            pointer,
            &store,
            &self.options.arrays,
        )
    }

    /// The array at `pointer` whatever its datatype.
    pub fn read(&self, pointer: &str) -> Result<AnyArray> {
        self.handle()?.block_on(self.read_async(pointer))
    }

    /// [`read`](Self::read) from async code.
    pub async fn read_async(&self, pointer: &str) -> Result<AnyArray> {
        let store = self.fetch_for(pointer, None).await?;
        read_in(
            self.node_at(pointer)?,
            pointer,
            &store,
            &self.options.arrays,
        )
    }

    /// The array at `pointer` and its mask, as
    /// [`AsdfFile::read_masked`](crate::AsdfFile::read_masked) gives them; the blocks of the
    /// array and of its mask are read concurrently.
    pub fn read_masked(&self, pointer: &str) -> Result<(AnyArray, Option<ArrayD<bool>>)> {
        self.handle()?.block_on(self.read_masked_async(pointer))
    }

    /// [`read_masked`](Self::read_masked) from async code.
    pub async fn read_masked_async(
        &self,
        pointer: &str,
    ) -> Result<(AnyArray, Option<ArrayD<bool>>)> {
        let meta = self.meta(pointer)?;
        let store = self.fetch_for(pointer, None).await?;
        meta.read_masked_with(&store, &self.options.arrays)
            .map_err(|e| arr(pointer, e))
    }

    /// The `core/integer` value at `pointer`, its `words` read when they are in a block.
    pub fn integer(&self, pointer: &str) -> Result<BigInteger> {
        let node = self.node_at(pointer)?;
        let words = node
            .get("words")
            .and_then(|w| NdArrayMeta::from_node(w).ok())
            .and_then(|m| m.source);
        let blocks: Vec<i64> = match words {
            Some(Source::Block(b)) => vec![b],
            _ => Vec::new(),
        };
        let store = self.handle()?.block_on(self.fetch_blocks(&blocks))?;
        BigInteger::from_node(node, &store).map_err(|e| arr(pointer, e))
    }

    /// The header of block `source` (negative counts from the end): known from opening, or
    /// read (one small request at the offset the block index gives).
    pub fn block_info(&self, source: i64) -> Result<BlockInfo> {
        let i = resolve(self.blocks.count(), source).map_err(|e| arr("", e))?;
        self.handle()?.block_on(self.block_header(i))
    }

    /// Checks the tree against the rules of its core tags, as
    /// [`AsdfFile::validate`](crate::AsdfFile::validate) does.
    pub fn validate(&self) -> asdf_schema::Report {
        asdf_schema::Report {
            violations: asdf_schema::check_builtin(&self.tree),
        }
    }

    /// The decoded data of block `source` (negative counts from the end).
    pub fn block_data(&self, source: i64) -> Result<Vec<u8>> {
        self.handle()?.block_on(async {
            let store = self.fetch_blocks(&[source]).await?;
            let data = store
                .block(source)
                .map_err(|e| arr(&format!("block {source}"), e))?;
            Ok(data.into_owned())
        })
    }

    /// The sub-array `region` (one range per dimension) of the array at `pointer`, reading only
    /// what covers it: the chunks it touches of a chunked array, the byte ranges of its rows for
    /// an uncompressed block-backed array, the 4 MiB chunks holding its rows for an `lz4` block
    /// (found by walking the chunk headers: one small request per chunk before them, up to
    /// 1024), the whole block otherwise (other codecs). Like every partial read, it cannot check
    /// the block's checksum, which covers the whole block.
    pub fn read_region<T: Element>(
        &self,
        pointer: &str,
        region: &[Range<usize>],
    ) -> Result<ArrayD<T>> {
        self.handle()?
            .block_on(self.read_region_async(pointer, region))
    }

    /// [`read_region`](Self::read_region) from async code.
    pub async fn read_region_async<T: Element>(
        &self,
        pointer: &str,
        region: &[Range<usize>],
    ) -> Result<ArrayD<T>> {
        let node = self.node_at(pointer)?;
        if array_kind(node) == Some(ArrayKind::NdArray) {
            let meta = crate::arrays::meta_of(pointer, node)?;
            let info = match meta.source {
                Some(Source::Block(b)) => match resolve(self.blocks.count(), b) {
                    Ok(i) => Some(self.block_header(i).await?),
                    Err(_) => None,
                },
                _ => None,
            };
            let at = super::region::Reader {
                object: &self.object,
                opening: self.blocks.opening(),
                options: &self.options,
            };
            if let Some(plan) = info.and_then(|info| super::region::plan(&meta, &info, region)) {
                return at.read::<T>(&plan, pointer).await;
            }
            let lz4 = info.and_then(|info| super::region::lz4_plan(&meta, &info, region));
            if let Some(plan) = lz4 {
                if let Some(part) = at.read_lz4::<T>(&plan, pointer).await? {
                    return Ok(part);
                }
            }
        }
        let store = self.fetch_for(pointer, Some(region)).await?;
        region_in(node, pointer, &store, &self.options.arrays, region)
    }
}
