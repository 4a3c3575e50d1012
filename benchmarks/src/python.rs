//! Running the Python peers: one `python -c` script per case; it times itself with
//! `time.perf_counter` (interpreter start-up excluded) and prints `key value` lines.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use crate::measure::{BenchError, Result};

/// Helpers prepended to every script: `best(f)` mirrors [`crate::measure::best`].
const PRELUDE: &str = r#"
import sys, time
def best(f):
    start = time.perf_counter(); b = float("inf"); r = None; n = 0
    while True:
        r = None
        t = time.perf_counter(); r = f(); b = min(b, time.perf_counter() - t); n += 1
        e = time.perf_counter() - start
        if e > 3.0 or (n >= 3 and (e > 0.5 or n >= 50)):
            return b, r
def out(key, value):
    print(key, repr(float(value)), flush=True)
"#;

/// The interpreter of the interop venv, or none (Python peers skipped).
pub struct Python {
    exe: Option<PathBuf>,
}

impl Python {
    pub fn new(exe: Option<PathBuf>) -> Python {
        let exe = exe.filter(|p| {
            let ok = p.exists();
            if !ok {
                eprintln!(
                    "warning: no Python interpreter at {}: Python peers skipped",
                    p.display()
                );
            }
            ok
        });
        Python { exe }
    }

    /// The interpreter, when Python peers run.
    pub fn exe(&self) -> Option<&std::path::Path> {
        self.exe.as_deref()
    }

    /// Runs `script` with `args` (as `sys.argv[1:]`); returns its `key value` lines, or `None`
    /// when Python peers are disabled.
    pub fn run(&self, script: &str, args: &[String]) -> Result<Option<Outputs>> {
        let Some(exe) = &self.exe else {
            return Ok(None);
        };
        let out = Command::new(exe)
            .arg("-c")
            .arg(format!("{PRELUDE}\n{script}"))
            .args(args)
            .output()
            .map_err(|e| BenchError::io(exe, e))?;
        if !out.status.success() {
            return Err(BenchError::peer(
                "python",
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        let mut values = HashMap::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if let Some((k, v)) = line.split_once(' ') {
                if let Ok(x) = v.trim().parse::<f64>() {
                    values.insert(k.to_string(), x);
                }
            }
        }
        Ok(Some(Outputs(values)))
    }
}

/// The `key value` lines of one script.
pub struct Outputs(HashMap<String, f64>);

impl Outputs {
    pub fn get(&self, key: &str) -> Result<f64> {
        self.0
            .get(key)
            .copied()
            .ok_or_else(|| BenchError::peer("python", format!("script printed no `{key}`")))
    }
}

/// `o.get(key)` when Python ran, `None` when it is disabled.
pub fn opt(o: &Option<Outputs>, key: &str) -> Result<Option<f64>> {
    o.as_ref().map(|o| o.get(key)).transpose()
}
