//! Element access over a whole array: random access and iteration without JSON, and
//! conversion to and from JSON.

use std::sync::Arc;

use serde_json::Value as Json;

pub use crate::element::Value;
use crate::element::{oob, Budget};
use crate::error::{Error, Result};
use crate::layout::{JaggedArray, Layout, ListIndex, Node, StringArray, Table, UnionArray};
use crate::limits::Limits;
use crate::numpy::{Buffer, NumpyArray};

impl Layout {
    /// Element `i` (errors, never panics, on out-of-range positions or inconsistent structure).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use asdf_awkward::{Layout, JaggedArray, ListIndex, NumpyArray, Buffer, Value};
    /// let content = Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::F64(vec![1.1, 2.2, 3.3]))));
    /// let jagged = Layout::Jagged(JaggedArray { index: ListIndex::Offsets(vec![0, 2, 2, 3]), content });
    /// assert_eq!(jagged.get(0).unwrap(), Value::List(vec![Value::Float(1.1), Value::Float(2.2)]));
    /// assert_eq!(jagged.to_json().unwrap(), serde_json::json!([[1.1, 2.2], [], [3.3]]));
    /// ```
    pub fn get(&self, i: usize) -> Result<Value> {
        self.get_with(i, &Limits::default())
    }

    /// Element `i`, materialising at most [`Limits::max_materialized_bytes`] (an element can
    /// be a list of any length: a `JaggedArray` over a long `SparseArray`, ...).
    pub fn get_with(&self, i: usize, limits: &Limits) -> Result<Value> {
        let mut b = Budget::new(limits);
        b.take(1, 0)?;
        self.get_depth(i, 0, &mut b)
    }

    /// Element `i` at nesting `depth`: the checks every class shares, then the class's own
    /// access (`Class::element`, which recurses into its contents through this).
    pub(crate) fn get_depth(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        if depth > crate::layout::MAX_NESTING {
            return Err(Error::invalid(
                self.class_name(),
                "array",
                "nesting too deep",
            ));
        }
        let d = depth + 1;
        let len = self.len();
        if i >= len {
            return Err(oob(self.class_name(), i, len));
        }
        self.class().element(i, d, b)
    }

    /// Iterates over the elements without building JSON.
    ///
    /// ```
    /// use asdf_awkward::{Layout, StringArray, Value};
    /// let s = Layout::String(StringArray::from_strs(&["a", "bc"]));
    /// let v: Vec<Value> = s.iter().collect::<Result<_, _>>().unwrap();
    /// assert_eq!(v, vec![Value::Str("a".into()), Value::Str("bc".into())]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = Result<Value>> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// All elements as values, with the default [`Limits`].
    pub fn to_values(&self) -> Result<Vec<Value>> {
        self.to_values_with(&Limits::default())
    }

    /// All elements as values, refusing (before building them) to materialise more than
    /// [`Limits::max_materialized_bytes`] in all.
    pub fn to_values_with(&self, limits: &Limits) -> Result<Vec<Value>> {
        let mut b = Budget::new(limits);
        b.take(self.len() as u64, 0)?;
        let mut out = Vec::with_capacity(self.len().min(1 << 20));
        for i in 0..self.len() {
            out.push(self.get_depth(i, 0, &mut b)?);
        }
        Ok(out)
    }

    /// The whole array as a JSON array (see [`Value::to_json`] for the mapping), with the
    /// default [`Limits`].
    pub fn to_json(&self) -> Result<Json> {
        self.to_json_with(&Limits::default())
    }

