//! Opening and writing back: nothing lost (tags, anchors, key order, nulls, `//` comments,
//! streams, legacy checksums), edits and added arrays applied, update in place read by Python.

use crate::common;

use asdf::yaml::{Node, Value};
use asdf::{AsdfFile, OpenOptions, StoreOptions, TaggedType, WriteOptions};
use asdf_testkit::{require_python, run_python, TempDir};

fn same_version(f: &AsdfFile<impl AsRef<[u8]>>) -> WriteOptions {
    WriteOptions {
        standard_version: f.standard_version().to_string(),
        ..Default::default()
    }
}

#[test]
fn every_reference_file_survives_a_round_trip() {
    let root = asdf_testkit::corpus_file("asdf-standard/reference_files");
    let mut n = 0;
    for v in std::fs::read_dir(&root).unwrap() {
        let dir = v.unwrap().path();
        for e in std::fs::read_dir(&dir).into_iter().flatten() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "asdf")
                || path.file_name().unwrap() == "exploded.asdf"
            {
                continue;
            }
            let f = AsdfFile::open(&path).unwrap();
            let bytes = f.save_to(Vec::new(), &same_version(&f)).unwrap();
            let g = AsdfFile::from_bytes(bytes, &OpenOptions::default()).unwrap();
            assert_eq!(g.standard_version(), f.standard_version());
            assert_eq!(g.tree().tag(), f.tree().tag(), "{}", path.display());
            assert_eq!(
                common::without_metadata(g.tree()),
                common::without_metadata(f.tree()),
                "{}",
                path.display()
            );
            // The history Python wrote is kept (our core extension is not added twice).
            if let Some(h) = f.pointer("/history/extensions") {
                let ours = g.pointer("/history/extensions").unwrap();
                assert!(ours.len() >= h.len());
                assert_eq!(&ours.as_seq().unwrap()[..h.len()], h.as_seq().unwrap());
            }
            for (ptr, _) in f.arrays() {
                assert!(
                    f.read(&ptr)
                        .unwrap()
                        .equals_nan_aware(&g.read(&ptr).unwrap()),
                    "{} {ptr}",
                    path.display()
                );
            }
            // Blocks are copied as stored, with standard checksums now (legacy ones verified first).
            for b in g.blocks().blocks() {
                let status = g
                    .blocks()
                    .verify(b.index as i64, asdf::block::ChecksumPolicy::Strict)
                    .unwrap();
                assert!(matches!(
                    status,
                    asdf::block::ChecksumStatus::Stored | asdf::block::ChecksumStatus::Absent
                ));
            }
            n += 1;
        }
    }
    assert_eq!(n, 7 * 15);
}

#[test]
fn anchors_nulls_comment_keys_and_unknown_tags_are_kept() {
    let text = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
        //: a human comment\nz_first: null\nshared: &x {a: 1}\nalias: *x\n\
        odd: !<tag:example.org:thing-2.0.0> {keep: [1, 2]}\nstr: !<tag:example.org:word-1.0.0> hello\n...\n";
    let f = AsdfFile::from_bytes(text.to_vec(), &OpenOptions::default()).unwrap();
    assert_eq!(f.warnings().len(), 2, "{:?}", f.warnings());
    assert!(
        f.warnings()[0].contains("tag:example.org:thing-2.0.0") && f.warnings()[0].contains("/odd")
    );
    let quiet = OpenOptions {
        ignore_unrecognized_tags: true,
        ..Default::default()
    };
    assert!(AsdfFile::from_bytes(text.to_vec(), &quiet)
        .unwrap()
        .warnings()
        .is_empty());
    let mut known = asdf::Extensions::new();
    known
        .register_tag("tag:example.org:thing-2.0.0")
        .register_tag("tag:example.org:word-1.0.0");
    let opts = OpenOptions {
        extensions: known.shared(),
        ..Default::default()
    };
    assert!(AsdfFile::from_bytes(text.to_vec(), &opts)
        .unwrap()
        .warnings()
        .is_empty());

    let again = AsdfFile::from_bytes(
        f.save_to(Vec::new(), &WriteOptions::default()).unwrap(),
        &quiet,
    )
    .unwrap();
    assert_eq!(
        common::without_metadata(again.tree()),
        common::without_metadata(f.tree())
    );
    let keys: Vec<_> = again
        .tree()
        .as_map()
        .unwrap()
        .keys()
        .filter_map(|k| k.as_str().map(str::to_string))
        .collect();
    assert_eq!(
        keys,
        [
            "asdf_library",
            "history",
            "//",
            "z_first",
            "shared",
            "alias",
            "odd",
            "str"
        ]
    );
    assert!(again.tree().get("alias").unwrap().is_shared());
    assert!(matches!(
        again.tree().get("z_first").unwrap().value(),
        Value::Null
    ));
    assert_eq!(
        again.tree().get("str").unwrap().tag(),
        Some("tag:example.org:word-1.0.0")
    );
}

