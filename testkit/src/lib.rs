//! Helpers shared by the workspace's tests.
//!
//! * [`corpus_dir`] finds `../shared/corpus` (the real files written by other implementations).
//! * [`python`] finds the interpreter of the interop virtualenv that `cargo xtask test` builds under
//!   `target/interop-venv`. Without it, a plain `cargo test` skips interop tests with a visible
//!   message; with `CI` or `ASDF_REQUIRE_INTEROP` set, a missing interpreter fails the test instead.

pub mod http;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The workspace root (the folder holding the top-level `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// The shared corpus: `$ASDF_CORPUS` if set, else `../shared/corpus` beside the checkout.
///
/// Panics when the folder does not exist: the corpus is part of every checkout's surroundings and
/// a test that silently skipped it would prove nothing.
pub fn corpus_dir() -> PathBuf {
    let dir = match std::env::var_os("ASDF_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => workspace_root().join("..").join("shared").join("corpus"),
    };
    assert!(
        dir.is_dir(),
        "the shared corpus is not at {} (set ASDF_CORPUS to its location)",
        dir.display()
    );
    dir
}

/// A file of the shared corpus, by path relative to the corpus folder.
pub fn corpus_file(rel: &str) -> PathBuf {
    corpus_dir().join(rel)
}

/// Every file under the corpus whose name ends in `.{ext}`, sorted.
pub fn corpus_files(ext: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, ext, out);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&corpus_dir(), ext, &mut out);
    out.sort();
    out
}

/// Whether a missing interop interpreter must fail the test rather than skip it.
pub fn interop_required() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
        || std::env::var_os("ASDF_REQUIRE_INTEROP").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The interop Python interpreter, with the peers (asdf 6.0.0, numpy, awkward0, ...) installed.
///
/// Looks at `$ASDF_TEST_PYTHON`, then at `target/interop-venv/bin/python`. Returns `None` (after
/// printing why the caller skips) when neither exists and interop is not required; panics when it
/// is required.
pub fn python() -> Option<PathBuf> {
    find_python("ASDF_TEST_PYTHON", "interop-venv")
}

/// The awkward 2 interpreter: awkward 2 and pyarrow as current releases (on NumPy 2, which
/// awkward0 cannot run on), with Python asdf.
///
/// Looks at `$ASDF_TEST_PYTHON_AWKWARD2`, then at `target/awkward2-venv/bin/python`; skips or
/// panics like [`python`].
pub fn python_awkward2() -> Option<PathBuf> {
    find_python("ASDF_TEST_PYTHON_AWKWARD2", "awkward2-venv")
}

fn find_python(var: &str, venv: &str) -> Option<PathBuf> {
    let candidate = match std::env::var_os(var) {
        Some(p) => PathBuf::from(p),
        None => workspace_root()
            .join("target")
            .join(venv)
            .join("bin")
            .join("python"),
    };
    if candidate.exists() {
        return Some(candidate);
    }
    let msg = format!(
        "interop Python not found at {} (run `cargo xtask test`, or set {var})",
        candidate.display()
    );
    if interop_required() {
        panic!("{msg}; interop tests are required here (CI / ASDF_REQUIRE_INTEROP)");
    }
    eprintln!("SKIPPED interop test: {msg}");
    None
}

/// Evaluates to the interop interpreter, or returns from the calling test after the skip message.
#[macro_export]
macro_rules! require_python {
    () => {
        match $crate::python() {
            Some(p) => p,
            None => return,
        }
    };
}

/// Evaluates to the awkward 2 interpreter ([`python_awkward2`]), or returns from the calling test
/// after the skip message.
#[macro_export]
macro_rules! require_awkward2_python {
    () => {
        match $crate::python_awkward2() {
            Some(p) => p,
            None => return,
        }
    };
}

/// Runs `script` with the interop interpreter, passing `args` as `sys.argv[1..]`, and returns its
/// standard output. Panics with the script's standard error if it exits non-zero.
pub fn run_python(python: &Path, script: &str, args: &[&str]) -> Vec<u8> {
    run_python_stdin(python, script, args, &[])
}

/// Like [`run_python`], with `stdin` written to the script's standard input.
pub fn run_python_stdin(python: &Path, script: &str, args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let mut child = Command::new(python)
        .arg("-c")
        .arg(script)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", python.display()));
    if let Some(mut input) = child.stdin.take() {
        // A script that exits without reading its input closes the pipe: not an error here.
        let _ = input.write_all(stdin);
    }
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("waiting for python failed: {e}"));
    assert!(
        out.status.success(),
        "python script failed ({}):\n--- script ---\n{script}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A fresh temporary directory under `target/test-tmp`, removed when the guard drops.
pub struct TempDir(PathBuf);

/// The name the test harness gives the calling module's test `$test`: its module path below the
/// crate root. A test binary re-runs one of its own tests in a child process with it
/// (`--exact`), whether the test's file is the binary's root or a module of a larger one.
///
/// ```
/// // In a doctest the module is the crate root itself.
/// assert_eq!(asdf_testkit::harness_name!("child"), "child");
/// ```
#[macro_export]
macro_rules! harness_name {
    ($test:expr) => {
        match module_path!().split_once("::") {
            Some((_crate, module)) => format!("{}::{}", module, $test),
            None => String::from($test),
        }
    };
}

impl TempDir {
    /// Creates a unique directory whose name starts with `prefix`.
    pub fn new(prefix: &str) -> TempDir {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = workspace_root().join("target").join("test-tmp");
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("{prefix}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        TempDir(dir)
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A path inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A global allocator that counts live bytes and the peak, for tests that bound the memory a
/// case may take. Install it in a test binary with
/// `#[global_allocator] static A: asdf_testkit::CountingAllocator = asdf_testkit::CountingAllocator;`
/// and keep such binaries to one `#[test]`, so no other test allocates during a measured case.
pub struct CountingAllocator;

static LIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static PEAK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn grew(size: usize) {
    use std::sync::atomic::Ordering::Relaxed;
    let now = LIVE.fetch_add(size, Relaxed) + size;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: forwards every call to the system allocator unchanged; only counts sizes.
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        grew(l.size());
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: std::alloc::Layout) -> *mut u8 {
        grew(l.size());
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        LIVE.fetch_sub(l.size(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, new: usize) -> *mut u8 {
        if new > l.size() {
            grew(new - l.size());
        } else {
            LIVE.fetch_sub(l.size() - new, std::sync::atomic::Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.realloc(p, l, new) }
    }
}

impl CountingAllocator {
    /// Starts a measurement: resets the peak to the bytes live now and returns that baseline.
    pub fn start() -> usize {
        use std::sync::atomic::Ordering::Relaxed;
        let base = LIVE.load(Relaxed);
        PEAK.store(base, Relaxed);
        base
    }

    /// The most bytes allocated at once since [`start`](Self::start) returned `base`.
    pub fn peak_since(base: usize) -> usize {
        PEAK.load(std::sync::atomic::Ordering::Relaxed)
            .saturating_sub(base)
    }
}

/// A small deterministic generator (xorshift64) for tests that mutate or generate input, so a
/// failure reproduces from its seed.
///
/// ```
/// let mut a = asdf_testkit::Rng(7);
/// let mut b = asdf_testkit::Rng(7);
/// assert_eq!(a.next(), b.next());
/// assert!(a.below(10) < 10);
/// ```
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits (the seed must not be 0).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The YAML text of an ASDF file's bytes: everything up to and including the `...` line (the
/// binary blocks, if any, follow it), or all of it when there is no such line.
///
/// ```
/// let file = b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: 1}\n...\n\xd3BLK....";
/// assert_eq!(asdf_testkit::asdf_tree_text(file), b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: 1}\n...\n");
/// ```
pub fn asdf_tree_text(bytes: &[u8]) -> &[u8] {
    let mut i = 0;
    while let Some(p) = bytes[i..].windows(4).position(|w| w == b"\n...") {
        let end = i + p + 4;
        match bytes.get(end) {
            None => return &bytes[..end],
            Some(b'\n') => return &bytes[..end + 1],
            Some(b'\r') if bytes.get(end + 1) == Some(&b'\n') => return &bytes[..end + 2],
            _ => i = end,
        }
    }
    bytes
}
