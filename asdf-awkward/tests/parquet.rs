//! Parquet both ways against awkward 2 + pyarrow: `ak.to_parquet` writes, we read and compare
//! with `ak.to_list`; we write, `ak.from_parquet` and `pyarrow.parquet.read_table` read and
//! compare with the original.
#![cfg(feature = "parquet")]

use crate::common;

use asdf_awkward::parquet_io::{read_parquet, write_parquet};
use serde_json::Value as Json;

/// Writes `<name>.parquet` with `ak.to_parquet` for each array; prints `{"lists": {name:
/// to_list}, "params": {name: every parameter of the form awkward reads back, sorted}}`.
const WRITE: &str = r#"
import sys, json, math, pathlib
import numpy as np, awkward as ak
base = pathlib.Path(sys.argv[1])
arrays = {
    "flat": ak.Array([1.5, 2.5, 3.5]),
    "ints_option": ak.Array([1, None, 3]),
    "jagged": ak.Array([[1.1, 2.2], [], [3.3]]),
    "jagged_option": ak.Array([[1, None], None, []]),
    "nested": ak.Array([[[1], [2, 3]], [], [[4]]]),
    "strings": ak.Array(["one", "", "h\u00e9llo", None]),
    "bytes": ak.Array([b"ab", b"", b"c"]),
    "records": ak.Array([{"x": 1, "y": [1.5], "s": "a"}, {"x": 2, "y": [], "s": None}]),
    # Missing records: inside a list, and as rows (columns split, awkward's metadata says the
    # rows are optional).
    "record_rows_option": ak.Array([{"a": 1, "b": "x"}, None, {"a": 3, "b": None}]),
    "list_of_record_option": ak.Array([[{"a": 1, "b": [1.5]}, None], [], [{"a": 3, "b": []}]]),
    "nested_records": ak.Array([{"p": {"q": [1, 2]}}, {"p": {"q": []}}]),
    "list_of_records": ak.Array([[{"x": 1.5}, {"x": 2.5}], []]),
    "regular": ak.to_regular(ak.Array([[1, 2], [3, 4], [5, 6]]), axis=1),
    "bools": ak.Array([[True, False], [True]]),
    "int32": ak.values_astype(ak.Array([[1, 2], [3]]), np.int32),
    "uint8": ak.values_astype(ak.Array([0, 255]), np.uint8),
    "float32": ak.values_astype(ak.Array([0.5, -1.5]), np.float32),
    "tuples": ak.Array([(1, "a"), (2, "b")]),
    # Parameters and classes only awkward's own metadata carries.
    "named_records": ak.with_name(ak.Array([[{"x": 1.0, "y": 2.0}], []]), "Point"),
    "named_columns": ak.with_name(ak.Array([{"x": 1, "y": [2]}, {"x": 3, "y": []}]), "Event"),
    "doc_list": ak.with_parameter(ak.Array([[1, 2], [3]]), "__doc__", "counts"),
    "doc_inner": ak.Array(ak.contents.ListOffsetArray(ak.index.Index64(np.array([0, 2, 3])), ak.contents.NumpyArray(np.array([1.5, 2.5, 3.5]), parameters={"units": "GeV"}))),
    "tuples_in_lists": ak.Array([[(1, [1.5]), (2, [])], []]),
    "option_without_missing": ak.Array(ak.contents.UnmaskedArray(ak.contents.NumpyArray(np.array([1, 2, 3])))),
    "option_params": ak.Array(ak.contents.ByteMaskedArray(ak.index.Index8(np.array([1, 0, 1], np.int8)), ak.contents.NumpyArray(np.array([1.0, 2.0, 3.0])), valid_when=True, parameters={"note": "masked"})),
    "events": ak.zip({"pt": ak.Array([[30.5, 12.25], [], [5.0]]), "eta": ak.Array([[0.1, -1.2], [], [2.0]])}),
}
out, found = {}, {}
for name, a in arrays.items():
    ak.to_parquet(a, base / f"{name}.parquet")
    out[name] = conv(a.to_list())
    found[name] = sorted(params(ak.from_parquet(base / f"{name}.parquet").layout.form.to_dict(), []))
print(json.dumps({"lists": out, "params": found}))
"#;

/// Reads our `<name>.rs.parquet` files back with awkward and pyarrow and compares with the
/// originals; prints `{"checked": n, "failures": [...]}`.
const VERIFY: &str = r#"
import sys, json, pathlib
import numpy as np, awkward as ak, pyarrow.parquet as pq
base = pathlib.Path(sys.argv[1])
# pyarrow alone does not read awkward's metadata: a tuple reads as fields "0", "1" there.
def conv(x):
    if isinstance(x, (dict, tuple)):
        items = x.items() if isinstance(x, dict) else enumerate(x)
        return {str(k): conv(v) for k, v in items}
    if isinstance(x, list):
        return [conv(v) for v in x]
    return x
