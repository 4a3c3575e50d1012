//! Case 9: the verbs that print or compare a whole array (`asdftool to-yaml`, `asdftool diff`) on
//! an ordinary 256 MiB `uint8` array: time, and memory beyond what the process held before, as
//! a multiple of the file (issue 21, class 11: to-yaml built a 64-byte node per element and took
//! 7.6 GB for a 64 MiB array). Memory is that of a first run; `diff`'s time is the best of several
//! on both sides, `to-yaml`'s that of its one run (it writes a gigabyte).

use asdf::StoreOptions;
use asdftool::diff::DiffOptions;
use asdftool::rewrite::Mode;

use super::{arg, Ctx};
use crate::measure::{best, with_peak, BenchError, Result, Row};
use crate::python::opt;

// Peak memory the way ours is measured (ru_maxrss would not do: a child inherits its parent's).
const PY: &str = r#"
import io
from asdf._commands.diff import diff
a, b = sys.argv[1], sys.argv[2]
warm()
def status(key):
    with open("/proc/self/status") as f:
        return int(next(l for l in f if l.startswith(key)).split()[1])
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
base = status("VmRSS")
run = lambda: diff([a, b], minimal=False, iostream=io.StringIO())
run()
out("peak_kib", status("VmHWM") - base)
t, _ = best(run)
out("diff", t)
"#;

fn memory_note(grew: Option<u64>, file: u64) -> String {
    match grew {
        Some(g) => format!(
            "peak memory +{} MiB = {:.1}× the file",
            g >> 20,
            g as f64 / file as f64
        ),
        None => "peak memory not measurable here".into(),
    }
}

pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let len = ((256u64 << 20) as f64 * ctx.scale) as usize;
    let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    let (a, b) = (ctx.dir.join("a.asdf"), ctx.dir.join("b.asdf"));
    for path in [&a, &b] {
        let mut w = asdf::AsdfWriter::new();
        let node = w
            .add(
                &ndarray::ArrayView1::from(&data[..]),
                &StoreOptions::default(),
            )
            .map_err(BenchError::ours)?;
        w.write_path(
            path,
            asdf::yaml::Node::mapping([("data", node)]),
            &Default::default(),
        )
        .map_err(BenchError::ours)?;
    }
    drop(data);
    let file = std::fs::metadata(&a)
        .map_err(|e| BenchError::io(&a, e))?
        .len();
    let yaml = ctx.dir.join("inline.asdf");
    let (_, to_yaml, to_yaml_mem) = with_peak(|| {
        asdftool::rewrite::rewrite(&a, &yaml, Mode::Inline).map_err(BenchError::ours)
    })?;
    let out_size = std::fs::metadata(&yaml)
        .map_err(|e| BenchError::io(&yaml, e))?
        .len();
    std::fs::remove_file(&yaml).map_err(|e| BenchError::io(&yaml, e))?;
    let diff_ab =
        || asdftool::diff::diff(&a, &b, &DiffOptions::default()).map_err(BenchError::ours);
    let (found, _, diff_mem) = with_peak(diff_ab)?;
    let (diff, _) = best(diff_ab)?;
    if !found.is_empty() {
        return Err(BenchError::mismatch(
            "printers",
            format!("diff found {found:?}"),
        ));
    }
    let py = ctx.py.run(PY, &[arg(&a), arg(&b)])?;
    let py_mem = opt(&py, "peak_kib")?.map(|k| format!("; Python +{} MiB", k as u64 >> 10));
    let mib = len >> 20;
    Ok(vec![
        Row::new(format!("9. asdftool to-yaml, {mib} MiB uint8 array inline"), to_yaml)
            .bytes(file)
            .note(format!(
                "{}; {} MiB of YAML written (not run with Python asdf's to_yaml, which turns the array into Python lists with ndarray.tolist)",
                memory_note(to_yaml_mem, file),
                out_size >> 20
            )),
        Row::new(format!("9. asdftool diff, two equal {mib} MiB uint8 files (no side verifies checksums), vs Python asdf's diff"), diff)
            .peer_opt("Python asdf", opt(&py, "diff")?)
            .bytes(2 * file)
            .note(format!(
                "{} (both files){}",
                memory_note(diff_mem, 2 * file),
                py_mem.unwrap_or_default()
            )),
    ])
}
