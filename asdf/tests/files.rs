//! Opening every reference file, writing files Python asdf reads, and crash-safe writes.

use crate::common;

use asdf::block::{encode_block, EncodeOptions, Label};
use asdf::yaml::Node;
use asdf::{AsdfError, AsdfFile, WriteOptions};
use asdf_testkit::{require_python, run_python, TempDir};

fn reference_dirs() -> Vec<(String, std::path::PathBuf)> {
    let root = asdf_testkit::corpus_file("asdf-standard/reference_files");
    let mut dirs: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && p.file_name().unwrap() != "generate")
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 7);
    dirs
}

#[test]
fn every_reference_file_and_twin_opens() {
    let mut n = 0;
    for (version, dir) in reference_dirs() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if ext != "asdf" && ext != "yaml" {
                continue;
            }
            let f = AsdfFile::open(&path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(f.standard_version(), version, "{}", path.display());
            assert!(
                f.warnings().is_empty(),
                "{}: {:?}",
                path.display(),
                f.warnings()
            );
            assert!(f.tree().as_map().is_some(), "{}", path.display());
            let root_tag = f.tree().tag().unwrap_or("");
            assert!(
                root_tag.starts_with("tag:stsci.edu:asdf/core/asdf-1."),
                "{}: {root_tag}",
                path.display()
            );
            if ext == "yaml" {
                assert!(f.blocks().is_empty());
            }
            n += 1;
        }
    }
    assert_eq!(n, 7 * 31);
}

#[test]
fn trees_without_arrays_equal_their_twins() {
    for (_, dir) in reference_dirs() {
        for name in ["anchor", "scalars"] {
            let a = AsdfFile::open(dir.join(format!("{name}.asdf"))).unwrap();
            let y = AsdfFile::open(dir.join(format!("{name}.yaml"))).unwrap();
            assert_eq!(
                common::without_metadata(a.tree()),
                common::without_metadata(y.tree()),
                "{}/{name}",
                dir.display()
            );
        }
        let a = AsdfFile::open(dir.join("anchor.asdf")).unwrap();
        assert!(a.tree().get("b").unwrap().is_shared());
        let b = AsdfFile::open(dir.join("basic.asdf")).unwrap();
        assert_eq!(b.blocks().len(), 1);
        assert_eq!(b.pointer("/data/source").and_then(Node::as_i64), Some(0));
    }
}

