//! Element types: the [`Element`] trait for typed reads and writes, and [`Pod`] for plain records.

use std::io::{Read, Write};

use half::{bf16, f16};
use num_complex::Complex;

use crate::error::{Error, Result, ViewError};
use crate::kind::{ByteOrder, ElementKind};

/// Plain old data (defined in `array-core`, the workspace's shared vocabulary): implement it
/// for your own `#[repr(C)]` record structs to read RawArray user-type (eltype 0) data with
/// [`crate::RawArray::records`] or view it in place with [`crate::MappedRawArray::records`].
pub use array_core::Pod;
pub(crate) use array_core::{bytes_of, bytes_of_mut, swap_bytes};

/// Reinterprets bytes as a slice of `T` in place, if aligned and of a whole number of elements.
pub(crate) fn cast_slice<T: Pod>(b: &[u8], offset: u64) -> Result<&[T], ViewError> {
    array_core::cast_slice(b).map_err(|e| match e {
        array_core::CastError::Misaligned { align } => ViewError::Misaligned { offset, align },
        array_core::CastError::PartialElement { .. } => ViewError::Encoded("a partial element"),
    })
}

/// A vector of `n` zero-valued `T`, allocated zeroed (lazily by the OS for large sizes).
pub(crate) fn zeroed_vec<T: Pod>(n: usize) -> Result<Vec<T>> {
    array_core::zeroed_vec(n).map_err(|e| match e {
        array_core::AllocError::Overflow { .. } => Error::SizeOverflow {
            what: "the element buffer",
        },
        array_core::AllocError::OutOfMemory { .. } => Error::Io(std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            e.to_string(),
        )),
    })
}

/// Reads exactly `buf.len()` bytes, mapping a short read to [`Error::TruncatedData`].
pub(crate) fn read_full<R: Read>(
    r: &mut R,
    buf: &mut [u8],
    start: u64,
    expected: u64,
    done: u64,
) -> Result<()> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => {
                return Err(Error::TruncatedData {
                    offset: start,
                    expected,
                    available: done + got as u64,
                })
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Growth step when the input length is unknown, so memory follows the bytes actually received.
const GROW_BYTES: usize = 16 << 20;

/// Reads `n` plain elements. When `known_available` is false the vector grows in steps as data
/// arrives, so a lying header cannot make us allocate more than the input holds (plus one step).
pub(crate) fn read_pod_vec<T: Pod, R: Read>(
    r: &mut R,
    n: usize,
    known_available: bool,
    start: u64,
) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>().max(1);
    let expected = (n as u64).saturating_mul(size as u64);
    if known_available || n.saturating_mul(size) <= GROW_BYTES {
        let mut v = zeroed_vec::<T>(n)?;
        read_full(r, bytes_of_mut(&mut v), start, expected, 0)?;
        return Ok(v);
    }
    let step = (GROW_BYTES / size).max(1);
    // Grow by doubling into freshly zero-allocated buffers (lazily zeroed by the OS, so no
    // memset), reading at most one step ahead of the data actually received.
    let mut v: Vec<T> = Vec::new();
    let mut filled = 0usize;
    while filled < n {
        let want = filled.saturating_add(step).min(n);
        if want > v.len() {
            let new_len = want.max(v.len().saturating_mul(2)).min(n);
            let mut bigger = zeroed_vec::<T>(new_len)?;
            bigger[..filled].copy_from_slice(&v[..filled]);
            v = bigger;
        }
        read_full(
            r,
            bytes_of_mut(&mut v[filled..want]),
            start,
            expected,
            (filled * size) as u64,
        )?;
        filled = want;
    }
    Ok(v)
}

mod private {
    pub trait Sealed {}
}

/// A scalar element type with a RawArray code: integers up to 128 bits, `f16`, `f32`, `f64`,
/// `bf16`, `Complex<f16 | f32 | f64>` and `bool`.
///
/// The methods are implementation details; use the functions of this crate instead.
pub trait Element: Copy + Send + Sync + 'static + private::Sealed {
    /// The element kind this type is written as.
    const KIND: ElementKind;

    /// Whether data of `kind` can be read as this type (`bool` also reads Python's eltype-0
    /// one-byte booleans).
    fn accepts(kind: ElementKind) -> bool {
        kind == Self::KIND
    }

    #[doc(hidden)]
    fn from_bytes(bytes: &[u8], order: ByteOrder, offset: u64) -> Result<Vec<Self>>;

    #[doc(hidden)]
    fn read_vec<R: Read>(
        r: &mut R,
        n: usize,
        order: ByteOrder,
        known_available: bool,
        offset: u64,
    ) -> Result<Vec<Self>>;

    #[doc(hidden)]
    fn write_slice<W: Write>(w: &mut W, s: &[Self], order: ByteOrder) -> std::io::Result<()>;

    #[doc(hidden)]
    fn view_slice(bytes: &[u8], order: ByteOrder, offset: u64) -> Result<&[Self], ViewError>;
}

