//! Element values: random access and iteration without JSON, and conversion to/from JSON.

use std::sync::Arc;

use serde_json::Value as Json;

use crate::classes::{RecordArray, RegularArray};
use crate::dtype::Primitive;
use crate::error::{Error, Result};
use crate::layout::{
    AppendableArray, BitMaskedArray, ChunkedArray, IndexedMaskedArray, JaggedArray, Layout,
    ListIndex, Node, SparseArray, SparseDefault, StringArray, Table, UnionArray,
};
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

fn oob(class: &'static str, i: usize, len: usize) -> Error {
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
fn numpy_values(a: &NumpyArray) -> u64 {
    let mut total = 1u64;
    let mut level = 1u64;
    for &n in a.dtype().inner_shape.iter() {
        level = level.saturating_mul(n as u64);
        total = total.saturating_add(level);
    }
    total
}

fn numpy_element(a: &NumpyArray, i: usize) -> Option<Value> {
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

fn decode_string(s: &StringArray, bytes: &[u8]) -> Result<Value> {
    match s.encoding.as_deref() {
        None => Ok(Value::Bytes(bytes.to_vec())),
        Some(_) => match std::str::from_utf8(bytes) {
            Ok(t) => Ok(Value::Str(t.to_string())),
            Err(e) => Err(Error::invalid(
                "StringArray",
                "array",
                format!("string is not valid UTF-8 ({e})"),
            )),
        },
    }
}

fn list_range(
    index: &ListIndex,
    class: &'static str,
    i: usize,
    clen: usize,
) -> Result<(usize, usize)> {
    let (a, b) = index.range(i).ok_or_else(|| oob(class, i, index.len()))?;
    if a == b {
        return Ok((0, 0));
    }
    match (usize::try_from(a), usize::try_from(b)) {
        (Ok(a), Ok(b)) if a <= b && b <= clen => Ok((a, b)),
        _ => Err(Error::invalid(
            class,
            "array",
            format!("list {i} spans {a}..{b}, outside the content of length {clen}"),
        )),
    }
}

/// Estimated memory of one materialised [`Value`] (strings and bytes add their length).
const VALUE_COST: u64 = std::mem::size_of::<Value>() as u64;

/// What materialising values may still cost, against [`Limits::max_materialized_bytes`].
/// Every list (the output, `JaggedArray` elements, inner numpy dimensions, records) charges
/// its slots *before* it is filled, and strings their bytes, so a virtual length (a
/// `SparseArray`) or a fan-out of indexes is refused before anything is built.
struct Budget {
    used: u64,
    limit: u64,
}

impl Budget {
    fn new(limits: &Limits) -> Budget {
        Budget {
            used: 0,
            limit: limits.max_materialized_bytes,
        }
    }

    /// Charges `values` value slots plus `bytes` bytes of text.
    fn take(&mut self, values: u64, bytes: u64) -> Result<()> {
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

/// Number of values [`sparse_zero`] builds for `content`, itself included.
fn sparse_zero_values(content: &Layout) -> u64 {
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

fn sparse_zero(content: &Layout) -> Value {
    match content {
        Layout::Numpy(a) => {
            let zero = match a.dtype().primitive.kind() {
                crate::dtype::Kind::Bool => Value::Bool(false),
                crate::dtype::Kind::Int | crate::dtype::Kind::UInt => Value::Int(0),
                crate::dtype::Kind::Float => Value::Float(0.0),
                crate::dtype::Kind::Complex => Value::Complex(0.0, 0.0),
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
    /// access (one function per class below).
    fn get_depth(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
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
        match self {
            Layout::Numpy(a) => {
                b.take(numpy_values(a) - 1, 0)?;
                numpy_element(a, i).ok_or_else(|| oob("numpy.ndarray", i, len))
            }
            Layout::Jagged(a) => jagged_element(a, i, d, b),
            Layout::String(s) => string_element(s, i, b),
            Layout::Table(t) => table_row(t, i, d, b),
            Layout::Chunked(c) => chunked_element(c, i, len, d, b),
            Layout::Appendable(a) => appendable_element(a, i, len, b),
            Layout::Indexed(a) => {
                let ix = usize::try_from(a.index[i]).map_err(|_| {
                    Error::invalid("IndexedArray", "array", format!("negative index[{i}]"))
                })?;
                a.content.get_depth(ix, d, b)
            }
            Layout::Sparse(s) => sparse_element(s, i, d, b),
            Layout::Union(u) => union_element(u, i, d, b),
            Layout::Masked(m) if m.mask[i] == m.masked_when => Ok(Value::Null),
            Layout::Masked(m) => m.content.get_depth(i, d, b),
            Layout::BitMasked(m) => bit_masked_element(m, i, d, b),
            Layout::Regular(r) => regular_element(r, i, len, d, b),
            Layout::Record(r) => record_element(r, i, d, b),
            Layout::Unmasked(u) => u.content.get_depth(i, d, b),
            Layout::Empty(_) => Err(oob("EmptyArray", i, 0)),
            Layout::Parameters(p) => Ok(p.present(p.content.get_depth(i, d, b)?)),
            Layout::IndexedMasked(m) => indexed_masked_element(m, i, d, b),
        }
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

/// List `i` of a `JaggedArray`.
fn jagged_element(a: &JaggedArray, i: usize, d: usize, b: &mut Budget) -> Result<Value> {
    let (start, stop) = list_range(&a.index, "JaggedArray", i, a.content.len())?;
    b.take((stop - start) as u64, 0)?;
    (start..stop)
        .map(|k| a.content.get_depth(k, d, b))
        .collect::<Result<_>>()
        .map(Value::List)
}

/// String `i` of a `StringArray`.
fn string_element(s: &StringArray, i: usize, b: &mut Budget) -> Result<Value> {
    let (start, stop) = list_range(&s.index, "StringArray", i, s.content.len())?;
    b.take(0, (stop - start) as u64)?;
    decode_string(s, &s.content[start..stop])
}

/// Element `i` of a `ChunkedArray`: found in the chunk that holds it.
fn chunked_element(
    c: &ChunkedArray,
    i: usize,
    len: usize,
    d: usize,
    b: &mut Budget,
) -> Result<Value> {
    let mut k = i;
    for (ch, &n) in c.chunks.iter().zip(&c.chunksizes) {
        if k < n {
            return ch.get_depth(k, d, b);
        }
        k -= n;
    }
    Err(oob("ChunkedArray", i, len))
}

/// Element `i` of an `AppendableArray`: found in the chunk that holds it.
fn appendable_element(a: &AppendableArray, i: usize, len: usize, b: &mut Budget) -> Result<Value> {
    let mut k = i;
    for ch in &a.chunks {
        if k < ch.len() {
            b.take(numpy_values(ch) - 1, 0)?;
            return numpy_element(ch, k).ok_or_else(|| oob("AppendableArray", i, len));
        }
        k -= ch.len();
    }
    Err(oob("AppendableArray", i, len))
}

/// Element `i` of a `SparseArray`: the stored value, or the default.
fn sparse_element(s: &SparseArray, i: usize, d: usize, b: &mut Budget) -> Result<Value> {
    if let Ok(j) = s.index.binary_search(&(i as i64)) {
        return s.content.get_depth(j, d, b);
    }
    Ok(match s.default {
        SparseDefault::Zero => {
            b.take(sparse_zero_values(&s.content) - 1, 0)?;
            sparse_zero(&s.content)
        }
        SparseDefault::Bool(v) => Value::Bool(v),
        SparseDefault::Int(v) => Value::Int(v),
        SparseDefault::Float(v) => Value::Float(v),
    })
}

/// Element `i` of a `UnionArray`: from the content its tag names, at its index.
fn union_element(u: &UnionArray, i: usize, d: usize, b: &mut Budget) -> Result<Value> {
    let t = u.tags[i] as usize;
    let c = u.contents.get(t).ok_or_else(|| {
        Error::invalid(
            "UnionArray",
            "array",
            format!("tags[{i}] = {t} has no content"),
        )
    })?;
    let ix = u
        .index
        .get(i)
        .and_then(|&x| usize::try_from(x).ok())
        .ok_or_else(|| Error::invalid("UnionArray", "array", format!("bad index[{i}]")))?;
    c.get_depth(ix, d, b)
}

/// Element `i` of a `BitMaskedArray`: null where its bit says masked.
fn bit_masked_element(m: &BitMaskedArray, i: usize, d: usize, b: &mut Budget) -> Result<Value> {
    let bit = m.bit(i).ok_or_else(|| {
        Error::invalid(
            "BitMaskedArray",
            "array",
            format!("no mask bit for element {i}"),
        )
    })?;
    if bit == m.masked_when {
        Ok(Value::Null)
    } else {
        m.content.get_depth(i, d, b)
    }
}

/// List `i` of a `RegularArray`.
fn regular_element(
    r: &RegularArray,
    i: usize,
    len: usize,
    d: usize,
    b: &mut Budget,
) -> Result<Value> {
    let (start, stop) = r
        .range(i)
        .filter(|&(_, stop)| stop <= r.content.len())
        .ok_or_else(|| oob("RegularArray", i, len))?;
    b.take(r.size as u64, 0)?;
    (start..stop)
        .map(|k| r.content.get_depth(k, d, b))
        .collect::<Result<_>>()
        .map(Value::List)
}

/// Record `i` of a `RecordArray`, fields in order.
fn record_element(r: &RecordArray, i: usize, d: usize, b: &mut Budget) -> Result<Value> {
    let names: usize = r.fields.iter().flatten().map(String::len).sum();
    b.take(r.contents.len() as u64, names as u64)?;
    let mut out = Vec::with_capacity(r.contents.len());
    for (k, c) in r.contents.iter().enumerate() {
        out.push((r.field_name(k), c.get_depth(i, d, b)?));
    }
    Ok(Value::Record(out))
}

/// Element `i` of an `IndexedMaskedArray`: null where its index says masked.
fn indexed_masked_element(
    m: &IndexedMaskedArray,
    i: usize,
    d: usize,
    b: &mut Budget,
) -> Result<Value> {
    let ix = m.index[i];
    if ix == m.masked_when {
        return Ok(Value::Null);
    }
    let ix = usize::try_from(ix).map_err(|_| {
        Error::invalid(
            "IndexedMaskedArray",
            "array",
            format!("negative index[{i}] = {ix}"),
        )
    })?;
    m.content.get_depth(ix, d, b)
}

fn table_row(t: &Table, i: usize, d: usize, b: &mut Budget) -> Result<Value> {
    let row = t.base_row(i).ok_or_else(|| {
        Error::invalid(
            "Table",
            "array",
            format!("view row {i} is outside the base"),
        )
    })?;
    let names: usize = t.fields.iter().map(|(name, _)| name.len()).sum();
    b.take(t.fields.len() as u64, names as u64)?;
    let mut out = Vec::with_capacity(t.fields.len());
    for (name, col) in &t.fields {
        out.push((name.clone(), col.get_depth(row, d, b)?));
    }
    Ok(Value::Record(out))
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
