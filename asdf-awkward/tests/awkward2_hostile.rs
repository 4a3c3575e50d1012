//! Hostile awkward 2 input: malformed forms, lengths and buffers that do not agree, indexes out
//! of range, absurd sizes and nesting. Each is a clear error naming where, never a panic or an
//! allocation sized by the form.

use asdf_awkward::{
    from_buffers, read_awkward2_dir, read_awkward2_npz, Error, FromBuffersOptions, Limits,
    MemoryStore,
};
use serde_json::{json, Value as Json};

fn le_i64(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn le_f64(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn store(buffers: &[(&str, Vec<u8>)]) -> MemoryStore {
    MemoryStore {
        blobs: buffers
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    }
}

fn leaf(key: &str) -> Json {
    json!({"class": "NumpyArray", "primitive": "float64", "form_key": key})
}

fn list(content: Json) -> Json {
    json!({"class": "ListOffsetArray", "offsets": "i64", "content": content, "form_key": "node0"})
}

fn read(form: &Json, length: usize, s: &MemoryStore) -> Result<asdf_awkward::Layout, Error> {
    from_buffers(form, length, s, &FromBuffersOptions::default())
}

fn err_text(form: &Json, length: usize, s: &MemoryStore) -> (Error, String) {
    let e = read(form, length, s).expect_err("hostile input must be refused");
    let text = e.to_string();
    (e, text)
}

#[test]
fn a_well_formed_list_reads() {
    let s = store(&[
        ("node0-offsets", le_i64(&[0, 2, 2, 3])),
        ("node1-data", le_f64(&[1.0, 2.0, 3.0])),
    ]);
    let a = read(&list(leaf("node1")), 3, &s).unwrap();
    assert_eq!(a.to_json().unwrap(), json!([[1.0, 2.0], [], [3.0]]));
}

#[test]
fn offsets_past_the_content_buffer() {
    let s = store(&[
        ("node0-offsets", le_i64(&[0, 2, 5])),
        ("node1-data", le_f64(&[1.0, 2.0])),
    ]);
    let (e, text) = err_text(&list(leaf("node1")), 2, &s);
    assert!(matches!(e, Error::Blob { .. }), "{text}");
    assert!(
        text.contains("node1-data") && text.contains("form.content"),
        "{text}"
    );
}

#[test]
fn decreasing_and_negative_offsets() {
    let s = store(&[
        ("node0-offsets", le_i64(&[0, 3, 1, 3])),
        ("node1-data", le_f64(&[1.0, 2.0, 3.0])),
    ]);
    let (e, text) = err_text(&list(leaf("node1")), 3, &s);
    assert!(matches!(e, Error::Invalid { .. }), "{text}");
    assert!(
        text.contains("ListOffsetArray") && text.contains("at form"),
        "{text}"
    );
    let s = store(&[
        ("node0-offsets", le_i64(&[-1, -1])),
        ("node1-data", le_f64(&[])),
    ]);
    let (e, text) = err_text(&list(leaf("node1")), 1, &s);
    assert!(matches!(e, Error::Invalid { .. }), "{text}");
}

#[test]
fn missing_and_short_buffers() {
    let s = store(&[("node0-offsets", le_i64(&[0, 1]))]);
    let (e, _) = err_text(&list(leaf("node1")), 1, &s);
    assert!(matches!(e, Error::MissingBlob { ref name } if name == "node1-data"));
    let s = store(&[("node0-offsets", le_i64(&[0])), ("node1-data", vec![])]);
    let (e, text) = err_text(&list(leaf("node1")), 1, &s);
    assert!(matches!(e, Error::Blob { .. }), "{text}");
    assert!(text.contains("needs 16"), "{text}");
}

#[test]
fn huge_lengths_are_refused_before_allocating() {
    let s = store(&[("node0-data", le_f64(&[1.0]))]);
    // 10^9 float64s (8 GB) from an 8-byte buffer: refused by size, not allocated.
    let (e, text) = err_text(&leaf("node0"), 1_000_000_000, &s);
    assert!(matches!(e, Error::Blob { .. }), "{text}");
    let (e, _) = err_text(&leaf("node0"), usize::MAX / 2, &s);
    assert!(matches!(e, Error::Limit { .. } | Error::Form { .. }), "{e}");
    let regular = json!({"class": "RegularArray", "size": u64::MAX, "content": leaf("node1"),
                         "form_key": "node0"});
    let (e, text) = err_text(&regular, 3, &s);
    assert!(matches!(e, Error::Form { .. }), "{text}");
    // A record without fields holds only its length; materializing it is bounded.
    let rec = json!({"class": "RecordArray", "fields": [], "contents": [], "form_key": "node0"});
    let a = read(&rec, 1 << 40, &s).unwrap();
    assert_eq!(a.len(), 1 << 40);
    assert!(matches!(
        a.to_json_with(&Limits::untrusted()),
        Err(Error::Limit { .. })
    ));
}

#[test]
fn malformed_forms_name_the_node() {
    let s = store(&[("node0-offsets", le_i64(&[0, 0]))]);
    let cases = [
        (
            json!({"class": "VirtualArray", "form_key": "node0"}),
            "unknown form class",
        ),
        (json!([1, 2]), "must be an object"),
        (json!({"form_key": "node0"}), "\"class\""),
        (
            list(json!({"class": "NumpyArray", "primitive": "object", "form_key": "n"})),
            "primitive",
        ),
        (
            list(
                json!({"class": "NumpyArray", "primitive": "float64", "inner_shape": [-1],
                     "form_key": "n"}),
            ),
            "inner_shape",
        ),
        (
            json!({"class": "ListOffsetArray", "offsets": "i16", "content": leaf("node1"),
                "form_key": "node0"}),
            "\"offsets\"",
        ),
        (
            json!({"class": "ListOffsetArray", "offsets": "i64", "form_key": "node0"}),
            "content",
        ),
        (
            json!({"class": "ListOffsetArray", "offsets": "i64", "content": leaf("node1"),
                "form_key": null}),
            "form_key",
        ),
        (
            json!({"class": "RecordArray", "fields": ["a", "b"], "contents": [],
                "form_key": "node0"}),
            "2 fields but 0 contents",
        ),
        (
            json!({"class": "UnionArray", "tags": "i8", "index": "i64", "contents": [],
                "form_key": "node0"}),
            "1 to 128 contents",
        ),
        (
            json!({"class": "ByteMaskedArray", "mask": "i8", "content": leaf("node1"),
                "form_key": "node0"}),
            "needs a \"valid_when\"",
        ),
        (
            json!({"class": "ListOffsetArray", "offsets": "i64", "parameters": [1],
                "content": leaf("node1"), "form_key": "node0"}),
            "parameters",
        ),
    ];
    for (form, want) in cases {
        let (e, text) = err_text(&form, 1, &s);
        let form_or_blob = matches!(e, Error::Form { .. } | Error::MissingBlob { .. });
        assert!(form_or_blob, "{form}: {text}");
        if let Error::Form { .. } = e {
            assert!(
                text.contains(want) && text.contains("form"),
                "{form}: {text}"
            );
        }
    }
}

#[test]
fn index_and_tag_ranges() {
    let indexed = json!({"class": "IndexedArray", "index": "i64", "content": leaf("node1"),
                         "form_key": "node0"});
    let s = store(&[
        ("node0-index", le_i64(&[0, -1])),
        ("node1-data", le_f64(&[1.0])),
    ]);
    let (e, text) = err_text(&indexed, 2, &s);
    assert!(
        matches!(e, Error::Invalid { .. }) && text.contains("negative"),
        "{text}"
    );
    let union = json!({"class": "UnionArray", "tags": "i8", "index": "i64",
                       "contents": [leaf("node1"), leaf("node2")], "form_key": "node0"});
    let mut s = store(&[
        ("node0-tags", vec![0, 2]),
        ("node0-index", le_i64(&[0, 0])),
        ("node1-data", le_f64(&[1.0])),
        ("node2-data", le_f64(&[2.0])),
    ]);
    let (e, text) = err_text(&union, 2, &s);
    assert!(
        matches!(e, Error::Invalid { .. }) && text.contains("tags[1] = 2"),
        "{text}"
    );
    s.blobs.insert("node0-tags".into(), vec![0, 0xff]);
    let (_, text) = err_text(&union, 2, &s);
    assert!(text.contains("tags[1] = -1"), "{text}");
    s.blobs.insert("node0-tags".into(), vec![0, 1]);
    s.blobs.insert("node0-index".into(), le_i64(&[0, -3]));
    let (_, text) = err_text(&union, 2, &s);
    assert!(text.contains("index[1] = -3"), "{text}");
    let empty = json!({"class": "EmptyArray", "form_key": "node0"});
    let (e, _) = err_text(&empty, 3, &s);
    assert!(matches!(e, Error::Invalid { .. }));
}

#[test]
fn deep_nesting_is_bounded() {
    // 10^5 nested lists as JSON text: the parser's own recursion limit refuses it.
    let mut text = String::new();
    for _ in 0..100_000 {
        text.push_str(r#"{"class":"ListOffsetArray","offsets":"i64","form_key":"n","content":"#);
    }
    text.push_str(r#"{"class":"EmptyArray"}"#);
    text.push_str(&"}".repeat(100_000));
    let s = store(&[]);
    let (e, _) = err_text(&Json::String(text), 0, &s);
    assert!(matches!(e, Error::Form { .. }), "{e}");
    // 120 levels parse, but exceed a depth limit of 100.
    let mut form = json!({"class": "EmptyArray"});
    for _ in 0..120 {
        form = json!({"class": "RegularArray", "size": 1, "content": form});
    }
    let mut opts = FromBuffersOptions::default();
    opts.limits.max_depth = 100;
    let e = from_buffers(&form, 0, &s, &opts).unwrap_err();
    assert!(matches!(e, Error::Limit { .. }), "{e}");
}

#[test]
fn container_files_are_checked() {
    let tmp = asdf_testkit::TempDir::new("awk2-hostile");
    // A buffer key that would leave the directory.
    let dir = tmp.join("escape");
    std::fs::create_dir_all(&dir).unwrap();
    let meta = json!({"form": {"class": "NumpyArray", "primitive": "float64",
                               "form_key": "../outside"}, "length": 1});
    std::fs::write(dir.join("awkward.json"), meta.to_string()).unwrap();
    let e = read_awkward2_dir(&dir, &FromBuffersOptions::default()).unwrap_err();
    assert!(matches!(e, Error::BadName { .. }), "{e}");
    // Metadata that is not what the convention says.
    std::fs::write(dir.join("awkward.json"), r#"{"form": {}, "length": -1}"#).unwrap();
    let e = read_awkward2_dir(&dir, &FromBuffersOptions::default()).unwrap_err();
    assert!(e.to_string().contains("length"), "{e}");
    // An .npz whose .npy header declares more data than the entry holds.
    let a = asdf_awkward::Layout::from_json(&json!([1.5, 2.5])).unwrap();
    let good = tmp.join("good.npz");
    asdf_awkward::write_awkward2_npz(&a, &good).unwrap();
    let back = read_awkward2_npz(&good, &FromBuffersOptions::default()).unwrap();
    assert_eq!(back.to_json().unwrap(), json!([1.5, 2.5]));
    let bytes = std::fs::read(&good).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let at = text.find("'shape': (16,)").expect("buffer entry header");
    let mut evil = bytes.clone();
    evil[at..at + 14].copy_from_slice(b"'shape': (99,)");
    // The ZIP CRC no longer matches the entry either; either check refuses it.
    let bad = tmp.join("bad.npz");
    std::fs::write(&bad, &evil).unwrap();
    assert!(read_awkward2_npz(&bad, &FromBuffersOptions::default()).is_err());
}

#[test]
fn asdf_nodes_are_checked() {
    use asdf::yaml::Node;
    use asdf_awkward::{from_asdf, to_asdf_awkward2, ReadOptions, AWKWARD2_TAG};
    let a = asdf_awkward::Layout::from_json(&json!([[1.5], []])).unwrap();
    let mut w = asdf::AsdfWriter::new();
    let good = to_asdf_awkward2(&a, &mut w, &asdf::StoreOptions::default()).unwrap();
    let form = good.get("form").unwrap().clone();
    let missing = Node::mapping([
        ("form", form.clone()),
        ("length", Node::from(2u64)),
        ("buffers", Node::mapping(Vec::<(&str, Node)>::new())),
    ])
    .with_tag(AWKWARD2_TAG);
    let negative = Node::mapping([
        ("form", form),
        ("length", Node::from(-1i64)),
        ("buffers", Node::mapping(Vec::<(&str, Node)>::new())),
    ])
    .with_tag(AWKWARD2_TAG);
    let other = Node::mapping([("x", Node::from(1i64))]).with_tag("tag:example.org,2026:other");
    let tree = Node::mapping([
        ("good", good),
        ("missing", missing),
        ("negative", negative),
        ("other", other),
    ]);
    let bytes = w.to_bytes(tree, &Default::default()).unwrap();
    let f = asdf::AsdfFile::from_bytes(bytes, &Default::default()).unwrap();
    let opts = ReadOptions::default();
    let back = from_asdf(&f, "/good", &opts).unwrap();
    assert_eq!(back.to_json().unwrap(), json!([[1.5], []]));
    let e = from_asdf(&f, "/missing", &opts).unwrap_err();
    assert!(matches!(e, Error::MissingBlob { .. }), "{e}");
    let e = from_asdf(&f, "/negative", &opts).unwrap_err();
    assert!(e.to_string().contains("length"), "{e}");
    let e = from_asdf(&f, "/other", &opts).unwrap_err();
    assert!(e.to_string().contains(AWKWARD2_TAG), "{e}");
}

/// A small deterministic mutation sweep: valid awkward 2 exports with buffer bytes flipped,
/// buffers truncated, form numbers and strings changed. Every outcome must be `Ok` or `Err`;
/// a panic fails the test. Whatever reads back must also export and materialize without panic.
#[test]
fn mutated_inputs_never_panic() {
    let samples = [
        json!([[1.5, 2.5], [], null, [3.5]]),
        json!([{"x": 1, "y": "a"}, {"x": 2, "y": "bc"}, null]),
        json!([1, "a", [2.5], null]),
        json!([[[1], [2, 3]], [], [[4, null]]]),
        json!([{"p": [{"q": true}], "r": [1, 2]}, {"p": [], "r": []}]),
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let opts = FromBuffersOptions {
        limits: Limits::untrusted(),
        ..FromBuffersOptions::default()
    };
    let mut outcomes = [0usize; 2];
    for sample in &samples {
        let layout = asdf_awkward::Layout::from_json(sample).unwrap();
        let base = asdf_awkward::to_awkward2(&layout).unwrap();
        for _ in 0..400 {
            let mut form = base.form.clone();
            let mut store = MemoryStore {
                blobs: base.buffers.clone(),
            };
            let mut length = base.length;
            match next() % 5 {
                0 => {
                    // Flip bytes in one buffer.
                    let keys: Vec<String> = store.blobs.keys().cloned().collect();
                    let k = &keys[(next() as usize) % keys.len()];
                    let b = store.blobs.get_mut(k).unwrap();
                    for _ in 0..1 + next() % 4 {
                        if !b.is_empty() {
                            let i = (next() as usize) % b.len();
                            b[i] = next() as u8;
                        }
                    }
                }
                1 => {
                    // Truncate one buffer.
                    let keys: Vec<String> = store.blobs.keys().cloned().collect();
                    let k = &keys[(next() as usize) % keys.len()];
                    let b = store.blobs.get_mut(k).unwrap();
                    let n = (next() as usize) % (b.len() + 1);
                    b.truncate(n);
                }
                2 => length = (next() % 16) as usize,
                3 => mutate_json(&mut form, &mut next),
                _ => {
                    mutate_json(&mut form, &mut next);
                    length = length.saturating_add((next() % 3) as usize);
                }
            }
            match from_buffers(&form, length, &store, &opts) {
                Ok(l) => {
                    outcomes[0] += 1;
                    let _ = l.to_json_with(&Limits::untrusted());
                    let _ = asdf_awkward::to_awkward2(&l);
                    let mut sink = MemoryStore::default();
                    let _ = asdf_awkward::write_array(&l, &mut sink, "a", &Default::default());
                    #[cfg(feature = "arrow")]
                    if let Ok(a) = asdf_awkward::arrow::to_arrow(&l) {
                        let _ = asdf_awkward::arrow::from_arrow(a.as_ref());
                    }
                }
                Err(_) => outcomes[1] += 1,
            }
        }
    }
    // The sweep exercises both outcomes, so it tests the checks and not only the parser.
    assert!(outcomes[0] > 100 && outcomes[1] > 100, "{outcomes:?}");
}

/// awkward 2's Arrow metadata mutated in both encodings (the schema's `awkward_array_metadata`,
/// an `awkward` extension type's JSON): reading the batch back is `Ok` or an error, never a
/// panic, and both outcomes occur.
#[cfg(feature = "arrow")]
#[test]
fn mutated_awkward_metadata_never_panics() {
    use arrow_array::RecordBatch;
    use arrow_schema::{Field, Schema};
    use asdf_awkward::arrow::{
        from_record_batch, to_record_batch, to_record_batch_with_extensions,
    };
    use std::sync::Arc;
    let samples = [
        json!([[1.5, 2.5], [], null, [3.5]]),
        json!([{"x": 1, "y": "a"}, {"x": 2, "y": null}]),
        json!([[{"p": [1], "q": "r"}], [], [null]]),
        json!([1, "a", [2.5]]),
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut outcomes = [0usize; 2];
    let mut count = |r: asdf_awkward::Result<asdf_awkward::Layout>| match r {
        Ok(l) => {
            outcomes[0] += 1;
            let _ = asdf_awkward::to_awkward2(&l);
        }
        Err(_) => outcomes[1] += 1,
    };
    for sample in &samples {
        let layout = asdf_awkward::Layout::from_json(sample).unwrap();
        let plain = to_record_batch(&layout).unwrap();
        let text = plain.schema().metadata()["awkward_array_metadata"].clone();
        let described: Json = serde_json::from_str(&text).unwrap();
        let extended = to_record_batch_with_extensions(&layout).unwrap();
        for _ in 0..150 {
            // The schema's per-column metadata.
            let mut j = described.clone();
            mutate_json(&mut j, &mut next);
            let metadata = [("awkward_array_metadata".to_string(), j.to_string())].into();
            let schema = plain.schema().as_ref().clone().with_metadata(metadata);
            count(from_record_batch(
                &RecordBatch::try_new(Arc::new(schema), plain.columns().to_vec()).unwrap(),
            ));
            // A column's extension type.
            let fields: Vec<Field> = extended
                .schema()
                .fields()
                .iter()
                .map(|f| {
                    let mut md = f.metadata().clone();
                    let key = "ARROW:extension:metadata".to_string();
                    let mut j: Json = serde_json::from_str(&md[&key]).unwrap();
                    mutate_json(&mut j, &mut next);
                    md.insert(key, j.to_string());
                    f.as_ref().clone().with_metadata(md)
                })
                .collect();
            let batch =
                RecordBatch::try_new(Arc::new(Schema::new(fields)), extended.columns().to_vec());
            count(from_record_batch(&batch.unwrap()));
        }
    }
    assert!(outcomes[0] > 100 && outcomes[1] > 100, "{outcomes:?}");
}

/// Changes one value somewhere in a form: a number, a string, a key removed, a class renamed.
fn mutate_json(j: &mut Json, next: &mut impl FnMut() -> u64) {
    match j {
        Json::Object(m) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            if keys.is_empty() {
                return;
            }
            let k = keys[(next() as usize) % keys.len()].clone();
            match next() % 4 {
                0 => {
                    m.remove(&k);
                }
                1 if k != "content" && k != "contents" => {
                    let choices = [
                        json!(null),
                        json!(-1),
                        json!(u64::MAX),
                        json!("i32"),
                        json!("ListArray"),
                        json!([]),
                        json!(true),
                    ];
                    m.insert(k, choices[(next() as usize) % choices.len()].clone());
                }
                _ => {
                    if let Some(v) = m.get_mut(&k) {
                        mutate_json(v, next);
                    }
                }
            }
        }
        Json::Array(a) if !a.is_empty() => {
            let i = (next() as usize) % a.len();
            mutate_json(&mut a[i], next);
        }
        Json::Number(_) => *j = json!((next() % 7) as i64 - 1),
        Json::String(_) => {
            let names = [
                "int8",
                "float64",
                "RegularArray",
                "UnionArray",
                "node0",
                "i64",
            ];
            *j = json!(names[(next() as usize) % names.len()]);
        }
        _ => {}
    }
}

/// `.npz` buffer entries are streamed after their header: a header claiming gigabytes, a
/// header cut short and an entry shorter than its header declares are errors, and nothing is
/// allocated from what they claim.
#[test]
fn npz_buffer_headers_are_checked() {
    use std::io::{Read, Write};
    let tmp = asdf_testkit::TempDir::new("awk2-npz-headers");
    let a = asdf_awkward::Layout::from_json(&json!([1.5, 2.5])).unwrap();
    let good = tmp.join("good.npz");
    asdf_awkward::write_awkward2_npz(&a, &good).unwrap();
    // Rewrites `good` with the buffer entry's bytes replaced.
    let with_buffer = |name: &str, entry: Vec<u8>| {
        let mut ar = zip::ZipArchive::new(std::fs::File::open(&good).unwrap()).unwrap();
        let path = tmp.join(name);
        let mut w = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        for i in 0..ar.len() {
            let mut f = ar.by_index(i).unwrap();
            let n = f.name().to_string();
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).unwrap();
            if n.ends_with("-data.npy") {
                bytes = entry.clone();
            }
            w.start_file(n, stored).unwrap();
            w.write_all(&bytes).unwrap();
        }
        w.finish().unwrap();
        path
    };
    let mut v2 = b"\x93NUMPY\x02\x00".to_vec();
    v2.extend_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    v2.extend_from_slice(&[b' '; 64]);
    let cut = b"\x93NUMPY\x01\x00\x40".to_vec();
    let mut short = b"\x93NUMPY\x01\x00".to_vec();
    let dict = b"{'descr': '|u1', 'fortran_order': False, 'shape': (16,), }";
    short.extend_from_slice(&(dict.len() as u16 + 1).to_le_bytes());
    short.extend_from_slice(dict);
    short.push(b'\n');
    short.extend_from_slice(&[0u8; 8]);
    for (name, entry) in [("v2.npz", v2), ("cut.npz", cut), ("short.npz", short)] {
        let path = with_buffer(name, entry);
        let e = read_awkward2_npz(&path, &FromBuffersOptions::default()).unwrap_err();
        assert!(e.to_string().contains("-data"), "{name}: {e}");
    }
}
