//! Region reads of uncompressed block-backed arrays: only the byte runs of the region's rows are
//! read (neighbouring runs coalesced), then assembled into a C-ordered array of the region.

use std::borrow::Cow;
use std::ops::Range;

use asdf_block::BlockInfo;
use asdf_ndarray::{BlockStore, Element, NdArrayMeta, Source};
use ndarray::ArrayD;

use bytes::Bytes;

use super::object::RemoteObject;
use crate::arrays::arr;
use crate::error::{AsdfError, Result};
use crate::file::OpenOptions;

/// The most runs one region read issues as separate ranges; a region cut into more pieces is
/// read with its whole block instead.
const MAX_RUNS: usize = 1 << 20;

/// What to read for a region: the byte runs in C order and the array they make up.
pub(crate) struct RegionPlan {
    runs: Vec<Range<u64>>,
    meta: NdArrayMeta,
}

/// The runs of `region` of the array `meta` when its data is an uncompressed block stored in C
/// order (no strides other than C's, no mask); `None` when it must be read whole.
pub(crate) fn plan(
    meta: &NdArrayMeta,
    info: &BlockInfo,
    region: &[Range<usize>],
) -> Option<RegionPlan> {
    if info.header.is_compressed() {
        return None;
    }
    let mut plan = runs_in_data(meta, info.header.used_size, region)?;
    for r in &mut plan.runs {
        *r = r.start + info.data_offset..r.end + info.data_offset;
    }
    Some(plan)
}

/// The runs of `region` as offsets into the block's decoded data (of `data_len` bytes), when the
/// array is stored in C order in a block (no strides other than C's, no mask, not streamed).
fn runs_in_data(meta: &NdArrayMeta, data_len: u64, region: &[Range<usize>]) -> Option<RegionPlan> {
    if !matches!(meta.source, Some(Source::Block(_))) {
        return None;
    }
    let (shape, datatype) = (meta.shape.as_ref()?, meta.datatype.as_ref()?);
    if meta.streamed || meta.mask.is_some() || shape.is_empty() {
        return None;
    }
    let item = datatype.size().ok()? as u64;
    let c = c_strides(shape, item)?;
    if meta.strides.as_ref().is_some_and(|s| *s != c) || !inside(region, shape) {
        return None;
    }
    let total = shape
        .iter()
        .try_fold(item, |a, &d| a.checked_mul(d as u64))?;
    if meta.offset.checked_add(total)? > data_len {
        return None; // the normal read reports it
    }
    let outer: usize = region[..region.len() - 1].iter().map(|r| r.len()).product();
    if outer > MAX_RUNS {
        return None;
    }
    let last = region.last()?;
    let start = meta.offset + last.start as u64 * item;
    let len = last.len() as u64 * item;
    let mut runs = Vec::with_capacity(if len == 0 { 0 } else { outer });
    if len > 0 {
        for_each_index(&region[..region.len() - 1], &mut |idx| {
            let at: u64 = idx.iter().zip(&c).map(|(&i, &s)| i as u64 * s as u64).sum();
            runs.push(start + at..start + at + len);
        });
    }
    let shape: Vec<usize> = region.iter().map(|r| r.len()).collect();
    let meta = NdArrayMeta::block(0, shape, datatype.clone(), meta.byteorder);
    Some(RegionPlan { runs, meta })
}

/// The most chunks of an `lz4` block a region read walks to (each chunk header is one small
/// request, since each gives the next one's position): 1024 chunks are the first 4 GiB of
/// decoded data. Regions further in read the whole block.
const MAX_LZ4_CHUNKS: u64 = 1024;

/// A region of an array stored in an `lz4` block (Python asdf's framing: 4 MiB chunks, each a
/// big-endian stored length, a little-endian decoded size and a raw LZ4 block).
pub(crate) struct Lz4Plan {
    /// The runs as offsets into the block's decoded data, and the region's array.
    inner: RegionPlan,
    /// The block's stored bytes in the file.
    stored: Range<u64>,
}

