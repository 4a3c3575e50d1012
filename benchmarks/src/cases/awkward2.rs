//! Case 11: awkward 2's own persistence and its bridge to the data world, ours against awkward 2
//! 2.14 and pyarrow 26 (the awkward 2 venv, on NumPy 2) on the same arrays: a jagged array of
//! 10 million lists (`float64`, counts `i % 5`) and a table of 1 million records `{x: float64, n: [int64], s: string}` —
//! saved and loaded as `ak.to_buffers` buffers (a directory and an `.npz`) and as Parquet.
//! Loads are timed on the same files on both sides (awkward 2's directory, `.npz` and
//! `ak.to_parquet` file, pyarrow's Parquet file); each side also reads the other's files and
//! must find the same length and sum.

use std::path::Path;
use std::sync::Arc;

use asdf_awkward::parquet_io::{read_parquet, write_parquet};
use asdf_awkward::{
    read_awkward2_dir, read_awkward2_npz, write_awkward2_dir, write_awkward2_dir_with,
    write_awkward2_npz, write_awkward2_npz_with, Buffer, Durability, FromBuffersOptions,
    JaggedArray, Layout, ListIndex, NumpyArray, RecordArray, StringArray,
};

use super::{arg, Ctx};
use crate::data::check_sum;
use crate::measure::{best, best_write, sync_disks, BenchError, Result, Row};
use crate::python::{opt, Outputs};

const PY: &str = r#"
import json, pathlib
import numpy as np, awkward as ak
import pyarrow.parquet as pq
kind, n, d = sys.argv[1], int(sys.argv[2]), pathlib.Path(sys.argv[3])
def offsets(n, m):
    return np.concatenate([[0], np.cumsum(np.arange(n) % m)]).astype(np.int64)
def lists(o, content):
    return ak.contents.ListOffsetArray(ak.index.Index64(o), ak.contents.NumpyArray(content))
if kind == "jagged":
    o = offsets(n, 5)
    a = ak.Array(lists(o, np.arange(o[-1]) * 0.5))
else:
    o = offsets(n, 4)
    a = ak.zip({"x": np.arange(n) * 0.25, "n": ak.Array(lists(o, np.arange(o[-1]))),
                "s": ak.Array(["r%d" % i for i in range(n)])}, depth_limit=1)
def check(prefix, x):
    first = x[x.fields[0]] if x.fields else x
    out(prefix + "_len", len(x)); out(prefix + "_sum", ak.sum(first))
def save_dir(arr, p):
    form, length, c = ak.to_buffers(arr)
    p.mkdir(exist_ok=True)
    for k, v in c.items():
        (p / k).write_bytes(v.tobytes())
    (p / "awkward.json").write_text(json.dumps({"form": form.to_dict(), "length": length}))
def load_dir(p):
    meta = json.loads((p / "awkward.json").read_text())
    keys = [q.name for q in p.iterdir() if q.name != "awkward.json"]
    return ak.from_buffers(meta["form"], meta["length"], {k: (p / k).read_bytes() for k in keys})
def save_npz(arr, p):
    form, length, c = ak.to_buffers(arr)
    np.savez(p, form=form.to_json(), length=length, **c)
def load_npz(p):
    f = np.load(p)
    return ak.from_buffers(str(f["form"]), int(f["length"]),
                           {k: f[k] for k in f.files if k not in ("form", "length")})
t, _ = best(lambda: save_dir(a, d / "py_dir")); out("save_dir", t)
t, r = best(lambda: load_dir(d / "py_dir")); out("load_dir", t); check("dir", r)
t, _ = best(lambda: save_npz(a, d / "py.npz")); out("save_npz", t)
t, r = best(lambda: load_npz(d / "py.npz")); out("load_npz", t); check("npz", r)
t, _ = best(lambda: ak.to_parquet(a, d / "py.parquet")); out("to_parquet", t)
t, r = best(lambda: ak.from_parquet(d / "py.parquet")); out("from_parquet", t); check("parquet", r)
table = pq.read_table(d / "py.parquet")
t, _ = best(lambda: pq.write_table(table, d / "pa.parquet", compression="zstd")); out("pa_write", t)
t, _ = best(lambda: pq.read_table(d / "pa.parquet")); out("pa_read", t)
check("ours_dir", load_dir(d / "rs_dir"))
check("ours_npz", load_npz(d / "rs.npz"))
check("ours_parquet", ak.from_parquet(d / "rs.parquet"))
"#;

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

fn lists(o: Vec<i64>, content: Buffer) -> Arc<Layout> {
    Arc::new(Layout::Jagged(JaggedArray {
        index: ListIndex::Offsets(o),
        content: Arc::new(Layout::Numpy(NumpyArray::from_vec(content))),
    }))
}

