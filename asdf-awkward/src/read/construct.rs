//! Our constructors for every awkward0 class, each node bounded and validated as it is built,
//! and the typed access to call arguments.

use std::sync::Arc;

use serde_json::Value as Json;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::{
    AppendableArray, BitMaskedArray, ChunkedArray, IndexedArray, IndexedMaskedArray, JaggedArray,
    Layout, ListIndex, MaskedArray, SparseArray, SparseDefault, StringArray, Table, TableView,
    UnionArray,
};
use crate::pickle::PyScalar;

use super::dispatch::Ctor;
use super::expr::{schema_err_s, short, Args, Eval, Val};

impl<'a> Eval<'a> {
    /// Registers a new array node: bounds how large the tree becomes when sub-arrays shared
    /// through `ref` are expanded (every later traversal pays that size), then validates it.
    pub(super) fn finish(&mut self, loc: &str, l: Layout) -> Result<Val<'a>> {
        let mut size = 1u64;
        for c in l.children() {
            let child = self.expanded.get(&Arc::as_ptr(c)).copied().unwrap_or(1);
            size = size.saturating_add(child);
        }
        let limit = self.opts.limits.max_expanded_nodes;
        if size > limit {
            return Err(Error::Limit {
                location: loc.to_string(),
                what: "array nodes once shared sub-arrays are expanded",
                value: size,
                limit,
            });
        }
        l.validate_node(loc)?;
        let node = Arc::new(l);
        self.expanded.insert(Arc::as_ptr(&node), size);
        Ok(Val::Array(node))
    }

    /// Runs one constructor call: a buffer, a dtype, or an array node (built by the class's own
    /// function below, then bounded and validated by [`finish`](Self::finish)).
    pub(super) fn construct(&mut self, a: Args<'a>, hint: Option<u64>) -> Result<Val<'a>> {
        let layout = match a.ctor {
            Ctor::FromBuffer => return self.frombuffer(&a),
            Ctor::Zlib | Ctor::Lzma | Ctor::Lz4Block => return self.decompress(&a, hint),
            Ctor::Json2Dtype => {
                let j = a.json(0)?;
                let d = DType::from_json(j).map_err(|m| schema_err_s(a.arg_loc(0), m))?;
                return Ok(Val::DType(Arc::new(d)));
            }
            Ctor::Jagged => Layout::Jagged(JaggedArray {
                index: ListIndex::StartsStops {
                    starts: a.index(0)?,
                    stops: a.index(1)?,
                },
                content: a.array(2)?,
            }),
            Ctor::JaggedFromCounts => Layout::Jagged(JaggedArray {
                index: index_from_counts(&a, "JaggedArray")?,
                content: a.array(1)?,
            }),
            Ctor::JaggedFromOffsets => Layout::Jagged(JaggedArray {
                index: ListIndex::Offsets(a.index(0)?),
                content: a.array(1)?,
            }),
            Ctor::TableFromPairs => table_from_pairs(&a)?,
            Ctor::TableFromView => table_from_view(&a)?,
            Ctor::Chunked => chunked(&a)?,
            Ctor::Appendable => appendable(&a)?,
            Ctor::Indexed => Layout::Indexed(IndexedArray {
                index: a.index(0)?,
                content: a.array(1)?,
            }),
            Ctor::Sparse => self.sparse(&a)?,
            Ctor::Union | Ctor::UnionFromTags => union(&a)?,
            Ctor::Masked => {
                let mask = a.index(0)?.into_iter().map(|m| m != 0).collect();
                let masked_when = a.opt_boolish(2)?.unwrap_or(true);
                let content = a.array(1)?;
                Layout::Masked(MaskedArray {
                    mask,
                    content,
                    masked_when,
                })
            }
            Ctor::BitMasked => {
                let mask = a.bytes_array(0)?;
                let masked_when = a.opt_boolish(2)?.unwrap_or(true);
                let lsb_order = a.opt_boolish(3)?.unwrap_or(false);
                let content = a.array(1)?;
                Layout::BitMasked(BitMaskedArray {
                    mask,
                    content,
                    masked_when,
                    lsb_order,
                })
            }
            Ctor::IndexedMasked => {
                let index = a.index(0)?;
                let masked_when = a.opt_int(2)?.unwrap_or(-1);
                let content = a.array(1)?;
                Layout::IndexedMasked(IndexedMaskedArray {
                    index,
                    content,
                    masked_when,
                })
            }
            Ctor::String | Ctor::StringFromCounts => string(&a)?,
        };
        self.finish(&a.loc, layout)
    }

    /// `SparseArray(length, index, content, default)`: the virtual length bounded first.
    fn sparse(&self, a: &Args<'a>) -> Result<Layout> {
        let length = a
            .json(0)?
            .as_u64()
            .ok_or_else(|| schema_err_s(a.arg_loc(0), "length must be a non-negative integer"))?;
        if length > self.opts.limits.max_virtual_length {
            return Err(Error::Limit {
                location: a.arg_loc(0).to_string(),
                what: "SparseArray length",
                value: length,
                limit: self.opts.limits.max_virtual_length,
            });
        }
        let length = usize::try_from(length)
            .map_err(|_| schema_err_s(a.arg_loc(0), "length does not fit this platform"))?;
        let index = a.index(1)?;
        let content = a.array(2)?;
        let default = sparse_default(a)?;
        Ok(Layout::Sparse(SparseArray {
            length,
            index,
            content,
            default,
        }))
    }
}

