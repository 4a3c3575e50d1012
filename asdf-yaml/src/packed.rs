//! Packed sequences: the scalars of a nested sequence held compactly by whoever built them.
//!
//! An inline array of a million numbers as ordinary nodes costs a [`Node`] per number (64 bytes
//! each, ~20× an 8-byte float, ~64× a byte). A writer that already holds the numbers in a typed
//! buffer puts one [`Value::Packed`] in the tree instead; the emitter writes it exactly as it
//! writes the equivalent nested sequences of scalar nodes, one item at a time, so no node per item
//! ever exists at once. The parser never produces one: a parsed tree holds [`Value::Seq`]s.

use std::fmt;
use std::sync::Arc;

use crate::node::{Node, Value};

/// The items of a packed nested sequence ([`Value::Packed`]): `shape[0]` sequences of
/// `shape[1]` sequences … of `shape[last]` scalars, in row-major order.
///
/// ```
/// use asdf_yaml::{emit_to_string, parse_str, Node, PackedItems};
/// struct Squares(Vec<usize>);
/// impl PackedItems for Squares {
///     fn shape(&self) -> &[usize] { &self.0 }
///     fn item(&self, index: usize) -> Node { Node::from(index * index) }
/// }
/// let tree = Node::mapping([("data", Node::packed(Squares(vec![2, 3])))]);
/// let text = emit_to_string(&tree).unwrap();
/// assert!(text.contains("data:\n  - [0, 1, 4]\n  - [9, 16, 25]\n"));
/// // Equal to the nodes it stands for, and to what parsing its text gives.
/// let parsed = parse_str(&text).unwrap();
/// assert_eq!(parsed, tree);
/// assert_eq!(parsed["data"][1][2].as_i64(), Some(25));
/// ```
pub trait PackedItems: Send + Sync {
    /// The length of each nesting level; at least one level. The product of the lengths is the
    /// number of items.
    fn shape(&self) -> &[usize];
    /// Item `index` (row-major, below the product of [`shape`](Self::shape)) as a scalar node
    /// (an untagged or tagged scalar, never a sequence or mapping).
    fn item(&self, index: usize) -> Node;
}

/// A packed sequence as stored in a [`Value::Packed`].
pub type Packed = Arc<dyn PackedItems>;

/// The number of items of `p` (the product of its shape, saturating).
pub(crate) fn count(p: &dyn PackedItems) -> usize {
    p.shape()
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .unwrap_or(usize::MAX)
}

/// `p` as ordinary nested sequence nodes (one node per item: for small packed sequences, or a
/// caller that must hold items as nodes).
pub(crate) fn to_nodes(p: &dyn PackedItems) -> Node {
    fn level(p: &dyn PackedItems, dims: &[usize], base: usize) -> Node {
        match dims {
            [] => p.item(base),
            [n, rest @ ..] => {
                let stride: usize = rest.iter().product();
                Node::new(Value::Seq(
                    (0..*n).map(|i| level(p, rest, base + i * stride)).collect(),
                ))
            }
        }
    }
    level(p, p.shape(), 0)
}

/// Whether the packed sequence `p` equals `other` (a packed sequence or nested sequence nodes),
/// item by item under the tree's equality, without building nodes for `other`'s side.
pub(crate) fn equals(p: &dyn PackedItems, other: &Value) -> bool {
    fn block(p: &dyn PackedItems, dims: &[usize], base: usize, other: &Value) -> bool {
        let Some((n, rest)) = dims.split_first() else {
            return false;
        };
        let stride: usize = rest.iter().product();
        match other {
            Value::Seq(items) => {
                items.len() == *n
                    && items.iter().enumerate().all(|(i, o)| {
                        let at = base + i * stride;
                        match rest {
                            [] => p.item(at) == *o,
                            _ => o.tag().is_none() && block(p, rest, at, o.value()),
                        }
                    })
            }
            Value::Packed(q) => {
                q.shape() == dims && (0..count(&**q)).all(|i| p.item(base + i) == q.item(i))
            }
            _ => false,
        }
    }
    block(p, p.shape(), 0, other)
}

