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
