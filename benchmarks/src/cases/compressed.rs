//! Cases 4 and 5: read and write compressed float64 data with each codec, as one array, as many
//! arrays and as a chunked array (checksums written, and verified on read), on one rayon thread
//! and on all cores. Limits: each codec's raw speed on the same bytes, one thread.

use std::io::{BufWriter, Write};
use std::path::Path;

use asdf::block::ChecksumPolicy;
use asdf::yaml::Node;
use asdf::{OpenOptions, StoreOptions};
use rayon::prelude::*;

use super::{arg, Ctx};
use crate::data::{check_sum, counts_f64, scaled, sum};
use crate::measure::{best, on_threads, BenchError, Result, Row};
use crate::python::{opt, Outputs};

/// Arrays in the "many arrays" layout, and chunks in the chunked one.
const PARTS: usize = 64;

/// Codec and its data size at scale 1 (chosen so the slowest peer takes a few seconds, not a
/// few minutes: zlib level 6 and bzip2 level 9 compress at 20-40 MB/s).
const CODECS: &[(&str, u64)] = &[
    ("zlib", 96 << 20),
    ("bzp2", 64 << 20),
    ("lz4", 1 << 30),
    ("zstd", 1 << 30),
    ("blsc", 1 << 30),
];

/// The codecs, in report order.
pub const CODEC_NAMES: &[&str] = &["zlib", "bzp2", "lz4", "zstd", "blsc"];

const PY: &str = r#"
import os, asdf, numpy as np
codec, raw, parts, d = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
warm(codec)
data = np.fromfile(raw, dtype="<f8")
pieces = [p.copy() for p in np.split(data, parts)]
one, many = d + "/py_one.asdf", d + "/py_many.asdf"
def w_one():
    asdf.AsdfFile({"data": data}).write_to(one, all_array_compression=codec)
def w_many():
    tree = {"arrays": {"a%03d" % i: p for i, p in enumerate(pieces)}}
    asdf.AsdfFile(tree).write_to(many, all_array_compression=codec)
t, _ = best(w_one); out("write_one", t)
t, _ = best(w_many); out("write_many", t)
os.sync()  # untimed: no write-back of the files just written during the reads
def r_one():
    with asdf.open(one, lazy_load=False, memmap=False, validate_checksums=True) as af:
        return np.asarray(af.tree["data"])
def r_many():
    with asdf.open(many, lazy_load=False, memmap=False, validate_checksums=True) as af:
        return [np.asarray(a) for a in af.tree["arrays"].values()]
r_one(); r_many()  # untimed warm-up, as on our side
t, a = best(r_one); out("read_one", t); out("sum_one", a.sum()); del a
t, a = best(r_many); out("read_many", t); out("sum_many", sum(x.sum() for x in a)); del a
"#;

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    One,
    Many,
    Chunked,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::One => "one array",
            Shape::Many => "many arrays",
            Shape::Chunked => "chunked array",
        }
    }
}

fn strict() -> OpenOptions {
    let mut o = OpenOptions::default();
    o.blocks.checksums = ChecksumPolicy::Strict;
    o
}

