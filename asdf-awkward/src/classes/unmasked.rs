//! `UnmaskedArray`: an option type whose elements are all present (awkward 2's `UnmaskedArray`).

use crate::element::{Budget, Value};
use crate::error::Result;
use crate::layout::{Class, Layout, MaskedArray, Node};

/// Every element of `content`, typed as optional.
#[derive(Debug, Clone, PartialEq)]
pub struct UnmaskedArray {
    /// The values.
    pub content: Node,
}

impl UnmaskedArray {
    /// awkward0 has no such class: a `MaskedArray` with nothing masked keeps the option type.
    pub(crate) fn to_awkward0(&self) -> Layout {
        Layout::Masked(MaskedArray {
            mask: vec![false; self.content.len()],
            content: self.content.clone(),
            masked_when: true,
        })
    }
}

impl Class for UnmaskedArray {
    fn name(&self) -> &'static str {
        "UnmaskedArray"
    }

    fn len(&self) -> usize {
        self.content.len()
    }

    fn children(&self) -> Vec<&Node> {
        vec![&self.content]
    }

    fn validate_node(&self, _location: &str) -> Result<()> {
        Ok(())
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        self.content.get_depth(i, depth, b)
    }

    fn awkward0_stand_in(&self) -> Result<Option<Layout>> {
        Ok(Some(self.to_awkward0()))
    }
}
