//! [`AnyArray`]: an array of whatever datatype the file stores.

use std::any::Any;

use asdf_yaml::Node;
use half::f16;
use ndarray::{ArrayD, IxDyn};
use num_complex::Complex;

use crate::datatype::{ByteOrder, Datatype};
use crate::element::Element;
use crate::error::{NdError, Result};
use crate::layout::{decode_vec, try_vec_with_capacity, Layout};
use crate::record::RecordArray;
use crate::values::{ascii_string, nest, ucs4_string, with_scalar};

/// An array of any ASDF datatype, for callers that do not know the type in advance.
///
/// ```
/// use asdf_ndarray::{AnyArray, NdArrayMeta, NoBlocks};
/// let node = asdf_yaml::parse_str("{data: [[1, 2], [3, null]], datatype: int16, shape: [2, 2]}").unwrap();
/// let meta = NdArrayMeta::from_node(&node).unwrap();
/// let (arr, mask) = meta.read_masked(&NoBlocks).unwrap();
/// assert!(matches!(arr, AnyArray::Int16(_)));
/// assert_eq!(arr.shape(), &[2, 2]);
/// assert_eq!(mask.unwrap()[[1, 1]], true);
/// let a = arr.into_array::<i16>().unwrap();
/// assert_eq!(a[[1, 0]], 3);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum AnyArray {
    Int8(ArrayD<i8>),
    Int16(ArrayD<i16>),
    Int32(ArrayD<i32>),
    Int64(ArrayD<i64>),
    Int128(ArrayD<i128>),
    UInt8(ArrayD<u8>),
    UInt16(ArrayD<u16>),
    UInt32(ArrayD<u32>),
    UInt64(ArrayD<u64>),
    UInt128(ArrayD<u128>),
    Float16(ArrayD<f16>),
    Float32(ArrayD<f32>),
    Float64(ArrayD<f64>),
    Complex32(ArrayD<Complex<f16>>),
    Complex64(ArrayD<Complex<f32>>),
    Complex128(ArrayD<Complex<f64>>),
    Bool(ArrayD<bool>),
    /// `[ascii, N]` or `[ucs4, N]` strings (NUL padding removed).
    String {
        /// The values.
        data: ArrayD<String>,
        /// The stored datatype (`Ascii(N)` or `Ucs4(N)`).
        datatype: Datatype,
    },
    /// Records.
    Record(RecordArray),
}

macro_rules! each_numeric {
    ($m:ident) => {
        $m!(Int8, i8);
        $m!(Int16, i16);
        $m!(Int32, i32);
        $m!(Int64, i64);
        $m!(Int128, i128);
        $m!(UInt8, u8);
        $m!(UInt16, u16);
        $m!(UInt32, u32);
        $m!(UInt64, u64);
        $m!(UInt128, u128);
        $m!(Float16, f16);
        $m!(Float32, f32);
        $m!(Float64, f64);
        $m!(Complex32, Complex<f16>);
        $m!(Complex64, Complex<f32>);
        $m!(Complex128, Complex<f64>);
        $m!(Bool, bool);
    };
}

macro_rules! from_impl {
    ($v:ident, $t:ty) => {
        impl From<ArrayD<$t>> for AnyArray {
            fn from(a: ArrayD<$t>) -> AnyArray {
                AnyArray::$v(a)
            }
        }
    };
}
each_numeric!(from_impl);

/// Applies `$f` (a generic function over `Element` arrays) to a numeric variant.
macro_rules! map_numeric {
    ($self:expr, $a:ident => $body:expr, $other:pat => $else:expr) => {
        match $self {
            AnyArray::Int8($a) => $body,
            AnyArray::Int16($a) => $body,
            AnyArray::Int32($a) => $body,
            AnyArray::Int64($a) => $body,
            AnyArray::Int128($a) => $body,
            AnyArray::UInt8($a) => $body,
            AnyArray::UInt16($a) => $body,
            AnyArray::UInt32($a) => $body,
            AnyArray::UInt64($a) => $body,
            AnyArray::UInt128($a) => $body,
            AnyArray::Float16($a) => $body,
            AnyArray::Float32($a) => $body,
            AnyArray::Float64($a) => $body,
            AnyArray::Complex32($a) => $body,
            AnyArray::Complex64($a) => $body,
            AnyArray::Complex128($a) => $body,
            AnyArray::Bool($a) => $body,
            $other => $else,
        }
    };
}

fn elem_datatype<T: Element>(_: &ArrayD<T>) -> Datatype {
    Datatype::Scalar(T::SCALAR)
}

