//! Interop with the real peers: awkward0 0.15.5 (both directions) and awkward 2
//! (`ak.from_buffers` on our export).

use crate::common;
use crate::common::{as_pairs, rust_arrays};

use std::collections::BTreeMap;

use asdf_awkward::{
    save_awkd, to_awkward2, write_array, AwkdFile, BlobStore, Codec, CompressionPolicy, Layout,
    MemoryStore, ReadOptions, SaveMode, SparseArray, SparseDefault, WriteOptions,
};
use serde_json::{json, Value as Json};

/// awkward0 builds one array of every class and saves them all in one `.awkd`.
const WRITE_AWKWARD0: &str = r#"
import sys, numpy as np, awkward0 as A
arrays = {}
def add(label, a):
    arrays["c%02d_%s" % (len(arrays), label)] = a
add("f64", np.array([1.5, 2.5, 3.5]))
add("f32_2d", np.arange(6, dtype=np.float32).reshape(3, 2))
add("i16_3d", np.arange(24, dtype=np.int16).reshape(2, 3, 4))
add("bool", np.array([True, False, True]))
add("u64", np.array([0, 2**64 - 1], dtype=np.uint64))
add("i8", np.array([-128, 0, 127], dtype=np.int8))
add("u16", np.array([0, 65535], dtype=np.uint16))
add("u32", np.array([0, 4294967295], dtype=np.uint32))
add("c128", np.array([1 + 2j, 3 - 4j]))
add("c64", np.array([0.5 + 0.25j], dtype=np.complex64))
add("f16", np.array([0.5, 1.5, -2.0], dtype=np.float16))
add("bigendian", np.array([1, 2, 3], dtype=">i4"))
add("datetime", np.array([0, 1000], dtype="datetime64[ns]"))
add("jagged", A.JaggedArray.fromcounts([3, 0, 2], [1.1, 2.2, 3.3, 4.4, 5.5]))
add("jagged_ss", A.JaggedArray([2, 0], [4, 1], [1.1, 2.2, 3.3, 4.4, 5.5]))
add("jagged_sliced", A.JaggedArray.fromcounts([1, 2, 3], np.arange(6.0))[1:])
add("jagged_empty", A.JaggedArray.fromcounts(np.array([], dtype=np.int64), np.array([], dtype=np.float64)))
add("jagged_nested", A.fromiter([[[1, 2], [3]], [], [[4]]]))
add("table", A.Table(x=np.array([1, 2, 3], dtype=np.int32), y=[1.5, 2.5, 3.5]))
add("table_uneven", A.Table(np.arange(10), stuff=[5, 4, 3, 2, 1]))
add("table_slice", A.Table(x=np.arange(10), y=np.arange(10) * 1.5)[::-2])
add("table_index", A.Table(x=np.arange(5), y=np.arange(5) * 0.5)[[3, 1, 1]])
add("table_tuple", A.Table([1, 2, 3], [4.5, 5.5, 6.5]))
add("chunked", A.ChunkedArray([np.array([1, 2, 3]), np.array([], dtype=np.int64), np.array([4, 5])]))
add("chunked_jagged", A.ChunkedArray([A.fromiter([[1], [2, 3]]), A.fromiter([[], [4]])]))
app = A.AppendableArray(3, np.float64)
app.extend([1.0, 2.0, 3.0, 4.0])
add("appendable", app)
add("indexed", A.IndexedArray([2, 0, 0], [1.1, 2.2, 3.3]))
add("sparse", A.SparseArray(6, [1, 4], [10.0, 40.0]))
add("sparse_default", A.SparseArray(5, [0, 3], [1, 2], default=7))
add("sparse_nan", A.SparseArray(5, [1], [2.5], default=float("nan")))
add("union_tags", A.UnionArray.fromtags([0, 1, 0], [np.array([1.1, 2.2]), np.array([5, 6, 7])]))
add("union_index", A.UnionArray([0, 1, 0], [1, 2, 0], [np.array([1.1, 2.2]), np.array([5, 6, 7])]))
add("union_mixed", A.fromiter([1, "a", [2.5]]))
add("masked", A.MaskedArray([False, True, False], [1.1, 2.2, 3.3]))
add("masked_false", A.MaskedArray([False, True, False], [1.1, 2.2, 3.3], maskedwhen=False))
add("bitmasked_lsb", A.BitMaskedArray(np.array([0x12], np.uint8), np.arange(5), maskedwhen=True, lsborder=True))
add("bitmasked_msb", A.BitMaskedArray(np.array([0x12, 0x80], np.uint8), np.arange(9), maskedwhen=True, lsborder=False))
add("bitmasked_valid", A.BitMaskedArray(np.array([0x12], np.uint8), np.arange(5), maskedwhen=False, lsborder=True))
add("indexedmasked", A.IndexedMaskedArray([-1, 0, 1, -1], [1.1, 2.2]))
add("strings", A.fromiter(["one", "two", "", "three", "h\u00e9llo"]))
add("strings_sliced", A.fromiter(["one", "two", "", "three", "h\u00e9llo"])[1:4])
add("bytes", A.fromiter([b"ab", b"", b"c"]))
add("two_strings", A.Table(s=A.fromiter(["a", "bc"]), t=A.fromiter(["d", ""])))
add("records_optional", A.fromiter([{"a": 1, "b": [1.5, 2.5]}, {"a": 2, "b": []}, None]))
J = A.JaggedArray.fromcounts([3, 0, 2], [1.1, 2.2, 3.3, 4.4, 5.5])
add("shared", A.Table(a=J, b=J))
add("compressed", A.JaggedArray.fromcounts(np.full(1100, 2), np.arange(2200)))
add("bigbool", np.arange(10000) % 3 == 0)
add("strings_many", A.fromiter(["x%d" % i for i in range(3000)]))
A.save(sys.argv[1], arrays, mode="w")
out = {k: conv(v.tolist()) for k, v in arrays.items()}
print(json.dumps(out))
"#;

