//! Hostile schemas and containers: every one is a typed error, quickly, never a panic.

use std::time::{Duration, Instant};

use asdf_awkward::{
    read_array, read_schema, DirStore, Error, Limits, MemoryStore, ReadOptions, Whitelist,
};
use serde_json::{json, Value as Json};

const FAST: Duration = Duration::from_secs(1);

fn store_with(blobs: &[(&str, Vec<u8>)]) -> MemoryStore {
    let mut m = MemoryStore::default();
    for (n, b) in blobs {
        m.blobs.insert(n.to_string(), b.clone());
    }
    m
}

fn doc(schema: Json) -> Json {
    json!({"awkward0": "0.15.5", "schema": schema})
}

fn leaf(read: &str, dtype: &str, count: Json) -> Json {
    json!({"call": ["awkward0", "numpy", "frombuffer"], "args": [{"read": read}, {"dtype": dtype}, {"json": count}]})
}

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn i64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Evaluates and checks the error comes back within [`FAST`].
fn eval_err(schema: Json, store: &MemoryStore, opts: &ReadOptions) -> Error {
    // Only the evaluation is timed: building a 200 000-element document in a debug build is
    // the test's own cost, not the reader's.
    let d = doc(schema);
    let t = Instant::now();
    let r = read_schema(&d, store, opts);
    let dt = t.elapsed();
    assert!(dt < FAST, "took {dt:?}");
    match r {
        Ok(l) => panic!("expected an error, got {}", l.class_name()),
        Err(e) => e,
    }
}

fn opts() -> ReadOptions {
    ReadOptions::default()
}

#[test]
fn python_pickle_is_refused() {
    // base64 pickle of print("pwned") style payloads: never decoded.
    let e = eval_err(
        json!({"python": "gASVCgAAAAAAAABHf/gAAAAAAAAu"}),
        &MemoryStore::default(),
        &opts(),
    );
    assert!(matches!(e, Error::Refused { .. }), "{e}");
    assert!(e.to_string().contains("pickle"), "{e}");
    // Nested inside an otherwise valid array (SparseArray default).
    let s = store_with(&[("i", i64s(&[1])), ("c", f64s(&[1.0]))]);
    let e = eval_err(
        json!({"call": ["awkward0", "SparseArray"], "args": [{"json": 3}, leaf("i", "int64", json!(1)), leaf("c", "float64", json!(1)), {"python": "gASVCgAAAAAAAABHf/gAAAAAAAAu"}]}),
        &s,
        &opts(),
    );
    assert!(
        matches!(e, Error::Refused { ref location, .. } if location == "schema.args[3]"),
        "{e}"
    ); // The opt-in scalar decoder reads that NaN default, and still refuses anything that is not a
       // plain scalar: here pickle.dumps(os.system) (a STACK_GLOBAL) and a protocol-0 GLOBAL.
    let scalars = ReadOptions {
        decode_pickled_scalars: true,
        ..opts()
    };
    let sparse = |default: Json| json!({"call": ["awkward0", "SparseArray"], "args": [{"json": 3}, leaf("i", "int64", json!(1)), leaf("c", "float64", json!(1)), default]});
    let l = read_schema(
        &doc(sparse(json!({"python": "gASVCgAAAAAAAABHf/gAAAAAAAAu"}))),
        &s,
        &scalars,
    )
    .unwrap();
    assert!(matches!(l.get(0).unwrap(), asdf_awkward::Value::Float(f) if f.is_nan()));
    assert_eq!(l.get(1).unwrap(), asdf_awkward::Value::Float(1.0));
    for evil in [
        "gASVFAAAAAAAAACMBXBvc2l4lIwGc3lzdGVtlJOULg==",
        "Y29zCnN5c3RlbQooUydlY2hvJwp0Ui4=",
        "not base64!",
    ] {
        let e = eval_err(sparse(json!({"python": evil})), &s, &scalars);
        assert!(matches!(e, Error::Refused { .. }), "{e}");
    }
}

#[test]
fn topython_and_persist_functions_are_refused() {
    for spec in [
        json!(["awkward0.persist", "topython"]),
        json!(["awkward.persist", "topython"]),
    ] {
        let e = eval_err(
            json!({"call": spec, "args": [{"json": "gASVCgAAAAAAAABHf/gAAAAAAAAu"}]}),
            &MemoryStore::default(),
            &opts(),
        );
        assert!(matches!(e, Error::Refused { .. }), "{e}");
    }
    let e = eval_err(
        json!({"call": ["awkward0.persist", "deserialize"], "args": []}),
        &MemoryStore::default(),
        &opts(),
    );
    assert!(matches!(e, Error::Refused { .. }), "{e}");
}

