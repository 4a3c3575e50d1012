//! Numeric leaves: a typed buffer plus dtype and inner shape.

use crate::dtype::{ByteOrder, DType, Primitive};

/// Typed, native-order storage of a numpy leaf's scalars (all elements, inner dimensions
/// flattened in C order).
#[derive(Debug, Clone, PartialEq)]
pub enum Buffer {
    /// `bool`.
    Bool(Vec<bool>),
    /// `int8`.
    I8(Vec<i8>),
    /// `uint8` (also raw bytes).
    U8(Vec<u8>),
    /// `int16`.
    I16(Vec<i16>),
    /// `uint16`.
    U16(Vec<u16>),
    /// `int32`.
    I32(Vec<i32>),
    /// `uint32`.
    U32(Vec<u32>),
    /// `int64` (also `datetime64`/`timedelta64`).
    I64(Vec<i64>),
    /// `uint64`.
    U64(Vec<u64>),
    /// `float16`.
    F16(Vec<half::f16>),
    /// `float32`.
    F32(Vec<f32>),
    /// `float64`.
    F64(Vec<f64>),
    /// `complex64` as `[re, im]`.
    C64(Vec<[f32; 2]>),
    /// `complex128` as `[re, im]`.
    C128(Vec<[f64; 2]>),
}

macro_rules! decode {
    ($bytes:expr, $order:expr, $t:ty, $n:literal) => {{
        let it = $bytes.chunks_exact($n).map(|c| {
            let mut a = [0u8; $n];
            a.copy_from_slice(c);
            match $order {
                ByteOrder::Little => <$t>::from_le_bytes(a),
                ByteOrder::Big => <$t>::from_be_bytes(a),
            }
        });
        it.collect::<Vec<$t>>()
    }};
}

macro_rules! encode {
    ($v:expr, $n:literal) => {{
        let mut out = Vec::with_capacity($v.len() * $n);
        for x in $v.iter() {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out
    }};
}

use array_core::{advise_huge_pages, bytes_of as pod_bytes, bytes_of_mut as pod_bytes_mut};

/// Little-endian bytes of `i64`s, borrowed without copying on little-endian hosts.
pub(crate) fn i64_le_bytes(v: &[i64]) -> std::borrow::Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        std::borrow::Cow::Borrowed(pod_bytes(v))
    } else {
        std::borrow::Cow::Owned(v.iter().flat_map(|x| x.to_le_bytes()).collect())
    }
}

macro_rules! swap_ints {
    ($v:expr) => {
        for x in $v.iter_mut() {
            *x = x.swap_bytes();
        }
    };
}

impl Buffer {
    /// A zero-filled buffer of `n` scalars for the primitives that can be filled in place
    /// (everything but `bool`, whose bytes must be checked). `n` must already be bounded by
    /// real data (the caller checks it against a blob's size).
    pub(crate) fn zeroed(prim: &Primitive, n: usize) -> Option<Buffer> {
        let b = Self::zeroed_inner(prim, n)?;
        match &b {
            Buffer::I8(v) => advise_huge_pages(v),
            Buffer::U8(v) => advise_huge_pages(v),
            Buffer::I16(v) => advise_huge_pages(v),
            Buffer::U16(v) => advise_huge_pages(v),
            Buffer::I32(v) => advise_huge_pages(v),
            Buffer::U32(v) => advise_huge_pages(v),
            Buffer::I64(v) => advise_huge_pages(v),
            Buffer::U64(v) => advise_huge_pages(v),
            Buffer::F16(v) => advise_huge_pages(v),
            Buffer::F32(v) => advise_huge_pages(v),
            Buffer::F64(v) => advise_huge_pages(v),
            Buffer::C64(v) => advise_huge_pages(v),
            Buffer::C128(v) => advise_huge_pages(v),
            Buffer::Bool(v) => advise_huge_pages(v),
        }
        Some(b)
    }