/// Our write of `data` in `shape` to `path` (no fsync, like Python's `write_to`).
fn write_ours(data: &[f64], codec: &str, shape: Shape, path: &Path) -> Result<()> {
    let opts = StoreOptions::compressed(codec).map_err(BenchError::ours)?;
    let mut w = asdf::AsdfWriter::new();
    let tree = match shape {
        Shape::One => {
            let node = w
                .add(&ndarray::ArrayView1::from(data), &opts)
                .map_err(BenchError::ours)?;
            Node::mapping([("data", node)])
        }
        Shape::Chunked => {
            let chunk = [data.len() / PARTS];
            let node = w
                .add_chunked(&ndarray::ArrayView1::from(data), Some(&chunk), &opts)
                .map_err(BenchError::ours)?;
            Node::mapping([("data", node)])
        }
        Shape::Many => {
            let mut arrays = Vec::with_capacity(PARTS);
            for (i, p) in data.chunks(data.len() / PARTS).enumerate() {
                let node = w
                    .add(&ndarray::ArrayView1::from(p), &opts)
                    .map_err(BenchError::ours)?;
                arrays.push((format!("a{i:03}"), node));
            }
            Node::mapping([("arrays", Node::mapping(arrays))])
        }
    };
    let file = std::fs::File::create(path).map_err(|e| BenchError::io(path, e))?;
    // A file can seek: a large zstd block is hashed and written while it is compressed.
    let out = w
        .write_to_seekable(
            BufWriter::with_capacity(1 << 20, file),
            tree,
            &Default::default(),
        )
        .map_err(BenchError::ours)?;
    out.into_inner()
        .map_err(|e| BenchError::io(path, e.into_error()))?
        .flush()
        .map_err(|e| BenchError::io(path, e))
}

/// Our read of every array in `path` with checksums verified; returns the sum of all values.
/// Many arrays are read in parallel by the caller (`par_iter` over [`asdf::AsdfFile::arrays`]).
fn read_ours(path: &Path) -> Result<f64> {
    let f = asdf::AsdfFile::open_with(path, &strict()).map_err(BenchError::ours)?;
    let pointers = f.arrays();
    let sums = pointers
        .par_iter()
        .map(|(p, _)| f.array::<f64>(p).map(|a| a.sum()).map_err(BenchError::ours))
        .collect::<Result<Vec<f64>>>()?;
    Ok(sums.iter().sum())
}

fn read_rs(path: &Path, shape: Shape) -> Result<f64> {
    let e = |e: asdf_rs::Error| BenchError::peer("asdf-rs", e);
    let f = asdf_rs::AsdfFile::open(path).map_err(e)?;
    for b in 0..f.block_count() {
        let status = f.verify_block(b).map_err(e)?;
        if !matches!(status, asdf_rs::ChecksumStatus::Valid) {
            return Err(BenchError::peer(
                "asdf-rs",
                format!("block {b}: {status:?}"),
            ));
        }
    }
    if shape == Shape::One {
        return Ok(sum(&f.read_array_of::<f64>("data").map_err(e)?));
    }
    super::rs_sum_arrays(&f)
}

fn write_rs(data: &[f64], codec: asdf_rs::Compression, shape: Shape, path: &Path) -> Result<()> {
    let e = |e: asdf_rs::Error| BenchError::peer("asdf-rs", e);
    let mut b = asdf_rs::AsdfBuilder::new().with_compression(codec);
    if shape == Shape::One {
        b.set_array_f64("data", data).map_err(e)?;
    } else {
        for (i, p) in data.chunks(data.len() / PARTS).enumerate() {
            b.set_array_f64(&format!("arrays/a{i:03}"), p).map_err(e)?;
        }
    }
    b.write_to_path(path).map_err(e)
}

fn rs_codec(codec: &str) -> Option<asdf_rs::Compression> {
    match codec {
        "zlib" => Some(asdf_rs::Compression::Zlib),
        "bzp2" => Some(asdf_rs::Compression::Bzp2),
        "lz4" => Some(asdf_rs::Compression::Lz4),
        _ => None,
    }
}

/// What the rows of one timed operation compare with.
struct Timing<'a> {
    shape: Shape,
    threads: usize,
    bytes: u64,
    /// Python asdf's time for the same operation, if it has one.
    python: Option<f64>,
    /// The data size, noted on the first row.
    size: &'a str,
    /// The codec's raw speed on one thread: name and seconds.
    limit: (String, f64),
}

