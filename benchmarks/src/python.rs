//! Running the Python peers. Each case's script times itself with `time.perf_counter` and prints
//! `key value` lines. Scripts run in one long-lived interpreter (a small server reading requests
//! on its standard input), so the bench pays Python's start-up — the interpreter, numpy, asdf and
//! every extension it loads, seconds in the interop venv — once rather than once per script, as
//! a Python user working in one session would. A script that needs a process of its own (one
//! that starts worker processes) runs with [`Python::run_alone`].

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

use crate::measure::{BenchError, Result};

/// Helpers prepended to every script: `best(f)` mirrors [`crate::measure::best`] (one run when
/// `ASDF_BENCH_QUICK=1`, which [`quick_env`] sets under `--quick`); `warm(codec)`
/// pays Python asdf's one-time start-up before anything is timed.
const PRELUDE: &str = r#"
import os, sys, time
QUICK = os.environ.get("ASDF_BENCH_QUICK") == "1"
def best(f):
    start = time.perf_counter(); b = float("inf"); r = None; n = 0
    while True:
        r = None
        t = time.perf_counter(); r = f(); b = min(b, time.perf_counter() - t); n += 1
        e = time.perf_counter() - start
        if QUICK or e > 3.0 or (n >= 3 and (e > 0.5 or n >= 50)):
            return b, r
def out(key, value):
    print(key, repr(float(value)), flush=True)
def warm(codec=None):
    # Python asdf loads every installed extension (asdf-astropy, gwcs, roman_datamodels, ...)
    # and its compressors on first use: seconds of one-time work that `best` would count in a
    # case whose first run already takes 3 s. Paid here, untimed, as our side pays none.
    import io, asdf, numpy
    b = io.BytesIO()
    asdf.AsdfFile({"warm": numpy.arange(64.0)}).write_to(b, all_array_compression=codec)
    b.seek(0)
    with asdf.open(b, lazy_load=False, memmap=False) as af:
        numpy.asarray(af["warm"])
"#;

/// The server: a request is the number of arguments, the arguments (one per line), the byte
/// length of the script and the script; the answer is what the script printed, then a line
/// `DONE ok` or `DONE error` (after the traceback). Each script runs in fresh globals, which
/// are dropped (and garbage collected) before the answer.
const SERVER: &str = r#"
import sys, io, gc, contextlib, traceback
DONE = sys.argv[1]
inp = sys.stdin.buffer
while True:
    head = inp.readline()
    if not head:
        break
    args = [inp.readline().decode().rstrip("\n") for _ in range(int(head))]
    script = inp.read(int(inp.readline())).decode()
    sys.argv = ["-c"] + args
    buf, status, g = io.StringIO(), "ok", {"__name__": "__main__"}
    with contextlib.redirect_stdout(buf):
        try:
            exec(compile(script, "<bench case>", "exec"), g)
        except SystemExit as e:
            if e.code not in (None, 0):
                status = "error"
                print("exit status", e.code)
        except BaseException:
            status = "error"
            traceback.print_exc(file=buf)
    del g
    gc.collect()
    sys.stdout.write(buf.getvalue())
    sys.stdout.write(f"{DONE} {status}\n")
    sys.stdout.flush()
"#;

/// Marks the end of an answer; no script prints it.
const DONE: &str = "\u{1e}bench-script-done";

