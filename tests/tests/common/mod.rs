//! The sweep harness: a counting global allocator (per thread, so the sweeps of different
//! readers can run as parallel tests), the per-case time and memory checks, and the corpus walk.

#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

thread_local! {
    // `const` thread locals without destructors are safe to touch from inside the allocator.
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}
/// Bytes live in the whole process, and their peak: catches allocations made on helper threads
/// (rayon) that the per-thread counters do not see.
static GLOBAL_CURRENT: AtomicUsize = AtomicUsize::new(0);
static GLOBAL_PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    let g = GLOBAL_CURRENT.fetch_add(size, Relaxed) + size;
    GLOBAL_PEAK.fetch_max(g, Relaxed);
    let _ = CURRENT.try_with(|c| {
        let now = c.get() + size as isize;
        c.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

fn shrank(size: usize) {
    GLOBAL_CURRENT.fetch_sub(size, Relaxed);
    let _ = CURRENT.try_with(|c| c.set(c.get() - size as isize));
}

/// Counts the bytes every thread has live and its peak; forwards to the system allocator.
pub(crate) struct Counting;

// SAFETY: every call is forwarded unchanged to the system allocator; the counters only observe
// sizes (thread locals are `const`-initialised `Cell`s without destructors, so touching them
// never allocates or recurses).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        grew(l.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        grew(l.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        shrank(l.size());
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if new > l.size() {
            grew(new - l.size());
        } else {
            shrank(l.size() - new);
        }
        // SAFETY: same contract as ours.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Most any single case may allocate. The corpus files are at most a few hundred KiB (their
/// decoded arrays a few MiB), so anything near this is a header lie that was believed.
pub(crate) const MEMORY_CEILING: usize = 64 << 20;
/// Longest any single case may take (debug build, both cores busy).
pub(crate) const TIME_CEILING: Duration = Duration::from_secs(1);

/// What a sweep saw.
#[derive(Default, Debug)]
pub(crate) struct Stats {
    pub cases: usize,
    pub ok: usize,
    pub worst_time: Duration,
    pub worst_memory: usize,
    pub started: Option<Instant>,
}

impl Stats {
    pub(crate) fn new() -> Stats {
        Stats {
            started: Some(Instant::now()),
            ..Stats::default()
        }
    }

    /// Runs one case: `case` returns whether the input read fully (`true`) or was refused with
    /// an error (`false`); a panic fails the test with `what`. Checks time and memory.
    pub(crate) fn run(&mut self, what: &dyn Fn() -> String, case: impl FnOnce() -> bool) {
        let base = CURRENT.with(Cell::get);
        PEAK.with(|p| p.set(base));
        let global_base = GLOBAL_CURRENT.load(Relaxed);
        let t = Instant::now();
        let ok = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(case)) {
            Ok(ok) => ok,
            Err(e) => {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panic!("{}: PANICKED: {msg}", what());
            }
        };
        let elapsed = t.elapsed();
        let memory = (PEAK.with(Cell::get) - base).max(0) as usize;
        assert!(elapsed < TIME_CEILING, "{} took {elapsed:?}", what());
        assert!(
            memory < MEMORY_CEILING,
            "{} allocated {memory} bytes",
            what()
        );
        // Other threads (parallel sweeps) allocate too, so the process-wide figure gets a
        // generous allowance: it exists to catch a gigabyte on a helper thread.
        let global = GLOBAL_PEAK.load(Relaxed).saturating_sub(global_base);
        assert!(
            global < 8 * MEMORY_CEILING,
            "{}: the process peaked at {global} bytes",
            what()
        );
        GLOBAL_PEAK.fetch_min(GLOBAL_CURRENT.load(Relaxed), Relaxed);
        self.cases += 1;
        self.ok += ok as usize;
        self.worst_time = self.worst_time.max(elapsed);
        self.worst_memory = self.worst_memory.max(memory);
    }

    pub(crate) fn report(&self, name: &str) {
        eprintln!(
            "{name}: {} cases ({} read fully), worst case {:?} and {} KiB, total {:?}",
            self.cases,
            self.ok,
            self.worst_time,
            self.worst_memory >> 10,
            self.started.map(|s| s.elapsed()).unwrap_or_default()
        );
    }
}

pub(crate) use asdf_testkit::Rng;

/// Every corpus file with extension `ext`, sorted, with its path relative to the corpus.
pub(crate) fn corpus_files(ext: &str) -> Vec<(String, PathBuf)> {
    fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, ext, out);
            } else if p.extension().is_some_and(|e| e == ext) {
                out.push(p);
            }
        }
    }
    let root = asdf_testkit::corpus_dir();
    let mut out = Vec::new();
    walk(&root, ext, &mut out);
    out.sort();
    out.into_iter()
        .map(|p| (p.strip_prefix(&root).unwrap().display().to_string(), p))
        .collect()
}

/// Truncation points: every one for files up to `every` bytes, else `every` evenly spread ones
/// plus every point in `dense` (the byte ranges where headers live).
pub(crate) fn cuts(len: usize, every: usize, dense: &[std::ops::Range<usize>]) -> Vec<usize> {
    let step = len.div_ceil(every).max(1);
    let mut v: Vec<usize> = (0..len).step_by(step).collect();
    for r in dense {
        v.extend(r.start.min(len)..r.end.min(len));
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Byte ranges of the decimal integers in `text` (tree or schema text): the "header fields" of
/// the text formats (shape, offset, strides, source, lengths, ...).
pub(crate) fn integer_tokens(text: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i].is_ascii_digit()
            && (i == 0 || !text[i - 1].is_ascii_alphanumeric() && text[i - 1] != b'.')
        {
            let start = i;
            while i < text.len() && text[i].is_ascii_digit() {
                i += 1;
            }
            let next = text.get(i).copied().unwrap_or(b' ');
            if !next.is_ascii_alphanumeric() && next != b'.' && next != b'-' && next != b':' {
                out.push(start..i);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// `text` with `range` replaced by `value`.
pub(crate) fn replace(text: &[u8], range: std::ops::Range<usize>, value: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(text.len() + value.len());
    v.extend_from_slice(&text[..range.start]);
    v.extend_from_slice(value.as_bytes());
    v.extend_from_slice(&text[range.end..]);
    v
}

/// Values a header field is set to: 0, the maximum of its width, and random ones (one small).
pub(crate) fn field_values(rng: &mut Rng, max: u64) -> [u64; 4] {
    let mask = max;
    [0, max, rng.next() & mask, (rng.next() % 100_000) & mask]
}

/// The text values an integer in a tree or schema is set to.
pub(crate) fn text_values(rng: &mut Rng) -> [String; 5] {
    [
        "0".into(),
        u64::MAX.to_string(),
        "-1".into(),
        (rng.next() >> 1).to_string(),
        (rng.next() % 100_000).to_string(),
    ]
}
