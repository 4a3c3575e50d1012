//! Byte layouts of arrays inside blocks: resolution of shape/offset/strides against the block
//! length (every reachable byte checked before any access), iteration in C order, and views.

use ndarray::{ArrayViewD, Axis, IxDyn, ShapeBuilder};

use crate::datatype::{checked_product, ByteOrder, Datatype, ScalarType};
use crate::element::Element;
use crate::error::{field_err, NdError, Result};
use crate::meta::{check_limit, NdArrayMeta, ReadLimits};

/// A validated layout: every element lies inside the block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Byte offset of element `[0, 0, …]`.
    pub offset: usize,
    pub shape: Vec<usize>,
    /// Byte strides (0 for dimensions of length ≤ 1, where they are never used).
    pub strides: Vec<isize>,
    pub itemsize: usize,
    /// Number of elements.
    pub count: usize,
    /// Lowest byte offset any element starts at.
    pub lowest: usize,
}

/// C-contiguous strides, treating zero-length dimensions as 1 (NumPy's convention).
fn default_strides(shape: &[usize], itemsize: usize) -> Option<Vec<i128>> {
    let mut strides = vec![0i128; shape.len()];
    let mut acc = itemsize as i128;
    for (i, &d) in shape.iter().enumerate().rev() {
        strides[i] = acc;
        acc = acc.checked_mul(d.max(1) as i128)?;
    }
    Some(strides)
}

