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
    if !matches!(meta.source, Some(Source::Block(_))) {
        return None;
    }
    let (shape, datatype) = (meta.shape.as_ref()?, meta.datatype.as_ref()?);
    if info.header.is_compressed() || meta.streamed || meta.mask.is_some() || shape.is_empty() {
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
    if meta.offset.checked_add(total)? > info.header.used_size {
        return None; // the normal read reports it
    }
    let outer: usize = region[..region.len() - 1].iter().map(|r| r.len()).product();
    if outer > MAX_RUNS {
        return None;
    }
    let last = region.last()?;
    let start = info.data_offset + meta.offset + last.start as u64 * item;
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
