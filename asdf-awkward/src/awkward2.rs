//! Conversion to awkward 2's `ak.from_buffers` input: a form (JSON), a length and named buffers.
//!
//! Defined for numpy leaves, jagged arrays, tables (and their views), indexed and all three
//! option encodings, unions and strings; `AppendableArray` becomes one concatenated leaf.
//! `ChunkedArray` and `SparseArray` have no awkward 2 form without materializing them and are
//! refused, as are non-canonical nestings awkward 2 rejects (an option over a union, a union of
//! unions, a union mixing optional and non-optional contents, tags ≥ 128).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Map, Value as Json};

use crate::dtype::Primitive;
use crate::error::{Error, Result};
use crate::layout::{Layout, ListIndex, Node, Table, UnionArray};

/// What `ak.from_buffers(form, length, container)` takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Awkward2Buffers {
    /// The form, as awkward 2's `form.to_dict()` JSON.
    pub form: Json,
    /// Top-level length.
    pub length: usize,
    /// Buffers by key (`node<N>-<attribute>`), little-endian.
    pub buffers: BTreeMap<String, Vec<u8>>,
}

/// Converts a layout to awkward 2 buffers, form keys `node0`, `node1`, ... in pre-order.
///
/// ```
/// use asdf_awkward::{Layout, to_awkward2};
/// let a = Layout::from_json(&serde_json::json!([[1.1, 2.2], [], [3.3]])).unwrap();
/// let b = to_awkward2(&a).unwrap();
/// assert_eq!(b.form["class"], "ListOffsetArray");
/// assert_eq!(b.length, 3);
/// assert_eq!(b.buffers["node0-offsets"].len(), 4 * 8);
/// ```
pub fn to_awkward2(layout: &Layout) -> Result<Awkward2Buffers> {
    layout.validate()?;
    let mut c = Conv {
        next: 0,
        buffers: BTreeMap::new(),
        bytes: 0,
    };
    let form = c.form(layout, 0)?;
    Ok(Awkward2Buffers {
        form,
        length: layout.len(),
        buffers: c.buffers,
    })
}

struct Conv {
    next: usize,
    buffers: BTreeMap<String, Vec<u8>>,
    /// Bytes of buffers so far: awkward 2 forms are trees, so sub-arrays shared through `ref`
    /// are copied; this bounds what a DAG can expand to.
    bytes: u64,
}

/// Most form nodes an export may produce (shared sub-arrays are expanded).
const MAX_FORM_NODES: usize = 100_000;
/// Most buffer bytes an export may produce.
const MAX_EXPORT_BYTES: u64 = 1 << 40;

fn unsupported(what: impl Into<String>) -> Error {
    Error::Unsupported {
        location: "awkward 2 export".into(),
        what: what.into(),
    }
}

fn i64_bytes(v: &[i64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 8);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

fn node(class: &str, key: &str) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("class".into(), json!(class));
    m.insert("form_key".into(), json!(key));
    m
}

fn finish(mut m: Map<String, Json>, parameters: Json) -> Json {
    let key = m.remove("form_key").unwrap_or(Json::Null);
    m.insert("parameters".into(), parameters);
    m.insert("form_key".into(), key);
    Json::Object(m)
}

/// An indexed or optional view over a content: `index[i]` (or -1 for missing).
struct IndexOver {
    index: Vec<i64>,
    content: Node,
    option: bool,
}

fn as_index_over(l: &Layout) -> Option<IndexOver> {
    match l {
        Layout::Indexed(a) => Some(IndexOver {
            index: a.index.clone(),
            content: a.content.clone(),
            option: false,
        }),
        Layout::IndexedMasked(m) => Some(IndexOver {
            index: m
                .index
                .iter()
                .map(|&x| if x == m.masked_when { -1 } else { x })
                .collect(),
            content: m.content.clone(),
            option: true,
        }),
        Layout::Masked(m) => Some(IndexOver {
            index: m
                .mask
                .iter()
                .enumerate()
                .map(|(i, &b)| if b == m.masked_when { -1 } else { i as i64 })
                .collect(),
            content: m.content.clone(),
            option: true,
        }),
        Layout::BitMasked(m) => Some(IndexOver {
            index: (0..m.content.len())
                .map(|i| {
                    if m.bit(i) == Some(m.masked_when) {
                        -1
                    } else {
                        i as i64
                    }
                })
                .collect(),
            content: m.content.clone(),
            option: true,
        }),
        Layout::Unmasked(u) => Some(IndexOver {
            index: (0..u.content.len() as i64).collect(),
            content: u.content.clone(),
            option: true,
        }),
        Layout::Table(t) if t.view.is_some() => {
            let n = l.len();
            let index = (0..n)
                .map(|i| t.base_row(i).map_or(-1, |r| r as i64))
                .collect();
            Some(IndexOver {
                index,
                content: Arc::new(Layout::Table(Table {
                    view: None,
                    ..t.clone()
                })),
                option: false,
            })
        }
        _ => None,
    }
}

