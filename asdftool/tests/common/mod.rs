//! Helpers of the integration tests: run the built binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub(crate) fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_asdftool"))
}

/// Runs `asdftool args...` and returns its output.
pub(crate) fn run<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    run_env(args, &[])
}

pub(crate) fn run_env<S: AsRef<std::ffi::OsStr>>(args: &[S], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(bin());
    c.args(args).stdin(Stdio::null());
    c.env_remove("VISUAL");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("cannot run asdftool")
}

pub(crate) fn code(o: &Output) -> i32 {
    o.status.code().expect("asdftool was killed by a signal")
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts the exit status, showing the output otherwise.
#[track_caller]
pub(crate) fn expect(o: &Output, status: i32) {
    assert_eq!(
        code(o),
        status,
        "exit status {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        o.status,
        stdout(o),
        stderr(o)
    );
}

pub(crate) fn reference(name: &str) -> PathBuf {
    asdf_testkit::corpus_file(&format!("asdf-standard/reference_files/1.6.0/{name}"))
}

pub(crate) fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// The address-space limit of [`run_limited`]: a verb that tries to allocate by a hostile
/// declared size fails its allocation instead of the test machine swapping.
pub(crate) const ADDRESS_SPACE: u64 = 2 << 30;

/// Runs `asdftool args...` in `cwd` under an address-space limit ([`ADDRESS_SPACE`], set with
/// `setrlimit(RLIMIT_AS)` in the child), with stdin closed. A run still going after 30 s is
/// killed and the test fails ("hung"): a guard against hangs, not a timing assertion.
pub(crate) fn run_limited<S: AsRef<std::ffi::OsStr>>(cwd: &Path, args: &[S]) -> Output {
    use std::os::unix::process::CommandExt;
    let out = tempfile_pair();
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out.0).unwrap())
        .stderr(std::fs::File::create(&out.1).unwrap())
        .env_remove("VISUAL")
        .env("EDITOR", "true");
    // SAFETY: `setrlimit` is async-signal-safe and only touches the child's own limits; the
    // closure allocates nothing and captures only a constant.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: ADDRESS_SPACE as libc::rlim_t,
                rlim_max: ADDRESS_SPACE as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = c.spawn().expect("cannot run asdftool");
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "asdftool {:?} in {} hung (killed after 30 s)",
                args.iter()
                    .map(|a| a.as_ref().to_owned())
                    .collect::<Vec<_>>(),
                cwd.display()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let o = Output {
        status,
        stdout: std::fs::read(&out.0).unwrap(),
        stderr: std::fs::read(&out.1).unwrap(),
    };
    let _ = std::fs::remove_file(&out.0);
    let _ = std::fs::remove_file(&out.1);
    o
}

fn tempfile_pair() -> (PathBuf, PathBuf) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = asdf_testkit::workspace_root()
        .join("target")
        .join("test-tmp");
    std::fs::create_dir_all(&dir).unwrap();
    let n = N.fetch_add(1, Ordering::Relaxed);
    let stem = format!("run-limited-{}-{n}", std::process::id());
    (
        dir.join(format!("{stem}.out")),
        dir.join(format!("{stem}.err")),
    )
}

/// Asserts that a run ended by itself with a clear outcome: exit status 0, 1 or 2 (never a
/// panic's 101, an abort's 134 or a signal), and a message on stderr when it failed.
#[track_caller]
pub(crate) fn expect_clean(o: &Output, what: &str) {
    let code = o.status.code();
    assert!(
        matches!(code, Some(0..=2)),
        "{what}: exit status {:?}\n--- stderr ---\n{}",
        o.status,
        stderr(o)
    );
    if code == Some(2) {
        assert!(
            !stderr(o).trim().is_empty(),
            "{what}: failed without a message"
        );
    }
}

/// The fast YAML parser reads the tree of the ASDF file at `path` itself (no construct in it is
/// left to the reference parser) and builds exactly the reference parser's tree: real writers'
/// files must not fall off the fast path.
pub(crate) fn assert_fast_parser_reads(path: &Path) {
    use asdf::yaml::{parse_document, Engine, ParseOptions};
    let bytes = std::fs::read(path).unwrap();
    let text = std::str::from_utf8(asdf_testkit::asdf_tree_text(&bytes)).unwrap();
    let parse = |engine| {
        let options = ParseOptions {
            engine,
            ..ParseOptions::default()
        };
        parse_document(text, &options)
    };
    let fast = parse(Engine::Fast)
        .unwrap_or_else(|e| panic!("{}: the fast parser stops: {e}", path.display()));
    let reference = parse(Engine::Reference).unwrap();
    assert!(
        fast.root.identical(&reference.root),
        "{}: the parsers disagree",
        path.display()
    );
}