/// A list index from the counts in argument 0 of a `fromcounts` constructor of `class`.
fn index_from_counts(a: &Args<'_>, class: &'static str) -> Result<ListIndex> {
    let counts = a.index_cow(0)?;
    ListIndex::from_counts(&counts).ok_or_else(|| {
        Error::invalid(
            class,
            a.arg_loc(0),
            "counts must be non-negative and their sum must fit in int64",
        )
    })
}

/// `Table.frompairs(pairs, rowstart)`: every column an array.
fn table_from_pairs(a: &Args<'_>) -> Result<Layout> {
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
fn table_from_view(a: &Args<'_>) -> Result<Layout> {
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

/// `ChunkedArray(chunks, chunksizes)`: without sizes, each chunk's length.
fn chunked(a: &Args<'_>) -> Result<Layout> {
    let chunks = a.array_list(0)?;
    let sizes = match a.val(1) {
        None => vec![],
        Some(Val::Json(Json::Array(s))) => s
            .iter()
            .map(|x| x.as_u64().and_then(|v| usize::try_from(v).ok()))
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| {
                schema_err_s(a.arg_loc(1), "chunk sizes must be non-negative integers")
            })?,
        other => return Err(a.wrong(1, "a JSON list of chunk sizes", other)),
    };
    let chunksizes = if sizes.is_empty() && !chunks.is_empty() {
        chunks.iter().map(|c| c.len()).collect()
    } else {
        sizes
    };
    Ok(Layout::Chunked(ChunkedArray { chunks, chunksizes }))
}

/// `AppendableArray(chunkshape, dtype, chunks)`: numpy chunks of the array's dtype.
fn appendable(a: &Args<'_>) -> Result<Layout> {
    let chunkshape = match a.val(0) {
        Some(Val::Tuple(t)) | Some(Val::List(t)) => match t.first() {
            Some(Val::Json(j)) => j.as_u64(),
            _ => None,
        },
        Some(Val::Json(j)) => j.as_u64(),
        _ => None,
    }
    .and_then(|v| usize::try_from(v).ok())
    .ok_or_else(|| {
        schema_err_s(
            a.arg_loc(0),
            "chunkshape must be a non-negative integer (or a tuple starting with one)",
        )
    })?;
    let dtype = match a.val(1) {
        Some(Val::DType(d)) => d.clone(),
        other => return Err(a.wrong(1, "a dtype", other)),
    };
    let bad = |why: String| Error::invalid("AppendableArray", &a.loc, why);
    let mut chunks = Vec::new();
    for (i, c) in a.array_list(2)?.into_iter().enumerate() {
        let Layout::Numpy(n) = c.as_ref() else {
            let class = c.class_name();
            return Err(bad(format!(
                "chunk {i} must be a numpy array, found {class}"
            )));
        };
        if n.dtype().primitive != dtype.primitive || n.dtype().inner_shape != dtype.inner_shape {
            return Err(bad(format!(
                "chunk {i} has dtype {} but the array's is {}",
                n.dtype().to_json(),
                dtype.to_json()
            )));
        }
        chunks.push(n.clone());
    }
    Ok(Layout::Appendable(AppendableArray { chunkshape, chunks }))
}

/// A `SparseArray`'s default value (argument 3), from JSON or a pickled Python scalar.
fn sparse_default(a: &Args<'_>) -> Result<SparseDefault> {
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

/// `UnionArray(tags, index, contents)` or `UnionArray.fromtags(tags, contents)`: tags in 0..=255.
fn union(a: &Args<'_>) -> Result<Layout> {
    let tags = a
        .index(0)?
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            u8::try_from(t).map_err(|_| {
                Error::invalid(
                    "UnionArray",
                    a.arg_loc(0),
                    format!("tags[{i}] = {t} is not in 0..=255"),
                )
            })
        })
        .collect::<Result<Vec<u8>>>()?;
    let u = if a.ctor == Ctor::Union {
        let index = a.index(1)?;
        UnionArray {
            tags,
            index,
            contents: a.array_list(2)?,
        }
    } else {
        UnionArray::from_tags(tags, a.array_list(1)?)
    };
    Ok(Layout::Union(u))
}

/// `StringArray(starts, stops, content, encoding)` or `StringArray.fromcounts(counts, content,
/// encoding)`: a missing encoding is utf-8, `null` raw bytes.
fn string(a: &Args<'_>) -> Result<Layout> {
    let (index, content_at) = if a.ctor == Ctor::String {
        let starts = a.index(0)?;
        let stops = a.index(1)?;
        (ListIndex::StartsStops { starts, stops }, 2)
    } else {
        (index_from_counts(a, "StringArray")?, 1)
    };
    let content = a.bytes_array(content_at)?;
    let encoding = match a.val(content_at + 1) {
        None => Some("utf-8".to_string()),
        Some(Val::Json(Json::Null)) => None,
        Some(Val::Json(Json::String(s))) => Some(s.clone()),
        other => return Err(a.wrong(content_at + 1, "an encoding name or null", other)),
    };
    Ok(Layout::String(StringArray {
        index,
        content,
        encoding,
    }))
}

pub(super) fn compose_view(base: &Table, view: TableView, loc: &str) -> Result<TableView> {
    let Some(inner) = &base.view else {
        return Ok(view);
    };
    // A view of a view: express the result as base rows directly.
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
