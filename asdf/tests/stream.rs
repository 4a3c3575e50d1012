//! Streamed arrays: readers (ours and Python's) see the rows written so far, at any moment.

use asdf::yaml::Node;
use asdf::{AsdfFile, AsdfWriter, StoreOptions};
use asdf_testkit::{require_python, run_python, TempDir};
use ndarray::{arr1, Array2};

#[test]
fn rows_appended_to_a_live_file() {
    let dir = TempDir::new("asdf-stream");
    let path = dir.join("acq.asdf");
    std::fs::write(&path, b"an older file that the stream replaces atomically").unwrap();
    let mut w = AsdfWriter::new();
    let cal = w
        .add(
            &arr1(&[1.0f64, 2.0, 3.0]),
            &StoreOptions::compressed("zlib").unwrap(),
        )
        .unwrap();
    let stream = w.add_stream::<i32>(&[4]).unwrap();
    assert!(
        w.add_stream::<i32>(&[4]).is_err(),
        "only one stream per file"
    );
    let tree = Node::mapping([("calibration", cal), ("counts", stream)]);
    let mut s = w
        .write_path_streaming(&path, tree, &Default::default())
        .unwrap();
    // The file is complete before any row arrives.
    assert_eq!(
        AsdfFile::open(&path)
            .unwrap()
            .array::<i32>("/counts")
            .unwrap()
            .shape(),
        &[0, 4]
    );
    let block = Array2::<i32>::from_shape_fn((10, 4), |(i, j)| (i * 4 + j) as i32);
    s.write_rows(&block).unwrap();
    s.flush().unwrap();
    let mid = AsdfFile::open(&path).unwrap();
    assert_eq!(
        mid.array::<i32>("/counts").unwrap(),
        block.clone().into_dyn()
    );
    assert_eq!(mid.array::<f64>("/calibration").unwrap().len(), 3);
    s.write_rows(&arr1(&[40, 41, 42, 43])).unwrap();
    assert!(s.write_rows(&arr1(&[1, 2, 3])).is_err(), "wrong row shape");
    assert!(
        s.write_rows(&arr1(&[1.0f32, 2.0, 3.0, 4.0])).is_err(),
        "wrong datatype"
    );
    assert!(s.write_bytes(&[0u8; 5]).is_err(), "partial row");
    assert_eq!(s.finish().unwrap(), 11);
    let f = AsdfFile::open(&path).unwrap();
    assert!(f.blocks().blocks()[1].header.is_streamed());
    assert!(f.blocks().layout().index_offset.is_none());
    assert_eq!(f.array::<i32>("/counts").unwrap()[[10, 3]], 43);

    let py = require_python!();
    let script = r#"
import sys, asdf, numpy as np
with asdf.open(sys.argv[1]) as af:
    c = af["counts"]
    assert c.shape == (11, 4), c.shape
    assert np.array_equal(c[:10], np.arange(40, dtype=np.int32).reshape(10, 4))
    assert list(c[10]) == [40, 41, 42, 43]
    assert np.array_equal(af["calibration"], [1.0, 2.0, 3.0])
print("ok")
"#;
    assert_eq!(
        String::from_utf8(run_python(&py, script, &[path.to_str().unwrap()]))
            .unwrap()
            .trim(),
        "ok"
    );
}
