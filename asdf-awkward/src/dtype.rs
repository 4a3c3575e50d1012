//! Numpy dtypes as awkward0 writes them in `{"dtype": ...}` expressions.

use serde_json::Value as Json;

/// The scalar type of a numpy leaf.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// `bool` (one byte, nonzero is true).
    Bool,
    /// `int8`.
    I8,
    /// `uint8`.
    U8,
    /// `int16`.
    I16,
    /// `uint16`.
    U16,
    /// `int32`.
    I32,
    /// `uint32`.
    U32,
    /// `int64`.
    I64,
    /// `uint64`.
    U64,
    /// `float16`.
    F16,
    /// `float32`.
    F32,
    /// `float64`.
    F64,
    /// `complex64` (two `float32`).
    C64,
    /// `complex128` (two `float64`).
    C128,
    /// `datetime64[unit]`, stored as `int64`.
    DateTime64(String),
    /// `timedelta64[unit]`, stored as `int64`.
    TimeDelta64(String),
}

/// Byte order of blob data (the workspace's one byte-order type): little-endian is what awkward0
/// writes on every common host (unmarked names), big-endian is marked `>`.
pub use array_core::ByteOrder;

/// Kind of a primitive, for compression policies and conversions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `bool`.
    Bool,
    /// Signed integers (and datetime/timedelta, which numpy stores as int64).
    Int,
    /// Unsigned integers.
    UInt,
    /// Floating point.
    Float,
    /// Complex.
    Complex,
}

impl Primitive {
    /// Size of one scalar in bytes.
    pub fn itemsize(&self) -> usize {
        match self {
            Primitive::Bool | Primitive::I8 | Primitive::U8 => 1,
            Primitive::I16 | Primitive::U16 | Primitive::F16 => 2,
            Primitive::I32 | Primitive::U32 | Primitive::F32 => 4,
            Primitive::I64
            | Primitive::U64
            | Primitive::F64
            | Primitive::C64
            | Primitive::DateTime64(_)
            | Primitive::TimeDelta64(_) => 8,
            Primitive::C128 => 16,
        }
    }

    /// The kind (bool, signed, unsigned, float, complex).
    pub fn kind(&self) -> Kind {
        match self {
            Primitive::Bool => Kind::Bool,
            Primitive::I8
            | Primitive::I16
            | Primitive::I32
            | Primitive::I64
            | Primitive::DateTime64(_)
            | Primitive::TimeDelta64(_) => Kind::Int,
            Primitive::U8 | Primitive::U16 | Primitive::U32 | Primitive::U64 => Kind::UInt,
            Primitive::F16 | Primitive::F32 | Primitive::F64 => Kind::Float,
            Primitive::C64 | Primitive::C128 => Kind::Complex,
        }
    }

    /// Numpy's name (`str(dtype)` for the native little-endian type), e.g. `"int64"`.
    pub fn name(&self) -> String {
        match self {
            Primitive::Bool => "bool".into(),
            Primitive::I8 => "int8".into(),
            Primitive::U8 => "uint8".into(),
            Primitive::I16 => "int16".into(),
            Primitive::U16 => "uint16".into(),
            Primitive::I32 => "int32".into(),
            Primitive::U32 => "uint32".into(),
            Primitive::I64 => "int64".into(),
            Primitive::U64 => "uint64".into(),
            Primitive::F16 => "float16".into(),
            Primitive::F32 => "float32".into(),
            Primitive::F64 => "float64".into(),
            Primitive::C64 => "complex64".into(),
            Primitive::C128 => "complex128".into(),
            Primitive::DateTime64(u) => format!("datetime64[{u}]"),
            Primitive::TimeDelta64(u) => format!("timedelta64[{u}]"),
        }
    }

    /// The awkward 2 `primitive` name (same as numpy's, per the awkward 2 form specification).
    pub fn awkward2_name(&self) -> String {
        self.name()
    }

    fn from_code(kind: char, size: usize) -> Option<Primitive> {
        Some(match (kind, size) {
            ('b', 1) => Primitive::Bool,
            ('i', 1) => Primitive::I8,
            ('u', 1) => Primitive::U8,
            ('i', 2) => Primitive::I16,
            ('u', 2) => Primitive::U16,
            ('i', 4) => Primitive::I32,
            ('u', 4) => Primitive::U32,
            ('i', 8) => Primitive::I64,
            ('u', 8) => Primitive::U64,
            ('f', 2) => Primitive::F16,
            ('f', 4) => Primitive::F32,
            ('f', 8) => Primitive::F64,
            ('c', 8) => Primitive::C64,
            ('c', 16) => Primitive::C128,
            _ => return None,
        })
    }
}

const TIME_UNITS: &[&str] = &[
    "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as",
];

fn parse_unit(s: &str) -> Option<String> {
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    TIME_UNITS.contains(&inner).then(|| inner.to_string())
}

