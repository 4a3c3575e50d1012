//! awkward 2 through the tool: arrays stored in ASDF files (`asdf_awkward::to_asdf_awkward2`)
//! convert to `.awkd` like awkward0 ones, and `convert`, `info`, `verify`, `diff` and
//! `awkward to-json` work on awkward 2 buffers (`.npz`, directories) and Parquet, against
//! awkward 2 itself.

use asdftool::convert::{convert, ConvertOptions};

#[test]
fn an_awkward2_node_converts_to_awkd() {
    let tmp = asdf_testkit::TempDir::new("asdftool-awk2");
    let src = tmp.join("events.asdf");
    let out = tmp.join("events.awkd");
    let values = serde_json::json!([{"pt": [31.5, 12.25], "q": "mu"}, null, {"pt": [], "q": "e"}]);
    let layout = asdf_awkward::Layout::from_json(&values).unwrap();
    let mut w = asdf::AsdfWriter::new();
    let node =
        asdf_awkward::to_asdf_awkward2(&layout, &mut w, &asdf::StoreOptions::default()).unwrap();
    w.write_path(
        &src,
        asdf::yaml::Node::mapping([("events", node)]),
        &Default::default(),
    )
    .unwrap();
    let opts = ConvertOptions {
        pointer: Some("/events".into()),
        name: Some("events".into()),
        ..ConvertOptions::default()
    };
    convert(&src, &out, &opts).unwrap();
    let (_, back) = asdftool::awk::read_named(&out, Some("events")).unwrap();
    assert_eq!(back.to_json().unwrap(), values);
}

/// A record array with every shape the awkward formats must carry: jagged numbers, optional
/// strings, integers, and a missing record.
fn events() -> serde_json::Value {
    serde_json::json!([
        {"pt": [31.5, 12.25], "q": "mu", "n": 2},
        null,
        {"pt": [], "q": null, "n": 0},
        {"pt": [7.0], "q": "h\u{e9}llo", "n": 1},
    ])
}

/// `convert` between every pair of neighbours in a chain through each awkward container and
/// ASDF: the values survive every step, and ASDF from awkward 2 input holds an awkward 2 node.
#[test]
fn awkward_formats_convert_into_each_other() {
    let tmp = asdf_testkit::TempDir::new("asdftool-awk-chain");
    let values = events();
    let layout = asdf_awkward::Layout::from_json(&values).unwrap();
    asdftool::awk::write(&tmp.join("a.awkd"), "events", &layout).unwrap();
    let chain = [
        "a.awkd",
        "b.npz",
        "c_buffers",
        "d.parquet",
        "e.asdf",
        "f.awkd",
        "g.parquet",
        "h_buffers",
        "i.npz",
        "j.asdf",
    ];
    for pair in chain.windows(2) {
        let (src, dst) = (tmp.join(pair[0]), tmp.join(pair[1]));
        let said = convert(&src, &dst, &ConvertOptions::default())
            .unwrap_or_else(|e| panic!("{} -> {}: {e}", pair[0], pair[1]));
        assert!(said.contains(pair[1]), "{said}");
        let back = asdftool::awk::to_json(&dst, None)
            .unwrap_or_else(|e| panic!("{} -> {}: {e}", pair[0], pair[1]));
        assert_eq!(back, values, "{} -> {}", pair[0], pair[1]);
    }
    // ASDF written from Parquet keeps awkward 2's form; from .awkd, awkward0's schema unless
    // --awkward2 asks.
    let tag = |name: &str| {
        let f = asdf::AsdfFile::open(tmp.join(name)).unwrap();
        f.pointer("/data").unwrap().tag().map(str::to_string)
    };
    assert_eq!(tag("e.asdf").as_deref(), Some(asdf_awkward::AWKWARD2_TAG));
    assert_eq!(tag("j.asdf").as_deref(), Some(asdf_awkward::AWKWARD2_TAG));
    convert(
        &tmp.join("a.awkd"),
        &tmp.join("k.asdf"),
        &ConvertOptions::default(),
    )
    .unwrap();
    assert_eq!(tag("k.asdf").as_deref(), Some(asdf_awkward::AWKWARD0_TAG));
    let opts = ConvertOptions {
        awkward2: true,
        ..ConvertOptions::default()
    };
    convert(&tmp.join("a.awkd"), &tmp.join("l.asdf"), &opts).unwrap();
    assert_eq!(tag("l.asdf").as_deref(), Some(asdf_awkward::AWKWARD2_TAG));
    // A rectangular ASDF array becomes a flat awkward array, and back.
    let mut w = asdf::AsdfWriter::new();
    let node = w
        .add(&ndarray::array![1.5f64, 2.5, -3.0], &Default::default())
        .unwrap();
    w.write_path(
        tmp.join("plain.asdf"),
        asdf::yaml::Node::mapping([("data", node)]),
        &Default::default(),
    )
    .unwrap();
    convert(
        &tmp.join("plain.asdf"),
        &tmp.join("plain.parquet"),
        &ConvertOptions::default(),
    )
    .unwrap();
    assert_eq!(
        asdftool::awk::to_json(&tmp.join("plain.parquet"), None).unwrap(),
        serde_json::json!([1.5, 2.5, -3.0])
    );
    // A masked 1-D array becomes an option type, its masked values missing.
    let mut w = asdf::AsdfWriter::new();
    let node = w
        .arrays_mut()
        .add_masked(
            &ndarray::array![1i32, 2, 3],
            &ndarray::array![false, true, false],
            &Default::default(),
        )
        .unwrap();
    w.write_path(
        tmp.join("masked.asdf"),
        asdf::yaml::Node::mapping([("data", node)]),
        &Default::default(),
    )
    .unwrap();
    let said = convert(
        &tmp.join("masked.asdf"),
        &tmp.join("masked.parquet"),
        &ConvertOptions::default(),
    )
    .unwrap();
    assert!(said.contains("masked values missing"), "{said}");
    assert_eq!(
        asdftool::awk::to_json(&tmp.join("masked.parquet"), None).unwrap(),
        serde_json::json!([1, null, 3])
    );
}

