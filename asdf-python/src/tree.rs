//! The tree as plain Python values.

use std::collections::HashMap;
use std::sync::Arc;

use asdf::array_kind;
use asdf::yaml::{Node, Value};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyComplex, PyDict, PyList, PyTuple};

use crate::engine::Engine;
use crate::errors::AsdfError;

const YAML_TAG: &str = "tag:yaml.org,2002:";
const COMPLEX_PREFIX: &str = "tag:stsci.edu:asdf/core/complex-";
const INTEGER_PREFIX: &str = "tag:stsci.edu:asdf/core/integer-";

/// What converting a tree needs from Python, looked up once per conversion.
pub struct Converter<'py> {
    py: Python<'py>,
    file: Engine,
    /// `asdf_rs.Tagged(tag, value)`.
    tagged: Bound<'py, PyAny>,
    /// `make_array(pointer)`: the lazy array object of an ndarray node.
    make_array: Bound<'py, PyAny>,
    int: Bound<'py, PyAny>,
    datetime: Bound<'py, PyAny>,
    b64decode: Bound<'py, PyAny>,
    /// Shared (anchored) subtrees already converted, by address: aliases give the same object.
    shared: HashMap<usize, Py<PyAny>>,
}

impl<'py> Converter<'py> {
    pub fn new(
        py: Python<'py>,
        file: Engine,
        tagged: Bound<'py, PyAny>,
        make_array: Bound<'py, PyAny>,
    ) -> PyResult<Self> {
        Ok(Converter {
            py,
            file,
            tagged,
            make_array,
            int: py.import("builtins")?.getattr("int")?,
            datetime: py.import("datetime")?.into_any(),
            b64decode: py.import("base64")?.getattr("b64decode")?,
            shared: HashMap::new(),
        })
    }

    /// `node` (found at JSON Pointer `path`) as Python values.
    pub fn convert(&mut self, node: &Node, path: &mut String) -> PyResult<Bound<'py, PyAny>> {
        if let Some(arc) = node.shared() {
            let key = Arc::as_ptr(arc) as usize;
            if let Some(done) = self.shared.get(&key) {
                return Ok(done.bind(self.py).clone());
            }
            let value = self.convert_unshared(node, path)?;
            self.shared.insert(key, value.clone().unbind());
            return Ok(value);
        }
        self.convert_unshared(node, path)
    }

    fn convert_unshared(&mut self, node: &Node, path: &mut String) -> PyResult<Bound<'py, PyAny>> {
        let Some(tag) = node.tag() else {
            return self.plain(node, path);
        };
        if array_kind(node).is_some() {
            return self.make_array.call1((path.as_str(),));
        }
        if let Some(kind) = tag.strip_prefix(YAML_TAG) {
            return match (kind, node.as_str()) {
                ("timestamp", Some(text)) => self.timestamp(text),
                ("binary", Some(text)) => {
                    let clean: String = text.chars().filter(|c| !c.is_whitespace()).collect();
                    self.b64decode.call1((clean,))
                }
                _ => self.plain(node, path),
            };
        }
        if tag.starts_with(COMPLEX_PREFIX) {
            let z = asdf::ndarray::complex_from_node(node).map_err(|e| at(path, e))?;
            return Ok(PyComplex::from_doubles(self.py, z.re, z.im).into_any());
        }
        if tag.starts_with(INTEGER_PREFIX) {
            let big = self
                .file
                .integer(node, path)
                .map_err(crate::errors::asdf_err)?;
            let hex: String = big.words.iter().rev().map(|w| format!("{w:08x}")).collect();
            let v = self
                .int
                .call1((if hex.is_empty() { "0".into() } else { hex }, 16))?;
            return if big.negative { v.neg() } else { Ok(v) };
        }
        let value = self.plain(node, path)?;
        self.tagged.call1((tag, value))
    }

    fn plain(&mut self, node: &Node, path: &mut String) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match node.value() {
            Value::Null => py.None().into_bound(py),
            Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
            Value::Int(i) => i.into_pyobject(py)?.into_any(),
            Value::BigInt(text) => self.int.call1((text.as_str(),))?,
            Value::Float(f) => f.into_pyobject(py)?.into_any(),
            Value::Str(s) => s.into_pyobject(py)?.into_any(),
            Value::Packed(_) => return self.plain(&node.unpacked(), path),
            Value::Seq(items) => {
                let list = PyList::empty(py);
                let len = path.len();
                for (i, item) in items.iter().enumerate() {
                    path.push('/');
                    path.push_str(&i.to_string());
                    list.append(self.convert(item, path)?)?;
                    path.truncate(len);
                }
                list.into_any()
            }
            Value::Map(map) => {
                let dict = PyDict::new(py);
                let len = path.len();
                for (k, v) in map.iter() {
                    let key = self.key(k, path)?;
                    path.push('/');
                    path.push_str(&pointer_token(k));
                    let value = self.convert(v, path)?;
                    path.truncate(len);
                    dict.set_item(key, value)?;
                }
                dict.into_any()
            }
            // `node.value()` looks through sharing; kept for completeness.
            Value::Shared(inner) => return self.convert(inner, path),
        })
    }

    /// A mapping key: scalars as themselves, sequences as tuples (hashable, as PyYAML does).
    fn key(&mut self, k: &Node, path: &mut String) -> PyResult<Bound<'py, PyAny>> {
        match k.value() {
            Value::Seq(items) => {
                let parts = items
                    .iter()
                    .map(|i| self.key(i, path))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(PyTuple::new(self.py, parts)?.into_any())
            }
            Value::Map(_) => Err(AsdfError::new_err(format!(
                "mapping at {path:?}: a mapping used as a key cannot be a Python dict key"
            ))),
            _ => self.convert(k, path),
        }
    }

    /// A YAML timestamp as PyYAML constructs it: `date` for a date alone, `datetime` (aware when
    /// the text has a time zone) otherwise.
    fn timestamp(&self, text: &str) -> PyResult<Bound<'py, PyAny>> {
        let t = parse_timestamp(text)
            .ok_or_else(|| PyValueError::new_err(format!("invalid timestamp {text:?}")))?;
        if t.time.is_none() {
            return self
                .datetime
                .getattr("date")?
                .call1((t.year, t.month, t.day));
        }
        let (h, mi, s, us) = t.time.unwrap_or_default();
        let tz = match t.offset_minutes {
            None => self.py.None().into_bound(self.py),
            Some(m) => {
                let delta = self.datetime.getattr("timedelta")?;
                let kwargs = PyDict::new(self.py);
                kwargs.set_item("minutes", m)?;
                let d = delta.call((), Some(&kwargs))?;
                self.datetime.getattr("timezone")?.call1((d,))?
            }
        };
        self.datetime
            .getattr("datetime")?
            .call1((t.year, t.month, t.day, h, mi, s, us, tz))
    }
}

