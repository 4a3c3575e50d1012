//! Benchmark: awkward 2 buffers (directory and `.npz`) and Parquet, save and load, against
//! awkward 2 (and pyarrow) in Python on the same data.
//!
//! ```text
//! cargo run --release -p asdf-awkward --features parquet --example bench_awkward2 [N_LISTS [N_RECORDS]]
//! ```
//!
//! Two arrays: a jagged array of `N_LISTS` lists (default 10 000 000; counts `i % 5`) of
//! `float64`, and a table of `N_RECORDS` records (default 1 000 000) `{x: float64, n: [int64]
//! (counts i % 4), s: string}`. Each is saved and loaded as a buffers directory, an `.npz` and
//! (with the `parquet` feature) a Parquet file, best of 3. With the interop virtualenv
//! (`target/interop-venv`, or `$ASDF_TEST_PYTHON`), awkward 2 does the same (`ak.to_buffers` +
//! files, `ak.from_buffers`, `ak.to_parquet`/`ak.from_parquet`, pyarrow `write_table`/
//! `read_table`), and each side loads the other's files to check they agree.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use asdf_awkward::{
    read_awkward2_dir, read_awkward2_npz, write_awkward2_dir, write_awkward2_npz, Buffer,
    FromBuffersOptions, JaggedArray, Layout, ListIndex, NumpyArray, RecordArray, StringArray,
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

fn offsets(n: usize, modulo: usize) -> Vec<i64> {
    let mut o = Vec::with_capacity(n + 1);
    let mut acc = 0i64;
    o.push(0);
    for i in 0..n {
        acc += (i % modulo) as i64;
        o.push(acc);
    }
    o
}

fn jagged(n: usize) -> Layout {
    let o = offsets(n, 5);
    let total = *o.last().unwrap_or(&0) as usize;
    let content: Vec<f64> = (0..total).map(|i| i as f64 * 0.5).collect();
    Layout::Jagged(JaggedArray {
        index: ListIndex::Offsets(o),
        content: Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::F64(content)))),
    })
}

fn table(n: usize) -> Layout {
    let x: Vec<f64> = (0..n).map(|i| i as f64 * 0.25).collect();
    let o = offsets(n, 4);
    let total = *o.last().unwrap_or(&0) as usize;
    let inner: Vec<i64> = (0..total as i64).collect();
    let strs: Vec<String> = (0..n).map(|i| format!("r{i}")).collect();
    Layout::Record(RecordArray {
        fields: Some(vec!["x".into(), "n".into(), "s".into()]),
        contents: vec![
            Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::F64(x)))),
            Arc::new(Layout::Jagged(JaggedArray {
                index: ListIndex::Offsets(o),
                content: Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::I64(inner)))),
            })),
            Arc::new(Layout::String(StringArray::from_strs(&strs))),
        ],
        length: n,
    })
}

/// `(length, sum of the first float column or content)`: what both sides must agree on.
fn check(l: &Layout) -> (usize, f64) {
    fn floats(l: &Layout) -> f64 {
        match l {
            Layout::Numpy(a) => match a.data() {
                Buffer::F64(v) => v.iter().sum(),
                _ => 0.0,
            },
            Layout::Jagged(j) => floats(&j.content),
            Layout::Record(r) => r.contents.first().map_or(0.0, |c| floats(c)),
            Layout::Parameters(p) => floats(&p.content),
            _ => 0.0,
        }
    }
    (l.len(), floats(l))
}

const PYTHON: &str = r#"
import sys, json, time, pathlib
import numpy as np, awkward as ak
kind, n, base, ours = sys.argv[1], int(sys.argv[2]), pathlib.Path(sys.argv[3]), pathlib.Path(sys.argv[4])
def offsets(n, m):
    return np.concatenate([[0], np.cumsum(np.arange(n) % m)]).astype(np.int64)
if kind == "jagged":
    o = offsets(n, 5)
    a = ak.Array(ak.contents.ListOffsetArray(ak.index.Index64(o), ak.contents.NumpyArray(np.arange(o[-1]) * 0.5)))
else:
    o = offsets(n, 4)
    s = ak.Array(["r%d" % i for i in range(n)])
    a = ak.zip({"x": np.arange(n) * 0.25,
                "n": ak.Array(ak.contents.ListOffsetArray(ak.index.Index64(o), ak.contents.NumpyArray(np.arange(o[-1])))),
                "s": s}, depth_limit=1)
def best(f):
    t = []
    for _ in range(3):
        t0 = time.perf_counter(); r = f(); t.append(time.perf_counter() - t0)
    return min(t), r
def check(x):
    first = x[x.fields[0]] if x.fields else x
    return [len(x), float(ak.sum(first))]
