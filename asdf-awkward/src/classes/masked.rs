//! `MaskedArray`: one boolean per element says whether it is missing.

use serde_json::{json, Map, Value as Json};

use crate::call::Constructor;
use crate::dtype::{DType, Primitive};
use crate::element::{Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{
    call, finish_form, form_node, lit, Awkward0Writer, Awkward2Writer, Class, IndexOver, Layout,
    Node,
};

/// `MaskedArray`: `value[i]` is missing iff `mask[i] == masked_when`.
#[derive(Debug, Clone, PartialEq)]
pub struct MaskedArray {
    /// One flag per element.
    pub mask: Vec<bool>,
    /// The values.
    pub content: Node,
    /// Which flag value means "missing" (awkward0 default `true`).
    pub masked_when: bool,
}

impl MaskedArray {
    /// Checks that the content has an element under every mask entry.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        if self.content.len() < self.mask.len() {
            return Err(Error::invalid(
                "MaskedArray",
                location,
                format!(
                    "mask has {} entries but the content only {}",
                    self.mask.len(),
                    self.content.len()
                ),
            ));
        }
        Ok(())
    }
}

impl MaskedArray {
    /// Position `i` where present, `-1` where masked.
    fn over(&self) -> IndexOver {
        let index = self
            .mask
            .iter()
            .enumerate()
            .map(|(i, &b)| if b == self.masked_when { -1 } else { i as i64 })
            .collect();
        IndexOver {
            index,
            content: self.content.clone(),
            option: true,
        }
    }
}

/// awkward0's constructor: `MaskedArray(mask, content, maskedwhen=True)`.
pub(crate) const CONSTRUCTORS: &[Constructor] = &[Constructor {
    path: &["MaskedArray"],
    name: "MaskedArray",
    params: &["mask", "content", "maskedwhen"],
    required: 2,
    build: |a| {
        let mask = a.index(0)?.into_iter().map(|m| m != 0).collect();
        let masked_when = a.opt_boolish(2)?.unwrap_or(true);
        let content = a.array(1)?;
        Ok(Layout::Masked(MaskedArray {
            mask,
            content,
            masked_when,
        }))
    },
}];

impl Class for MaskedArray {
    fn name(&self) -> &'static str {
        "MaskedArray"
    }

    fn len(&self) -> usize {
        self.mask.len()
    }

    fn children(&self) -> Vec<&Node> {
        vec![&self.content]
    }

    fn validate_node(&self, location: &str) -> Result<()> {
        MaskedArray::validate_node(self, location)
    }

    /// A `ByteMaskedArray`, unless its content is an option, indexed or a union: then one
    /// composed `IndexedOptionArray`.
    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        let c = &self.content;
        if c.exports_as_option()
            || c.class().index_view().is_some()
            || matches!(**c, Layout::Union(_))
        {
            return w.indexed(self.over(), depth);
        }
        let key = w.key();
        let mask: Vec<u8> = self.mask.iter().map(|&b| b as u8).collect();
        w.put(format!("{key}-mask"), &mask)?;
        let content = w.form(c, depth)?;
        let mut n = form_node("ByteMaskedArray", &key);
        n.insert("mask".into(), json!("i8"));
        n.insert("valid_when".into(), json!(!self.masked_when));
        n.insert("content".into(), content);
        Ok(finish_form(n, json!({})))
    }

    fn index_view(&self) -> Option<IndexOver> {
        Some(self.over())
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        if self.mask[i] == self.masked_when {
            return Ok(Value::Null);
        }
        self.content.get_depth(i, depth, b)
    }

    fn write_awkward0(
        &self,
        w: &mut dyn Awkward0Writer,
        _ctx: &str,
        _id: u64,
        depth: usize,
    ) -> Result<Map<String, Json>> {
        let mask: Vec<u8> = self.mask.iter().map(|&b| b as u8).collect();
        let bool_dtype = DType::scalar(Primitive::Bool);
        let mk = w.leaf(&bool_dtype, mask.len(), &mask, "MaskedArray.mask")?;
        let content = w.child(&self.content, "MaskedArray.content", depth)?;
        let args = vec![mk, content, lit(self.masked_when)];
        Ok(call(w.spec(&["MaskedArray"]), args))
    }
}
