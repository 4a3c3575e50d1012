//! Case 8: the `asdf_rs` Python package against Python asdf 6.0.0, both in one Python process
//! (`asdf-python/bench/compare.py`): open + walk a 100 000-item tree, open + read 10 000 small
//! arrays, read 1 GiB zlib / lz4 / zstd, view 1 GiB uncompressed, write 1 GiB zstd, and a dask
//! sum over a chunked 1 GiB zstd array on 2 worker processes against 1.
//!
//! `cargo xtask bench` builds the extension (release) into the interop venv first; without it
//! (or without Python) the case reports why it did not run.

use std::path::PathBuf;

use super::{arg, Ctx};
use crate::measure::{BenchError, Result, Row};

/// Runs `compare.py` (path, then its arguments) as `__main__`, unless `asdf_rs` is missing.
const PY: &str = r#"
import runpy
try:
    import asdf_rs
except ImportError:
    out("missing", 1)
    sys.exit(0)
script = sys.argv[1]
sys.argv = [script] + sys.argv[2:]
runpy.run_path(script, run_name="__main__")
"#;

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("asdf-python")
        .join("bench")
        .join("compare.py")
}

pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let mib = ((1024.0 * ctx.scale) as u64).max(4);
    let items = ((100_000.0 * ctx.scale) as u64).max(1000);
    let arrays = ((10_000.0 * ctx.scale) as u64).max(100);
    let args = [
        arg(&script()),
        "--mib".to_string(),
        mib.to_string(),
        "--items".to_string(),
        items.to_string(),
        "--arrays".to_string(),
        arrays.to_string(),
        "--dir".to_string(),
        arg(ctx.dir),
        "--dask".to_string(),
        "--keys".to_string(),
    ];
    let Some(out) = ctx.py.run_alone(PY, &args)? else {
        return Ok(Vec::new());
    };
    if out.get("missing").is_ok() {
        return Err(BenchError::peer(
            "asdf_rs",
            "the asdf_rs module is not installed in the venv (cargo xtask bench builds it)",
        ));
    }
    let pair = |key: &str, case: String| -> Result<Row> {
        Ok(Row::new(case, out.get(&format!("{key}_rs"))?)
            .peer("Python asdf", out.get(&format!("{key}_py"))?))
    };
    let prefix = "8. Python: asdf_rs vs asdf in one process,";
    let mut rows = vec![
        pair("tree", format!("{prefix} open + walk a {items}-item tree"))?,
        pair(
            "many",
            format!("{prefix} open + read {arrays} small arrays"),
        )?,
    ];
    for codec in ["zlib", "lz4", "zstd"] {
        rows.push(
            pair(
                &format!("read_{codec}"),
                format!("{prefix} read {codec} ({mib} MiB)"),
            )?
            .bytes(mib << 20),
        );
    }
    rows.push(pair(
        "view",
        format!("{prefix} view uncompressed ({mib} MiB, one element)"),
    )?);
    rows.push(pair("write_zstd", format!("{prefix} write zstd ({mib} MiB)"))?.bytes(mib << 20));
    rows.push(
        pair(
            "write_zstd_unsynced",
            format!("{prefix} write zstd, unsynced like the peer (sync=False)"),
        )?
        .bytes(mib << 20),
    );
    rows.push(
        Row::new(
            format!("8. Python: to_dask sum over a chunked zstd array ({mib} MiB, 8 chunks), 2 worker processes of one core each"),
            out.get("dask_2")?,
        )
        .peer("1 worker process", out.get("dask_1")?),
    );
    Ok(rows)
}
