//! `RecordArray`: named fields or a tuple, with an explicit length (awkward 2's `RecordArray`).

use serde_json::{json, Map, Value as Json};

use crate::element::{Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{finish_form, Awkward2Writer, Class, Layout, Node, Table, TableView};

/// `length` records; field `k` of record `i` is `contents[k][i]`. Contents may be longer than
/// `length`. `fields: None` is a tuple (awkward 2's `fields: null`); its elements read as records
/// with fields `"0"`, `"1"`, ..., the way awkward0 names tuple columns.
///
/// ```
/// use std::sync::Arc;
/// use asdf_awkward::{Buffer, Layout, NumpyArray, RecordArray};
/// let x = Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::I64(vec![1, 2, 3]))));
/// let r = Layout::Record(RecordArray { fields: Some(vec!["x".into()]), contents: vec![x], length: 2 });
/// assert_eq!(r.to_json().unwrap(), serde_json::json!([{"x": 1}, {"x": 2}]));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RecordArray {
    /// Field names, or `None` for a tuple.
    pub fields: Option<Vec<String>>,
    /// One array per field.
    pub contents: Vec<Node>,
    /// Number of records (explicit: a record with no fields still has a length).
    pub length: usize,
}

impl RecordArray {
    /// The name of field `k` (`"k"` for tuples).
    pub fn field_name(&self, k: usize) -> String {
        match &self.fields {
            Some(f) => f.get(k).cloned().unwrap_or_default(),
            None => k.to_string(),
        }
    }

    /// Checks the field list against the contents and every content against the length.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        if let Some(f) = &self.fields {
            if f.len() != self.contents.len() {
                return Err(Error::invalid(
                    "RecordArray",
                    location,
                    format!(
                        "{} field names for {} contents",
                        f.len(),
                        self.contents.len()
                    ),
                ));
            }
        }
        for (k, c) in self.contents.iter().enumerate() {
            if c.len() < self.length {
                return Err(Error::invalid(
                    "RecordArray",
                    location,
                    format!(
                        "field {:?} has {} elements, the record array {}",
                        self.field_name(k),
                        c.len(),
                        self.length
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The awkward 2 form node (without `contents`, which the caller adds).
    pub(crate) fn form_node(&self) -> Map<String, Json> {
        let mut m = Map::new();
        m.insert("class".into(), json!("RecordArray"));
        m.insert(
            "fields".into(),
            match &self.fields {
                Some(f) => json!(f),
                None => Json::Null,
            },
        );
        m
    }

    /// awkward0's `Table` (tuples get fields `"0"`, `"1"`, ...); a view keeps only `length` rows
    /// when the contents are longer.
    pub(crate) fn to_awkward0(&self) -> Result<Layout> {
        let fields: Vec<(String, Node)> = self
            .contents
            .iter()
            .enumerate()
            .map(|(k, c)| (self.field_name(k), c.clone()))
            .collect();
        let mut t = Table {
            fields,
            rowstart: 0,
            view: None,
        };
        let base = t.base_len();
        if self.contents.is_empty() && self.length > 0 {
            return Err(Error::Unsupported {
                location: "array".into(),
                what: format!(
                    "a record array with no fields and length {} has no awkward0 Table",
                    self.length
                ),
            });
        }
        if base != self.length {
            t.view = Some(TableView::Slice {
                start: 0,
                step: 1,
                length: i64::try_from(self.length).map_err(|_| {
                    Error::invalid("RecordArray", "array", "length does not fit i64")
                })?,
            });
        }
        Ok(Layout::Table(t))
    }
}

impl Class for RecordArray {
    fn name(&self) -> &'static str {
        "RecordArray"
    }

    fn len(&self) -> usize {
        self.length
    }

    fn children(&self) -> Vec<&Node> {
        self.contents.iter().collect()
    }

    fn validate_node(&self, location: &str) -> Result<()> {
        RecordArray::validate_node(self, location)
    }

    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        let key = w.key();
        let mut m = self.form_node();
        m.insert("form_key".into(), json!(key));
        let mut contents = Vec::with_capacity(self.contents.len());
        for c in &self.contents {
            contents.push(w.form(c, depth)?);
        }
        m.insert("contents".into(), Json::Array(contents));
        Ok(finish_form(m, json!({})))
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        let names: usize = self.fields.iter().flatten().map(String::len).sum();
        b.take(self.contents.len() as u64, names as u64)?;
        let mut out = Vec::with_capacity(self.contents.len());
        for (k, c) in self.contents.iter().enumerate() {
            out.push((self.field_name(k), c.get_depth(i, depth, b)?));
        }
        Ok(Value::Record(out))
    }

    fn awkward0_stand_in(&self) -> Result<Option<Node>> {
        Ok(Some(Node::new(self.to_awkward0()?)))
    }
}