/// Moves an index (and option) that sits over a union into the union: awkward 2 only allows
/// unions of (all optional or all non-optional) contents, never an option over a union.
fn push_into_union(top: &IndexOver, u: &UnionArray) -> Result<UnionArray> {
    let n = top.index.len();
    let mut tags = Vec::with_capacity(n);
    let mut index = Vec::with_capacity(n);
    let mut per: Vec<Vec<i64>> = vec![Vec::new(); u.contents.len().max(1)];
    for &i in &top.index {
        let (t, j) = if i < 0 {
            (0u8, -1)
        } else {
            let i = i as usize;
            match (u.tags.get(i), u.index.get(i)) {
                (Some(&t), Some(&j)) => (t, j),
                _ => return Err(unsupported("index outside its union")),
            }
        };
        let slot = per
            .get_mut(t as usize)
            .ok_or_else(|| unsupported("union tag without content"))?;
        tags.push(t);
        index.push(slot.len() as i64);
        slot.push(j);
    }
    let contents = u
        .contents
        .iter()
        .zip(per)
        .map(|(c, ix)| {
            Arc::new(if top.option {
                Layout::IndexedMasked(crate::layout::IndexedMaskedArray {
                    index: ix,
                    content: c.clone(),
                    masked_when: -1,
                })
            } else {
                Layout::Indexed(crate::layout::IndexedArray {
                    index: ix,
                    content: c.clone(),
                })
            })
        })
        .collect();
    Ok(UnionArray {
        tags,
        index,
        contents,
    })
}

/// `l` without the parameter wrappers around it.
fn strip(mut l: &Layout) -> &Layout {
    while let Layout::Parameters(p) = l {
        l = &p.content;
    }
    l
}

/// Whether `l` exports as an option type (directly, or through a chain of indexed nodes).
fn is_option(l: &Layout) -> bool {
    let mut cur = as_index_over(strip(l));
    let mut guard = 0;
    while let Some(io) = cur {
        if io.option {
            return true;
        }
        guard += 1;
        if guard > crate::layout::MAX_NESTING {
            return false;
        }
        cur = as_index_over(&io.content);
    }
    false
}

impl Conv {
    fn key(&mut self) -> String {
        let k = format!("node{}", self.next);
        self.next += 1;
        k
    }

    fn put(&mut self, key: String, bytes: Vec<u8>) -> Result<()> {
        self.bytes = self.bytes.saturating_add(bytes.len() as u64);
        if self.next > MAX_FORM_NODES || self.bytes > MAX_EXPORT_BYTES {
            return Err(unsupported(
                "sub-arrays shared through refs expand to too large an awkward 2 tree",
            ));
        }
        self.buffers.insert(key, bytes);
        Ok(())
    }