impl Layout {
    /// A C-contiguous layout at offset 0.
    pub(crate) fn contiguous(shape: Vec<usize>, itemsize: usize) -> Result<Layout> {
        let count = checked_product(&shape).ok_or_else(|| NdError::TooLarge {
            what: "shape".into(),
            limit: isize::MAX as u64,
        })?;
        count
            .checked_mul(itemsize)
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| NdError::TooLarge {
                what: "shape".into(),
                limit: isize::MAX as u64,
            })?;
        let strides = default_strides(&shape, itemsize).ok_or_else(|| NdError::TooLarge {
            what: "strides".into(),
            limit: isize::MAX as u64,
        })?;
        let strides = strides
            .iter()
            .zip(&shape)
            .map(|(&s, &d)| if d <= 1 { 0 } else { s as isize })
            .collect();
        Ok(Layout {
            offset: 0,
            shape,
            strides,
            itemsize,
            count,
            lowest: 0,
        })
    }

    /// Resolves a block-backed array's layout against `block_len` bytes of block data.
    pub(crate) fn resolve(
        meta: &NdArrayMeta,
        itemsize: usize,
        block_len: usize,
        limits: &ReadLimits,
    ) -> Result<Layout> {
        let mut shape = meta.shape.clone().unwrap_or_default();
        let offset = usize::try_from(meta.offset)
            .map_err(|_| field_err("offset", "does not fit in memory"))?;
        if meta.streamed {
            let row = match &meta.strides {
                Some(s) => s.first().copied().map(i128::from),
                None => shape
                    .iter()
                    .try_fold(itemsize as i128, |a, &d| a.checked_mul(d.max(1) as i128)),
            };
            let row = row.filter(|&r| r > 0).ok_or_else(|| {
                field_err("strides[0]", "a streamed array needs a positive row stride")
            })?;
            let rows = (block_len.saturating_sub(offset) as i128) / row;
            shape.insert(0, rows as usize);
        }
        let strides: Vec<i128> = match &meta.strides {
            Some(s) => s.iter().map(|&x| i128::from(x)).collect(),
            None => default_strides(&shape, itemsize).ok_or_else(|| NdError::TooLarge {
                what: "strides".into(),
                limit: isize::MAX as u64,
            })?,
        };
        if strides.len() != shape.len() {
            return Err(field_err(
                "strides",
                format!(
                    "has {} entries but the shape has {}",
                    strides.len(),
                    shape.len()
                ),
            ));
        }
        let count = checked_product(&shape).ok_or_else(|| NdError::TooLarge {
            what: format!("shape {shape:?}"),
            limit: isize::MAX as u64,
        })?;
        let lo = if count > 0 {
            lowest_in_block(&shape, &strides, offset, itemsize, block_len)?
        } else {
            offset as i128
        };
        let out = (count as u64).checked_mul(itemsize.max(1) as u64);
        check_limit("the array", out, block_len as u64, limits)?;
        let strides = strides
            .iter()
            .zip(&shape)
            // Dimensions of length > 1 have |stride| < block_len here, so the cast is exact.
            .map(|(&s, &d)| if d <= 1 || count == 0 { 0 } else { s as isize })
            .collect();
        Ok(Layout {
            offset,
            shape,
            strides,
            itemsize,
            count,
            lowest: lo.max(0) as usize,
        })
    }

    /// Whether the elements are C-contiguous in increasing address order.
    pub(crate) fn is_c_contiguous(&self) -> bool {
        let mut acc = self.itemsize as isize;
        for (&s, &d) in self.strides.iter().zip(&self.shape).rev() {
            if d > 1 && s != acc {
                return false;
            }
            acc = acc.wrapping_mul(d.max(1) as isize);
        }
        true
    }

    /// Calls `f` with the bytes of every element, in C order. `bytes` must be the block the
    /// layout was resolved against.
    pub(crate) fn for_each(&self, bytes: &[u8], mut f: impl FnMut(&[u8])) {
        let item = self.itemsize;
        if self.count == 0 {
            return;
        }
        if self.is_c_contiguous() {
            let end = self.offset + self.count * item;
            if item == 0 {
                (0..self.count).for_each(|_| f(&[]));
            } else {
                bytes[self.offset..end].chunks_exact(item).for_each(f);
            }
            return;
        }
        let nd = self.shape.len();
        let (inner_len, inner_stride) = (self.shape[nd - 1], self.strides[nd - 1]);
        let mut idx = vec![0usize; nd - 1];
        let mut base = self.offset as isize;
        loop {
            let mut p = base;
            for _ in 0..inner_len {
                let s = p as usize;
                f(&bytes[s..s + item]);
                p = p.wrapping_add(inner_stride);
            }
            let mut d = nd - 1;
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                idx[d] += 1;
                base = base.wrapping_add(self.strides[d]);
                if idx[d] < self.shape[d] {
                    break;
                }
                base = base.wrapping_sub(self.strides[d].wrapping_mul(self.shape[d] as isize));
                idx[d] = 0;
            }
        }
    }

    /// The elements gathered into one C-contiguous buffer (stored byte order kept).
    pub(crate) fn gather(&self, bytes: &[u8]) -> Result<Vec<u8>> {
        let n = self.count * self.itemsize;
        let mut out = try_vec_with_capacity(n)?;
        if self.count == 0 {
            return Ok(out);
        }
        if self.is_c_contiguous() {
            out.extend_from_slice(&bytes[self.offset..self.offset + n]);
        } else {
            self.for_each(bytes, |b| out.extend_from_slice(b));
        }
        Ok(out)
    }
}

/// A vector with room for `n` items, or an error instead of an abort when memory is short.
pub(crate) fn try_vec_with_capacity<T>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| NdError::TooLarge {
        what: format!("allocating {n} elements"),
        limit: isize::MAX as u64,
    })?;
    asdf_block::alloc::advise_huge_pages(&v);
    Ok(v)
}

/// Checks that the stored datatype is `T`'s.
pub(crate) fn check_type<T: Element>(dt: &Datatype) -> Result<()> {
    if *dt == Datatype::Scalar(T::SCALAR) {
        Ok(())
    } else {
        Err(NdError::TypeMismatch {
            stored: dt.to_string(),
            requested: T::SCALAR.name().to_string(),
        })
    }
}

