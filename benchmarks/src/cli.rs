//! The command line.

use std::path::PathBuf;

pub const USAGE: &str = "\
usage: asdf-benchmarks [--python PATH] [--python-awkward2 PATH] [--out FILE] [--scale F]
                       [--only CASES] [--codecs LIST] [--dir DIR] [--quick]

  --python PATH  interpreter of the interop venv (asdf 6.0.0, numpy, awkward0, ...);
                 default target/interop-venv/bin/python; `none` skips every Python peer
  --python-awkward2 PATH
                 interpreter of the awkward 2 venv (awkward 2, pyarrow, NumPy 2) for case 11;
                 default target/awkward2-venv/bin/python; `none` skips those peers
  --out FILE     Markdown report to write (default BENCHMARKS.md)
  --scale F      multiply every data size by F (default 1: 1 GiB arrays, 50 MB tree,
                 10 000 arrays, 10 million jagged lists); use 0.05 while developing
  --only CASES   comma-separated subset of: tree, many, uncompressed, compressed, rawarray,
                 awkward, remote, python, printers, catalog, awkward2
  --codecs LIST  comma-separated subset of the compressed case's codecs: zlib, bzp2, lz4, zstd, blsc
  --dir DIR      where to generate data (default benchmarks/target/bench-data-<pid>; deleted)
  --quick        one run per measurement: checks that every case runs (the smoke tests);
                 the times are not figures to publish";

/// Parsed arguments.
#[derive(Debug)]
pub struct Args {
    pub python: Option<PathBuf>,
    pub python_awkward2: Option<PathBuf>,
    pub out: PathBuf,
    pub scale: f64,
    pub only: Option<Vec<String>>,
    pub codecs: Option<Vec<String>>,
    pub dir: PathBuf,
    pub quick: bool,
    pub help: bool,
}

impl Args {
    pub fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let mut a = Args {
            python: Some(root.join("../target/interop-venv/bin/python")),
            python_awkward2: Some(root.join("../target/awkward2-venv/bin/python")),
            out: PathBuf::from("BENCHMARKS.md"),
            scale: 1.0,
            only: None,
            codecs: None,
            dir: root.join(format!("target/bench-data-{}", std::process::id())),
            quick: false,
            help: false,
        };
        while let Some(flag) = it.next() {
            let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--python" => {
                    let v = value()?;
                    a.python = (v != "none").then(|| PathBuf::from(v));
                }
                "--python-awkward2" => {
                    let v = value()?;
                    a.python_awkward2 = (v != "none").then(|| PathBuf::from(v));
                }
                "--out" => a.out = PathBuf::from(value()?),
                "--dir" => a.dir = PathBuf::from(value()?),
                "--scale" => {
                    let v = value()?;
                    a.scale = v
                        .parse()
                        .ok()
                        .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s <= 4.0)
                        .ok_or_else(|| format!("--scale {v}: expected a number in (0, 4]"))?;
                }
                "--only" => {
                    let v = value()?;
                    let names: Vec<String> = v.split(',').map(|s| s.trim().to_string()).collect();
                    for n in &names {
                        if !crate::cases::ALL.iter().any(|c| c.name == n) {
                            return Err(format!("--only: unknown case `{n}`"));
                        }
                    }
                    a.only = Some(names);
                }
                "--codecs" => {
                    let v = value()?;
                    let names: Vec<String> = v.split(',').map(|s| s.trim().to_string()).collect();
                    for n in &names {
                        if !crate::cases::CODEC_NAMES.contains(&n.as_str()) {
                            return Err(format!("--codecs: unknown codec `{n}`"));
                        }
                    }
                    a.codecs = Some(names);
                }
                "--quick" => a.quick = true,
                "-h" | "--help" => a.help = true,
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        if a.python.is_none() {
            a.python_awkward2 = None;
        }
        Ok(a)
    }

    pub fn codec_selected(&self, codec: &str) -> bool {
        self.codecs
            .as_ref()
            .is_none_or(|o| o.iter().any(|n| n == codec))
    }

    pub fn selected(&self, case: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|o| o.iter().any(|n| n == case))
    }
}