#[test]
fn paths_and_urls_are_refused() {
    let parquet = json!({"call": ["awkward0.arrow", "_ParquetFile", "fromjson"], "args": [{"json": {"file": "/etc/passwd"}}]});
    assert!(matches!(
        eval_err(parquet, &MemoryStore::default(), &opts()),
        Error::Refused { .. }
    ));
    let uproot = json!({"call": ["uproot.tree", "_LazyFiles"], "args": [{"json": ["root://evil.example/x.root"]}]});
    assert!(matches!(
        eval_err(uproot, &MemoryStore::default(), &opts()),
        Error::Refused { .. }
    ));
    // An absolute read is still a blob name in the same container; a directory store refuses
    // traversal outside its folder.
    let tmp = asdf_testkit::TempDir::new("awk-sec");
    let dir = DirStore::create(tmp.path()).unwrap();
    for name in [
        "../../etc/passwd",
        "/etc/passwd",
        "a/../../b",
        "a\\b",
        "x\u{0}y",
    ] {
        let d = doc(
            json!({"call": ["awkward0", "numpy", "frombuffer"], "args": [{"read": name, "absolute": true}, {"dtype": "uint8"}, {"json": 1}]}),
        );
        let e = read_schema(&d, &dir, &opts()).unwrap_err();
        assert!(matches!(e, Error::BadName { .. }), "{name}: {e}");
    }
}

#[test]
fn unknown_calls_and_functions() {
    let os = json!({"call": ["os", "system"], "args": [{"json": "echo pwned"}]});
    assert!(matches!(
        eval_err(os.clone(), &MemoryStore::default(), &opts()),
        Error::NotWhitelisted { .. }
    ));
    // Even with awkward0's "*" whitelist, only our fixed table is dispatched to.
    let open = ReadOptions {
        whitelist: Whitelist::allow_all(),
        ..opts()
    };
    assert!(matches!(
        eval_err(os, &MemoryStore::default(), &open),
        Error::Unsupported { .. }
    ));
    let builtins = json!({"call": ["builtins", "eval"], "args": [{"json": "1"}]});
    assert!(matches!(
        eval_err(builtins, &MemoryStore::default(), &open),
        Error::Unsupported { .. }
    ));
    // Whitelisted by awkward0's wildcard but not a real constructor.
    let weird = json!({"call": ["awkward0", "JaggedArray", "__init__", "__globals__"], "args": []});
    assert!(matches!(
        eval_err(weird, &MemoryStore::default(), &opts()),
        Error::Unsupported { .. }
    ));
    let f = json!({"function": ["os", "system"]});
    assert!(matches!(
        eval_err(f, &MemoryStore::default(), &opts()),
        Error::Refused { .. }
    ));
    // A restrictive caller whitelist refuses even our own constructors.
    let narrow = ReadOptions {
        whitelist: Whitelist::new(vec![vec!["zlib".into(), "decompress".into()]]),
        ..opts()
    };
    let s = store_with(&[("a", f64s(&[1.0]))]);
    assert!(matches!(
        eval_err(leaf("a", "float64", json!(1)), &s, &narrow),
        Error::NotWhitelisted { .. }
    ));
}

#[test]
fn object_and_virtual_arrays_are_refused() {
    let s = store_with(&[("a", f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))]);
    let obj = json!({"call": ["awkward0", "ObjectArray"], "args": [leaf("a", "float64", json!(6)), {"function": ["mymod", "FloatPoint"], "id": 3}, {"tuple": []}, {"dict": {}}], "id": 0});
    let e = eval_err(obj, &s, &opts());
    assert!(
        matches!(e, Error::Refused { .. }) && e.to_string().contains("ObjectArray"),
        "{e}"
    );
    let virt = json!({"call": ["awkward0", "VirtualArray"], "args": [{"function": ["mymod", "makearray"], "id": 1}, {"tuple": []}, {"dict": {}}], "cacheable": true, "id": 0});
    let e = eval_err(virt, &s, &opts());
    assert!(
        matches!(e, Error::Refused { .. }) && e.to_string().contains("VirtualArray"),
        "{e}"
    );
}