    /// `None` for `bool`, or when the allocation fails (callers then take the path that reads
    /// the blob, whose fallible allocation reports the failure as an error, never an abort).
    fn zeroed_inner(prim: &Primitive, n: usize) -> Option<Buffer> {
        fn z<T: array_core::Zeroable>(n: usize) -> Option<Vec<T>> {
            array_core::zeroed_vec(n).ok()
        }
        Some(match prim {
            Primitive::Bool => return None,
            Primitive::I8 => Buffer::I8(z(n)?),
            Primitive::U8 => Buffer::U8(z(n)?),
            Primitive::I16 => Buffer::I16(z(n)?),
            Primitive::U16 => Buffer::U16(z(n)?),
            Primitive::I32 => Buffer::I32(z(n)?),
            Primitive::U32 => Buffer::U32(z(n)?),
            Primitive::I64 | Primitive::DateTime64(_) | Primitive::TimeDelta64(_) => {
                Buffer::I64(z(n)?)
            }
            Primitive::U64 => Buffer::U64(z(n)?),
            Primitive::F16 => Buffer::F16(z(n)?),
            Primitive::F32 => Buffer::F32(z(n)?),
            Primitive::F64 => Buffer::F64(z(n)?),
            Primitive::C64 => Buffer::C64(z(n)?),
            Primitive::C128 => Buffer::C128(z(n)?),
        })
    }

