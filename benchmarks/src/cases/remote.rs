//! Case 7 (issue 18): files on S3. An S3-compatible server (`moto_server` from the interop venv)
//! on loopback behind a counting proxy, so requests and bytes are counted the same way for
//! every client; ours (`RemoteFile`) against Python asdf 6.0.0 over `s3fs`, on the same
//! objects: (a) `info`, (b) one array out of 100, (c) a 1/16 region of a 1 GiB array (plain, and
//! as an asdf-zarr array both sides read chunk by chunk), (d) a
//! whole 1 GiB compressed array. Each operation starts from nothing (a new file, a new
//! `S3FileSystem`): traffic is that of one run, time the best of several.

use asdf::remote::{RemoteFile, RemoteOptions};
use asdf::yaml::Node;
use asdf::{AsdfWriter, StoreOptions};
use asdf_testkit::http::{CountingProxy, MotoServer};
use ndarray::Array2;

use super::Ctx;
use crate::data::scaled;
use crate::measure::{best, BenchError, Result, Row};

const PY: &str = r#"
import asdf, numpy as np, s3fs
warm()
endpoint, op, mode, q = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
keys = {"info": "gib.asdf", "one": "many.asdf", "region": "gib.asdf", "whole": "zstd.asdf",
        "zarr": "zarr.asdf"}
def run():
    fs = s3fs.S3FileSystem(endpoint_url=endpoint, key="testing", secret="testing",
                           client_kwargs={"region_name": "us-east-1"}, skip_instance_cache=True)
    with fs.open("bench/" + keys[op], "rb") as fd:
        with asdf.open(fd, lazy_load=True, memmap=False) as af:
            if op == "info":
                return float(len(af.tree))
            if op == "one":
                return float(np.asarray(af.tree["a57"]).sum())
            if op in ("region", "zarr"):
                return float(np.asarray(af.tree["data"][:q, :q], dtype=np.float64).sum())
            return float(np.asarray(af.tree["data"], dtype=np.float64).sum())
if mode == "count":
    out("sum", run())
else:
    t, s = best(run)
    out("time", t)
"#;

