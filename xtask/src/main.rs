//! `cargo xtask <command>`: the workspace's automation.
//!
//! * `test [-- <cargo test args>]`: builds the interop virtualenv under `target/interop-venv` (the
//!   Python peers pinned in `xtask/interop-requirements.txt`) and the awkward 2 one under
//!   `target/awkward2-venv` (`xtask/awkward2-requirements.txt`) when missing or stale, then
//!   runs the whole workspace test suite with interop tests required (a missing peer fails), then
//!   the tests of optional features (`asdf-block/bls2`, installing cmake with apt-get if needed),
//!   builds the `asdf_rs` Python package into the venv and runs its pytest suite, and fails on
//!   any `cargo fmt --check`, `cargo clippy --all-targets -D warnings` or rustdoc warning
//!   (`lint`).
//! * `lint`: only the formatting, clippy and rustdoc checks.
//! * `venv`: only (re)builds the virtualenvs and prints their interpreters' paths.
//! * `python`: only the `asdf_rs` Python package step of `test`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod conformance;

const REQUIREMENTS: &str = include_str!("../interop-requirements.txt");

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(&args[1..]),
        Some("venv") => [INTEROP, AWKWARD2]
            .iter()
            .try_for_each(|v| ensure_venv(v).map(|p| println!("{}", p.display()))),
        Some("conformance") => conformance(),
        Some("python") => venv().and_then(|p| python_package(&p)),
        Some("bench") => bench(&args[1..]),
        Some("lint") => lint(),
        Some("fuzz") => fuzz(&args[1..]),
        Some("help") | Some("--help") | Some("-h") | None => {
            println!("{}", usage());
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`\n\n{}", usage())),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> &'static str {
    "usage: cargo xtask <command>\n\
     \n\
     commands:\n  \
       test [-- ARGS]  set up the Python interop venv, then run every test of the workspace\n  \
       lint            cargo fmt --check, clippy --all-targets -D warnings, rustdoc -D warnings\n  \
       python          build the asdf_rs Python module into the venv and run its pytest suite\n  \
       conformance     reference files, and files written by Python asdf / by us read by the other\n  \
       bench [ARGS]    benchmarks against the Python peers, asdf-rs and rawarray 0.1.4 -> BENCHMARKS.md\n  \
       fuzz [--seconds N] [TARGET...]  run the cargo-fuzz targets (nightly) for N seconds each\n  \
       venv            set up the Python interop venv only and print its interpreter"
}

fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let shown = format!("{cmd:?}");
    eprintln!("xtask: running {shown}");
    let started = std::time::Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    // Each step's duration, so a slow CI run says where its time went.
    eprintln!(
        "xtask: {:.0} s for {shown}",
        started.elapsed().as_secs_f64()
    );
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed with {status}"))
    }
}

/// Installs a pinned requirements file into the virtualenv of `python`.
fn pip_install(python: &Path, requirements: &Path) -> Result<(), String> {
    run(Command::new(python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(requirements))
}

/// A virtualenv under `target/` that `cargo xtask test` builds from a pinned requirements file.
struct Venv {
    /// Its directory under `target/`.
    dir: &'static str,
    /// The pinned requirements.
    requirements: &'static str,
    /// A Python statement that must run once they are installed (imports, versions printed).
    check: &'static str,
}

/// The peers of every interop test but awkward 2's: asdf 6.0.0, awkward0 (so NumPy 1.26), the
/// codecs, the S3 server, the astronomy packages, and awkward 2 for the `asdf_rs` package.
const INTEROP: Venv = Venv {
    dir: "interop-venv",
    requirements: REQUIREMENTS,
    check: "import asdf, asdf_compression, numpy, lz4, zstandard, blosc, awkward0, awkward; \
            print('interop peers: asdf', asdf.__version__, 'numpy', numpy.__version__, \
            'awkward0', awkward0.__version__, 'awkward', awkward.__version__)",
};

/// awkward 2 and pyarrow as awkward users have them today (current pyarrow needs NumPy 2, which
/// awkward0 cannot run on): the awkward 2 interop tests and benchmark case 11 run against it.
const AWKWARD2: Venv = Venv {
    dir: "awkward2-venv",
    requirements: include_str!("../awkward2-requirements.txt"),
    check: "import asdf, numpy, awkward, pyarrow; \
            print('awkward 2 peers: awkward', awkward.__version__, 'pyarrow', \
            pyarrow.__version__, 'numpy', numpy.__version__, 'asdf', asdf.__version__)",
};

/// The interop virtualenv's interpreter (built or refreshed first).
fn venv() -> Result<PathBuf, String> {
    ensure_venv(&INTEROP)
}

/// Creates or refreshes `target/<venv.dir>` and returns its interpreter.
fn ensure_venv(venv: &Venv) -> Result<PathBuf, String> {
    let dir = workspace_root().join("target").join(venv.dir);
    let python = dir.join("bin").join("python");
    let stamp = dir.join("requirements.stamp");
    let fresh = python.exists()
        && std::fs::read_to_string(&stamp)
            .map(|s| s == venv.requirements)
            .unwrap_or(false);
    if fresh {
        return Ok(python);
    }
    let host_python = ["python3", "python"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok())
        .ok_or("no python3 on PATH: the interop tests need CPython >= 3.10 with venv")?;
    std::fs::create_dir_all(workspace_root().join("target"))
        .map_err(|e| format!("cannot create target/: {e}"))?;
    run(Command::new(host_python)
        .args(["-m", "venv", "--clear"])
        .arg(&dir))?;
    let req = dir.join("requirements.txt");
    std::fs::write(&req, venv.requirements)
        .map_err(|e| format!("cannot write {}: {e}", req.display()))?;
    run(Command::new(&python).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--upgrade",
        "pip",
    ]))?;
    pip_install(&python, &req)?;
    // Prove the peers import before any test relies on them.
    run(Command::new(&python).args(["-c", venv.check]))?;
    std::fs::write(&stamp, venv.requirements)
        .map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    Ok(python)
}

fn test(extra: &[String]) -> Result<(), String> {
    // Formatting and lock files first: they take a second and say at once what a reviewer would.
    fmt_check()?;
    lockfiles_agree()?;
    let extra: Vec<&String> = extra.iter().skip_while(|a| *a == "--").collect();
    // The virtualenvs install (mostly downloads and unpacking) while the test binaries compile
    // (CPU): neither waits for the other.
    let venvs = std::thread::spawn(|| Ok::<_, String>((venv()?, ensure_venv(&AWKWARD2)?)));
    let built = run(Command::new(cargo())
        .current_dir(workspace_root())
        .args(["test", "--workspace", "--no-run"])
        .args(extra.iter().take_while(|a| a.as_str() != "--")));
    let (python, awkward2) = venvs
        .join()
        .map_err(|_| "the virtualenv set-up panicked".to_string())??;
    built?;
    run(Command::new(cargo())
        .current_dir(workspace_root())
        .args(["test", "--workspace"])
        .args(&extra)
        .env("ASDF_TEST_PYTHON", &python)
        .env("ASDF_TEST_PYTHON_AWKWARD2", &awkward2)
        .env("ASDF_REQUIRE_INTEROP", "1"))?;
    conformance()?;
    python_package(&python)?;
    // The benchmark harness is its own workspace (see `bench`): its smoke tests run every case
    // at a tiny scale against the same peers, so it cannot rot between benchmark runs.
    run(Command::new(cargo())
        .current_dir(workspace_root())
        .args(["test", "--manifest-path", "benchmarks/Cargo.toml"])
        .env("CARGO_TARGET_DIR", shared_target())
        .env("ASDF_TEST_PYTHON", &python)
        .env("ASDF_TEST_PYTHON_AWKWARD2", &awkward2)
        .env("ASDF_REQUIRE_INTEROP", "1"))?;
    // Optional features that need more than a C compiler: Blosc2 (`bls2`) builds with cmake.
    ensure_cmake()?;
    run(Command::new(cargo())
        .current_dir(workspace_root())
        .args(["test", "-p", "asdf-block", "--features", "bls2"])
        .args(&extra)
        .env("ASDF_TEST_PYTHON", &python)
        .env("ASDF_REQUIRE_INTEROP", "1"))?;
    clippy_and_docs()
}

/// `cargo xtask lint`: formatting, lock files, clippy (every target, warnings denied) and
/// rustdoc (warnings denied), for the workspace and the benchmark harness.
fn lint() -> Result<(), String> {
    fmt_check()?;
    lockfiles_agree()?;
    clippy_and_docs()
}

fn fmt_check() -> Result<(), String> {
    run(Command::new(cargo())
        .current_dir(workspace_root())
        .args(["fmt", "--all", "--", "--check"]))?;
    for manifest in ["benchmarks/Cargo.toml", "asdf-python/Cargo.toml"] {
        run(Command::new(cargo()).current_dir(workspace_root()).args([
            "fmt",
            "--manifest-path",
            manifest,
            "--",
            "--check",
        ]))?;
    }
    Ok(())
}

/// The benchmark harness and the Python package are cargo workspaces of their own (with their
/// own `Cargo.lock`) that share `target/` with this one. A crates.io dependency they lock at
/// another version than this workspace does, where this workspace has a compatible one, is
/// compiled again for them, and so is everything above it (the C codecs and the TLS stack at
/// opt-level 3 among them): minutes of every CI run. Such drift is refused, naming the
/// `cargo update` that aligns it. (Versions this workspace lacks, such as a benchmarked peer's
/// own dependencies, are theirs to choose.)
fn lockfiles_agree() -> Result<(), String> {
    let root = workspace_root();
    let ours = locked_versions(&root.join("Cargo.lock"))?;
    let mut fixes = Vec::new();
    for side in ["benchmarks", "asdf-python"] {
        for (name, version) in locked_versions(&root.join(side).join("Cargo.lock"))? {
            let compatible: Vec<&String> = ours
                .iter()
                .filter(|(n, v)| *n == name && semver_compatible(v, &version))
                .map(|(_, v)| v)
                .collect();
            if let (Some(want), false) = (compatible.first(), compatible.contains(&&version)) {
                fixes.push(format!(
                    "cargo update --manifest-path {side}/Cargo.toml -p {name}@{version} \
                     --precise {want}"
                ));
            }
        }
    }
    if fixes.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the side workspaces lock other versions than Cargo.lock (each would be compiled again \
         in target/); align them:\n  {}",
        fixes.join("\n  ")
    ))
}

/// `(name, version)` of every crates.io package a `Cargo.lock` pins.
fn locked_versions(path: &Path) -> Result<Vec<(String, String)>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(text
        .split("[[package]]")
        .skip(1)
        .filter_map(|block| {
            let field = |key: &str| {
                block.lines().find_map(|l| {
                    l.strip_prefix(key)?
                        .strip_prefix(" = \"")?
                        .strip_suffix('"')
                        .map(str::to_string)
                })
            };
            field("source")
                .filter(|s| s.starts_with("registry+"))
                .and(Some((field("name")?, field("version")?)))
        })
        .collect())
}

/// Whether cargo would accept version `a` where `b` is locked (`^b`): the same major version, or
/// for `0.x` the same minor one.
fn semver_compatible(a: &str, b: &str) -> bool {
    let key = |v: &str| -> Vec<String> {
        let parts: Vec<String> = v
            .split(['.', '+', '-'])
            .take(2)
            .map(str::to_string)
            .collect();
        if parts.first().is_some_and(|m| m == "0") {
            parts
        } else {
            parts.into_iter().take(1).collect()
        }
    };
    key(a) == key(b)
}

fn clippy_and_docs() -> Result<(), String> {
    let root = workspace_root();
    run(Command::new(cargo()).current_dir(&root).args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    run(Command::new(cargo())
        .current_dir(&root)
        .args([
            "clippy",
            "--manifest-path",
            "benchmarks/Cargo.toml",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ])
        .env("CARGO_TARGET_DIR", shared_target()))?;
    run(Command::new(cargo())
        .current_dir(&root)
        .args(["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings"))
}

/// The `asdf_rs` Python package (`asdf-python/`, its own cargo workspace): its pinned build and
/// test tools into the interop venv, `maturin develop` (an incremental debug build of the
/// extension; its dependencies, the workspace crates included, are optimised), then its pytest
/// suite against Python asdf 6.0.0 and a two-process Dask cluster.
fn python_package(python: &Path) -> Result<(), String> {
    let crate_dir = build_python_package(python, false)?;
    run(Command::new(python).current_dir(&crate_dir).args([
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests",
    ]))
}

/// Installs the Python package's tools into the venv and builds `asdf_rs` into it (`release`:
/// optimised as a wheel would be, for the benchmarks); returns the package's directory.
fn build_python_package(python: &Path, release: bool) -> Result<PathBuf, String> {
    let crate_dir = workspace_root().join("asdf-python");
    pip_install(python, &crate_dir.join("requirements-test.txt"))?;
    let venv = python
        .parent()
        .and_then(Path::parent)
        .ok_or("the venv interpreter has no venv directory")?;
    let mut cmd = Command::new(python);
    cmd.args(["-m", "maturin", "develop", "--quiet"]);
    if release {
        cmd.arg("--release");
    }
    run(cmd
        .arg("--manifest-path")
        .arg(crate_dir.join("Cargo.toml"))
        .env("VIRTUAL_ENV", venv)
        .env("CARGO_TARGET_DIR", shared_target()))?;
    Ok(crate_dir)
}

/// `cargo xtask conformance`: prints the table, writes it to target/conformance/CONFORMANCE.md,
/// fails on any failure.
fn conformance() -> Result<(), String> {
    let python = venv()?;
    let root = workspace_root();
    let corpus = std::env::var_os("ASDF_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("..").join("shared").join("corpus"));
    let work = root.join("target").join("conformance");
    let rows = conformance::run(&python, &corpus, &work);
    let table = conformance::table(&rows);
    println!("{table}");
    let _ = std::fs::write(work.join("CONFORMANCE.md"), &table);
    let failed = rows.iter().filter(|r| r.result.is_err()).count();
    let passed = rows.len() - failed;
    // The plain closing line CI reads: "N passed, N failed".
    println!("conformance: {passed} passed, {failed} failed");
    if rows.len() < 100 {
        return Err(format!("only {} conformance cases ran", rows.len()));
    }
    if failed > 0 {
        return Err(format!("{failed} conformance case(s) failed"));
    }
    Ok(())
}

/// The workspace's `target/`, shared with the benchmark harness and the Python package (cargo
/// workspaces of their own): the dependencies they build with the same versions, features and
/// profile (the codecs, the YAML parser, the remote-read stack) are compiled once, not again for
/// each.
fn shared_target() -> PathBuf {
    workspace_root().join("target")
}

/// `cargo xtask bench [ARGS]`: the benchmark harness in `benchmarks/` (its own cargo workspace,
/// because its crates.io peers would make package names ambiguous here), with the venv's Python.
fn bench(extra: &[String]) -> Result<(), String> {
    let python = venv()?;
    let awkward2 = ensure_venv(&AWKWARD2)?;
    // Case 8 times the Python package: built as a release wheel would be.
    build_python_package(&python, true)?;
    let root = workspace_root();
    let manifest = root.join("benchmarks").join("Cargo.toml");
    run(Command::new(cargo())
        .current_dir(&root)
        .args(["run", "--release", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", shared_target())
        .arg("--")
        .arg("--python")
        .arg(&python)
        .arg("--python-awkward2")
        .arg(&awkward2)
        .arg("--out")
        .arg(root.join("BENCHMARKS.md"))
        .args(extra))
}

/// `cargo xtask fuzz [--seconds N] [TARGET...]`: every cargo-fuzz target (or the named ones) for
/// N seconds each (default 60), with the nightly toolchain, seeded from the shared corpus.
fn fuzz(args: &[String]) -> Result<(), String> {
    let root = workspace_root();
    let dir = root.join("fuzz");
    let mut seconds = 60u64;
    let mut targets = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                seconds = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--seconds takes a whole number")?
            }
            t => targets.push(t.to_string()),
        }
    }
    if Command::new("cargo")
        .args(["+nightly", "fuzz", "--version"])
        .output()
        .map(|o| !o.status.success())
        .unwrap_or(true)
    {
        run(Command::new("cargo").args(["+nightly", "install", "cargo-fuzz", "--locked"]))?;
    }
    if targets.is_empty() {
        let out = Command::new("cargo")
            .current_dir(&dir)
            .args(["+nightly", "fuzz", "list"])
            .output()
            .map_err(|e| format!("cargo fuzz list: {e}"))?;
        targets = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect();
    }
    if targets.is_empty() {
        return Err("no fuzz targets found in fuzz/".into());
    }
    // Seed corpora from ../shared/corpus (written into fuzz/corpus/, which git ignores).
    run(Command::new(cargo()).current_dir(&root).args([
        "run",
        "--quiet",
        "-p",
        "asdf-tests",
        "--example",
        "fuzz_seeds",
    ]))?;
    for t in &targets {
        run(Command::new("cargo")
            .current_dir(&dir)
            .args(["+nightly", "fuzz", "run", t, "--"])
            .arg(format!("-max_total_time={seconds}"))
            .args(["-rss_limit_mb=2048", "-timeout=10", "-print_final_stats=1"]))?;
    }
    Ok(())
}

/// Makes sure cmake is on PATH, installing Debian's package when running as root.
fn ensure_cmake() -> Result<(), String> {
    if Command::new("cmake").arg("--version").output().is_ok() {
        return Ok(());
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    if !root || Command::new("apt-get").arg("--version").output().is_err() {
        return Err(
            "the bls2 feature's tests need cmake: install it (e.g. apt-get install cmake)".into(),
        );
    }
    run(Command::new("apt-get").args(["update", "-qq"]))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-qq", "cmake"])
        .env("DEBIAN_FRONTEND", "noninteractive"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compatible_versions_follow_cargo_caret_rules() {
        assert!(semver_compatible("1.13.1", "1.13.2"));
        assert!(semver_compatible("1.2.0", "1.13.2"));
        assert!(!semver_compatible("2.0.0", "1.13.2"));
        assert!(semver_compatible("0.3.3", "0.3.4"));
        assert!(!semver_compatible("0.2.2", "0.3.3"));
        assert!(semver_compatible("2.1.2+zstd.1.5.7", "2.1.3+zstd.1.5.7"));
    }

    #[test]
    fn only_registry_packages_are_listed() {
        let dir = std::env::temp_dir().join(format!("xtask-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lock = dir.join("Cargo.lock");
        std::fs::write(
            &lock,
            "version = 4\n\n[[package]]\nname = \"asdf\"\nversion = \"0.1.0\"\n\n\
             [[package]]\nname = \"regex\"\nversion = \"1.13.1\"\n\
             source = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
        )
        .unwrap();
        let got = locked_versions(&lock).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(got, vec![("regex".to_string(), "1.13.1".to_string())]);
    }
}
