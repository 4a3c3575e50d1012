//! Interop with awkward 2 (`ak.to_buffers` / `ak.from_buffers`), both directions, on arrays of
//! every form class: awkward 2 writes `.npz` and buffer directories, we read them and compare
//! with `ak.to_list`; we write them back and awkward 2 reads them and compares with the original
//! (`ak.array_equal` with parameters, the type string, `to_list`).

use crate::common;

use asdf::yaml::Node;
use asdf::{AsdfFile, AsdfWriter, StoreOptions};
use asdf_awkward::{
    from_asdf, from_awkward2, read_array, read_awkward2_dir, read_awkward2_npz, to_asdf_awkward2,
    to_awkward2, write_array, write_awkward2_dir, write_awkward2_npz, FromBuffersOptions,
    MemoryStore, ReadOptions, WriteOptions,
};
use serde_json::Value as Json;

/// awkward 2 builds arrays of every form class and saves each as `<name>.npz` and `<name>_dir/`;
/// prints `{name: {"list": to_list, "form": form dict, "type": str(type)}}`.
const GENERATE: &str = r#"
import sys, json, math, pathlib
import numpy as np, awkward as ak
C = ak.contents
I = ak.index
base = pathlib.Path(sys.argv[1])
arrays = {}
def add(name, a):
    arrays[name] = a if isinstance(a, ak.Array) else ak.Array(a)
num = lambda v, dt=np.float64: C.NumpyArray(np.array(v, dtype=dt))
add("f64", [1.1, 2.2, 3.3])
add("i32_inner", ak.from_numpy(np.arange(12, dtype=np.int32).reshape(4, 3), regulararray=False))
add("f32_inner2", ak.from_numpy(np.arange(16, dtype=np.float32).reshape(4, 2, 2), regulararray=False))
add("regular", ak.from_numpy(np.arange(12).reshape(4, 3), regulararray=True))
add("regular_size0", C.RegularArray(num([]), 0, zeros_length=3))
add("bool", np.array([True, False, True]))
add("c128", np.array([1 + 2j, 3 - 4j]))
add("f16", np.array([0.5, -2.0], dtype=np.float16))
add("u64", np.array([0, 2**64 - 1], dtype=np.uint64))
add("datetime", np.array([0, 1000], dtype="datetime64[ns]"))
add("jagged", [[1.1, 2.2], [], [3.3]])
add("jagged_i32", C.ListOffsetArray(I.Index32(np.array([0, 2, 2, 5], np.int32)), num([1, 2, 3, 4, 5], np.int16)))
add("jagged_u32", C.ListOffsetArray(I.IndexU32(np.array([1, 2, 4], np.uint32)), num([9, 1, 2, 3], np.int8)))
add("listarray", C.ListArray(I.Index64(np.array([3, 0, 1])), I.Index64(np.array([5, 0, 3])), num([1, 2, 3, 4, 5.5])))
add("listarray_i32", C.ListArray(I.Index32(np.array([2, 2], np.int32)), I.Index32(np.array([4, 2], np.int32)), num([1, 2, 3, 4])))
add("jagged_sliced", ak.Array([[1, 2], [3], [4, 5]])[1:])
add("nested", [[[1], [2, 3]], [], [[4]]])
add("strings", ["one", "two", "", "h\u00e9llo"])
add("bytes", [b"ab", b"", b"c"])
add("strings_option", ["a", None, "bc"])
add("records", [{"x": 1, "y": [1.5]}, {"x": 2, "y": []}])
add("tuples", [(1, "a"), (2, "b")])
add("record_option", [{"a": 1}, None, {"a": 3}])
add("record_empty_fields", [{}, {}, {}])
add("bytemasked", C.ByteMaskedArray(I.Index8(np.array([1, 0, 1], np.int8)), num([1.5, 2.5, 3.5]), valid_when=True))
add("bytemasked_false", C.ByteMaskedArray(I.Index8(np.array([1, 0, 1], np.int8)), num([1.5, 2.5, 3.5]), valid_when=False))
add("bitmasked_lsb", C.BitMaskedArray(I.IndexU8(np.array([0b00010010], np.uint8)), num(np.arange(5.0)), valid_when=True, length=5, lsb_order=True))
add("bitmasked_msb", C.BitMaskedArray(I.IndexU8(np.array([0x12, 0x80], np.uint8)), num(np.arange(11.0)), valid_when=False, length=11, lsb_order=False))
add("bitmasked_short", C.BitMaskedArray(I.IndexU8(np.array([0xff], np.uint8)), num(np.arange(6.0)), valid_when=True, length=4, lsb_order=True))
add("unmasked", C.UnmaskedArray(num([1, 2, 3], np.int64)))
add("indexed", C.IndexedArray(I.Index64(np.array([2, 0, 0])), num([1.1, 2.2, 3.3])))
add("indexed_u32", C.IndexedArray(I.IndexU32(np.array([1, 1], np.uint32)), num([1.1, 2.2, 3.3])))
add("indexedoption_i32", C.IndexedOptionArray(I.Index32(np.array([2, -1, 0, -5], np.int32)), num([1.1, 2.2, 3.3])))
add("union", [1, "a", [2.5]])
add("union_option", [1, None, "x"])
add("union_records", [{"x": 1}, {"y": "a"}, 3.5])
add("union_i32", C.UnionArray(I.Index8(np.array([0, 1, 0], np.int8)), I.Index32(np.array([1, 0, 0], np.int32)), [num([1.5, 2.5]), num([7, 8], np.int64)]))
add("empty", [])
add("list_of_empty", [[], []])
add("named_record", ak.with_name(ak.Array([{"x": 1.0, "y": 2.0}]), "Point"))
add("doc_param", ak.with_parameter(ak.Array([[1, 2], [3]]), "__doc__", "hello"))
add("categorical", C.IndexedArray(I.Index64(np.array([0, 1, 0, 1])), ak.to_layout(["lo", "hi"]), parameters={"__array__": "categorical"}))
add("fixed_strings", ak.from_numpy(np.array(["ab", "cd"])))
add("fixed_bytes", ak.from_numpy(np.array([b"ab", b"cd"])))
add("deep", [[{"a": [None, 1]}], [], [{"a": []}, None]])
add("record_of_options", [{"a": None, "b": [1, None]}, {"a": 2.5, "b": []}])
add("regular_of_records", ak.to_regular(ak.Array([[{"x": 1}, {"x": 2}], [{"x": 3}, {"x": 4}]]), axis=1))