failures = []
names = sorted(p.name[:-len(".parquet")] for p in base.glob("*.parquet") if not p.name.endswith(".rs.parquet"))
for name in names:
    orig = ak.from_parquet(base / f"{name}.parquet")
    ours = base / f"{name}.rs.parquet"
    try:
        back = ak.from_parquet(ours)
    except Exception as e:
        failures.append([name, "ak.from_parquet: %r" % e]); continue
    # Values, tuples, parameters and option types as awkward reads its own file.
    if back.to_list() != orig.to_list():
        failures.append([name, "ak: %r != %r" % (back.to_list(), orig.to_list())])
    if str(back.type) != str(orig.type):
        failures.append([name, "ak type: %s != %s" % (back.type, orig.type)])
    elif not ak.array_equal(back, orig, check_parameters=True):
        failures.append([name, "ak.array_equal with parameters"])
    table = pq.read_table(ours)
    if table.num_rows != len(orig):
        failures.append([name, "pyarrow rows %d != %d" % (table.num_rows, len(orig))])
    via_arrow = ak.from_arrow(table)
    if table.column_names == [""] and "" in ak.fields(via_arrow):
        via_arrow = via_arrow[""]
    if conv(via_arrow.to_list()) != conv(orig.to_list()):
        failures.append([name, "pyarrow: %r" % via_arrow.to_list()])
print(json.dumps({"checked": len(names), "failures": failures}))
"#;

#[test]
fn parquet_both_ways_with_awkward_and_pyarrow() {
    let py = asdf_testkit::require_awkward2_python!();
    let tmp = asdf_testkit::TempDir::new("awk-parquet");
    let dir = tmp.path().to_str().unwrap().to_string();
    let out = asdf_testkit::run_python(
        &py,
        &format!("{}{}{WRITE}", common::CONV, common::PARAMS),
        &[&dir],
    );
    let report: Json = serde_json::from_slice(&out).unwrap();
    let expected = report["lists"].as_object().unwrap();
    assert!(expected.len() >= 20);
    for (name, list) in expected {
        let l = read_parquet(tmp.join(&format!("{name}.parquet")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            &l.to_json().unwrap(),
            list,
            "{name}: awkward's Parquet read here"
        );
        // The parameters awkward's metadata carries come through (as awkward reads them).
        let form = asdf_awkward::to_awkward2(&l).unwrap().form;
        let mut have = Vec::new();
        common::form_parameters(&form, &mut have);
        have.sort();
        assert_eq!(
            Json::from(have),
            report["params"][name],
            "{name}: parameters"
        );
        write_parquet(&l, tmp.join(&format!("{name}.rs.parquet")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let again = read_parquet(tmp.join(&format!("{name}.rs.parquet"))).unwrap();
        assert_eq!(
            &again.to_json().unwrap(),
            list,
            "{name}: our Parquet read here"
        );
    }
    let report: Json =
        serde_json::from_slice(&asdf_testkit::run_python(&py, VERIFY, &[&dir])).unwrap();
    assert_eq!(report["checked"].as_u64(), Some(expected.len() as u64));
    assert_eq!(report["failures"], Json::Array(vec![]), "{report}");
}

#[test]
fn not_parquet_is_an_error() {
    let tmp = asdf_testkit::TempDir::new("awk-parquet-bad");
    let p = tmp.join("bad.parquet");
    std::fs::write(&p, b"PAR1 this is not a parquet file PAR1").unwrap();
    let e = read_parquet(&p).unwrap_err();
    assert!(e.to_string().contains("Parquet"), "{e}");
    let e = read_parquet(tmp.join("missing.parquet")).unwrap_err();
    assert!(e.to_string().contains("missing.parquet"), "{e}");
}

/// A file of many row groups (read in parallel, one batch each) reads as one array in order,
/// as does an empty one.
#[test]
fn row_groups_read_in_order() {
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    let tmp = asdf_testkit::TempDir::new("awk-parquet-groups");
    let rows: Vec<Json> = (0..23)
        .map(
            |i| serde_json::json!({"x": i, "v": vec![i as f64 * 0.5; i % 4], "s": format!("r{i}")}),
        )
        .collect();
    for (name, rows) in [("many", &rows[..]), ("empty", &rows[..0])] {
        let layout = asdf_awkward::Layout::from_json(&Json::Array(rows.to_vec())).unwrap();
        let batch = asdf_awkward::arrow::to_record_batch(&layout).unwrap();
        let p = tmp.join(&format!("{name}.parquet"));
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(5))
            .build();
        let mut w = ArrowWriter::try_new(
            std::fs::File::create(&p).unwrap(),
            batch.schema(),
            Some(props),
        )
        .unwrap();
        w.write(&batch).unwrap();
        let meta = w.close().unwrap();
        if name == "many" {
            assert_eq!(meta.num_row_groups(), 5);
        }
        let back = read_parquet(&p).unwrap();
        assert_eq!(
            back.to_json().unwrap(),
            Json::Array(rows.to_vec()),
            "{name}"
        );
    }
}

/// A layout of several row groups is written with its column chunks encoded in parallel and
/// appended in order: on one thread (two windows of row groups) and on the pool, the file has
/// the row groups pyarrow would cut and reads back equal, as does an empty layout.
#[test]
fn row_groups_write_in_order_from_parallel_encoders() {
    use asdf_awkward::parquet_io::summarize_parquet;
    use asdf_awkward::{Buffer, JaggedArray, Layout, ListIndex, NumpyArray};
    use std::sync::Arc;
    let tmp = asdf_testkit::TempDir::new("awk-parquet-write-groups");
    let lists: i64 = (5 << 20) / 2; // 2.5 Mi rows: row groups of 1 Mi, 1 Mi and 0.5 Mi
    let counts: Vec<i64> = (0..lists).map(|i| i % 3).collect();
    let total: i64 = counts.iter().sum();
    let jagged = |counts: &[i64], total: i64| {
        Layout::Jagged(JaggedArray {
            index: ListIndex::from_counts(counts).unwrap(),
            content: Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::F64(
                (0..total).map(|i| i as f64 * 0.25).collect(),
            )))),
        })
    };
    let layout = jagged(&counts, total);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for (name, pool) in [("one_thread", Some(&one)), ("pool", None)] {
        let p = tmp.join(&format!("{name}.parquet"));
        match pool {
            Some(pool) => pool.install(|| write_parquet(&layout, &p)).unwrap(),
            None => write_parquet(&layout, &p).unwrap(),
        }
        let s = summarize_parquet(&p).unwrap();
        assert_eq!((s.rows, s.row_groups), (lists as u64, 3), "{name}");
        assert!(
            read_parquet(&p).unwrap() == layout,
            "{name}: the data changed"
        );
    }
    let empty = jagged(&[], 0);
    let p = tmp.join("empty.parquet");
    write_parquet(&empty, &p).unwrap();
    assert_eq!(summarize_parquet(&p).unwrap().rows, 0);
    assert_eq!(
        read_parquet(&p).unwrap().to_json().unwrap(),
        Json::Array(vec![])
    );
}