/// Copies the elements into an owned vector in C order, converting the byte order.
pub(crate) fn decode_vec<T: Element>(
    bytes: &[u8],
    layout: &Layout,
    order: ByteOrder,
) -> Result<Vec<T>> {
    let mut out: Vec<T> = try_vec_with_capacity(layout.count)?;
    if layout.count == 0 {
        // Empty arrays touch no bytes (their offset may even lie past the block end).
        return Ok(out);
    }
    if layout.is_c_contiguous() {
        let end = layout.offset + layout.count * layout.itemsize;
        let src = &bytes[layout.offset..end];
        let native = order.is_native() || T::SCALAR.swap_unit() == 1;
        if native
            && layout.itemsize == std::mem::size_of::<T>()
            && (T::SCALAR != ScalarType::Bool8 || src.iter().all(|&b| b <= 1))
        {
            // SAFETY: `out` has capacity for `count` elements of `T` (reserved above), `src` is
            // exactly `count * size_of::<T>()` bytes, the regions cannot overlap (`out` is a
            // fresh allocation), and every `count` elements are initialised by the copy with bit
            // patterns valid for `T` in native byte order: any bits for numbers, and bool bytes
            // were checked to be 0 or 1 just above.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    src.as_ptr(),
                    out.as_mut_ptr().cast::<u8>(),
                    src.len(),
                );
                out.set_len(layout.count);
            }
            return Ok(out);
        }
        out.extend(
            src.chunks_exact(layout.itemsize)
                .map(|b| T::from_bytes(b, order)),
        );
    } else {
        layout.for_each(bytes, |b| out.push(T::from_bytes(b, order)));
    }
    Ok(out)
}

/// A zero-copy view of the elements, or the reason there cannot be one.
pub(crate) fn view<'a, T: Element>(
    bytes: &'a [u8],
    layout: &Layout,
    order: ByteOrder,
) -> Result<ArrayViewD<'a, T>> {
    let size = std::mem::size_of::<T>();
    if size != layout.itemsize || size != T::SCALAR.size() {
        return Err(NdError::NotViewable(format!(
            "element size {} differs from {size}",
            layout.itemsize
        )));
    }
    if T::SCALAR.swap_unit() > 1 && !order.is_native() {
        return Err(NdError::NotViewable(format!(
            "the data is {}-endian, this machine is {}-endian",
            order.name(),
            ByteOrder::NATIVE.name()
        )));
    }
    if layout.count == 0 {
        return ArrayViewD::from_shape(IxDyn(&layout.shape), &[])
            .map_err(|e| NdError::NotViewable(format!("empty view: {e}")));
    }
    let mut elem_strides = Vec::with_capacity(layout.shape.len());
    for (i, &s) in layout.strides.iter().enumerate() {
        if s % size as isize != 0 {
            return Err(NdError::NotViewable(format!(
                "stride {s} of dimension {i} is not a multiple of the element size {size}"
            )));
        }
        elem_strides.push(s.unsigned_abs() / size);
    }
    let base = bytes.as_ptr().wrapping_add(layout.lowest);
    if (base as usize) % std::mem::align_of::<T>() != 0 {
        return Err(NdError::NotViewable(format!(
            "the data at block offset {} is not aligned to {} bytes (write with aligned blocks to allow views)",
            layout.lowest,
            std::mem::align_of::<T>()
        )));
    }
    let mut valid = true;
    if !T::valid_bits(&[2u8; 16]) {
        layout.for_each(bytes, |b| valid &= T::valid_bits(b));
    }
    if !valid {
        return Err(NdError::NotViewable(format!(
            "the stored values are not all valid {}",
            T::SCALAR.name()
        )));
    }
    let shape = IxDyn(&layout.shape).strides(IxDyn(&elem_strides));
    // SAFETY: `Layout::resolve` checked that every element (from byte `lowest` to the end of the
    // element at the highest address) lies inside `bytes`, which is borrowed for 'a and never
    // mutated; `base` points at the element with the lowest address and is aligned for `T`
    // (checked above), all strides are non-negative multiples of the element size and every
    // element is a valid `T` (any bit pattern for numbers, 0/1 checked above for bool). The
    // byte span is below `bytes.len() <= isize::MAX`.
    let mut v = unsafe { ArrayViewD::from_shape_ptr(shape, base.cast::<T>()) };
    for (i, &s) in layout.strides.iter().enumerate() {
        if s < 0 {
            v.invert_axis(Axis(i));
        }
    }
    Ok(v)
}