out = {}
for name, a in arrays.items():
    form, length, container = ak.to_buffers(a)
    np.savez(base / f"{name}.npz", form=form.to_json(), length=length, **container)
    d = base / f"{name}_dir"
    d.mkdir()
    for k, v in container.items():
        (d / k).write_bytes(np.ascontiguousarray(v).tobytes())
    (d / "awkward.json").write_text(json.dumps({"form": form.to_dict(), "length": length}))
    out[name] = {"list": conv(a.to_list()), "form": form.to_dict(), "type": str(a.type)}
print(json.dumps(out))
"#;

/// Loads every array back from our files and compares with the original (from awkward 2's own
/// files); prints `{"checked": n, "failures": [[name, container, what], ...]}`.
const VERIFY: &str = r#"
import sys, json, pathlib
import numpy as np, awkward as ak
src, dst = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
def load_npz(p):
    f = np.load(p)
    return ak.from_buffers(str(f["form"]), int(f["length"]), {k: f[k] for k in f.files if k not in ("form", "length")})
def load_dir(d):
    meta = json.loads((d / "awkward.json").read_text())
    keys = [p.name for p in d.iterdir() if p.name != "awkward.json"]
    return ak.from_buffers(meta["form"], meta["length"], {k: (d / k).read_bytes() for k in keys})
failures = []
names = sorted(p.stem for p in src.glob("*.npz"))
for name in names:
    orig = load_npz(src / f"{name}.npz")
    for kind, loader, path in (("npz", load_npz, dst / f"{name}.npz"), ("dir", load_dir, dst / f"{name}_dir")):
        try:
            back = loader(path)
        except Exception as e:
            failures.append([name, kind, "load: %r" % e]); continue
        if str(back.type) != str(orig.type):
            failures.append([name, kind, "type %s != %s" % (back.type, orig.type)])
        if back.to_list() != orig.to_list():
            failures.append([name, kind, "values %r != %r" % (back.to_list(), orig.to_list())])
        try:
            eq = ak.array_equal(orig, back, equal_nan=True, check_parameters=True)
        except Exception as e:
            eq = "error %r" % e
        if eq is not True:
            failures.append([name, kind, "array_equal: %s" % eq])
