//! Writing arrays: nodes plus pending blocks.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{Seek, Write};
use std::sync::Arc;

use asdf_block::{encode_blocks, pool_share, BlockInfo, BlockWriter, EncodeOptions, Label};
use asdf_yaml::{Mapping, Node};
use ndarray::{ArrayBase, Data, Dimension, SliceInfoElem};
use rayon::prelude::*;

use crate::any::{decode_any, AnyArray};
use crate::chunked::{CHUNKED_TAG, CHUNK_TAG};
use crate::datatype::{ByteOrder, Datatype, ScalarType};
use crate::element::Element;
use crate::error::{NdError, Result};
use crate::layout::Layout;
use crate::meta::{NdArrayMeta, Source};
use crate::record::RecordArray;
use crate::store::BlockStore;

/// Where an array's data goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Storage {
    /// A binary block of the file (the default).
    #[default]
    Block,
    /// Nested lists in the tree (`data:`). 0-d arrays go to a block instead: the schema
    /// requires `data` to be a list and Python asdf 6.0.0 reads no inline form of a 0-d array
    /// (this crate reads both `data: [x]` and `data: x` with `shape: []`).
    Inline,
    /// The first block of a separate ASDF file at this URI (relative to the main file); the
    /// caller writes it from [`ArrayWriter::externals`].
    External(String),
}

/// How one array is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreOptions {
    /// Block, inline or external.
    pub storage: Storage,
    /// Compression label of the block ([`Label::NONE`] = uncompressed, which keeps the data
    /// viewable in place).
    pub compression: Label,
    /// Codec-specific compression level (`None` = the codec's default).
    pub level: Option<i32>,
    /// Byte order of the stored data (default: this machine's).
    pub byteorder: ByteOrder,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            storage: Storage::Block,
            compression: Label::NONE,
            level: None,
            byteorder: ByteOrder::NATIVE,
        }
    }
}

impl StoreOptions {
    /// Inline storage.
    pub fn inline() -> Self {
        StoreOptions {
            storage: Storage::Inline,
            ..Self::default()
        }
    }

    /// Block storage compressed with the codec named `codec` (`zlib`, `bzp2`, `lz4`, `zstd`, ...).
    pub fn compressed(codec: &str) -> Result<Self> {
        let compression = Label::from_name(codec)
            .ok_or_else(|| NdError::Usage(format!("unknown compression `{codec}`")))?;
        Ok(StoreOptions {
            compression,
            ..Self::default()
        })
    }
}

/// The uncompressed bytes of a block waiting to be written: owned, or shared with whatever
/// holds them (a memory map, another library's array), so that adding a large array copies
/// nothing. Python's `asdf_rs.write` hands NumPy arrays over so.
///
/// ```
/// use std::sync::Arc;
/// use asdf_ndarray::{ArrayWriter, BlockBytes, ByteOrder, Datatype, ScalarType, StoreOptions};
/// let values: Arc<Vec<u8>> = Arc::new((0..16u8).collect());
/// let mut w = ArrayWriter::new();
/// let node = w
///     .add_raw(BlockBytes::shared(values.clone()), &[4], &Datatype::Scalar(ScalarType::Int32),
///              ByteOrder::Little, &StoreOptions::default())
///     .unwrap();
/// assert_eq!(&w.blocks()[0].data[..], &values[..]);
/// assert_eq!(Arc::strong_count(&values), 2); // held, not copied
/// # let _ = node;
/// ```
#[derive(Clone)]
pub enum BlockBytes {
    /// Bytes the writer owns.
    Owned(Vec<u8>),
    /// Bytes the writer shares; they must not change until the file is written.
    Shared(Arc<dyn AsRef<[u8]> + Send + Sync>),
}

impl BlockBytes {
    /// Shares `bytes` with the writer.
    pub fn shared(bytes: Arc<impl AsRef<[u8]> + Send + Sync + 'static>) -> Self {
        BlockBytes::Shared(bytes)
    }
}

impl std::ops::Deref for BlockBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            BlockBytes::Owned(v) => v,
            BlockBytes::Shared(s) => (**s).as_ref(),
        }
    }
}

impl From<Vec<u8>> for BlockBytes {
    fn from(v: Vec<u8>) -> Self {
        BlockBytes::Owned(v)
    }
}