    /// [`to_json`](Self::to_json), refusing (before building them) to materialise more than
    /// [`Limits::max_materialized_bytes`] of values: a `SparseArray` of 2³² virtual elements,
    /// which takes a few bytes in a file, is an error instead of hundreds of GiB of JSON.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use asdf_awkward::{Buffer, Error, Layout, Limits, NumpyArray, SparseArray, SparseDefault};
    /// let content = Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::F64(vec![]))));
    /// let sparse = Layout::Sparse(SparseArray {
    ///     length: 1 << 32,
    ///     index: vec![],
    ///     content,
    ///     default: SparseDefault::Zero,
    /// });
    /// let err = sparse.to_json_with(&Limits::untrusted()).unwrap_err();
    /// assert!(matches!(err, Error::Limit { .. }));
    /// ```
    pub fn to_json_with(&self, limits: &Limits) -> Result<Json> {
        let mut b = Budget::new(limits);
        b.take(self.len() as u64, 0)?;
        let mut out = Vec::with_capacity(self.len().min(1 << 20));
        for i in 0..self.len() {
            let v = self.get_depth(i, 0, &mut b)?;
            out.push(v.to_json());
        }
        Ok(Json::Array(out))
    }

    /// Builds an array from a JSON array, inferring types the way awkward0's `fromiter` does:
    /// integers → `int64`, numbers with a fraction → `float64`, booleans → `bool`, strings →
    /// `StringArray`, lists → `JaggedArray`, objects → `Table`, `null`s →
    /// `IndexedMaskedArray`, and several kinds → `UnionArray`.
    ///
    /// ```
    /// use asdf_awkward::Layout;
    /// let j = serde_json::json!([{"x": 1, "y": [1.5]}, null, {"x": 2, "y": []}]);
    /// let layout = Layout::from_json(&j).unwrap();
    /// assert_eq!(layout.class_name(), "IndexedMaskedArray");
    /// assert_eq!(layout.to_json().unwrap(), j);
    /// ```
    pub fn from_json(json: &Json) -> Result<Layout> {
        let items = json.as_array().ok_or_else(|| Error::Convert {
            location: "$".into(),
            message: "the top level must be a JSON array".into(),
        })?;
        let refs: Vec<&Json> = items.iter().collect();
        from_items(&refs, "$", 0)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum JKind {
    Bool,
    Number,
    Str,
    List,
    Record(Vec<String>),
}

fn kind_of(v: &Json) -> Option<JKind> {
    match v {
        Json::Null => None,
        Json::Bool(_) => Some(JKind::Bool),
        Json::Number(_) => Some(JKind::Number),
        Json::String(_) => Some(JKind::Str),
        Json::Array(_) => Some(JKind::List),
        Json::Object(m) => {
            let mut keys: Vec<String> = m.keys().cloned().collect();
            keys.sort();
            Some(JKind::Record(keys))
        }
    }
}

/// The layout awkward0's `fromiter` would build for `items`: option type around any nulls, a
/// union of several kinds, else one layout of the one kind.
fn from_items(items: &[&Json], loc: &str, depth: usize) -> Result<Layout> {
    if depth > 200 {
        return Err(Error::Convert {
            location: loc.into(),
            message: "JSON nested more than 200 levels".into(),
        });
    }
    if items.iter().any(|v| v.is_null()) {
        return masked_items(items, loc, depth);
    }
    let (kinds, tags) = kinds_and_tags(items);
    if kinds.len() > 1 {
        return union_items(items, kinds.len(), &tags, loc, depth);
    }
    match kinds.first() {
        None => Ok(Layout::Numpy(NumpyArray::from_vec(Buffer::F64(vec![])))),
        Some(JKind::Bool) => Ok(Layout::Numpy(NumpyArray::from_vec(Buffer::Bool(
            items.iter().map(|v| v.as_bool().unwrap_or(false)).collect(),
        )))),
        Some(JKind::Number) => Ok(Layout::Numpy(NumpyArray::from_vec(number_items(items)))),
        Some(JKind::Str) => {
            let strs: Vec<&str> = items.iter().map(|v| v.as_str().unwrap_or("")).collect();
            Ok(Layout::String(StringArray::from_strs(&strs)))
        }
        Some(JKind::List) => list_items(items, loc, depth),
        Some(JKind::Record(sorted)) => record_items(items, sorted, loc, depth),
    }
}

/// Items with nulls: an `IndexedMaskedArray` over the present ones.
fn masked_items(items: &[&Json], loc: &str, depth: usize) -> Result<Layout> {
    let present: Vec<&Json> = items.iter().copied().filter(|v| !v.is_null()).collect();
    let mut next = 0i64;
    let index = items
        .iter()
        .map(|v| {
            if v.is_null() {
                -1
            } else {
                next += 1;
                next - 1
            }
        })
        .collect();
    let content = from_items(&present, loc, depth + 1)?;
    Ok(Layout::IndexedMasked(crate::layout::IndexedMaskedArray {
        index,
        content: Arc::new(content),
        masked_when: -1,
    }))
}

/// The distinct kinds of `items` in order of first appearance, and each item's kind number.
fn kinds_and_tags(items: &[&Json]) -> (Vec<JKind>, Vec<usize>) {
    let mut kinds: Vec<JKind> = Vec::new();
    let mut tags = Vec::with_capacity(items.len());
    for v in items {
        let k = kind_of(v).unwrap_or(JKind::Bool);
        let t = match kinds.iter().position(|x| *x == k) {
            Some(t) => t,
            None => {
                kinds.push(k);
                kinds.len() - 1
            }
        };
        tags.push(t);
    }
    (kinds, tags)
}

/// Items of `kinds` kinds (at most 256): a `UnionArray` with one content per kind.
fn union_items(
    items: &[&Json],
    kinds: usize,
    tags: &[usize],
    loc: &str,
    depth: usize,
) -> Result<Layout> {
    if kinds > 256 {
        return Err(Error::Convert {
            location: loc.into(),
            message: "more than 256 kinds of value in one array".into(),
        });
    }
    let mut contents = Vec::with_capacity(kinds);
    for t in 0..kinds {
        let sub: Vec<&Json> = items
            .iter()
            .zip(tags)
            .filter(|(_, &tt)| tt == t)
            .map(|(v, _)| *v)
            .collect();
        contents.push(Arc::new(from_items(&sub, loc, depth + 1)?));
    }
    Ok(Layout::Union(UnionArray::from_tags(
        tags.iter().map(|&t| t as u8).collect(),
        contents,
    )))
}

/// Numbers: `int64` if all fit, else `uint64` if all are non-negative integers, else `float64`.
fn number_items(items: &[&Json]) -> Buffer {
    if items.iter().all(|v| v.is_i64()) {
        Buffer::I64(items.iter().map(|v| v.as_i64().unwrap_or(0)).collect())
    } else if items.iter().all(|v| v.is_u64() || v.is_i64()) {
        Buffer::U64(items.iter().map(|v| v.as_u64().unwrap_or(0)).collect())
    } else {
        Buffer::F64(
            items
                .iter()
                .map(|v| v.as_f64().unwrap_or(f64::NAN))
                .collect(),
        )
    }
}

/// Lists: a `JaggedArray` over their items, flattened.
fn list_items(items: &[&Json], loc: &str, depth: usize) -> Result<Layout> {
    let mut offsets = Vec::with_capacity(items.len() + 1);
    offsets.push(0i64);
    let mut flat: Vec<&Json> = Vec::new();
    for v in items {
        if let Some(a) = v.as_array() {
            flat.extend(a.iter());
        }
        offsets.push(flat.len() as i64);
    }
    let content = from_items(&flat, &format!("{loc}[*]"), depth + 1)?;
    Ok(Layout::Jagged(JaggedArray {
        index: ListIndex::Offsets(offsets),
        content: Arc::new(content),
    }))
}

/// Records with the same keys (`sorted`): a `Table` with one column per key, in the first
/// record's key order.
fn record_items(items: &[&Json], sorted: &[String], loc: &str, depth: usize) -> Result<Layout> {
    let keys: Vec<String> = match items.first().and_then(|v| v.as_object()) {
        Some(m) => m.keys().cloned().collect(),
        None => sorted.to_vec(),
    };
    let mut fields: Vec<(String, Node)> = Vec::with_capacity(keys.len());
    for k in &keys {
        let col: Vec<&Json> = items
            .iter()
            .map(|v| v.get(k).unwrap_or(&Json::Null))
            .collect();
        let sub = from_items(&col, &format!("{loc}.{k}"), depth + 1)?;
        fields.push((k.clone(), Arc::new(sub)));
    }
    Ok(Layout::Table(Table {
        fields,
        rowstart: 0,
        view: None,
    }))
}
