//! Tags (handles, verbatim, core, unknown), merge keys, duplicate keys and key warnings.

use asdf_yaml::{emit_to_string, parse_document, parse_str, Engine, Node, ParseOptions, Value};

#[test]
fn directives_are_named_in_full_and_may_end_in_comments() {
    // `%YAMLL` is a reserved directive (ignored), not a version; comments may follow both.
    let text = "%YAMLL 1.0\n%YAML 1.1 # the version\n%TAG !e! tag:example.org: # c\n--- !e!x 1\n";
    for engine in [Engine::Fast, Engine::Reference] {
        let options = ParseOptions {
            engine,
            ..ParseOptions::default()
        };
        let doc = parse_document(text, &options).unwrap();
        assert_eq!(doc.yaml_version.as_deref(), Some("1.1"));
        assert_eq!(
            doc.tag_handles,
            [("!e!".to_string(), "tag:example.org:".to_string())]
        );
        assert_eq!(doc.root.tag(), Some("tag:example.org:x"));
    }
}

#[test]
fn every_tag_handle_is_honoured() {
    let text = "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n%TAG !ex! tag:example.org:ext/\n\
                %TAG !un! asdf://example.org/units/\n--- !core/asdf-1.1.0\n\
                a: !ex!thing-1.0.0 {x: 1}\nb: !un!unit-1.0.0 m\nc: !<tag:other.org:v-2.0.0> [1]\n\
                d: !!str 123\ne: ! 456\nf: !!float '1e3'\ng: !!int '0x10'\nh: !!bool 'YES'\n\
                i: !!null ''\nj: !!binary aGVsbG8=\nk: !core/ndarray-1.1.0 [1, 2]\n...\n";
    let doc = parse_document(text, &ParseOptions::default()).unwrap();
    assert_eq!(doc.yaml_version.as_deref(), Some("1.1"));
    assert_eq!(doc.tag_handles.len(), 3);
    let t = &doc.root;
    assert_eq!(t.tag(), Some("tag:stsci.edu:asdf/core/asdf-1.1.0"));
    assert_eq!(
        t.get("a").and_then(Node::tag),
        Some("tag:example.org:ext/thing-1.0.0")
    );
    assert_eq!(
        t.get("b").and_then(Node::tag),
        Some("asdf://example.org/units/unit-1.0.0")
    );
    assert_eq!(t.get("b").and_then(Node::as_str), Some("m"));
    assert_eq!(
        t.get("c").and_then(Node::tag),
        Some("tag:other.org:v-2.0.0")
    );
    assert_eq!(t.get("d").and_then(Node::as_str), Some("123"));
    assert_eq!(t.get("d").and_then(Node::tag), None);
    assert_eq!(t.get("e").and_then(Node::as_str), Some("456"));
    assert_eq!(t.get("f").and_then(Node::as_f64), Some(1000.0));
    assert_eq!(t.get("g").and_then(Node::as_i64), Some(16));
    assert_eq!(t.get("h").and_then(Node::as_bool), Some(true));
    assert!(t.get("i").is_some_and(Node::is_null));
    assert_eq!(
        t.get("j").and_then(Node::tag),
        Some("tag:yaml.org,2002:binary")
    );
    assert_eq!(
        t.get("k").and_then(Node::tag),
        Some("tag:stsci.edu:asdf/core/ndarray-1.1.0")
    );

    // Re-emitted: ASDF tags as shorthand, others verbatim, values unchanged.
    let out = emit_to_string(t).unwrap();
    assert!(
        out.contains("a: !<tag:example.org:ext/thing-1.0.0>\n"),
        "{out}"
    );
    assert!(
        out.contains("b: !<asdf://example.org/units/unit-1.0.0> m\n"),
        "{out}"
    );
    assert!(out.contains("k: !core/ndarray-1.1.0 [1, 2]\n"), "{out}");
    assert!(out.contains("d: \"123\"\n"), "{out}");
    assert!(out.contains("j: !!binary aGVsbG8=\n"), "{out}");
    assert_eq!(&parse_str(&out).unwrap(), t);
}

#[test]
fn merge_keys_follow_pyyaml() {
    let t = parse_str(
        "base: &b {x: 1, y: 2}\nother: &o {y: 3, z: 4}\n\
         one: {<<: *b, y: 9}\nmany: {<<: [*b, *o], w: 0}\nquoted: {'<<': 1}\n",
    )
    .unwrap();
    let one = t.get("one").unwrap().as_map().unwrap();
    let keys: Vec<&str> = one.keys().filter_map(Node::as_str).collect();
    assert_eq!(keys, ["x", "y"]);
    assert_eq!(one.get("y").and_then(Node::as_i64), Some(9));
    let many = t.get("many").unwrap().as_map().unwrap();
    // PyYAML: earlier mappings in the list win; merged keys come first.
    assert_eq!(many.get("y").and_then(Node::as_i64), Some(2));
    assert_eq!(many.get("z").and_then(Node::as_i64), Some(4));
    assert_eq!(many.get("w").and_then(Node::as_i64), Some(0));
    assert_eq!(t.pointer("/quoted/<<").and_then(Node::as_i64), Some(1));
}

