//! Interop with Python asdf 6.0.0: files we emit load in Python to the same values and tags, and
//! trees Python asdf (and PyYAML) write load here to the same values.
//!
//! Both sides print a canonical JSON form of the tree (floats as their IEEE bit patterns, tags
//! explicit, timestamps only as a kind) and the texts are compared.

use asdf_yaml::{emit_to_string, parse_bytes, Node, Value};

const PY_CANON: &str = r#"
import json, struct, datetime, sys, warnings
import asdf, asdf.tagged
warnings.simplefilter("ignore")

def canon(x):
    if isinstance(x, asdf.tagged.TaggedDict):
        return ["tagged-map", x._tag, [[canon(k), canon(v)] for k, v in x.items()]]
    if isinstance(x, asdf.tagged.TaggedList):
        return ["tagged-seq", x._tag, [canon(v) for v in x]]
    if isinstance(x, asdf.tagged.TaggedString):
        return ["tagged-str", x._tag, str(x)]
    if isinstance(x, dict):
        return ["map", [[canon(k), canon(v)] for k, v in x.items()]]
    if isinstance(x, (list, tuple)):
        return ["seq", [canon(v) for v in x]]
    if x is None:
        return ["null"]
    if isinstance(x, bool):
        return ["bool", "true" if x else "false"]
    if isinstance(x, int):
        return ["int", str(x)]
    if isinstance(x, float):
        # PyYAML builds .nan as -inf/inf, a NaN with the sign bit set: NaN payloads are not
        # compared.
        return ["float", "nan" if x != x else struct.pack(">d", x).hex()]
    if isinstance(x, (datetime.date, datetime.datetime)):
        return ["timestamp"]
    if isinstance(x, str):
        return ["str", x]
    return ["unknown", type(x).__name__]

def root(tree):
    return ["map", [[canon(k), canon(v)] for k, v in tree.items()
                    if k not in ("asdf_library", "history")]]
"#;

fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) >= 0x7f => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn canon(n: &Node, out: &mut String) {
    let tag = n.tag();
    let tagged = tag.is_some_and(|t| t != "tag:yaml.org,2002:timestamp");
    let head = |kind: &str, out: &mut String| {
        out.push('[');
        if tagged {
            json_string(&format!("tagged-{kind}"), out);
            out.push(',');
            json_string(tag.unwrap_or_default(), out);
        } else {
            json_string(kind, out);
        }
    };
    match n.value() {
        _ if tag == Some("tag:yaml.org,2002:timestamp") => out.push_str("[\"timestamp\"]"),
        Value::Null => out.push_str("[\"null\"]"),
        Value::Bool(b) => out.push_str(&format!("[\"bool\",\"{b}\"]")),
        Value::Int(i) => out.push_str(&format!("[\"int\",\"{i}\"]")),
        Value::BigInt(s) => out.push_str(&format!("[\"int\",\"{s}\"]")),
        Value::Float(f) if f.is_nan() => out.push_str("[\"float\",\"nan\"]"),
        Value::Float(f) => out.push_str(&format!("[\"float\",\"{:016x}\"]", f.to_bits())),
        Value::Str(s) => {
            head("str", out);
            out.push(',');
            json_string(s, out);
            out.push(']');
        }
        Value::Packed(_) => canon(&n.unpacked(), out),
        Value::Seq(items) => {
            head("seq", out);
            out.push_str(",[");
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canon(it, out);
            }
            out.push_str("]]");
        }
        Value::Map(m) => {
            head("map", out);
            out.push_str(",[");
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('[');
                canon(k, out);
                out.push(',');
                canon(v, out);
                out.push(']');
            }
            out.push_str("]]");
        }
        Value::Shared(_) => unreachable!("value() looks through sharing"),
    }
}

fn canon_root(n: &Node) -> String {
    let mut out = String::from("[\"map\",[");
    let mut first = true;
    for (k, v) in n.as_map().unwrap().iter() {
        if matches!(k.as_str(), Some("asdf_library" | "history")) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        out.push('[');
        canon(k, &mut out);
        out.push(',');
        canon(v, &mut out);
        out.push(']');
    }
    out.push_str("]]");
    out
}

