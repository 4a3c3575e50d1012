//! Element values: the [`Value`] an element reads as, and the [`Budget`] that bounds how much
//! reading values may build. Each class reads its own elements (`Class::element`); this module
//! sits below them all.

use serde_json::Value as Json;

use crate::dtype::Primitive;
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::numpy::{Buffer, NumpyArray};

/// One element of an awkward array, as awkward0's `tolist()` would give it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Missing (`None`).
    Null,
    /// A boolean.
    Bool(bool),
    /// A signed integer (also datetime/timedelta counts).
    Int(i64),
    /// An unsigned integer that may not fit `i64`.
    UInt(u64),
    /// A float.
    Float(f64),
    /// A complex number.
    Complex(f64, f64),
    /// Text.
    Str(String),
    /// Raw bytes (a `StringArray` with encoding `None`).
    Bytes(Vec<u8>),
    /// A list (jagged element, or inner numpy dimensions).
    List(Vec<Value>),
    /// A record (table row), fields in column order.
    Record(Vec<(String, Value)>),
}

impl Value {
    /// JSON for this value: lists and records as JSON arrays and objects; bytes as an array of
    /// integers; complex as `[re, im]`; non-finite floats as `null` (JSON has none).
    pub fn to_json(&self) -> Json {
        match self {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::UInt(u) => Json::from(*u),
            Value::Float(f) => float_json(*f),
            Value::Complex(r, i) => Json::Array(vec![float_json(*r), float_json(*i)]),
            Value::Str(s) => Json::String(s.clone()),
            Value::Bytes(b) => Json::Array(b.iter().map(|&x| Json::from(x)).collect()),
            Value::List(v) => Json::Array(v.iter().map(Value::to_json).collect()),
            Value::Record(f) => {
                Json::Object(f.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
        }
    }
}

fn float_json(f: f64) -> Json {
    serde_json::Number::from_f64(f).map_or(Json::Null, Json::Number)
}

/// The error for element `i` of a `class` array of length `len`.
pub(crate) fn oob(class: &'static str, i: usize, len: usize) -> Error {
    Error::invalid(
        class,
        "array",
        format!("element {i} requested but the length is {len}"),
    )
}

fn scalar(buf: &Buffer, prim: &Primitive, k: usize) -> Option<Value> {
    let _ = prim;
    Some(match buf {
        Buffer::Bool(v) => Value::Bool(*v.get(k)?),
        Buffer::I8(v) => Value::Int(*v.get(k)? as i64),
        Buffer::U8(v) => Value::Int(*v.get(k)? as i64),
        Buffer::I16(v) => Value::Int(*v.get(k)? as i64),
        Buffer::U16(v) => Value::Int(*v.get(k)? as i64),
        Buffer::I32(v) => Value::Int(*v.get(k)? as i64),
        Buffer::U32(v) => Value::Int(*v.get(k)? as i64),
        Buffer::I64(v) => Value::Int(*v.get(k)?),
        Buffer::U64(v) => {
            let x = *v.get(k)?;
            i64::try_from(x).map_or(Value::UInt(x), Value::Int)
        }
        Buffer::F16(v) => Value::Float(v.get(k)?.to_f64()),
        Buffer::F32(v) => Value::Float(*v.get(k)? as f64),
        Buffer::F64(v) => Value::Float(*v.get(k)?),
        Buffer::C64(v) => {
            let [r, i] = *v.get(k)?;
            Value::Complex(r as f64, i as f64)
        }
        Buffer::C128(v) => {
            let [r, i] = *v.get(k)?;
            Value::Complex(r, i)
        }
    })
}

/// Number of values [`numpy_element`] builds (the scalars and the lists holding them), the
/// element itself included.
pub(crate) fn numpy_values(a: &NumpyArray) -> u64 {
    let mut total = 1u64;
    let mut level = 1u64;
    for &n in a.dtype().inner_shape.iter() {
        level = level.saturating_mul(n as u64);
        total = total.saturating_add(level);
    }
    total
}

/// Element `i` of a numpy array (a scalar, or lists over its inner dimensions).
pub(crate) fn numpy_element(a: &NumpyArray, i: usize) -> Option<Value> {
    let shape = &a.dtype().inner_shape;
    let inner = a.inner_size();
    let start = i.checked_mul(inner)?;
    fn build(a: &NumpyArray, shape: &[usize], start: &mut usize) -> Option<Value> {
        match shape.split_first() {
            None => {
                let v = scalar(a.data(), &a.dtype().primitive, *start)?;
                *start += 1;
                Some(v)
            }
            Some((&n, rest)) => {
                let mut out = Vec::with_capacity(n.min(1 << 16));
                for _ in 0..n {
                    out.push(build(a, rest, start)?);
                }
                Some(Value::List(out))
            }
        }
    }
    let mut pos = start;
    build(a, shape, &mut pos)
}

/// Estimated memory of one materialised [`Value`] (strings and bytes add their length).
const VALUE_COST: u64 = std::mem::size_of::<Value>() as u64;

/// What materialising values may still cost, against [`Limits::max_materialized_bytes`].
/// Every list (the output, `JaggedArray` elements, inner numpy dimensions, records) charges
/// its slots *before* it is filled, and strings their bytes, so a virtual length (a
/// `SparseArray`) or a fan-out of indexes is refused before anything is built.
pub(crate) struct Budget {
    used: u64,
    limit: u64,
}

impl Budget {
    pub(crate) fn new(limits: &Limits) -> Budget {
        Budget {
            used: 0,
            limit: limits.max_materialized_bytes,
        }
    }

    /// Charges `values` value slots plus `bytes` bytes of text.
    pub(crate) fn take(&mut self, values: u64, bytes: u64) -> Result<()> {
        let used = values
            .checked_mul(VALUE_COST)
            .and_then(|v| v.checked_add(bytes))
            .and_then(|v| v.checked_add(self.used));
        match used {
            Some(u) if u <= self.limit => {
                self.used = u;
                Ok(())
            }
            _ => Err(Error::Limit {
                location: "array".into(),
                what: "materialized values (bytes, Limits::max_materialized_bytes)",
                value: used.unwrap_or(u64::MAX),
                limit: self.limit,
            }),
        }
    }
}