fn sentinel_mask<T: Element>(a: &ArrayD<T>, sentinel: &Node) -> Result<ArrayD<bool>> {
    let s = T::from_node(sentinel).ok_or_else(|| {
        NdError::Datatype(format!(
            "mask sentinel {sentinel:?} is not a {}",
            T::SCALAR.name()
        ))
    })?;
    #[allow(clippy::eq_op)]
    Ok(a.mapv(|x| x == s || (x != x && s != s)))
}

/// The inline `data` of `a`: packed ([`asdf_yaml::Value::Packed`], the numbers in their own type
/// rather than a node each) when it has at least one dimension and one element.
fn to_nodes<T: Element>(a: &ArrayD<T>) -> Result<Node> {
    if a.ndim() == 0 || a.is_empty() {
        return nest(a.iter().map(|x| x.to_node()).collect(), a.shape());
    }
    Ok(Node::packed(PackedElements {
        shape: a.shape().to_vec(),
        items: a.iter().copied().collect(),
    }))
}

/// [`to_nodes`], taking the numbers of a standard-layout array without a copy.
fn into_packed<T: Element>(a: ArrayD<T>) -> Result<Node> {
    if a.ndim() == 0 || a.is_empty() || !a.is_standard_layout() {
        return to_nodes(&a);
    }
    let (shape, len) = (a.shape().to_vec(), a.len());
    let (items, offset) = a.into_raw_vec_and_offset();
    let start = offset.unwrap_or(0);
    let items = if items.len() == len && start == 0 {
        items
    } else {
        start
            .checked_add(len)
            .and_then(|end| items.get(start..end))
            .ok_or_else(|| NdError::Usage("an array's elements lie outside its buffer".into()))?
            .to_vec()
    };
    Ok(Node::packed(PackedElements { shape, items }))
}

/// An inline array's numbers in C order: the tree holds one value, and each number becomes a
/// node ([`Element::to_node`]) only while it is being written or compared.
struct PackedElements<T> {
    shape: Vec<usize>,
    items: Vec<T>,
}

impl<T: Element> asdf_yaml::PackedItems for PackedElements<T> {
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn item(&self, index: usize) -> Node {
        self.items
            .get(index)
            .map_or_else(Node::null, |x| x.to_node())
    }
}

impl AnyArray {
    /// The elements in C order as bytes of `order` (complex numbers real part first): a
    /// canonical form for comparing or exporting numeric arrays whatever their layout. Strings
    /// and records have no single byte form and give an error.
    ///
    /// ```
    /// use asdf_ndarray::{AnyArray, ByteOrder};
    /// let a = AnyArray::from(ndarray::arr2(&[[1u16, 2], [3, 4]]).reversed_axes().into_dyn());
    /// assert_eq!(a.to_bytes(ByteOrder::Big).unwrap(), [0, 1, 0, 3, 0, 2, 0, 4]);
    /// ```
    pub fn to_bytes(&self, order: ByteOrder) -> Result<Vec<u8>> {
        fn bytes<T: Element>(a: &ArrayD<T>, order: ByteOrder) -> Vec<u8> {
            let size = T::SCALAR.size();
            let mut out = vec![0u8; a.len() * size];
            for (x, dst) in a.iter().zip(out.chunks_exact_mut(size)) {
                x.write_bytes(order, dst);
            }
            out
        }
        map_numeric!(self, a => Ok(bytes(a, order)), _ => Err(NdError::Usage(format!(
            "{} arrays have no canonical byte form",
            self.datatype()
        ))))
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        match self {
            AnyArray::String { data, .. } => data.shape(),
            AnyArray::Record(r) => r.shape(),
            other => map_numeric!(other, a => a.shape(), _ => &[]),
        }
    }

    /// The datatype.
    pub fn datatype(&self) -> Datatype {
        match self {
            AnyArray::String { datatype, .. } => datatype.clone(),
            AnyArray::Record(r) => r.datatype(),
            other => map_numeric!(other, a => elem_datatype(a), _ => Datatype::Record(Vec::new())),
        }
    }

    /// The array as `ArrayD<T>`, or an error naming the stored datatype.
    pub fn into_array<T: Element>(self) -> Result<ArrayD<T>> {
        let stored = self.datatype().to_string();
        let boxed: Box<dyn Any> = map_numeric!(self, a => Box::new(a), _ => Box::new(()));
        boxed
            .downcast::<ArrayD<T>>()
            .map(|b| *b)
            .map_err(|_| NdError::TypeMismatch {
                stored,
                requested: T::SCALAR.name().to_string(),
            })
    }