    /// The scalars' memory as bytes, for filling in place (`None` for `bool`).
    pub(crate) fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        Some(match self {
            Buffer::Bool(_) => return None,
            Buffer::I8(v) => pod_bytes_mut(v),
            Buffer::U8(v) => pod_bytes_mut(v),
            Buffer::I16(v) => pod_bytes_mut(v),
            Buffer::U16(v) => pod_bytes_mut(v),
            Buffer::I32(v) => pod_bytes_mut(v),
            Buffer::U32(v) => pod_bytes_mut(v),
            Buffer::I64(v) => pod_bytes_mut(v),
            Buffer::U64(v) => pod_bytes_mut(v),
            Buffer::F16(v) => pod_bytes_mut(v),
            Buffer::F32(v) => pod_bytes_mut(v),
            Buffer::F64(v) => pod_bytes_mut(v),
            Buffer::C64(v) => pod_bytes_mut(v),
            Buffer::C128(v) => pod_bytes_mut(v),
        })
    }

    /// Converts scalars that were filled with bytes in `order` to native order.
    pub(crate) fn fix_order(&mut self, order: ByteOrder) {
        let native = if cfg!(target_endian = "little") {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        };
        if order == native {
            return;
        }
        match self {
            Buffer::Bool(_) | Buffer::I8(_) | Buffer::U8(_) => {}
            Buffer::I16(v) => swap_ints!(v),
            Buffer::U16(v) => swap_ints!(v),
            Buffer::I32(v) => swap_ints!(v),
            Buffer::U32(v) => swap_ints!(v),
            Buffer::I64(v) => swap_ints!(v),
            Buffer::U64(v) => swap_ints!(v),
            Buffer::F16(v) => {
                for x in v.iter_mut() {
                    *x = half::f16::from_bits(x.to_bits().swap_bytes());
                }
            }
            Buffer::F32(v) => {
                for x in v.iter_mut() {
                    *x = f32::from_bits(x.to_bits().swap_bytes());
                }
            }
            Buffer::F64(v) => {
                for x in v.iter_mut() {
                    *x = f64::from_bits(x.to_bits().swap_bytes());
                }
            }
            Buffer::C64(v) => {
                for x in v.iter_mut().flat_map(|c| c.iter_mut()) {
                    *x = f32::from_bits(x.to_bits().swap_bytes());
                }
            }
            Buffer::C128(v) => {
                for x in v.iter_mut().flat_map(|c| c.iter_mut()) {
                    *x = f64::from_bits(x.to_bits().swap_bytes());
                }
            }
        }
    }

    /// Little-endian bytes of the scalars, borrowed without copying on little-endian hosts.
    pub fn as_le_bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        use std::borrow::Cow;
        if cfg!(target_endian = "big") {
            return Cow::Owned(self.to_le_bytes());
        }
        Cow::Borrowed(match self {
            Buffer::Bool(_) => return Cow::Owned(self.to_le_bytes()),
            Buffer::I8(v) => pod_bytes(v),
            Buffer::U8(v) => pod_bytes(v),
            Buffer::I16(v) => pod_bytes(v),
            Buffer::U16(v) => pod_bytes(v),
            Buffer::I32(v) => pod_bytes(v),
            Buffer::U32(v) => pod_bytes(v),
            Buffer::I64(v) => pod_bytes(v),
            Buffer::U64(v) => pod_bytes(v),
            Buffer::F16(v) => pod_bytes(v),
            Buffer::F32(v) => pod_bytes(v),
            Buffer::F64(v) => pod_bytes(v),
            Buffer::C64(v) => pod_bytes(v),
            Buffer::C128(v) => pod_bytes(v),
        })
    }

    /// Number of scalars.
    pub fn len(&self) -> usize {
        match self {
            Buffer::Bool(v) => v.len(),
            Buffer::I8(v) => v.len(),
            Buffer::U8(v) => v.len(),
            Buffer::I16(v) => v.len(),
            Buffer::U16(v) => v.len(),
            Buffer::I32(v) => v.len(),
            Buffer::U32(v) => v.len(),
            Buffer::I64(v) => v.len(),
            Buffer::U64(v) => v.len(),
            Buffer::F16(v) => v.len(),
            Buffer::F32(v) => v.len(),
            Buffer::F64(v) => v.len(),
            Buffer::C64(v) => v.len(),
            Buffer::C128(v) => v.len(),
        }
    }

    /// Whether there are no scalars.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Decodes `bytes` (whose length must be a multiple of the item size) in `order`.
    pub(crate) fn decode(prim: &Primitive, order: ByteOrder, bytes: &[u8]) -> Buffer {
        match prim {
            Primitive::Bool => Buffer::Bool(bytes.iter().map(|&b| b != 0).collect()),
            Primitive::I8 => Buffer::I8(bytes.iter().map(|&b| b as i8).collect()),
            Primitive::U8 => Buffer::U8(bytes.to_vec()),
            Primitive::I16 => Buffer::I16(decode!(bytes, order, i16, 2)),
            Primitive::U16 => Buffer::U16(decode!(bytes, order, u16, 2)),
            Primitive::I32 => Buffer::I32(decode!(bytes, order, i32, 4)),
            Primitive::U32 => Buffer::U32(decode!(bytes, order, u32, 4)),
            Primitive::I64 | Primitive::DateTime64(_) | Primitive::TimeDelta64(_) => {
                Buffer::I64(decode!(bytes, order, i64, 8))
            }
            Primitive::U64 => Buffer::U64(decode!(bytes, order, u64, 8)),
            Primitive::F16 => Buffer::F16(
                decode!(bytes, order, u16, 2)
                    .into_iter()
                    .map(half::f16::from_bits)
                    .collect(),
            ),
            Primitive::F32 => Buffer::F32(decode!(bytes, order, f32, 4)),
            Primitive::F64 => Buffer::F64(decode!(bytes, order, f64, 8)),
            Primitive::C64 => {
                let flat = decode!(bytes, order, f32, 4);
                Buffer::C64(flat.chunks_exact(2).map(|c| [c[0], c[1]]).collect())
            }
            Primitive::C128 => {
                let flat = decode!(bytes, order, f64, 8);
                Buffer::C128(flat.chunks_exact(2).map(|c| [c[0], c[1]]).collect())
            }
        }
    }

    /// Little-endian bytes of the scalars (what awkward0 stores on little-endian hosts), copied.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            Buffer::Bool(v) => v.iter().map(|&b| b as u8).collect(),
            Buffer::I8(v) => v.iter().map(|&b| b as u8).collect(),
            Buffer::U8(v) => v.clone(),
            Buffer::I16(v) => encode!(v, 2),
            Buffer::U16(v) => encode!(v, 2),
            Buffer::I32(v) => encode!(v, 4),
            Buffer::U32(v) => encode!(v, 4),
            Buffer::I64(v) => encode!(v, 8),
            Buffer::U64(v) => encode!(v, 8),
            Buffer::F16(v) => {
                let bits: Vec<u16> = v.iter().map(|x| x.to_bits()).collect();
                encode!(bits, 2)
            }
            Buffer::F32(v) => encode!(v, 4),
            Buffer::F64(v) => encode!(v, 8),
            Buffer::C64(v) => {
                let mut out = Vec::with_capacity(v.len() * 8);
                for [r, i] in v {
                    out.extend_from_slice(&r.to_le_bytes());
                    out.extend_from_slice(&i.to_le_bytes());
                }
                out
            }
            Buffer::C128(v) => {
                let mut out = Vec::with_capacity(v.len() * 16);
                for [r, i] in v {
                    out.extend_from_slice(&r.to_le_bytes());
                    out.extend_from_slice(&i.to_le_bytes());
                }
                out
            }
        }
    }

    /// The primitive this buffer variant naturally holds (`I64` for datetime too).
    pub fn natural_primitive(&self) -> Primitive {
        match self {
            Buffer::Bool(_) => Primitive::Bool,
            Buffer::I8(_) => Primitive::I8,
            Buffer::U8(_) => Primitive::U8,
            Buffer::I16(_) => Primitive::I16,
            Buffer::U16(_) => Primitive::U16,
            Buffer::I32(_) => Primitive::I32,
            Buffer::U32(_) => Primitive::U32,
            Buffer::I64(_) => Primitive::I64,
            Buffer::U64(_) => Primitive::U64,
            Buffer::F16(_) => Primitive::F16,
            Buffer::F32(_) => Primitive::F32,
            Buffer::F64(_) => Primitive::F64,
            Buffer::C64(_) => Primitive::C64,
            Buffer::C128(_) => Primitive::C128,
        }
    }

    /// Scalar `i` as an `i64` if this is an integer or bool buffer whose value fits.
    pub(crate) fn int_at(&self, i: usize) -> Option<i64> {
        Some(match self {
            Buffer::Bool(v) => *v.get(i)? as i64,
            Buffer::I8(v) => *v.get(i)? as i64,
            Buffer::U8(v) => *v.get(i)? as i64,
            Buffer::I16(v) => *v.get(i)? as i64,
            Buffer::U16(v) => *v.get(i)? as i64,
            Buffer::I32(v) => *v.get(i)? as i64,
            Buffer::U32(v) => *v.get(i)? as i64,
            Buffer::I64(v) => *v.get(i)?,
            Buffer::U64(v) => i64::try_from(*v.get(i)?).ok()?,
            _ => return None,
        })
    }
}