/// Times an operation on one thread and on all, and adds its rows: against Python asdf (or,
/// for chunked arrays, our one-thread time); for one array on one thread also `extra` and the
/// codec limit. Returns the all-threads time.
fn thread_rows(
    rows: &mut Vec<Row>,
    label: &dyn Fn(usize) -> String,
    how: Timing<'_>,
    extra: impl Fn(f64) -> Option<Row>,
    mut time: impl FnMut(usize) -> Result<f64>,
) -> Result<f64> {
    let mut one_thread = 0.0;
    let mut all_threads = 0.0;
    for t in [1, how.threads] {
        let secs = time(t)?;
        let mut row = Row::new(label(t), secs).bytes(how.bytes);
        row = match how.shape {
            Shape::Chunked if t > 1 => row.peer("ours [1 thr]", one_thread),
            Shape::Chunked => row.note("Python asdf has no chunked ndarray"),
            _ => row.peer_opt("Python asdf", how.python),
        };
        all_threads = secs;
        if t == 1 {
            one_thread = secs;
            if how.shape == Shape::One {
                rows.push(row.clone().note(how.size));
                rows.extend(extra(secs));
                row = Row::new(label(1), secs)
                    .peer(how.limit.0.clone(), how.limit.1)
                    .bytes(how.bytes)
                    .note("limit");
            }
        }
        rows.push(row);
        if how.threads == 1 {
            break;
        }
    }
    Ok(all_threads)
}

pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for &(codec, base) in CODECS {
        if !ctx.codecs.contains(&codec) {
            continue;
        }
        eprintln!("   -- {codec}");
        rows.extend(one_codec(ctx, codec, base)?);
        crate::data::clear_dir(ctx.dir)?;
    }
    Ok(rows)
}

/// What the writes and reads of one codec share.
struct CodecRun<'a> {
    codec: &'a str,
    dir: &'a Path,
    /// Bytes of the array, and the same as a label.
    bytes: u64,
    size: String,
    /// All cores.
    threads: usize,
    /// The sum every read must give.
    want: f64,
    /// The Python side's times (`None` without Python).
    py: Option<Outputs>,
}

impl CodecRun<'_> {
    fn label(&self, what: &str, shape: Shape, t: usize) -> String {
        format!("{what} {} {} [{t} thr]", self.codec, shape.name())
    }

    fn py(&self, key: &str) -> Result<Option<f64>> {
        opt(&self.py, key)
    }
}

fn one_codec(ctx: &Ctx, codec: &str, base: u64) -> Result<Vec<Row>> {
    let unit = 8 * PARTS as u64 * 1024;
    let bytes = scaled(base, ctx.scale, unit);
    let data = counts_f64((bytes / 8) as usize);
    let want = sum(&data);
    let dir = ctx.dir;

    // Python writes first (its files are the ones everybody reads).
    let raw = dir.join(format!("{codec}.f64"));
    let le: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&raw, &le).map_err(|e| BenchError::io(&raw, e))?;
    drop(le);
    let py = ctx.py.run(
        PY,
        &[codec.to_string(), arg(&raw), PARTS.to_string(), arg(dir)],
    )?;
    std::fs::remove_file(&raw).map_err(|e| BenchError::io(&raw, e))?;
    if let Some(s) = opt(&py, "sum_one")? {
        check_sum(codec, "Python one", s, want)?;
        check_sum(
            codec,
            "Python many",
            opt(&py, "sum_many")?.unwrap_or(s),
            want,
        )?;
    }
    let run = CodecRun {
        codec,
        dir,
        bytes,
        size: format!("{} MiB", bytes >> 20),
        threads: ctx.threads,
        want,
        py,
    };
    // Limits: the codec alone, one thread, whole buffer.
    let (raw_c, raw_d) = on_threads(1, || super::limits::codec(codec, &data))??;
    let mut rows = Vec::new();
    for shape in [Shape::One, Shape::Many, Shape::Chunked] {
        write_rows(&run, &data, shape, raw_c, &mut rows)?;
    }
    drop(data);
    // Untimed: flush every file just written, so that write-back does not slow the first read.
    crate::data::sync_dir(dir)?;
    for shape in [Shape::One, Shape::Many, Shape::Chunked] {
        read_rows(&run, shape, raw_d, &mut rows)?;
    }
    Ok(rows)
}

