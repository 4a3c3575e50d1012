//! One awkward0 constructor call as a class sees it: the values its arguments evaluated to
//! ([`Val`]), typed access to them with errors that name where each came from ([`Args`]), and
//! the [`Constructor`] entry a class registers for each awkward0 call it answers to.
//!
//! The schema evaluator (`read`) produces these; the classes (`classes`) consume them. Neither
//! imports the other.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value as Json;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::{Layout, ListIndex, Node};
use crate::limits::Limits;
use crate::numpy::Buffer;
use crate::pickle::PyScalar;

/// An awkward0 constructor a class answers to: `awkward0.<path>(<params>)`.
#[derive(Debug)]
pub(crate) struct Constructor {
    /// The call's path below the `awkward0` module (`["JaggedArray", "fromcounts"]`).
    pub(crate) path: &'static [&'static str],
    /// The name in messages (`"JaggedArray.fromcounts"`).
    pub(crate) name: &'static str,
    /// Parameter names, positional order (keyword arguments fill the same slots).
    pub(crate) params: &'static [&'static str],
    /// How many leading parameters are required.
    pub(crate) required: usize,
    /// Builds the node from the evaluated arguments (the reader then bounds and validates it).
    pub(crate) build: fn(&Args<'_>) -> Result<Layout>,
}

