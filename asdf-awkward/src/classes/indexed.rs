//! `IndexedArray`: `value[i] = content[index[i]]`.

use serde_json::{Map, Value as Json};

use crate::call::Constructor;
use crate::element::{Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{
    call, check_index, Awkward0Writer, Awkward2Writer, Class, IndexOver, Layout, Node,
};

/// `IndexedArray`: `value[i] = content[index[i]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedArray {
    /// Positions into the content.
    pub index: Vec<i64>,
    /// The content.
    pub content: Node,
}

impl IndexedArray {
    fn over(&self) -> IndexOver {
        IndexOver {
            index: self.index.clone(),
            content: self.content.clone(),
            option: false,
        }
    }
}

/// awkward0's constructor: `IndexedArray(index, content)`.
pub(crate) const CONSTRUCTORS: &[Constructor] = &[Constructor {
    path: &["IndexedArray"],
    name: "IndexedArray",
    params: &["index", "content"],
    required: 2,
    build: |a| {
        Ok(Layout::Indexed(IndexedArray {
            index: a.index(0)?,
            content: a.array(1)?,
        }))
    },
}];

impl Class for IndexedArray {
    fn name(&self) -> &'static str {
        "IndexedArray"
    }

    fn len(&self) -> usize {
        self.index.len()
    }

    fn children(&self) -> Vec<&Node> {
        vec![&self.content]
    }

    fn validate_node(&self, location: &str) -> Result<()> {
        check_index("IndexedArray", location, &self.index, self.content.len())
    }

    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        w.indexed(self.over(), depth)
    }

    fn index_view(&self) -> Option<IndexOver> {
        Some(self.over())
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        let ix = usize::try_from(self.index[i])
            .map_err(|_| Error::invalid("IndexedArray", "array", format!("negative index[{i}]")))?;
        self.content.get_depth(ix, depth, b)
    }

    fn write_awkward0(
        &self,
        w: &mut dyn Awkward0Writer,
        _ctx: &str,
        _id: u64,
        depth: usize,
    ) -> Result<Map<String, Json>> {
        let ix = w.index(&self.index, "IndexedArray.index")?;
        let content = w.child(&self.content, "IndexedArray.content", depth)?;
        Ok(call(w.spec(&["IndexedArray"]), vec![ix, content]))
    }
}