impl PartialEq for BlockBytes {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl Eq for BlockBytes {}

impl std::fmt::Debug for BlockBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            BlockBytes::Owned(_) => "owned",
            BlockBytes::Shared(_) => "shared",
        };
        write!(f, "BlockBytes({} bytes, {kind})", self.len())
    }
}

/// A block waiting to be written: its uncompressed data and how to encode it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingBlock {
    /// The uncompressed data.
    pub data: BlockBytes,
    /// Compression label.
    pub compression: Label,
    /// Compression level and element size.
    pub encode: EncodeOptions,
}

/// Collects the blocks of the arrays of one tree while building their nodes. Block numbers
/// are assigned in the order arrays are added; [`write_blocks`](Self::write_blocks) then
/// encodes them (in parallel) and writes them after the tree. Data alignment is a property of
/// the [`asdf_block::BlockWriter`] (`WriteOptions::align`): aligned blocks can be viewed in
/// place by readers.
///
/// ```
/// use asdf_ndarray::{ArrayWriter, NdArrayMeta, StoreOptions, ByteOrder};
/// use ndarray::{arr1, s};
/// let base = arr1(&[0i64, 1, 2, 3, 4, 5, 6, 7]);
/// let mut w = ArrayWriter::new();
/// let big = StoreOptions { byteorder: ByteOrder::Big, ..StoreOptions::compressed("zlib").unwrap() };
/// let n1 = w.add(&base, &big).unwrap();
/// let n2 = w.add_view(&base, &base.slice(s![..;-2]), &StoreOptions::default()).unwrap();
/// let n3 = w.add_view(&base, &base.slice(s![1..;2]), &StoreOptions::default()).unwrap();
/// assert_eq!(w.blocks().len(), 2); // the two views share one block
/// assert_eq!(n3.get("strides").unwrap()[0].as_i64(), Some(16));
/// let store = w.memory_store();
/// let rev = NdArrayMeta::from_node(&n2).unwrap().array::<i64>(&store).unwrap();
/// assert_eq!(rev.into_raw_vec_and_offset().0, vec![7, 5, 3, 1]);
/// ```
#[derive(Debug, Default)]
pub struct ArrayWriter {
    blocks: Vec<PendingBlock>,
    externals: Vec<(String, PendingBlock)>,
    shared: HashMap<(usize, usize, ScalarType, ByteOrder), i64>,
}

fn encode_opts(opts: &StoreOptions, typesize: usize) -> EncodeOptions {
    EncodeOptions {
        level: opts.level,
        typesize: typesize.max(1),
        ..EncodeOptions::default()
    }
}

/// The `n` elements of `it` as bytes in `order`, in a fresh buffer.
fn elements_to_bytes<'a, A: Element + 'a>(
    it: impl Iterator<Item = &'a A>,
    n: usize,
    order: ByteOrder,
) -> Result<Vec<u8>> {
    let mut out = crate::read::zeroed_vec::<u8>(n.saturating_mul(A::SCALAR.size()))?;
    fill_bytes(it, &mut out, order);
    Ok(out)
}

/// [`elements_to_bytes`] for elements already in one slice: a large one is converted in pieces
/// on the rayon pool. The buffer is fresh memory (huge pages where Linux gives them), and its
/// first touch dominates the copy; it scales with cores. On the 2-core host 1 GiB of float64
/// took 0.56 s on one thread with 4 KiB pages, and takes 0.15 s this way.
fn slice_to_bytes<A: Element>(s: &[A], order: ByteOrder) -> Result<Vec<u8>> {
    const PARALLEL_MIN: usize = 8 << 20;
    const PIECE: usize = 2 << 20;
    let size = A::SCALAR.size();
    let mut out = crate::read::zeroed_vec::<u8>(s.len().saturating_mul(size))?;
    if out.len() < PARALLEL_MIN {
        fill_bytes(s.iter(), &mut out, order);
    } else {
        let per_piece = PIECE / size;
        out.par_chunks_mut(per_piece * size)
            .zip(s.par_chunks(per_piece))
            .for_each(|(dst, src)| fill_bytes(src.iter(), dst, order));
    }
    Ok(out)
}

/// Writes each element of `it` into its `SCALAR.size()` bytes of `out`, in `order`.
fn fill_bytes<'a, A: Element + 'a>(
    it: impl Iterator<Item = &'a A>,
    out: &mut [u8],
    order: ByteOrder,
) {
    for (x, dst) in it.zip(out.chunks_exact_mut(A::SCALAR.size())) {
        x.write_bytes(order, dst);
    }
}