/// The lowest byte an array of `shape` and `strides` (at least one element) touches from
/// `offset`, after checking that every byte it touches lies within `block_len`.
fn lowest_in_block(
    shape: &[usize],
    strides: &[i128],
    offset: usize,
    itemsize: usize,
    block_len: usize,
) -> Result<i128> {
    let too_large = || NdError::TooLarge {
        what: "strides".into(),
        limit: isize::MAX as u64,
    };
    let mut lo = offset as i128;
    let mut hi = offset as i128;
    for (&s, &d) in strides.iter().zip(shape) {
        let span = s.checked_mul(d as i128 - 1).ok_or_else(too_large)?;
        if span < 0 {
            lo = lo.checked_add(span).ok_or_else(too_large)?;
        } else {
            hi = hi.checked_add(span).ok_or_else(too_large)?;
        }
    }
    let end = hi.checked_add(itemsize as i128).ok_or_else(too_large)?;
    if lo < 0 || end > block_len as i128 {
        return Err(NdError::OutOfBlock {
            what: format!(
                "array (shape {shape:?}, offset {offset}, strides {strides:?}, itemsize {itemsize})"
            ),
            start: lo,
            end,
            len: block_len as u64,
        });
    }
    Ok(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strided(shape: Vec<usize>, strides: Vec<i64>, offset: u64, len: usize) -> Result<Layout> {
        let mut m = NdArrayMeta::block(0, shape, ScalarType::UInt16.into(), ByteOrder::Little);
        m.strides = Some(strides);
        m.offset = offset;
        Layout::resolve(&m, 2, len, &ReadLimits::default())
    }

    #[test]
    fn resolve_checks_every_reachable_byte() {
        let l = strided(vec![2, 3], vec![-6, 2], 6, 12).unwrap();
        assert_eq!(l.lowest, 0);
        assert!(!l.is_c_contiguous());
        assert!(strided(vec![2, 3], vec![-6, 2], 4, 12).is_err());
        assert!(strided(vec![2, 3], vec![6, 2], 2, 12).is_err());
        assert!(strided(vec![2, 3], vec![6, 2], 0, 12)
            .unwrap()
            .is_c_contiguous());
        // Length-1 dimensions never use their stride, whatever its size.
        assert!(strided(vec![1, 3], vec![i64::MAX, 2], 0, 6)
            .unwrap()
            .is_c_contiguous());
        // Empty arrays need no bytes.
        assert_eq!(strided(vec![0, 3], vec![6, 2], 1000, 12).unwrap().count, 0);
    }

    #[test]
    fn for_each_gather_and_decode_agree() {
        let bytes: Vec<u8> = (0..12).collect();
        let l = strided(vec![2, 3], vec![-6, -2], 10, 12).unwrap();
        let g = l.gather(&bytes).unwrap();
        assert_eq!(g, vec![10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1]);
        let v = decode_vec::<u16>(&bytes, &l, ByteOrder::Big).unwrap();
        assert_eq!(v[0], u16::from_be_bytes([10, 11]));
        // The native memcpy path (unsafe), for numbers and for bools.
        let c = Layout::contiguous(vec![6], 2).unwrap();
        let n = decode_vec::<u16>(&bytes, &c, ByteOrder::NATIVE).unwrap();
        assert_eq!(n[5], u16::from_ne_bytes([10, 11]));
        let flags = [0u8, 1, 1, 0];
        let b = decode_vec::<bool>(
            &flags,
            &Layout::contiguous(vec![4], 1).unwrap(),
            ByteOrder::Big,
        )
        .unwrap();
        assert_eq!(b, vec![false, true, true, false]);
        let b = decode_vec::<bool>(
            &[0, 7],
            &Layout::contiguous(vec![2], 1).unwrap(),
            ByteOrder::Big,
        )
        .unwrap();
        assert_eq!(b, vec![false, true]);
    }

    #[test]
    fn views_borrow_with_negative_strides() {
        let words: Vec<u16> = (0..6).collect();
        let bytes: &[u8] = array_core::bytes_of(&words);
        let l = strided(vec![2, 3], vec![-6, -2], 10, 12).unwrap();
        let v = view::<u16>(bytes, &l, ByteOrder::NATIVE).unwrap();
        assert_eq!(
            v.iter().copied().collect::<Vec<_>>(),
            vec![5, 4, 3, 2, 1, 0]
        );
        assert!(view::<u16>(
            &bytes[1..],
            &strided(vec![2], vec![2], 0, 11).unwrap(),
            ByteOrder::NATIVE
        )
        .is_err());
    }
}
