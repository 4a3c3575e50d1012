//! Packed sequences ([`asdf_yaml::Value::Packed`]): written exactly as the nodes they stand
//! for, equal to them, and errors (not panics) for items that are not scalars.

use asdf_yaml::{emit_string_with, parse_str, EmitOptions, Node, PackedItems, Value};

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
    let e = asdf_yaml::emit_to_string(&tree).unwrap_err().to_string();
    assert!(e.contains("/data") && e.contains("scalar"), "{e}");
    // No shape at all: an error too, not a panic.
    let tree = Node::mapping([("data", Node::packed(Mixed(vec![])))]);
    let e = asdf_yaml::emit_to_string(&tree).unwrap_err().to_string();
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
    asdf_yaml::emit(&tree, &mut out).unwrap();
    assert!(out.len() > 4 * asdf_yaml::emit::STREAM_PIECE);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        asdf_yaml::emit_to_string(&tree).unwrap()
    );
}