impl ArrayWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// The blocks of this file, in block-number order.
    pub fn blocks(&self) -> &[PendingBlock] {
        &self.blocks
    }

    /// The external blocks: each goes as the only block of its own ASDF file at the URI.
    pub fn externals(&self) -> &[(String, PendingBlock)] {
        &self.externals
    }

    /// Adds a block; returns its number.
    pub fn push_block(&mut self, block: PendingBlock) -> i64 {
        self.blocks.push(block);
        self.blocks.len() as i64 - 1
    }

    /// Stores `bytes` (C-contiguous elements of `datatype` in `order`; owned, or
    /// [shared](BlockBytes::shared) to copy nothing) as an ndarray and returns its node. The
    /// core of every other `add_*`.
    pub fn add_raw(
        &mut self,
        bytes: impl Into<BlockBytes>,
        shape: &[usize],
        datatype: &Datatype,
        order: ByteOrder,
        opts: &StoreOptions,
    ) -> Result<Node> {
        let bytes = bytes.into();
        let itemsize = datatype.size()?;
        let layout = Layout::contiguous(shape.to_vec(), itemsize)?;
        if layout.count * itemsize != bytes.len() {
            return Err(NdError::Usage(format!(
                "shape {shape:?} of {datatype} needs {} bytes, got {}",
                layout.count * itemsize,
                bytes.len()
            )));
        }
        let enc = encode_opts(opts, itemsize);
        let source = match &opts.storage {
            Storage::Inline if !shape.is_empty() => {
                let any = decode_any(&bytes, &layout, datatype, order)?;
                drop(bytes);
                let meta = NdArrayMeta {
                    source: None,
                    data: Some(inline_data(any)?),
                    shape: Some(shape.to_vec()),
                    streamed: false,
                    datatype: Some(datatype.clone()),
                    byteorder: order,
                    offset: 0,
                    strides: None,
                    mask: None,
                };
                return Ok(meta.to_node());
            }
            Storage::Block | Storage::Inline => Source::Block(self.push_block(PendingBlock {
                data: bytes,
                compression: opts.compression,
                encode: enc,
            })),
            Storage::External(uri) => {
                self.externals.push((
                    uri.clone(),
                    PendingBlock {
                        data: bytes,
                        compression: opts.compression,
                        encode: enc,
                    },
                ));
                Source::External(uri.clone())
            }
        };
        let mut meta = NdArrayMeta::block(0, shape.to_vec(), datatype.clone(), order);
        meta.source = Some(source);
        Ok(meta.to_node())
    }

    /// Stores any array (any memory layout: views, Fortran order, negative strides) in C order.
    pub fn add<A: Element, S: Data<Elem = A>, D: Dimension>(
        &mut self,
        a: &ArrayBase<S, D>,
        opts: &StoreOptions,
    ) -> Result<Node> {
        let bytes = match a.as_slice() {
            Some(s) => slice_to_bytes(s, opts.byteorder)?,
            None => elements_to_bytes(a.iter(), a.len(), opts.byteorder)?,
        };
        self.add_raw(
            bytes,
            a.shape(),
            &Datatype::Scalar(A::SCALAR),
            opts.byteorder,
            opts,
        )
    }

    /// Stores a masked array: the data, and the mask (`true` = missing) as a `bool8` ndarray
    /// in the `mask` field, stored the same way as the data. Python asdf reads it back as a
    /// `numpy.ma.MaskedArray`. Unlike Python's inline form (masked values written as `null`),
    /// inline data keeps the masked values, so they survive a round trip.
    pub fn add_masked<A: Element, S: Data<Elem = A>, D: Dimension, S2: Data<Elem = bool>>(
        &mut self,
        a: &ArrayBase<S, D>,
        mask: &ArrayBase<S2, D>,
        opts: &StoreOptions,
    ) -> Result<Node> {
        if a.shape() != mask.shape() {
            return Err(NdError::Usage(format!(
                "mask shape {:?} differs from the array's {:?}",
                mask.shape(),
                a.shape()
            )));
        }
        let mut node = self.add(a, opts)?;
        let mask_opts = StoreOptions {
            byteorder: ByteOrder::Big,
            ..opts.clone()
        };
        let m = self.add(mask, &mask_opts)?;
        if let Some(map) = node.as_map_mut() {
            // Keep Python's key order: source/data, mask, datatype, ...
            let entries: Vec<(Node, Node)> = std::mem::take(map).into_iter().collect();
            let mut out = Mapping::new();
            for (k, v) in entries {
                let is_first = matches!(k.as_str(), Some("source" | "data"));
                out.insert(k, v);
                if is_first {
                    out.insert("mask", m.clone());
                }
            }
            *map = out;
        }
        Ok(node)
    }

    /// Stores strings as `[ascii, N]` (`ucs4 == false`; ASCII only) or `[ucs4, N]`, N the
    /// longest string (at least 1). To keep a declared width, use
    /// [`add_strings_as`](Self::add_strings_as).
    pub fn add_strings<S: Data<Elem = String>, D: Dimension>(
        &mut self,
        a: &ArrayBase<S, D>,
        ucs4: bool,
        opts: &StoreOptions,
    ) -> Result<Node> {
        let width = a
            .iter()
            .map(|s| if ucs4 { s.chars().count() } else { s.len() })
            .max()
            .unwrap_or(0)
            .max(1);
        let dt = if ucs4 {
            Datatype::Ucs4(width)
        } else {
            Datatype::Ascii(width)
        };
        self.add_strings_as(a, &dt, opts)
    }

    /// Stores strings as `datatype` (`[ascii, N]` or `[ucs4, N]`), shorter strings NUL-padded
    /// to the declared width, as NumPy and Python asdf store them; a string longer than the
    /// width (or not ASCII for `ascii`) is an error.
    ///
    /// ```
    /// use asdf_ndarray::{ArrayWriter, Datatype, StoreOptions};
    /// let a = ndarray::arr1(&[String::new()]).into_dyn();
    /// let mut w = ArrayWriter::new();
    /// let node = w.add_strings_as(&a, &Datatype::Ucs4(30), &StoreOptions::inline()).unwrap();
    /// assert_eq!(node.get("datatype"), Some(&Datatype::Ucs4(30).to_node()));
    /// assert!(w.add_strings_as(&ndarray::arr1(&["toolong".to_string()]), &Datatype::Ascii(3), &StoreOptions::default()).is_err());
    /// ```
    pub fn add_strings_as<S: Data<Elem = String>, D: Dimension>(
        &mut self,
        a: &ArrayBase<S, D>,
        datatype: &Datatype,
        opts: &StoreOptions,
    ) -> Result<Node> {
        if !matches!(datatype, Datatype::Ascii(_) | Datatype::Ucs4(_)) {
            return Err(NdError::Usage(format!(
                "strings are stored as ascii or ucs4, not {datatype}"
            )));
        }
        let size = datatype.size()?;
        let total = a
            .len()
            .checked_mul(size)
            .ok_or_else(|| NdError::Usage(format!("{} strings of {datatype} overflow", a.len())))?;
        let mut bytes: Vec<u8> = crate::layout::try_vec_with_capacity(total)?;
        bytes.resize(total, 0);
        for (i, (s, dst)) in a
            .iter()
            .zip(bytes.chunks_exact_mut(size.max(1)))
            .enumerate()
        {
            crate::values::encode_value(
                &Node::from(s.as_str()),
                datatype,
                opts.byteorder,
                dst,
                &format!("item {i}"),
            )?;
        }
        self.add_raw(bytes, a.shape(), datatype, opts.byteorder, opts)
    }

    /// Stores a record array (its bytes as they are, in the record's byte orders).
    pub fn add_records(&mut self, r: &RecordArray, opts: &StoreOptions) -> Result<Node> {
        self.add_raw(
            r.bytes().to_vec(),
            r.shape(),
            &r.datatype(),
            r.byteorder(),
            opts,
        )
    }

    /// Stores an [`AnyArray`] with its datatype as it is (string widths included); the byte
    /// order is `opts.byteorder` (records keep their own).
    pub fn add_any(&mut self, a: &AnyArray, opts: &StoreOptions) -> Result<Node> {
        macro_rules! go {
            ($($v:ident),*) => {
                match a {
                    $(AnyArray::$v(x) => self.add(x, opts),)*
                    AnyArray::String { data, datatype } => self.add_strings_as(data, datatype, opts),
                    AnyArray::Record(r) => self.add_records(r, opts),
                }
            };
        }
        go!(
            Int8, Int16, Int32, Int64, Int128, UInt8, UInt16, UInt32, UInt64, UInt128, Float16,
            Float32, Float64, Complex32, Complex64, Complex128, Bool
        )
    }

    /// Stores `view` as a view into the block holding `base` (written once, whatever the number
    /// of views), with `offset` and `strides` (negative ones included), as Python asdf does for
    /// numpy views. `base` must be contiguous in memory (C or Fortran order) and contain every
    /// element of `view`. Views with zero strides (broadcasts) and inline storage are copied.
    pub fn add_view<
        A: Element,
        S: Data<Elem = A>,
        D: Dimension,
        S2: Data<Elem = A>,
        D2: Dimension,
    >(
        &mut self,
        base: &ArrayBase<S, D>,
        view: &ArrayBase<S2, D2>,
        opts: &StoreOptions,
    ) -> Result<Node> {
        if opts.storage != Storage::Block
            || view
                .strides()
                .iter()
                .zip(view.shape())
                .any(|(&s, &d)| s == 0 && d > 1)
        {
            return self.add(view, opts);
        }
        let mem = base
            .as_slice_memory_order()
            .ok_or_else(|| NdError::Usage("the base array is not contiguous in memory".into()))?;
        let size = A::SCALAR.size();
        let base_ptr = mem.as_ptr() as usize;
        let key = (base_ptr, mem.len(), A::SCALAR, opts.byteorder);
        let block = match self.shared.get(&key) {
            Some(&b) => b,
            None => {
                let bytes = slice_to_bytes(mem, opts.byteorder)?;
                let b = self.push_block(PendingBlock {
                    data: bytes.into(),
                    compression: opts.compression,
                    encode: encode_opts(opts, size),
                });
                self.shared.insert(key, b);
                b
            }
        };
        let mut meta = NdArrayMeta::block(
            block,
            view.shape().to_vec(),
            Datatype::Scalar(A::SCALAR),
            opts.byteorder,
        );
        if view.is_empty() {
            return Ok(meta.to_node());
        }
        let elem_off = (view.as_ptr() as isize).wrapping_sub(base_ptr as isize) / size as isize;
        check_view_within(view.shape(), view.strides(), elem_off, mem.len())?;
        meta.offset = (elem_off as usize * size) as u64;
        if !view.is_standard_layout() {
            meta.strides = Some(byte_strides(view.shape(), view.strides(), size));
        }
        Ok(meta.to_node())
    }

    /// Stores `a` as an ASDF.jl-style `core/chunked-ndarray-1.0.0` whose chunks are separate
    /// ndarrays (each its own block, compressed in parallel by
    /// [`write_blocks`](Self::write_blocks), readable alone). `chunk_shape` defaults to whole
    /// trailing dimensions and as many leading rows as fit in about 4 MiB.
    ///
    /// Only ASDF.jl and this crate read this non-standard tag; Python asdf keeps it as an
    /// unknown tagged mapping.
    pub fn add_chunked<A: Element, S: Data<Elem = A>, D: Dimension>(
        &mut self,
        a: &ArrayBase<S, D>,
        chunk_shape: Option<&[usize]>,
        opts: &StoreOptions,
    ) -> Result<Node> {
        let shape = a.shape().to_vec();
        let chunk = match chunk_shape {
            Some(c) if c.len() == shape.len() && c.iter().all(|&d| d > 0) => c.to_vec(),
            Some(c) => {
                return Err(NdError::Usage(format!(
                    "chunk shape {c:?} must have {} non-zero dimensions",
                    shape.len()
                )))
            }
            None => default_chunk_shape(&shape, A::SCALAR.size()),
        };
        let a = a.view().into_dyn();
        let mut chunks = Vec::new();
        if !shape.contains(&0) {
            let counts: Vec<usize> = shape
                .iter()
                .zip(&chunk)
                .map(|(&s, &c)| s.div_ceil(c))
                .collect();
            let total: usize = counts.iter().product();
            for k in 0..total {
                let mut rem = k;
                let mut start = vec![0usize; shape.len()];
                for d in (0..shape.len()).rev() {
                    start[d] = (rem % counts[d]) * chunk[d];
                    rem /= counts[d];
                }
                let info: Vec<SliceInfoElem> = start
                    .iter()
                    .zip(&chunk)
                    .zip(&shape)
                    .map(|((&s, &c), &n)| SliceInfoElem::Slice {
                        start: s as isize,
                        end: Some((s + c).min(n) as isize),
                        step: 1,
                    })
                    .collect();
                let part = a.slice(info.as_slice());
                let node = self.add(&part, opts)?;
                chunks.push(
                    Node::mapping([
                        (
                            "start",
                            Node::sequence(start.iter().map(|&s| Node::from(s))),
                        ),
                        ("ndarray", node),
                    ])
                    .with_tag(CHUNK_TAG),
                );
            }
        }
        Ok(Node::mapping([
            (
                "shape",
                Node::sequence(shape.iter().map(|&s| Node::from(s))),
            ),
            ("datatype", Datatype::Scalar(A::SCALAR).to_node()),
            ("chunks", Node::from(chunks)),
        ])
        .with_tag(CHUNKED_TAG))
    }

    /// Encodes every block and writes them with `writer`, in block-number order. Blocks are
    /// encoded in parallel, a batch at a time; a large block whose codec
    /// [streams](asdf_block::codec::Codec::streams) is encoded alone with every thread.
    pub fn write_blocks<W: Write>(&self, writer: &mut BlockWriter<W>) -> Result<Vec<BlockInfo>> {
        self.write_blocks_with(writer, |w, b, enc| {
            w.write_data(&b.data, b.compression, enc)
        })
    }

    /// [`write_blocks`](Self::write_blocks) into a seekable output, where a large block whose
    /// codec streams is written while it is compressed
    /// ([`BlockWriter::write_streaming`]): compressing, hashing and writing overlap.
    pub fn write_blocks_streaming<W: Write + Seek>(
        &self,
        writer: &mut BlockWriter<W>,
    ) -> Result<Vec<BlockInfo>> {
        self.write_blocks_with(writer, |w, b, enc| {
            w.write_streaming(&b.data, b.compression, enc)
        })
    }

    /// Writes the blocks in order: runs of ordinary blocks encoded in parallel
    /// ([`encode_blocks`]), each large block of a streaming codec with `alone`.
    fn write_blocks_with<W: Write>(
        &self,
        writer: &mut BlockWriter<W>,
        mut alone: impl FnMut(
            &mut BlockWriter<W>,
            &PendingBlock,
            &EncodeOptions,
        ) -> asdf_block::Result<BlockInfo>,
    ) -> Result<Vec<BlockInfo>> {
        let mut out = Vec::with_capacity(self.blocks.len());
        let mut run = 0;
        for (i, b) in self.blocks.iter().enumerate() {
            let codec = writer.options().codecs.get(b.compression);
            if b.data.len() < STREAM_MIN || !codec.is_some_and(|c| c.streams()) {
                continue;
            }
            out.extend(write_batch(writer, &self.blocks[run..i])?);
            out.push(alone(writer, b, &pool_share(&b.encode, 1))?);
            run = i + 1;
        }
        out.extend(write_batch(writer, &self.blocks[run..])?);
        Ok(out)
    }

    /// The blocks (and externals) in memory, decoded: a [`BlockStore`] for reading back what
    /// was added without writing a file.
    pub fn memory_store(&self) -> MemoryStore {
        MemoryStore {
            blocks: self.blocks.iter().map(|b| b.data.to_vec()).collect(),
            externals: self
                .externals
                .iter()
                .map(|(u, b)| (u.clone(), b.data.to_vec()))
                .collect(),
        }
    }
}

