//! Case 3: one 1 GiB uncompressed float64 array: zero-copy view, then a full copy; with and
//! without checksum verification. Limits: memcpy of the same bytes, MD5 of the same bytes.

use std::hint::black_box;
use std::path::Path;

use asdf::block::ChecksumPolicy;
use asdf::yaml::Node;
use asdf::{OpenOptions, StoreOptions};
use md5::Digest;

use super::{arg, Ctx};
use crate::data::{check_sum, counts_f64, scaled, sum};
use crate::measure::{best, best_fast, BenchError, Result, Row};
use crate::python::opt;

const PY: &str = r#"
import asdf, numpy as np
warm()
p = sys.argv[1]
def view():
    with asdf.open(p, memmap=True, validate_checksums=False) as af:
        return np.asarray(af.tree["data"]).shape
t, _ = best(view); out("view", t)
def copy(check):
    with asdf.open(p, memmap=False, lazy_load=False, validate_checksums=check) as af:
        return np.asarray(af.tree["data"])
t, a = best(lambda: copy(False)); out("copy", t); out("sum", a.sum()); del a
t, a = best(lambda: copy(True)); out("copy_md5", t); del a
"#;

/// Writes `data` as the array `/data`, its block aligned so it can be viewed in place.
fn write_file(path: &Path, data: &[f64]) -> Result<()> {
    let mut w = asdf::AsdfWriter::new();
    let node = w
        .add(&ndarray::ArrayView1::from(data), &StoreOptions::default())
        .map_err(BenchError::ours)?;
    let mut wo = asdf::WriteOptions::default();
    wo.blocks.align = 64;
    w.write_path(path, Node::mapping([("data", node)]), &wo)
        .map_err(BenchError::ours)
}

fn opts(policy: ChecksumPolicy) -> OpenOptions {
    let mut o = OpenOptions::default();
    o.blocks.checksums = policy;
    o
}

/// Our times on the big file (and the view on the small one).
struct Ours {
    view: f64,
    small_view: f64,
    view_md5: f64,
    copy: f64,
    copy_md5: f64,
    block: f64,
}

/// asdf-rs's times on the big file.
struct Rs {
    view: f64,
    block: f64,
    copy: f64,
    copy_md5: f64,
}

pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let bytes = scaled(1 << 30, ctx.scale, 1 << 20);
    let n = (bytes / 8) as usize;
    let path = ctx.dir.join("uncompressed.asdf");
    let small = ctx.dir.join("small.asdf");
    write_file(&small, &counts_f64(1 << 17))?; // 1 MiB: the view must cost the same
    let want = {
        let data = counts_f64(n);
        write_file(&path, &data)?;
        sum(&data)
    };
    let size = format!("{} MiB float64", bytes >> 20);
    let (memcpy, md5_t) = limits(&path, bytes)?;
    let ours = ours(&path, &small, n, want)?;
    let rs = asdf_rs_times(&path, want)?;
    let py = ctx.py.run(PY, &[arg(&path)])?;
    if let Some(s) = opt(&py, "sum")? {
        check_sum("copy", "Python asdf", s, want)?;
    }
    let p = |k| opt(&py, k);
    Ok(vec![
        Row::new(
            "3. view (zero-copy, no checksum) vs Python asdf memmap",
            ours.view,
        )
        .peer_opt("Python asdf", p("view")?)
        .note(size.clone()),
        Row::new("3. view (zero-copy) vs the same on a 1 MiB file", ours.view)
            .peer("ours, 1 MiB", ours.small_view)
            .note("O(1): ratio near 1"),
        Row::new(
            "3. view (zero-copy, no checksum) vs asdf-rs tree() + block_data",
            ours.view,
        )
        .peer("asdf-rs", rs.view),
        Row::new(
            "3. block bytes without the tree: BlockReader::open + data vs asdf-rs block_data",
            ours.block,
        )
        .peer("asdf-rs", rs.block),
        Row::new("3. full copy vs memcpy (limit)", ours.copy)
            .peer("memcpy", memcpy)
            .bytes(bytes),
        Row::new("3. full copy vs Python asdf", ours.copy)
            .peer_opt("Python asdf", p("copy")?)
            .bytes(bytes),
        Row::new("3. full copy vs asdf-rs", ours.copy)
            .peer("asdf-rs", rs.copy)
            .bytes(bytes),
        Row::new("3. view + MD5 verified vs MD5 (limit)", ours.view_md5)
            .peer("md-5", md5_t)
            .bytes(bytes),
        Row::new("3. copy + MD5 verified vs Python asdf", ours.copy_md5)
            .peer_opt("Python asdf", p("copy_md5")?)
            .bytes(bytes),
        Row::new("3. copy + MD5 verified vs asdf-rs", ours.copy_md5)
            .peer("asdf-rs", rs.copy_md5)
            .bytes(bytes),
    ])
}