/// A numpy dtype limited to what this crate can hold safely: a [`Primitive`], its byte order in
/// the blob, and the inner (subarray) shape.
///
/// ```
/// use asdf_awkward::{DType, Primitive, ByteOrder};
/// let d = DType::from_json(&serde_json::json!(["float32", [2, 3]])).unwrap();
/// assert_eq!(d.primitive, Primitive::F32);
/// assert_eq!(d.inner_shape, vec![2, 3]);
/// assert_eq!(d.order, ByteOrder::Little);
/// assert_eq!(DType::from_json(&serde_json::json!(">i8")).unwrap().order, ByteOrder::Big);
/// assert!(DType::from_json(&serde_json::json!("object")).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DType {
    /// Scalar type.
    pub primitive: Primitive,
    /// Byte order of the blob bytes.
    pub order: ByteOrder,
    /// Subarray dimensions (the numpy array's `shape[1:]`).
    pub inner_shape: Vec<usize>,
}

/// Why a dtype JSON was refused (the caller adds the location).
pub(crate) type DTypeError = String;

impl DType {
    /// A native (little-endian) scalar dtype with no inner shape.
    pub fn scalar(primitive: Primitive) -> DType {
        DType {
            primitive,
            order: ByteOrder::Little,
            inner_shape: Vec::new(),
        }
    }

    /// Number of scalars per element (product of the inner shape), checked.
    pub fn inner_size(&self) -> Option<usize> {
        self.inner_shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
    }

    /// Bytes per element (itemsize × inner size), checked.
    pub fn element_bytes(&self) -> Option<usize> {
        self.inner_size()?.checked_mul(self.primitive.itemsize())
    }

    /// Parses awkward0's dtype JSON (`dtype2json` output): a type string such as `"int64"`,
    /// `">f8"`, `"datetime64[ns]"`, or `[base, [d1, d2, ...]]` / `[base, n]` for subarrays.
    /// Structured, string, object and void dtypes are refused.
    pub fn from_json(json: &Json) -> Result<DType, String> {
        Self::from_json_depth(json, 0)
    }

    fn from_json_depth(json: &Json, depth: usize) -> Result<DType, DTypeError> {
        if depth > 32 {
            return Err("dtype nested too deeply".into());
        }
        match json {
            Json::String(s) => Self::parse_str(s),
            Json::Array(items) if items.len() == 2 && !items[0].is_array() => {
                let mut base = Self::from_json_depth(&items[0], depth + 1)?;
                let dims: Vec<usize> = match &items[1] {
                    Json::Number(n) => vec![n
                        .as_u64()
                        .and_then(|v| usize::try_from(v).ok())
                        .ok_or_else(|| format!("bad subarray dimension {n}"))?],
                    Json::Array(ds) => ds
                        .iter()
                        .map(|d| {
                            d.as_u64()
                                .and_then(|v| usize::try_from(v).ok())
                                .ok_or_else(|| format!("bad subarray dimension {d}"))
                        })
                        .collect::<Result<_, _>>()?,
                    other => return Err(format!("bad subarray shape {other}")),
                };
                // numpy flattens a subarray of a subarray: (('f8', (2,)), (3,)) has shape (3, 2).
                let mut shape = dims;
                shape.extend_from_slice(&base.inner_shape);
                base.inner_shape = shape;
                if base.inner_size().is_none() {
                    return Err("subarray shape overflows".into());
                }
                Ok(base)
            }
            Json::Array(_) => Err(format!(
                "structured dtype {json} is not supported (only numeric, bool and datetime leaves)"
            )),
            other => Err(format!("a dtype must be a string or a list, found {other}")),
        }
    }

