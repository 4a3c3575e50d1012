//! Parquet both ways against awkward 2 + pyarrow: `ak.to_parquet` writes, we read and compare
//! with `ak.to_list`; we write, `ak.from_parquet` and `pyarrow.parquet.read_table` read and
//! compare with the original.
#![cfg(feature = "parquet")]

use crate::common;

use asdf_awkward::parquet_io::{read_parquet, write_parquet};
use serde_json::Value as Json;

/// Writes `<name>.parquet` with `ak.to_parquet` for each array; prints `{name: to_list}`.
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
    # A missing record inside a list (a missing top-level row exists only in awkward's own
    # metadata, which this crate does not read).
    "list_of_record_option": ak.Array([[{"a": 1, "b": [1.5]}, None], [], [{"a": 3, "b": []}]]),
    "nested_records": ak.Array([{"p": {"q": [1, 2]}}, {"p": {"q": []}}]),
    "list_of_records": ak.Array([[{"x": 1.5}, {"x": 2.5}], []]),
    "regular": ak.to_regular(ak.Array([[1, 2], [3, 4], [5, 6]]), axis=1),
    "bools": ak.Array([[True, False], [True]]),
    "int32": ak.values_astype(ak.Array([[1, 2], [3]]), np.int32),
    "uint8": ak.values_astype(ak.Array([0, 255]), np.uint8),
    "float32": ak.values_astype(ak.Array([0.5, -1.5]), np.float32),
    "tuples": ak.Array([(1, "a"), (2, "b")]),
    "events": ak.zip({"pt": ak.Array([[30.5, 12.25], [], [5.0]]), "eta": ak.Array([[0.1, -1.2], [], [2.0]])}),
}
out = {}
for name, a in arrays.items():
    ak.to_parquet(a, base / f"{name}.parquet")
    out[name] = conv(a.to_list())
print(json.dumps(out))
"#;

/// Reads our `<name>.rs.parquet` files back with awkward and pyarrow and compares with the
/// originals; prints `{"checked": n, "failures": [...]}`.
const VERIFY: &str = r#"
import sys, json, pathlib
import numpy as np, awkward as ak, pyarrow.parquet as pq
base = pathlib.Path(sys.argv[1])
# Tuple-ness lives only in awkward's own Parquet metadata: a tuple reads as fields "0", "1".
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
    if conv(back.to_list()) != conv(orig.to_list()):
        failures.append([name, "ak: %r != %r" % (back.to_list(), orig.to_list())])
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
    let out = asdf_testkit::run_python(&py, &format!("{}{WRITE}", common::CONV), &[&dir]);
    let expected: Json = serde_json::from_slice(&out).unwrap();
    let expected = expected.as_object().unwrap();
    assert!(expected.len() >= 15);
    for (name, list) in expected {
        let l = read_parquet(tmp.join(&format!("{name}.parquet")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            &l.to_json().unwrap(),
            list,
            "{name}: awkward's Parquet read here"
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
