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

use crate::error::Result;
use crate::layout::{
    awkward2_unsupported, finish_form, form_node, Awkward2Writer, IndexOver, Layout, ListIndex,
    UnionArray,
};
use crate::numpy::i64_le_bytes;

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
    let mut buffers = BTreeMap::new();
    let (form, length) = export(layout, &mut |key, bytes| {
        buffers.insert(key.to_string(), bytes.to_vec());
        Ok(())
    })?;
    Ok(Awkward2Buffers {
        form,
        length,
        buffers,
    })
}

/// What receives each buffer of an export, by key: borrowed from the layout where it can be,
/// so a writer puts it in a file without a copy.
pub(crate) type BufferSink<'s> = dyn FnMut(&str, &[u8]) -> Result<()> + 's;

/// Exports `layout` (validated first): the form and length, each buffer handed to `sink` as it
/// is produced, in form-key order.
pub(crate) fn export(layout: &Layout, sink: &mut BufferSink<'_>) -> Result<(Json, usize)> {
    layout.validate()?;
    let mut c = Conv {
        next: 0,
        bytes: 0,
        sink,
    };
    let form = c.form(layout, 0)?;
    Ok((form, layout.len()))
}

struct Conv<'s, 'k> {
    next: usize,
    /// Bytes of buffers so far: awkward 2 forms are trees, so sub-arrays shared through `ref`
    /// are copied; this bounds what a DAG can expand to.
    bytes: u64,
    sink: &'s mut BufferSink<'k>,
}

/// Most form nodes an export may produce (shared sub-arrays are expanded).
const MAX_FORM_NODES: usize = 100_000;
/// Most buffer bytes an export may produce.
const MAX_EXPORT_BYTES: u64 = 1 << 40;

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
                _ => return Err(awkward2_unsupported("index outside its union")),
            }
        };
        let slot = per
            .get_mut(t as usize)
            .ok_or_else(|| awkward2_unsupported("union tag without content"))?;
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

impl Awkward2Writer for Conv<'_, '_> {
    fn key(&mut self) -> String {
        let k = format!("node{}", self.next);
        self.next += 1;
        k
    }

    fn put(&mut self, key: String, bytes: &[u8]) -> Result<()> {
        self.bytes = self.bytes.saturating_add(bytes.len() as u64);
        if self.next > MAX_FORM_NODES || self.bytes > MAX_EXPORT_BYTES {
            return Err(awkward2_unsupported(
                "sub-arrays shared through refs expand to too large an awkward 2 tree",
            ));
        }
        (self.sink)(&key, bytes)
    }

    /// The form of `l`, by its class (nesting bounded).
    fn form(&mut self, l: &Layout, depth: usize) -> Result<Json> {
        if depth > crate::layout::MAX_NESTING {
            return Err(awkward2_unsupported("nesting too deep"));
        }
        l.class().awkward2_form(self, depth + 1)
    }

    fn indexed(&mut self, mut top: IndexOver, d: usize) -> Result<Json> {
        while let Some(inner) = top.content.class().index_view() {
            let index = top
                .index
                .iter()
                .map(|&i| {
                    if i < 0 {
                        Ok(-1)
                    } else {
                        inner
                            .index
                            .get(i as usize)
                            .copied()
                            .ok_or_else(|| awkward2_unsupported("index outside its content"))
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
        self.put(format!("{key}-index"), &i64_le_bytes(&top.index))?;
        let content = self.form(&top.content, d)?;
        let class = if top.option {
            "IndexedOptionArray"
        } else {
            "IndexedArray"
        };
        let mut n = form_node(class, &key);
        n.insert("index".into(), json!("i64"));
        n.insert("content".into(), content);
        Ok(finish_form(n, json!({})))
    }

    fn list(&mut self, key: &str, index: &ListIndex) -> Result<Map<String, Json>> {
        Ok(match index {
            ListIndex::Offsets(o) => {
                self.put(format!("{key}-offsets"), &i64_le_bytes(o))?;
                let mut m = form_node("ListOffsetArray", key);
                m.insert("offsets".into(), json!("i64"));
                m
            }
            ListIndex::StartsStops { starts, stops } => {
                self.put(format!("{key}-starts"), &i64_le_bytes(starts))?;
                self.put(
                    format!("{key}-stops"),
                    &i64_le_bytes(&stops[..starts.len()]),
                )?;
                let mut m = form_node("ListArray", key);
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
            .any(|c| matches!(c.without_parameters(), Layout::Union(_)))
        {
            return Err(awkward2_unsupported(
                "a union of unions is not canonical in awkward 2",
            ));
        }
        let optional = u.contents.iter().filter(|c| c.exports_as_option()).count();
        if optional != 0 && optional != u.contents.len() {
            return Err(awkward2_unsupported(
                "a union mixing optional and non-optional contents is not canonical in awkward 2",
            ));
        }
        if u.contents.len() > 128 || u.tags.iter().any(|&t| t >= 128) {
            return Err(awkward2_unsupported(
                "union tags must be below 128 (awkward 2 uses int8 tags)",
            ));
        }
        let key = self.key();
        self.put(format!("{key}-tags"), &u.tags)?;
        self.put(
            format!("{key}-index"),
            &i64_le_bytes(&u.index[..u.tags.len()]),
        )?;
        let mut contents = Vec::with_capacity(u.contents.len());
        for c in &u.contents {
            contents.push(self.form(c, d)?);
        }
        let mut n = form_node("UnionArray", &key);
        n.insert("tags".into(), json!("i8"));
        n.insert("index".into(), json!("i64"));
        n.insert("contents".into(), Json::Array(contents));
        Ok(finish_form(n, json!({})))
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
    use crate::error::Error;
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
