//! `JaggedArray`: variable-length lists over a content array.

use serde_json::{json, Map, Value as Json};

use crate::call::{Args, Constructor};
use crate::element::{Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{
    call, finish_form, Awkward0Writer, Awkward2Writer, Class, Layout, ListIndex, Node,
};
use crate::numpy::{Buffer, NumpyArray};

/// `JaggedArray`: list `i` is `content[start_i .. stop_i]`.
///
/// ```
/// use std::sync::Arc;
/// use asdf_awkward::{Buffer, JaggedArray, Layout, ListIndex, NumpyArray};
/// let content = Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::F64(vec![1.0, 2.0, 3.0]))));
/// let j = Layout::Jagged(JaggedArray { index: ListIndex::Offsets(vec![0, 2, 2, 3]), content });
/// assert_eq!(j.to_json().unwrap(), serde_json::json!([[1.0, 2.0], [], [3.0]]));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct JaggedArray {
    /// List boundaries.
    pub index: ListIndex,
    /// The flattened elements.
    pub content: Node,
}

/// awkward0's constructors: `JaggedArray(starts, stops, content)`, `.fromcounts`, `.fromoffsets`.
pub(crate) const CONSTRUCTORS: &[Constructor] = &[
    Constructor {
        path: &["JaggedArray"],
        name: "JaggedArray",
        params: &["starts", "stops", "content"],
        required: 3,
        build: |a| {
            let index = ListIndex::StartsStops {
                starts: a.index(0)?,
                stops: a.index(1)?,
            };
            jagged(index, a.array(2)?)
        },
    },
    Constructor {
        path: &["JaggedArray", "fromcounts"],
        name: "JaggedArray.fromcounts",
        params: &["counts", "content"],
        required: 2,
        build: |a| jagged(a.counts_index(0, "JaggedArray")?, a.array(1)?),
    },
    Constructor {
        path: &["JaggedArray", "fromoffsets"],
        name: "JaggedArray.fromoffsets",
        params: &["offsets", "content"],
        required: 2,
        build: |a: &Args<'_>| jagged(ListIndex::Offsets(a.index(0)?), a.array(1)?),
    },
];

fn jagged(index: ListIndex, content: Node) -> Result<Layout> {
    Ok(Layout::Jagged(JaggedArray { index, content }))
}

impl Class for JaggedArray {
    fn name(&self) -> &'static str {
        "JaggedArray"
    }

    fn len(&self) -> usize {
        self.index.len()
    }

    fn children(&self) -> Vec<&Node> {
        vec![&self.content]
    }

    fn validate_node(&self, location: &str) -> Result<()> {
        self.index
            .validate("JaggedArray", location, self.content.len())
    }

    /// `ListOffsetArray` or `ListArray`, as its index is stored.
    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        let key = w.key();
        let mut m = w.list(&key, &self.index)?;
        let content = w.form(&self.content, depth)?;
        m.insert("content".into(), content);
        Ok(finish_form(m, json!({})))
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        let (start, stop) = self
            .index
            .element_range("JaggedArray", i, self.content.len())?;
        b.take((stop - start) as u64, 0)?;
        (start..stop)
            .map(|k| self.content.get_depth(k, depth, b))
            .collect::<Result<_>>()
            .map(Value::List)
    }

    /// From counts when the offsets are compact (awkward0 compacts a numpy content to
    /// `content[offsets[0]:offsets[-1]]`), else from starts and stops.
    fn write_awkward0(
        &self,
        w: &mut dyn Awkward0Writer,
        _ctx: &str,
        _id: u64,
        depth: usize,
    ) -> Result<Map<String, Json>> {
        let compact = self.index.contiguous_offsets().filter(|o| o.len() > 1);
        let clen = self.content.len() as i64;
        let counts = |o: &[i64]| -> Vec<i64> { o.windows(2).map(|w| w[1] - w[0]).collect() };
        Ok(match (compact, self.content.as_ref()) {
            (Some(o), _) if o[0] == 0 && o[o.len() - 1] == clen => {
                let c = w.index(&counts(&o), "JaggedArray.counts")?;
                let content = w.child(&self.content, "JaggedArray.content", depth)?;
                call(w.spec(&["JaggedArray", "fromcounts"]), vec![c, content])
            }
            (Some(o), Layout::Numpy(a)) if o[0] >= 0 && o[o.len() - 1] <= clen => {
                let c = w.index(&counts(&o), "JaggedArray.counts")?;
                let sliced = slice_numpy(a, o[0] as usize, o[o.len() - 1] as usize)?;
                let content = w.numpy(&sliced, "JaggedArray.content")?;
                call(w.spec(&["JaggedArray", "fromcounts"]), vec![c, content])
            }
            _ => {
                let (starts, stops) = self.index.starts_stops();
                let a = w.index(&starts, "JaggedArray.starts")?;
                let b = w.index(&stops, "JaggedArray.stops")?;
                let content = w.child(&self.content, "JaggedArray.content", depth)?;
                call(w.spec(&["JaggedArray"]), vec![a, b, content])
            }
        })
    }
}

/// Elements `start..stop` of a numpy content (rows, for an inner shape).
fn slice_numpy(a: &NumpyArray, start: usize, stop: usize) -> Result<NumpyArray> {
    let inner = a.inner_size();
    let (s, e) = (start * inner, stop * inner);
    macro_rules! sl {
        ($v:expr, $var:ident) => {
            Buffer::$var(
                $v.get(s..e)
                    .ok_or_else(|| {
                        Error::invalid("JaggedArray", "array", "content slice out of range")
                    })?
                    .to_vec(),
            )
        };
    }
    let data = match a.data() {
        Buffer::Bool(v) => sl!(v, Bool),
        Buffer::I8(v) => sl!(v, I8),
        Buffer::U8(v) => sl!(v, U8),
        Buffer::I16(v) => sl!(v, I16),
        Buffer::U16(v) => sl!(v, U16),
        Buffer::I32(v) => sl!(v, I32),
        Buffer::U32(v) => sl!(v, U32),
        Buffer::I64(v) => sl!(v, I64),
        Buffer::U64(v) => sl!(v, U64),
        Buffer::F16(v) => sl!(v, F16),
        Buffer::F32(v) => sl!(v, F32),
        Buffer::F64(v) => sl!(v, F64),
        Buffer::C64(v) => sl!(v, C64),
        Buffer::C128(v) => sl!(v, C128),
    };
    NumpyArray::with_primitive(
        a.dtype().primitive.clone(),
        data,
        a.dtype().inner_shape.clone(),
    )
    .ok_or_else(|| {
        Error::invalid(
            "JaggedArray",
            "array",
            "content slice has an inconsistent shape",
        )
    })
}
