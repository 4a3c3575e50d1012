//! Converting arrays to values / JSON is bounded by `Limits::max_materialized_bytes`: a
//! `SparseArray` whose length is not backed by data cannot make `to_json` build 2³² values.
//! Also: the `untrusted` preset reads every `.awkd` file of the corpus like the defaults.

use std::sync::Arc;
use std::time::{Duration, Instant};

use asdf_awkward::{
    read_array, to_awkward2, write_array, AwkdFile, Buffer, Error, JaggedArray, Layout, Limits,
    ListIndex, MemoryStore, NumpyArray, ReadOptions, SparseArray, SparseDefault, WriteOptions,
};
use serde_json::json;

const FAST: Duration = Duration::from_secs(2);

fn sparse(length: usize, default: SparseDefault) -> Layout {
    Layout::Sparse(SparseArray {
        length,
        index: vec![1],
        content: Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::F64(vec![9.5])))),
        default,
    })
}

fn is_materialize_limit(e: &Error) -> bool {
    matches!(e, Error::Limit { what, .. } if what.contains("max_materialized_bytes"))
}

#[test]
fn a_sparse_array_of_2_pow_32_elements_read_from_a_few_bytes_is_not_materialized() {
    // Written and read back through a store: the schema and blobs take a few hundred bytes.
    let big = sparse(1 << 32, SparseDefault::Zero);
    let mut store = MemoryStore::default();
    write_array(&big, &mut store, "s", &WriteOptions::default()).unwrap();
    let stored: usize = store.blobs.values().map(Vec::len).sum();
    assert!(stored < 4096, "{stored} bytes");
    let read = read_array(&store, "s", &ReadOptions::default()).unwrap();
    assert_eq!(read.len(), 1 << 32);

    for limits in [Limits::default(), Limits::untrusted()] {
        let t = Instant::now();
        let e = read.to_json_with(&limits).unwrap_err();
        assert!(is_materialize_limit(&e), "{e}");
        assert!(e.to_string().contains("max_materialized_bytes"), "{e}");
        let e = read.to_values_with(&limits).unwrap_err();
        assert!(is_materialize_limit(&e), "{e}");
        assert!(t.elapsed() < FAST, "took {:?}", t.elapsed());
    }
    // The conveniences use the defaults.
    assert!(is_materialize_limit(&read.to_json().unwrap_err()));
    assert!(is_materialize_limit(&read.to_values().unwrap_err()));
    // Random access to one element stays fine, and awkward 2 export refuses SparseArray.
    assert_eq!(read.get(1).unwrap(), asdf_awkward::Value::Float(9.5));
    assert_eq!(read.get(7).unwrap(), asdf_awkward::Value::Float(0.0));
    assert!(matches!(to_awkward2(&read), Err(Error::Unsupported { .. })));
}

#[test]
fn one_element_that_is_a_huge_list_is_refused_too() {
    // A JaggedArray whose single list spans 2³¹ elements of a sparse content: `get(0)` alone
    // would build them all.
    let content = Arc::new(sparse(1 << 31, SparseDefault::Float(1.0)));
    let jagged = Layout::Jagged(JaggedArray {
        index: ListIndex::Offsets(vec![0, 1 << 31]),
        content,
    });
    let t = Instant::now();
    let e = jagged.get(0).unwrap_err();
    assert!(is_materialize_limit(&e), "{e}");
    let e = jagged.get_with(0, &Limits::untrusted()).unwrap_err();
    assert!(is_materialize_limit(&e), "{e}");
    assert!(jagged.to_json().is_err());
    assert!(t.elapsed() < FAST, "took {:?}", t.elapsed());
}

#[test]
fn small_arrays_convert_and_the_limit_is_exact_enough() {
    let s = sparse(4, SparseDefault::Int(-1));
    assert_eq!(s.to_json().unwrap(), json!([-1, 9.5, -1, -1]));
    assert_eq!(
        s.to_json_with(&Limits::untrusted()).unwrap(),
        json!([-1, 9.5, -1, -1])
    );
    // Four values fit in the memory of four values, not of three.
    let per_value = std::mem::size_of::<asdf_awkward::Value>() as u64;
    let four = Limits {
        max_materialized_bytes: 4 * per_value,
        ..Limits::default()
    };
    assert_eq!(s.to_values_with(&four).unwrap().len(), 4);
    let three = Limits {
        max_materialized_bytes: 3 * per_value,
        ..Limits::default()
    };
    assert!(is_materialize_limit(&s.to_values_with(&three).unwrap_err()));
}

#[test]
fn untrusted_preset_reads_every_corpus_file_like_the_defaults() {
    let dir = asdf_testkit::corpus_file("awkward0");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "awkd"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    let mut arrays = 0;
    for path in &files {
        let default = AwkdFile::open(path).unwrap();
        let untrusted = AwkdFile::open_with(path, ReadOptions::untrusted()).unwrap();
        for name in default.array_names() {
            let expected = default.read(&name).and_then(|l| l.to_json());
            let got = untrusted
                .read(&name)
                .and_then(|l| l.to_json_with(&Limits::untrusted()));
            match (expected, got) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{}: {name}", path.display()),
                (Err(_), Err(_)) => {}
                (a, b) => panic!("{}: {name}: default {a:?}, untrusted {b:?}", path.display()),
            }
            arrays += 1;
        }
    }
    assert!(arrays >= 6);
}