#[test]
fn streamed_block_stays_last_and_streamed() {
    let path = asdf_testkit::corpus_file("asdf-standard/reference_files/1.6.0/stream.asdf");
    let f = AsdfFile::open(&path).unwrap();
    let mut f2 =
        AsdfFile::from_bytes(std::fs::read(&path).unwrap(), &OpenOptions::default()).unwrap();
    let extra = f2
        .add_array(&ndarray::arr1(&[1u8, 2, 3]), &StoreOptions::default())
        .unwrap();
    f2.tree_mut().as_map_mut().unwrap().insert("extra", extra);
    let g = AsdfFile::from_bytes(
        f2.save_to(Vec::new(), &same_version(&f)).unwrap(),
        &OpenOptions::default(),
    )
    .unwrap();
    assert_eq!(g.blocks().len(), 2);
    assert!(g.blocks().blocks()[1].header.is_streamed());
    assert_eq!(
        g.pointer("/my_stream/source").and_then(Node::as_i64),
        Some(-1)
    );
    assert!(g
        .read("/my_stream")
        .unwrap()
        .equals_nan_aware(&f.read("/my_stream").unwrap()));
    assert_eq!(
        g.array::<u8>("/extra").unwrap().as_slice().unwrap(),
        &[1, 2, 3]
    );
}

#[test]
fn update_in_place_then_python_reads_it() {
    let py = require_python!();
    let dir = TempDir::new("asdf-update");
    let path = dir.join("edit.asdf");
    let script = r#"
import sys, asdf, numpy as np
af = asdf.AsdfFile({"keep": np.arange(10.0), "drop": np.ones((100, 100)), "meta": {"n": 1}})
af.set_array_compression(af["keep"], "zlib")
af.write_to(sys.argv[1])
"#;
    run_python(&py, script, &[path.to_str().unwrap()]);
    let mut f = AsdfFile::open(&path).unwrap();
    assert_eq!(f.blocks().len(), 2);
    let added = f
        .add_array(
            &ndarray::Array2::<i32>::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as i32),
            &StoreOptions::compressed("lz4").unwrap(),
        )
        .unwrap();
    {
        let root = f.tree_mut().as_map_mut().unwrap();
        root.remove("drop");
        root.insert("added", added);
        root.insert("note", Node::from("edited in Rust"));
    }
    let f = f.update(&WriteOptions::default()).unwrap();
    assert_eq!(f.blocks().len(), 2, "the dropped array's block must go");
    assert_eq!(f.array::<f64>("/keep").unwrap().len(), 10);
    assert_eq!(
        f.blocks().blocks()[0].header.compression.to_string(),
        "zlib"
    );
    let check = r#"
import sys, asdf, numpy as np
with asdf.open(sys.argv[1], validate_checksums=True) as af:
    assert "drop" not in af.tree
    assert np.array_equal(af["keep"], np.arange(10.0))
    assert np.array_equal(af["added"], np.arange(12, dtype=np.int32).reshape(3, 4))
    assert af["note"] == "edited in Rust" and af["meta"]["n"] == 1
    print("ok")
"#;
    assert_eq!(
        String::from_utf8(run_python(&py, check, &[path.to_str().unwrap()]))
            .unwrap()
            .trim(),
        "ok"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn from_reader_reads_any_stream() {
    let bytes = std::fs::read(asdf_testkit::corpus_file(
        "asdf-standard/reference_files/1.6.0/compressed.asdf",
    ))
    .unwrap();
    let f = AsdfFile::from_reader(std::io::Cursor::new(bytes), &OpenOptions::default()).unwrap();
    assert_eq!(
        f.array::<i64>("/zlib").unwrap().sum(),
        (0..128).sum::<i64>()
    );
}

#[derive(Debug, PartialEq)]
struct Unit(String);

impl TaggedType for Unit {
    const TAG: &'static str = "asdf://example.org/tags/unit-1.2.0";
    fn to_node(&self) -> asdf::Result<Node> {
        Ok(Node::from(self.0.as_str()))
    }
    fn from_node(node: &Node) -> asdf::Result<Self> {
        node.as_str()
            .map(|s| Unit(s.to_string()))
            .ok_or_else(|| asdf::AsdfError::InvalidTree("unit must be a string".into()))
    }
}

#[test]
fn tagged_types_follow_the_version_rules() {
    let text = b"#ASDF 1.0.0\n%YAML 1.1\n---\nexact: !<asdf://example.org/tags/unit-1.2.0> m\n\
        older: !<asdf://example.org/tags/unit-1.0.0> s\nbroken: !<asdf://example.org/tags/unit-1.0.0> {a: 1}\n\
        other: !<asdf://example.org/tags/mass-1.2.0> kg\nplain: m\n...\n";
    let f = AsdfFile::from_bytes(
        text.to_vec(),
        &OpenOptions {
            ignore_unrecognized_tags: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(f.value::<Unit>("/exact").unwrap(), Unit("m".into()));
    assert_eq!(f.value::<Unit>("/older").unwrap(), Unit("s".into()));
    assert!(f
        .value::<Unit>("/broken")
        .unwrap_err()
        .to_string()
        .contains("unit-1.0.0"));
    assert!(f
        .value::<Unit>("/other")
        .unwrap_err()
        .to_string()
        .contains("mass-1.2.0"));
    assert!(f
        .value::<Unit>("/plain")
        .unwrap_err()
        .to_string()
        .contains("no tag"));
    assert_eq!(
        asdf::split_tag(Unit::TAG),
        ("asdf://example.org/tags/unit", Some("1.2.0"))
    );
}
