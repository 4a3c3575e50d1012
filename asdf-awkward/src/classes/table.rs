//! `Table`: named columns (awkward0's record array), possibly a view of its base rows.

use std::sync::Arc;

use serde_json::{json, Map, Value as Json};

use crate::call::{schema_err_s, Args, Constructor, Val};
use crate::element::{Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{
    call, check_index, finish_form, form_node, lit, Awkward0Writer, Awkward2Writer, Class,
    IndexOver, Layout, Node,
};

/// How a `Table` view selects rows of its base.
#[derive(Debug, Clone, PartialEq)]
pub enum TableView {
    /// Row `i` is base row `start + step·i`, for `length` rows.
    Slice {
        /// First row.
        start: i64,
        /// Stride (may be negative, not zero).
        step: i64,
        /// Number of rows.
        length: i64,
    },
    /// Row `i` is base row `index[i]`.
    Index(Vec<i64>),
}

/// `Table`: named columns (a record array), possibly a view of its base rows.
///
/// ```
/// use std::sync::Arc;
/// use asdf_awkward::{Buffer, Layout, NumpyArray, Table, TableView};
/// let x = Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::I64(vec![1, 2, 3]))));
/// let t = Table { fields: vec![("x".into(), x)], rowstart: 0, view: Some(TableView::Index(vec![2, 0])) };
/// assert_eq!(Layout::Table(t).to_json().unwrap(), serde_json::json!([{"x": 3}, {"x": 1}]));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Columns in order.
    pub fields: Vec<(String, Node)>,
    /// awkward0's `rowstart` (row numbering only; no effect on values).
    pub rowstart: i64,
    /// Row selection, when the table is a view.
    pub view: Option<TableView>,
}

impl Table {
    /// Checks that the view (a slice or an index) stays within the base rows.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        let base = self.base_len() as i64;
        match &self.view {
            None => Ok(()),
            Some(TableView::Index(ix)) => check_index("Table", location, ix, base as usize),
            Some(TableView::Slice {
                start,
                step,
                length,
            }) => {
                let (start, step, length) = (*start, *step, *length);
                let bad = |why: &str| {
                    Error::invalid(
                        "Table",
                        location,
                        format!("view ({start}, {step}, {length}) {why}"),
                    )
                };
                if length < 0 || step == 0 {
                    return Err(bad("needs length >= 0 and step != 0"));
                }
                let last = (length - 1)
                    .checked_mul(step)
                    .and_then(|d| d.checked_add(start));
                let in_range = |r: i64| (0..base).contains(&r);
                if length > 0 && (!in_range(start) || !last.is_some_and(in_range)) {
                    return Err(bad(&format!("reaches outside the {base} base rows")));
                }
                Ok(())
            }
        }
    }

    /// Rows of the unviewed base: the shortest column's length (0 without columns).
    pub fn base_len(&self) -> usize {
        self.fields.iter().map(|(_, c)| c.len()).min().unwrap_or(0)
    }

    /// The base row of view row `i`.
    pub fn base_row(&self, i: usize) -> Option<usize> {
        match &self.view {
            None => Some(i),
            Some(TableView::Slice { start, step, .. }) => {
                let r = (i as i64).checked_mul(*step)?.checked_add(*start)?;
                usize::try_from(r).ok()
            }
            Some(TableView::Index(ix)) => usize::try_from(*ix.get(i)?).ok(),
        }
    }
}

/// awkward0's constructors: `Table.frompairs(pairs, rowstart)` and `Table.fromview(view, base)`.
pub(crate) const CONSTRUCTORS: &[Constructor] = &[
    Constructor {
        path: &["Table", "frompairs"],
        name: "Table.frompairs",
        params: &["pairs", "rowstart"],
        required: 1,
        build: from_pairs,
    },
    Constructor {
        path: &["Table", "fromview"],
        name: "Table.fromview",
        params: &["view", "base"],
        required: 2,
        build: from_view,
    },
];

/// `Table.frompairs(pairs, rowstart)`: every column an array.
fn from_pairs(a: &Args<'_>) -> Result<Layout> {
    let pairs = match a.val(0) {
        Some(Val::Pairs(p)) => p.clone(),
        other => return Err(a.wrong(0, "a 'pairs' expression", other)),
    };
    let mut fields = Vec::with_capacity(pairs.len());
    for (name, v) in pairs.iter() {
        match v {
            Val::Array(n) => fields.push((name.to_string(), n.clone())),
            other => {
                return Err(schema_err_s(
                    a.arg_loc(0),
                    format!("column {name:?} must be an array, found {}", other.kind()),
                ))
            }
        }
    }
    let rowstart = a.opt_int(1)?.unwrap_or(0);
    Ok(Layout::Table(Table {
        fields,
        rowstart,
        view: None,
    }))
}

/// `Table.fromview(view, base)`: a view (a slice or an index) of a Table, composed with the
/// base's own view.
fn from_view(a: &Args<'_>) -> Result<Layout> {
    let base = match a.val(1) {
        Some(Val::Array(n)) => match n.as_ref() {
            Layout::Table(t) => t.clone(),
            other => {
                return Err(schema_err_s(
                    a.arg_loc(1),
                    format!(
                        "the base of Table.fromview must be a Table, found {}",
                        other.class_name()
                    ),
                ))
            }
        },
        other => return Err(a.wrong(1, "a Table", other)),
    };
    let view = match a.val(0) {
        Some(Val::Tuple(t)) | Some(Val::List(t)) if t.len() == 3 => slice_view(a, t)?,
        Some(Val::Array(_)) => TableView::Index(a.index(0)?),
        other => return Err(a.wrong(0, "a (start, step, length) tuple or an index array", other)),
    };
    let view = compose_view(&base, view, &a.loc)?;
    Ok(Layout::Table(Table {
        view: Some(view),
        ..base
    }))
}