/// Blocks at least this large whose codec streams are encoded one at a time (the codec splits
/// each among the threads) instead of in a parallel batch. Smaller blocks do better side by
/// side: 64 `zstd` blocks of 16 MiB took 3.80 s written one by one with zstd's two workers on
/// the 2-core host, against 2.78 s encoded two at a time, one thread each.
const STREAM_MIN: usize = 64 << 20;

/// Encodes `blocks` in parallel, then writes them in order.
fn write_batch<W: Write>(
    writer: &mut BlockWriter<W>,
    blocks: &[PendingBlock],
) -> Result<Vec<BlockInfo>> {
    let items: Vec<(&[u8], Label, EncodeOptions)> = blocks
        .iter()
        .map(|b| (&b.data[..], b.compression, b.encode.clone()))
        .collect();
    let encoded = encode_blocks(&items, writer.options())?;
    encoded.iter().map(|e| Ok(writer.write(e)?)).collect()
}

fn inline_data(any: AnyArray) -> Result<Node> {
    let zero_d = any.shape().is_empty();
    let data = any.into_data_node()?;
    // A 0-d array is written as a one-item list (the schema requires a list).
    Ok(if zero_d { Node::sequence([data]) } else { data })
}

/// Leading rows of about 4 MiB, whole trailing dimensions.
fn default_chunk_shape(shape: &[usize], itemsize: usize) -> Vec<usize> {
    let mut chunk = shape.iter().map(|&d| d.max(1)).collect::<Vec<_>>();
    if let Some(first) = chunk.first_mut() {
        let row: usize = shape[1..]
            .iter()
            .map(|&d| d.max(1))
            .product::<usize>()
            .saturating_mul(itemsize)
            .max(1);
        *first = ((4 << 20) / row).clamp(1, (*first).max(1));
    }
    chunk
}