    /// The string values, for `ascii`/`ucs4` arrays.
    pub fn into_strings(self) -> Result<ArrayD<String>> {
        match self {
            AnyArray::String { data, .. } => Ok(data),
            other => Err(NdError::TypeMismatch {
                stored: other.datatype().to_string(),
                requested: "strings".into(),
            }),
        }
    }

    /// The records, for record arrays.
    pub fn into_records(self) -> Result<RecordArray> {
        match self {
            AnyArray::Record(r) => Ok(r),
            other => Err(NdError::TypeMismatch {
                stored: other.datatype().to_string(),
                requested: "records".into(),
            }),
        }
    }

    /// Which elements equal a mask sentinel (NaN sentinels match NaNs).
    pub fn sentinel_mask(&self, sentinel: &Node) -> Result<ArrayD<bool>> {
        map_numeric!(self, a => sentinel_mask(a, sentinel), other => match other {
            AnyArray::String { data, .. } => {
                let s = sentinel.as_str().ok_or_else(|| NdError::Datatype("a string array needs a string mask sentinel".into()))?;
                Ok(data.map(|x| x == s))
            }
            _ => Err(NdError::Datatype("records cannot have a sentinel mask".into())),
        })
    }

    /// [`to_data_node`](Self::to_data_node), moving numbers into the packed data instead of
    /// copying them.
    pub fn into_data_node(self) -> Result<Node> {
        map_numeric!(self, a => into_packed(a), other => other.to_data_node())
    }

    /// The values as nested lists (inline `data`), C order.
    pub fn to_data_node(&self) -> Result<Node> {
        map_numeric!(self, a => to_nodes(a), other => match other {
            AnyArray::String { data, .. } => nest(data.iter().map(|s| Node::from(s.as_str())).collect(), data.shape()),
            AnyArray::Record(r) => r.to_data_node(),
            _ => Ok(Node::null()),
        })
    }

    /// Whether two arrays are equal by value, NaN equal to NaN (the reference-file compliance
    /// rule), shapes and datatypes (apart from per-field byte orders) included.
    pub fn equals_nan_aware(&self, other: &AnyArray) -> bool {
        self.equals_nan_aware_where(other, None)
    }

    /// [`equals_nan_aware`](Self::equals_nan_aware) comparing only the elements where `mask`
    /// (of the arrays' shape) is false. Numbers are compared in place, element by element
    /// (floats by bits, any NaN equal to any NaN), without building a value per element;
    /// strings and records through their values.
    ///
    /// ```
    /// use asdf_ndarray::AnyArray;
    /// let a = AnyArray::from(ndarray::arr1(&[1.0f64, f64::NAN, 3.0]).into_dyn());
    /// let b = AnyArray::from(ndarray::arr1(&[1.0f64, f64::NAN, 4.0]).into_dyn());
    /// assert!(!a.equals_nan_aware(&b));
    /// let mask = ndarray::arr1(&[false, false, true]).into_dyn();
    /// assert!(a.equals_nan_aware_where(&b, Some(&mask)));
    /// ```
    pub fn equals_nan_aware_where(&self, other: &AnyArray, mask: Option<&ArrayD<bool>>) -> bool {
        if self.shape() != other.shape()
            || self.datatype().without_byteorders() != other.datatype().without_byteorders()
            || mask.is_some_and(|m| m.shape() != self.shape())
        {
            return false;
        }
        fn all<T>(
            a: &ArrayD<T>,
            b: &ArrayD<T>,
            m: Option<&ArrayD<bool>>,
            eq: impl Fn(&T, &T) -> bool,
        ) -> bool {
            match m {
                None => a.iter().zip(b.iter()).all(|(x, y)| eq(x, y)),
                Some(m) => a
                    .iter()
                    .zip(b.iter())
                    .zip(m.iter())
                    .all(|((x, y), &skip)| skip || eq(x, y)),
            }
        }
        fn float(a: f64, b: f64) -> bool {
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
        }
        use AnyArray as A;
        match (self, other) {
            (A::Int8(a), A::Int8(b)) => all(a, b, mask, |x, y| x == y),
            (A::Int16(a), A::Int16(b)) => all(a, b, mask, |x, y| x == y),
            (A::Int32(a), A::Int32(b)) => all(a, b, mask, |x, y| x == y),
            (A::Int64(a), A::Int64(b)) => all(a, b, mask, |x, y| x == y),
            (A::Int128(a), A::Int128(b)) => all(a, b, mask, |x, y| x == y),
            (A::UInt8(a), A::UInt8(b)) => all(a, b, mask, |x, y| x == y),
            (A::UInt16(a), A::UInt16(b)) => all(a, b, mask, |x, y| x == y),
            (A::UInt32(a), A::UInt32(b)) => all(a, b, mask, |x, y| x == y),
            (A::UInt64(a), A::UInt64(b)) => all(a, b, mask, |x, y| x == y),
            (A::UInt128(a), A::UInt128(b)) => all(a, b, mask, |x, y| x == y),
            (A::Bool(a), A::Bool(b)) => all(a, b, mask, |x, y| x == y),
            (A::Float16(a), A::Float16(b)) => all(a, b, mask, |x, y| float(x.to_f64(), y.to_f64())),
            (A::Float32(a), A::Float32(b)) => {
                all(a, b, mask, |x, y| float(f64::from(*x), f64::from(*y)))
            }
            (A::Float64(a), A::Float64(b)) => all(a, b, mask, |x, y| float(*x, *y)),
            (A::Complex32(a), A::Complex32(b)) => all(a, b, mask, |x, y| {
                float(x.re.to_f64(), y.re.to_f64()) && float(x.im.to_f64(), y.im.to_f64())
            }),
            (A::Complex64(a), A::Complex64(b)) => all(a, b, mask, |x, y| {
                float(f64::from(x.re), f64::from(y.re)) && float(f64::from(x.im), f64::from(y.im))
            }),
            (A::Complex128(a), A::Complex128(b)) => {
                all(a, b, mask, |x, y| float(x.re, y.re) && float(x.im, y.im))
            }
            _ => self.values_equal(other, mask),
        }
    }

