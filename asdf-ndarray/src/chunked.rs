//! ASDF.jl's `core/chunked-ndarray-1.0.0`: an array assembled from `core/ndarray-chunk-1.0.0`
//! pieces. Not part of the ASDF Standard: only ASDF.jl (reading) and this crate know it.

use std::ops::Range;

use asdf_yaml::Node;
use ndarray::{ArrayD, IxDyn, SliceInfoElem};
use rayon::prelude::*;

use crate::any::AnyArray;
use crate::datatype::{parse_dims, Datatype};
use crate::element::Element;
use crate::error::{field_err, NdError, Result};
use crate::layout::check_type;
use crate::meta::{check_limit, NdArrayMeta, ReadLimits, MAX_NDIM};
use crate::region::region_shape;
use crate::store::BlockStore;
use crate::values::{infer_shape, with_scalar};

/// Tag of chunked arrays.
pub const CHUNKED_TAG: &str = "tag:stsci.edu:asdf/core/chunked-ndarray-1.0.0";
/// Tag of one chunk.
pub const CHUNK_TAG: &str = "tag:stsci.edu:asdf/core/ndarray-chunk-1.0.0";

/// One chunk: where it starts in the full array and its ndarray.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    /// Zero-based origin in the full array (C order).
    pub start: Vec<usize>,
    /// The chunk's shape.
    pub shape: Vec<usize>,
    /// The chunk's data (block-backed or inline).
    pub array: NdArrayMeta,
}

/// A parsed chunked ndarray. Chunks may leave gaps (read as zero) and overlap (later chunks
/// win).
///
/// ```
/// use asdf_ndarray::{ArrayWriter, ChunkedArray, StoreOptions};
/// use ndarray::{Array2, s};
/// let a = Array2::from_shape_fn((5, 7), |(i, j)| (i * 10 + j) as u16);
/// let mut w = ArrayWriter::new();
/// let node = w.add_chunked(&a, Some(&[2, 3]), &StoreOptions::compressed("zstd").unwrap()).unwrap();
/// let store = w.memory_store();
/// let c = ChunkedArray::from_node(&node).unwrap();
/// assert_eq!(c.chunks.len(), 9);
/// assert_eq!(c.array::<u16>(&store).unwrap(), a.clone().into_dyn());
/// let part = c.region::<u16>(&store, &[1..4, 5..7]).unwrap();
/// assert_eq!(part, a.slice(s![1..4, 5..7]).into_dyn());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkedArray {
    /// Shape of the full array.
    pub shape: Vec<usize>,
    /// Datatype of every chunk.
    pub datatype: Datatype,
    /// The chunks, in file order.
    pub chunks: Vec<Chunk>,
}

impl ChunkedArray {
    /// Parses and validates a chunked-ndarray node: every chunk has the array's rank and
    /// datatype and lies inside the array.
    pub fn from_node(node: &Node) -> Result<ChunkedArray> {
        let shape = node
            .get("shape")
            .and_then(parse_dims)
            .filter(|s| s.len() <= MAX_NDIM)
            .ok_or_else(|| {
                field_err(
                    "shape",
                    format!("expected a list of at most {MAX_NDIM} integers ≥ 0"),
                )
            })?;
        let datatype = Datatype::from_node(
            node.get("datatype")
                .ok_or_else(|| field_err("datatype", "missing"))?,
        )?;
        let items = node
            .get("chunks")
            .and_then(Node::as_seq)
            .ok_or_else(|| field_err("chunks", "expected a list"))?;
        let mut chunks = Vec::with_capacity(items.len());
        for (i, c) in items.iter().enumerate() {
            let f = |name: &str| format!("chunks[{i}].{name}");
            let start = c
                .get("start")
                .and_then(parse_dims)
                .ok_or_else(|| field_err(f("start"), "expected a list of integers ≥ 0"))?;
            let array = NdArrayMeta::from_node(
                c.get("ndarray")
                    .ok_or_else(|| field_err(f("ndarray"), "missing"))?,
            )
            .map_err(|e| field_err(f("ndarray"), e.to_string()))?;
            if let Some(dt) = &array.datatype {
                if *dt != datatype {
                    return Err(field_err(
                        f("ndarray.datatype"),
                        format!("{dt} differs from the array's {datatype}"),
                    ));
                }
            }
            let cshape = match (&array.shape, &array.data) {
                (Some(s), _) if !array.streamed => s.clone(),
                (None, Some(d)) => infer_shape(d, &datatype),
                _ => return Err(field_err(f("ndarray.shape"), "a chunk needs a fixed shape")),
            };
            if start.len() != shape.len() || cshape.len() != shape.len() {
                return Err(field_err(
                    f("start"),
                    format!("rank differs from the array's {}", shape.len()),
                ));
            }
            for d in 0..shape.len() {
                if start[d].checked_add(cshape[d]).is_none_or(|e| e > shape[d]) {
                    return Err(field_err(
                        f("start"),
                        format!(
                            "chunk {:?} at {:?} extends beyond shape {:?} in dimension {d}",
                            cshape, start, shape
                        ),
                    ));
                }
            }
            chunks.push(Chunk {
                start,
                shape: cshape,
                array,
            });
        }
        Ok(ChunkedArray {
            shape,
            datatype,
            chunks,
        })
    }

