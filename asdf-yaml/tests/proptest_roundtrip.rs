//! Random trees (every node kind, awkward strings, tags, anchors, nesting) emit and re-parse to
//! an equal tree, and the emitted text is a fixed point.

use asdf_yaml::{
    emit_to_string, parse_document, parse_str, EmitOptions, Engine, Node, ParseOptions,
};
use proptest::prelude::*;

const TAGS: &[&str] = &[
    "tag:stsci.edu:asdf/core/ndarray-1.1.0",
    "tag:stsci.edu:asdf/core/complex-1.0.0",
    "tag:example.org:custom/thing-1.0.0",
    "asdf://example.org/tags/foo-2.0.0",
    "!local",
    "tag:example.org:odd chars/%[x]{y},z>\"-1.0.0",
    "tag:yaml.org,2002:binary",
    "tag:yaml.org,2002:set",
];

const SPECIAL: &[&str] = &[
    "yes",
    "NO",
    "~",
    "",
    " ",
    "null",
    "1e3",
    "1.0e+3",
    "0x1F",
    "017",
    "1:30",
    "2001-12-14",
    "=",
    "<<",
    "-",
    "---",
    "...",
    "- a",
    "a: b",
    "#",
    "[",
    "]",
    "{}",
    ",",
    "!",
    "&",
    "*",
    "|",
    ">",
    "'",
    "\"",
    "%",
    "@",
    "`",
    "?",
    ":",
    "\n",
    "\t",
    "\r\n",
    "\u{85}",
    "\u{2028}",
    "\u{feff}",
    "\u{0}",
    "\u{7f}",
    "\u{9f}",
    "é",
    "\u{10ffff}",
    "a\\b",
    "  x  ",
    "x #y",
];

fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "\\PC{0,12}",
        2 => any::<String>().prop_map(|s| s.chars().take(16).collect()),
        3 => prop::sample::select(SPECIAL).prop_map(str::to_string),
        1 => (prop::sample::select(SPECIAL), prop::sample::select(SPECIAL))
            .prop_map(|(a, b)| format!("{a}{b}")),
    ]
}

fn leaf() -> impl Strategy<Value = Node> {
    prop_oneof![
        Just(Node::null()),
        any::<bool>().prop_map(Node::from),
        any::<i64>().prop_map(Node::from),
        any::<i128>().prop_map(Node::from),
        any::<u64>().prop_map(Node::from),
        any::<f64>().prop_map(Node::from),
        prop::sample::select(vec![
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e20,
            5e-324
        ])
        .prop_map(Node::from),
        string().prop_map(Node::from),
        (string(), prop::sample::select(TAGS)).prop_map(|(s, t)| Node::from(s).with_tag(t)),
        "[0-9]{4}-[0-9]{2}-[0-9]{2}"
            .prop_map(|s| Node::from(s).with_tag("tag:yaml.org,2002:timestamp")),
    ]
}

fn key() -> impl Strategy<Value = Node> {
    prop_oneof![3 => string().prop_map(Node::from), 1 => any::<i64>().prop_map(Node::from)]
}

fn tree() -> impl Strategy<Value = Node> {
    leaf().prop_recursive(8, 256, 8, |inner| {
        let tag = prop::option::of(prop::sample::select(TAGS));
        prop_oneof![
            (prop::collection::vec(inner.clone(), 0..8), tag.clone()).prop_map(|(v, t)| {
                let n = Node::from(v);
                match t {
                    Some(t) => n.with_tag(t),
                    None => n,
                }
            }),
            (
                prop::collection::vec((key(), inner), 0..8),
                tag,
                any::<bool>()
            )
                .prop_map(|(entries, t, share)| {
                    let mut m = asdf_yaml::Mapping::new();
                    for (k, v) in entries {
                        m.insert(k, v);
                    }
                    // Share the first value with the last entry (an anchor and an alias).
                    if share && m.len() >= 2 {
                        let keys: Vec<Node> = m.keys().cloned().collect();
                        let first = m.get_node(&keys[0]).cloned().unwrap().into_shared();
                        m.insert(keys[0].clone(), first.clone());
                        m.insert(keys[keys.len() - 1].clone(), first);
                    }
                    let n = Node::from(m);
                    match t {
                        Some(t) => n.with_tag(t),
                        None => n,
                    }
                }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn emit_then_parse_is_identity(t in tree()) {
        let text = emit_to_string(&t).unwrap();
        let back = parse_str(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back, &t, "text:\n{}", text);
        prop_assert_eq!(emit_to_string(&back).unwrap(), text);
    }

    #[test]
    fn fast_and_reference_parsers_agree(t in tree()) {
        for opts in [EmitOptions::default(), EmitOptions { flow_max_items: 0, width: 20, ..EmitOptions::default() }] {
            let text = asdf_yaml::emit_string_with(&t, &opts).unwrap();
            let parse = |engine| {
                let o = ParseOptions { engine, ..ParseOptions::default() };
                parse_document(&text, &o).map(|d| d.root).map_err(|e| e.to_string())
            };
            let reference = parse(Engine::Reference).map_err(TestCaseError::fail)?;
            let auto = parse(Engine::Auto).map_err(TestCaseError::fail)?;
            prop_assert!(auto.identical(&reference), "text:\n{}", text);
            if let Ok(fast) = parse(Engine::Fast) {
                prop_assert!(fast.identical(&reference), "text:\n{}", text);
            }
        }
    }

    #[test]
    fn block_style_everywhere_round_trips(t in tree()) {
        let opts = EmitOptions { flow_max_items: 0, width: 20, ..EmitOptions::default() };
        let text = asdf_yaml::emit_string_with(&t, &opts).unwrap();
        let back = parse_str(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back, &t, "text:\n{}", text);
    }
}

#[test]
fn tags_with_escapes() {
    // PyYAML percent-encodes non-ASCII tag characters; they must decode to the character.
    let n = parse_str("x: !<tag:example.org:caf%C3%A9-1.0.0> 1").unwrap();
    assert_eq!(
        n.get("x").and_then(Node::tag),
        Some("tag:example.org:café-1.0.0")
    );
    // We refuse to write a non-ASCII tag instead of writing something unreadable.
    let bad = Node::from("v").with_tag("tag:example.org:café");
    assert!(matches!(
        emit_to_string(&bad),
        Err(asdf_yaml::Error::Emit { .. })
    ));
}

#[test]
fn deep_trees_round_trip() {
    let mut n = Node::from("bottom");
    for i in 0..512 {
        n = if i % 2 == 0 {
            Node::sequence([n, Node::from(i)])
        } else {
            Node::mapping([("k", n)]).with_tag("tag:example.org:deep-1.0.0")
        };
    }
    let text = emit_to_string(&n).unwrap();
    assert_eq!(parse_str(&text).unwrap(), n);
}

#[test]
fn emitter_depth_is_bounded() {
    let mut n = Node::from(1);
    for _ in 0..2000 {
        n = Node::sequence([n, Node::from(0)]);
    }
    assert!(matches!(
        emit_to_string(&n),
        Err(asdf_yaml::Error::Emit { .. })
    ));
}
