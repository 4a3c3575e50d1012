//! `UnionArray`: each element taken from one of several contents.

use serde_json::{json, Map, Value as Json};

use crate::call::{Args, Constructor};
use crate::dtype::{DType, Primitive};
use crate::element::{Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{call, Awkward0Writer, Awkward2Writer, Class, Layout, Node};

/// `UnionArray`: `value[i] = contents[tags[i]][index[i]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct UnionArray {
    /// Which content each element comes from.
    pub tags: Vec<u8>,
    /// Position in that content.
    pub index: Vec<i64>,
    /// The possible contents.
    pub contents: Vec<Node>,
}

impl UnionArray {
    /// Checks that every tag names a content and every index lies within its content.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        let bad = |why: String| Error::invalid("UnionArray", location, why);
        if self.index.len() < self.tags.len() {
            return Err(bad(format!(
                "index has {} entries, fewer than tags ({})",
                self.index.len(),
                self.tags.len()
            )));
        }
        for (i, (&t, &ix)) in self.tags.iter().zip(&self.index).enumerate() {
            let Some(c) = self.contents.get(t as usize) else {
                let n = self.contents.len();
                return Err(bad(format!("tags[{i}] = {t} but there are {n} contents")));
            };
            if ix < 0 || ix as u64 >= c.len() as u64 {
                return Err(bad(format!(
                    "index[{i}] = {ix} is outside content {t} of length {}",
                    c.len()
                )));
            }
        }
        Ok(())
    }

    /// A union whose index is the running count per tag (`UnionArray.fromtags`).
    pub fn from_tags(tags: Vec<u8>, contents: Vec<Node>) -> UnionArray {
        let mut counters = vec![0i64; 256];
        let index = tags
            .iter()
            .map(|&t| {
                let c = &mut counters[t as usize];
                let v = *c;
                *c += 1;
                v
            })
            .collect();
        UnionArray {
            tags,
            index,
            contents,
        }
    }

    /// Whether the index is the running count per tag (written as `fromtags`).
    pub fn is_sequential(&self) -> bool {
        let mut counters = vec![0i64; 256];
        self.tags.len() <= self.index.len()
            && self.tags.iter().zip(&self.index).all(|(&t, &i)| {
                let c = &mut counters[t as usize];
                let ok = *c == i;
                *c += 1;
                ok
            })
    }
}

/// awkward0's constructors: `UnionArray(tags, index, contents)` and
/// `UnionArray.fromtags(tags, contents)`.
pub(crate) const CONSTRUCTORS: &[Constructor] = &[
    Constructor {
        path: &["UnionArray"],
        name: "UnionArray",
        params: &["tags", "index", "contents"],
        required: 3,
        build: |a| {
            Ok(Layout::Union(UnionArray {
                tags: tags_arg(a)?,
                index: a.index(1)?,
                contents: a.array_list(2)?,
            }))
        },
    },
    Constructor {
        path: &["UnionArray", "fromtags"],
        name: "UnionArray.fromtags",
        params: &["tags", "contents"],
        required: 2,
        build: |a| {
            Ok(Layout::Union(UnionArray::from_tags(
                tags_arg(a)?,
                a.array_list(1)?,
            )))
        },
    },
];

/// The tags (argument 0), each in 0..=255.
fn tags_arg(a: &Args<'_>) -> Result<Vec<u8>> {
    a.index(0)?
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
        .collect()
}

impl Class for UnionArray {
    fn name(&self) -> &'static str {
        "UnionArray"
    }

    fn len(&self) -> usize {
        self.tags.len()
    }

    fn children(&self) -> Vec<&Node> {
        self.contents.iter().collect()
    }

    fn validate_node(&self, location: &str) -> Result<()> {
        UnionArray::validate_node(self, location)
    }

    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        w.union(self, depth)
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        let t = self.tags[i] as usize;
        let c = self.contents.get(t).ok_or_else(|| {
            Error::invalid(
                "UnionArray",
                "array",
                format!("tags[{i}] = {t} has no content"),
            )
        })?;
        let ix = self
            .index
            .get(i)
            .and_then(|&x| usize::try_from(x).ok())
            .ok_or_else(|| Error::invalid("UnionArray", "array", format!("bad index[{i}]")))?;
        c.get_depth(ix, depth, b)
    }

    /// From its tags alone when its index is sequential, else with the index.
    fn write_awkward0(
        &self,
        w: &mut dyn Awkward0Writer,
        _ctx: &str,
        _id: u64,
        depth: usize,
    ) -> Result<Map<String, Json>> {
        let u8_dtype = DType::scalar(Primitive::U8);
        let tags = w.leaf(&u8_dtype, self.tags.len(), &self.tags, "UnionArray.tags")?;
        let mut args = vec![tags];
        let spec = if self.is_sequential() {
            w.spec(&["UnionArray", "fromtags"])
        } else {
            args.push(w.index(&self.index, "UnionArray.index")?);
            w.spec(&["UnionArray"])
        };
        let mut cs = Vec::with_capacity(self.contents.len());
        for c in &self.contents {
            cs.push(w.child(c, "UnionArray.contents", depth)?);
        }
        args.push(json!({ "list": cs }));
        Ok(call(spec, args))
    }
}