/// A numpy array: the awkward0 leaf (`numpy.frombuffer(blob, dtype, count)`).
///
/// `data` holds `len × Π inner_shape` scalars in native order.
///
/// ```
/// use asdf_awkward::{NumpyArray, Buffer};
/// let a = NumpyArray::from_buffer(Buffer::F64(vec![1.0, 2.0, 3.0, 4.0]), vec![2]).unwrap();
/// assert_eq!(a.len(), 2);
/// assert_eq!(a.dtype().inner_shape, vec![2]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct NumpyArray {
    dtype: DType,
    data: Buffer,
    len: usize,
}

impl NumpyArray {
    /// A leaf from a typed buffer and inner shape (the primitive follows the buffer variant).
    /// Fails if the buffer length is not a multiple of the inner size.
    pub fn from_buffer(data: Buffer, inner_shape: Vec<usize>) -> Option<NumpyArray> {
        let prim = data.natural_primitive();
        Self::with_primitive(prim, data, inner_shape)
    }

    /// Like [`from_buffer`](Self::from_buffer) with an explicit primitive (use it for
    /// `datetime64`/`timedelta64` over an `I64` buffer). `None` if they do not agree.
    pub fn with_primitive(
        primitive: Primitive,
        data: Buffer,
        inner_shape: Vec<usize>,
    ) -> Option<NumpyArray> {
        let natural = data.natural_primitive();
        let ok = natural == primitive
            || (natural == Primitive::I64
                && matches!(
                    primitive,
                    Primitive::DateTime64(_) | Primitive::TimeDelta64(_)
                ));
        if !ok {
            return None;
        }
        let dtype = DType {
            primitive,
            order: ByteOrder::Little,
            inner_shape,
        };
        let inner = dtype.inner_size()?;
        let len = if inner == 0 {
            0
        } else {
            if data.len() % inner != 0 {
                return None;
            }
            data.len() / inner
        };
        Some(NumpyArray { dtype, data, len })
    }

