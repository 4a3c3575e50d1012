//! The YAML 1.1 plain-scalar table: our resolution of every case, checked against the expected
//! kind here and, in the interop run, against PyYAML's `SafeLoader` (type and value).

use asdf_yaml::{parse_str, Node, Value};

/// (plain scalar, expected kind). Kinds: null, bool, int, float, timestamp, str, error.
/// `<<` and `=` are "merge"/"value" to PyYAML (its SafeLoader cannot construct them alone).
const TABLE: &[(&str, &str)] = &[
    // null
    ("~", "null"),
    ("null", "null"),
    ("Null", "null"),
    ("NULL", "null"),
    ("nULL", "str"),
    ("nul", "str"),
    ("None", "str"),
    // bool
    ("yes", "bool"),
    ("Yes", "bool"),
    ("YES", "bool"),
    ("no", "bool"),
    ("No", "bool"),
    ("NO", "bool"),
    ("true", "bool"),
    ("True", "bool"),
    ("TRUE", "bool"),
    ("false", "bool"),
    ("False", "bool"),
    ("FALSE", "bool"),
    ("on", "bool"),
    ("On", "bool"),
    ("ON", "bool"),
    ("off", "bool"),
    ("Off", "bool"),
    ("OFF", "bool"),
    ("y", "str"),
    ("Y", "str"),
    ("n", "str"),
    ("yES", "str"),
    ("tRUE", "str"),
    ("oN", "str"),
    // int
    ("0", "int"),
    ("-0", "int"),
    ("+0", "int"),
    ("7", "int"),
    ("-7", "int"),
    ("+7", "int"),
    ("017", "int"),
    ("-017", "int"),
    ("+017", "int"),
    ("00", "int"),
    ("0_7", "int"),
    ("08", "str"),
    ("09", "str"),
    ("0o17", "str"),
    ("0x1F", "int"),
    ("0x1f", "int"),
    ("0X1F", "str"),
    ("0x_1F", "int"),
    ("-0x1F", "int"),
    ("0xGG", "str"),
    ("0b101", "int"),
    ("-0b101", "int"),
    ("0b102", "str"),
    ("0B101", "str"),
    ("1_000", "int"),
    ("1__0", "int"),
    ("_1", "str"),
    ("1_", "int"),
    ("190:20:30", "int"),
    ("-190:20:30", "int"),
    ("1:59", "int"),
    ("1:60", "str"),
    ("1:5:7", "int"),
    ("0:30", "str"),
    ("1:123", "str"),
    ("9223372036854775807", "int"),
    ("9223372036854775808", "int"),
    ("-9223372036854775808", "int"),
    ("-9223372036854775809", "int"),
    ("18446744073709551615", "int"),
    ("18446744073709551616", "int"),
    ("0x8000000000000000", "int"),
    ("0xFFFFFFFFFFFFFFFFFF", "int"),
    ("1000000000000000000000000000001", "int"),
    ("-0777777777777777777777777", "int"),
    (
        "0b1111111111111111111111111111111111111111111111111111111111111111",
        "int",
    ),
    ("100000000000000000000:59:59", "int"),
    ("0b_", "error"),
    ("0x_", "error"),
    // float
    ("1.0", "float"),
    ("1.", "float"),
    ("-1.", "float"),
    ("+1.5", "float"),
    (".5", "float"),
    ("-.5", "str"),
    ("+.5", "str"),
    ("1.5e3", "str"),
    ("1.5e+3", "float"),
    ("1.5E-3", "float"),
    ("1e3", "str"),
    ("1.0e3", "str"),
    ("1e+3", "str"),
    ("1_000.5", "float"),
    ("1_0.0_1", "float"),
    (".inf", "float"),
    (".Inf", "float"),
    (".INF", "float"),
    ("-.inf", "float"),
    ("+.inf", "float"),
    ("-.Inf", "float"),
    (".iNF", "str"),
    (".nan", "float"),
    (".NaN", "float"),
    (".NAN", "float"),
    ("-.nan", "str"),
    ("nan", "str"),
    ("inf", "str"),
    ("1:30.5", "float"),
    ("-1:30.5", "float"),
    ("190:20:30.15", "float"),
    ("0:30.5", "float"),
    ("1.0e+20", "float"),
    ("-0.0", "float"),
    ("0.0", "float"),
    ("3.14159265358979", "float"),
    ("6.02e+23", "float"),
    ("1.7976931348623157e+308", "float"),
    ("4.9e-324", "float"),
    ("1.0e+400", "float"),
    ("1.0e-400", "float"),
    ("._5", "str"),
    (".e+3", "str"),
    ("1.e+3", "float"),
    ("1_.5", "float"),
    ("1.5_", "float"),
    ("1.2.3", "str"),
    ("1,000", "str"),
    ("1.0e+3_", "str"),
    (".5e-3", "float"),
    // timestamps (kept as tagged strings)
    ("2001-12-14", "timestamp"),
    ("2001-12-14t21:59:43.10-05:00", "timestamp"),
    ("2001-12-14 21:59:43.10 -5", "timestamp"),
    ("2001-12-15 2:59:43.10", "timestamp"),
    ("2001-12-15T02:59:43.1Z", "timestamp"),
    ("2026-11-21 07:36:11+00:00", "timestamp"),
    ("2001-1-1T1:00:00Z", "timestamp"),
    ("2001-1-1", "str"),
    ("2001-12-14 21:59", "str"),
    ("2001-12-14X", "str"),
    ("20011-12-14", "str"),
    // other
    ("<<", "merge"),
    ("=", "value"),
    ("foo", "str"),
    ("+", "str"),
    (".", "str"),
    ("..", "str"),
    ("0x", "str"),
    ("1:2:3:4", "int"),
    ("12e", "str"),
    ("-a", "str"),
    ("é", "str"),
    ("a b", "str"),
    ("1 2", "str"),
];