/// Writes `zarr.asdf` (into the directory `argv[2]`) with asdf-zarr: the array of the ASDF file
/// `argv[1]` as a zarr array of 16 × 16 zstd chunks, each chunk an ASDF block.
const MAKE_ZARR: &str = r#"
import asdf, zarr, numcodecs
with asdf.open(sys.argv[1], lazy_load=False, memmap=False) as src:
    a = src.tree["data"]
    n = a.shape[0]
    z = zarr.array(a, chunks=(n // 16, n // 16), compressor=numcodecs.Zstd(level=3))
asdf.AsdfFile({"data": z}).write_to(sys.argv[2] + "/zarr.asdf")
out("n", float(n))
"#;

/// The asdf-zarr copy of `gib.asdf` Python writes (asdf-zarr 0.0.4), or `None` without it.
fn zarr_object(ctx: &Ctx, gib: &[u8]) -> Result<Option<Vec<u8>>> {
    let src = ctx.dir.join("gib-for-zarr.asdf");
    std::fs::write(&src, gib).map_err(|e| BenchError::io(&src, e))?;
    let args = [src.display().to_string(), ctx.dir.display().to_string()];
    let made = ctx.py.run(MAKE_ZARR, &args)?;
    let _ = std::fs::remove_file(&src);
    if made.is_none() {
        return Ok(None);
    }
    let path = ctx.dir.join("zarr.asdf");
    let bytes = std::fs::read(&path).map_err(|e| BenchError::io(&path, e))?;
    let _ = std::fs::remove_file(&path);
    Ok(Some(bytes))
}

/// The objects of the case, by key: sizes scaled from 1 GiB arrays and 100 arrays of 1 MiB.
struct Objects {
    /// Side of the square float32 arrays.
    n: usize,
    files: Vec<(String, Vec<u8>)>,
}

/// The arrays: the values of the other cases (`counts_f64`, 100 to 195 in steps of 1/8, which
/// compress about as well as real measurements), as float32.
fn pattern(n: usize) -> Result<Array2<f32>> {
    let v: Vec<f32> = crate::data::counts_f64(n * n)
        .into_iter()
        .map(|x| x as f32)
        .collect();
    Array2::from_shape_vec((n, n), v).map_err(BenchError::ours)
}

fn bytes_of(w: AsdfWriter, tree: Node) -> Result<Vec<u8>> {
    w.to_bytes(tree, &Default::default())
        .map_err(BenchError::ours)
}

fn objects(scale: f64) -> Result<Objects> {
    let side = ((scaled(1 << 30, scale, 1 << 10) / 4) as f64).sqrt() as usize;
    let n = (side / 64).max(1) * 64;
    let a = pattern(n)?;
    let one = |store: &StoreOptions, chunks: Option<&[usize]>| -> Result<Vec<u8>> {
        let mut w = AsdfWriter::new();
        let node = match chunks {
            Some(c) => w.add_chunked(&a, Some(c), store),
            None => w.add(&a, store),
        }
        .map_err(BenchError::ours)?;
        bytes_of(w, Node::mapping([("data", node)]))
    };
    let zstd = StoreOptions::compressed("zstd").map_err(BenchError::ours)?;
    let mut files = vec![
        ("gib.asdf".to_string(), one(&StoreOptions::default(), None)?),
        (
            "chunked.asdf".to_string(),
            one(&zstd, Some(&[n / 16, n / 16]))?,
        ),
        ("zstd.asdf".to_string(), one(&zstd, None)?),
    ];
    let len = (scaled(1 << 20, scale, 8 << 10) / 8) as usize;
    let mut w = AsdfWriter::new();
    let mut pairs = Vec::new();
    for k in 0..100 {
        let arr = ndarray::Array1::<f64>::from_elem(len, k as f64);
        let node = w
            .add(&arr, &StoreOptions::default())
            .map_err(BenchError::ours)?;
        pairs.push((format!("a{k}"), node));
    }
    files.push(("many.asdf".to_string(), bytes_of(w, Node::mapping(pairs))?));
    Ok(Objects { n, files })
}

/// One operation of ours: the sum of what it read.
fn ours(op: &str, endpoint: &str, q: usize) -> Result<f64> {
    let options = RemoteOptions {
        endpoint: Some(endpoint.to_string()),
        region: Some("us-east-1".into()),
        config: vec![
            ("aws_access_key_id".into(), "testing".into()),
            ("aws_secret_access_key".into(), "testing".into()),
        ],
        ..RemoteOptions::default()
    };
    let key = match op {
        "info" | "region" => "gib.asdf",
        "chunked" => "chunked.asdf",
        "zarr" => "zarr.asdf",
        "one" => "many.asdf",
        _ => "zstd.asdf",
    };
    let f = RemoteFile::open(&format!("s3://bench/{key}"), &options).map_err(BenchError::ours)?;
    let sum = |a: ndarray::ArrayD<f32>| a.iter().map(|&x| f64::from(x)).sum::<f64>();
    Ok(match op {
        // What `asdftool info --show-blocks` shows: the tree and every block header.
        "info" => {
            let blocks = f.blocks().map_err(BenchError::ours)?.len();
            (f.tree().as_map().map_or(0, |m| m.len()) + blocks) as f64
        }
        "one" => f.array::<f64>("/a57").map_err(BenchError::ours)?.sum(),
        "region" | "chunked" | "zarr" => sum(f
            .read_region::<f32>("/data", &[0..q, 0..q])
            .map_err(BenchError::ours)?),
        _ => sum(f.array::<f32>("/data").map_err(BenchError::ours)?),
    })
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 10 << 20 => format!("{} MiB", b >> 20),
        b if b >= 10 << 10 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// What one side did for one operation: time, and the traffic of one run.
struct Side {
    secs: f64,
    requests: u64,
    bytes: u64,
}

fn measure_ours(proxy: &CountingProxy, op: &str, q: usize) -> Result<(Side, f64)> {
    proxy.take();
    let got = ours(op, &proxy.endpoint(), q)?;
    let (requests, bytes) = proxy.take();
    let (secs, _) = best(|| ours(op, &proxy.endpoint(), q))?;
    proxy.take();
    Ok((
        Side {
            secs,
            requests,
            bytes,
        },
        got,
    ))
}

fn measure_python(
    ctx: &Ctx,
    proxy: &CountingProxy,
    op: &str,
    q: usize,
) -> Result<Option<(Side, f64)>> {
    let args = |mode: &str| {
        vec![
            proxy.endpoint(),
            op.to_string(),
            mode.to_string(),
            q.to_string(),
        ]
    };
    proxy.take();
    let Some(count) = ctx.py.run(PY, &args("count"))? else {
        return Ok(None);
    };
    let (requests, bytes) = proxy.take();
    let timed = ctx.py.run(PY, &args("time"))?;
    proxy.take();
    let secs = crate::python::opt(&timed, "time")?.unwrap_or(f64::NAN);
    Ok(Some((
        Side {
            secs,
            requests,
            bytes,
        },
        count.get("sum")?,
    )))
}

pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let Some(python) = ctx.py.exe() else {
        eprintln!("   no Python: no S3 server, case skipped");
        return Ok(Vec::new());
    };
    let mut objects = objects(ctx.scale)?;
    let gib = objects
        .files
        .iter()
        .find(|(k, _)| k == "gib.asdf")
        .map(|(_, b)| b);
    if let Some(z) = zarr_object(ctx, gib.map_or(&[][..], |b| &b[..]))? {
        objects.files.push(("zarr.asdf".to_string(), z));
    }
    let moto = MotoServer::start(python).map_err(|e| BenchError::io(python, e))?;
    moto.fill("bench", &objects.files)
        .map_err(|e| BenchError::io(python, e))?;
    let total: Vec<(String, u64)> = objects
        .files
        .iter()
        .map(|(k, b)| (k.clone(), b.len() as u64))
        .collect();
    drop(objects.files);
    let proxy = CountingProxy::start(&moto.addr).map_err(|e| BenchError::io(python, e))?;
    let q = objects.n / 4;
    let size = |k: &str| total.iter().find(|(n, _)| n == k).map_or(0, |(_, s)| *s);
    let cases = [
        ("info", "info", "(a) info", size("gib.asdf")),
        ("one", "one", "(b) one array out of 100", size("many.asdf")),
        (
            "region",
            "region",
            "(c) 1/16 region of an uncompressed array",
            size("gib.asdf"),
        ),
        (
            "chunked",
            "region",
            "(c) 1/16 region of a chunked zstd array (Python: of the uncompressed one)",
            size("chunked.asdf"),
        ),
        (
            "zarr",
            "zarr",
            "(c) 1/16 region of an asdf-zarr array (16 × 16 zstd chunks)",
            size("zarr.asdf"),
        ),
        ("whole", "whole", "(d) whole zstd array", size("zstd.asdf")),
    ];
    let mut rows = Vec::new();
    for (op, py_op, label, file) in cases {
        if file == 0 {
            continue; // the asdf-zarr object needs Python's asdf-zarr
        }
        rows.push(remote_row(ctx, &proxy, (op, py_op, label), file, q)?);
    }
    Ok(rows)
}

/// One row: our `op` and Python's `py_op` through the counting proxy, their sums compared, the
/// requests and bytes each side fetched of a `file`-byte object in the note.
fn remote_row(
    ctx: &Ctx,
    proxy: &CountingProxy,
    (op, py_op, label): (&str, &str, &str),
    file: u64,
    q: usize,
) -> Result<Row> {
    let (o, got) = measure_ours(proxy, op, q)?;
    let p = measure_python(ctx, proxy, py_op, q)?;
    if let Some((_, want)) = &p {
        if op != "info" {
            crate::data::check_sum("remote", op, got, *want)?;
        }
    }
    let mut note = format!(
        "{} file; ours {} requests / {}",
        human(file),
        o.requests,
        human(o.bytes)
    );
    if let Some((p, _)) = &p {
        note.push_str(&format!(
            "; Python {} requests / {}",
            p.requests,
            human(p.bytes)
        ));
    }
    Ok(
        Row::new(format!("7. S3 {label} vs Python asdf + s3fs"), o.secs)
            .peer_opt("Python asdf", p.as_ref().map(|(p, _)| p.secs))
            .note(note),
    )
}
