//! Read/write throughput on a 1 GiB float64 array, against `numpy.fromfile`/`ndarray.tofile`.
//!
//! Not part of the test run. Build with optimisations and run:
//!
//! ```text
//! cargo run --release -p rawarray --example compare_1gib -- [MiB] [python]
//! ```
//!
//! `MiB` defaults to 1024; `python` defaults to the interop virtualenv's interpreter (NumPy is
//! skipped when it is missing). Every figure is the best of 3 runs, with the file in the page
//! cache (all readers see the same warm cache).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rawarray::{ByteOrder, MappedRawArray, RawArray, ReadOptions, WriteOptions};

fn best<F: FnMut()>(mut f: F) -> Duration {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn report(name: &str, bytes: u64, d: Duration) {
    println!(
        "{name:<44} {:>8.1} ms {:>8.0} MB/s",
        d.as_secs_f64() * 1e3,
        bytes as f64 / d.as_secs_f64() / 1e6
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let mib: u64 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(1024);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python: PathBuf = args
        .get(2)
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/interop-venv/bin/python"));
    let dir = root.join("target/test-tmp/compare-1gib");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("big.ra");
    let path_be = dir.join("big_be.ra");

    let n = (mib << 20) / 8;
    let cols = 1024u64;
    let dims = [n / cols, cols];
    let bytes = n * 8;
    let data: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
    println!(
        "array: {} x {} float64 = {} MiB",
        dims[0],
        dims[1],
        bytes >> 20
    );

    report(
        "rawarray::save (tmp + fsync + rename)",
        bytes,
        best(|| rawarray::save(&path, &data, &dims, &WriteOptions::default()).unwrap()),
    );
    report(
        "rawarray::write_slice to File (no fsync)",
        bytes,
        best(|| {
            let f = std::fs::File::create(dir.join("plain.ra")).unwrap();
            rawarray::write_slice(f, &data, &dims, &WriteOptions::default()).unwrap();
        }),
    );
    rawarray::save(
        &path_be,
        &data,
        &dims,
        &WriteOptions::with_byte_order(ByteOrder::Big),
    )?;
    drop(data);

    report(
        "rawarray::open_vec::<f64>",
        bytes,
        best(|| drop(rawarray::open_vec::<f64, _>(&path).unwrap())),
    );
    report(
        "rawarray::open_array::<f64> (ArrayD)",
        bytes,
        best(|| drop(rawarray::open_array::<f64, _>(&path, &ReadOptions::default()).unwrap())),
    );
    report(
        "rawarray::open_vec::<f64> big-endian (swap)",
        bytes,
        best(|| drop(rawarray::open_vec::<f64, _>(&path_be).unwrap())),
    );
    report(
        "RawArray::open (dynamic bytes)",
        bytes,
        best(|| drop(RawArray::open(&path, &ReadOptions::default()).unwrap())),
    );
    report(
        "MappedRawArray::open + view + sum",
        bytes,
        best(|| {
            let m = MappedRawArray::open(&path).unwrap();
            std::hint::black_box(m.view::<f64>().unwrap().sum());
        }),
    );

    if python.exists() {
        let script = r#"
import sys, time, numpy as np
path, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
hdr = 48 + 16
def best(f):
    ts = []
    for _ in range(3):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return min(ts)
holder = {}
def rd():
    holder['a'] = np.fromfile(path, dtype='<f8', count=n, offset=hdr)
t = best(rd)
print('numpy.fromfile                               %8.1f ms %8.0f MB/s' % (t * 1e3, n * 8 / t / 1e6))
a = holder['a']
def wr():
    with open(out, 'wb') as f:
        f.write(b'\0' * hdr)
        a.tofile(f)
t = best(wr)
print('ndarray.tofile (no fsync)                    %8.1f ms %8.0f MB/s' % (t * 1e3, n * 8 / t / 1e6))
"#;
        let out = Command::new(&python)
            .arg("-c")
            .arg(script)
            .arg(&path)
            .arg(n.to_string())
            .arg(dir.join("numpy_out.bin"))
            .output()?;
        print!("{}", String::from_utf8_lossy(&out.stdout));
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
    } else {
        println!("(NumPy skipped: {} not found)", python.display());
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
