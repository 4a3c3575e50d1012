//! Rust scalar types that ASDF scalar datatypes map to.

use asdf_yaml::Node;
use half::f16;
use num_complex::Complex;

use crate::complex::{complex_from_node, complex_node};
use crate::datatype::{ByteOrder, ScalarType};

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that stores one ASDF scalar datatype: `i8`…`i128`, `u8`…`u128`, [`half::f16`],
/// `f32`, `f64`, `Complex<f16>` (complex32), `Complex<f32>`, `Complex<f64>` and `bool`.
///
/// Sealed: the layout guarantees the zero-copy views rely on hold only for these types.
pub trait Element:
    Copy
    + Send
    + Sync
    + Default
    + PartialEq
    + std::fmt::Debug
    + 'static
    + sealed::Sealed
    + array_core::Zeroable
{
    /// The ASDF datatype of this type.
    const SCALAR: ScalarType;

    /// Decodes one value from exactly `SCALAR.size()` bytes in `order`.
    fn from_bytes(bytes: &[u8], order: ByteOrder) -> Self;

    /// Encodes one value into exactly `SCALAR.size()` bytes in `order`.
    fn write_bytes(self, order: ByteOrder, out: &mut [u8]);

    /// Whether `bytes` (one stored value, native order) is a valid bit pattern of `Self`
    /// (only `bool` restricts it, to 0 and 1).
    fn valid_bits(_bytes: &[u8]) -> bool {
        true
    }

    /// The value of an inline `data` item, `None` when the node does not hold this type.
    fn from_node(node: &Node) -> Option<Self>;

    /// The inline `data` item for this value.
    fn to_node(self) -> Node;
}

fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

macro_rules! int_element {
    ($t:ty, $s:ident, $n:expr, $from:expr, $to:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const SCALAR: ScalarType = ScalarType::$s;
            #[inline]
            fn from_bytes(b: &[u8], order: ByteOrder) -> Self {
                match order {
                    ByteOrder::Little => <$t>::from_le_bytes(arr::<$n>(b)),
                    ByteOrder::Big => <$t>::from_be_bytes(arr::<$n>(b)),
                }
            }
            #[inline]
            fn write_bytes(self, order: ByteOrder, out: &mut [u8]) {
                let b = match order {
                    ByteOrder::Little => self.to_le_bytes(),
                    ByteOrder::Big => self.to_be_bytes(),
                };
                out[..$n].copy_from_slice(&b);
            }
            fn from_node(node: &Node) -> Option<Self> {
                let f: fn(&Node) -> Option<Self> = $from;
                f(node)
            }
            fn to_node(self) -> Node {
                let f: fn(Self) -> Node = $to;
                f(self)
            }
        }
    };
}

fn int_text<T: std::str::FromStr>(n: &Node) -> Option<T> {
    n.as_integer_text()?.parse().ok()
}

int_element!(i8, Int8, 1, |n| n.as_i64()?.try_into().ok(), Node::from);
int_element!(i16, Int16, 2, |n| n.as_i64()?.try_into().ok(), Node::from);
int_element!(i32, Int32, 4, |n| n.as_i64()?.try_into().ok(), Node::from);
int_element!(i64, Int64, 8, |n| n.as_i64(), Node::from);
int_element!(i128, Int128, 16, int_text, Node::from);
int_element!(u8, UInt8, 1, |n| n.as_i64()?.try_into().ok(), Node::from);
int_element!(u16, UInt16, 2, |n| n.as_i64()?.try_into().ok(), Node::from);
int_element!(u32, UInt32, 4, |n| n.as_i64()?.try_into().ok(), Node::from);
int_element!(u64, UInt64, 8, |n| n.as_u64(), Node::from);
int_element!(u128, UInt128, 16, int_text, |v| Node::from(v.to_string())
    .with_tag("tag:yaml.org,2002:int"));
int_element!(
    f32,
    Float32,
    4,
    |n| n.as_f64().map(|v| v as f32),
    Node::from
);
int_element!(f64, Float64, 8, |n| n.as_f64(), Node::from);

impl sealed::Sealed for f16 {}
impl Element for f16 {
    const SCALAR: ScalarType = ScalarType::Float16;
    #[inline]
    fn from_bytes(b: &[u8], order: ByteOrder) -> Self {
        f16::from_bits(u16::from_bytes(b, order))
    }
    #[inline]
    fn write_bytes(self, order: ByteOrder, out: &mut [u8]) {
        self.to_bits().write_bytes(order, out)
    }
    fn from_node(node: &Node) -> Option<Self> {
        node.as_f64().map(f16::from_f64)
    }
    fn to_node(self) -> Node {
        Node::from(self.to_f64())
    }
}

impl sealed::Sealed for bool {}
impl Element for bool {
    const SCALAR: ScalarType = ScalarType::Bool8;
    #[inline]
    fn from_bytes(b: &[u8], _: ByteOrder) -> Self {
        b[0] != 0
    }
    #[inline]
    fn write_bytes(self, _: ByteOrder, out: &mut [u8]) {
        out[0] = u8::from(self);
    }
    fn valid_bits(bytes: &[u8]) -> bool {
        bytes[0] <= 1
    }
    fn from_node(node: &Node) -> Option<Self> {
        node.as_bool()
            .or_else(|| node.as_i64().filter(|&i| i == 0 || i == 1).map(|i| i == 1))
    }
    fn to_node(self) -> Node {
        Node::from(self)
    }
}

macro_rules! complex_element {
    ($t:ty, $s:ident, $n:expr, $to:expr, $from:expr) => {
        impl sealed::Sealed for Complex<$t> {}
        impl Element for Complex<$t> {
            const SCALAR: ScalarType = ScalarType::$s;
            #[inline]
            fn from_bytes(b: &[u8], order: ByteOrder) -> Self {
                Complex::new(
                    <$t>::from_bytes(&b[..$n], order),
                    <$t>::from_bytes(&b[$n..2 * $n], order),
                )
            }
            #[inline]
            fn write_bytes(self, order: ByteOrder, out: &mut [u8]) {
                self.re.write_bytes(order, &mut out[..$n]);
                self.im.write_bytes(order, &mut out[$n..2 * $n]);
            }
            fn from_node(node: &Node) -> Option<Self> {
                let z = complex_from_node(node).ok()?;
                let f: fn(f64) -> $t = $from;
                Some(Complex::new(f(z.re), f(z.im)))
            }
            fn to_node(self) -> Node {
                let f: fn($t) -> f64 = $to;
                complex_node(Complex::new(f(self.re), f(self.im)))
            }
        }
    };
}

complex_element!(f16, Complex32, 2, |x| x.to_f64(), f16::from_f64);
complex_element!(f32, Complex64, 4, f64::from, |x| x as f32);
complex_element!(f64, Complex128, 8, |x| x, |x| x);