#[test]
fn duplicate_keys_behave_like_a_python_dict() {
    let t = parse_str("{a: 1, b: 2, a: 3, 1: x, true: y, 2.0: z, 2: w}").unwrap();
    let m = t.as_map().unwrap();
    assert_eq!(m.len(), 4);
    assert_eq!(m.get("a").and_then(Node::as_i64), Some(3));
    assert_eq!(m.keys().next().and_then(Node::as_str), Some("a"));
    assert_eq!(m.get_node(&Node::from(1)).and_then(Node::as_str), Some("y"));
    assert_eq!(
        m.get_node(&Node::from(2.0)).and_then(Node::as_str),
        Some("w")
    );
}

/// Mappings of more than 16 entries take the hashed path; a big block mapping is also cut into
/// pieces parsed in parallel. Every engine keeps a dict's semantics there too.
#[test]
fn duplicate_keys_in_big_mappings_behave_like_a_python_dict() {
    // Over a MiB, so that `Auto` splits it.
    let mut text = String::new();
    for i in 0..100_000 {
        text += &format!("k{i}: {i}\n");
    }
    let unique = text.clone();
    text += "k7: seven\n1: one\ntrue: yes\nk99999: last\n";
    for engine in [Engine::Reference, Engine::Fast, Engine::Auto] {
        let options = ParseOptions {
            engine,
            ..ParseOptions::default()
        };
        let t = parse_document(&text, &options).unwrap().root;
        let m = t.as_map().unwrap();
        assert!(text.len() > 1 << 20);
        assert_eq!(m.len(), 100_001, "{engine:?}");
        assert_eq!(m.get("k7").and_then(Node::as_str), Some("seven"));
        assert_eq!(m.keys().nth(7).and_then(Node::as_str), Some("k7"));
        assert_eq!(m.get("k99999").and_then(Node::as_str), Some("last"));
        assert_eq!(
            m.get_node(&Node::from(1)).and_then(Node::as_bool),
            Some(true)
        );
        assert_eq!(m.keys().last().and_then(Node::as_i64), Some(1));
        let u = parse_document(&unique, &options).unwrap().root;
        assert_eq!(u.as_map().map(|m| m.len()), Some(100_000));
        assert_eq!(u.get("k4321").and_then(Node::as_i64), Some(4321));
    }
}

#[test]
fn unusual_keys_warn() {
    let doc = parse_document(
        "1.5: a\n~: b\nok: c\n7: d\nno: e\n",
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(doc.warnings.len(), 2, "{:?}", doc.warnings);
    assert_eq!(doc.warnings[1].location.line, 2);
    assert!(matches!(
        doc.root.as_map().unwrap().keys().nth(4).map(Node::value),
        Some(Value::Bool(false))
    ));
}

/// A table with a null key in every row keeps its first 100 warnings, located alike by both
/// parsers.
#[test]
fn warnings_stop_at_one_hundred() {
    let text: String = (0..1000).map(|i| format!("- {{~: {i}}}\n")).collect();
    for engine in [Engine::Fast, Engine::Reference] {
        let options = ParseOptions {
            engine,
            ..ParseOptions::default()
        };
        let doc = parse_document(&text, &options).unwrap();
        assert_eq!(doc.warnings.len(), 100, "{engine:?}");
        let last = &doc.warnings[99].location;
        assert_eq!((last.line, last.column), (100, 3), "{engine:?}");
        assert_eq!(doc.root.as_seq().map(|s| s.len()), Some(1000));
    }
}

#[test]
fn asdf_header_comments_and_tree_only_slice_both_parse() {
    let body = "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nx: 1\n...\n";
    let with_header = format!("#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n{body}");
    assert_eq!(parse_str(body).unwrap(), parse_str(&with_header).unwrap());
    let crlf = with_header.replace('\n', "\r\n");
    assert_eq!(parse_str(&crlf).unwrap(), parse_str(body).unwrap());
    assert!(parse_str("").unwrap().is_null());
}

#[test]
fn yaml_1_1_line_breaks_read_like_pyyaml() {
    // PyYAML writes NEL/LS/PS raw in single-quoted scalars, followed by indentation.
    let t =
        parse_str("a: 'x\u{2028}    y'\nb: 'p\u{85}    q'\nc: \"plain \\L escaped\"\n").unwrap();
    assert_eq!(t["a"].as_str(), Some("x\u{2028}y"));
    assert_eq!(t["b"].as_str(), Some("p q"));
    assert_eq!(t["c"].as_str(), Some("plain \u{2028} escaped"));
}

#[test]
fn pointer_mut_edits_in_place() {
    let mut t = parse_str("a: {b: [1, 2]}\nc: &s {d: 1}\ne: *s").unwrap();
    *t.pointer_mut("/a/b/1").unwrap() = Node::from("two");
    assert_eq!(t["a"]["b"][1].as_str(), Some("two"));
    // Through a shared subtree: copy on write, the other alias keeps the old value.
    *t.pointer_mut("/c/d").unwrap() = Node::from(5);
    assert_eq!(t["c"]["d"].as_i64(), Some(5));
    assert_eq!(t["e"]["d"].as_i64(), Some(1));
    assert!(t.pointer_mut("/a/b/7").is_none());
    assert!(t.pointer_mut("/a/b/01").is_none());
}