/// The interpreter of the interop venv, or none (Python peers skipped).
pub struct Python {
    exe: Option<PathBuf>,
    server: Mutex<Option<Server>>,
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
        Python {
            exe,
            server: Mutex::new(None),
        }
    }

    /// The interpreter, when Python peers run.
    pub fn exe(&self) -> Option<&std::path::Path> {
        self.exe.as_deref()
    }

    /// Runs `script` with `args` (as `sys.argv[1:]`) in the shared interpreter, started on first
    /// use; returns its `key value` lines, or `None` when Python peers are disabled.
    pub fn run(&self, script: &str, args: &[String]) -> Result<Option<Outputs>> {
        let Some(exe) = &self.exe else {
            return Ok(None);
        };
        let mut server = self
            .server
            .lock()
            .map_err(|_| BenchError::peer("python", "the server lock is poisoned"))?;
        if server.is_none() {
            *server = Some(Server::start(exe)?);
        }
        let Some(s) = server.as_mut() else {
            return Err(BenchError::peer("python", "no server"));
        };
        match s.run(&format!("{PRELUDE}\n{script}"), args) {
            Ok(text) => Ok(Some(Outputs::parse(&text))),
            Err(e) => {
                // A server that failed mid-answer is not reused.
                *server = None;
                Err(e)
            }
        }
    }

    /// Runs `script` in an interpreter of its own (for scripts that start worker processes,
    /// which must not inherit the server's pipes).
    pub fn run_alone(&self, script: &str, args: &[String]) -> Result<Option<Outputs>> {
        let Some(exe) = &self.exe else {
            return Ok(None);
        };
        let out = Command::new(exe)
            .arg("-c")
            .arg(format!("{PRELUDE}\n{script}"))
            .args(args)
            .env("ASDF_BENCH_QUICK", quick_env())
            .output()
            .map_err(|e| BenchError::io(exe, e))?;
        if !out.status.success() {
            return Err(BenchError::peer(
                "python",
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        Ok(Some(Outputs::parse(&String::from_utf8_lossy(&out.stdout))))
    }
}

/// `ASDF_BENCH_QUICK` for the scripts: `1` under `--quick`.
fn quick_env() -> &'static str {
    if crate::measure::quick() {
        "1"
    } else {
        "0"
    }
}

/// The running server; its standard error is ours (warnings show on the console).
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start(exe: &std::path::Path) -> Result<Server> {
        let mut child = Command::new(exe)
            .arg("-c")
            .arg(SERVER)
            .arg(DONE)
            .env("ASDF_BENCH_QUICK", quick_env())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| BenchError::io(exe, e))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(BenchError::peer("python", "the server has no pipes"));
        };
        Ok(Server {
            child,
            stdin,
            stdout: BufReader::new(stdout),
        })
    }

    /// Sends one script, returns what it printed; an error carries the traceback.
    fn run(&mut self, script: &str, args: &[String]) -> Result<String> {
        let mut request = format!("{}\n", args.len());
        for a in args {
            if a.contains('\n') {
                return Err(BenchError::peer(
                    "python",
                    format!("argument {a:?} has a newline"),
                ));
            }
            request.push_str(a);
            request.push('\n');
        }
        request.push_str(&format!("{}\n", script.len()));
        request.push_str(script);
        let io = |e: std::io::Error| BenchError::peer("python", format!("server: {e}"));
        self.stdin.write_all(request.as_bytes()).map_err(io)?;
        self.stdin.flush().map_err(io)?;
        let mut text = String::new();
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line).map_err(io)? == 0 {
                return Err(BenchError::peer(
                    "python",
                    format!("the server died:\n{text}"),
                ));
            }
            match line.trim_end().strip_prefix(DONE) {
                Some(" ok") => return Ok(text),
                Some(_) => return Err(BenchError::peer("python", text.trim().to_string())),
                None => text.push_str(&line),
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `key value` lines of one script.
#[derive(Debug)]
pub struct Outputs(HashMap<String, f64>);

impl Outputs {
    fn parse(text: &str) -> Outputs {
        let mut values = HashMap::new();
        for line in text.lines() {
            if let Some((k, v)) = line.split_once(' ') {
                if let Ok(x) = v.trim().parse::<f64>() {
                    values.insert(k.to_string(), x);
                }
            }
        }
        Outputs(values)
    }

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

#[cfg(test)]
mod tests {
    use super::Python;
    use std::path::PathBuf;

    fn python() -> Option<Python> {
        let exe = std::env::var_os("ASDF_TEST_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/interop-venv/bin/python")
            });
        if !exe.exists() {
            assert!(std::env::var_os("ASDF_REQUIRE_INTEROP").is_none());
            eprintln!("SKIPPED: no interop venv at {}", exe.display());
            return None;
        }
        Some(Python::new(Some(exe)))
    }

    #[test]
    fn the_server_runs_scripts_in_fresh_globals_and_survives_their_failures() {
        let Some(py) = python() else { return };
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let set = "x = int(sys.argv[1]); out('x', x); out('defined_before', 'y' in globals())";
        let o = py.run(set, &args(&["7"])).unwrap().unwrap();
        assert_eq!(
            (o.get("x").unwrap(), o.get("defined_before").unwrap()),
            (7.0, 0.0)
        );
        // The next script sees none of the previous one's globals, and its own arguments.
        let check = "out('had_x', 'x' in globals()); out('n', len(sys.argv))";
        let o = py.run(check, &args(&["a b", "c"])).unwrap().unwrap();
        assert_eq!((o.get("had_x").unwrap(), o.get("n").unwrap()), (0.0, 3.0));
        // A failing script is an error carrying its traceback; the server keeps serving.
        let e = py.run("raise ValueError('boom 42')", &[]).unwrap_err();
        assert!(e.to_string().contains("boom 42"), "{e}");
        let e = py.run("sys.exit(3)", &[]).unwrap_err();
        assert!(e.to_string().contains("exit status 3"), "{e}");
        assert!(py.run("sys.exit(0)", &[]).is_ok());
        let o = py.run("out('after', 1)", &[]).unwrap().unwrap();
        assert_eq!(o.get("after").unwrap(), 1.0);
        assert!(py.run("pass", &args(&["new\nline"])).is_err());
        // A script that kills its interpreter: an error, then a new server.
        assert!(py.run("os._exit(1)", &[]).is_err());
        let o = py.run("out('again', 2)", &[]).unwrap().unwrap();
        assert_eq!(o.get("again").unwrap(), 2.0);
        assert!(Python::new(None).run("out('x', 1)", &[]).unwrap().is_none());
    }
}