    /// The whole array, with the default [`ReadLimits`].
    pub fn array<T: Element>(
        &self,
        store: &(impl BlockStore + Sync + ?Sized),
    ) -> Result<ArrayD<T>> {
        self.array_with(store, &ReadLimits::default())
    }

    /// [`array`](Self::array) with explicit limits: the result (whose gaps take no space in
    /// the file) and every chunk read are bounded by [`ReadLimits::max_expanded_bytes`].
    ///
    /// ```
    /// use asdf_ndarray::{ChunkedArray, NdError, NoBlocks, ReadLimits};
    /// // One 1-element chunk in a 1000 × 1000 array: the rest is a gap, read as zeros.
    /// let node = asdf_yaml::parse_str(
    ///     "{shape: [1000, 1000], datatype: float64, chunks: [\
    ///      {start: [0, 0], ndarray: {data: [[1.0]], datatype: float64}}]}",
    /// ).unwrap();
    /// let c = ChunkedArray::from_node(&node).unwrap();
    /// assert_eq!(c.array::<f64>(&NoBlocks).unwrap()[[0, 0]], 1.0);
    /// let small = ReadLimits { max_expanded_bytes: 1 << 20 };
    /// let err = c.array_with::<f64>(&NoBlocks, &small).unwrap_err();
    /// assert!(matches!(err, NdError::TooLarge { limit, .. } if limit == 1 << 20));
    /// ```
    pub fn array_with<T: Element>(
        &self,
        store: &(impl BlockStore + Sync + ?Sized),
        limits: &ReadLimits,
    ) -> Result<ArrayD<T>> {
        let full: Vec<Range<usize>> = self.shape.iter().map(|&d| 0..d).collect();
        self.region_with(store, &full, limits)
    }

    /// The sub-array `region` (one range per dimension). Only the chunks it touches are
    /// decoded, in parallel; gaps are zero and overlapping chunks are applied in file order.
    pub fn region<T: Element>(
        &self,
        store: &(impl BlockStore + Sync + ?Sized),
        region: &[Range<usize>],
    ) -> Result<ArrayD<T>> {
        self.region_with(store, region, &ReadLimits::default())
    }