print(json.dumps({"checked": len(names), "failures": failures}))
"#;

/// Reads our ASDF file (argv[2]) with Python asdf and `ak.from_buffers`, compares with awkward 2's
/// own files (argv[1]), then writes every array into a new ASDF file (argv[3]) the same way, its
/// buffers typed as `ak.to_buffers` returns them. Prints `{"checked": n, "failures": [...]}`.
const ASDF_BOTH_WAYS: &str = r#"
import sys, json, pathlib, warnings
import numpy as np, awkward as ak, asdf
src, ours, theirs = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
TAG = "tag:asdf-rust.dev,2026:awkward/awkward2-1.0.0"
warnings.simplefilter("ignore")
failures = []
originals = {}
for p in sorted(src.glob("*.npz")):
    f = np.load(p)
    originals[p.stem] = (str(f["form"]), int(f["length"]), {k: f[k] for k in f.files if k not in ("form", "length")})
with asdf.open(ours) as af:
    for name, (form, length, buffers) in originals.items():
        node = af.tree[name]
        if getattr(node, "_tag", None) != TAG:
            failures.append([name, "tag %r" % getattr(node, "_tag", None)])
        back = ak.from_buffers(node["form"], node["length"], {k: np.asarray(v) for k, v in node["buffers"].items()})
        orig = ak.from_buffers(form, length, buffers)
        if not ak.array_equal(orig, back, equal_nan=True, check_parameters=True) or str(orig.type) != str(back.type):
            failures.append([name, "differs: %s vs %s" % (back.type, orig.type)])
tree = {}
for name, (form, length, buffers) in originals.items():
    # ASDF has no datetime (or, in asdf 6, float16) datatype: those go as raw bytes.
    typed = {k: (v.view(np.uint8) if v.dtype.kind in "mM" or v.dtype == np.float16 else v) for k, v in buffers.items()}
    tree[name] = asdf.tagged.TaggedDict({"form": json.loads(form), "length": length, "buffers": typed}, TAG)
asdf.AsdfFile(tree).write_to(theirs, all_array_compression="zlib")
print(json.dumps({"checked": len(originals), "failures": failures}))
"#;

/// Reads our Arrow IPC streams (`<dst>/<name>.arrows`) with pyarrow and `ak.from_arrow`,
/// compares with awkward 2's own files in `<src>`, and writes `ak.to_arrow` of each original
/// as `<src>/<name>.py.arrows` (one column named ""). Prints `{"checked": n, "failures": [...]}`.
#[cfg(feature = "arrow")]
const ARROW_IPC: &str = r#"
import sys, json, math, pathlib
import numpy as np, awkward as ak, pyarrow as pa
src, dst = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
def conv(x):
    if isinstance(x, (dict, tuple)):
        items = x.items() if isinstance(x, dict) else enumerate(x)
        return {str(k): conv(v) for k, v in items}
    if isinstance(x, list):
        return [conv(v) for v in x]
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    return x
def save(path, arr):
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    batch = pa.RecordBatch.from_arrays([arr], names=[""])
    with pa.ipc.new_stream(path, batch.schema) as w:
        w.write_batch(batch)