fn jagged(n: usize) -> Layout {
    let o = offsets(n, 5);
    let total = o.last().copied().unwrap_or(0);
    let content = (0..total).map(|i| i as f64 * 0.5).collect();
    Arc::unwrap_or_clone(lists(o, Buffer::F64(content)))
}

fn table(n: usize) -> Layout {
    let o = offsets(n, 4);
    let total = o.last().copied().unwrap_or(0);
    let strs: Vec<String> = (0..n).map(|i| format!("r{i}")).collect();
    Layout::Record(RecordArray {
        fields: Some(vec!["x".into(), "n".into(), "s".into()]),
        contents: vec![
            Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::F64(
                (0..n).map(|i| i as f64 * 0.25).collect(),
            )))),
            lists(o, Buffer::I64((0..total).collect())),
            Arc::new(Layout::String(StringArray::from_strs(&strs))),
        ],
        length: n,
    })
}

/// `(length, sum of the first float column or content)`: what every reader must agree on
/// (through whatever wrappers a reader puts around it: parameters, option types, records).
fn summary(l: &Layout) -> (usize, f64) {
    fn floats(l: &Layout) -> f64 {
        match l {
            Layout::Numpy(a) => match a.data() {
                Buffer::F64(v) => v.iter().sum(),
                _ => 0.0,
            },
            other => other.children().first().map_or(0.0, |c| floats(c)),
        }
    }
    (l.len(), floats(l))
}

/// Checks that `got` is the array `want` summarises, as `who` read it.
fn agree(kind: &str, who: &str, got: (usize, f64), want: (usize, f64)) -> Result<()> {
    if got.0 != want.0 {
        let msg = format!("{who}: length {} but expected {}", got.0, want.0);
        return Err(BenchError::mismatch(kind, msg));
    }
    check_sum(kind, who, got.1, want.1)
}

/// Checks what awkward 2 found in its own files and in ours (`prefix_len`, `prefix_sum`).
fn agree_py(kind: &str, py: &Option<Outputs>, want: (usize, f64)) -> Result<()> {
    for prefix in [
        "dir",
        "npz",
        "parquet",
        "ours_dir",
        "ours_npz",
        "ours_parquet",
    ] {
        let (Some(len), Some(sum)) = (
            opt(py, &format!("{prefix}_len"))?,
            opt(py, &format!("{prefix}_sum"))?,
        ) else {
            continue;
        };
        let who = format!("awkward 2 reading {prefix}");
        agree(kind, &who, (len as usize, sum), want)?;
    }
    Ok(())
}

/// Our saves without waiting for the disk, as the peers save: a directory and an `.npz`, each a
/// new output (a replaced file would be synced), each read back and checked.
fn save_unsynced(kind: &str, layout: &Layout, d: &Path) -> Result<[f64; 2]> {
    let want = summary(layout);
    let e = BenchError::ours;
    let relaxed = Durability::Relaxed;
    let (dir, npz) = (d.join("rs_dir_unsynced"), d.join("rs_unsynced.npz"));
    let save_dir = best_write(&dir, || {
        write_awkward2_dir_with(layout, &dir, relaxed).map_err(e)
    })?;
    let save_npz = best_write(&npz, || {
        write_awkward2_npz_with(layout, &npz, relaxed).map_err(e)
    })?;
    let opts = FromBuffersOptions::default();
    let back = read_awkward2_dir(&dir, &opts).map_err(e)?;
    agree(kind, "ours (dir, unsynced)", summary(&back), want)?;
    let back = read_awkward2_npz(&npz, &opts).map_err(e)?;
    agree(kind, "ours (npz, unsynced)", summary(&back), want)?;
    std::fs::remove_dir_all(&dir).map_err(|err| BenchError::io(&dir, err))?;
    std::fs::remove_file(&npz).map_err(|err| BenchError::io(&npz, err))?;
    // The peers then start without our last run's pages still on their way to disk.
    sync_disks()?;
    Ok([save_dir, save_npz])
}

/// Our saves: directory, `.npz` and Parquet (zstd), each read back and checked.
fn save(kind: &str, layout: &Layout, d: &Path) -> Result<[f64; 3]> {
    let want = summary(layout);
    let e = BenchError::ours;
    let (dir, npz, pq) = (d.join("rs_dir"), d.join("rs.npz"), d.join("rs.parquet"));
    let (save_dir, ()) = best(|| write_awkward2_dir(layout, &dir).map_err(e))?;
    let (save_npz, ()) = best(|| write_awkward2_npz(layout, &npz).map_err(e))?;
    let (save_pq, ()) = best(|| write_parquet(layout, &pq).map_err(e))?;
    let opts = FromBuffersOptions::default();
    let back = read_awkward2_dir(&dir, &opts).map_err(e)?;
    agree(kind, "ours (dir)", summary(&back), want)?;
    let back = read_awkward2_npz(&npz, &opts).map_err(e)?;
    agree(kind, "ours (npz)", summary(&back), want)?;
    agree(
        kind,
        "ours (Parquet)",
        summary(&read_parquet(&pq).map_err(e)?),
        want,
    )?;
    Ok([save_dir, save_npz, save_pq])
}