    /// [`region`](Self::region) with explicit limits (the result size is bounded by
    /// [`ReadLimits::max_expanded_bytes`], since gaps take no space in the file).
    pub fn region_with<T: Element>(
        &self,
        store: &(impl BlockStore + Sync + ?Sized),
        region: &[Range<usize>],
        limits: &ReadLimits,
    ) -> Result<ArrayD<T>> {
        check_type::<T>(&self.datatype)?;
        let (out_shape, bytes) =
            region_shape::<T>(&self.shape, region, limits, "the chunked array region")?;
        let touched: Vec<(usize, Vec<Range<usize>>)> = self
            .chunks
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let inter: Vec<Range<usize>> = region
                    .iter()
                    .zip(c.start.iter().zip(&c.shape))
                    .map(|(r, (&s, &n))| r.start.max(s)..r.end.min(s + n))
                    .collect();
                inter.iter().all(|r| r.start < r.end).then_some((i, inter))
            })
            .collect();
        // Overlapping chunks are each decoded: 10⁴ chunks over the same region would cost 10⁴
        // times its size (in time, and in memory if held together).
        let work = touched.iter().try_fold(0u64, |acc, (_, inter)| {
            let n = inter
                .iter()
                .map(|r| r.len() as u64)
                .try_fold(1u64, u64::checked_mul)?;
            acc.checked_add(n.checked_mul(T::SCALAR.size() as u64)?)
        });
        check_limit(
            "the chunks touching the chunked array region, together (overlapping chunks)",
            work,
            bytes,
            limits,
        )?;
        if let Some(out) = self.slabs::<T>(store, region, &out_shape, &touched, limits)? {
            return Ok(out);
        }
        let piece = |k: usize| {
            let (i, inter) = &touched[k];
            (self.chunks[*i].start.clone(), inter.clone())
        };
        assemble(region, &out_shape, touched.len(), piece, |k| {
            self.chunk_array::<T>(touched[k].0, store, limits)
                .map(Decoded::Array)
        })
    }

    /// Chunk `i` decoded, its shape checked against the declared one.
    fn chunk_array<T: Element>(
        &self,
        i: usize,
        store: &(impl BlockStore + Sync + ?Sized),
        limits: &ReadLimits,
    ) -> Result<ArrayD<T>> {
        let c = &self.chunks[i];
        let a = c
            .array
            .array_with::<T>(store, limits)
            .map_err(|e| field_err(format!("chunks[{i}]"), e.to_string()))?;
        if a.shape() != c.shape.as_slice() {
            return Err(field_err(
                format!("chunks[{i}]"),
                format!("data has shape {:?}, declared {:?}", a.shape(), c.shape),
            ));
        }
        Ok(a)
    }

    /// The common layout, chunks that are slabs along the first axis tiling the region exactly
    /// (no gap, no overlap): each chunk is decoded in parallel straight into its own contiguous
    /// part of the result (through the block reader when it is a whole block, else decoded and
    /// copied), so nothing is held twice. `None` when the chunks are laid out otherwise.
    fn slabs<T: Element>(
        &self,
        store: &(impl BlockStore + Sync + ?Sized),
        region: &[Range<usize>],
        out_shape: &[usize],
        touched: &[(usize, Vec<Range<usize>>)],
        limits: &ReadLimits,
    ) -> Result<Option<ArrayD<T>>> {
        let Some(first) = region.first() else {
            return Ok(None);
        };
        if touched.iter().any(|(_, inter)| inter[1..] != region[1..]) {
            return Ok(None);
        }
        let mut order: Vec<&(usize, Vec<Range<usize>>)> = touched.iter().collect();
        order.sort_by_key(|(_, inter)| inter[0].start);
        let mut at = first.start;
        for (_, inter) in &order {
            if inter[0].start != at {
                return Ok(None); // a gap or an overlap
            }
            at = inter[0].end;
        }
        if at != first.end {
            return Ok(None);
        }
        let row: usize = out_shape[1..].iter().product();
        let count = crate::datatype::checked_product(out_shape)
            .ok_or_else(|| NdError::Usage(format!("shape {out_shape:?} overflows")))?;
        let mut data = crate::read::zeroed_vec::<T>(count)?;
        let mut parts = Vec::with_capacity(order.len());
        let mut rest: &mut [T] = &mut data;
        for (i, inter) in &order {
            let (part, tail) = rest.split_at_mut(inter[0].len() * row);
            parts.push((*i, inter, part));
            rest = tail;
        }
        parts
            .into_par_iter()
            .try_for_each(|(i, inter, part)| -> Result<()> {
                let c = &self.chunks[i];
                let whole = inter.iter().zip(&c.shape).all(|(r, &n)| r.len() == n);
                if whole && c.array.fill_from_block(store, &c.shape, part)? {
                    return Ok(());
                }
                let a = self.chunk_array::<T>(i, store, limits)?;
                let src: Vec<SliceInfoElem> = inter
                    .iter()
                    .zip(&c.start)
                    .map(|(r, &s)| slice(r.start - s, r.end - s))
                    .collect();
                let shape: Vec<usize> = inter.iter().map(|r| r.len()).collect();
                let mut dst = ndarray::ArrayViewMut::from_shape(IxDyn(&shape), part)
                    .map_err(|e| NdError::Usage(format!("internal shape error: {e}")))?;
                dst.assign(&a.slice(src.as_slice()));
                Ok(())
            })?;
        ArrayD::from_shape_vec(IxDyn(out_shape), data)
            .map(Some)
            .map_err(|e| NdError::Usage(format!("internal shape error: {e}")))
    }

    /// The whole array, whatever its (scalar) datatype, with the default [`ReadLimits`].
    pub fn read(&self, store: &(impl BlockStore + Sync + ?Sized)) -> Result<AnyArray> {
        self.read_with(store, &ReadLimits::default())
    }

    /// [`read`](Self::read) with explicit limits (see [`array_with`](Self::array_with)).
    pub fn read_with(
        &self,
        store: &(impl BlockStore + Sync + ?Sized),
        limits: &ReadLimits,
    ) -> Result<AnyArray> {
        match &self.datatype {
            Datatype::Scalar(s) => {
                with_scalar!(*s, T => Ok(AnyArray::from(self.array_with::<T>(store, limits)?)))
            }
            other => Err(NdError::Datatype(format!(
                "chunked arrays of {other} are not supported"
            ))),
        }
    }
}

