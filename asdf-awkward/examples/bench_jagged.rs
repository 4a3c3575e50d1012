//! Benchmark: load and save of a 10-million-element jagged array, against awkward0 in Python.
//!
//! ```text
//! cargo run --release -p asdf-awkward --example bench_jagged [N_LISTS]
//! ```
//!
//! Builds a `JaggedArray` of N lists (default 10 000 000) with counts `i % 5` over `float64`
//! content (≈ 2 N elements), saves it as `.awkd` with awkward0's default policy (the int64
//! counts are zlib-compressed, the float content is stored) and loads it back, best of 3. If
//! the interop virtualenv exists (`target/interop-venv`, or `$ASDF_TEST_PYTHON`), awkward0 does
//! the same, and each side loads the other's file to check they agree.

use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use asdf_awkward::{
    save_awkd, AwkdFile, Buffer, JaggedArray, Layout, ListIndex, NumpyArray, SaveMode, WriteOptions,
};

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(v);
    }
    (best, out.expect("at least one run"))
}

fn checksum(l: &Layout) -> (usize, usize, f64) {
    match l {
        Layout::Jagged(j) => {
            let Layout::Numpy(c) = j.content.as_ref() else {
                panic!("content is not numpy")
            };
            let Buffer::F64(v) = c.data() else {
                panic!("content is not float64")
            };
            (j.index.len(), v.len(), v.iter().sum())
        }
        other => panic!("expected a JaggedArray, got {}", other.class_name()),
    }
}

const PY: &str = r#"
import sys, time, json, numpy as np, awkward0 as A
n = int(sys.argv[1]); out = sys.argv[2]; theirs = sys.argv[3]
counts = (np.arange(n) % 5).astype(np.int64)
content = np.arange(counts.sum(), dtype=np.float64) * 0.5
arr = A.JaggedArray.fromcounts(counts, content)
def best(f):
    b = float("inf")
    for _ in range(3):
        t = time.perf_counter(); r = f(); b = min(b, time.perf_counter() - t)
    return b, r
save_t, _ = best(lambda: A.save(out, arr, mode="w"))
load_t, a = best(lambda: A.load(out))
_, r = best(lambda: A.load(theirs))
print(json.dumps({"save": save_t, "load": load_t,
                  "rust_file": [len(r), len(r.content), float(r.content.sum())],
                  "own": [len(a), len(a.content), float(a.content.sum())]}))
"#;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let counts: Vec<i64> = (0..n as i64).map(|i| i % 5).collect();
    let total: i64 = counts.iter().sum();
    let content: Vec<f64> = (0..total).map(|i| i as f64 * 0.5).collect();
    let array = Layout::Jagged(JaggedArray {
        index: ListIndex::from_counts(&counts).expect("valid counts"),
        content: Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::F64(content)))),
    });
    let dir = std::env::temp_dir().join(format!("awk-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let ours = dir.join("rust.awkd");
    let theirs = dir.join("python.awkd");
    let opts = WriteOptions::default();
    let (save_t, ()) = best(3, || {
        save_awkd(&ours, &[("", &array)], SaveMode::Create, &opts).expect("save")
    });
    let (load_t, loaded) = best(3, || {
        AwkdFile::open(&ours)
            .and_then(|f| f.read(""))
            .expect("load")
    });
    let size = std::fs::metadata(&ours).map(|m| m.len()).unwrap_or(0);
    let expect = checksum(&array);
    assert_eq!(checksum(&loaded), expect);
    println!(
        "array: {n} lists, {total} float64 elements, file {:.1} MiB",
        size as f64 / 1048576.0
    );
    println!("rust     save {save_t:8.3} s   load {load_t:8.3} s");

    let py = std::env::var_os("ASDF_TEST_PYTHON")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../target/interop-venv/bin/python")
        });
    if !py.exists() {
        println!("awkward0: skipped (no interpreter at {})", py.display());
    } else {
        let out = Command::new(&py)
            .arg("-c")
            .arg(PY)
            .arg(n.to_string())
            .arg(&theirs)
            .arg(&ours)
            .output()
            .expect("run python");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("python JSON");
        let (ps, pl) = (
            r["save"].as_f64().unwrap_or(0.0),
            r["load"].as_f64().unwrap_or(0.0),
        );
        println!("awkward0 save {ps:8.3} s   load {pl:8.3} s");
        println!(
            "speed-up save {:6.1}x     load {:6.1}x",
            ps / save_t,
            pl / load_t
        );
        let rust_file = &r["rust_file"];
        assert_eq!(
            rust_file[0].as_u64(),
            Some(expect.0 as u64),
            "awkward0 reads our file"
        );
        assert_eq!(
            rust_file[2].as_f64(),
            Some(expect.2),
            "awkward0 reads our values"
        );
        let (t, theirs_loaded) = best(1, || {
            AwkdFile::open(&theirs)
                .and_then(|f| f.read(""))
                .expect("load python's file")
        });
        assert_eq!(checksum(&theirs_loaded), expect, "we read awkward0's file");
        println!("rust load of awkward0's file {t:.3} s (values agree both ways)");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
