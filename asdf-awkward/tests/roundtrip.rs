//! Write → read round trips over every store, golden schemas from the corpus, the older
//! dialects, and the container rules.

use crate::common;

use std::sync::Arc;

use crate::common::{as_pairs, rust_arrays};
use asdf_awkward::{
    read_array, read_schema, save_awkd, write_array, AwkdFile, BlobStore, DirStore, Error, Layout,
    MemoryStore, ReadOptions, SaveMode, WriteOptions,
};
use serde_json::json;

#[test]
fn every_class_round_trips_through_memory_and_directories() {
    let tmp = asdf_testkit::TempDir::new("awk-rt");
    let mut dir = DirStore::create(tmp.join("blobs")).unwrap();
    let mut mem = MemoryStore::default();
    for (name, l) in rust_arrays() {
        let want = l.to_json().unwrap();
        for opts in [WriteOptions::default(), WriteOptions::legacy()] {
            write_array(&l, &mut mem, &name, &opts).unwrap();
            let back = read_array(&mem, &name, &ReadOptions::default()).unwrap();
            assert_eq!(back.to_json().unwrap(), want, "{name} (memory)");
            assert_eq!(back.len(), l.len(), "{name}");
        }
        write_array(&l, &mut dir, &name, &WriteOptions::default()).unwrap();
        let back = read_array(&dir, &name, &ReadOptions::default()).unwrap();
        assert_eq!(back.to_json().unwrap(), want, "{name} (directory)");
    }
    // The directory holds exactly the blobs a memory store would.
    let mut names = dir.names().unwrap();
    names.sort();
    let mut mem2 = MemoryStore::default();
    for (name, l) in rust_arrays() {
        write_array(&l, &mut mem2, &name, &WriteOptions::default()).unwrap();
    }
    assert_eq!(names, mem2.names().unwrap());
}

#[test]
fn structure_is_preserved() {
    for (name, l) in rust_arrays() {
        let mut mem = MemoryStore::default();
        write_array(&l, &mut mem, "x", &WriteOptions::default()).unwrap();
        let back = read_array(&mem, "x", &ReadOptions::default()).unwrap();
        let same_class = back.class_name() == l.class_name();
        assert!(
            same_class,
            "{name}: {} became {}",
            l.class_name(),
            back.class_name()
        );
        // Apart from the documented normalizations (empty chunks dropped, jagged content
        // compacted), the layout comes back identical.
        if !name.contains("chunked") && !name.contains("offset_start") {
            assert_eq!(back, l, "{name}");
        }
    }
}

#[test]
fn shared_subarrays_stay_shared() {
    let (_, shared) = rust_arrays()
        .into_iter()
        .find(|(n, _)| n.ends_with("_shared"))
        .unwrap();
    let mut mem = MemoryStore::default();
    let schema = write_array(&shared, &mut mem, "", &WriteOptions::default()).unwrap();
    assert_eq!(
        schema["schema"]["args"][0]["pairs"][1][1],
        json!({"ref": 1})
    );
    let back = read_array(&mem, "", &ReadOptions::default()).unwrap();
    let Layout::Table(t) = back else { panic!() };
    assert!(Arc::ptr_eq(&t.fields[0].1, &t.fields[1].1));
}