/// A value produced by an expression.
#[derive(Clone)]
pub(crate) enum Val<'a> {
    Json(&'a Json),
    Blob(Arc<Cow<'a, [u8]>>),
    List(Arc<Vec<Val<'a>>>),
    Tuple(Arc<Vec<Val<'a>>>),
    Dict(Arc<Vec<(&'a str, Val<'a>)>>),
    Pairs(Arc<Vec<(&'a str, Val<'a>)>>),
    DType(Arc<DType>),
    Array(Node),
    PyScalar(PyScalar),
}

impl Val<'_> {
    pub(crate) fn kind(&self) -> String {
        match self {
            Val::Json(j) => format!("the JSON value {}", short(j)),
            Val::Blob(b) => format!("a raw blob of {} bytes", b.len()),
            Val::List(_) => "a list".into(),
            Val::Tuple(_) => "a tuple".into(),
            Val::Dict(d) => format!(
                "a dict with keys {:?}",
                d.iter().map(|(k, _)| *k).collect::<Vec<_>>()
            ),
            Val::Pairs(_) => "a list of pairs".into(),
            Val::DType(_) => "a dtype".into(),
            Val::Array(a) => format!("an array ({})", a.class_name()),
            Val::PyScalar(p) => format!("the pickled scalar {p:?}"),
        }
    }
}

/// A JSON value shortened for messages.
pub(crate) fn short(j: &Json) -> String {
    let s = j.to_string();
    if s.len() > 60 {
        let mut end = 57;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    } else {
        s
    }
}

/// Builds a schema error at `loc`.
pub(crate) fn schema_err_s(loc: &str, message: impl Into<String>) -> Error {
    Error::Schema {
        location: loc.to_string(),
        message: message.into(),
    }
}

/// The evaluated arguments of one constructor call, with where each came from.
pub(crate) struct Args<'a> {
    /// The constructor's name, for messages (`JaggedArray.fromcounts`).
    pub(crate) name: &'static str,
    pub(crate) slots: Vec<Option<(Val<'a>, String)>>,
    pub(crate) params: &'static [&'static str],
    pub(crate) loc: String,
    /// The reader's limits (what a class checks beyond its data, e.g. a virtual length).
    pub(crate) limits: &'a Limits,
}

impl<'a> Args<'a> {
    pub(crate) fn val(&self, i: usize) -> Option<&Val<'a>> {
        self.slots.get(i).and_then(|s| s.as_ref()).map(|(v, _)| v)
    }

    pub(crate) fn arg_loc(&self, i: usize) -> &str {
        self.slots
            .get(i)
            .and_then(|s| s.as_ref())
            .map(|(_, l)| l.as_str())
            .unwrap_or(&self.loc)
    }

    pub(crate) fn wrong(&self, i: usize, expected: &str, found: Option<&Val<'a>>) -> Error {
        let found = found.map_or("nothing".to_string(), |v| v.kind());
        schema_err_s(
            self.arg_loc(i),
            format!(
                "argument {:?} of {} must be {expected}, found {found}",
                self.params.get(i).copied().unwrap_or("?"),
                self.name
            ),
        )
    }

    pub(crate) fn json(&self, i: usize) -> Result<&'a Json> {
        match self.val(i) {
            Some(Val::Json(j)) => Ok(j),
            other => Err(self.wrong(i, "a JSON value", other)),
        }
    }

    pub(crate) fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match self.val(i) {
            None => Ok(None),
            Some(Val::Json(j)) if j.is_i64() => Ok(j.as_i64()),
            other => Err(self.wrong(i, "an integer", other)),
        }
    }

    pub(crate) fn opt_boolish(&self, i: usize) -> Result<Option<bool>> {
        match self.val(i) {
            None => Ok(None),
            Some(Val::Json(Json::Bool(b))) => Ok(Some(*b)),
            Some(Val::Json(j)) if j.as_i64() == Some(0) => Ok(Some(false)),
            Some(Val::Json(j)) if j.as_i64() == Some(1) => Ok(Some(true)),
            other => Err(self.wrong(i, "a boolean", other)),
        }
    }

    pub(crate) fn array(&self, i: usize) -> Result<Node> {
        match self.val(i) {
            Some(Val::Array(n)) => Ok(n.clone()),
            other => Err(self.wrong(i, "an array", other)),
        }
    }

    pub(crate) fn array_list(&self, i: usize) -> Result<Vec<Node>> {
        match self.val(i) {
            Some(Val::List(l)) | Some(Val::Tuple(l)) => l
                .iter()
                .enumerate()
                .map(|(k, v)| match v {
                    Val::Array(n) => Ok(n.clone()),
                    other => Err(schema_err_s(
                        self.arg_loc(i),
                        format!("item {k} must be an array, found {}", other.kind()),
                    )),
                })
                .collect(),
            other => Err(self.wrong(i, "a list of arrays", other)),
        }
    }

    /// A 1-D integer (or bool) numpy array as `i64`s.
    pub(crate) fn index(&self, i: usize) -> Result<Vec<i64>> {
        self.index_cow(i).map(|c| c.into_owned())
    }

    /// Like [`index`](Self::index), borrowing when the leaf is already `int64`.
    pub(crate) fn index_cow(&self, i: usize) -> Result<Cow<'_, [i64]>> {
        match self.val(i) {
            Some(Val::Array(n)) => match n.as_ref() {
                Layout::Numpy(a) => a.as_i64s().ok_or_else(|| {
                    schema_err_s(
                        self.arg_loc(i),
                        format!(
                            "argument {:?} of {} must be a 1-D integer array that fits int64, found dtype {}",
                            self.params.get(i).copied().unwrap_or("?"),
                            self.name,
                            a.dtype().to_json()
                        ),
                    )
                }),
                other => Err(schema_err_s(self.arg_loc(i), format!("must be a numpy array, found {}", other.class_name()))),
            },
            other => Err(self.wrong(i, "an integer array", other)),
        }
    }

    /// A 1-D one-byte numpy array (uint8, int8 or bool) as bytes.
    pub(crate) fn bytes_array(&self, i: usize) -> Result<Vec<u8>> {
        match self.val(i) {
            Some(Val::Array(n)) => match n.as_ref() {
                Layout::Numpy(a) if a.dtype().inner_shape.is_empty() => match a.data() {
                    Buffer::U8(v) => Ok(v.clone()),
                    Buffer::I8(v) => Ok(v.iter().map(|&x| x as u8).collect()),
                    Buffer::Bool(v) => Ok(v.iter().map(|&x| x as u8).collect()),
                    _ => Err(self.wrong(i, "a 1-byte (uint8) array", self.val(i))),
                },
                _ => Err(self.wrong(i, "a 1-D uint8 array", self.val(i))),
            },
            other => Err(self.wrong(i, "a uint8 array", other)),
        }
    }

    /// A list index from the counts in argument `i` of a `fromcounts` constructor of `class`.
    pub(crate) fn counts_index(&self, i: usize, class: &'static str) -> Result<ListIndex> {
        let counts = self.index_cow(i)?;
        ListIndex::from_counts(&counts).ok_or_else(|| {
            Error::invalid(
                class,
                self.arg_loc(i),
                "counts must be non-negative and their sum must fit in int64",
            )
        })
    }
}