/// Decoded blocks held in memory (see [`ArrayWriter::memory_store`]).
#[derive(Clone, Debug, Default)]
pub struct MemoryStore {
    /// Block data by block number.
    pub blocks: Vec<Vec<u8>>,
    /// External blocks by URI.
    pub externals: Vec<(String, Vec<u8>)>,
}

impl BlockStore for MemoryStore {
    fn block(&self, source: i64) -> Result<Cow<'_, [u8]>> {
        let n = self.blocks.len() as i64;
        let i = if source < 0 { n + source } else { source };
        usize::try_from(i)
            .ok()
            .and_then(|i| self.blocks.get(i))
            .map(|b| Cow::Borrowed(&b[..]))
            .ok_or_else(|| NdError::Usage(format!("no block {source} (there are {n})")))
    }
    fn external(&self, uri: &str) -> Result<Cow<'_, [u8]>> {
        self.externals
            .iter()
            .find(|(u, _)| u == uri)
            .map(|(_, b)| Cow::Borrowed(&b[..]))
            .ok_or_else(|| NdError::NoExternal(uri.into()))
    }
}

/// Checks that a view of `shape` and element `strides` starting `elem_off` elements into a base
/// of `base_len` elements stays inside it.
fn check_view_within(
    shape: &[usize],
    strides: &[isize],
    elem_off: isize,
    base_len: usize,
) -> Result<()> {
    let (mut lo, mut hi) = (elem_off, elem_off);
    for (&s, &d) in strides.iter().zip(shape) {
        let span = s * (d as isize - 1);
        if span < 0 {
            lo += span
        } else {
            hi += span
        }
    }
    if lo < 0 || hi >= base_len as isize {
        return Err(NdError::Usage(
            "the view has elements outside its base array".into(),
        ));
    }
    Ok(())
}

