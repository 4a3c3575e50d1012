//! Arrays through the facade: the reference files, files Python reads (strictly, warnings as
//! errors), older ASDF Standard versions, zero-copy views and external arrays.

use asdf::yaml::Node;
use asdf::{AsdfFile, AsdfWriter, Storage, StoreOptions, WriteOptions};
use asdf_testkit::{require_python, run_python, TempDir};
use ndarray::{s, Array1, Array2, Array3};

#[test]
fn every_reference_array_equals_its_twin() {
    let root = asdf_testkit::corpus_file("asdf-standard/reference_files");
    let mut checked = 0;
    for v in std::fs::read_dir(&root).unwrap() {
        let dir = v.unwrap().path();
        if !dir.is_dir() || dir.ends_with("generate") {
            continue;
        }
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let twin = path.with_extension("yaml");
            if path.extension().is_none_or(|x| x != "asdf") || !twin.exists() {
                continue;
            }
            let f = AsdfFile::open(&path).unwrap();
            let y = AsdfFile::open(&twin).unwrap();
            let ours = f.arrays();
            assert_eq!(ours, y.arrays(), "{}", path.display());
            for (ptr, _) in ours {
                let a = f
                    .read(&ptr)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let b = y.read(&ptr).unwrap();
                assert!(a.equals_nan_aware(&b), "{} {ptr}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked >= 7 * 20, "only {checked} arrays compared");
}

#[test]
fn typed_access_errors_say_what_is_stored() {
    let f = AsdfFile::open(asdf_testkit::corpus_file(
        "asdf-standard/reference_files/1.6.0/basic.asdf",
    ))
    .unwrap();
    assert_eq!(
        f.array::<i64>("/data").unwrap().as_slice().unwrap(),
        &[0, 1, 2, 3, 4, 5, 6, 7]
    );
    let e = f.array::<f32>("/data").unwrap_err().to_string();
    assert!(e.contains("int64") && e.contains("/data"), "{e}");
    assert!(matches!(
        f.array::<i64>("/nope"),
        Err(asdf::AsdfError::NoNode(_))
    ));
    assert!(matches!(
        f.array::<i64>("/asdf_library"),
        Err(asdf::AsdfError::NotAnArray { .. })
    ));
    // Python writes unaligned blocks: an i64 view may or may not be possible, never UB.
    match f.view::<i64>("/data") {
        Ok(v) => assert_eq!(v.sum(), 28),
        Err(e) => assert!(e.to_string().contains("aligned"), "{e}"),
    }
}

fn sample_file(dir: &TempDir, options: &WriteOptions) -> std::path::PathBuf {
    let a = Array2::<f64>::from_shape_fn((30, 40), |(i, j)| i as f64 * 0.5 - j as f64);
    let b = Array1::<i16>::from_iter(-500..500);
    let c = Array3::<u8>::from_shape_fn((4, 5, 6), |(i, j, k)| (i * 30 + j * 6 + k) as u8);
    let mut w = AsdfWriter::new();
    let mut tree = vec![
        ("plain", w.add(&a, &StoreOptions::default()).unwrap()),
        (
            "zstd",
            w.add(&a, &StoreOptions::compressed("zstd").unwrap())
                .unwrap(),
        ),
        (
            "blsc_big_endian",
            w.add(
                &b,
                &StoreOptions {
                    byteorder: asdf::ndarray::ByteOrder::Big,
                    ..StoreOptions::compressed("blsc").unwrap()
                },
            )
            .unwrap(),
        ),
        (
            "fortran",
            w.add(&a.t(), &StoreOptions::compressed("lz4").unwrap())
                .unwrap(),
        ),
        (
            "reversed_slice",
            w.add(&b.slice(s![..;-3]), &StoreOptions::default())
                .unwrap(),
        ),
        (
            "inline",
            w.add(&c.slice(s![..2, ..2, ..2]), &StoreOptions::inline())
                .unwrap(),
        ),
        (
            "external",
            w.add(
                &c,
                &StoreOptions {
                    storage: Storage::External("sample_ext0000.asdf".into()),
                    ..Default::default()
                },
            )
            .unwrap(),
        ),
    ];
    tree.push((
        "meta",
        Node::mapping([
            ("observer", Node::from("Vera Rubin")),
            ("exposure", Node::from(30.5)),
        ]),
    ));
    let path = dir.join("sample.asdf");
    w.write_path(&path, Node::mapping(tree), options).unwrap();
    path
}

const PY_CHECK: &str = r#"
import sys, warnings, asdf, numpy as np
warnings.simplefilter("error")  # any AsdfWarning about our file fails the test
a = np.fromfunction(lambda i, j: i * 0.5 - j, (30, 40))
b = np.arange(-500, 500, dtype=np.int16)
c = np.fromfunction(lambda i, j, k: i * 30 + j * 6 + k, (4, 5, 6)).astype(np.uint8)
with asdf.open(sys.argv[1], validate_checksums=True) as af:
    assert np.array_equal(af["plain"], a) and np.array_equal(af["zstd"], a)
    assert np.array_equal(af["blsc_big_endian"], b) and af["blsc_big_endian"].dtype.byteorder == ">"
    assert np.array_equal(af["fortran"], a.T)
    assert np.array_equal(af["reversed_slice"], b[::-3])
    assert np.array_equal(af["inline"], c[:2, :2, :2])
    assert np.array_equal(af["external"], c)
    assert af["meta"]["observer"] == "Vera Rubin"
    lib = af.tree["asdf_library"]
    uris = [e["extension_uri"] for e in af.tree["history"]["extensions"]]
    print(af.version_string, lib["name"], " ".join(sorted(uris)))
"#;

#[test]
fn python_reads_what_the_facade_writes_without_warnings() {
    let dir = TempDir::new("asdf-facade-py");
    let path = sample_file(&dir, &WriteOptions::default());
    assert!(dir.join("sample_ext0000.asdf").exists());
    // Our own reader first.
    let f = AsdfFile::open(&path).unwrap();
    let c = Array3::<u8>::from_shape_fn((4, 5, 6), |(i, j, k)| (i * 30 + j * 6 + k) as u8);
    assert_eq!(f.array::<u8>("/external").unwrap(), c.into_dyn());
    assert_eq!(f.arrays().len(), 7);
    let py = require_python!();
    let out = String::from_utf8(run_python(&py, PY_CHECK, &[path.to_str().unwrap()])).unwrap();
    assert_eq!(
        out.trim(),
        "1.6.0 asdf-rust asdf://asdf-format.org/compression/extensions/blsc-1.0.0 \
         asdf://asdf-format.org/compression/extensions/zstd-1.0.0 \
         asdf://asdf-format.org/core/extensions/core-1.6.0"
    );
}

#[test]
fn older_standard_versions_are_written_with_their_tags() {
    let py = require_python!();
    for version in ["1.5.0", "1.3.0", "1.1.0"] {
        let dir = TempDir::new("asdf-facade-old");
        let opts = WriteOptions {
            standard_version: version.into(),
            ..Default::default()
        };
        let path = sample_file(&dir, &opts);
        let f = AsdfFile::open(&path).unwrap();
        assert_eq!(f.standard_version(), version);
        assert_eq!(
            f.tree().get("plain").unwrap().tag(),
            Some("tag:stsci.edu:asdf/core/ndarray-1.0.0")
        );
        let root = if version == "1.1.0" {
            "asdf-1.0.0"
        } else {
            "asdf-1.1.0"
        };
        assert_eq!(
            f.tree().tag(),
            Some(format!("tag:stsci.edu:asdf/core/{root}").as_str())
        );
        let script = PY_CHECK
            .replace(
                "print(af.version_string, lib[\"name\"], \" \".join(sorted(uris)))",
                "print(af.version_string)",
            )
            .replace(
                "    uris = [e[\"extension_uri\"] for e in af.tree[\"history\"][\"extensions\"]]\n",
                "",
            );
        let out = String::from_utf8(run_python(&py, &script, &[path.to_str().unwrap()])).unwrap();
        assert_eq!(out.trim(), version);
    }
    let e = AsdfWriter::new()
        .to_bytes(
            Node::mapping([("x", Node::from(1i64))]),
            &WriteOptions {
                standard_version: "2.0.0".into(),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("2.0.0"), "{e}");
    let mut w = AsdfWriter::new();
    let h = w
        .add(
            &Array1::from_elem(3, half::f16::from_f32(0.5)),
            &StoreOptions::default(),
        )
        .unwrap();
    let e = w
        .to_bytes(
            Node::mapping([("h", h)]),
            &WriteOptions {
                standard_version: "1.5.0".into(),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("float16"), "{e}");
}

#[test]
fn files_python_writes_read_through_the_facade() {
    let py = require_python!();
    let dir = TempDir::new("asdf-facade-from-py");
    let path = dir.join("py.asdf");
    let script = r#"
import sys, asdf, numpy as np
t = {"f": np.linspace(0, 1, 1001).reshape(7, 143), "i": np.arange(60, dtype=">u4").reshape(3, 4, 5),
     "s": np.array(["α", "beta", ""]), "c": np.array([1+2j, -3.5j]), "nested": {"list": [np.arange(3)]}}
af = asdf.AsdfFile(t)
af.set_array_compression(t["f"], "bzp2")
af.write_to(sys.argv[1])
"#;
    run_python(&py, script, &[path.to_str().unwrap()]);
    let f = AsdfFile::open(&path).unwrap();
    let names: Vec<String> = f.arrays().into_iter().map(|(p, _)| p).collect();
    // Python writes keys in sorted order.
    assert_eq!(names, ["/c", "/f", "/i", "/nested/list/0", "/s"]);
    let fl = f.array::<f64>("/f").unwrap();
    assert_eq!(fl.shape(), &[7, 143]);
    assert_eq!(fl[[6, 142]], 1.0);
    assert_eq!(f.array::<u32>("/i").unwrap()[[2, 3, 4]], 59);
    assert_eq!(
        f.read("/s")
            .unwrap()
            .into_strings()
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        ["α", "beta", ""]
    );
    let c = f.array::<num_complex::Complex64>("/c").unwrap();
    assert_eq!(c[[1]], num_complex::Complex64::new(0.0, -3.5));
    assert_eq!(f.array::<i64>("/nested/list/0").unwrap().len(), 3);
}

#[test]
fn aligned_files_give_zero_copy_views() {
    let dir = TempDir::new("asdf-facade-view");
    let a = Array2::<f64>::from_shape_fn((100, 10), |(i, j)| (i * 10 + j) as f64);
    let mut w = AsdfWriter::new();
    let n = w.add(&a, &StoreOptions::default()).unwrap();
    let path = dir.join("aligned.asdf");
    let opts = WriteOptions {
        blocks: asdf::block::WriteOptions {
            align: 64,
            ..Default::default()
        },
        ..Default::default()
    };
    w.write_path(&path, Node::mapping([("a", n)]), &opts)
        .unwrap();
    let f = AsdfFile::open(&path).unwrap();
    let v = f.view::<f64>("/a").unwrap();
    assert_eq!(v, a.view().into_dyn());
    let map = f.blocks().bytes();
    let p = v.as_ptr() as usize;
    assert!(
        p >= map.as_ptr() as usize && p < map.as_ptr() as usize + map.len(),
        "the view does not point into the map"
    );
}

/// Issue 17 item 8: the unstable core 1.7.0 (`ndarray-1.2.0`, `integer-1.2.0`), which Python
/// asdf writes with `ASDF_UNSTABLE_CORE_SCHEMAS`, reads and validates; written back as 1.7.0
/// it keeps those tags and Python reads the same arrays.
#[test]
fn unstable_core_1_7_files_read_and_write_back() {
    let python = require_python!();
    let dir = TempDir::new("core-1-7");
    let script = r#"
import os, sys, warnings
os.environ["ASDF_UNSTABLE_CORE_SCHEMAS"] = "1"
warnings.simplefilter("ignore")
import asdf, numpy as np
from asdf.tags.core import IntegerType
if sys.argv[1] == "write":
    tree = {"a": np.arange(6, dtype=">i2").reshape(2, 3), "u": np.array(["ab", "c"]),
            "big": IntegerType(2**70)}
    asdf.AsdfFile(tree, version="1.7.0").write_to(sys.argv[2])
else:
    with asdf.open(sys.argv[2]) as af:
        print(af["a"].tolist(), af["u"].tolist(), af["big"] == 2**70)
"#;
    let src = dir.join("v17.asdf");
    run_python(&python, script, &["write", src.to_str().unwrap()]);
    let f = AsdfFile::open(&src).unwrap();
    assert_eq!(f.standard_version(), "1.7.0");
    assert!(f.warnings().is_empty(), "{:?}", f.warnings());
    assert_eq!(
        f.pointer("/a").and_then(Node::tag),
        Some("tag:stsci.edu:asdf/core/ndarray-1.2.0")
    );
    assert_eq!(
        f.array::<i16>("/a").unwrap(),
        ndarray::array![[0i16, 1, 2], [3, 4, 5]].into_dyn()
    );
    assert!(asdf_schema::check_builtin(f.tree()).is_empty());
    let out = dir.join("back.asdf");
    let options = WriteOptions {
        standard_version: "1.7.0".into(),
        ..WriteOptions::default()
    };
    f.save_path(&out, &options).unwrap();
    let text = String::from_utf8_lossy(&std::fs::read(&out).unwrap()).into_owned();
    assert!(
        text.contains("ndarray-1.2.0") && !text.contains("ndarray-1.1.0"),
        "{text}"
    );
    let said = run_python(&python, script, &["read", out.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&said).trim(),
        "[[0, 1, 2], [3, 4, 5]] ['ab', 'c'] True"
    );
}

/// A view of a compressed array is refused from the block header, before anything is decoded:
/// with a decode budget of one byte the answer is still "compressed", not the budget's error,
/// and `read_region` then decodes it (within a budget that allows it).
#[test]
fn views_of_compressed_blocks_are_refused_without_decoding() {
    let a = Array2::from_shape_fn((64, 64), |(i, j)| (i * 64 + j) as f64);
    let mut w = AsdfWriter::new();
    let node = w
        .add(&a, &StoreOptions::compressed("zlib").unwrap())
        .unwrap();
    let bytes = w
        .to_bytes(Node::mapping([("a", node)]), &WriteOptions::default())
        .unwrap();
    let tight = asdf::OpenOptions {
        max_total_decoded_bytes: 1,
        ..Default::default()
    };
    let f = AsdfFile::from_bytes(bytes.clone(), &tight).unwrap();
    let e = f.view::<f64>("/a").unwrap_err().to_string();
    assert!(e.contains("compressed"), "{e}");
    let f = AsdfFile::from_bytes(bytes, &Default::default()).unwrap();
    let part = f.read_region::<f64>("/a", &[2..4, 10..12]).unwrap();
    assert_eq!(part, a.slice(s![2..4, 10..12]).into_dyn());
}