    /// The form of `l`: one arm per layout class (a dispatch table, kept whole on purpose).
    fn form(&mut self, l: &Layout, depth: usize) -> Result<Json> {
        if depth > crate::layout::MAX_NESTING {
            return Err(unsupported("nesting too deep"));
        }
        let d = depth + 1;
        match l {
            Layout::Numpy(a) => {
                let key = self.key();
                self.put(format!("{key}-data"), a.data().to_le_bytes())?;
                let mut m = node("NumpyArray", &key);
                m.insert("primitive".into(), json!(a.dtype().primitive.awkward2_name()));
                m.insert("inner_shape".into(), json!(a.dtype().inner_shape));
                Ok(finish(m, json!({})))
            }
            Layout::Appendable(a) => {
                let key = self.key();
                let mut data = Vec::new();
                for c in &a.chunks {
                    data.extend_from_slice(&c.data().to_le_bytes());
                }
                let (prim, inner) = match a.chunks.first() {
                    Some(c) => (c.dtype().primitive.clone(), c.dtype().inner_shape.clone()),
                    None => (Primitive::F64, vec![]),
                };
                self.put(format!("{key}-data"), data)?;
                let mut m = node("NumpyArray", &key);
                m.insert("primitive".into(), json!(prim.awkward2_name()));
                m.insert("inner_shape".into(), json!(inner));
                Ok(finish(m, json!({})))
            }
            Layout::Jagged(j) => {
                let key = self.key();
                let m = self.list(&key, &j.index)?;
                let content = self.form(&j.content, d)?;
                let mut m = m;
                m.insert("content".into(), content);
                Ok(finish(m, json!({})))
            }
            Layout::String(s) => {
                let key = self.key();
                let mut m = self.list(&key, &s.index)?;
                let (outer, inner) = if s.encoding.is_some() {
                    ("string", "char")
                } else {
                    ("bytestring", "byte")
                };
                let ckey = self.key();
                self.put(format!("{ckey}-data"), s.content.clone())?;
                let mut c = node("NumpyArray", &ckey);
                c.insert("primitive".into(), json!("uint8"));
                c.insert("inner_shape".into(), json!([]));
                m.insert("content".into(), finish(c, json!({ "__array__": inner })));
                Ok(finish(m, json!({ "__array__": outer })))
            }
            Layout::Table(t) if t.view.is_none() => {
                let key = self.key();
                let mut contents = Vec::with_capacity(t.fields.len());
                for (_, c) in &t.fields {
                    contents.push(self.form(c, d)?);
                }
                let mut m = node("RecordArray", &key);
                m.insert(
                    "fields".into(),
                    json!(t.fields.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>()),
                );
                m.insert("contents".into(), Json::Array(contents));
                Ok(finish(m, json!({})))
            }
            Layout::Masked(m) if !is_option(&m.content) && as_index_over(&m.content).is_none() && !matches!(m.content.as_ref(), Layout::Union(_)) => {
                let key = self.key();
                let mask: Vec<u8> = m.mask.iter().map(|&b| b as u8).collect();
                self.put(format!("{key}-mask"), mask)?;
                let content = self.form(&m.content, d)?;
                let mut n = node("ByteMaskedArray", &key);
                n.insert("mask".into(), json!("i8"));
                n.insert("valid_when".into(), json!(!m.masked_when));
                n.insert("content".into(), content);
                Ok(finish(n, json!({})))
            }
            Layout::BitMasked(m) if as_index_over(&m.content).is_none() && !matches!(m.content.as_ref(), Layout::Union(_)) => {
                let key = self.key();
                let nbytes = m.content.len().div_ceil(8);
                self.put(format!("{key}-mask"), m.mask[..nbytes].to_vec())?;
                let content = self.form(&m.content, d)?;
                let mut n = node("BitMaskedArray", &key);
                n.insert("mask".into(), json!("u8"));
                n.insert("valid_when".into(), json!(!m.masked_when));
                n.insert("lsb_order".into(), json!(m.lsb_order));
                n.insert("content".into(), content);
                Ok(finish(n, json!({})))
            }
            Layout::Union(u) => self.union(u, d),
            Layout::Parameters(p) => {
                let mut f = self.form(&p.content, d)?;
                if let Some(Json::Object(params)) = f.get_mut("parameters") {
                    for (k, v) in &p.parameters {
                        params.insert(k.clone(), v.clone());
                    }
                }
                Ok(f)
            }
            Layout::Regular(r) => {
                let key = self.key();
                let mut m = r.form_node();
                m.insert("form_key".into(), json!(key));
                let content = self.form(&r.content, d)?;
                m.insert("content".into(), content);
                Ok(finish(m, json!({})))
            }
            Layout::Record(r) => {
                let key = self.key();
                let mut m = r.form_node();
                m.insert("form_key".into(), json!(key));
                let mut contents = Vec::with_capacity(r.contents.len());
                for c in &r.contents {
                    contents.push(self.form(c, d)?);
                }
                m.insert("contents".into(), Json::Array(contents));
                Ok(finish(m, json!({})))
            }
            Layout::Unmasked(u)
                if as_index_over(&u.content).is_none()
                    && !matches!(strip(&u.content), Layout::Union(_)) =>
            {
                let key = self.key();
                let content = self.form(&u.content, d)?;
                let mut m = node("UnmaskedArray", &key);
                m.insert("content".into(), content);
                Ok(finish(m, json!({})))
            }
            Layout::Empty(_) => {
                let key = self.key();
                Ok(finish(node("EmptyArray", &key), json!({})))
            }
            Layout::Chunked(_) => Err(unsupported(
                "ChunkedArray has no awkward 2 form (awkward 2 has no chunked node; concatenate first)",
            )),
            Layout::Sparse(_) => Err(unsupported(
                "SparseArray has no awkward 2 form (it would have to be materialized)",
            )),
            other => {
                // Indexed, IndexedMasked, option-over-option/indexed, Table views: compose all
                // directly nested indexed/option levels into one IndexedArray or IndexedOptionArray.
                let Some(mut top) = as_index_over(other) else {
                    return Err(unsupported(format!("{} cannot be exported", other.class_name())));
                };
                while let Some(inner) = as_index_over(&top.content) {
                    let index = top
                        .index
                        .iter()
                        .map(|&i| {
                            if i < 0 {
                                Ok(-1)
                            } else {
                                inner.index.get(i as usize).copied().ok_or_else(|| {
                                    unsupported("index outside its content")
                                })
                            }
                        })
                        .collect::<Result<Vec<i64>>>()?;
                    top = IndexOver {
                        index,
                        content: inner.content,
                        option: top.option || inner.option,
                    };
                }
                if let Layout::Union(u) = top.content.as_ref() {
                    return self.union(&push_into_union(&top, u)?, d);
                }
                let key = self.key();
                self.put(format!("{key}-index"), i64_bytes(&top.index))?;
                let content = self.form(&top.content, d)?;
                let class = if top.option {
                    "IndexedOptionArray"
                } else {
                    "IndexedArray"
                };
                let mut n = node(class, &key);
                n.insert("index".into(), json!("i64"));
                n.insert("content".into(), content);
                Ok(finish(n, json!({})))
            }
        }
    }