/// Element strides as byte strides for the tree. Dimensions of length ≤ 1 never use their
/// stride; the schema forbids 0, so they get the item size.
fn byte_strides(shape: &[usize], strides: &[isize], size: usize) -> Vec<i64> {
    strides
        .iter()
        .zip(shape)
        .map(|(&s, &d)| {
            if d <= 1 || s == 0 {
                size as i64
            } else {
                s as i64 * size as i64
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parallel conversion of a large slice gives the bytes of the one-element-at-a-time
    /// loop, in both byte orders, for sizes that do not divide into whole pieces.
    fn parallel_equals_serial<A: Element>(values: Vec<A>) {
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let fast = slice_to_bytes(&values, order).unwrap();
            let slow = elements_to_bytes(values.iter(), values.len(), order).unwrap();
            assert!(
                fast.len() >= 8 << 20,
                "the test must take the parallel path"
            );
            assert_eq!(fast.len(), values.len() * A::SCALAR.size());
            assert!(fast == slow, "{:?} {order:?}", A::SCALAR);
        }
    }

    #[test]
    fn large_slices_convert_in_parallel_pieces_like_one_loop() {
        parallel_equals_serial(
            (0..(1usize << 20) + 12_345)
                .map(|i| i as f64 * 0.37)
                .collect(),
        );
        parallel_equals_serial((0..(9usize << 20) / 2 + 7).map(|i| i as u16).collect());
        parallel_equals_serial(
            (0..(1usize << 19) + 3)
                .map(|i| num_complex::Complex::new(i as f64, -(i as f64)))
                .collect(),
        );
    }
}