    fn parse_str(s: &str) -> Result<DType, DTypeError> {
        let (order, rest) = match s.as_bytes().first() {
            Some(b'<') | Some(b'=') => (ByteOrder::Little, &s[1..]),
            Some(b'|') => (ByteOrder::Little, &s[1..]),
            Some(b'>') | Some(b'!') => (ByteOrder::Big, &s[1..]),
            _ => (ByteOrder::Little, s),
        };
        let named = match rest {
            "bool" | "bool_" | "?" => Some(Primitive::Bool),
            "int8" | "byte" => Some(Primitive::I8),
            "uint8" | "ubyte" => Some(Primitive::U8),
            "int16" | "short" => Some(Primitive::I16),
            "uint16" | "ushort" => Some(Primitive::U16),
            "int32" | "intc" => Some(Primitive::I32),
            "uint32" | "uintc" => Some(Primitive::U32),
            "int64" | "int" | "long" | "longlong" | "int_" => Some(Primitive::I64),
            "uint64" | "ulonglong" | "uint" => Some(Primitive::U64),
            "float16" | "half" | "e" => Some(Primitive::F16),
            "float32" | "single" | "f" => Some(Primitive::F32),
            "float64" | "double" | "float" | "d" | "float_" => Some(Primitive::F64),
            "complex64" | "csingle" | "F" => Some(Primitive::C64),
            "complex128" | "cdouble" | "complex" | "D" => Some(Primitive::C128),
            _ => None,
        };
        let prim = if let Some(p) = named {
            p
        } else if let Some(unit) = rest.strip_prefix("datetime64").or(rest.strip_prefix("M8")) {
            Primitive::DateTime64(
                parse_unit(unit).ok_or_else(|| format!("unsupported datetime unit in {s:?}"))?,
            )
        } else if let Some(unit) = rest.strip_prefix("timedelta64").or(rest.strip_prefix("m8")) {
            Primitive::TimeDelta64(
                parse_unit(unit).ok_or_else(|| format!("unsupported timedelta unit in {s:?}"))?,
            )
        } else {
            let mut chars = rest.chars();
            let code = chars.next();
            let size: Option<usize> = chars.as_str().parse().ok();
            match (code, size) {
                (Some(c), Some(n)) if "biufc".contains(c) => Primitive::from_code(c, n)
                    .ok_or_else(|| format!("unsupported dtype {s:?}"))?,
                _ => {
                    return Err(format!(
                        "unsupported dtype {s:?} (only bool, integers, floats, complex, datetime64 and timedelta64 are accepted)"
                    ))
                }
            }
        };
        Ok(DType {
            primitive: prim,
            order,
            inner_shape: Vec::new(),
        })
    }

    /// awkward0's JSON for this dtype (`str(dtype)`, or `[base, [dims]]` for a subarray).
    /// Little-endian data is written unmarked, as awkward0 does on little-endian hosts.
    pub fn to_json(&self) -> Json {
        let base = match self.order {
            ByteOrder::Little => self.primitive.name(),
            ByteOrder::Big => format!(">{}", self.big_code()),
        };
        if self.inner_shape.is_empty() {
            Json::String(base)
        } else {
            Json::Array(vec![
                Json::String(base),
                Json::Array(self.inner_shape.iter().map(|&d| Json::from(d)).collect()),
            ])
        }
    }

    fn big_code(&self) -> String {
        let p = &self.primitive;
        let size = p.itemsize();
        match p {
            Primitive::Bool => "b1".into(),
            Primitive::I8 | Primitive::I16 | Primitive::I32 | Primitive::I64 => format!("i{size}"),
            Primitive::U8 | Primitive::U16 | Primitive::U32 | Primitive::U64 => format!("u{size}"),
            Primitive::F16 | Primitive::F32 | Primitive::F64 => format!("f{size}"),
            Primitive::C64 | Primitive::C128 => format!("c{size}"),
            Primitive::DateTime64(u) => format!("M8[{u}]"),
            Primitive::TimeDelta64(u) => format!("m8[{u}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_numpy_names() {
        for (s, p) in [
            ("bool", Primitive::Bool),
            ("int8", Primitive::I8),
            ("uint8", Primitive::U8),
            ("<u2", Primitive::U16),
            ("|b1", Primitive::Bool),
            ("float16", Primitive::F16),
            ("complex128", Primitive::C128),
            ("<c8", Primitive::C64),
        ] {
            assert_eq!(DType::from_json(&json!(s)).unwrap().primitive, p, "{s}");
        }
        let d = DType::from_json(&json!(">f8")).unwrap();
        assert_eq!(
            (d.primitive.clone(), d.order),
            (Primitive::F64, ByteOrder::Big)
        );
        assert_eq!(d.to_json(), json!(">f8"));
        let t = DType::from_json(&json!("datetime64[ns]")).unwrap();
        assert_eq!(t.primitive, Primitive::DateTime64("ns".into()));
        assert_eq!(t.to_json(), json!("datetime64[ns]"));
    }

    #[test]
    fn subarrays_and_refusals() {
        let d = DType::from_json(&json!(["int16", [3, 4]])).unwrap();
        assert_eq!(d.inner_shape, vec![3, 4]);
        assert_eq!(d.element_bytes(), Some(24));
        assert_eq!(d.to_json(), json!(["int16", [3, 4]]));
        assert_eq!(
            DType::from_json(&json!(["int16", 5])).unwrap().inner_shape,
            vec![5]
        );
        for bad in [
            json!("object"),
            json!("|S5"),
            json!("<U3"),
            json!("float128"),
            json!([["a", "int32"], ["b", "f8"]]),
            json!(["int8", [-1]]),
            json!(["int8", [u64::MAX, u64::MAX]]),
            json!("datetime64[bogus]"),
            json!(7),
        ] {
            assert!(DType::from_json(&bad).is_err(), "{bad}");
        }
    }
}
