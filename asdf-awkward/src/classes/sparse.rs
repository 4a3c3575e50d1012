//! `SparseArray`: `length` elements, `content[j]` at `index[j]`, a default elsewhere.

use serde_json::{json, Map, Value as Json};

use crate::call::{schema_err_s, short, Args, Constructor, Val};
use crate::dtype::Kind;
use crate::element::{Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{
    awkward2_unsupported, call, lit, Awkward0Writer, Awkward2Writer, Class, Layout, Node,
};
use crate::pickle::PyScalar;

/// Default value of a [`SparseArray`].
#[derive(Debug, Clone, PartialEq)]
pub enum SparseDefault {
    /// awkward0's `None`: zero of the content's type (empty list for jagged content).
    Zero,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
}

/// `SparseArray`: `length` elements, `content[j]` at `index[j]`, the default elsewhere.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseArray {
    /// Logical length.
    pub length: usize,
    /// Strictly increasing positions.
    pub index: Vec<i64>,
    /// Values at those positions.
    pub content: Node,
    /// Value everywhere else.
    pub default: SparseDefault,
}

impl SparseArray {
    /// Checks that the content holds a value per position and the positions are strictly
    /// increasing within the length.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        if self.content.len() < self.index.len() {
            return Err(Error::invalid(
                "SparseArray",
                location,
                format!(
                    "{} positions but the content has {} elements",
                    self.index.len(),
                    self.content.len()
                ),
            ));
        }
        let mut prev = -1i64;
        for (j, &p) in self.index.iter().enumerate() {
            if p <= prev || p >= self.length as i64 {
                return Err(Error::invalid(
                    "SparseArray",
                    location,
                    format!(
                        "index[{j}] = {p} is not strictly increasing within 0..{}",
                        self.length
                    ),
                ));
            }
            prev = p;
        }
        Ok(())
    }
}

/// awkward0's constructor: `SparseArray(length, index, content, default)`.
pub(crate) const CONSTRUCTORS: &[Constructor] = &[Constructor {
    path: &["SparseArray"],
    name: "SparseArray",
    params: &["length", "index", "content", "default"],
    required: 3,
    build: sparse,
}];

/// The virtual length is bounded by the reader's limits before anything else.
fn sparse(a: &Args<'_>) -> Result<Layout> {
    let length = a
        .json(0)?
        .as_u64()
        .ok_or_else(|| schema_err_s(a.arg_loc(0), "length must be a non-negative integer"))?;
    let limit = a.limits.max_virtual_length;
    if length > limit {
        return Err(Error::Limit {
            location: a.arg_loc(0).to_string(),
            what: "SparseArray length",
            value: length,
            limit,
        });
    }
    let length = usize::try_from(length)
        .map_err(|_| schema_err_s(a.arg_loc(0), "length does not fit this platform"))?;
    let index = a.index(1)?;
    let content = a.array(2)?;
    let default = default_arg(a)?;
    Ok(Layout::Sparse(SparseArray {
        length,
        index,
        content,
        default,
    }))
}

/// The default value (argument 3), from JSON or a pickled Python scalar.
fn default_arg(a: &Args<'_>) -> Result<SparseDefault> {
    Ok(match a.val(3) {
        None => SparseDefault::Zero,
        Some(Val::Json(j)) => match j {
            Json::Null => SparseDefault::Zero,
            Json::Bool(b) => SparseDefault::Bool(*b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => SparseDefault::Int(i),
                None => SparseDefault::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            other => {
                return Err(Error::Unsupported {
                    location: a.arg_loc(3).to_string(),
                    what: format!("SparseArray default {}", short(other)),
                })
            }
        },
        Some(Val::PyScalar(p)) => match p {
            PyScalar::None => SparseDefault::Zero,
            PyScalar::Bool(b) => SparseDefault::Bool(*b),
            PyScalar::Int(i) => SparseDefault::Int(*i),
            PyScalar::Float(f) => SparseDefault::Float(*f),
        },
        other => return Err(a.wrong(3, "a JSON default value", other)),
    })
}

impl Class for SparseArray {
    fn name(&self) -> &'static str {
        "SparseArray"
    }

    fn len(&self) -> usize {
        self.length
    }

    fn children(&self) -> Vec<&Node> {
        vec![&self.content]
    }

    fn validate_node(&self, location: &str) -> Result<()> {
        SparseArray::validate_node(self, location)
    }

    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        let _ = (w, depth);
        Err(awkward2_unsupported(
            "SparseArray has no awkward 2 form (it would have to be materialized)",
        ))
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        if let Ok(j) = self.index.binary_search(&(i as i64)) {
            return self.content.get_depth(j, depth, b);
        }
        Ok(match self.default {
            SparseDefault::Zero => {
                b.take(zero_values(&self.content) - 1, 0)?;
                zero(&self.content)
            }
            SparseDefault::Bool(v) => Value::Bool(v),
            SparseDefault::Int(v) => Value::Int(v),
            SparseDefault::Float(v) => Value::Float(v),
        })
    }

    /// Length, index, content and default value.
    fn write_awkward0(
        &self,
        w: &mut dyn Awkward0Writer,
        _ctx: &str,
        _id: u64,
        depth: usize,
    ) -> Result<Map<String, Json>> {
        let ix = w.index(&self.index, "SparseArray.index")?;
        let content = w.child(&self.content, "SparseArray.content", depth)?;
        let default = match self.default {
            SparseDefault::Zero => Json::Null,
            SparseDefault::Bool(b) => json!(b),
            SparseDefault::Int(i) => json!(i),
            SparseDefault::Float(f) => match serde_json::Number::from_f64(f) {
                Some(n) => Json::Number(n),
                // awkward0 falls back to a pickle for NaN/inf: a plain float pickle.
                None => json!({ "python": crate::pickle::pickle_float_b64(f) }),
            },
        };
        let d = w.scalar(default);
        Ok(call(
            w.spec(&["SparseArray"]),
            vec![lit(self.length), ix, content, d],
        ))
    }
}

/// Number of values [`zero`] builds for `content`, itself included.
fn zero_values(content: &Layout) -> u64 {
    match content {
        Layout::Numpy(a) => {
            let mut total = 1u64;
            let mut level = 1u64;
            for &n in a.dtype().inner_shape.iter() {
                level = level.saturating_mul(n.min(1 << 20) as u64);
                total = total.saturating_add(level);
            }
            total
        }
        _ => 1,
    }
}

/// awkward0's `None` default: zero of the content's type, an empty list or string.
fn zero(content: &Layout) -> Value {
    match content {
        Layout::Numpy(a) => {
            let zero = match a.dtype().primitive.kind() {
                Kind::Bool => Value::Bool(false),
                Kind::Int | Kind::UInt => Value::Int(0),
                Kind::Float => Value::Float(0.0),
                Kind::Complex => Value::Complex(0.0, 0.0),
            };
            a.dtype()
                .inner_shape
                .iter()
                .rev()
                .fold(zero, |acc, &n| Value::List(vec![acc; n.min(1 << 20)]))
        }
        Layout::Jagged(_) => Value::List(vec![]),
        Layout::String(s) if s.encoding.is_none() => Value::Bytes(vec![]),
        Layout::String(_) => Value::Str(String::new()),
        _ => Value::Null,
    }
}