#[test]
fn errors_name_the_file_and_the_place() {
    let dir = TempDir::new("asdf-errors");
    let basic = std::fs::read(asdf_testkit::corpus_file(
        "asdf-standard/reference_files/1.6.0/basic.asdf",
    ))
    .unwrap();
    let cut = dir.join("cut.asdf");
    std::fs::write(&cut, &basic[..basic.len() - 80]).unwrap();
    let e = AsdfFile::open(&cut).unwrap_err().to_string();
    assert!(
        e.contains("cut.asdf") && e.contains("block 0") && e.contains("664"),
        "{e}"
    );
    let notree = dir.join("notree.asdf");
    std::fs::write(&notree, b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: 1}\n").unwrap();
    let e = AsdfFile::open(&notree).unwrap_err();
    assert!(
        e.to_string().contains("notree.asdf") && e.to_string().contains("end marker"),
        "{e}"
    );
    let bad = dir.join("bad.asdf");
    std::fs::write(&bad, b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: [1, 2}\n...\n").unwrap();
    let e = AsdfFile::open(&bad).unwrap_err();
    assert!(
        matches!(&e, AsdfError::File { source, .. } if matches!(**source, AsdfError::Yaml { .. })),
        "{e}"
    );
    let e = AsdfFile::open(dir.join("missing.asdf")).unwrap_err();
    assert!(e.to_string().contains("missing.asdf"), "{e}");
}

fn sample_tree(n: usize) -> Node {
    let ndarray = Node::mapping([
        ("source", Node::from(0i64)),
        ("datatype", Node::from("int32")),
        ("byteorder", Node::from("little")),
        ("shape", Node::sequence([Node::from(n as i64)])),
    ])
    .with_tag("tag:stsci.edu:asdf/core/ndarray-1.1.0");
    Node::mapping([
        ("title", Node::from("written by the Rust asdf facade")),
        ("yes", Node::from("yes")),
        ("data", ndarray),
    ])
    .with_tag("tag:stsci.edu:asdf/core/asdf-1.1.0")
}

#[test]
fn written_files_reopen_and_python_reads_them() {
    let dir = TempDir::new("asdf-write");
    let n = 1000;
    let data: Vec<u8> = (0..n as i32).flat_map(|i| (i * 3).to_le_bytes()).collect();
    let tree = sample_tree(n);
    let opts = WriteOptions::default();
    let block = encode_block(
        &data,
        Label(*b"zlib"),
        &EncodeOptions {
            typesize: 4,
            ..Default::default()
        },
        &opts.blocks,
    )
    .unwrap();
    let path = dir.join("written.asdf");
    asdf::write_path(&path, &tree, &[block], &opts).unwrap();
    let f = AsdfFile::open(&path).unwrap();
    assert_eq!(f.tree(), &tree);
    assert!(*f.block_data(0).unwrap() == data[..]);
    assert_eq!(f.standard_version(), "1.6.0");

    let py = require_python!();
    let script = r#"
import sys, asdf, numpy as np
with asdf.open(sys.argv[1], validate_checksums=True) as af:
    assert af["title"] == "written by the Rust asdf facade"
    assert af["yes"] == "yes"
    assert np.array_equal(af["data"], np.arange(1000, dtype="<i4") * 3)
    print(af.version_string)
"#;
    let out = run_python(&py, script, &[path.to_str().unwrap()]);
    assert_eq!(String::from_utf8(out).unwrap().trim(), "1.6.0");
}

#[test]
fn a_failed_write_leaves_the_old_file_and_no_debris() {
    let dir = TempDir::new("asdf-atomic");
    let path = dir.join("keep.asdf");
    std::fs::write(&path, b"old content").unwrap();
    let e = asdf::atomic_write(&path, |w| {
        use std::io::Write;
        w.write_all(&[b'x'; 3 << 20]).unwrap(); // more than the buffer: reaches the temp file
        Err::<(), _>(AsdfError::NotAsdf {
            found: "simulated failure".into(),
        })
    })
    .unwrap_err();
    assert!(
        e.to_string().contains("simulated failure") && e.to_string().contains("keep.asdf"),
        "{e}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"old content");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // A successful write replaces the file and keeps its permissions.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    asdf::write_path(&path, &sample_tree(0), &[], &WriteOptions::default()).unwrap();
    assert!(AsdfFile::open(&path).unwrap().blocks().is_empty());
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o640
    );
}

/// Unsynced saves (`Durability::Relaxed`) through every path writer: new files, replaced
/// files and external arrays all read back whole, keep the old file's permissions and leave no
/// temporary file behind.
#[test]
fn unsynced_writes_read_back_and_leave_no_debris() {
    use asdf::{AsdfWriter, Durability, Storage, StoreOptions};
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("asdf-relaxed");
    let relaxed = WriteOptions {
        durability: Durability::Relaxed,
        ..WriteOptions::default()
    };
    let path = dir.join("scratch.asdf");
    let write = |n: usize| {
        let mut w = AsdfWriter::new();
        let a = ndarray::Array1::from_iter(0..n as u32);
        let inner = w.add(&a, &StoreOptions::default()).unwrap();
        let ext = StoreOptions {
            storage: Storage::External("scratch-ext.asdf".into()),
            ..StoreOptions::default()
        };
        let outer = w.add(&(&a * 2), &ext).unwrap();
        let tree = Node::mapping([("a", inner), ("b", outer)]);
        w.write_path(&path, tree, &relaxed).unwrap();
        let f = AsdfFile::open(&path).unwrap();
        assert_eq!(f.array::<u32>("/a").unwrap(), a.into_dyn());
        let b = f.array::<u32>("/b").unwrap();
        assert_eq!(
            b.iter().copied().collect::<Vec<u32>>(),
            (0..n as u32).map(|i| i * 2).collect::<Vec<_>>()
        );
    };
    write(1000);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    write(3000); // replaces both files (synced, as replacing always is)
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o640
    );
    asdf::write_path(dir.join("plain.asdf"), &sample_tree(3), &[], &relaxed).unwrap();
    assert!(AsdfFile::open(dir.join("plain.asdf")).is_ok());
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["plain.asdf", "scratch-ext.asdf", "scratch.asdf"]);
}