fn swap_unit_of(kind: ElementKind) -> usize {
    kind.swap_unit().unwrap_or(1) as usize
}

fn pod_from_bytes<T: Pod + Element>(bytes: &[u8], order: ByteOrder) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>();
    let mut v = zeroed_vec::<T>(bytes.len() / size)?;
    let dst = bytes_of_mut(&mut v);
    dst.copy_from_slice(&bytes[..dst.len()]);
    if !order.is_native() {
        swap_bytes(dst, swap_unit_of(T::KIND));
    }
    Ok(v)
}

fn pod_read_vec<T: Pod + Element, R: Read>(
    r: &mut R,
    n: usize,
    order: ByteOrder,
    known: bool,
    offset: u64,
) -> Result<Vec<T>> {
    let mut v = read_pod_vec::<T, R>(r, n, known, offset)?;
    if !order.is_native() {
        swap_bytes(bytes_of_mut(&mut v), swap_unit_of(T::KIND));
    }
    Ok(v)
}

fn pod_write<T: Pod + Element, W: Write>(
    w: &mut W,
    s: &[T],
    order: ByteOrder,
) -> std::io::Result<()> {
    if order.is_native() {
        return w.write_all(bytes_of(s));
    }
    let mut buf = vec![0u8; (64 << 10).min(std::mem::size_of_val(s))];
    let per = (buf.len() / std::mem::size_of::<T>()).max(1);
    for chunk in s.chunks(per) {
        let b = bytes_of(chunk);
        let out = &mut buf[..b.len()];
        out.copy_from_slice(b);
        swap_bytes(out, swap_unit_of(T::KIND));
        w.write_all(out)?;
    }
    Ok(())
}

fn pod_view<T: Pod + Element>(
    bytes: &[u8],
    order: ByteOrder,
    offset: u64,
) -> Result<&[T], ViewError> {
    if !order.is_native() && std::mem::size_of::<T>() > 1 {
        return Err(ViewError::NonNativeEndian);
    }
    cast_slice(bytes, offset)
}

macro_rules! pod_element {
    ($($t:ty => $kind:ident),* $(,)?) => {$(
        impl private::Sealed for $t {}
        impl Element for $t {
            const KIND: ElementKind = ElementKind::$kind;
            fn from_bytes(bytes: &[u8], order: ByteOrder, _offset: u64) -> Result<Vec<Self>> {
                pod_from_bytes(bytes, order)
            }
            fn read_vec<R: Read>(r: &mut R, n: usize, order: ByteOrder, known: bool, offset: u64) -> Result<Vec<Self>> {
                pod_read_vec(r, n, order, known, offset)
            }
            fn write_slice<W: Write>(w: &mut W, s: &[Self], order: ByteOrder) -> std::io::Result<()> {
                pod_write(w, s, order)
            }
            fn view_slice(bytes: &[u8], order: ByteOrder, offset: u64) -> Result<&[Self], ViewError> {
                pod_view(bytes, order, offset)
            }
        }
    )*};
}

pod_element!(
    i8 => I8, i16 => I16, i32 => I32, i64 => I64, i128 => I128,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64, u128 => U128,
    f16 => F16, f32 => F32, f64 => F64, bf16 => BF16,
    Complex<f16> => C32, Complex<f32> => C64, Complex<f64> => C128,
);

fn check_bools(bytes: &[u8], offset: u64) -> Result<(), ViewError> {
    match bytes.iter().position(|&b| b > 1) {
        Some(i) => Err(ViewError::InvalidBool {
            offset: offset + i as u64,
            value: bytes[i],
        }),
        None => Ok(()),
    }
}

fn bool_error(e: ViewError) -> Error {
    match e {
        ViewError::InvalidBool { offset, value } => Error::CorruptData {
            encoding: "bool",
            offset,
            reason: format!("byte {value:#04x} is not 0 or 1"),
        },
        other => Error::View(other),
    }
}

impl private::Sealed for bool {}
impl Element for bool {
    const KIND: ElementKind = ElementKind::Bool;