/// A `(start, step, length)` view of integers.
fn slice_view(a: &Args<'_>, t: &[Val<'_>]) -> Result<TableView> {
    let mut v = [0i64; 3];
    for (k, x) in t.iter().enumerate() {
        v[k] = match x {
            Val::Json(j) if j.is_i64() => j.as_i64().unwrap_or(0),
            other => {
                return Err(schema_err_s(
                    a.arg_loc(0),
                    format!(
                        "view (start, step, length) must be integers, found {}",
                        other.kind()
                    ),
                ))
            }
        };
    }
    Ok(TableView::Slice {
        start: v[0],
        step: v[1],
        length: v[2],
    })
}

/// A view of a view, expressed as base rows directly.
fn compose_view(base: &Table, view: TableView, loc: &str) -> Result<TableView> {
    let Some(inner) = &base.view else {
        return Ok(view);
    };
    let tmp = Table {
        fields: vec![],
        rowstart: 0,
        view: Some(view.clone()),
    };
    let n = match &view {
        TableView::Slice { length, .. } => (*length).max(0) as usize,
        TableView::Index(ix) => ix.len(),
    };
    let inner_table = Table {
        fields: vec![],
        rowstart: 0,
        view: Some(inner.clone()),
    };
    let mut out = Vec::with_capacity(n.min(1 << 24));
    for i in 0..n {
        let r = tmp
            .base_row(i)
            .and_then(|r| inner_table.base_row(r))
            .ok_or_else(|| {
                Error::invalid("Table", loc, format!("view row {i} falls outside its base"))
            })?;
        out.push(r as i64);
    }
    Ok(TableView::Index(out))
}

impl Class for Table {
    fn name(&self) -> &'static str {
        "Table"
    }

    fn len(&self) -> usize {
        match &self.view {
            Some(TableView::Slice { length, .. }) => (*length).max(0) as usize,
            Some(TableView::Index(ix)) => ix.len(),
            None => self.base_len(),
        }
    }

    fn children(&self) -> Vec<&Node> {
        self.fields.iter().map(|(_, c)| c).collect()
    }

    fn validate_node(&self, location: &str) -> Result<()> {
        Table::validate_node(self, location)
    }

    /// A `RecordArray`; a view becomes an `IndexedArray` over its base rows.
    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        if let Some(top) = self.index_view() {
            return w.indexed(top, depth);
        }
        let key = w.key();
        let mut contents = Vec::with_capacity(self.fields.len());
        for (_, c) in &self.fields {
            contents.push(w.form(c, depth)?);
        }
        let mut m = form_node("RecordArray", &key);
        let names: Vec<&str> = self.fields.iter().map(|(n, _)| n.as_str()).collect();
        m.insert("fields".into(), json!(names));
        m.insert("contents".into(), Json::Array(contents));
        Ok(finish_form(m, json!({})))
    }

    /// A view: its rows as an index over the unviewed table.
    fn index_view(&self) -> Option<IndexOver> {
        self.view.as_ref()?;
        let index = (0..Class::len(self))
            .map(|i| self.base_row(i).map_or(-1, |r| r as i64))
            .collect();
        let base = Table {
            view: None,
            ..self.clone()
        };
        Some(IndexOver {
            index,
            content: Arc::new(Layout::Table(base)),
            option: false,
        })
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        let row = self.base_row(i).ok_or_else(|| {
            Error::invalid(
                "Table",
                "array",
                format!("view row {i} is outside the base"),
            )
        })?;
        let names: usize = self.fields.iter().map(|(name, _)| name.len()).sum();
        b.take(self.fields.len() as u64, names as u64)?;
        let mut out = Vec::with_capacity(self.fields.len());
        for (name, col) in &self.fields {
            out.push((name.clone(), col.get_depth(row, depth, b)?));
        }
        Ok(Value::Record(out))
    }

    /// Its columns as pairs, then its view (a slice or an index) if it has one.
    fn write_awkward0(
        &self,
        w: &mut dyn Awkward0Writer,
        _ctx: &str,
        _id: u64,
        depth: usize,
    ) -> Result<Map<String, Json>> {
        let mut pairs = Vec::with_capacity(self.fields.len());
        for (name, col) in &self.fields {
            let e = w.child(col, "Table.contents", depth)?;
            pairs.push(json!([name, e]));
        }
        let base = call(
            w.spec(&["Table", "frompairs"]),
            vec![json!({ "pairs": pairs }), lit(self.rowstart)],
        );
        let view = match &self.view {
            None => return Ok(base),
            Some(TableView::Slice {
                start,
                step,
                length,
            }) => json!({ "tuple": [lit(*start), lit(*step), lit(*length)] }),
            Some(TableView::Index(ix)) => w.index(ix, "Table.view")?,
        };
        Ok(call(
            w.spec(&["Table", "fromview"]),
            vec![view, Json::Object(base)],
        ))
    }
}