/// A chunk that a region touches: where the chunk starts, and its intersection with the region
/// (both in the full array's coordinates).
pub(crate) type Piece = (Vec<usize>, Vec<Range<usize>>);

/// A decoded piece: its data, or one value throughout (a chunk never written).
pub(crate) enum Decoded<T> {
    /// The chunk, from its start.
    Array(ArrayD<T>),
    /// The same value everywhere.
    Fill(T),
}

/// The sub-array `region` (of shape `out_shape`) assembled from `count` pieces: piece `k` is
/// `piece(k)`, decoded by `decode(k)` into an array starting at the piece's start. Decoded a
/// few at a time, in parallel, applied in order (later pieces win where they overlap): what is
/// held at once stays a few chunks however many there are. Gaps are zero.
pub(crate) fn assemble<T: Element>(
    region: &[Range<usize>],
    out_shape: &[usize],
    count: usize,
    piece: impl Fn(usize) -> Piece,
    decode: impl Fn(usize) -> Result<Decoded<T>> + Sync,
) -> Result<ArrayD<T>> {
    let len = crate::datatype::checked_product(out_shape)
        .ok_or_else(|| NdError::Usage(format!("shape {out_shape:?} overflows")))?;
    let mut out = ArrayD::from_shape_vec(IxDyn(out_shape), crate::read::zeroed_vec::<T>(len)?)
        .map_err(|e| NdError::Usage(format!("internal shape error: {e}")))?;
    let window = 2 * rayon::current_num_threads().max(1);
    for first in (0..count).step_by(window) {
        let group = first..count.min(first + window);
        let decoded: Vec<Decoded<T>> = group
            .clone()
            .into_par_iter()
            .map(&decode)
            .collect::<Result<_>>()?;
        for (k, a) in group.zip(decoded) {
            let (start, inter) = piece(k);
            let dst: Vec<SliceInfoElem> = inter
                .iter()
                .zip(region)
                .map(|(r, g)| slice(r.start - g.start, r.end - g.start))
                .collect();
            let mut dst = out.slice_mut(dst.as_slice());
            match a {
                Decoded::Fill(v) => dst.fill(v),
                Decoded::Array(a) => {
                    let src: Vec<SliceInfoElem> = inter
                        .iter()
                        .zip(&start)
                        .map(|(r, &s)| slice(r.start - s, r.end - s))
                        .collect();
                    dst.assign(&a.slice(src.as_slice()));
                }
            }
        }
    }
    Ok(out)
}

fn slice(start: usize, end: usize) -> SliceInfoElem {
    SliceInfoElem::Slice {
        start: start as isize,
        end: Some(end as isize),
        step: 1,
    }
}
