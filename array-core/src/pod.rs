//! Plain old data and the checked casts between values and their bytes.

use half::{bf16, f16};
use num_complex::Complex;

/// Types whose all-zero bytes are a valid value (numbers, `false`).
///
/// # Safety
///
/// An all-zero bit pattern of the implementing type must be a valid value.
pub unsafe trait Zeroable: Copy + Send + Sync + 'static {}

/// Plain old data: types whose values are exactly their bytes.
///
/// Implemented for every numeric type, `half`'s `f16`/`bf16`, `Complex` of those and arrays of
/// `Pod` types. Implement it for your own `#[repr(C)]` record structs to view record data in
/// place.
///
/// # Safety
///
/// The implementing type must be `#[repr(C)]` or `#[repr(transparent)]` (or a primitive) and:
/// * have no padding bytes (its size equals the sum of its fields' sizes),
/// * accept every bit pattern as a valid value (no `bool`, `char`, enums, references or pointers).
///
/// ```
/// use array_core::Pod;
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// struct Sample {
///     id: u32,
///     gain: f32,
///     t: f64,
/// }
/// // SAFETY: repr(C), 4 + 4 + 8 bytes with no padding, every bit pattern valid.
/// unsafe impl Pod for Sample {}
/// let s = [Sample { id: 1, gain: 2.0, t: 3.0 }];
/// assert_eq!(array_core::bytes_of(&s).len(), 16);
/// ```
pub unsafe trait Pod: Copy + Send + Sync + 'static {}

// SAFETY: every bit pattern of a `Pod` type is valid, the all-zero one included.
unsafe impl<T: Pod> Zeroable for T {}
// SAFETY: the all-zero byte is `false`.
unsafe impl Zeroable for bool {}

macro_rules! pod {
    ($($t:ty),*) => {$(
        // SAFETY: primitive numeric types and `repr(C)` pairs of them (`Complex`) have no
        // padding and accept every bit pattern.
        unsafe impl Pod for $t {}
    )*};
}
pod!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, f32, f64, f16, bf16);
pod!(Complex<f16>, Complex<f32>, Complex<f64>);
// SAFETY: an array of `Pod` has no padding between elements and every bit pattern is valid.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// Why bytes could not be viewed as values in place.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CastError {
    /// The bytes do not start at a multiple of the type's alignment.
    #[error("data is not aligned to {align} bytes")]
    Misaligned {
        /// The alignment the type needs.
        align: usize,
    },
    /// The length is not a whole number of values.
    #[error("{len} bytes are not a whole number of {size}-byte values")]
    PartialElement {
        /// Length of the bytes.
        len: usize,
        /// Size of one value.
        size: usize,
    },
}

/// The bytes of a slice of plain values.
///
/// ```
/// assert_eq!(array_core::bytes_of(&[1u16.to_le()]), &[1, 0]);
/// ```
pub fn bytes_of<T: Pod>(s: &[T]) -> &[u8] {
    // SAFETY: `T: Pod` has no padding, so every byte of the slice is initialised; the pointer is
    // valid for `size_of_val(s)` bytes and `u8` has alignment 1. The lifetime is tied to `s`.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// The bytes of a mutable slice of plain values; any bytes written leave valid values.
///
/// ```
/// let mut v = [0u32; 2];
/// array_core::bytes_of_mut(&mut v)[0] = 1;
/// assert_eq!(v[0], u32::from_ne_bytes([1, 0, 0, 0]));
/// ```
pub fn bytes_of_mut<T: Pod>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `bytes_of`; in addition every bit pattern is a valid `T`, so any bytes the
    // caller writes leave valid values behind. The exclusive borrow is carried over.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// Views bytes as a slice of `T` in place, if aligned and a whole number of values.
///
/// ```
/// let v = [1.5f64, 2.5];
/// let b = array_core::bytes_of(&v);
/// assert_eq!(array_core::cast_slice::<f64>(b).unwrap(), &v);
/// assert!(array_core::cast_slice::<f64>(&b[1..9]).is_err());
/// ```
pub fn cast_slice<T: Pod>(b: &[u8]) -> Result<&[T], CastError> {
    let size = std::mem::size_of::<T>();
    let align = std::mem::align_of::<T>();
    if (b.as_ptr() as usize) % align != 0 {
        return Err(CastError::Misaligned { align });
    }
    if size == 0 || b.len() % size != 0 {
        return Err(CastError::PartialElement { len: b.len(), size });
    }
    // SAFETY: the pointer is aligned for `T` (checked above), the length is a whole number of
    // `T`s, `T: Pod` accepts every bit pattern, and the lifetime is tied to `b`.
    Ok(unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<T>(), b.len() / size) })
}

/// Reverses the bytes of every `unit`-byte scalar in `buf` in place (`unit` 1 or any other
/// size than 2, 4, 8, 16 leaves `buf` unchanged; a trailing partial unit is left as is).
///
/// ```
/// let mut b = [1, 2, 3, 4];
/// array_core::swap_bytes(&mut b, 2);
/// assert_eq!(b, [2, 1, 4, 3]);
/// ```
pub fn swap_bytes(buf: &mut [u8], unit: usize) {
    macro_rules! swap_as {
        ($t:ty, $n:expr) => {
            for c in buf.chunks_exact_mut($n) {
                let mut a = [0u8; $n];
                a.copy_from_slice(c);
                c.copy_from_slice(&<$t>::from_ne_bytes(a).swap_bytes().to_ne_bytes());
            }
        };
    }
    match unit {
        2 => swap_as!(u16, 2),
        4 => swap_as!(u32, 4),
        8 => swap_as!(u64, 8),
        16 => swap_as!(u128, 16),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_check_alignment_and_length() {
        let v = [1u64, 2, 3];
        let b = bytes_of(&v);
        assert_eq!(cast_slice::<u64>(b).unwrap(), &v);
        assert_eq!(
            cast_slice::<u64>(&b[..7]),
            Err(CastError::PartialElement { len: 7, size: 8 })
        );
        assert_eq!(
            cast_slice::<u64>(&b[1..9]),
            Err(CastError::Misaligned { align: 8 })
        );
        assert_eq!(cast_slice::<[u8; 3]>(&b[..6]).unwrap().len(), 2);
    }

    #[test]
    fn swaps_every_unit() {
        let mut b: Vec<u8> = (0..32).collect();
        swap_bytes(&mut b, 16);
        assert_eq!(b[0], 15);
        swap_bytes(&mut b, 16);
        swap_bytes(&mut b, 3);
        assert_eq!(b, (0..32).collect::<Vec<u8>>());
    }
}
