//! `asdf-benchmarks`: runs our crates and their peers (Python `asdf` 6.0.0 with NumPy, the Rust
//! crates `asdf-rs` 0.2 and `rawarray` 0.1.4, Python `awkward0`) on the same generated files in
//! one run, plus the hardware limits (memcpy, MD5, each codec's raw speed), and writes a Markdown
//! table (`BENCHMARKS.md`).
//!
//! ```text
//! cargo run --release --manifest-path benchmarks/Cargo.toml -- \
//!     --python target/interop-venv/bin/python --out BENCHMARKS.md [--scale 0.05] [--only tree,many]
//! ```
//!
//! Data is generated under `benchmarks/target/bench-data-<pid>` (or `--dir`) and deleted at the
//! end, case by case, so at most about three times the largest case is on disk at once.

mod cases;
mod cli;
mod data;
mod machine;
mod measure;
mod python;
mod report;

use std::process::ExitCode;

fn main() -> ExitCode {
    // A measurement that needs a process of its own (case 10's whole-process open + walk).
    if let Some(code) = cases::child(&std::env::args().skip(1).collect::<Vec<_>>()) {
        return code;
    }
    let args = match cli::Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("error: {msg}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    if args.help {
        println!("{}", cli::USAGE);
        return ExitCode::SUCCESS;
    }
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &cli::Args) -> Result<(), measure::BenchError> {
    measure::set_quick(args.quick);
    let machine = machine::Machine::detect();
    eprintln!("machine: {}", machine.long());
    let dir = data::ScratchDir::create(&args.dir)?;
    let py = python::Python::new(args.python.clone());
    let py_awkward2 = python::Python::new(args.python_awkward2.clone());
    let codecs: Vec<&'static str> = cases::CODEC_NAMES
        .iter()
        .copied()
        .filter(|c| args.codec_selected(c))
        .collect();
    let mut rows = Vec::new();
    let started = std::time::Instant::now();
    for case in cases::ALL {
        if !args.selected(case.name) {
            continue;
        }
        eprintln!(
            "== {} ({:.0} s elapsed)",
            case.name,
            started.elapsed().as_secs_f64()
        );
        let ctx = cases::Ctx {
            dir: dir.path(),
            scale: args.scale,
            py: &py,
            py_awkward2: &py_awkward2,
            threads: machine.cores,
            codecs: &codecs,
        };
        match (case.run)(&ctx) {
            Ok(mut r) => {
                for row in &r {
                    eprintln!("   {}", row.console());
                }
                rows.append(&mut r);
            }
            Err(e) => {
                eprintln!("   case {} failed: {e}", case.name);
                rows.push(measure::Row::failed(case.name, &e.to_string()));
            }
        }
        dir.clear()?;
    }
    let md = report::markdown(&rows, &machine, args, started.elapsed());
    std::fs::write(&args.out, md).map_err(|e| measure::BenchError::io(&args.out, e))?;
    eprintln!(
        "wrote {} ({} rows) in {:.0} s",
        args.out.display(),
        rows.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{cli, run};
    use std::path::PathBuf;

    fn args(python: &str, awkward2: &str, name: &str) -> (cli::Args, PathBuf, PathBuf) {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-smoke");
        let out = root.join(format!("{name}.md"));
        let dir = root.join(name);
        let argv = [
            "--python",
            python,
            "--python-awkward2",
            awkward2,
            "--scale",
            "0.0005",
            "--out",
            &out.display().to_string(),
            "--dir",
            &dir.display().to_string(),
            "--quick",
        ];
        let a = cli::Args::parse(argv.iter().map(|s| s.to_string())).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        (a, out, dir)
    }

    fn check_report(md: &str, with_python: bool) {
        assert!(!md.contains("FAILED"), "{md}");
        assert!(md.contains("Quick run (`--quick`)"), "{md}");
        for case in [
            "1. open + walk tree vs asdf-rs",
            "2. open + read all arrays, checksums skipped like the peers, vs asdf-rs",
            "2. open + read all arrays, every MD5 verified (our default), vs asdf-rs",
            "3. block bytes without the tree",
            "3. view (zero-copy, no checksum)",
            "3. full copy vs memcpy (limit)",
            "3. view + MD5 verified vs MD5 (limit)",
            "4. read lz4 chunked array [1 thr]",
            "4. read zlib many arrays",
            "5. write blsc one array [1 thr]",
            "5. write bzp2 many arrays",
            "6. RawArray read into Vec<f64>",
            "6. awkward0 jagged load .awkd",
            "10. open + walk catalogue tree",
            "10. validate catalogue tree with its schemas",
            "10. parse catalogue text to a tree [1 thr] vs saphyr-parser events only",
            "10. parse catalogue as minified JSON text (one line) [1 thr] vs serde_json",
            "10. parse catalogue text nested 100 deep in every row",
            "10. parse catalogue text with constructs the fast parser reads since 2026-11-30 in every row",
            "10. parse catalogue text with the constructs the fast parser reads since the evening of 2026-11-30 in every row",
            "11. awkward 2 jagged load buffers dir",
            "11. awkward 2 table save .npz",
            "11. table load Parquet vs pyarrow",
        ] {
            assert!(md.contains(case), "missing {case}:\n{md}");
        }
        // The peer column of every table row.
        let peers: Vec<&str> = md
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| case"))
            .filter_map(|l| l.split('|').nth(3))
            .collect();
        let has = |name: &str| peers.iter().any(|p| p.trim_end().ends_with(name));
        assert_eq!(has("Python asdf"), with_python, "{md}");
        // The S3 case needs the interop venv's S3 server.
        assert_eq!(md.contains("7. S3 (a) info"), with_python, "{md}");
        assert_eq!(
            md.contains("7. S3 (d) whole zstd array"),
            with_python,
            "{md}"
        );
        assert_eq!(has("awkward0"), with_python, "{md}");
        assert_eq!(has("awkward 2"), with_python, "{md}");
        assert_eq!(has("pyarrow"), with_python, "{md}");
        assert_eq!(has("rapidyaml"), with_python, "{md}");
        assert_eq!(has("PyYAML C"), with_python, "{md}");
        // The Python package's case needs the venv with asdf_rs built into it.
        assert_eq!(md.contains("8. Python: to_dask sum"), with_python, "{md}");
        for name in [
            "asdf-rs",
            "rawarray 0.1.4",
            "memcpy",
            "md-5",
            "raw lz4 decompress",
            "saphyr-parser",
        ] {
            assert!(has(name), "no {name} peer:\n{md}");
        }
        assert!(md.contains("| case | ours | peer | ratio | machine | date |"));
    }

    #[test]
    fn every_case_runs_without_python() {
        let (a, out, dir) = args("none", "none", "no-python");
        run(&a).unwrap();
        check_report(&std::fs::read_to_string(&out).unwrap(), false);
        assert!(!dir.exists(), "generated data must be deleted");
    }

    /// `$var`, else `target/<venv>/bin/python`, when it exists; a missing one fails under
    /// `cargo xtask test` (which sets ASDF_REQUIRE_INTEROP) and skips elsewhere.
    fn venv_python(var: &str, venv: &str) -> Option<PathBuf> {
        let py = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target")
                .join(venv)
                .join("bin/python")
        });
        if py.exists() {
            return Some(py);
        }
        assert!(
            std::env::var_os("ASDF_REQUIRE_INTEROP").is_none(),
            "no {venv} at {}",
            py.display()
        );
        eprintln!("SKIPPED interop test: no {venv} at {}", py.display());
        None
    }

    #[test]
    fn every_case_runs_against_the_python_peers() {
        let (Some(py), Some(awkward2)) = (
            venv_python("ASDF_TEST_PYTHON", "interop-venv"),
            venv_python("ASDF_TEST_PYTHON_AWKWARD2", "awkward2-venv"),
        ) else {
            return;
        };
        let (a, out, dir) = args(
            &py.display().to_string(),
            &awkward2.display().to_string(),
            "python",
        );
        run(&a).unwrap();
        check_report(&std::fs::read_to_string(&out).unwrap(), true);
        assert!(!dir.exists(), "generated data must be deleted");
    }

    #[test]
    fn command_line() {
        let parse = |v: &[&str]| cli::Args::parse(v.iter().map(|s| s.to_string()));
        let a = parse(&[
            "--scale",
            "0.05",
            "--only",
            "tree,awkward",
            "--python",
            "none",
        ])
        .unwrap();
        assert_eq!(a.scale, 0.05);
        assert!(a.python.is_none() && a.python_awkward2.is_none());
        let b = parse(&["--python-awkward2", "none"]).unwrap();
        assert!(b.python.is_some() && b.python_awkward2.is_none());
        assert!(a.selected("tree") && a.selected("awkward") && !a.selected("many"));
        assert!(parse(&["--scale", "0"]).is_err());
        assert!(parse(&["--scale", "nan"]).is_err());
        assert!(parse(&["--only", "trees"]).is_err());
        assert!(parse(&["--out"]).is_err());
        assert!(parse(&["--frobnicate"]).is_err());
        assert!(parse(&["--codecs", "lzma"]).is_err());
        let c = parse(&["--codecs", "lz4,zstd"]).unwrap();
        assert!(c.codec_selected("lz4") && !c.codec_selected("zlib"));
        assert!(parse(&["--help"]).unwrap().help);
        assert!(parse(&["--quick"]).unwrap().quick);
        let d = parse(&[]).unwrap();
        assert_eq!(d.out, PathBuf::from("BENCHMARKS.md"));
        assert!(d.selected("compressed") && !d.quick);
    }
}
