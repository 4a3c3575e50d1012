//! `EmptyArray`: an array of length zero and unknown type (awkward 2's `EmptyArray`).

use crate::layout::Layout;
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
