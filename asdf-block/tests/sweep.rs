//! Corrupted-file sweep of the block layer over every asdf-standard reference file: every
//! truncation point, seeded bit flips, and each header field set to 0, its maximum and random
//! values. Every case must return `Ok` or an error — never panic — within a second, and allocate
//! at most a bounded amount (measured with a counting allocator).
//!
//! One `#[test]` only, so no other test allocates concurrently with a measured case.

use std::time::{Duration, Instant};

use asdf_block::*;
use asdf_testkit::{CountingAllocator, Rng};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

/// Most any case may allocate: the corpus files are a few KiB, so anything near this is a header
/// lie that was believed.
const MEMORY_CEILING: usize = 64 << 20;

struct Stats {
    cases: usize,
    ok: usize,
    worst_time: Duration,
    worst_memory: usize,
}

fn exercise(bytes: &[u8], what: &dyn Fn() -> String, stats: &mut Stats) {
    let base = CountingAllocator::start();
    let t = Instant::now();
    let mut all_ok = true;
    match BlockReader::new(bytes, 0, ReadOptions::default()) {
        Ok(r) => {
            for i in 0..r.len() as i64 {
                all_ok &= r.data(i).is_ok();
                all_ok &= r.verify(i, ChecksumPolicy::AcceptLegacy).is_ok();
            }
            let mut seek =
                SeekBlockReader::new(std::io::Cursor::new(bytes), 0, ReadOptions::default())
                    .unwrap_or_else(|e| {
                        panic!(
                            "{}: memory reader accepted, seek reader refused: {e}",
                            what()
                        )
                    });
            for i in 0..seek.blocks().len() as i64 {
                let _ = seek.read(i);
            }
        }
        Err(e) => {
            all_ok = false;
            assert!(!e.to_string().is_empty());
        }
    }
    let elapsed = t.elapsed();
    let memory = CountingAllocator::peak_since(base);
    assert!(
        elapsed < Duration::from_secs(1),
        "{} took {elapsed:?}",
        what()
    );
    assert!(
        memory < MEMORY_CEILING,
        "{} allocated {memory} bytes",
        what()
    );
    stats.cases += 1;
    stats.ok += all_ok as usize;
    stats.worst_time = stats.worst_time.max(elapsed);
    stats.worst_memory = stats.worst_memory.max(memory);
}

#[test]
fn corpus_corruption_sweep() {
    let root = asdf_testkit::corpus_file("asdf-standard/reference_files");
    let mut files = Vec::new();
    for v in std::fs::read_dir(&root).unwrap() {
        let v = v.unwrap().path();
        for f in std::fs::read_dir(&v).into_iter().flatten() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "asdf") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut stats = Stats {
        cases: 0,
        ok: 0,
        worst_time: Duration::ZERO,
        worst_memory: 0,
    };
    let mut rng = Rng(0x005e_ed0f_a5df);
    let t0 = Instant::now();
    for path in &files {
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        let orig = std::fs::read(path).unwrap();
        let layout = scan_blocks(&mut &orig[..], 0, true).unwrap();

        // Every truncation point (sampled beyond 8 KiB).
        let step = (orig.len() / 8192).max(1);
        for cut in (0..orig.len()).step_by(step) {
            exercise(
                &orig[..cut],
                &|| format!("{name} truncated to {cut}"),
                &mut stats,
            );
        }
        // Seeded bit flips, concentrated on the binary part where the block layer looks.
        let first = layout.blocks.first().map_or(0, |b| b.offset as usize);
        for _ in 0..300 {
            let mut bad = orig.clone();
            let span = bad.len() - first;
            if span == 0 {
                break;
            }
            let at = first + (rng.next() as usize % span);
            let bit = rng.next() % 8;
            bad[at] ^= 1 << bit;
            exercise(
                &bad,
                &|| format!("{name} with bit {bit} of byte {at} flipped"),
                &mut stats,
            );
        }
        // Header fields set to 0, their maximum, and random values.
        let fields: [(&str, usize, usize); 6] = [
            ("header_size", 4, 2),
            ("flags", 6, 4),
            ("compression", 10, 4),
            ("allocated_size", 14, 8),
            ("used_size", 22, 8),
            ("data_size", 30, 8),
        ];
        for b in &layout.blocks {
            for (field, off, width) in fields {
                let r1 = rng.next();
                let r2 = rng.next() % 100_000;
                for value in [0u64, u64::MAX, r1, r2] {
                    let mut bad = orig.clone();
                    let at = b.offset as usize + off;
                    let be = value.to_be_bytes();
                    bad[at..at + width].copy_from_slice(&be[8 - width..]);
                    exercise(
                        &bad,
                        &|| format!("{name} block {} {field} = {value}", b.index),
                        &mut stats,
                    );
                }
            }
        }
    }
    eprintln!(
        "block sweep: {} files, {} cases ({} read fully), worst case {:?} and {} KiB, total {:?}",
        files.len(),
        stats.cases,
        stats.ok,
        stats.worst_time,
        stats.worst_memory >> 10,
        t0.elapsed()
    );
    assert!(stats.cases > 100_000, "only {} cases", stats.cases);
}
