//! `cargo run -p asdf-schema --example validate -- FILE [--schema S] [--schemas DIR] [--builtin-only]`
//!
//! Reads the YAML tree of an ASDF file, validates it (built-in checks, tag schemas from
//! `--schemas` directories, `ASDF_SCHEMA_PATH` and a Python environment's `asdf_standard`, and
//! an optional custom schema), prints the report; exit code 0 when valid, 1 when invalid, 2 on
//! error.

use std::path::PathBuf;
use std::process::ExitCode;

use asdf_schema::{validate_file, ValidateOptions};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut file = None;
    let mut opts = ValidateOptions::default();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--schema" => opts.custom_schema = args.next().map(PathBuf::from),
            "--schemas" => {
                if let Some(d) = args.next() {
                    opts.schema_dirs.push(PathBuf::from(d));
                }
            }
            "--builtin-only" => {
                opts = ValidateOptions {
                    custom_schema: opts.custom_schema,
                    ..ValidateOptions::builtin_only()
                }
            }
            "--python" => opts.python = args.next().map(PathBuf::from),
            _ => file = Some(PathBuf::from(a)),
        }
    }
    let Some(file) = file else {
        eprintln!(
            "usage: validate FILE [--schema S] [--schemas DIR] [--python PY] [--builtin-only]"
        );
        return ExitCode::from(2);
    };
    let report = validate_file(&file, &opts);
    match report {
        Ok(r) => {
            print!("{}: {r}", file.display());
            if r.is_valid() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("{}: {e}", file.display());
            ExitCode::from(2)
        }
    }
}