    fn list(&mut self, key: &str, index: &ListIndex) -> Result<Map<String, Json>> {
        Ok(match index {
            ListIndex::Offsets(o) => {
                self.put(format!("{key}-offsets"), i64_bytes(o))?;
                let mut m = node("ListOffsetArray", key);
                m.insert("offsets".into(), json!("i64"));
                m
            }
            ListIndex::StartsStops { starts, stops } => {
                self.put(format!("{key}-starts"), i64_bytes(starts))?;
                self.put(format!("{key}-stops"), i64_bytes(&stops[..starts.len()]))?;
                let mut m = node("ListArray", key);
                m.insert("starts".into(), json!("i64"));
                m.insert("stops".into(), json!("i64"));
                m
            }
        })
    }

    fn union(&mut self, u: &UnionArray, d: usize) -> Result<Json> {
        if u.contents.len() == 1 {
            let only = Layout::Indexed(crate::layout::IndexedArray {
                index: u.index[..u.tags.len()].to_vec(),
                content: u.contents[0].clone(),
            });
            return self.form(&only, d);
        }
        if u.contents
            .iter()
            .any(|c| matches!(strip(c), Layout::Union(_)))
        {
            return Err(unsupported(
                "a union of unions is not canonical in awkward 2",
            ));
        }
        let optional = u.contents.iter().filter(|c| is_option(c)).count();
        if optional != 0 && optional != u.contents.len() {
            return Err(unsupported(
                "a union mixing optional and non-optional contents is not canonical in awkward 2",
            ));
        }
        if u.contents.len() > 128 || u.tags.iter().any(|&t| t >= 128) {
            return Err(unsupported(
                "union tags must be below 128 (awkward 2 uses int8 tags)",
            ));
        }
        let key = self.key();
        self.put(format!("{key}-tags"), u.tags.clone())?;
        self.put(format!("{key}-index"), i64_bytes(&u.index[..u.tags.len()]))?;
        let mut contents = Vec::with_capacity(u.contents.len());
        for c in &u.contents {
            contents.push(self.form(c, d)?);
        }
        let mut n = node("UnionArray", &key);
        n.insert("tags".into(), json!("i8"));
        n.insert("index".into(), json!("i64"));
        n.insert("contents".into(), Json::Array(contents));
        Ok(finish(n, json!({})))
    }
}

/// Reads back the little-endian `i64` buffer helper used in tests of this module.
#[cfg(test)]
fn read_i64(b: &[u8]) -> Vec<i64> {
    b.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn option_of_record_is_indexed_option() {
        let j = json!([{"a": 1, "b": [1.5]}, null]);
        let b = to_awkward2(&Layout::from_json(&j).unwrap()).unwrap();
        assert_eq!(b.form["class"], "IndexedOptionArray");
        assert_eq!(b.form["content"]["class"], "RecordArray");
        assert_eq!(read_i64(&b.buffers["node0-index"]), vec![0, -1]);
    }

    #[test]
    fn nested_options_are_composed() {
        let inner = Arc::new(Layout::from_json(&json!([1.0, null, 3.0])).unwrap());
        let outer = Layout::Indexed(crate::layout::IndexedArray {
            index: vec![2, 1, 0],
            content: inner,
        });
        let b = to_awkward2(&outer).unwrap();
        assert_eq!(b.form["class"], "IndexedOptionArray");
        assert_eq!(read_i64(&b.buffers["node0-index"]), vec![1, -1, 0]);
    }

    #[test]
    fn sparse_is_refused() {
        let s = Layout::Sparse(crate::layout::SparseArray {
            length: 3,
            index: vec![1],
            content: Arc::new(Layout::from_json(&json!([1.0])).unwrap()),
            default: crate::layout::SparseDefault::Zero,
        });
        assert!(matches!(to_awkward2(&s), Err(Error::Unsupported { .. })));
    }
}