    fn accepts(kind: ElementKind) -> bool {
        matches!(kind, ElementKind::Bool | ElementKind::User(1))
    }

    fn from_bytes(bytes: &[u8], _order: ByteOrder, offset: u64) -> Result<Vec<Self>> {
        check_bools(bytes, offset).map_err(bool_error)?;
        Ok(bytes.iter().map(|&b| b != 0).collect())
    }

    fn read_vec<R: Read>(
        r: &mut R,
        n: usize,
        order: ByteOrder,
        known: bool,
        offset: u64,
    ) -> Result<Vec<Self>> {
        let bytes = read_pod_vec::<u8, R>(r, n, known, offset)?;
        Self::from_bytes(&bytes, order, offset)
    }

    fn write_slice<W: Write>(w: &mut W, s: &[Self], _order: ByteOrder) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(s.len().min(64 << 10));
        for chunk in s.chunks(64 << 10) {
            buf.clear();
            buf.extend(chunk.iter().map(|&b| u8::from(b)));
            w.write_all(&buf)?;
        }
        Ok(())
    }

    fn view_slice(bytes: &[u8], _order: ByteOrder, offset: u64) -> Result<&[Self], ViewError> {
        check_bools(bytes, offset)?;
        // SAFETY: every byte is 0 or 1 (checked above), which are the valid `bool` values; `bool`
        // has size and alignment 1, and the lifetime is tied to `bytes`.
        Ok(unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<bool>(), bytes.len()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_round_trip() {
        let v: Vec<u32> = vec![0x01020304, 0xa0b0c0d0];
        let mut out = Vec::new();
        u32::write_slice(&mut out, &v, ByteOrder::Big).unwrap();
        assert_eq!(out, [1, 2, 3, 4, 0xa0, 0xb0, 0xc0, 0xd0]);
        assert_eq!(u32::from_bytes(&out, ByteOrder::Big, 0).unwrap(), v);
        let c = vec![Complex::new(1.0f32, -2.0)];
        let mut out = Vec::new();
        Complex::<f32>::write_slice(&mut out, &c, ByteOrder::Big).unwrap();
        assert_eq!(&out[..4], &1.0f32.to_be_bytes());
        assert_eq!(&out[4..], &(-2.0f32).to_be_bytes());
        assert_eq!(
            Complex::<f32>::from_bytes(&out, ByteOrder::Big, 0).unwrap(),
            c
        );
    }

    #[test]
    fn bool_validation() {
        assert_eq!(
            bool::from_bytes(&[0, 1, 1], ByteOrder::Little, 0).unwrap(),
            [false, true, true]
        );
        match bool::from_bytes(&[0, 2], ByteOrder::Little, 100) {
            Err(Error::CorruptData { offset: 101, .. }) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(
            bool::view_slice(&[1, 0], ByteOrder::Little, 0).unwrap(),
            [true, false]
        );
        assert_eq!(
            bool::view_slice(&[1, 7], ByteOrder::Little, 0),
            Err(ViewError::InvalidBool {
                offset: 1,
                value: 7
            })
        );
    }

    #[test]
    fn cast_checks_alignment() {
        let backing = vec![0u64; 4];
        let bytes = bytes_of(&backing);
        assert_eq!(cast_slice::<u64>(&bytes[8..24], 8).unwrap().len(), 2);
        assert_eq!(
            cast_slice::<u64>(&bytes[4..20], 4),
            Err(ViewError::Misaligned {
                offset: 4,
                align: 8
            })
        );
    }

    #[test]
    fn growing_read_on_truncated_stream() {
        // A header claiming far more data than the stream holds: an error, no big allocation.
        let data = [7u8; 100];
        match read_pod_vec::<u64, _>(&mut &data[..], 1 << 40, false, 64) {
            Err(Error::TruncatedData {
                offset: 64,
                available: 100,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        let v = read_pod_vec::<u16, _>(&mut &data[..], 50, false, 0).unwrap();
        assert_eq!(v, vec![0x0707; 50]);
        // Several growth steps (the step is 16 MiB) with short reads in between.
        let n = 5 << 20; // 40 MiB of u64
        let src: Vec<u64> = (0..n as u64).collect();
        let mut reader = std::io::BufReader::with_capacity(1000, bytes_of(&src));
        let v = read_pod_vec::<u64, _>(&mut reader, n, false, 0).unwrap();
        assert!(v == src);
        assert!(zeroed_vec::<u8>(0).unwrap().is_empty());
    }
}
