//! Generated data and the scratch directory.

use std::path::{Path, PathBuf};

use crate::measure::{BenchError, Result};

/// The directory data is generated in; removed on drop.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    pub fn create(path: &Path) -> Result<ScratchDir> {
        std::fs::create_dir_all(path).map_err(|e| BenchError::io(path, e))?;
        Ok(ScratchDir(path.to_path_buf()))
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    /// Deletes everything a case generated.
    pub fn clear(&self) -> Result<()> {
        clear_dir(&self.0)
    }
}

/// Deletes everything inside `dir`.
pub fn clear_dir(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| BenchError::io(dir, e))?;
    for e in entries.flatten() {
        let p = e.path();
        let r = if p.is_dir() {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
        r.map_err(|e| BenchError::io(&p, e))?;
    }
    Ok(())
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Flushes every file in `dir` to disk (`fsync`), so that the write-back of files a case just
/// wrote does not compete with the reads it times next.
pub fn sync_dir(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| BenchError::io(dir, e))?;
    for e in entries.flatten() {
        let p = e.path();
        if p.is_file() {
            std::fs::File::open(&p)
                .and_then(|f| f.sync_all())
                .map_err(|e| BenchError::io(&p, e))?;
        }
    }
    Ok(())
}

/// Deterministic float64 data that compresses like instrument data (about 3-5× with zlib):
/// Poisson-like counts around a slow baseline, stored as float64.
pub fn counts_f64(n: usize) -> Vec<f64> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let noise = (x >> 59) as f64; // 0..31
            let baseline = ((i / 4096) % 64) as f64;
            100.0 + baseline + noise
        })
        .collect()
}

/// Sum used to check that every reader returned the same numbers.
pub fn sum(v: &[f64]) -> f64 {
    v.iter().sum()
}

/// `bytes` scaled, rounded down to a multiple of `unit` (at least one unit).
pub fn scaled(bytes: u64, scale: f64, unit: u64) -> u64 {
    let b = (bytes as f64 * scale) as u64;
    (b / unit).max(1) * unit
}

/// Checks two sums agree to a relative 1e-9 (summation order differs between readers).
pub fn check_sum(case: &str, what: &str, got: f64, want: f64) -> Result<()> {
    if (got - want).abs() <= 1e-9 * want.abs().max(1.0) {
        Ok(())
    } else {
        Err(BenchError::mismatch(
            case,
            format!("{what}: sum {got} but expected {want}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_are_deterministic_and_bounded() {
        let a = super::counts_f64(10_000);
        assert_eq!(a, super::counts_f64(10_000));
        assert!(a.iter().all(|&v| (100.0..195.0).contains(&v)));
        assert!(a.iter().any(|&v| v != a[0]));
    }

    #[test]
    fn scaled_rounds_to_units() {
        assert_eq!(super::scaled(1 << 30, 0.5, 8), 1 << 29);
        assert_eq!(super::scaled(100, 0.001, 8), 8);
    }

    #[test]
    fn sums_are_checked() {
        assert!(super::check_sum("c", "w", 1.0, 1.0).is_ok());
        assert!(super::check_sum("c", "w", 1.0, 2.0).is_err());
    }
}