/// Debug output of `p`: the nested lists it stands for.
pub(crate) fn debug(p: &dyn PackedItems, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    fmt::Debug::fmt(&to_nodes(p), f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{emit_string_with, parse_str, EmitOptions};

    /// Items of every kind the emitter writes differently: plain numbers, floats, strings that
    /// need quotes, tagged scalars, nulls and bools.
    struct Mixed(Vec<usize>);

    impl PackedItems for Mixed {
        fn shape(&self) -> &[usize] {
            &self.0
        }
        fn item(&self, i: usize) -> Node {
            match i % 6 {
                0 => Node::from(i as i64 * 1_000_003),
                1 => Node::from(i as f64 / 7.0),
                2 => Node::from(format!("s{i}: x")),
                3 => Node::from("1+2j").with_tag("tag:stsci.edu:asdf/core/complex-1.0.0"),
                4 => Node::null(),
                _ => Node::from(i % 2 == 0),
            }
        }
    }

    #[test]
    fn packed_and_nodes_are_written_alike_and_compare_equal() {
        let shapes: &[&[usize]] = &[
            &[0],
            &[1],
            &[7],
            &[200],
            &[3, 0],
            &[0, 3],
            &[2, 3],
            &[4, 1, 30],
            &[2, 2, 2, 2],
        ];
        let options = [
            EmitOptions::default(),
            EmitOptions {
                width: 20,
                ..EmitOptions::default()
            },
            EmitOptions {
                flow_max_items: 0,
                ..EmitOptions::default()
            },
            EmitOptions {
                flow_max_items: 5,
                ..EmitOptions::default()
            },
        ];
        for shape in shapes {
            let packed = Node::packed(Mixed(shape.to_vec()));
            let nodes = packed.unpacked();
            assert!(matches!(nodes.value(), Value::Seq(_)));
            assert_eq!(packed, nodes, "{shape:?}");
            assert_eq!(nodes, packed, "{shape:?}");
            for (key_first, opts) in [(true, &options[0]), (false, &options[1])]
                .into_iter()
                .chain(options[2..].iter().map(|o| (true, o)))
            {
                // As a mapping value, and as the item of a block sequence (compact form).
                let wrap = |data: Node| {
                    let seq = Node::sequence([data.clone(), Node::from(1)]);
                    if key_first {
                        Node::mapping([("data", data), ("in_seq", seq)])
                    } else {
                        Node::mapping([("in_seq", seq), ("data", data)])
                    }
                };
                let a = emit_string_with(&wrap(packed.clone()), opts).unwrap();
                let b = emit_string_with(&wrap(nodes.clone()), opts).unwrap();
                assert_eq!(a, b, "{shape:?} {opts:?}");
                assert_eq!(parse_str(&a).unwrap(), wrap(packed.clone()), "{shape:?}");
            }
        }
        assert_ne!(
            Node::packed(Mixed(vec![2, 3])),
            Node::packed(Mixed(vec![3, 2]))
        );
        assert_ne!(
            Node::packed(Mixed(vec![6])),
            Node::packed(Mixed(vec![2, 3]))
        );
        let mut other = Node::packed(Mixed(vec![2, 3])).unpacked();
        other
            .pointer_mut("/1/2")
            .map(|n| *n = Node::from(0))
            .unwrap();
        assert_ne!(Node::packed(Mixed(vec![2, 3])), other);
        assert_eq!(Node::packed(Mixed(vec![4, 5])).len(), 4);
        assert_eq!(Node::packed(Mixed(vec![4])).kind(), "sequence");
    }

    #[test]
    fn a_non_scalar_item_is_an_error_naming_the_place() {
        struct Bad;
        impl PackedItems for Bad {
            fn shape(&self) -> &[usize] {
                &[2]
            }
            fn item(&self, _: usize) -> Node {
                Node::sequence([1i64])
            }
        }
        let tree = Node::mapping([("data", Node::packed(Bad))]);
        let e = crate::emit_to_string(&tree).unwrap_err().to_string();
        assert!(e.contains("/data") && e.contains("scalar"), "{e}");
        // No shape at all: an error too, not a panic.
        let tree = Node::mapping([("data", Node::packed(Mixed(vec![])))]);
        let e = crate::emit_to_string(&tree).unwrap_err().to_string();
        assert!(e.contains("/data") && e.contains("no shape"), "{e}");
    }

    #[test]
    fn streaming_output_equals_the_string() {
        let tree = Node::mapping([
            ("a", Node::packed(Mixed(vec![50_000]))),
            ("b", Node::packed(Mixed(vec![300, 40]))),
            ("c", Node::from("end")),
        ]);
        let mut out = Vec::new();
        crate::emit(&tree, &mut out).unwrap();
        assert!(out.len() > 4 * crate::emit::STREAM_PIECE);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            crate::emit_to_string(&tree).unwrap()
        );
    }
}