#[test]
fn deep_nesting_100000() {
    let n = 100_000;
    let mut text = String::from(r#"{"awkward0": "0.15.5", "schema": "#);
    for _ in 0..n {
        text.push_str(r#"{"list": ["#);
    }
    text.push_str(r#"{"json": 1}"#);
    for _ in 0..n {
        text.push_str("]}");
    }
    text.push('}');
    let mut s = MemoryStore::default();
    s.blobs.insert(".json".into(), text.into_bytes());
    let t = Instant::now();
    let e = read_array(&s, "", &opts()).unwrap_err();
    assert!(t.elapsed() < FAST, "took {:?}", t.elapsed());
    assert!(matches!(e, Error::SchemaJson { .. }), "{e}");
    // Within the JSON parser's limit, our own depth limit applies.
    let mut expr = json!({"json": 1});
    for _ in 0..50 {
        expr = json!({"list": [expr]});
    }
    let shallow = ReadOptions {
        limits: Limits {
            max_depth: 20,
            ..Limits::default()
        },
        ..opts()
    };
    let e = eval_err(expr, &MemoryStore::default(), &shallow);
    assert!(
        matches!(
            e,
            Error::Limit {
                what: "expression nesting depth",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn reference_cycles() {
    let s = store_with(&[("s", i64s(&[0])), ("t", i64s(&[0]))]);
    // a.content = a
    let selfref = json!({"call": ["awkward0", "JaggedArray"], "args": [leaf("s", "int64", json!(1)), leaf("t", "int64", json!(1)), {"ref": 0}], "id": 0});
    let e = eval_err(selfref, &s, &opts());
    assert!(
        matches!(e, Error::Schema { .. }) && e.to_string().contains("cycle"),
        "{e}"
    );
    // Mutual: 0 -> ref 1 (forward, defined inside 2), 2 -> ref 0.
    let mutual = json!({"list": [{"ref": 2}, {"list": [{"ref": 0}], "id": 2}], "id": 0});
    let e = eval_err(
        json!({"call": ["awkward0", "IndexedArray"], "args": [leaf("s", "int64", json!(1)), mutual]}),
        &s,
        &opts(),
    );
    assert!(e.to_string().contains("cycle"), "{e}");
    let unknown = json!({"call": ["awkward0", "IndexedArray"], "args": [leaf("s", "int64", json!(1)), {"ref": 99}]});
    assert!(eval_err(unknown, &s, &opts())
        .to_string()
        .contains("unknown id 99"));
    let dup = json!({"list": [{"json": 1, "id": 5}, {"json": 2, "id": 5}]});
    assert!(eval_err(dup, &s, &opts())
        .to_string()
        .contains("defined twice"));
}

#[test]
fn ref_fan_out_is_bounded() {
    let mut items = vec![json!({"json": [1, 2, 3], "id": 1})];
    items.extend(std::iter::repeat_n(json!({"ref": 1}), 200_000));
    let tight = ReadOptions {
        limits: Limits {
            max_expressions: 100_000,
            ..Limits::default()
        },
        ..opts()
    };
    let e = eval_err(json!({"list": items}), &MemoryStore::default(), &tight);
    assert!(
        matches!(
            e,
            Error::Limit {
                what: "number of expressions",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn huge_lengths() {
    let s = store_with(&[("a", f64s(&[1.0]))]);
    for count in [
        json!(1_000_000_000_000_000_000u64),
        json!(2),
        json!(u64::MAX),
    ] {
        let e = eval_err(leaf("a", "float64", count), &s, &opts());
        assert!(matches!(e, Error::Blob { .. }), "{e}");
        assert!(e.to_string().contains("blob has only 8 bytes"), "{e}");
    }
    // Subarray shapes that overflow.
    let e = eval_err(
        json!({"call": ["awkward0", "numpy", "frombuffer"], "args": [{"read": "a"}, {"dtype": ["float64", [4294967296u64, 4294967296u64, 4294967296u64]]}, {"json": 1}]}),
        &s,
        &opts(),
    );
    assert!(matches!(e, Error::Schema { .. }), "{e}");
    // Sparse length is not backed by data: a ceiling applies.
    let s2 = store_with(&[("i", i64s(&[1])), ("c", f64s(&[1.0]))]);
    let e = eval_err(
        json!({"call": ["awkward0", "SparseArray"], "args": [{"json": 1_000_000_000_000_000u64}, leaf("i", "int64", json!(1)), leaf("c", "float64", json!(1)), {"json": null}]}),
        &s2,
        &opts(),
    );
    assert!(
        matches!(
            e,
            Error::Limit {
                what: "SparseArray length",
                ..
            }
        ),
        "{e}"
    );
}

fn zlib(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn decompression_bombs() {
    let bomb = zlib(&vec![0u8; 64 << 20]);
    let s = store_with(&[("b", bomb)]);
    // frombuffer declares 10 int64s: decompression stops right after 80 bytes.
    let e = eval_err(
        json!({"call": ["awkward0", "numpy", "frombuffer"], "args": [{"call": ["zlib", "decompress"], "args": [{"read": "b"}]}, {"dtype": "int64"}, {"json": 10}]}),
        &s,
        &opts(),
    );
    assert!(matches!(e, Error::Limit { .. }), "{e}");
    // No declared size: the per-blob ceiling applies.
    let small = ReadOptions {
        limits: Limits {
            max_blob_bytes: 1 << 20,
            ..Limits::default()
        },
        ..opts()
    };
    let e = eval_err(
        json!({"call": ["awkward0", "numpy", "frombuffer"], "args": [{"call": ["zlib", "decompress"], "args": [{"read": "b"}]}, {"dtype": "int64"}]}),
        &s,
        &small,
    );
    assert!(matches!(e, Error::Limit { limit: 1048576, .. }), "{e}");
    // lz4 block with a lying 4 GiB size prefix.
    let mut lz = u32::MAX.to_le_bytes().to_vec();
    lz.extend_from_slice(&lz4_flex::block::compress(&[1, 2, 3]));
    let s = store_with(&[("l", lz)]);
    let e = eval_err(
        json!({"call": ["awkward0", "numpy", "frombuffer"], "args": [{"call": ["lz4.block", "decompress"], "args": [{"read": "l"}]}, {"dtype": "uint8"}]}),
        &s,
        &small,
    );
    assert!(matches!(e, Error::Limit { .. }), "{e}");
    // Garbage zlib data.
    let s = store_with(&[("g", b"not zlib at all".to_vec())]);
    let e = eval_err(
        json!({"call": ["awkward0", "numpy", "frombuffer"], "args": [{"call": ["zlib", "decompress"], "args": [{"read": "g"}]}, {"dtype": "uint8"}]}),
        &s,
        &opts(),
    );
    assert!(matches!(e, Error::Decompress { codec: "zlib", .. }), "{e}");
    // A stream that ends before frombuffer's declared size is corrupt, not a limit.
    let s = store_with(&[("t", zlib(&[7u8; 16]))]);
    let e = eval_err(
        json!({"call": ["awkward0", "numpy", "frombuffer"], "args": [{"call": ["zlib", "decompress"], "args": [{"read": "t"}]}, {"dtype": "int64"}, {"json": 10}]}),
        &s,
        &opts(),
    );
    assert!(
        matches!(&e, Error::Decompress { codec: "zlib", message, .. }
            if message.contains("after 16 decoded bytes, 80 expected")),
        "{e}"
    );
    // The total-bytes ceiling spans blobs.
    let s = store_with(&[("a", vec![0u8; 600]), ("b", vec![0u8; 600])]);
    let total = ReadOptions {
        limits: Limits {
            max_total_bytes: 1000,
            ..Limits::default()
        },
        ..opts()
    };
    let e = eval_err(
        json!({"list": [leaf("a", "uint8", json!(600)), leaf("b", "uint8", json!(600))]}),
        &s,
        &total,
    );
    assert!(matches!(e, Error::Limit { .. }), "{e}");
}

#[test]
fn structural_errors() {
    let s = store_with(&[
        ("ix", i64s(&[0, 5])),
        ("neg", i64s(&[2, -1])),
        ("c", f64s(&[1.0, 2.0])),
        ("t", vec![0, 3]),
        ("m", vec![0]),
        ("big", f64s(&[0.0; 10])),
    ]);
    let cases = [
        json!({"call": ["awkward0", "IndexedArray"], "args": [leaf("ix", "int64", json!(2)), leaf("c", "float64", json!(2))]}),
        json!({"call": ["awkward0", "JaggedArray", "fromcounts"], "args": [leaf("neg", "int64", json!(2)), leaf("c", "float64", json!(2))]}),
        json!({"call": ["awkward0", "JaggedArray", "fromcounts"], "args": [leaf("ix", "int64", json!(2)), leaf("c", "float64", json!(2))]}),
        json!({"call": ["awkward0", "JaggedArray"], "args": [leaf("ix", "int64", json!(2)), leaf("neg", "int64", json!(2)), leaf("c", "float64", json!(2))]}),
        json!({"call": ["awkward0", "UnionArray", "fromtags"], "args": [leaf("t", "uint8", json!(2)), {"list": [leaf("c", "float64", json!(2))]}]}),
        json!({"call": ["awkward0", "BitMaskedArray"], "args": [leaf("m", "uint8", json!(1)), leaf("big", "float64", json!(10)), {"json": true}, {"json": true}]}),
        json!({"call": ["awkward0", "IndexedMaskedArray"], "args": [leaf("neg", "int64", json!(2)), leaf("c", "float64", json!(2)), {"json": -7}]}),
        json!({"call": ["awkward0", "Table", "fromview"], "args": [{"tuple": [{"json": 1}, {"json": 1}, {"json": 5}]}, {"call": ["awkward0", "Table", "frompairs"], "args": [{"pairs": [["x", leaf("c", "float64", json!(2))]]}, {"json": 0}]}]}),
        json!({"call": ["awkward0", "MaskedArray"], "args": [leaf("ix", "float64", json!(2)), leaf("c", "float64", json!(2))]}),
        json!({"call": ["awkward0", "JaggedArray", "fromcounts"], "args": [leaf("c", "float64", json!(2)), leaf("c", "float64", json!(2))]}),
        json!({"call": ["awkward0", "ChunkedArray"], "args": [{"list": [leaf("c", "float64", json!(2))]}, {"json": [3]}]}),
        json!({"call": ["awkward0", "IndexedArray"], "args": [leaf("ix", "int64", json!(2))]}),
        json!({"call": ["awkward0", "IndexedArray"], "args": [leaf("ix", "int64", json!(2)), leaf("c", "float64", json!(2))], "kwargs": {"bogus": {"json": 1}}}),
        json!({"call": ["awkward0", "numpy", "frombuffer"], "args": [{"read": "missing"}, {"dtype": "uint8"}, {"json": 1}]}),
        json!({"call": ["awkward0", "numpy", "frombuffer"], "args": [{"read": "c"}, {"dtype": "object"}, {"json": 1}]}),
        json!({"call": ["awkward0", "numpy", "frombuffer"], "args": [{"read": "c"}, {"dtype": "|S4"}, {"json": 1}]}),
        json!([1, 2, 3]),
        json!({"nothing": 1}),
        json!({"json": 5}),
    ];
    for (i, c) in cases.into_iter().enumerate() {
        let e = eval_err(c, &s, &opts());
        assert!(!e.to_string().is_empty(), "case {i}");
    }
    // Top level checks.
    assert!(read_schema(&json!({"schema": {"json": 1}}), &s, &opts())
        .unwrap_err()
        .to_string()
        .contains("missing 'awkward0'"));
    assert!(read_schema(&json!([1]), &s, &opts()).is_err());
    assert!(read_schema(
        &json!({"awkward0": "x", "schema": {"json": 1}, "prefix": 5}),
        &s,
        &opts()
    )
    .is_err());
    let mut bad = MemoryStore::default();
    bad.blobs.insert(".json".into(), b"{not json".to_vec());
    assert!(matches!(
        read_array(&bad, "", &opts()),
        Err(Error::SchemaJson { .. })
    ));
    assert!(matches!(
        read_array(&bad, "nope", &opts()),
        Err(Error::NoSuchArray { .. })
    ));
}

#[test]
fn error_messages_locate_the_problem() {
    let s = store_with(&[("c", f64s(&[1.0, 2.0]))]);
    let e = eval_err(
        json!({"call": ["awkward0", "Table", "frompairs"], "args": [{"pairs": [["x", leaf("c", "float64", json!(3))]]}]}),
        &s,
        &opts(),
    );
    let msg = e.to_string();
    assert!(msg.contains("schema.args[0].pairs[0][1].args[0]"), "{msg}");
    assert!(
        msg.contains("3 elements") && msg.contains("16 bytes"),
        "{msg}"
    );
}

#[test]
fn fuzzed_schemas_never_panic() {
    // A deterministic mutation fuzzer over a valid schema: every result is Ok or a typed error.
    let s = store_with(&[("1", i64s(&[2, 0, 1])), ("3", f64s(&[1.5, 2.5, 3.5]))]);
    let base = r#"{"awkward0": "0.15.5", "schema": {"call": ["awkward0", "JaggedArray", "fromcounts"], "args": [{"call": ["awkward0", "numpy", "frombuffer"], "args": [{"read": "1"}, {"dtype": "int64"}, {"json": 3, "id": 2}], "id": 1}, {"call": ["awkward0", "numpy", "frombuffer"], "args": [{"read": "3"}, {"dtype": "float64"}, {"ref": 2}], "id": 3}], "id": 0}}"#;
    let bytes = base.as_bytes();
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet = b"{}[]\":,0123456789-eE.tfnabcdefghijklmnopqrstuvwxyz ";
    let t = Instant::now();
    let mut ok = 0;
    for _ in 0..3000 {
        let mut m = bytes.to_vec();
        for _ in 0..(1 + next() % 4) {
            let pos = (next() as usize) % m.len();
            match next() % 3 {
                0 => m[pos] = alphabet[(next() as usize) % alphabet.len()],
                1 => {
                    m.remove(pos);
                }
                _ => m.insert(pos, alphabet[(next() as usize) % alphabet.len()]),
            }
        }
        let mut store = s.clone();
        store.blobs.insert(".json".into(), m);
        if let Ok(l) = read_array(&store, "", &opts()) {
            ok += 1;
            let _ = l.to_json();
        }
    }
    assert!(ok > 0, "some mutations should stay valid");
    assert!(t.elapsed() < Duration::from_secs(20));
}

#[test]
fn corrupted_awkd_files_never_panic() {
    let src = std::fs::read(asdf_testkit::corpus_file("awkward0/nested.awkd")).unwrap();
    let tmp = asdf_testkit::TempDir::new("awk-corrupt");
    let path = tmp.join("c.awkd");
    let mut state = 0x2545f4914f6cdd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let t = Instant::now();
    let (mut opened, mut read_ok) = (0, 0);
    for round in 0..400 {
        let mut bytes = src.clone();
        for _ in 0..(1 + next() % 3) {
            let pos = (next() as usize) % bytes.len();
            bytes[pos] = next() as u8;
        }
        if round % 10 == 0 {
            bytes.truncate((next() as usize) % bytes.len());
        }
        std::fs::write(&path, &bytes).unwrap();
        let Ok(f) = asdf_awkward::AwkdFile::open(&path) else {
            continue;
        };
        opened += 1;
        for name in f.array_names() {
            if let Ok(l) = f.read(&name) {
                read_ok += 1;
                let _ = l.to_json();
            }
        }
    }
    assert!(opened > 0 && read_ok > 0, "{opened} {read_ok}");
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[test]
fn shared_subarray_bombs_stay_linear() {
    // Table(a = T, b = ref T) nested `levels` deep: 2^levels nodes if expanded.
    let s = store_with(&[("x", f64s(&[1.0]))]);
    let bomb = |levels: u64| {
        let mut expr = json!({"call": ["awkward0", "numpy", "frombuffer"], "args": [{"read": "x"}, {"dtype": "float64"}, {"json": 1}], "id": 0});
        for k in 1..=levels {
            expr = json!({"call": ["awkward0", "Table", "frompairs"], "args": [{"pairs": [["a", expr], ["b", {"ref": k - 1}]]}, {"json": 0}], "id": k});
        }
        doc(expr)
    };
    let t = Instant::now();
    let e = read_schema(&bomb(50), &s, &opts()).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Limit {
                what: "array nodes once shared sub-arrays are expanded",
                ..
            }
        ),
        "{e}"
    );
    assert!(t.elapsed() < FAST, "{:?}", t.elapsed());
    // Below the limit: reading, validating and writing (with refs) stay linear in the DAG; the
    // awkward 2 export, whose forms are trees, refuses to expand it.
    let t = Instant::now();
    let l = read_schema(&bomb(17), &s, &opts()).unwrap();
    l.validate().unwrap();
    let mut mem = MemoryStore::default();
    let schema =
        asdf_awkward::write_array(&l, &mut mem, "", &asdf_awkward::WriteOptions::default())
            .unwrap();
    assert_eq!(
        schema["schema"]["args"][0]["pairs"][1][1],
        json!({"ref": 1})
    );
    let e = asdf_awkward::to_awkward2(&l).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}