/// Reading a corpus member and writing it again gives awkward0's schema text, byte for byte.
#[test]
fn corpus_schemas_are_reproduced_exactly() {
    let mut checked = 0;
    for file in [
        "jagged.awkd",
        "table.awkd",
        "strings.awkd",
        "masked.awkd",
        "nested.awkd",
        "legacy_awkward0140.awkd",
    ] {
        let f = AwkdFile::open(asdf_testkit::corpus_file(&format!("awkward0/{file}"))).unwrap();
        let opts = if file.starts_with("legacy") {
            WriteOptions::legacy()
        } else {
            WriteOptions::default()
        };
        for name in f.array_names() {
            let l = f.read(&name).unwrap();
            let mut mem = MemoryStore::default();
            write_array(&l, &mut mem, &name, &opts).unwrap();
            let key = format!("{name}.json");
            let theirs = f.get(&key, 1 << 20).unwrap().unwrap();
            assert_eq!(
                String::from_utf8_lossy(&mem.blobs[&key]),
                String::from_utf8_lossy(&theirs),
                "{file} {name}"
            );
            // Same blob names; uncompressed blobs byte-identical.
            let ours: Vec<&String> = mem.blobs.keys().filter(|k| **k != key).collect();
            let mut theirs_names: Vec<String> = f
                .entry_names()
                .iter()
                .filter(|e| {
                    **e != key
                        && e.ends_with(".raw")
                        && e.starts_with(&format!(
                            "{name}{}",
                            if name.is_empty() { "" } else { "-" }
                        ))
                })
                .filter(|e| name.is_empty() || !e[name.len() + 1..].contains('-'))
                .cloned()
                .collect();
            theirs_names.sort();
            assert_eq!(
                ours,
                theirs_names.iter().collect::<Vec<_>>(),
                "{file} {name}"
            );
            if name != "compressed" {
                for k in ours {
                    assert_eq!(
                        &mem.blobs[k],
                        f.get(k, 1 << 30).unwrap().unwrap().as_ref(),
                        "{file} {k}"
                    );
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 14);
}

fn le(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn older_dialects_and_aliases() {
    let mut s = MemoryStore::default();
    s.blobs.insert("c".into(), le(&[2, 0, 1]));
    s.blobs.insert(
        "x".into(),
        [1.5f64, 2.5, 3.5]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect(),
    );
    // awkward 0.4–0.6: ["numpy", "frombuffer"], no ids.
    let old = json!({"awkward": "0.5.0", "schema": {"call": ["awkward", "JaggedArray", "fromcounts"], "args": [
        {"call": ["numpy", "frombuffer"], "args": [{"read": "c"}, {"dtype": "int64"}, {"json": 3}]},
        {"call": ["awkward.util", "frombuffer"], "args": [{"read": "x"}, {"dtype": "float64"}, {"json": 3}]}]}});
    let want = json!([[1.5, 2.5], [], [3.5]]);
    assert_eq!(
        read_schema(&old, &s, &ReadOptions::default())
            .unwrap()
            .to_json()
            .unwrap(),
        want
    );
    // awkward 0.3.0's dtype call and a missing count (whole blob).
    let v03 = json!({"awkward": "0.3.0", "schema": {"call": ["awkward", "JaggedArray", "fromcounts"], "args": [
        {"call": ["numpy", "frombuffer"], "args": [{"read": "c"}, {"call": ["awkward.persist", "json2dtype"], "args": [{"json": "int64"}]}]},
        {"call": ["awkward0.util", "frombuffer"], "args": [{"read": "x"}, {"dtype": "<f8"}, {"json": -1}]}]}});
    assert_eq!(
        read_schema(&v03, &s, &ReadOptions::default())
            .unwrap()
            .to_json()
            .unwrap(),
        want
    );
    // awkward 1's to_awkward0 wrote fromoffsets.
    s.blobs.insert("o".into(), le(&[0, 2, 2, 3]));
    let offs = json!({"awkward0": "0.15.5", "schema": {"call": ["awkward0", "JaggedArray", "fromoffsets"], "args": [
        {"call": ["awkward0", "numpy", "frombuffer"], "args": [{"read": "o"}, {"dtype": "int64"}, {"json": 4}]},
        {"call": ["awkward0", "numpy", "frombuffer"], "args": [{"read": "x"}, {"dtype": "float64"}, {"json": 3}]}]}});
    assert_eq!(
        read_schema(&offs, &s, &ReadOptions::default())
            .unwrap()
            .to_json()
            .unwrap(),
        want
    );
}

#[test]
fn refs_prefix_absolute_and_kwargs() {
    let mut s = MemoryStore::default();
    s.blobs.insert(
        "p-1".into(),
        [1.0f64, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect(),
    );
    s.blobs.insert("shared-mask".into(), vec![0, 1]);
    let leaf = json!({"call": ["awkward0", "numpy", "frombuffer"], "args": [{"read": "1"}, {"dtype": "float64"}, {"json": 2, "id": 9}], "id": 3});
    // A forward reference (column a refers to id 3, defined in column b) resolves by sharing.
    let doc = json!({"awkward0": "x", "prefix": "p-", "schema": {"call": ["awkward0", "Table", "frompairs"], "args": [
        {"pairs": [["a", {"ref": 3}], ["b", leaf],
                   ["m", {"call": ["awkward0", "MaskedArray"],
                          "args": [{"call": ["awkward0", "numpy", "frombuffer"], "args": [{"read": "shared-mask", "absolute": true}, {"dtype": "bool"}, {"ref": 9}]}, {"ref": 3}],
                          "kwargs": {"maskedwhen": {"json": false}}}]]}]}});
    let l = read_schema(&doc, &s, &ReadOptions::default()).unwrap();
    assert_eq!(
        l.to_json().unwrap(),
        json!([{"a": 1.0, "b": 1.0, "m": null}, {"a": 2.0, "b": 2.0, "m": 2.0}])
    );
    let Layout::Table(t) = &l else { panic!() };
    assert!(Arc::ptr_eq(&t.fields[0].1, &t.fields[1].1));
    // A ref to a JSON value used as a count, a dtype given by a ref is not a thing: refs carry any value.
    let doc2 =
        json!({"awkward0": "x", "schema": {"list": [{"json": "unused", "id": 1}, {"ref": 1}]}});
    let e = read_schema(&doc2, &s, &ReadOptions::default()).unwrap_err();
    assert!(e.to_string().contains("not an array"), "{e}");
}

#[test]
fn awkd_append_rules_and_atomicity() {
    let tmp = asdf_testkit::TempDir::new("awk-awkd");
    let path = tmp.join("f.awkd");
    let arrays = rust_arrays();
    let (a, b) = arrays.split_at(3);
    save_awkd(
        &path,
        &as_pairs(a),
        SaveMode::Create,
        &WriteOptions::default(),
    )
    .unwrap();
    save_awkd(
        &path,
        &as_pairs(b),
        SaveMode::Append,
        &WriteOptions::default(),
    )
    .unwrap();
    let f = AwkdFile::open(&path).unwrap();
    assert_eq!(f.array_names().len(), arrays.len());
    for (n, l) in &arrays {
        assert_eq!(
            f.read(n).unwrap().to_json().unwrap(),
            l.to_json().unwrap(),
            "{n}"
        );
    }
    // Every entry is stored, not deflated (like awkward0's writestr(..., ZIP_STORED)).
    let raw = std::fs::read(&path).unwrap();
    let before = raw.clone();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(raw)).unwrap();
    for i in 0..zip.len() {
        assert_eq!(
            zip.by_index(i).unwrap().compression(),
            zip::CompressionMethod::Stored
        );
    }
    drop(zip);
    // Conflicts are refused before anything is written; the file is untouched.
    let one = &arrays[0].1;
    for bad in [
        vec![("r00_f64", one)],
        vec![("r", one)],
        vec![("new", one), ("newer", one)],
        vec![("", one)],
    ] {
        let e = save_awkd(&path, &bad, SaveMode::Append, &WriteOptions::default()).unwrap_err();
        assert!(matches!(e, Error::BadName { .. }), "{e}");
    }
    // An invalid array fails the save after validation, also leaving the file as it was.
    let broken = Layout::Indexed(asdf_awkward::IndexedArray {
        index: vec![7],
        content: Arc::new(arrays[0].1.clone()),
    });
    assert!(save_awkd(
        &path,
        &[("zzz", &broken)],
        SaveMode::Append,
        &WriteOptions::default()
    )
    .is_err());
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    // Create replaces.
    save_awkd(
        &path,
        &[("only", one)],
        SaveMode::Create,
        &WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(AwkdFile::open(&path).unwrap().array_names(), vec!["only"]);
}

#[test]
fn deflated_zip_entries_are_read() {
    use std::io::Write;
    let tmp = asdf_testkit::TempDir::new("awk-deflate");
    let path = tmp.join("d.awkd");
    let mut mem = MemoryStore::default();
    let l = Layout::from_json(&json!([[1, 2], [3]])).unwrap();
    write_array(&l, &mut mem, "a", &WriteOptions::default()).unwrap();
    let mut z = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    for (k, v) in &mem.blobs {
        z.start_file(
            k.as_str(),
            zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated),
        )
        .unwrap();
        z.write_all(v).unwrap();
    }
    z.finish().unwrap();
    assert_eq!(
        AwkdFile::open(&path)
            .unwrap()
            .read("a")
            .unwrap()
            .to_json()
            .unwrap(),
        json!([[1, 2], [3]])
    );
    // A tight blob limit is enforced from the entry header, before reading.
    let tight = ReadOptions {
        limits: asdf_awkward::Limits {
            max_blob_bytes: 4,
            ..Default::default()
        },
        ..Default::default()
    };
    let f = AwkdFile::open_with(&path, tight).unwrap();
    assert!(matches!(f.read("a"), Err(Error::Limit { .. })));
    // Not a ZIP at all.
    std::fs::write(tmp.join("junk.awkd"), b"PK\x03\x04 not really").unwrap();
    assert!(matches!(
        AwkdFile::open(tmp.join("junk.awkd")),
        Err(Error::Zip { .. })
    ));
}

#[test]
fn json_values_round_trip() {
    let cases = [
        json!([1, 2, 3]),
        json!([1.5, 2.0, -3.0]),
        json!([true, false]),
        json!(["a", "", "\u{e9}\u{1F600}"]),
        json!([[1, 2], [], [3]]),
        json!([[[1], []], [[2, 3]]]),
        json!([{"x": 1, "y": "a"}, {"x": 2, "y": "b"}]),
        json!([1, null, 3]),
        json!([null, null]),
        json!([1, "a", [2.5], {"k": true}]),
        json!([[1, null], null, [null]]),
        json!([18446744073709551615u64, 1]),
        json!([]),
    ];
    for c in cases {
        let l = Layout::from_json(&c).unwrap();
        assert_eq!(l.to_json().unwrap(), c);
        let mut mem = MemoryStore::default();
        write_array(&l, &mut mem, "", &WriteOptions::default()).unwrap();
        assert_eq!(
            read_array(&mem, "", &ReadOptions::default())
                .unwrap()
                .to_json()
                .unwrap(),
            c
        );
    }
    assert!(Layout::from_json(&json!({"not": "a list"})).is_err());
    // Integers mixed with floats become float64, as in awkward0's fromiter.
    let promoted = Layout::from_json(&json!([1.5, 2, -3])).unwrap();
    assert_eq!(promoted.to_json().unwrap(), json!([1.5, 2.0, -3.0]));
}

/// A store implementing only the required methods: the provided `read_into` is used.
struct MinimalStore(MemoryStore);

impl BlobStore for MinimalStore {
    fn get(
        &self,
        name: &str,
        max_bytes: u64,
    ) -> asdf_awkward::Result<Option<std::borrow::Cow<'_, [u8]>>> {
        self.0.get(name, max_bytes)
    }
    fn names(&self) -> asdf_awkward::Result<Vec<String>> {
        self.0.names()
    }
    fn size(&self, name: &str) -> asdf_awkward::Result<Option<u64>> {
        self.0.size(name)
    }
}

#[test]
fn custom_stores_get_the_default_read_into() {
    let mut mem = MemoryStore::default();
    for (name, l) in rust_arrays() {
        write_array(&l, &mut mem, &name, &WriteOptions::default()).unwrap();
    }
    let store = MinimalStore(mem);
    for (name, l) in rust_arrays() {
        let back = read_array(&store, &name, &ReadOptions::default()).unwrap();
        assert_eq!(back.to_json().unwrap(), l.to_json().unwrap(), "{name}");
    }
}

#[test]
fn non_finite_sparse_defaults_use_awkward0s_pickle() {
    let l = Layout::Sparse(asdf_awkward::SparseArray {
        length: 3,
        index: vec![1],
        content: common::leaf(asdf_awkward::Buffer::F64(vec![2.0])),
        default: asdf_awkward::SparseDefault::Float(f64::INFINITY),
    });
    let mut mem = MemoryStore::default();
    let schema = write_array(&l, &mut mem, "", &WriteOptions::default()).unwrap();
    assert_eq!(
        schema["schema"]["args"][3],
        json!({"python": "gASVCgAAAAAAAABHf/AAAAAAAAAu", "id": 4})
    );
    assert!(matches!(
        read_array(&mem, "", &ReadOptions::default()),
        Err(Error::Refused { .. })
    ));
    let opts = ReadOptions {
        decode_pickled_scalars: true,
        ..ReadOptions::default()
    };
    assert_eq!(read_array(&mem, "", &opts).unwrap(), l);
}

#[test]
fn hdf5_style_names_in_a_directory() {
    // awkward0.hdf5's naming: delimiter "/", no blob suffix, schema "<name>/schema.json".
    let tmp = asdf_testkit::TempDir::new("awk-h5names");
    let mut dir = DirStore::create(tmp.path()).unwrap();
    let opts = WriteOptions {
        delimiter: "/".into(),
        suffix: String::new(),
        schema_suffix: "/schema.json".into(),
        ..WriteOptions::default()
    };
    let l = Layout::from_json(&json!([[1.5, 2.5], [], [3.5]])).unwrap();
    let schema = write_array(&l, &mut dir, "jag", &opts).unwrap();
    assert_eq!(schema["prefix"], "jag/");
    assert_eq!(
        dir.names().unwrap(),
        vec!["jag/1", "jag/3", "jag/schema.json"]
    );
    let ropts = ReadOptions {
        schema_suffix: "/schema.json".into(),
        ..ReadOptions::default()
    };
    assert_eq!(read_array(&dir, "jag", &ropts).unwrap(), l);
}
