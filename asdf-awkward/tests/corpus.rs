//! Every sample of `shared/corpus/awkward0/` reads to the values its README lists.

use asdf_awkward::{AwkdFile, BlobStore, Layout};
use serde_json::{json, Value as Json};

fn open(name: &str) -> AwkdFile {
    AwkdFile::open(asdf_testkit::corpus_file(&format!("awkward0/{name}"))).unwrap()
}

fn values(f: &AwkdFile, member: &str) -> (Layout, Json) {
    let l = f.read(member).unwrap();
    let j = l.to_json().unwrap();
    (l, j)
}

#[test]
fn jagged() {
    let f = open("jagged.awkd");
    assert_eq!(f.array_names(), vec![""]);
    assert_eq!(f.entry_names(), &["1.raw", "3.raw", ".json"]);
    let (l, j) = values(&f, "");
    assert_eq!(l.class_name(), "JaggedArray");
    assert_eq!(j, json!([[1.1, 2.2, 3.3], [], [4.4, 5.5]]));
}

#[test]
fn table() {
    let f = open("table.awkd");
    let (l, j) = values(&f, "");
    assert_eq!(l.class_name(), "Table");
    assert_eq!(
        j,
        json!([{"x": 1, "y": 1.5, "z": [10, 20]}, {"x": 2, "y": 2.5, "z": []}, {"x": 3, "y": 3.5, "z": [30]}])
    );
}

#[test]
fn strings() {
    let f = open("strings.awkd");
    assert_eq!(f.array_names(), vec!["bytes", "sliced", "utf8"]);
    assert_eq!(
        values(&f, "utf8").1,
        json!(["one", "two", "", "three", "héllo"])
    );
    assert_eq!(values(&f, "sliced").1, json!(["two", "", "three"]));
    let (l, _) = values(&f, "bytes");
    assert_eq!(
        l.to_values().unwrap(),
        vec![
            asdf_awkward::Value::Bytes(b"ab".to_vec()),
            asdf_awkward::Value::Bytes(vec![]),
            asdf_awkward::Value::Bytes(b"c".to_vec())
        ]
    );
}

#[test]
fn masked() {
    let f = open("masked.awkd");
    assert_eq!(values(&f, "masked").1, json!([1.1, null, 3.3]));
    let (l, j) = values(&f, "bitmasked");
    assert_eq!(j, json!([1, null, 3, 4, null]));
    match l {
        Layout::BitMasked(b) => {
            assert!(b.lsb_order);
            assert_eq!(b.mask, vec![0x12]);
        }
        other => panic!("{}", other.class_name()),
    }
    assert_eq!(values(&f, "indexedmasked").1, json!([null, 1.1, 2.2, null]));
}

#[test]
fn nested() {
    let f = open("nested.awkd");
    assert_eq!(
        values(&f, "records").1,
        json!([{"a": 1, "b": [1.5, 2.5]}, {"a": 2, "b": []}, null])
    );
    assert_eq!(values(&f, "union").1, json!([1.1, 5, 2.2]));
    let (shared, j) = values(&f, "shared");
    assert_eq!(
        j,
        json!([{"a": [1.1, 2.2, 3.3], "b": [1.1, 2.2, 3.3]}, {"a": [], "b": []}, {"a": [4.4, 5.5], "b": [4.4, 5.5]}])
    );
    // The ref is resolved by sharing, not by copying.
    match shared {
        Layout::Table(t) => assert!(std::sync::Arc::ptr_eq(&t.fields[0].1, &t.fields[1].1)),
        other => panic!("{}", other.class_name()),
    }
    // The compressed member: both blobs are zlib streams, sizes as the README says.
    assert_eq!(
        f.get("compressed-1.raw", u64::MAX).unwrap().unwrap().len(),
        40
    );
    assert_eq!(
        f.get("compressed-3.raw", u64::MAX).unwrap().unwrap().len(),
        3360
    );
    let (_, j) = values(&f, "compressed");
    let expect: Vec<Json> = (0..1100).map(|i| json!([2 * i, 2 * i + 1])).collect();
    assert_eq!(j, Json::Array(expect));
    assert_eq!(values(&f, "indexed").1, json!([3.3, 1.1, 1.1]));
}

#[test]
fn legacy_awkward0140() {
    let f = open("legacy_awkward0140.awkd");
    let schema = f.get(".json", 1 << 20).unwrap().unwrap();
    assert!(std::str::from_utf8(&schema)
        .unwrap()
        .contains("\"awkward\": \"0.14.0\""));
    assert_eq!(values(&f, "").1, json!([[1.5, 2.5], [], [3.5]]));
}
