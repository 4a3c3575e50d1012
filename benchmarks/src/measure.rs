//! Timing, result rows and the error type.

use std::path::Path;
use std::time::Instant;

/// Why a case could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("our code: {0}")]
    Ours(String),
    #[error("peer {peer}: {msg}")]
    Peer { peer: &'static str, msg: String },
    #[error("wrong result in {case}: {msg}")]
    Mismatch { case: String, msg: String },
}

impl BenchError {
    pub fn io(path: &Path, source: std::io::Error) -> BenchError {
        BenchError::Io {
            path: path.display().to_string(),
            source,
        }
    }
    pub fn ours(e: impl std::fmt::Display) -> BenchError {
        BenchError::Ours(e.to_string())
    }
    pub fn peer(peer: &'static str, e: impl std::fmt::Display) -> BenchError {
        BenchError::Peer {
            peer,
            msg: e.to_string(),
        }
    }
    pub fn mismatch(case: &str, msg: impl Into<String>) -> BenchError {
        BenchError::Mismatch {
            case: case.into(),
            msg: msg.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, BenchError>;

/// `--quick`: every measurement runs once (set before the cases run).
static QUICK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes every measurement a single run (`--quick`, for the smoke tests).
pub fn set_quick(quick: bool) {
    QUICK.store(quick, std::sync::atomic::Ordering::Relaxed);
}

/// Whether measurements run once (`--quick`).
pub fn quick() -> bool {
    QUICK.load(std::sync::atomic::Ordering::Relaxed)
}

/// Runs `f` at least once, then until 3 s have passed, or 3 runs and half a second (short
/// operations repeat more: their best is less at the mercy of one noisy run), and returns the
/// fastest time in seconds together with the last result. One run with `--quick`.
pub fn best<T>(mut f: impl FnMut() -> Result<T>) -> Result<(f64, T)> {
    let start = Instant::now();
    let mut best = f64::INFINITY;
    let mut runs = 0;
    loop {
        let t = Instant::now();
        let v = f()?;
        best = best.min(t.elapsed().as_secs_f64());
        runs += 1;
        let elapsed = start.elapsed().as_secs_f64();
        if quick() || elapsed > 3.0 || (runs >= 3 && (elapsed > 0.5 || runs >= 50)) {
            return Ok((best, v));
        }
        drop(v);
    }
}

/// Like [`best`] but for sub-millisecond operations: the fastest of many runs.
pub fn best_fast<T>(mut f: impl FnMut() -> Result<T>) -> Result<(f64, T)> {
    let mut best = f64::INFINITY;
    let mut last = None;
    let start = Instant::now();
    for _ in 0..200 {
        let t = Instant::now();
        let v = f()?;
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(v);
        if quick() || start.elapsed().as_secs_f64() > 2.0 {
            break;
        }
    }
    match last {
        Some(v) => Ok((best, v)),
        None => Err(BenchError::Ours("no run".into())),
    }
}

/// Like [`best`] for a write of `path` (a file or a directory): before each run (untimed) the
/// previous output is deleted and every dirty page flushed ([`sync_disks`]), so each write
/// starts from the same clean page cache instead of paying for the previous run's truncation or
/// write-back. 5 runs (one with `--quick`): on the 2-core virtual machine a 1 GiB write to the
/// page cache moves by 2-3x between runs.
pub fn best_write(path: &Path, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    Ok(best_writes(&mut [(path, &mut f)])?[0])
}

/// Writes every dirty page of the machine to disk (`sync`), so that what is timed next does not
/// share the disk with an earlier write's write-back.
pub fn sync_disks() -> Result<()> {
    std::process::Command::new("sync")
        .status()
        .map_err(|e| BenchError::io(Path::new("sync"), e))?;
    Ok(())
}

/// [`best_write`] for several writes run in turns (one run of each, five times), so that a
/// slow spell of the machine, or the first touch of memory this virtual machine has not used
/// yet, falls on every side alike instead of on whichever runs first.
pub fn best_writes(writes: &mut [(&Path, &mut dyn FnMut() -> Result<()>)]) -> Result<Vec<f64>> {
    let mut best = vec![f64::INFINITY; writes.len()];
    for _ in 0..if quick() { 1 } else { 5 } {
        for ((path, f), best) in writes.iter_mut().zip(&mut best) {
            let path: &Path = path;
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(path)
            } else {
                std::fs::remove_file(path)
            };
            match removed {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(BenchError::io(path, e)),
            }
            sync_disks()?;
            let t = Instant::now();
            f()?;
            *best = best.min(t.elapsed().as_secs_f64());
        }
    }
    Ok(best)
}

/// The best times of `f` on one thread and on a pool of `threads`, run alternately (one run on
/// each, over and over, until 6 s have passed or each has run 50 times, at least 3 times each):
/// a slow spell of a shared machine then falls on both rows alike, where two [`best`] loops one
/// after the other could each meet a different one. One run each with `--quick`.
pub fn best_one_and_all<T>(threads: usize, f: impl Fn() -> Result<T> + Sync) -> Result<(f64, f64)> {
    let (one, all) = (pool(1)?, pool(threads)?);
    let time = |p: &rayon::ThreadPool| {
        p.install(|| {
            let t = Instant::now();
            let v = f()?;
            let secs = t.elapsed().as_secs_f64();
            drop(v);
            Ok::<f64, BenchError>(secs)
        })
    };
    let start = Instant::now();
    let (mut best_one, mut best_all) = (f64::INFINITY, f64::INFINITY);
    for runs in 1.. {
        best_one = best_one.min(time(&one)?);
        best_all = best_all.min(time(&all)?);
        let elapsed = start.elapsed().as_secs_f64();
        if quick() || runs >= 50 || (runs >= 3 && elapsed > 6.0) {
            break;
        }
    }
    Ok((best_one, best_all))
}

/// Runs `f` on a rayon pool of `threads` threads (our parallel paths use the current pool).
pub fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> Result<T> {
    Ok(pool(threads)?.install(f))
}

/// A rayon pool of `threads` threads.
fn pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(BenchError::ours)
}

/// One line of the report.
#[derive(Clone, Debug)]
pub struct Row {
    pub case: String,
    /// Our time in seconds.
    pub ours: Option<f64>,
    /// The peer's name and time in seconds.
    pub peer: Option<(String, f64)>,
    /// Bytes processed (for MB/s), if meaningful.
    pub bytes: Option<u64>,
    pub note: String,
}

impl Row {
    pub fn new(case: impl Into<String>, ours: f64) -> Row {
        Row {
            case: case.into(),
            ours: Some(ours),
            peer: None,
            bytes: None,
            note: String::new(),
        }
    }
    pub fn peer(mut self, name: impl Into<String>, secs: f64) -> Row {
        self.peer = Some((name.into(), secs));
        self
    }
    pub fn peer_opt(self, name: impl Into<String>, secs: Option<f64>) -> Row {
        match secs {
            Some(s) => self.peer(name, s),
            None => self,
        }
    }
    pub fn bytes(mut self, n: u64) -> Row {
        self.bytes = Some(n);
        self
    }
    pub fn note(mut self, n: impl Into<String>) -> Row {
        self.note = n.into();
        self
    }
    pub fn failed(case: &str, msg: &str) -> Row {
        Row {
            case: format!("{case}: FAILED"),
            ours: None,
            peer: None,
            bytes: None,
            note: msg.to_string(),
        }
    }
    /// Peer time / our time: above 1 we are faster (for a limit, the fraction of its speed).
    pub fn ratio(&self) -> Option<f64> {
        match (self.ours, &self.peer) {
            (Some(o), Some((_, p))) if o > 0.0 => Some(p / o),
            _ => None,
        }
    }
    pub fn console(&self) -> String {
        format!(
            "{:<58} ours {:>12} peer {:>12} {:>9} {}",
            self.case,
            self.ours.map_or("-".into(), fmt_time),
            self.peer.as_ref().map_or("-".into(), |(_, t)| fmt_time(*t)),
            self.ratio().map_or("-".into(), |r| format!("{r:.2}x")),
            self.peer.as_ref().map_or("", |(n, _)| n.as_str()),
        )
    }
}

/// Seconds in a readable unit.
pub fn fmt_time(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// Throughput in MB/s (10^6 bytes per second).
pub fn mbps(bytes: u64, secs: f64) -> String {
    if secs > 0.0 {
        format!("{:.0} MB/s", bytes as f64 / secs / 1e6)
    } else {
        "-".into()
    }
}

/// A line of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`).
pub fn status_kib(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `f` and returns its result, its time and the growth of this process's peak resident
/// memory while it ran (the peak is reset first through `/proc/self/clear_refs`; `None` where
/// that is not available).
pub fn with_peak<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, f64, Option<u64>)> {
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let base = status_kib("VmRSS");
    let t = std::time::Instant::now();
    let out = f()?;
    let secs = t.elapsed().as_secs_f64();
    let peak = status_kib("VmHWM");
    let grew = match (reset, base, peak) {
        (true, Some(b), Some(p)) => Some(p.saturating_sub(b) * 1024),
        _ => None,
    };
    Ok((out, secs, grew))
}