    /// Strings and records: compared through their values (one node per element).
    fn values_equal(&self, other: &AnyArray, mask: Option<&ArrayD<bool>>) -> bool {
        let (Ok(a), Ok(b)) = (self.to_data_node(), other.to_data_node()) else {
            return false;
        };
        let Some(mask) = mask else {
            return a == b;
        };
        fn leaves<'n>(node: &'n Node, ndim: usize, out: &mut Vec<&'n Node>) {
            match (ndim, node.as_seq()) {
                (0, _) | (_, None) => out.push(node),
                (_, Some(items)) => items.iter().for_each(|n| leaves(n, ndim - 1, out)),
            }
        }
        let (mut la, mut lb) = (Vec::new(), Vec::new());
        leaves(&a, self.shape().len(), &mut la);
        leaves(&b, other.shape().len(), &mut lb);
        la.len() == lb.len()
            && la.len() == mask.len()
            && la
                .iter()
                .zip(&lb)
                .zip(mask.iter())
                .all(|((x, y), &skip)| skip || x == y)
    }
}

/// Decodes the elements of `layout` in `bytes` into an [`AnyArray`].
pub(crate) fn decode_any(
    bytes: &[u8],
    layout: &Layout,
    dt: &Datatype,
    order: ByteOrder,
) -> Result<AnyArray> {
    let shape = IxDyn(&layout.shape);
    let shape_err = |e: ndarray::ShapeError| NdError::Usage(format!("internal shape error: {e}"));
    match dt {
        Datatype::Scalar(s) => with_scalar!(*s, T => {
            let v = decode_vec::<T>(bytes, layout, order)?;
            Ok(AnyArray::from(ArrayD::from_shape_vec(shape, v).map_err(shape_err)?))
        }),
        Datatype::Ascii(_) | Datatype::Ucs4(_) => {
            let mut out: Vec<String> = try_vec_with_capacity(layout.count)?;
            let mut err = None;
            let mut i = 0;
            layout.for_each(bytes, |b| {
                if err.is_none() {
                    let r = match dt {
                        Datatype::Ascii(_) => ascii_string(b, i),
                        _ => ucs4_string(b, order, i),
                    };
                    match r {
                        Ok(s) => out.push(s),
                        Err(e) => err = Some(e),
                    }
                }
                i += 1;
            });
            if let Some(e) = err {
                return Err(e);
            }
            Ok(AnyArray::String {
                data: ArrayD::from_shape_vec(shape, out).map_err(shape_err)?,
                datatype: dt.clone(),
            })
        }
        Datatype::Record(fields) => {
            let data = layout.gather(bytes)?;
            Ok(AnyArray::Record(RecordArray::new(
                fields.clone(),
                layout.shape.clone(),
                order,
                data,
            )?))
        }
    }
}

impl RecordArray {
    /// The values of field `name`: the array's shape followed by the field's sub-array shape.
    pub fn field(&self, name: &str) -> Result<AnyArray> {
        self.field_at(self.field_index(name)?)
    }

    /// The values of the `i`-th field.
    pub fn field_at(&self, i: usize) -> Result<AnyArray> {
        let (layout, dt, order) = self.field_layout(i)?;
        decode_any(self.packed(), &layout, dt, order)
    }
}