failures = []
checked = 0
found = {}
for p in sorted(src.glob("*.npz")):
    name = p.stem
    f = np.load(p)
    orig = ak.from_buffers(str(f["form"]), int(f["length"]), {k: f[k] for k in f.files if k not in ("form", "length")})
    try:
        own = ak.from_arrow(ak.to_arrow(orig))
    except Exception:
        continue
    ours = dst / f"{name}.arrows"
    if ours.exists():
        checked += 1
        t = pa.ipc.open_stream(ours.read_bytes()).read_all()
        # One array, not a chunked one: awkward cannot read an empty chunked array of its own
        # extension type (its own `ak.to_arrow` output fails the same way).
        try:
            x = ak.from_arrow(t.column(0).combine_chunks()) if t.column_names == [""] else ak.from_arrow(t)
        except Exception as e:
            failures.append([name, "ak.from_arrow: %r (%s)" % (e, t.schema)])
            continue
        # Our stream reads as awkward's own to_arrow -> from_arrow round trip does: values,
        # type (parameters, tuples, option types) and parameters compared.
        if conv(x.to_list()) != conv(own.to_list()):
            failures.append([name, "%r != %r" % (x.to_list(), own.to_list())])
        elif str(x.type) != str(own.type):
            failures.append([name, "type %s != %s" % (x.type, own.type)])
        elif not ak.array_equal(x, own, check_parameters=True, equal_nan=True):
            failures.append([name, "ak.array_equal with parameters"])
    save(src / f"{name}.py.arrows", ak.to_arrow(orig, extensionarray=False))
    save(src / f"{name}.pyx.arrows", ak.to_arrow(orig))
    found[name] = sorted(params(own.layout.form.to_dict(), []))
print(json.dumps({"checked": checked, "failures": failures, "params": found}))
"#;

fn py_json(out: &[u8]) -> Json {
    serde_json::from_slice(out).unwrap_or_else(|e| {
        panic!(
            "bad JSON from python ({e}): {}",
            String::from_utf8_lossy(out)
        )
    })
}

/// Form classes, depth first, so the export of an import can be compared with awkward 2's form.
fn classes(form: &Json, out: &mut Vec<String>) {
    if let Some(c) = form.get("class").and_then(Json::as_str) {
        out.push(c.to_string());
    }
    if let Some(c) = form.get("content") {
        classes(c, out);
    }
    if let Some(Json::Array(cs)) = form.get("contents") {
        for c in cs {
            classes(c, out);
        }
    }
}