/// Our loads of the files the peers load (awkward 2's directory, `.npz` and `ak.to_parquet`
/// file; pyarrow's Parquet file), or of ours without Python: `[dir, npz, ak parquet, pa
/// parquet]`, each checked.
fn load(kind: &str, d: &Path, theirs: bool, want: (usize, f64)) -> Result<[f64; 4]> {
    let opts = FromBuffersOptions::default();
    let e = BenchError::ours;
    let pick = |py: &str, rs: &str| d.join(if theirs { py } else { rs });
    let (dir, npz) = (pick("py_dir", "rs_dir"), pick("py.npz", "rs.npz"));
    let (ak_pq, pa_pq) = (
        pick("py.parquet", "rs.parquet"),
        pick("pa.parquet", "rs.parquet"),
    );
    let (load_dir, l) = best(|| read_awkward2_dir(&dir, &opts).map_err(e))?;
    agree(kind, "ours loading the directory", summary(&l), want)?;
    let (load_npz, l) = best(|| read_awkward2_npz(&npz, &opts).map_err(e))?;
    agree(kind, "ours loading the .npz", summary(&l), want)?;
    let (load_ak, l) = best(|| read_parquet(&ak_pq).map_err(e))?;
    agree(kind, "ours loading ak.to_parquet's file", summary(&l), want)?;
    let (load_pa, l) = best(|| read_parquet(&pa_pq).map_err(e))?;
    agree(kind, "ours loading pyarrow's file", summary(&l), want)?;
    Ok([load_dir, load_npz, load_ak, load_pa])
}

/// The rows of one array: saves of the same array, loads of the same files.
fn rows(ctx: &Ctx, kind: &str, what: &str, layout: &Layout) -> Result<Vec<Row>> {
    let n = layout.len();
    let want = summary(layout);
    let [save_dir, save_npz, save_pq] = save(kind, layout, ctx.dir)?;
    let [unsynced_dir, unsynced_npz] = save_unsynced(kind, layout, ctx.dir)?;
    let py = ctx
        .py_awkward2
        .run(PY, &[kind.into(), n.to_string(), arg(ctx.dir)])?;
    agree_py(kind, &py, want)?;
    let [load_dir, load_npz, load_ak, load_pa] = load(kind, ctx.dir, py.is_some(), want)?;
    let ak = "awkward 2";
    let p = |key: &str| opt(&py, key);
    Ok(vec![
        Row::new(format!("11. awkward 2 {kind} save buffers dir"), save_dir)
            .peer_opt(ak, p("save_dir")?)
            .note(what),
        Row::new(
            format!("11. awkward 2 {kind} save buffers dir, unsynced like the peer"),
            unsynced_dir,
        )
        .peer_opt(ak, p("save_dir")?),
        Row::new(format!("11. awkward 2 {kind} load buffers dir"), load_dir)
            .peer_opt(ak, p("load_dir")?),
        Row::new(format!("11. awkward 2 {kind} save .npz"), save_npz).peer_opt(ak, p("save_npz")?),
        Row::new(
            format!("11. awkward 2 {kind} save .npz, unsynced like the peer"),
            unsynced_npz,
        )
        .peer_opt(ak, p("save_npz")?),
        Row::new(format!("11. awkward 2 {kind} load .npz"), load_npz).peer_opt(ak, p("load_npz")?),
        Row::new(
            format!("11. {kind} save Parquet (zstd) vs ak.to_parquet"),
            save_pq,
        )
        .peer_opt(ak, p("to_parquet")?),
        Row::new(
            format!("11. {kind} load Parquet vs ak.from_parquet"),
            load_ak,
        )
        .peer_opt(ak, p("from_parquet")?),
        Row::new(
            format!("11. {kind} save Parquet (zstd) vs pyarrow"),
            save_pq,
        )
        .peer_opt("pyarrow", p("pa_write")?),
        Row::new(format!("11. {kind} load Parquet vs pyarrow"), load_pa)
            .peer_opt("pyarrow", p("pa_read")?),
    ])
}

pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let n_lists = ((10_000_000.0 * ctx.scale) as usize).max(1000);
    let n_records = ((1_000_000.0 * ctx.scale) as usize).max(100);
    let j = jagged(n_lists);
    let total = j.children().first().map_or(0, |c| c.len());
    let what = format!("{n_lists} lists, {total} float64");
    let mut out = rows(ctx, "jagged", &what, &j)?;
    drop(j);
    let what = format!("{n_records} records {{x: float64, n: [int64], s: string}}");
    out.extend(rows(ctx, "table", &what, &table(n_records))?);
    Ok(out)
}