/// Strings that YAML 1.1 would read as something else, or that need quoting or escaping.
const AWKWARD: &[&str] = &[
    "yes",
    "No",
    "on",
    "OFF",
    "true",
    "null",
    "~",
    "",
    " ",
    "1e3",
    "1.0e+3",
    "0x1F",
    "017",
    "08",
    "0o17",
    "1_000",
    "190:20:30",
    "1:30.5",
    ".inf",
    "-.nan",
    ".5",
    "2001-12-14",
    "=",
    "<<",
    "-",
    "--- x",
    "...",
    "- item",
    "? q",
    ": c",
    "a: b",
    "a #b",
    "#c",
    "[x]",
    "{y}",
    "x, y",
    "!bang",
    "&amp",
    "*star",
    "%pct",
    "@at",
    "`tick",
    "|pipe",
    ">fold",
    "'sq'",
    "\"dq\"",
    " lead",
    "trail ",
    "multi\nline\n",
    "tab\there",
    "cr\rlf",
    "nul\0byte",
    "bell\u{7}",
    "del\u{7f}",
    "c1\u{85}\u{9f}",
    "ls\u{2028}ps\u{2029}",
    "nel\u{85}only",
    "a\u{2028}\u{2028}b \u{2029}",
    "bom\u{feff}",
    "é",
    "Æʩ",
    "\u{10020}",
    "𝄞 music",
    "back\\slash",
    "x\"y'z",
    "3.14",
    "-0",
    "+1",
    "0b101",
    "yes please",
    "http://x.org/a#b",
];

const LONG_KEY: &str = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\
0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\
0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\
0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\
0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\
0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\
0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\
0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\
0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\
0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\
0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\
0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop";

fn rust_tree() -> Node {
    let shared = Node::mapping([("abc", Node::from(123)), ("s", Node::from("yes"))]).into_shared();
    let strings: Vec<Node> = AWKWARD.iter().map(|s| Node::from(*s)).collect();
    let string_keys = Node::mapping(AWKWARD.iter().map(|s| (*s, Node::from(s.len()))));
    Node::mapping([
        ("strings", Node::from(strings)),
        ("string_keys", string_keys),
        (
            "ints",
            Node::sequence([
                Node::from(0),
                Node::from(-1),
                Node::from(i64::MAX),
                Node::from(i64::MIN + 2),
            ]),
        ),
        (
            "floats",
            Node::sequence([
                0.0,
                -0.0,
                0.1,
                1e20,
                -2.5e-7,
                1e300,
                5e-324,
                f64::MAX,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
                3.0,
            ]),
        ),
        ("bools", Node::sequence([true, false])),
        ("nothing", Node::null()),
        ("a", shared.clone()),
        ("b", shared),
        (
            "custom_map",
            Node::mapping([("x", Node::from(1)), ("y", Node::from("on"))])
                .with_tag("tag:example.org:custom/thing-1.0.0"),
        ),
        (
            "custom_seq",
            Node::sequence([Node::from(1), Node::from("two")])
                .with_tag("asdf://example.org/tags/list-1.2.3"),
        ),
        (
            "custom_str",
            Node::from("(1+2j) but not really").with_tag("tag:example.org:custom/str-1.0.0"),
        ),
        (
            "custom_empty_str",
            Node::from("").with_tag("tag:example.org:custom/str-1.0.0"),
        ),
        (
            "nested",
            Node::sequence([
                Node::sequence([Node::sequence([1, 2]), Node::sequence([3, 4])]),
                Node::mapping([("deep", Node::mapping([("deeper", Node::sequence(["x"]))]))]),
                Node::sequence(Vec::<Node>::new()),
                Node::mapping(Vec::<(&str, Node)>::new()),
            ]),
        ),
        (
            "when",
            Node::from("2026-11-21 07:36:11").with_tag("tag:yaml.org,2002:timestamp"),
        ),
        // Longer than YAML's 1024-character implicit-key limit: written as an explicit `? key`.
        (LONG_KEY, Node::from("long key")),
    ])
    .with_tag("tag:stsci.edu:asdf/core/asdf-1.1.0")
}

#[test]
fn python_asdf_reads_what_we_emit() {
    let py = asdf_testkit::require_python!();
    let dir = asdf_testkit::TempDir::new("yaml-interop-out");
    let tree = rust_tree();
    let text = format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n{}",
        emit_to_string(&tree).unwrap()
    );
    let path = dir.join("ours.asdf");
    std::fs::write(&path, &text).unwrap();
    let script = format!(
        "{PY_CANON}\nwith asdf.open(sys.argv[1]) as af:\n    print(json.dumps(root(af.tree), separators=(',', ':')))\n"
    );
    let out = asdf_testkit::run_python(&py, &script, &[path.to_str().unwrap()]);
    let python = String::from_utf8(out).unwrap();
    let ours = canon_root(&tree);
    assert!(LONG_KEY.len() > 1024 && text.contains(&format!("? {LONG_KEY}\n")));
    assert_eq!(python.trim_end(), ours, "emitted text:\n{text}");
    // And the file re-reads here to the same tree.
    assert_eq!(parse_bytes(text.as_bytes()).unwrap(), tree);
}