fn at(path: &str, e: asdf::ndarray::NdError) -> PyErr {
    AsdfError::new_err(format!("node at {path:?}: {e}"))
}

/// The JSON Pointer token of a mapping key (`~` and `/` escaped).
fn pointer_token(k: &Node) -> String {
    let raw = match k.value() {
        Value::Str(s) => s.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Float(f) => f.to_string(),
        Value::BigInt(s) => s.to_string(),
        _ => String::new(),
    };
    raw.replace('~', "~0").replace('/', "~1")
}

/// The parts of a YAML 1.1 timestamp.
#[derive(Debug, PartialEq)]
struct Timestamp {
    year: i32,
    month: u32,
    day: u32,
    /// Hour, minute, second, microsecond.
    time: Option<(u32, u32, u32, u32)>,
    /// The time zone's offset from UTC (`Z` is 0), if any.
    offset_minutes: Option<i32>,
}

/// Parses the timestamp forms YAML 1.1 resolves implicitly (the resolver already checked the
/// shape; this reads the numbers).
fn parse_timestamp(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    let (date, rest) = match text.find(['T', 't', ' ', '\t']) {
        Some(i) => (&text[..i], Some(text[i + 1..].trim_start())),
        None => (text, None),
    };
    let mut d = date.splitn(3, '-');
    let year = d.next()?.parse().ok()?;
    let month = d.next()?.parse().ok()?;
    let day = d.next()?.parse().ok()?;
    let Some(rest) = rest else {
        return Some(Timestamp {
            year,
            month,
            day,
            time: None,
            offset_minutes: None,
        });
    };
    let tz_at = rest.find(['Z', '+', '-']);
    let (clock, zone) = match tz_at {
        Some(i) => (rest[..i].trim_end(), Some(&rest[i..])),
        None => (rest.trim_end(), None),
    };
    let (hms, frac) = match clock.split_once('.') {
        Some((a, b)) => (a, b),
        None => (clock, ""),
    };
    let mut t = hms.splitn(3, ':');
    let h = t.next()?.parse().ok()?;
    let mi = t.next()?.parse().ok()?;
    let s = t.next()?.parse().ok()?;
    let digits: String = frac.chars().take(6).collect();
    let us = if digits.is_empty() {
        0
    } else {
        format!("{digits:0<6}").parse().ok()?
    };
    let offset_minutes = match zone {
        None => None,
        Some("Z") => Some(0),
        Some(z) => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let (zh, zm) = match z[1..].split_once(':') {
                Some((a, b)) => (a.parse::<i32>().ok()?, b.parse::<i32>().ok()?),
                None => (z[1..].parse::<i32>().ok()?, 0),
            };
            Some(sign * (zh * 60 + zm))
        }
    };
    Some(Timestamp {
        year,
        month,
        day,
        time: Some((h, mi, s, us)),
        offset_minutes,
    })
}