/// Parquet and Arrow IPC saves that do not wait for the disk read back equal, new and replaced.
#[test]
fn unsynced_parquet_and_ipc_saves_read_back() {
    use asdf_awkward::arrow::{read_ipc_stream, write_ipc_stream_with};
    use asdf_awkward::parquet_io::write_parquet_with;
    use asdf_awkward::{Durability, Layout};
    let tmp = asdf_testkit::TempDir::new("awk-parquet-unsynced");
    let (pq, ipc) = (tmp.join("a.parquet"), tmp.join("a.arrows"));
    for n in [2usize, 4000] {
        let json: Vec<Json> = (0..n)
            .map(|i| serde_json::json!({"pt": vec![i as f64; i % 4], "q": format!("q{i}")}))
            .collect();
        let layout = Layout::from_json(&Json::Array(json)).unwrap();
        write_parquet_with(&layout, &pq, Durability::Relaxed).unwrap();
        write_ipc_stream_with(&layout, &ipc, Durability::Relaxed).unwrap();
        let want = layout.to_json().unwrap();
        assert_eq!(read_parquet(&pq).unwrap().to_json().unwrap(), want);
        assert_eq!(read_ipc_stream(&ipc).unwrap().to_json().unwrap(), want);
    }
}

/// awkward's metadata in a file is checked against the data it describes: text that is not
/// JSON, values of the wrong kind, children that do not match the Arrow type and JSON nested
/// past the parser's limit are errors naming the metadata, never a panic or a wrong array.
#[test]
fn awkward_metadata_that_disagrees_is_an_error() {
    use parquet::arrow::ArrowWriter;
    let tmp = asdf_testkit::TempDir::new("awk-parquet-meta");
    let layout = asdf_awkward::Layout::from_json(&serde_json::json!([[1, 2], [], [3]])).unwrap();
    let batch = asdf_awkward::arrow::to_record_batch(&layout).unwrap();
    let node = |kids: &str| {
        format!(r#"{{"": {{"node_type": "ListOffsetArray", "subfield_metadata": [{kids}]}}}}"#)
    };
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let cases = [
        ("not_json", "{".to_string(), "not JSON"),
        ("not_object", "[1]".to_string(), "not an object"),
        (
            "wrong_kind",
            r#"{"": {"node_type": 7}}"#.to_string(),
            "not a string",
        ),
        ("two_children", node("{}, {}"), "2 children recorded"),
        ("deep", format!(r#"{{"": {deep}}}"#), "not JSON"),
    ];
    for (name, text, want) in cases {
        let metadata = [("awkward_array_metadata".to_string(), text)].into();
        let schema = batch.schema().as_ref().clone().with_metadata(metadata);
        let bad =
            arrow_array::RecordBatch::try_new(schema.into(), batch.columns().to_vec()).unwrap();
        let p = tmp.join(&format!("{name}.parquet"));
        let mut w =
            ArrowWriter::try_new(std::fs::File::create(&p).unwrap(), bad.schema(), None).unwrap();
        w.write(&bad).unwrap();
        w.close().unwrap();
        let e = read_parquet(&p).unwrap_err().to_string();
        assert!(
            e.contains("awkward metadata") && e.contains(want),
            "{name}: {e}"
        );
    }
}