def save_dir(arr, d):
    form, length, c = ak.to_buffers(arr)
    d.mkdir(exist_ok=True)
    for k, v in c.items():
        (d / k).write_bytes(v.tobytes())
    (d / "awkward.json").write_text(json.dumps({"form": form.to_dict(), "length": length}))
def load_dir(d):
    meta = json.loads((d / "awkward.json").read_text())
    keys = [p.name for p in d.iterdir() if p.name != "awkward.json"]
    return ak.from_buffers(meta["form"], meta["length"], {k: (d / k).read_bytes() for k in keys})
def save_npz(arr, p):
    form, length, c = ak.to_buffers(arr)
    np.savez(p, form=form.to_json(), length=length, **c)
def load_npz(p):
    f = np.load(p)
    return ak.from_buffers(str(f["form"]), int(f["length"]), {k: f[k] for k in f.files if k not in ("form", "length")})
out = {}
out["save_dir"], _ = best(lambda: save_dir(a, base / "py_dir"))
out["load_dir"], r = best(lambda: load_dir(base / "py_dir")); out["check_dir"] = check(r)
out["save_npz"], _ = best(lambda: save_npz(a, base / "py.npz"))
out["load_npz"], r = best(lambda: load_npz(base / "py.npz")); out["check_npz"] = check(r)
out["ours_dir"] = check(load_dir(ours / "rs_dir"))
out["ours_npz"] = check(load_npz(ours / "rs.npz"))
try:
    import pyarrow.parquet as pq
    out["to_parquet"], _ = best(lambda: ak.to_parquet(a, base / "py.parquet"))
    out["from_parquet"], r = best(lambda: ak.from_parquet(base / "py.parquet")); out["check_parquet"] = check(r)
    table = pq.read_table(base / "py.parquet")
    out["pa_write"], _ = best(lambda: pq.write_table(table, base / "pa.parquet", compression="zstd"))
    out["pa_read"], _ = best(lambda: pq.read_table(base / "pa.parquet"))
    if (ours / "rs.parquet").exists():
        out["ours_parquet"] = check(ak.from_parquet(ours / "rs.parquet"))
except ImportError:
    pass
print(json.dumps(out))
"#;

fn python() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("ASDF_TEST_PYTHON") {
        return Some(p.into());
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/interop-venv/bin/python");
    p.exists().then_some(p)
}

fn run(kind: &str, n: usize, layout: &Layout, dir: &Path) {
    let opts = FromBuffersOptions::default();
    let d = dir.join("rs_dir");
    let npz = dir.join("rs.npz");
    let (save_dir, _) = best(3, || write_awkward2_dir(layout, &d).unwrap());
    let (load_dir, l) = best(3, || read_awkward2_dir(&d, &opts).unwrap());
    assert_eq!(check(&l), check(layout));
    let (save_npz, _) = best(3, || write_awkward2_npz(layout, &npz).unwrap());
    let (load_npz, l) = best(3, || read_awkward2_npz(&npz, &opts).unwrap());
    assert_eq!(check(&l), check(layout));
    println!("{kind} ({n}): ours  dir save {save_dir:.3} s, load {load_dir:.3} s; npz save {save_npz:.3} s, load {load_npz:.3} s");
    #[cfg(feature = "parquet")]
    {
        use asdf_awkward::parquet_io::{read_parquet, write_parquet};
        let pq = dir.join("rs.parquet");
        let (save, _) = best(3, || write_parquet(layout, &pq).unwrap());
        let (load, l) = best(3, || read_parquet(&pq).unwrap());
        assert_eq!(check(&l).0, layout.len());
        println!("{kind} ({n}): ours  parquet save {save:.3} s, load {load:.3} s");
    }
    let Some(py) = python() else {
        println!("(no interop venv: awkward 2 not measured)");
        return;
    };
    let out = Command::new(py)
        .args(["-c", PYTHON, kind, &n.to_string()])
        .arg(dir)
        .arg(dir)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    println!("{kind} ({n}): awkward 2 {j}");
    let l = read_awkward2_dir(dir.join("py_dir"), &opts).unwrap();
    println!(
        "ours reading awkward 2's dir: {:?} vs {:?}",
        check(&l),
        check(layout)
    );
    let l = read_awkward2_npz(dir.join("py.npz"), &opts).unwrap();
    println!("ours reading awkward 2's npz: {:?}", check(&l));
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n_lists = args.first().copied().unwrap_or(10_000_000);
    let n_records = args.get(1).copied().unwrap_or(1_000_000);
    let dir = std::env::temp_dir().join(format!("awk2-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    run("jagged", n_lists, &jagged(n_lists), &dir);
    run("table", n_records, &table(n_records), &dir);
    std::fs::remove_dir_all(&dir).unwrap();
}