    /// A 1-D leaf.
    pub fn from_vec(data: Buffer) -> NumpyArray {
        let len = data.len();
        NumpyArray {
            dtype: DType::scalar(data.natural_primitive()),
            data,
            len,
        }
    }

    /// Decodes `count` elements of `dtype` from the front of `bytes` (already checked by the
    /// caller to hold at least `count × element_bytes`). Zero-size inner shapes give `count`
    /// empty elements.
    pub(crate) fn decode(dtype: &DType, count: usize, bytes: &[u8]) -> NumpyArray {
        let data = Buffer::decode(&dtype.primitive, dtype.order, bytes);
        NumpyArray {
            dtype: DType {
                order: ByteOrder::Little,
                ..dtype.clone()
            },
            data,
            len: count,
        }
    }

    /// A leaf from an already-filled native-order buffer (the caller guarantees
    /// `data.len() == len × inner size`).
    pub(crate) fn from_parts(dtype: &DType, data: Buffer, len: usize) -> NumpyArray {
        NumpyArray {
            dtype: DType {
                order: ByteOrder::Little,
                ..dtype.clone()
            },
            data,
            len,
        }
    }

    /// The dtype (always native order after reading).
    pub fn dtype(&self) -> &DType {
        &self.dtype
    }

    /// The scalars.
    pub fn data(&self) -> &Buffer {
        &self.data
    }

    /// The scalars, by value.
    pub fn into_data(self) -> Buffer {
        self.data
    }

    /// Number of elements (outer dimension).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Scalars per element.
    pub fn inner_size(&self) -> usize {
        self.dtype.inner_size().unwrap_or(0)
    }

