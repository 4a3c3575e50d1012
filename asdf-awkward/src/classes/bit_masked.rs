//! `BitMaskedArray`: one bit per element says whether it is missing.

use serde_json::{Map, Value as Json};

use crate::call::Constructor;
use crate::dtype::{DType, Primitive};
use crate::element::{Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{call, lit, Awkward0Writer, Class, Layout, Node};

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