#[test]
fn awkward2_writes_we_read_we_write_awkward2_reads() {
    let py = asdf_testkit::require_awkward2_python!();
    let tmp = asdf_testkit::TempDir::new("awk2-interop");
    let src = tmp.join("py");
    let dst = tmp.join("rs");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&dst).unwrap();
    let expected = py_json(&asdf_testkit::run_python(
        &py,
        &format!("{}{GENERATE}", common::CONV),
        &[src.to_str().unwrap()],
    ));
    let expected = expected.as_object().unwrap();
    assert!(
        expected.len() >= 40,
        "only {} arrays generated",
        expected.len()
    );
    let opts = FromBuffersOptions::default();
    let mut failures = Vec::new();
    let mut awkward0_refused = Vec::new();
    let mut imported = Vec::new();
    #[cfg_attr(not(feature = "arrow"), allow(unused_mut))]
    let mut arrow_refused: Vec<String> = Vec::new();
    for (name, e) in expected {
        let from_npz = read_awkward2_npz(src.join(format!("{name}.npz")), &opts)
            .unwrap_or_else(|err| panic!("{name}.npz: {err}"));
        let from_dir = read_awkward2_dir(src.join(format!("{name}_dir")), &opts)
            .unwrap_or_else(|err| panic!("{name}_dir: {err}"));
        for (kind, a) in [("npz", &from_npz), ("dir", &from_dir)] {
            let got = a
                .to_json()
                .unwrap_or_else(|err| panic!("{name} ({kind}): {err}"));
            if got != e["list"] {
                failures.push(format!("{name} ({kind}): {got} != {}", e["list"]));
            }
        }
        // Export ∘ import keeps awkward 2's form classes.
        let exported = to_awkward2(&from_npz).unwrap_or_else(|err| panic!("{name}: {err}"));
        let (mut want, mut have) = (Vec::new(), Vec::new());
        classes(&e["form"], &mut want);
        classes(&exported.form, &mut have);
        if want != have {
            failures.push(format!("{name}: form classes {have:?} != {want:?}"));
        }
        // Import ∘ export is the identity on values.
        let again = from_awkward2(&exported).unwrap();
        assert_eq!(
            again.to_json().unwrap(),
            e["list"],
            "{name}: import of export"
        );
        // awkward0 stand-ins (Table for records, JaggedArray for regular lists, ...) keep values.
        let mut awkd = MemoryStore::default();
        match write_array(&from_npz, &mut awkd, "a", &WriteOptions::default()) {
            Ok(_) => {
                let back = read_array(&awkd, "a", &ReadOptions::default()).unwrap();
                assert_eq!(
                    back.to_json().unwrap(),
                    e["list"],
                    "{name}: through awkward0"
                );
            }
            Err(err) => awkward0_refused.push(format!("{name}: {err}")),
        }
        // The Arrow mapping keeps values too (complex numbers have no Arrow type).
        #[cfg(feature = "arrow")]
        match asdf_awkward::arrow::to_arrow(&from_npz) {
            Ok(arr) => {
                let back = asdf_awkward::arrow::from_arrow(arr.as_ref()).unwrap();
                assert_eq!(back.to_json().unwrap(), e["list"], "{name}: through Arrow");
                let ipc = dst.join(format!("{name}.arrows"));
                asdf_awkward::arrow::write_ipc_stream(&from_npz, &ipc).unwrap();
                let back = asdf_awkward::arrow::read_ipc_stream(&ipc).unwrap();
                assert_eq!(back.to_json().unwrap(), e["list"], "{name}: Arrow IPC");
            }
            Err(err) => arrow_refused.push(format!("{name}: {err}")),
        }
        write_awkward2_npz(&from_npz, dst.join(format!("{name}.npz"))).unwrap();
        imported.push((name.clone(), from_npz.clone()));
        write_awkward2_dir(&from_dir, dst.join(format!("{name}_dir"))).unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Only a record with no fields (and a length) has no awkward0 Table.
    assert_eq!(awkward0_refused.len(), 1, "{awkward0_refused:?}");
    assert!(awkward0_refused[0].starts_with("record_empty_fields"));
    if cfg!(feature = "arrow") {
        assert_eq!(arrow_refused.len(), 1, "{arrow_refused:?}");
        assert!(arrow_refused[0].starts_with("c128"));
    }
    let report = py_json(&asdf_testkit::run_python(
        &py,
        VERIFY,
        &[src.to_str().unwrap(), dst.to_str().unwrap()],
    ));
    eprintln!("awkward 2 verification: {report}");
    assert_eq!(report["checked"].as_u64(), Some(expected.len() as u64));
    assert_eq!(
        report["failures"],
        Json::Array(vec![]),
        "awkward 2 disagrees: {report}"
    );

    // Arrow IPC streams both ways with pyarrow and ak.from_arrow / ak.to_arrow.
    #[cfg(feature = "arrow")]
    {
        let report = py_json(&asdf_testkit::run_python(
            &py,
            &format!("{}{ARROW_IPC}", common::PARAMS),
            &[src.to_str().unwrap(), dst.to_str().unwrap()],
        ));
        assert_eq!(report["checked"].as_u64(), Some(expected.len() as u64 - 1));
        assert_eq!(report["failures"], Json::Array(vec![]), "pyarrow: {report}");
        let mut read = 0;
        for (name, e) in expected {
            let p = src.join(format!("{name}.py.arrows"));
            if p.exists() {
                let back = asdf_awkward::arrow::read_ipc_stream(&p)
                    .unwrap_or_else(|err| panic!("{name}: ak.to_arrow's stream: {err}"));
                assert_eq!(
                    back.to_json().unwrap(),
                    e["list"],
                    "{name}: from ak.to_arrow"
                );
                read += 1;
            }
            // With awkward's extension types (`ak.to_arrow`'s default): the same values, and
            // the parameters awkward's own round trip keeps.
            let p = src.join(format!("{name}.pyx.arrows"));
            if p.exists() {
                let back = asdf_awkward::arrow::read_ipc_stream(&p)
                    .unwrap_or_else(|err| panic!("{name}: ak.to_arrow's extension types: {err}"));
                assert_eq!(
                    back.to_json().unwrap(),
                    e["list"],
                    "{name}: extension types"
                );
                let mut have = Vec::new();
                common::form_parameters(&to_awkward2(&back).unwrap().form, &mut have);
                have.sort();
                assert_eq!(
                    Json::from(have),
                    report["params"][name],
                    "{name}: parameters"
                );
            }
        }
        assert!(read >= 40, "only {read} arrays came through ak.to_arrow");
    }

    // ASDF: every array in one file under the awkward 2 tag, blocks with several codecs.
    let ours = dst.join("ours.asdf");
    let theirs = dst.join("theirs.asdf");
    let codecs = ["none", "zlib", "zstd", "lz4", "bzp2"];
    let mut w = AsdfWriter::new();
    let mut tree = Vec::new();
    for (i, (name, layout)) in imported.iter().enumerate() {
        let store = StoreOptions::compressed(codecs[i % codecs.len()]).unwrap();
        tree.push((
            name.clone(),
            to_asdf_awkward2(layout, &mut w, &store).unwrap(),
        ));
    }
    w.write_path(&ours, Node::mapping(tree), &Default::default())
        .unwrap();
    let f = AsdfFile::open(&ours).unwrap();
    for (name, _) in &imported {
        let back = from_asdf(&f, &format!("/{name}"), &ReadOptions::default()).unwrap();
        assert_eq!(
            back.to_json().unwrap(),
            expected[name]["list"],
            "{name} via ASDF"
        );
    }
    let report = py_json(&asdf_testkit::run_python(
        &py,
        ASDF_BOTH_WAYS,
        &[
            src.to_str().unwrap(),
            ours.to_str().unwrap(),
            theirs.to_str().unwrap(),
        ],
    ));
    assert_eq!(report["checked"].as_u64(), Some(expected.len() as u64));
    assert_eq!(
        report["failures"],
        Json::Array(vec![]),
        "awkward 2 via ASDF: {report}"
    );
    // Python's file: buffers typed as ak.to_buffers gives them, zlib blocks.
    let f = AsdfFile::open(&theirs).unwrap();
    for (name, e) in expected {
        let back = from_asdf(&f, &format!("/{name}"), &ReadOptions::default())
            .unwrap_or_else(|err| panic!("{name} from Python's ASDF: {err}"));
        assert_eq!(
            back.to_json().unwrap(),
            e["list"],
            "{name} from Python's ASDF"
        );
    }
}