#[test]
fn we_read_what_python_asdf_writes() {
    let py = asdf_testkit::require_python!();
    let dir = asdf_testkit::TempDir::new("yaml-interop-in");
    let path = dir.join("theirs.asdf");
    // PyYAML writes U+2028/U+2029/U+0085 raw as YAML 1.1 line breaks (followed by indentation):
    // these strings check that we read them the 1.1 way.
    let strings = AWKWARD
        .iter()
        .map(|s| {
            let mut j = String::new();
            json_string(s, &mut j);
            j
        })
        .collect::<Vec<_>>()
        .join(",");
    let script = format!(
        r#"{PY_CANON}
strings = json.loads('[' + sys.argv[2] + ']')
shared = {{"abc": 123}}
tree = {{
    "strings": strings,
    "string_keys": {{s: i for i, s in enumerate(strings)}},
    "ints": [0, -1, 9223372036854775807, -9223372036854775806],
    "floats": [0.0, -0.0, 0.1, 1e20, -2.5e-7, 1e300, 5e-324, float("inf"), float("-inf"), float("nan")],
    "bools": [True, False], "nothing": None, "a": shared, "b": shared,
    "custom": asdf.tagged.TaggedDict({{"x": 1, "y": "on"}}, "tag:example.org:custom/thing-1.0.0"),
    "custom_seq": asdf.tagged.TaggedList([1, "two"], "asdf://example.org/tags/list-1.2.3"),
    "custom_str": asdf.tagged.TaggedString("(1+2j)"),
    "long": "word " * 40,
    "nested": [[[1, 2], [3, 4]], {{"deep": {{"deeper": ["x"]}}}}, [], {{}}],
}}
tree["custom_str"]._tag = "tag:example.org:custom/str-1.0.0"
asdf.AsdfFile(tree).write_to(sys.argv[1])
with asdf.open(sys.argv[1]) as af:
    print(json.dumps(root(af.tree), separators=(',', ':')))
"#
    );
    let out = asdf_testkit::run_python(&py, &script, &[path.to_str().unwrap(), &strings]);
    let python = String::from_utf8(out).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let tree = parse_bytes(&bytes).unwrap();
    assert_eq!(tree.tag(), Some("tag:stsci.edu:asdf/core/asdf-1.1.0"));
    assert_eq!(
        canon_root(&tree),
        python.trim_end(),
        "file:\n{}",
        String::from_utf8_lossy(&bytes)
    );
    assert!(
        tree.get("a").unwrap().is_shared(),
        "Python writes an anchor for the shared dict"
    );
}

#[test]
fn we_read_big_integers_pyyaml_writes() {
    // Python asdf refuses to write literals beyond int64 (ValidationError), but PyYAML writes
    // them and asdf reads them (with a warning): they must arrive exactly.
    let py = asdf_testkit::require_python!();
    let script = r#"
import yaml, sys
vals = [2**63 - 1, 2**63, 2**64 - 1, 2**64, -2**63, -2**63 - 1, -2**70, 10**30, -(10**40) + 1]
sys.stdout.write("%YAML 1.1\n---\n" + yaml.safe_dump({"v": vals}, default_flow_style=False) + "...\n")
"#;
    let text = asdf_testkit::run_python(&py, script, &[]);
    let tree = parse_bytes(&text).unwrap();
    let got: Vec<String> = tree
        .get("v")
        .unwrap()
        .as_seq()
        .unwrap()
        .iter()
        .map(|n| n.as_integer_text().unwrap())
        .collect();
    let two63: i128 = 1 << 63;
    let expected: Vec<String> = [
        (two63 - 1).to_string(),
        two63.to_string(),
        (u64::MAX as i128).to_string(),
        ((u64::MAX as i128) + 1).to_string(),
        (-two63).to_string(),
        (-two63 - 1).to_string(),
        (-(1i128 << 70)).to_string(),
        "1000000000000000000000000000000".to_string(),
        "-9999999999999999999999999999999999999999".to_string(),
    ]
    .to_vec();
    assert_eq!(got, expected);
    assert!(matches!(
        tree.pointer("/v/1").unwrap().value(),
        Value::BigInt(_)
    ));
    assert_eq!(tree.pointer("/v/4").and_then(Node::as_i64), Some(i64::MIN));
    // Our emitter writes them back as plain integers that Python reads exactly.
    let ours = emit_to_string(&tree).unwrap();
    let back = asdf_testkit::run_python_stdin(
        &py,
        "import yaml,sys; print(yaml.safe_load(sys.stdin.read())['v'])",
        &[],
        ours.as_bytes(),
    );
    assert_eq!(
        String::from_utf8(back).unwrap().trim(),
        format!("[{}]", expected.join(", "))
    );
}