/// Members whose schema we cannot reproduce byte for byte, and why.
const NOT_BYTE_IDENTICAL: &[(&str, &str)] = &[
    // Read into native order; written back little-endian ("int32", not ">i4").
    ("bigendian", "byte order normalized"),
];

fn py_json(out: &[u8]) -> Json {
    serde_json::from_slice(out).unwrap_or_else(|e| {
        panic!(
            "bad JSON from python ({e}): {}",
            String::from_utf8_lossy(out)
        )
    })
}

fn inflate(b: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(b)
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn awkward0_writes_rust_reads() {
    let py = asdf_testkit::require_python!();
    let tmp = asdf_testkit::TempDir::new("awk-interop-py2rs");
    let path = tmp.join("all.awkd");
    let script = format!("{}{WRITE_AWKWARD0}", common::CONV);
    let expected = py_json(&asdf_testkit::run_python(
        &py,
        &script,
        &[path.to_str().unwrap()],
    ));
    let expected = expected.as_object().unwrap();
    // awkward0 pickles the NaN default of "sparse_nan": the scalar-only decoder is needed.
    let opts = ReadOptions {
        decode_pickled_scalars: true,
        ..ReadOptions::default()
    };
    let nan_name = expected
        .keys()
        .find(|k| k.ends_with("_sparse_nan"))
        .unwrap();
    assert!(matches!(
        AwkdFile::open(&path).unwrap().read(nan_name),
        Err(asdf_awkward::Error::Refused { .. })
    ));
    let f = AwkdFile::open_with(&path, opts).unwrap();
    assert_eq!(f.array_names().len(), expected.len());
    let mut identical = 0;
    for (name, want) in expected {
        let layout = f.read(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = layout.to_json().unwrap();
        assert_eq!(&got, want, "values of {name}");

        // Writing what we read reproduces awkward0's schema byte for byte, and its blobs.
        let mut back = MemoryStore::default();
        write_array(&layout, &mut back, name, &WriteOptions::default()).unwrap();
        let ours = String::from_utf8(back.blobs[&format!("{name}.json")].clone()).unwrap();
        let theirs = String::from_utf8(
            f.get(&format!("{name}.json"), 1 << 20)
                .unwrap()
                .unwrap()
                .into_owned(),
        )
        .unwrap();
        let label = &name[4..];
        if NOT_BYTE_IDENTICAL.iter().any(|(n, _)| *n == label) {
            continue;
        }
        assert_eq!(ours, theirs, "schema of {name}");
        for (blob, bytes) in &back.blobs {
            if blob.ends_with(".json") {
                continue;
            }
            let stored = f
                .get(blob, 1 << 30)
                .unwrap()
                .unwrap_or_else(|| panic!("{blob} not in awkward0's file"));
            if ours.contains(&format!(
                "\"zlib\", \"decompress\"], \"args\": [{{\"read\": \"{}\"",
                &blob[name.len() + 1..]
            )) {
                assert_eq!(inflate(bytes), inflate(&stored), "{blob} (decompressed)");
            } else {
                assert_eq!(bytes.as_slice(), stored.as_ref(), "{blob}");
            }
        }
        identical += 1;
    }
    assert!(identical >= expected.len() - NOT_BYTE_IDENTICAL.len());
}

const READ_AWKWARD0: &str = r#"
import sys, awkward0 as A
out = {}
for path in sys.argv[1:]:
    f = A.load(path)
    if hasattr(f, "keys"):
        for k in f.keys():
            out[k] = conv(f[k].tolist())
    else:
        out[path] = conv(f.tolist())
print(json.dumps(out))
"#;

#[test]
fn rust_writes_awkward0_reads() {
    let py = asdf_testkit::require_python!();
    let tmp = asdf_testkit::TempDir::new("awk-interop-rs2py");
    let arrays = rust_arrays();
    let mut expected = BTreeMap::new();
    for (name, l) in &arrays {
        expected.insert(name.clone(), l.to_json().unwrap());
    }
    // One file with default options, written in two appends.
    let main = tmp.join("main.awkd");
    let (first, second) = arrays.split_at(arrays.len() / 2);
    let refs = |s: &[(String, Layout)]| {
        s.iter()
            .map(|(n, l)| (n.clone(), l.clone()))
            .collect::<Vec<_>>()
    };
    let (first, second) = (refs(first), refs(second));
    save_awkd(
        &main,
        &as_pairs(&first),
        SaveMode::Create,
        &WriteOptions::default(),
    )
    .unwrap();
    save_awkd(
        &main,
        &as_pairs(&second),
        SaveMode::Append,
        &WriteOptions::default(),
    )
    .unwrap();
    // Other dialects and codecs, under distinct names.
    let variants: Vec<(&str, WriteOptions)> = vec![
        ("legacy", WriteOptions::legacy()),
        (
            "zlib_all",
            WriteOptions {
                compression: CompressionPolicy::all(Codec::Zlib),
                ..WriteOptions::default()
            },
        ),
        (
            "lz4_all",
            WriteOptions {
                compression: CompressionPolicy::all(Codec::Lz4Block),
                ..WriteOptions::default()
            },
        ),
        (
            "xz_all",
            WriteOptions {
                compression: CompressionPolicy::all(Codec::Lzma),
                ..WriteOptions::default()
            },
        ),
        (
            "noident",
            WriteOptions {
                emulate_identity: false,
                compression: CompressionPolicy::none(),
                ..WriteOptions::default()
            },
        ),
    ];
    let mut paths = vec![main.to_str().unwrap().to_string()];
    for (label, opts) in &variants {
        let p = tmp.join(&format!("{label}.awkd"));
        let renamed: Vec<(String, Layout)> = arrays
            .iter()
            .map(|(n, l)| (format!("{label}_{n}"), l.clone()))
            .collect();
        for (n, l) in &renamed {
            expected.insert(n.clone(), l.to_json().unwrap());
        }
        save_awkd(&p, &as_pairs(&renamed), SaveMode::Create, opts).unwrap();
        paths.push(p.to_str().unwrap().to_string());
    }
    // A NaN default is written as awkward0 does, as a pickled float.
    let nan = tmp.join("nan.awkd");
    let sparse_nan = Layout::Sparse(SparseArray {
        length: 4,
        index: vec![2],
        content: common::leaf(asdf_awkward::Buffer::F64(vec![1.25])),
        default: SparseDefault::Float(f64::NAN),
    });
    save_awkd(
        &nan,
        &[("sparse_nan", &sparse_nan)],
        SaveMode::Create,
        &WriteOptions::default(),
    )
    .unwrap();
    expected.insert("sparse_nan".into(), json!([null, null, 1.25, null]));
    paths.push(nan.to_str().unwrap().to_string());
    // A single anonymous array: awkward0.load returns it directly.
    let anon = tmp.join("anon.awkd");
    let (_, jag) = &arrays[5];
    save_awkd(
        &anon,
        &[("", jag)],
        SaveMode::Create,
        &WriteOptions::default(),
    )
    .unwrap();
    let anon_s = anon.to_str().unwrap().to_string();
    expected.insert(anon_s.clone(), jag.to_json().unwrap());
    paths.push(anon_s);

    let script = format!("{}{READ_AWKWARD0}", common::CONV);
    let args: Vec<&str> = paths.iter().map(|s| s.as_str()).collect();
    let got = py_json(&asdf_testkit::run_python(&py, &script, &args));
    let got = got.as_object().unwrap();
    assert_eq!(
        got.len(),
        expected.len(),
        "awkward0 found {:?}",
        got.keys().collect::<Vec<_>>()
    );
    for (name, want) in &expected {
        assert_eq!(got.get(name), Some(want), "awkward0's view of {name}");
    }
}

const READ_AWKWARD2: &str = r#"
import sys, os, numpy as np, awkward as ak
out = {}
root = sys.argv[1]
for name in sorted(os.listdir(root)):
    d = os.path.join(root, name)
    meta = json.load(open(os.path.join(d, "meta.json")))
    buffers = {}
    for k in os.listdir(d):
        if k != "meta.json":
            buffers[k] = np.fromfile(os.path.join(d, k), dtype=np.uint8)
    arr = ak.from_buffers(meta["form"], meta["length"], buffers)
    out[name] = conv(arr.to_list())
print(json.dumps(out))
"#;

#[test]
fn awkward2_from_buffers_reads_our_export() {
    let py = asdf_testkit::require_awkward2_python!();
    let tmp = asdf_testkit::TempDir::new("awk-interop-ak2");
    let mut expected = BTreeMap::new();
    let mut refused = Vec::new();
    let corpus: Vec<(String, Layout)> = {
        let mut v = rust_arrays();
        for file in ["nested.awkd", "strings.awkd", "masked.awkd"] {
            let f = AwkdFile::open(asdf_testkit::corpus_file(&format!("awkward0/{file}"))).unwrap();
            for n in f.array_names() {
                v.push((
                    format!("corpus_{}_{n}", &file[..file.len() - 5]),
                    f.read(&n).unwrap(),
                ));
            }
        }
        v
    };
    for (name, l) in &corpus {
        let b = match to_awkward2(l) {
            Ok(b) => b,
            Err(asdf_awkward::Error::Unsupported { .. }) => {
                refused.push(name.clone());
                continue;
            }
            Err(e) => panic!("{name}: {e}"),
        };
        let d = tmp.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("meta.json"),
            serde_json::to_vec(&json!({"form": b.form, "length": b.length})).unwrap(),
        )
        .unwrap();
        for (k, bytes) in &b.buffers {
            std::fs::write(d.join(k), bytes).unwrap();
        }
        expected.insert(name.clone(), l.to_json().unwrap());
    }
    // Only the classes without an awkward 2 form are refused.
    for r in &refused {
        assert!(
            r.contains("sparse") || r.contains("chunked"),
            "unexpectedly refused {r}"
        );
    }
    let got = py_json(&asdf_testkit::run_python(
        &py,
        &format!("{}{READ_AWKWARD2}", common::CONV),
        &[tmp.path().to_str().unwrap()],
    ));
    let got = got.as_object().unwrap();
    for (name, want) in &expected {
        assert_eq!(got.get(name), Some(want), "awkward 2's view of {name}");
    }
    assert!(expected.len() >= 35, "{}", expected.len());
}
