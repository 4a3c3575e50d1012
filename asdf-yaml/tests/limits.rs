//! Hostile inputs fail fast with typed errors: no stack overflow, no gigabytes, no hang.

use asdf_yaml::{parse_document, parse_str, Engine, Error, Limits, ParseOptions};
use std::time::{Duration, Instant};

fn quick<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    // Generous for a debug build on a loaded 2-core machine; the real cost is milliseconds.
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "{what} took {:?}",
        t.elapsed()
    );
    out
}

#[test]
fn billion_laughs_is_refused() {
    let mut text = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    let err = quick("billion laughs", || parse_str(&text)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::AliasLimit {
                limit: 1_000_000,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("line 6"), "{err}");
    // With a larger budget the same document is still cheap: aliases are shared, not copied.
    let opts = ParseOptions {
        limits: Limits {
            max_alias_nodes: u64::MAX,
            max_alias_bytes: u64::MAX,
            ..Limits::default()
        },
        ..ParseOptions::default()
    };
    let doc = quick("billion laughs, unlimited", || parse_document(&text, &opts)).unwrap();
    assert_eq!(
        doc.root
            .pointer("/a9/9/9/9/9/9/9/9/9/9/9")
            .and_then(|n| n.as_str()),
        Some("lol")
    );
}

#[test]
fn alias_expansion_is_bounded_in_bytes() {
    // A 1 MiB scalar aliased 300 times: 301 nodes, but 300 MiB for anything that prints the tree.
    let big = "x".repeat(1 << 20);
    let text = format!("a: &big {big}\nb: [{}]\n", vec!["*big"; 300].join(", "));
    for engine in [Engine::Auto, Engine::Reference] {
        let opts = ParseOptions {
            engine,
            ..ParseOptions::default()
        };
        let err = quick("big aliases", || parse_document(&text, &opts)).unwrap_err();
        assert!(
            matches!(err, Error::AliasBytesLimit { limit, .. } if limit == 256 << 20),
            "{err}"
        );
        assert!(err.to_string().contains("line 2"), "{err}");
    }
    // Fewer aliases fit the default; the untrusted preset allows 16 MiB.
    let text = format!("a: &big {big}\nb: [{}]\n", vec!["*big"; 20].join(", "));
    assert!(parse_document(&text, &ParseOptions::default()).is_ok());
    let err = parse_document(&text, &ParseOptions::untrusted()).unwrap_err();
    assert!(matches!(err, Error::AliasBytesLimit { .. }), "{err}");
    // Merges count too.
    let text = format!(
        "a: &m {{k: {big}}}\n{}",
        (0..300)
            .map(|i| format!("c{i}: {{<<: *m}}\n"))
            .collect::<String>()
    );
    let err = parse_document(&text, &ParseOptions::default()).unwrap_err();
    assert!(matches!(err, Error::AliasBytesLimit { .. }), "{err}");
}

#[test]
fn deep_flow_nesting_is_refused() {
    for open in ["[", "{", "[{a: "] {
        let text = open.repeat(100_000);
        let err = quick("deep flow", || parse_str(&text)).unwrap_err();
        // The parser itself stops flow nesting at 255 levels; either way a typed error.
        assert!(
            matches!(err, Error::DepthLimit { .. } | Error::Syntax { .. }),
            "{err}"
        );
    }
}

#[test]
fn deep_block_nesting_is_refused() {
    let text = "- ".repeat(100_000) + "x\n";
    let err = quick("deep block seq", || parse_str(&text)).unwrap_err();
    assert!(matches!(err, Error::DepthLimit { limit: 512, .. }), "{err}");
    let mut text = String::new();
    for i in 0..2000 {
        text.push_str(&" ".repeat(i));
        text.push_str("k:\n");
    }
    let err = quick("deep block map", || parse_str(&text)).unwrap_err();
    assert!(matches!(err, Error::DepthLimit { .. }), "{err}");
    // Exactly at the limit is fine.
    let ok = "- ".repeat(512) + "x\n";
    assert!(parse_str(&ok).is_ok());
    let too_deep = "- ".repeat(513) + "x\n";
    assert!(parse_str(&too_deep).is_err());
}

#[test]
fn scalar_size_is_bounded() {
    let opts = ParseOptions {
        limits: Limits {
            max_scalar_bytes: 1000,
            ..Limits::default()
        },
        ..ParseOptions::default()
    };
    let text = format!("a: ok\nb: {}\n", "x".repeat(1001));
    let err = parse_document(&text, &opts).unwrap_err();
    match err {
        Error::ScalarLimit {
            len,
            limit,
            location,
        } => {
            assert_eq!((len, limit), (1001, 1000));
            assert_eq!((location.line, location.offset), (2, 9));
        }
        other => panic!("{other}"),
    }
}

#[test]
fn malformed_input_is_a_located_error() {
    let err = parse_str("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
    assert!(matches!(err, Error::Syntax { .. }), "{err}");
    // Column in characters, offset in bytes (`é` is two bytes).
    let err = parse_str("é: *nope\n").unwrap_err();
    match err {
        Error::BadAlias { location, .. } | Error::Syntax { location, .. } => {
            assert_eq!((location.line, location.column, location.offset), (1, 3, 4))
        }
        other => panic!("{other}"),
    }
    assert!(matches!(
        parse_str("a: &x [1, *x]").unwrap_err(),
        Error::BadAlias { .. } | Error::Syntax { .. }
    ));
    assert!(matches!(
        asdf_yaml::parse_bytes(b"a: \xff\n").unwrap_err(),
        Error::Utf8 { offset: 3 }
    ));
    assert!(matches!(
        parse_str("? [1, 2]\n: x\n").unwrap_err(),
        Error::InvalidKey {
            kind: "sequence",
            ..
        }
    ));
    assert!(matches!(
        parse_str("--- a\n--- b\n").unwrap_err(),
        Error::MultipleDocuments { .. }
    ));
    assert!(matches!(
        parse_str("x: !!int abc").unwrap_err(),
        Error::InvalidScalar {
            expected: "int",
            ..
        }
    ));
    assert!(matches!(
        parse_str("x: 0b_").unwrap_err(),
        Error::InvalidScalar { .. }
    ));
}

#[test]
fn fuzz_like_garbage_never_panics() {
    // A deterministic sweep of short byte strings built from YAML-significant characters.
    let alphabet = b"-:[]{},&*!|>'\"%@ #\n\t.?~0a<=";
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..20_000 {
        let mut s = Vec::new();
        let len = (seed % 24) as usize;
        for _ in 0..len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            s.push(alphabet[(seed % alphabet.len() as u64) as usize]);
        }
        seed = seed.wrapping_add(1);
        if let Ok(tree) = asdf_yaml::parse_bytes(&s) {
            // Whatever parsed must emit and re-parse to the same tree.
            let text = asdf_yaml::emit_to_string(&tree).unwrap();
            let again = parse_str(&text)
                .unwrap_or_else(|e| panic!("{:?} -> {text:?}: {e}", String::from_utf8_lossy(&s)));
            assert_eq!(again, tree, "{:?} -> {text:?}", String::from_utf8_lossy(&s));
        }
    }
}

#[test]
fn integers_longer_than_python_accepts_are_refused() {
    use asdf_yaml::resolve::MAX_INT_DIGITS;
    let ok = "7".repeat(MAX_INT_DIGITS);
    let tree = parse_str(&format!("n: {ok}")).unwrap();
    assert!(
        matches!(tree["n"].value(), asdf_yaml::Value::BigInt(s) if **s == ok),
        "the largest accepted integer keeps its digits"
    );
    for (what, text) in [
        ("decimal", format!("n: {}", "7".repeat(MAX_INT_DIGITS + 1))),
        ("a million digits", format!("n: {}", "9".repeat(1_000_000))),
        ("hex", format!("n: 0x{}", "f".repeat(1_000_000))),
        ("octal", format!("n: 0{}", "7".repeat(1_000_000))),
        ("binary", format!("n: 0b{}", "1".repeat(1_000_000))),
        ("sexagesimal", format!("n: 1{}", ":59".repeat(300_000))),
        ("tagged", format!("n: !!int {}", "1_2".repeat(300_000))),
    ] {
        match parse_str(&text) {
            Err(Error::IntegerTooLong { digits, limit, .. }) => {
                assert!(digits > limit && limit == MAX_INT_DIGITS, "{what}")
            }
            other => panic!("{what}: {other:?}"),
        }
    }
}

#[test]
fn tags_are_bounded_and_stored_once() {
    use asdf_yaml::{MAX_TAG_BYTES, MAX_TAG_TOTAL_BYTES};
    // One long (but allowed) tag on many nodes through a handle: parsed, the tag shared.
    let prefix = format!("tag:example.org:{}", "p".repeat(MAX_TAG_BYTES - 40));
    let mut text = format!("%TAG !h! {prefix}\n---\n");
    for i in 0..20_000 {
        text.push_str(&format!("k{i}: !h!x {i}\n"));
    }
    let tree = parse_str(&text).unwrap();
    let a = tree["k0"].tag().unwrap();
    let b = tree["k19999"].tag().unwrap();
    assert_eq!(a, format!("{prefix}x"));
    assert!(std::ptr::eq(a, b), "each node has its own copy of the tag");
    // Longer than the limit: refused, whether reached through a handle or written out.
    let long = format!("tag:example.org:{}", "q".repeat(MAX_TAG_BYTES));
    for text in [
        format!("%TAG !h! {long}\n---\na: !h!x 1\n"),
        format!("a: !<{long}> [1]\n"),
    ] {
        match parse_str(&text) {
            Err(Error::TagLimit { len, .. }) => assert!(len > MAX_TAG_BYTES),
            other => panic!("{other:?}"),
        }
    }
    // Many distinct long tags: refused once they add up past the total.
    let mut text = format!("%TAG !h! {}\n---\n", &prefix[..MAX_TAG_BYTES - 30]);
    let n = MAX_TAG_TOTAL_BYTES / (MAX_TAG_BYTES - 30) + 2;
    for i in 0..n {
        text.push_str(&format!("k{i}: !h!{i} x\n"));
    }
    assert!(matches!(parse_str(&text), Err(Error::TagLimit { .. })));
}
