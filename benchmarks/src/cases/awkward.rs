//! Case 6b: an awkward0 jagged array of 10 million lists (float64 content) saved to and loaded
//! from `.awkd`, ours against Python awkward0 0.15.5.

use std::sync::Arc;

use asdf_awkward::{
    save_awkd, AwkdFile, Buffer, JaggedArray, Layout, ListIndex, NumpyArray, SaveMode, WriteOptions,
};

use super::{arg, Ctx};
use crate::data::check_sum;
use crate::measure::{best, BenchError, Result, Row};
use crate::python::opt;

const PY: &str = r#"
import numpy as np, awkward0 as A
n, theirs, ours = int(sys.argv[1]), sys.argv[2], sys.argv[3]
counts = (np.arange(n) % 5).astype(np.int64)
content = np.arange(counts.sum(), dtype=np.float64) * 0.5
arr = A.JaggedArray.fromcounts(counts, content)
t, _ = best(lambda: A.save(theirs, arr, mode="w")); out("save", t)
t, a = best(lambda: A.load(theirs)); out("load", t)
out("lists", len(a)); out("sum", a.content.sum())
r = A.load(ours)
out("ours_lists", len(r)); out("ours_sum", r.content.sum())
"#;

/// (lists, content length, content sum) of a loaded jagged array.
fn summary(l: &Layout) -> Result<(usize, usize, f64)> {
    let bad = |m: &str| BenchError::mismatch("awkward", m.to_string());
    let Layout::Jagged(j) = l else {
        return Err(bad("not a JaggedArray"));
    };
    let Layout::Numpy(c) = j.content.as_ref() else {
        return Err(bad("content is not a numpy array"));
    };
    let Buffer::F64(v) = c.data() else {
        return Err(bad("content is not float64"));
    };
    Ok((j.index.len(), v.len(), v.iter().sum()))
}

pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let n = ((10_000_000.0 * ctx.scale) as usize).max(1000);
    let counts: Vec<i64> = (0..n as i64).map(|i| i % 5).collect();
    let total: i64 = counts.iter().sum();
    let content: Vec<f64> = (0..total).map(|i| i as f64 * 0.5).collect();
    let want: f64 = content.iter().sum();
    let array = Layout::Jagged(JaggedArray {
        index: ListIndex::from_counts(&counts).ok_or_else(|| BenchError::ours("invalid counts"))?,
        content: Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::F64(content)))),
    });
    let ours = ctx.dir.join("ours.awkd");
    let theirs = ctx.dir.join("theirs.awkd");
    let opts = WriteOptions::default();
    let (save, ()) = best(|| {
        save_awkd(&ours, &[("", &array)], SaveMode::Create, &opts).map_err(BenchError::ours)
    })?;
    drop(array);
    let py = ctx.py.run(PY, &[n.to_string(), arg(&theirs), arg(&ours)])?;
    if let Some(s) = opt(&py, "ours_sum")? {
        check_sum("awkward", "awkward0 reading ours", s, want)?;
        check_sum("awkward", "awkward0", opt(&py, "sum")?.unwrap_or(s), want)?;
    }
    // Load Python's file when there is one (the same file awkward0 loads), else ours.
    let load_path = if py.is_some() { &theirs } else { &ours };
    let (load, loaded) = best(|| {
        AwkdFile::open(load_path)
            .and_then(|f| f.read(""))
            .map_err(BenchError::ours)
    })?;
    let (lists, _, s) = summary(&loaded)?;
    if lists != n {
        return Err(BenchError::mismatch(
            "awkward",
            format!("{lists} lists, not {n}"),
        ));
    }
    check_sum("awkward", "ours", s, want)?;
    let note = format!("{n} lists, {total} float64");
    Ok(vec![
        Row::new("6. awkward0 jagged save .awkd", save)
            .peer_opt("awkward0", opt(&py, "save")?)
            .note(note),
        Row::new("6. awkward0 jagged load .awkd", load).peer_opt("awkward0", opt(&py, "load")?),
    ])
}
