//! `UnmaskedArray`: an option type whose elements are all present (awkward 2's `UnmaskedArray`).

use crate::element::{Budget, Value};
use crate::error::Result;
use serde_json::{json, Value as Json};

use crate::layout::{
    finish_form, form_node, Awkward2Writer, Class, IndexOver, Layout, MaskedArray, Node,
};

/// Every element of `content`, typed as optional.
#[derive(Debug, Clone, PartialEq)]
pub struct UnmaskedArray {
    /// The values.
    pub content: Node,
}

impl UnmaskedArray {
    /// Every position present.
    fn over(&self) -> IndexOver {
        IndexOver {
            index: (0..self.content.len() as i64).collect(),
            content: self.content.clone(),
            option: true,
        }
    }

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

    /// An `UnmaskedArray`, unless its content is indexed or a union: then one composed
    /// `IndexedOptionArray`.
    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        let c = &self.content;
        if c.class().index_view().is_some() || matches!(c.without_parameters(), Layout::Union(_)) {
            return w.indexed(self.over(), depth);
        }
        let key = w.key();
        let content = w.form(c, depth)?;
        let mut m = form_node("UnmaskedArray", &key);
        m.insert("content".into(), content);
        Ok(finish_form(m, json!({})))
    }

    fn index_view(&self) -> Option<IndexOver> {
        Some(self.over())
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        self.content.get_depth(i, depth, b)
    }

    fn awkward0_stand_in(&self) -> Result<Option<Node>> {
        Ok(Some(Node::new(self.to_awkward0())))
    }
}