/// `info`, `verify`, `diff` and `awkward to-json` read awkward 2 buffers and Parquet, and bad
/// ones are clear errors; a directory holding other files is never written into.
#[test]
fn awkward_verbs_on_buffers_and_parquet() {
    use crate::common::{expect, p, run, stderr, stdout};
    let tmp = asdf_testkit::TempDir::new("asdftool-awk-verbs");
    let values = events();
    let layout = asdf_awkward::Layout::from_json(&values).unwrap();
    asdftool::awk::write(&tmp.join("a.awkd"), "data", &layout).unwrap();
    let (npz, dir, pq) = (tmp.join("b.npz"), tmp.join("b"), tmp.join("b.parquet"));
    for out in [&npz, &dir, &pq] {
        expect(&run(&["convert", p(&tmp.join("a.awkd")), p(out)]), 0);
        let o = run(&["info", p(out)]);
        expect(&o, 0);
        assert!(stdout(&o).contains("of length 4"), "{}", stdout(&o));
        expect(&run(&["verify", p(out)]), 0);
        let o = run(&["awkward", "to-json", p(out)]);
        expect(&o, 0);
        let back: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(back, values);
        expect(&run(&["diff", p(&tmp.join("a.awkd")), p(out)]), 0);
    }
    // Parquet's info comes from its footer: columns, types, row groups, codecs.
    let o = run(&["info", "--json", p(&pq)]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (j["format"].as_str(), j["length"].as_u64()),
        (Some("parquet"), Some(4))
    );
    // Optional records (a missing row) are one column, as `ak.to_parquet` writes them.
    let columns = j["columns"].as_array().unwrap();
    assert_eq!(columns.len(), 1);
    assert_eq!(columns[0]["name"], "");
    assert!(
        columns[0]["type"].as_str().unwrap().starts_with("Struct"),
        "{j}"
    );
    assert_eq!(j["row_groups"], 1);
    assert_eq!(j["codecs"], serde_json::json!(["ZSTD"]));
    assert_eq!(j["awkward_metadata"], true);
    let text = stdout(&run(&["info", p(&pq)]));
    assert!(
        text.contains("array of length 4") && text.contains("(the array): Struct"),
        "{text}"
    );
    // Different values differ.
    let other = tmp.join("other.parquet");
    let fewer = asdf_awkward::Layout::from_json(&serde_json::json!([{"pt": [], "q": "x", "n": 1}]));
    asdf_awkward::parquet_io::write_parquet(&fewer.unwrap(), &other).unwrap();
    expect(&run(&["diff", p(&pq), p(&other)]), 1);

    // A truncated Parquet file, an .npz without a form, a directory without awkward.json.
    let bytes = std::fs::read(&pq).unwrap();
    let cut = tmp.join("cut.parquet");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let o = run(&["info", p(&cut)]);
    expect(&o, 1);
    assert!(stderr(&o).contains("cut.parquet"), "{}", stderr(&o));
    let not_buffers = tmp.join("not_buffers.npz");
    std::fs::copy(tmp.join("a.awkd"), &not_buffers).unwrap();
    let o = run(&["awkward", "to-json", p(&not_buffers)]);
    expect(&o, 1);
    assert!(stderr(&o).contains("form.npy"), "{}", stderr(&o));
    let plain_dir = tmp.join("plain");
    std::fs::create_dir(&plain_dir).unwrap();
    std::fs::write(plain_dir.join("notes.txt"), "keep me").unwrap();
    let o = run(&["info", p(&plain_dir)]);
    expect(&o, 1);
    assert!(stderr(&o).contains("awkward.json"), "{}", stderr(&o));
    // Converting into it is refused and leaves it as it was.
    let o = run(&["convert", p(&tmp.join("a.awkd")), p(&plain_dir)]);
    expect(&o, 2);
    assert!(
        stderr(&o).contains("new or empty directory"),
        "{}",
        stderr(&o)
    );
    let left: Vec<_> = std::fs::read_dir(&plain_dir).unwrap().collect();
    assert_eq!(left.len(), 1);
    assert_eq!(
        std::fs::read_to_string(plain_dir.join("notes.txt")).unwrap(),
        "keep me"
    );
    // An existing buffers directory is replaced.
    expect(&run(&["convert", p(&other), p(&dir)]), 0);
    expect(&run(&["diff", p(&dir), p(&other)]), 0);
}