/// The write rows of one shape: ours on 1 and all threads, beside Python, the codec alone and
/// asdf-rs.
fn write_rows(
    run: &CodecRun<'_>,
    data: &[f64],
    shape: Shape,
    raw_c: f64,
    rows: &mut Vec<Row>,
) -> Result<()> {
    let (codec, n) = (run.codec, run.threads);
    let path = run
        .dir
        .join(format!("ours_{}.asdf", shape.name().replace(' ', "_")));
    let python = match shape {
        Shape::One => run.py("write_one")?,
        Shape::Many => run.py("write_many")?,
        Shape::Chunked => None,
    };
    let all_threads = thread_rows(
        rows,
        &|t| format!("5. {}", run.label("write", shape, t)),
        Timing {
            shape,
            threads: n,
            bytes: run.bytes,
            python,
            size: &run.size,
            limit: (format!("raw {codec} compress"), raw_c),
        },
        |_| None,
        |t| Ok(on_threads(t, || best(|| write_ours(data, codec, shape, &path)))??.0),
    )?;
    if let (Some(c), true) = (rs_codec(codec), shape != Shape::Chunked) {
        let rs_path = run.dir.join("rs.asdf");
        let (t, ()) = best(|| write_rs(data, c, shape, &rs_path))?;
        std::fs::remove_file(&rs_path).map_err(|e| BenchError::io(&rs_path, e))?;
        rows.push(
            Row::new(format!("5. {}", run.label("write", shape, n)), all_threads)
                .peer("asdf-rs", t)
                .bytes(run.bytes),
        );
    }
    Ok(())
}

/// The read rows of one shape: Python's files for one and many arrays (ours when Python is
/// skipped), ours for the chunked array; ours on 1 and all threads, beside Python, the codec
/// alone, the first (warm-up) read and asdf-rs.
fn read_rows(run: &CodecRun<'_>, shape: Shape, raw_d: f64, rows: &mut Vec<Row>) -> Result<()> {
    let (codec, n, want, bytes) = (run.codec, run.threads, run.want, run.bytes);
    let dir = run.dir;
    let ours_file = dir.join(format!("ours_{}.asdf", shape.name().replace(' ', "_")));
    let path = match shape {
        Shape::One if run.py.is_some() => dir.join("py_one.asdf"),
        Shape::Many if run.py.is_some() => dir.join("py_many.asdf"),
        _ => ours_file,
    };
    // Untimed warm-up: the first read of a large file after the write phase is several times
    // slower than the next ones, whatever the thread count (see the README).
    let first = std::time::Instant::now();
    check_sum(codec, "ours (warm-up)", read_ours(&path)?, want)?;
    let first = first.elapsed().as_secs_f64();
    let python = match shape {
        Shape::One => run.py("read_one")?,
        Shape::Many => run.py("read_many")?,
        Shape::Chunked => None,
    };
    let all_threads = thread_rows(
        rows,
        &|t| format!("4. {}", run.label("read", shape, t)),
        Timing {
            shape,
            threads: n,
            bytes,
            python,
            size: &run.size,
            limit: (format!("raw {codec} decompress"), raw_d),
        },
        |secs| {
            Some(
                Row::new(format!("4. {}", run.label("read", shape, 1)), secs)
                    .peer(format!("ours, first read [{n} thr]"), first)
                    .bytes(bytes)
                    .note("warm-up effect"),
            )
        },
        |t| {
            let (secs, s) = on_threads(t, || best(|| read_ours(&path)))??;
            check_sum(codec, "ours", s, want)?;
            Ok(secs)
        },
    )?;
    if rs_codec(codec).is_some() && shape != Shape::Chunked {
        let (t, s) = best(|| read_rs(&path, shape))?;
        check_sum(codec, "asdf-rs", s, want)?;
        rows.push(
            Row::new(format!("4. {}", run.label("read", shape, n)), all_threads)
                .peer("asdf-rs", t)
                .bytes(bytes),
        );
    }
    Ok(())
}
