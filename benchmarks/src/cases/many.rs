//! Case 2: open a file with 10 000 small arrays and read every one.

use std::path::Path;

use asdf::block::ChecksumPolicy;
use asdf::ndarray::NdArrayMeta;
use asdf::yaml::Node;
use asdf::{OpenOptions, StoreOptions};

use super::{arg, Ctx};
use crate::data::{check_sum, counts_f64, sum};
use crate::measure::{best, BenchError, Result, Row};
use crate::python::opt;

const LEN: usize = 128;

const PY: &str = r#"
import asdf, numpy as np
warm()
p, n = sys.argv[1], int(sys.argv[2])
def run():
    with asdf.open(p, lazy_load=False, memmap=False) as af:
        arrays = af.tree["arrays"]
        assert len(arrays) == n
        return sum(float(np.asarray(a).sum()) for a in arrays.values())
t, s = best(run)
out("read_all", t)
out("sum", s)
"#;

/// Writes `n` float64 arrays of [`LEN`] into `path` under `/arrays`; returns the sum of all.
fn write_many(path: &Path, n: usize) -> Result<f64> {
    let data = counts_f64(n * LEN);
    let mut w = asdf::AsdfWriter::new();
    let mut arrays = Vec::with_capacity(n);
    for (i, chunk) in data.chunks(LEN).enumerate() {
        let a = ndarray::ArrayView1::from(chunk);
        let node = w
            .add(&a, &StoreOptions::default())
            .map_err(BenchError::ours)?;
        arrays.push((format!("a{i:05}"), node));
    }
    let tree = Node::mapping([("arrays", Node::mapping(arrays))]);
    w.write_path(path, tree, &Default::default())
        .map_err(BenchError::ours)?;
    Ok(sum(&data))
}

/// Our read of every array through JSON Pointers (`AsdfFile::arrays` then `AsdfFile::array`),
/// and asdf-rs's read of every array.
fn by_pointer_and_asdf_rs(path: &Path, want: f64) -> Result<(f64, f64)> {
    let (ours_ptr, got) = best(|| {
        let f = asdf::AsdfFile::open(path).map_err(BenchError::ours)?;
        let mut s = 0.0;
        for (pointer, _) in f.arrays() {
            s += f.array::<f64>(&pointer).map_err(BenchError::ours)?.sum();
        }
        Ok(s)
    })?;
    check_sum("many", "ours by pointer", got, want)?;
    let (rs, got) = best(|| {
        let e = |e: asdf_rs::Error| BenchError::peer("asdf-rs", e);
        let f = asdf_rs::AsdfFile::open(path).map_err(e)?;
        super::rs_sum_arrays(&f)
    })?;
    check_sum("many", "asdf-rs", got, want)?;
    Ok((ours_ptr, rs))
}

pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let n = ((10_000.0 * ctx.scale) as usize).max(100);
    let path = ctx.dir.join("many.asdf");
    let want = write_many(&path, n)?;
    let note = format!("{n} float64 arrays of {LEN}");

    // Like the peers: iterate over the mapping of arrays, read each node's array. Our default
    // verifies every block's MD5; Python asdf and asdf-rs verify nothing unless asked, so the
    // same work as theirs is the run with checksums skipped.
    let read_all = |options: &OpenOptions| {
        best(|| {
            let f = asdf::AsdfFile::open_with(&path, options).map_err(BenchError::ours)?;
            let arrays = f
                .pointer("/arrays")
                .and_then(|a| a.as_map())
                .ok_or_else(|| BenchError::mismatch("many", "no /arrays mapping"))?;
            let mut s = 0.0;
            for node in arrays.values() {
                let meta = NdArrayMeta::from_node(node).map_err(BenchError::ours)?;
                s += meta.array::<f64>(&f).map_err(BenchError::ours)?.sum();
            }
            Ok(s)
        })
    };
    let (ours, got) = read_all(&OpenOptions::default())?;
    check_sum("many", "ours", got, want)?;
    let mut skip = OpenOptions::default();
    skip.blocks.checksums = ChecksumPolicy::Skip;
    let (ours_skip, got) = read_all(&skip)?;
    check_sum("many", "ours, checksums skipped", got, want)?;
    let (ours_ptr, rs) = by_pointer_and_asdf_rs(&path, want)?;

    let py = ctx.py.run(PY, &[arg(&path), n.to_string()])?;
    if let Some(s) = opt(&py, "sum")? {
        check_sum("many", "Python asdf", s, want)?;
    }
    Ok(vec![
        Row::new(
            "2. open + read all arrays, checksums skipped like the peers, vs Python asdf",
            ours_skip,
        )
        .peer_opt("Python asdf", opt(&py, "read_all")?)
        .note(note.clone()),
        Row::new(
            "2. open + read all arrays, checksums skipped like the peers, vs asdf-rs",
            ours_skip,
        )
        .peer("asdf-rs", rs)
        .note(note.clone()),
        Row::new(
            "2. open + read all arrays, every MD5 verified (our default), vs Python asdf",
            ours,
        )
        .peer_opt("Python asdf", opt(&py, "read_all")?)
        .note(note.clone()),
        Row::new(
            "2. open + read all arrays, every MD5 verified (our default), vs asdf-rs",
            ours,
        )
        .peer("asdf-rs", rs)
        .note(note),
        Row::new(
            "2. open + read all arrays by JSON Pointer vs Python asdf",
            ours_ptr,
        )
        .peer_opt("Python asdf", opt(&py, "read_all")?)
        .note("AsdfFile::arrays + AsdfFile::array"),
    ])
}
