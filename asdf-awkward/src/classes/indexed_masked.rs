//! `IndexedMaskedArray`: an index into the content, one value of it meaning "missing".

use serde_json::{Map, Value as Json};

use crate::call::Constructor;
use crate::element::{Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{call, lit, Awkward0Writer, Awkward2Writer, Class, IndexOver, Layout, Node};

/// `IndexedMaskedArray`: `value[i]` is missing iff `index[i] == masked_when`, else
/// `content[index[i]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedMaskedArray {
    /// Positions (or `masked_when`).
    pub index: Vec<i64>,
    /// The values.
    pub content: Node,
    /// The index value that means "missing" (awkward0 default `-1`).
    pub masked_when: i64,
}

impl IndexedMaskedArray {
    /// Checks that every index is `masked_when` or lies within the content.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        let clen = self.content.len() as u64;
        let outside =
            |&(_, &ix): &(usize, &i64)| ix != self.masked_when && (ix < 0 || ix as u64 >= clen);
        match self.index.iter().enumerate().find(outside) {
            Some((i, ix)) => Err(Error::invalid(
                "IndexedMaskedArray",
                location,
                format!(
                    "index[{i}] = {ix} is outside the content of length {clen} (and is not maskedwhen = {})",
                    self.masked_when
                ),
            )),
            None => Ok(()),
        }
    }
}

impl IndexedMaskedArray {
    /// The index with `masked_when` as `-1`.
    fn over(&self) -> IndexOver {
        let index = self
            .index
            .iter()
            .map(|&x| if x == self.masked_when { -1 } else { x })
            .collect();
        IndexOver {
            index,
            content: self.content.clone(),
            option: true,
        }
    }
}

/// awkward0's constructor: `IndexedMaskedArray(mask, content, maskedwhen=-1)`.
pub(crate) const CONSTRUCTORS: &[Constructor] = &[Constructor {
    path: &["IndexedMaskedArray"],
    name: "IndexedMaskedArray",
    params: &["mask", "content", "maskedwhen"],
    required: 2,
    build: |a| {
        let index = a.index(0)?;
        let masked_when = a.opt_int(2)?.unwrap_or(-1);
        let content = a.array(1)?;
        Ok(Layout::IndexedMasked(IndexedMaskedArray {
            index,
            content,
            masked_when,
        }))
    },
}];

impl Class for IndexedMaskedArray {
    fn name(&self) -> &'static str {
        "IndexedMaskedArray"
    }

    fn len(&self) -> usize {
        self.index.len()
    }

    fn children(&self) -> Vec<&Node> {
        vec![&self.content]
    }

    fn validate_node(&self, location: &str) -> Result<()> {
        IndexedMaskedArray::validate_node(self, location)
    }

    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        w.indexed(self.over(), depth)
    }

    fn index_view(&self) -> Option<IndexOver> {
        Some(self.over())
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        let ix = self.index[i];
        if ix == self.masked_when {
            return Ok(Value::Null);
        }
        let ix = usize::try_from(ix).map_err(|_| {
            Error::invalid(
                "IndexedMaskedArray",
                "array",
                format!("negative index[{i}] = {ix}"),
            )
        })?;
        self.content.get_depth(ix, depth, b)
    }

    fn write_awkward0(
        &self,
        w: &mut dyn Awkward0Writer,
        _ctx: &str,
        _id: u64,
        depth: usize,
    ) -> Result<Map<String, Json>> {
        let ix = w.index(&self.index, "IndexedMaskedArray.mask")?;
        let content = w.child(&self.content, "IndexedMaskedArray.content", depth)?;
        let args = vec![ix, content, lit(self.masked_when)];
        Ok(call(w.spec(&["IndexedMaskedArray"]), args))
    }
}