    /// The 1-D integer leaf as `i64`s, borrowed when it already is `int64`.
    pub(crate) fn as_i64s(&self) -> Option<std::borrow::Cow<'_, [i64]>> {
        match &self.data {
            Buffer::I64(v)
                if self.dtype.inner_shape.is_empty()
                    && matches!(self.dtype.primitive, Primitive::I64) =>
            {
                Some(std::borrow::Cow::Borrowed(v.as_slice()))
            }
            _ => self.to_i64_vec().map(std::borrow::Cow::Owned),
        }
    }

    /// The whole 1-D integer leaf as `i64`s; `None` for non-integer or multi-dimensional data.
    pub fn to_i64_vec(&self) -> Option<Vec<i64>> {
        if !self.dtype.inner_shape.is_empty() {
            return None;
        }
        match &self.data {
            Buffer::I64(v) if matches!(self.dtype.primitive, Primitive::I64) => Some(v.clone()),
            Buffer::F16(_) | Buffer::F32(_) | Buffer::F64(_) | Buffer::C64(_) | Buffer::C128(_) => {
                None
            }
            _ if matches!(
                self.dtype.primitive,
                Primitive::DateTime64(_) | Primitive::TimeDelta64(_)
            ) =>
            {
                None
            }
            d => (0..d.len()).map(|i| d.int_at(i)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_primitives() -> Vec<Primitive> {
        vec![
            Primitive::I8,
            Primitive::U8,
            Primitive::I16,
            Primitive::U16,
            Primitive::I32,
            Primitive::U32,
            Primitive::I64,
            Primitive::U64,
            Primitive::F16,
            Primitive::F32,
            Primitive::F64,
            Primitive::C64,
            Primitive::C128,
            Primitive::DateTime64("s".into()),
        ]
    }

    /// The in-place path (zeroed + bytes_mut + fix_order) agrees with the copying decoder in
    /// both byte orders, and as_le_bytes gives back the little-endian bytes.
    #[test]
    fn in_place_fill_matches_decode() {
        for prim in all_primitives() {
            let n = 5;
            let bytes: Vec<u8> = (0..n * prim.itemsize())
                .map(|i| (i * 37 + 11) as u8)
                .collect();
            for order in [ByteOrder::Little, ByteOrder::Big] {
                let expect = Buffer::decode(&prim, order, &bytes);
                let mut buf = Buffer::zeroed(&prim, n).unwrap();
                buf.bytes_mut().unwrap().copy_from_slice(&bytes);
                buf.fix_order(order);
                assert_eq!(
                    buf.to_le_bytes(),
                    expect.to_le_bytes(),
                    "{prim:?} {order:?}"
                );
                assert_eq!(buf.as_le_bytes().as_ref(), expect.to_le_bytes().as_slice());
            }
            let le = Buffer::decode(&prim, ByteOrder::Little, &bytes);
            assert_eq!(le.as_le_bytes().as_ref(), bytes.as_slice(), "{prim:?}");
        }
        assert!(Buffer::zeroed(&Primitive::Bool, 3).is_none());
        let mut b = Buffer::Bool(vec![true]);
        assert!(b.bytes_mut().is_none());
        assert_eq!(b.as_le_bytes().as_ref(), &[1]);
        assert_eq!(
            i64_le_bytes(&[1, -1]).as_ref(),
            &[1, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255]
        );
    }

    #[test]
    fn huge_page_advice_keeps_contents() {
        let mut b = Buffer::zeroed(&Primitive::F64, 3 << 20).unwrap();
        if let Buffer::F64(v) = &mut b {
            assert!(v.iter().all(|&x| x == 0.0));
            for (i, x) in v.iter_mut().enumerate() {
                *x = i as f64;
            }
            advise_huge_pages(v);
            assert_eq!(v[(3 << 20) - 1], ((3 << 20) - 1) as f64);
        }
        let offs = crate::layout::ListIndex::from_counts(&vec![1; 1 << 20]).unwrap();
        assert_eq!(offs.range((1 << 20) - 1), Some(((1 << 20) - 1, 1 << 20)));
        advise_huge_pages::<u8>(&Vec::new());
    }

    #[test]
    fn shapes_and_integer_views() {
        let a = NumpyArray::from_buffer(Buffer::I16(vec![1, 2, 3, 4, 5, 6]), vec![3]).unwrap();
        assert_eq!((a.len(), a.inner_size()), (2, 3));
        assert!(a.to_i64_vec().is_none());
        assert!(NumpyArray::from_buffer(Buffer::I16(vec![1, 2]), vec![3]).is_none());
        let u = NumpyArray::from_vec(Buffer::U64(vec![1, u64::MAX]));
        assert!(u.to_i64_vec().is_none());
        let f = NumpyArray::from_vec(Buffer::F32(vec![1.0]));
        assert!(f.as_i64s().is_none());
        let i = NumpyArray::from_vec(Buffer::U8(vec![7, 8]));
        assert_eq!(i.as_i64s().unwrap().as_ref(), &[7, 8]);
        assert!(NumpyArray::with_primitive(Primitive::F64, Buffer::I64(vec![1]), vec![]).is_none());
    }
}
