//! Awkward arrays inside ASDF files: every corpus member round-trips through an ASDF file, and
//! Python reads the same file (asdf for the blocks, awkward0 for the array) to the same values.
#![cfg(feature = "asdf")]

use crate::common;

use asdf::yaml::Node;
use asdf::{AsdfFile, AsdfWriter, StoreOptions};
use asdf_awkward::{from_asdf, to_asdf, AwkdFile, ReadOptions, AWKWARD0_TAG};
use serde_json::Value as Json;

/// Every member of every corpus `.awkd` file, with its values.
fn corpus() -> Vec<(String, asdf_awkward::Layout, Json)> {
    let dir = asdf_testkit::corpus_file("awkward0");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "awkd"))
        .collect();
    files.sort();
    for path in files {
        let f = AwkdFile::open(&path).unwrap();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        for member in f.array_names() {
            let opts = ReadOptions {
                decode_pickled_scalars: true,
                ..ReadOptions::default()
            };
            let l = asdf_awkward::read_array(&f, &member, &opts).unwrap();
            let j = l.to_json().unwrap();
            let key = if member.is_empty() {
                stem.clone()
            } else {
                format!("{stem}.{member}")
            };
            out.push((key, l, j));
        }
    }
    assert!(out.len() >= 10, "only {} corpus members", out.len());
    out
}

#[test]
fn corpus_round_trips_through_asdf_and_python_agrees() {
    let dir = asdf_testkit::TempDir::new("awk-asdf");
    let path = dir.join("awkward.asdf");
    let members = corpus();
    let mut w = AsdfWriter::new();
    let codecs = ["zlib", "zstd", "lz4", "none", "bzp2"];
    let mut tree = Vec::new();
    for (i, (key, layout, _)) in members.iter().enumerate() {
        let store = StoreOptions::compressed(codecs[i % codecs.len()]).unwrap();
        tree.push((key.clone(), to_asdf(layout, &mut w, &store).unwrap()));
    }
    w.write_path(&path, Node::mapping(tree), &Default::default())
        .unwrap();

    let f = AsdfFile::open(&path).unwrap();
    for (key, _, values) in &members {
        let ptr = format!("/{key}");
        assert_eq!(f.pointer(&ptr).unwrap().tag(), Some(AWKWARD0_TAG));
        let back = from_asdf(
            &f,
            &ptr,
            &ReadOptions {
                decode_pickled_scalars: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(&back.to_json().unwrap(), values, "{key}");
    }
    assert!(from_asdf(&f, "/nope", &ReadOptions::default()).is_err());
    assert!(from_asdf(&f, "/asdf_library", &ReadOptions::default()).is_err());

    let py = asdf_testkit::require_python!();
    let script = r#"
import sys, json, warnings, asdf, numpy as np, awkward0
def plain(x):
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [plain(v) for v in x]
    return x
out = {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # our tag is unknown to Python asdf: kept raw, as it should be
    with asdf.open(sys.argv[1], validate_checksums=True) as af:
        for key, node in af.tree.items():
            if key in ("asdf_library", "history"):
                continue
            storage = {name: np.asarray(arr).tobytes() for name, arr in node["blobs"].items()}
            storage["__schema__"] = json.dumps(plain(node["schema"]))
            out[key] = conv(awkward0.persist.deserialize(storage, "__schema__").tolist())
print(json.dumps(out))
"#;
    let script = format!("{}{script}", common::CONV);
    let stdout = asdf_testkit::run_python(&py, &script, &[path.to_str().unwrap()]);
    let py_values: serde_json::Map<String, Json> = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(py_values.len(), members.len());
    for (key, _, values) in &members {
        assert_eq!(&py_values[key], values, "{key}: awkward0 disagrees");
    }
}
