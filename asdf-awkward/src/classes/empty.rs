//! `EmptyArray`: an array of length zero and unknown type (awkward 2's `EmptyArray`).

use crate::element::{oob, Budget, Value};
use crate::error::Result;
use serde_json::{json, Value as Json};

use crate::layout::{finish_form, form_node, Awkward2Writer, Class, Layout, Node};
use crate::numpy::{Buffer, NumpyArray};

/// No elements, no type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EmptyArray;

impl EmptyArray {
    /// awkward0 has no untyped array: an empty `float64` leaf, as awkward 1's `to_awkward0` did.
    pub(crate) fn to_awkward0(self) -> Layout {
        Layout::Numpy(NumpyArray::from_vec(Buffer::F64(Vec::new())))
    }
}

impl Class for EmptyArray {
    fn name(&self) -> &'static str {
        "EmptyArray"
    }

    fn len(&self) -> usize {
        0
    }

    fn children(&self) -> Vec<&Node> {
        vec![]
    }

    fn validate_node(&self, _location: &str) -> Result<()> {
        Ok(())
    }

    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        let _ = depth;
        let key = w.key();
        Ok(finish_form(form_node("EmptyArray", &key), json!({})))
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        let _ = (depth, b);
        Err(oob("EmptyArray", i, 0))
    }

    fn awkward0_stand_in(&self) -> Result<Option<Node>> {
        Ok(Some(Node::new(self.to_awkward0())))
    }
}