#[test]
fn trees_are_validated_on_write_and_on_request_on_read() {
    let bad = Node::mapping([(
        "a",
        Node::mapping([
            ("source", Node::from(0i64)),
            ("datatype", Node::from("float99")),
            ("byteorder", Node::from("little")),
            ("shape", Node::sequence([Node::from(3i64)])),
            (
                "strides",
                Node::sequence([Node::from(8i64), Node::from(8i64)]),
            ),
        ])
        .with_tag("tag:stsci.edu:asdf/core/ndarray-1.1.0"),
    )]);
    let e = asdf::write_to(Vec::new(), &bad, &[], &WriteOptions::default());
    // write_to writes the tree as given; the builder and save paths validate.
    assert!(e.is_ok());
    let e = asdf::AsdfWriter::new()
        .to_bytes(bad.clone(), &WriteOptions::default())
        .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, AsdfError::Invalid(_)), "{msg}");
    assert!(
        msg.contains("/a/datatype") && msg.contains("/a/strides"),
        "{msg}"
    );
    let unchecked = WriteOptions {
        validate: false,
        ..WriteOptions::default()
    };
    let bytes = asdf::AsdfWriter::new().to_bytes(bad, &unchecked).unwrap();
    let f = AsdfFile::from_bytes(bytes.clone(), &Default::default()).unwrap();
    assert_eq!(f.validate().violations.len(), 2, "{}", f.validate());
    let strict = asdf::OpenOptions {
        validate: true,
        ..Default::default()
    };
    assert!(matches!(
        AsdfFile::from_bytes(bytes, &strict),
        Err(AsdfError::Invalid(_))
    ));
    let good = AsdfFile::open_with(
        asdf_testkit::corpus_file("asdf-standard/reference_files/1.6.0/complex.asdf"),
        &strict,
    )
    .unwrap();
    assert!(good.validate().is_valid());
}

#[test]
fn array_limits_from_open_options_bound_expanding_reads() {
    // Overlapping strides: 4 000 bytes in the block expand to a 2 000 x 2 000 float64 result.
    let node = Node::mapping([
        ("source", Node::from(0i64)),
        ("datatype", Node::from("float64")),
        ("byteorder", Node::from("little")),
        (
            "shape",
            Node::sequence([Node::from(2000i64), Node::from(2000i64)]),
        ),
        (
            "strides",
            Node::sequence([Node::from(8i64), Node::from(8i64)]),
        ),
    ])
    .with_tag("tag:stsci.edu:asdf/core/ndarray-1.1.0");
    let tree = Node::mapping([("a", node)]).with_tag("tag:stsci.edu:asdf/core/asdf-1.1.0");
    let opts = WriteOptions::default();
    let block = encode_block(
        &[0u8; 3999 * 8 + 8],
        Label::NONE,
        &EncodeOptions::default(),
        &opts.blocks,
    )
    .unwrap();
    let bytes = asdf::write_to(Vec::new(), &tree, &[block], &opts).unwrap();
    let small = asdf::OpenOptions {
        arrays: asdf::ndarray::ReadLimits {
            max_expanded_bytes: 1 << 20,
        },
        ..Default::default()
    };
    let f = AsdfFile::from_bytes(bytes.clone(), &small).unwrap();
    let e = f.read("/a").unwrap_err().to_string();
    assert!(e.contains("/a"), "{e}");
    assert!(f.array::<f64>("/a").is_err());
    let f = AsdfFile::from_bytes(bytes, &Default::default()).unwrap();
    assert_eq!(f.array::<f64>("/a").unwrap().shape(), &[2000, 2000]);
}

/// Issue 17 item 6, as libasdf reads them: blank lines and spaces between the header and the
/// tree (or the first block), a pre-1.0 format version, an empty `core/asdf` root.
#[test]
fn lenient_headers_and_an_empty_root_read_with_warnings() {
    let tree = "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nx: 1\n...\n";
    for padding in ["\n\n\n    \n", "\n\n   "] {
        let text = format!("#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n{padding}{tree}");
        let f = AsdfFile::from_bytes(text.into_bytes(), &Default::default()).unwrap();
        assert_eq!(f.tree().get("x").and_then(Node::as_i64), Some(1));
        assert!(
            f.warnings().iter().any(|w| w.contains("padding")),
            "{:?}",
            f.warnings()
        );
    }
    let old = format!("#ASDF 0.1.0\n#ASDF_STANDARD 1.0.0\n{tree}");
    let f = AsdfFile::from_bytes(old.into_bytes(), &Default::default()).unwrap();
    assert!(
        f.warnings().iter().any(|w| w.contains("0.1.0")),
        "{:?}",
        f.warnings()
    );
    let e = AsdfFile::from_bytes(b"#ASDF 2.0.0\n".to_vec(), &Default::default()).unwrap_err();
    assert!(e.to_string().contains("2.0.0"), "{e}");
    // Padding before something that is neither a tree nor a block stays an error.
    let junk = b"#ASDF 1.0.0\n\n  hello\n".to_vec();
    assert!(AsdfFile::from_bytes(junk, &Default::default()).is_err());
    // An empty tagged root is an empty mapping, as Python reads it, and writes back.
    let empty = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
                 --- !core/asdf-1.1.0 \n...\n";
    let f = AsdfFile::from_bytes(empty.as_bytes().to_vec(), &Default::default()).unwrap();
    assert_eq!(f.tree().as_map().map(|m| m.len()), Some(0));
    let mut out = Vec::new();
    f.save_to(&mut out, &Default::default()).unwrap();
    assert!(AsdfFile::from_bytes(out, &Default::default()).is_ok());
}