/// Writes awkward 2's own files (`ak.to_parquet`, `ak.to_buffers` into `np.savez`) with
/// `write`, or reads ours with `ak.from_parquet` / `ak.from_buffers` with `read`; prints JSON.
const PEER: &str = r#"
import sys, json, pathlib
import numpy as np, awkward as ak
base, mode = pathlib.Path(sys.argv[1]), sys.argv[2]
if mode == "write":
    arr = ak.Array(json.loads(sys.argv[3]))
    ak.to_parquet(arr, base / "py.parquet")
    form, length, buffers = ak.to_buffers(arr)
    np.savez(base / "py.npz", form=form.to_json(), length=length, **buffers)
    print(json.dumps(arr.to_list()))
else:
    got = {"parquet": ak.from_parquet(base / "rs.parquet").to_list()}
    f = np.load(base / "rs.npz")
    got["npz"] = ak.from_buffers(str(f["form"]), int(f["length"]), {k: f[k] for k in f.files}).to_list()
    d = base / "rs_buffers"
    meta = json.loads((d / "awkward.json").read_text())
    buffers = {q.name: q.read_bytes() for q in d.iterdir() if q.name != "awkward.json"}
    got["dir"] = ak.from_buffers(meta["form"], meta["length"], buffers).to_list()
    print(json.dumps(got))
"#;

/// `convert` both ways against awkward 2: its Parquet and buffers become every container here,
/// and what `convert` writes is read by `ak.from_parquet` and `ak.from_buffers` to the same values.
#[test]
fn awkward2_peer_reads_what_convert_writes() {
    let python = asdf_testkit::require_awkward2_python!();
    let tmp = asdf_testkit::TempDir::new("asdftool-awk-peer");
    let base = tmp.path().to_str().unwrap();
    // awkward 2 has no missing top-level record in Parquet without its own metadata, so the
    // peer's values have none.
    let mut values = events();
    values.as_array_mut().unwrap().retain(|v| !v.is_null());
    let text = values.to_string();
    let out = asdf_testkit::run_python(&python, PEER, &[base, "write", &text]);
    let written: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(written, values);
    let steps = [
        ("py.parquet", "a.awkd"),
        ("py.npz", "b_buffers"),
        ("a.awkd", "rs.parquet"),
        ("b_buffers", "rs.npz"),
        ("py.parquet", "rs_buffers"),
    ];
    for (src, dst) in steps {
        convert(&tmp.join(src), &tmp.join(dst), &ConvertOptions::default())
            .unwrap_or_else(|e| panic!("{src} -> {dst}: {e}"));
        let back = asdftool::awk::to_json(&tmp.join(dst), None).unwrap();
        assert_eq!(back, values, "{src} -> {dst}");
    }
    let out = asdf_testkit::run_python(&python, PEER, &[base, "read"]);
    let got: serde_json::Value = serde_json::from_slice(&out).unwrap();
    for (container, read) in got.as_object().unwrap() {
        assert_eq!(read, &values, "awkward 2 reading our {container}");
    }
}