/// The limits, over the same bytes (the file, memory-mapped, in the page cache): memcpy and
/// MD5 of the array's `bytes`.
fn limits(path: &Path, bytes: u64) -> Result<(f64, f64)> {
    let map = asdf::block::map_file(path).map_err(BenchError::ours)?;
    let payload = &map[map.len() - bytes as usize..];
    // memcpy into a buffer whose pages are already mapped: memory bandwidth alone (our copy
    // also pays for allocating and faulting in its output).
    let mut dst = payload.to_vec();
    let (memcpy, ()) = best(|| {
        dst.copy_from_slice(payload);
        black_box(&dst);
        Ok(())
    })?;
    drop(dst);
    let (md5_t, _) = best(|| Ok(black_box(md5::Md5::digest(payload))))?;
    Ok((memcpy, md5_t))
}

/// Our views, copies and block read of the `n` floats (summing to `want`) in `path`.
fn ours(path: &Path, small: &Path, n: usize, want: f64) -> Result<Ours> {
    let view_of = |p: &Path| {
        best_fast(|| {
            let f = asdf::AsdfFile::open_with(p, &opts(ChecksumPolicy::Skip))
                .map_err(BenchError::ours)?;
            let v = f.view::<f64>("/data").map_err(BenchError::ours)?;
            Ok(black_box(v.len()))
        })
    };
    let (view, len) = view_of(path)?;
    let (small_view, _) = view_of(small)?;
    if len != n {
        return Err(BenchError::mismatch(
            "view",
            format!("{len} elements, not {n}"),
        ));
    }
    let (view_md5, _) = best(|| {
        let f = asdf::AsdfFile::open_with(path, &opts(ChecksumPolicy::Strict))
            .map_err(BenchError::ours)?;
        let v = f.view::<f64>("/data").map_err(BenchError::ours)?;
        Ok(black_box(v.len()))
    })?;
    let copy_with = |policy| {
        best(|| {
            let f = asdf::AsdfFile::open_with(path, &opts(policy)).map_err(BenchError::ours)?;
            f.array::<f64>("/data").map_err(BenchError::ours)
        })
    };
    let (copy, a) = copy_with(ChecksumPolicy::Skip)?;
    check_sum("copy", "ours", a.sum(), want)?;
    drop(a);
    let (copy_md5, a) = copy_with(ChecksumPolicy::Strict)?;
    drop(a);
    let (block, _) = best_fast(|| {
        let o = asdf::block::ReadOptions {
            checksums: ChecksumPolicy::Skip,
            ..Default::default()
        };
        let r = asdf::block::BlockReader::open(path, 0, o).map_err(BenchError::ours)?;
        let d = r.data(0).map_err(BenchError::ours)?;
        Ok(black_box(d.len()))
    })?;
    Ok(Ours {
        view,
        small_view,
        view_md5,
        copy,
        copy_md5,
        block,
    })
}

/// asdf-rs on the same file. It opens without parsing the tree; a view needs it (to find the
/// array's block), so the same work there is `tree()` then `block_data`. The block bytes alone
/// are compared with our block layer, which does not parse the tree either.
fn asdf_rs_times(path: &Path, want: f64) -> Result<Rs> {
    let rs_err = |e: asdf_rs::Error| BenchError::peer("asdf-rs", e);
    let (view, _) = best_fast(|| {
        let f = asdf_rs::AsdfFile::open(path).map_err(rs_err)?;
        let tree = f.tree().map_err(rs_err)?;
        black_box(&tree);
        let d = f.block_data(0).map_err(rs_err)?;
        Ok(black_box(d.len()))
    })?;
    let (block, _) = best_fast(|| {
        let f = asdf_rs::AsdfFile::open(path).map_err(rs_err)?;
        let d = f.block_data(0).map_err(rs_err)?;
        Ok(black_box(d.len()))
    })?;
    let (copy, v) = best(|| {
        let f = asdf_rs::AsdfFile::open(path).map_err(rs_err)?;
        f.read_array_of::<f64>("data").map_err(rs_err)
    })?;
    check_sum("copy", "asdf-rs", sum(&v), want)?;
    drop(v);
    let (copy_md5, _) = best(|| {
        let f = asdf_rs::AsdfFile::open(path).map_err(rs_err)?;
        let status = f.verify_block(0).map_err(rs_err)?;
        if !matches!(status, asdf_rs::ChecksumStatus::Valid) {
            return Err(BenchError::peer("asdf-rs", format!("checksum {status:?}")));
        }
        f.read_array_of::<f64>("data").map_err(rs_err)
    })?;
    Ok(Rs {
        view,
        block,
        copy,
        copy_md5,
    })
}