/// The plan of `region` when the array's block is `lz4`-compressed; `None` when it must be
/// read whole (another codec, strides, a mask, or chunks beyond [`MAX_LZ4_CHUNKS`]).
pub(crate) fn lz4_plan(
    meta: &NdArrayMeta,
    info: &BlockInfo,
    region: &[Range<usize>],
) -> Option<Lz4Plan> {
    use asdf_block::codec::Codec;
    if info.header.compression != asdf_block::codec::Lz4Chunked.label() {
        return None;
    }
    let inner = runs_in_data(meta, info.header.data_size, region)?;
    let last = inner.runs.last().map_or(0, |r| r.end);
    if last.div_ceil(asdf_block::codec::LZ4_CHUNK_SIZE as u64) > MAX_LZ4_CHUNKS {
        return None;
    }
    let stored = info.data_offset..info.data_offset.checked_add(info.header.used_size)?;
    Some(Lz4Plan { inner, stored })
}

fn c_strides(shape: &[usize], item: u64) -> Option<Vec<i64>> {
    let mut strides = vec![0i64; shape.len()];
    let mut s = item;
    for (k, &d) in shape.iter().enumerate().rev() {
        strides[k] = i64::try_from(s).ok()?;
        s = s.checked_mul(d as u64)?;
    }
    Some(strides)
}

fn inside(region: &[Range<usize>], shape: &[usize]) -> bool {
    region.len() == shape.len()
        && region
            .iter()
            .zip(shape)
            .all(|(r, &d)| r.start <= r.end && r.end <= d)
}

/// Calls `f` with every index of the box `ranges`, in C order.
fn for_each_index(ranges: &[Range<usize>], f: &mut impl FnMut(&[usize])) {
    if ranges.iter().any(|r| r.is_empty()) {
        return;
    }
    let mut idx: Vec<usize> = ranges.iter().map(|r| r.start).collect();
    loop {
        f(&idx);
        let mut k = ranges.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < ranges[k].end {
                break;
            }
            idx[k] = ranges[k].start;
        }
    }
}

/// One in-memory block: the region's bytes.
struct OneBlock(Vec<u8>);

impl BlockStore for OneBlock {
    fn block(&self, _source: i64) -> asdf_ndarray::Result<Cow<'_, [u8]>> {
        Ok(Cow::Borrowed(&self.0))
    }
}

/// What a region read needs of its file: the object, the bytes its opening holds, the limits.
pub(crate) struct Reader<'a> {
    pub(crate) object: &'a RemoteObject,
    pub(crate) opening: &'a [(u64, Bytes)],
    pub(crate) options: &'a OpenOptions,
}

