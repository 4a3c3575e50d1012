//! `BitMaskedArray`: one bit per element says whether it is missing.

use serde_json::{json, Map, Value as Json};

use crate::call::Constructor;
use crate::dtype::{DType, Primitive};
use crate::element::{Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{
    call, finish_form, form_node, lit, Awkward0Writer, Awkward2Writer, Class, IndexOver, Layout,
    Node,
};

/// `BitMaskedArray`: one bit per element, `length = len(content)`.
#[derive(Debug, Clone, PartialEq)]
pub struct BitMaskedArray {
    /// Packed bits, at least `⌈len/8⌉` bytes.
    pub mask: Vec<u8>,
    /// The values.
    pub content: Node,
    /// Which bit value means "missing" (awkward0 default `true`).
    pub masked_when: bool,
    /// `true`: bit `i%8` from the least significant end; `false`: numpy `packbits` order.
    pub lsb_order: bool,
}

impl BitMaskedArray {
    /// Position `i` where present, `-1` where masked.
    fn over(&self) -> IndexOver {
        let index = (0..self.content.len())
            .map(|i| {
                if self.bit(i) == Some(self.masked_when) {
                    -1
                } else {
                    i as i64
                }
            })
            .collect();
        IndexOver {
            index,
            content: self.content.clone(),
            option: true,
        }
    }
}

impl BitMaskedArray {
    /// Checks that the mask has a bit for every element of the content.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        let need = self.content.len().div_ceil(8);
        if self.mask.len() < need {
            return Err(Error::invalid(
                "BitMaskedArray",
                location,
                format!(
                    "mask has {} bytes, {need} needed for {} elements",
                    self.mask.len(),
                    self.content.len()
                ),
            ));
        }
        Ok(())
    }

    /// The bit of element `i`.
    pub fn bit(&self, i: usize) -> Option<bool> {
        let byte = *self.mask.get(i / 8)?;
        let shift = if self.lsb_order { i % 8 } else { 7 - i % 8 };
        Some((byte >> shift) & 1 == 1)
    }
}

/// awkward0's constructor: `BitMaskedArray(mask, content, maskedwhen=True, lsborder=False)`.
pub(crate) const CONSTRUCTORS: &[Constructor] = &[Constructor {
    path: &["BitMaskedArray"],
    name: "BitMaskedArray",
    params: &["mask", "content", "maskedwhen", "lsborder"],
    required: 2,
    build: |a| {
        let mask = a.bytes_array(0)?;
        let masked_when = a.opt_boolish(2)?.unwrap_or(true);
        let lsb_order = a.opt_boolish(3)?.unwrap_or(false);
        let content = a.array(1)?;
        Ok(Layout::BitMasked(BitMaskedArray {
            mask,
            content,
            masked_when,
            lsb_order,
        }))
    },
}];

impl Class for BitMaskedArray {
    fn name(&self) -> &'static str {
        "BitMaskedArray"
    }

    fn len(&self) -> usize {
        self.content.len()
    }

    fn children(&self) -> Vec<&Node> {
        vec![&self.content]
    }

    fn validate_node(&self, location: &str) -> Result<()> {
        BitMaskedArray::validate_node(self, location)
    }

    /// A `BitMaskedArray`, unless its content is indexed or a union: then one composed
    /// `IndexedOptionArray`.
    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        let c = &self.content;
        if c.class().index_view().is_some() || matches!(**c, Layout::Union(_)) {
            return w.indexed(self.over(), depth);
        }
        let key = w.key();
        let nbytes = c.len().div_ceil(8);
        w.put(format!("{key}-mask"), &self.mask[..nbytes])?;
        let content = w.form(c, depth)?;
        let mut n = form_node("BitMaskedArray", &key);
        n.insert("mask".into(), json!("u8"));
        n.insert("valid_when".into(), json!(!self.masked_when));
        n.insert("lsb_order".into(), json!(self.lsb_order));
        n.insert("content".into(), content);
        Ok(finish_form(n, json!({})))
    }

    fn index_view(&self) -> Option<IndexOver> {
        Some(self.over())
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        let bit = self.bit(i).ok_or_else(|| {
            Error::invalid(
                "BitMaskedArray",
                "array",
                format!("no mask bit for element {i}"),
            )
        })?;
        if bit == self.masked_when {
            Ok(Value::Null)
        } else {
            self.content.get_depth(i, depth, b)
        }
    }

    fn write_awkward0(
        &self,
        w: &mut dyn Awkward0Writer,
        _ctx: &str,
        _id: u64,
        depth: usize,
    ) -> Result<Map<String, Json>> {
        let u8_dtype = DType::scalar(Primitive::U8);
        let mk = w.leaf(
            &u8_dtype,
            self.mask.len(),
            &self.mask,
            "BitMaskedArray.mask",
        )?;
        let content = w.child(&self.content, "BitMaskedArray.content", depth)?;
        let args = vec![mk, content, lit(self.masked_when), lit(self.lsb_order)];
        Ok(call(w.spec(&["BitMaskedArray"]), args))
    }
}