/// A layout awkward 2 cannot hold (a `SparseArray`) fails before anything is written: the
/// directory and the `.npz` of an earlier export stay as they were.
#[test]
fn a_failed_export_replaces_nothing() {
    use std::sync::Arc;
    let tmp = asdf_testkit::TempDir::new("awk2-failed-export");
    let dir = tmp.join("dir");
    let npz = tmp.join("a.npz");
    let good =
        asdf_awkward::Layout::from_json(&serde_json::json!([[1.5, 2.5], [], [3.5]])).unwrap();
    write_awkward2_dir(&good, &dir).unwrap();
    write_awkward2_npz(&good, &npz).unwrap();
    // Every file of the directory (temporary ones included) with its bytes.
    let listing = || {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
            .collect();
        v.sort();
        v
    };
    let before = listing();
    let npz_before = std::fs::read(&npz).unwrap();
    // A record whose first field exports and whose second does not.
    let sparse = asdf_awkward::Layout::Sparse(asdf_awkward::SparseArray {
        length: 3,
        index: vec![1],
        content: Arc::new(asdf_awkward::Layout::from_json(&serde_json::json!([7.0])).unwrap()),
        default: asdf_awkward::SparseDefault::Zero,
    });
    let bad = asdf_awkward::Layout::Record(asdf_awkward::RecordArray {
        fields: Some(vec!["a".into(), "b".into()]),
        contents: vec![Arc::new(good.clone()), Arc::new(sparse)],
        length: 3,
    });
    assert!(write_awkward2_dir(&bad, &dir).is_err());
    assert!(write_awkward2_npz(&bad, &npz).is_err());
    assert_eq!(listing(), before);
    assert_eq!(std::fs::read(&npz).unwrap(), npz_before);
    let opts = FromBuffersOptions::default();
    let back = read_awkward2_dir(&dir, &opts).unwrap();
    assert_eq!(back.to_json().unwrap(), good.to_json().unwrap());
}