impl Reader<'_> {
    /// Reads the runs of `plan` and makes the region's array of them.
    pub(crate) async fn read<T: Element>(
        &self,
        plan: &RegionPlan,
        pointer: &str,
    ) -> Result<ArrayD<T>> {
        if let (Some(first), Some(last)) = (plan.runs.first(), plan.runs.last()) {
            let limits = &self.options.blocks.limits;
            self.object
                .check_ceiling("the region", first.start..last.end, limits)?;
        }
        // Rows of a region are many short runs: each request costs a round trip, so runs up to
        // four run lengths apart share one (at most 4× the bytes for many times fewer requests).
        let run = plan.runs.first().map_or(0, |r| r.end - r.start);
        let gap = self.object.gap().max(run.saturating_mul(4));
        let pieces = self
            .object
            .fetch_coalescing(&plan.runs, self.opening, gap)
            .await?;
        let total: usize = pieces.iter().map(|p| p.len()).sum();
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(total).map_err(|_| {
            AsdfError::io(
                "assembling a region",
                std::io::Error::new(std::io::ErrorKind::OutOfMemory, format!("{total} bytes")),
            )
        })?;
        for p in &pieces {
            bytes.extend_from_slice(p);
        }
        self.assemble(plan, bytes, pointer)
    }

    /// Reads the chunks of `plan`'s block that hold its runs, and makes the region's array of
    /// them; `None` when the block turns out not to be in Python's chunk framing (an LZ4 frame,
    /// chunks of other sizes), which the caller then reads whole. The chunk headers are walked
    /// from the block's start, one small request each; the chunks themselves come in one.
    pub(crate) async fn read_lz4<T: Element>(
        &self,
        plan: &Lz4Plan,
        pointer: &str,
    ) -> Result<Option<ArrayD<T>>> {
        let runs = &plan.inner.runs;
        let (Some(first), Some(last)) = (runs.first(), runs.last()) else {
            return self.assemble(&plan.inner, Vec::new(), pointer).map(Some);
        };
        let chunk = asdf_block::codec::LZ4_CHUNK_SIZE as u64;
        let (k, m) = (first.start / chunk, (last.end - 1) / chunk);
        let Some((stored, decoded_len)) = self.chunk_extent(&plan.stored, k, m).await? else {
            return Ok(None);
        };
        let limits = &self.options.blocks.limits;
        self.object
            .check_ceiling("the region's lz4 chunks", stored.clone(), limits)?;
        let bytes = self.object.fetch_one(stored.clone()).await?;
        // The fetched chunks are an lz4 block of their own, decoding to `decoded_len` bytes.
        let span = first.start - k * chunk..last.end - k * chunk;
        let span = span.start as usize..span.end as usize;
        let decoded = usize::try_from(decoded_len).ok().and_then(|n| {
            use asdf_block::codec::Codec;
            asdf_block::codec::Lz4Chunked
                .decode_range(&bytes, n, span)
                .ok()
        });
        // Not Python's framing after all: the whole-block read says what is wrong.
        let Some(Some(decoded)) = decoded else {
            return Ok(None);
        };
        let mut region = Vec::new();
        for r in runs {
            let at = (r.start - first.start) as usize..(r.end - first.start) as usize;
            region.extend_from_slice(&decoded[at]);
        }
        self.assemble(&plan.inner, region, pointer).map(Some)
    }

    /// The stored bytes of chunks `k..=m` of the lz4 block at `stored` and what they decode
    /// to, walking the chunk headers from its start (each must decode to a full 4 MiB chunk but
    /// the last); `None` when the block is not in that framing.
    async fn chunk_extent(
        &self,
        stored: &Range<u64>,
        k: u64,
        m: u64,
    ) -> Result<Option<(Range<u64>, u64)>> {
        let chunk = asdf_block::codec::LZ4_CHUNK_SIZE as u64;
        let mut pos = stored.start;
        let mut from = pos;
        let mut decoded = 0;
        for c in 0..=m {
            if pos.saturating_add(8) > stored.end {
                return Ok(None);
            }
            let head = self.object.fetch_one(pos..pos + 8).await?;
            if head.len() < 8 {
                return Ok(None); // past the object's end: the whole-block read reports it
            }
            let n = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as u64;
            let size = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as u64;
            if n < 4 || (c < m && size != chunk) || size > chunk {
                return Ok(None);
            }
            if c == k {
                from = pos;
            }
            if c >= k {
                decoded += size;
            }
            pos = pos.saturating_add(4 + n);
            if pos > stored.end {
                return Ok(None);
            }
        }
        Ok(Some((from..pos, decoded)))
    }

    /// The region's array of its bytes, in C order.
    fn assemble<T: Element>(
        &self,
        plan: &RegionPlan,
        bytes: Vec<u8>,
        pointer: &str,
    ) -> Result<ArrayD<T>> {
        plan.meta
            .array_with::<T>(&OneBlock(bytes), &self.options.arrays)
            .map_err(|e| arr(pointer, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_in_c_order() {
        let mut seen = Vec::new();
        for_each_index(&[1..3, 4..6], &mut |i| seen.push(i.to_vec()));
        assert_eq!(seen, vec![vec![1, 4], vec![1, 5], vec![2, 4], vec![2, 5]]);
        let mut none = 0;
        for_each_index(&[1..1, 0..3], &mut |_| none += 1);
        assert_eq!(none, 0);
        let mut one = 0;
        for_each_index(&[], &mut |_| one += 1);
        assert_eq!(one, 1);
    }

    #[test]
    fn c_strides_of_a_shape() {
        assert_eq!(c_strides(&[3, 4, 5], 8), Some(vec![160, 40, 8]));
        assert_eq!(c_strides(&[usize::MAX, 4], 8), None);
        assert_eq!(c_strides(&[2, usize::MAX, 4], 8), None);
    }
}