fn kind_of(n: &Node) -> &'static str {
    match (n.tag(), n.value()) {
        (Some("tag:yaml.org,2002:timestamp"), _) => "timestamp",
        (Some("tag:yaml.org,2002:value"), _) => "value",
        (_, Value::Null) => "null",
        (_, Value::Bool(_)) => "bool",
        (_, Value::Int(_) | Value::BigInt(_)) => "int",
        (_, Value::Float(_)) => "float",
        (_, Value::Str(s)) if s == "<<" => "merge",
        _ => "str",
    }
}

fn ours(text: &str) -> Result<Node, asdf_yaml::Error> {
    parse_str(&format!("v: {text}\n")).map(|m| m.get("v").cloned().unwrap_or_default())
}

#[test]
fn table_kinds() {
    for &(text, kind) in TABLE {
        match ours(text) {
            Ok(n) => assert_eq!(kind_of(&n), kind, "{text:?} -> {n:?}"),
            Err(e) => assert_eq!(kind, "error", "{text:?}: {e}"),
        }
    }
}

#[test]
fn table_values() {
    let v = |t: &str| ours(t).unwrap();
    assert_eq!(v("017").as_i64(), Some(15));
    assert_eq!(v("0x_1F").as_i64(), Some(31));
    assert_eq!(v("0b101").as_i64(), Some(5));
    assert_eq!(v("190:20:30").as_i64(), Some(685230));
    assert_eq!(v("1_000.5").as_f64(), Some(1000.5));
    assert_eq!(v("1:30.5").as_f64(), Some(90.5));
    assert_eq!(
        v("18446744073709551616").as_integer_text().as_deref(),
        Some("18446744073709551616")
    );
    assert_eq!(v("18446744073709551615").as_u64(), Some(u64::MAX));
    assert_eq!(
        v("-0.0").as_f64().map(f64::to_bits),
        Some((-0.0f64).to_bits())
    );
    assert_eq!(
        v("2001-12-14 21:59:43.10 -5").as_str(),
        Some("2001-12-14 21:59:43.10 -5")
    );
}

/// Python: for each case, the tag PyYAML's 1.1 resolver picks and the value SafeLoader builds.
const PY_TABLE: &str = r#"
import json, sys, yaml, datetime
cases = json.loads(sys.stdin.read())
for text in cases:
    tag = yaml.SafeLoader.resolve(yaml.SafeLoader, yaml.ScalarNode, text, (True, False))
    try:
        v = yaml.load("v: " + text + "\n", Loader=yaml.SafeLoader)["v"]
        if isinstance(v, bool): val = "True" if v else "False"
        elif isinstance(v, int): val = str(v)
        elif isinstance(v, float): val = repr(v)
        elif v is None: val = "None"
        elif isinstance(v, (datetime.date, datetime.datetime)): val = text
        else: val = str(v)
    except Exception as e:
        val = "ERROR"
    print(json.dumps([tag, val]))
"#;

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || !c.is_ascii() => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[test]
fn table_matches_pyyaml() {
    let py = asdf_testkit::require_python!();
    let input = format!(
        "[{}]",
        TABLE
            .iter()
            .map(|(t, _)| json_string(t))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let out = asdf_testkit::run_python_stdin(&py, PY_TABLE, &[], input.as_bytes());
    let out = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), TABLE.len());
    let y = "tag:yaml.org,2002:";
    for (&(text, _), line) in TABLE.iter().zip(lines) {
        // JSON is YAML: decode the oracle's line with our parser (flow sequence of 2 strings).
        let pair = parse_str(line).unwrap();
        let tag = pair.index(0).and_then(Node::as_str).unwrap();
        let val = pair.index(1).and_then(Node::as_str).unwrap();
        let ours = ours(text);
        let n = match (&ours, val) {
            (Err(_), "ERROR") => continue,
            (Ok(n), "ERROR") if tag == format!("{y}merge") || tag == format!("{y}value") => {
                // SafeLoader has no constructor for these alone; Python asdf keeps them as
                // tagged strings, as we do.
                assert_eq!(n.as_str(), Some(text));
                continue;
            }
            (Ok(n), _) => n,
            (Err(e), _) => panic!("{text:?}: we fail ({e}) but PyYAML reads {val:?}"),
        };
        let expected_kind = tag.strip_prefix(y).unwrap_or(tag);
        assert_eq!(
            kind_of(n),
            expected_kind,
            "{text:?}: PyYAML {tag} {val}, ours {n:?}"
        );
        match n.value() {
            Value::Int(i) => assert_eq!(i.to_string(), val, "{text:?}"),
            Value::BigInt(s) => assert_eq!(s.as_str(), val, "{text:?}"),
            Value::Float(f) => {
                let p: f64 = val.parse().unwrap();
                assert!(
                    p.to_bits() == f.to_bits() || (p.is_nan() && f.is_nan()),
                    "{text:?}: PyYAML {val}, ours {f:?}"
                );
            }
            Value::Bool(b) => assert_eq!(if *b { "True" } else { "False" }, val),
            Value::Null => assert_eq!(val, "None"),
            Value::Str(s) => assert_eq!(s, val, "{text:?}"),
            _ => unreachable!(),
        }
    }
}