/// Saves that do not wait for the disk (`Durability::Relaxed`) write the same files: a buffers
/// directory, an `.npz` and an `.awkd`, new and then replaced, read back equal, and a failed
/// export still replaces nothing.
#[test]
fn unsynced_saves_read_back_and_fail_cleanly() {
    use asdf_awkward::{
        save_awkd, write_awkward2_dir_with, write_awkward2_npz_with, AwkdFile, Durability, Layout,
        SaveMode,
    };
    let tmp = asdf_testkit::TempDir::new("awk2-unsynced");
    let relaxed = Durability::Relaxed;
    let (dir, npz, awkd) = (tmp.join("dir"), tmp.join("a.npz"), tmp.join("a.awkd"));
    let opts = FromBuffersOptions::default();
    let awkd_opts = WriteOptions {
        durability: relaxed,
        ..WriteOptions::default()
    };
    for n in [3usize, 5000] {
        let json: Vec<Json> = (0..n)
            .map(|i| serde_json::json!({"x": i as f64 * 0.5, "s": format!("r{i}")}))
            .collect();
        let layout = Layout::from_json(&Json::Array(json)).unwrap();
        write_awkward2_dir_with(&layout, &dir, relaxed).unwrap();
        write_awkward2_npz_with(&layout, &npz, relaxed).unwrap();
        save_awkd(&awkd, &[("a", &layout)], SaveMode::Create, &awkd_opts).unwrap();
        let want = layout.to_json().unwrap();
        let dir_back = read_awkward2_dir(&dir, &opts).unwrap();
        assert_eq!(dir_back.to_json().unwrap(), want);
        assert_eq!(
            read_awkward2_npz(&npz, &opts).unwrap().to_json().unwrap(),
            want
        );
        let awkd_back = AwkdFile::open(&awkd).unwrap().read("a").unwrap();
        assert_eq!(awkd_back.to_json().unwrap(), want);
    }
    let npz_before = std::fs::read(&npz).unwrap();
    let sparse = asdf_awkward::Layout::Sparse(asdf_awkward::SparseArray {
        length: 1,
        index: vec![0],
        content: std::sync::Arc::new(Layout::from_json(&serde_json::json!([7.0])).unwrap()),
        default: asdf_awkward::SparseDefault::Zero,
    });
    assert!(write_awkward2_npz_with(&sparse, &npz, relaxed).is_err());
    assert!(write_awkward2_dir_with(&sparse, tmp.join("never"), relaxed).is_err());
    assert_eq!(std::fs::read(&npz).unwrap(), npz_before);
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .chain(std::fs::read_dir(&dir).unwrap())
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Buffers of tens of MiB (read by several threads, each filling its own part of the buffer)
/// come back exactly: a jagged array of 3 million float64 in 1 million lists.
#[test]
fn large_buffers_round_trip_through_a_directory() {
    use asdf_awkward::{Buffer, JaggedArray, Layout, ListIndex, NumpyArray};
    use std::sync::Arc;
    let tmp = asdf_testkit::TempDir::new("awk2-large-dir");
    let n = 1_000_000usize;
    // Lists of 2 and 4 items, alternating.
    let offsets: Vec<i64> = (0..=n as i64).map(|i| i * 3 - (i % 2)).collect();
    let total = *offsets.last().unwrap() as usize;
    let content: Vec<f64> = (0..total).map(|i| i as f64 * 0.5 - 7.25).collect();
    let layout = Layout::Jagged(JaggedArray {
        index: ListIndex::Offsets(offsets.clone()),
        content: Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::F64(
            content.clone(),
        )))),
    });
    let dir = tmp.join("big");
    write_awkward2_dir(&layout, &dir).unwrap();
    let back = read_awkward2_dir(&dir, &FromBuffersOptions::default()).unwrap();
    let Layout::Jagged(j) = &back else {
        panic!("not a jagged array: {back:?}")
    };
    assert!(matches!(&j.index, ListIndex::Offsets(o) if *o == offsets));
    let Layout::Numpy(leaf) = &*j.content else {
        panic!("not a numeric leaf")
    };
    assert!(matches!(leaf.data(), Buffer::F64(v) if *v == content));
}
