//! Roman products (issue 17): every model of roman_datamodels 1.2.0, made with
//! `create_fake_data` and saved by roman_datamodels itself. `verify`, `info` and `validate`
//! against the venv's schemas (rad's Roman schemas included) succeed on each, and the output of
//! every rewriting verb (`defragment` with a codec Python reads, each codec taking its turn over
//! the models) opens in roman_datamodels (warnings as errors) as a model of the same class that
//! validates and holds the same values.

use crate::common::*;

use asdf_testkit::{require_python, run_python, TempDir};

/// Writes every model into argv[1]; prints their names.
const WRITE: &str = r#"
import sys, os
from roman_datamodels import datamodels as dm
out = sys.argv[1]
for name in sorted(dir(dm)):
    cls = getattr(dm, name)
    if name.endswith("Model") and isinstance(cls, type) and name != "DataModel":
        cls.create_fake_data(shape=(8, 8)).save(os.path.join(out, name + ".asdf"))
        print(name)
"#;

/// Opens each rewritten file of argv[2] (one directory per verb) and argv[3] (exploded files,
/// one directory per model) beside its original in argv[1], for the originals whose index in
/// name order is argv[5] modulo argv[4] (so the work splits over processes); prints every
/// mismatch, then `checked N` and `bad N`.
const CHECK: &str = r#"
import sys, glob, os, warnings, numpy as np
import roman_datamodels as rdm
from asdf._commands.to_yaml import to_yaml

def same(a, b, path=""):
    if hasattr(a, "shape") and hasattr(a, "dtype"):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, (path, a.dtype, b.dtype)
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), path
    elif hasattr(a, "colnames"):
        assert list(a.colnames) == list(b.colnames), path
        for c in a.colnames:
            same(a[c], b[c], f"{path}/{c}")
    elif hasattr(a, "items"):
        ka, kb = set(dict(a.items())), set(dict(b.items()))
        assert ka == kb, (path, ka ^ kb)
        for k in ka:
            same(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}/{i}")
    else:
        try:
            eq = bool(np.all(a == b))
        except Exception:
            eq = False
        assert eq or repr(a) == repr(b), (path, a, b)

def python_to_yaml_fails(orig):
    # Python asdf writes an inline structured array without its fields' byte orders, which the
    # Roman schemas require: its own to_yaml of such a model raises.
    try:
        to_yaml(orig, os.path.join(sys.argv[2], "python-to-yaml.asdf"))
        return False
    except Exception:
        return True

bad = checked = 0
shards, shard = int(sys.argv[4]), int(sys.argv[5])
for orig in sorted(glob.glob(os.path.join(sys.argv[1], "*.asdf")))[shard::shards]:
    name = os.path.basename(orig)
    with rdm.open(orig) as m0:
        outs = sorted(glob.glob(os.path.join(sys.argv[2], "*", name)))
        for out in outs + [os.path.join(sys.argv[3], name[:-5], name)]:
            verb = os.path.basename(os.path.dirname(out)) if out in outs else "explode"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    with rdm.open(out) as m1:
                        assert type(m1) is type(m0), (type(m0), type(m1))
                        same(m0._instance, m1._instance)
                        try:
                            m1.validate()
                        except Exception:
                            if not (verb == "to-yaml" and python_to_yaml_fails(orig)):
                                raise
                checked += 1
            except Exception as e:
                bad += 1
                print(verb, name, repr(e)[:300])
print("checked", checked)
print("bad", bad)
"#;

/// Every codec Python asdf reads (zlib, bzp2 and lz4 itself; lz4f, zstd and blsc through
/// asdf-compression). Each model is defragmented with one of them, in turn: a codec only
/// transforms block bytes, so every codec still meets several models (and every model a codec)
/// at a sixth of the cost of every pair, which took most of this suite's time.
const CODECS: [&str; 6] = ["zlib", "bzp2", "lz4", "lz4f", "zstd", "blsc"];

/// The work splits over this many threads and Python processes: the machine's two cores.
const SHARDS: usize = 2;

#[test]
fn every_roman_model_survives_every_rewrite() {
    let py = require_python!();
    let t = TempDir::new("roman");
    let (orig, out) = (t.join("orig"), t.join("out"));
    std::fs::create_dir_all(&orig).unwrap();
    let names = String::from_utf8(run_python(&py, WRITE, &[p(&orig)])).unwrap();
    let names: Vec<&str> = names.lines().collect();
    assert!(names.len() >= 40, "{names:?}");
    let dirs: Vec<String> = CODECS
        .iter()
        .map(|c| format!("defragment-{c}"))
        .chain(["to-yaml", "convert", "implode", "salvage"].map(String::from))
        .collect();
    for dir in &dirs {
        std::fs::create_dir_all(out.join(dir)).unwrap();
    }
    validate_all(&py, &orig, &names);
    std::thread::scope(|s| {
        for shard in 0..SHARDS {
            let (names, t, orig, out) = (&names, &t, &orig, &out);
            s.spawn(move || {
                for (i, name) in names.iter().enumerate().skip(shard).step_by(SHARDS) {
                    let codec = CODECS[i % CODECS.len()];
                    check_and_rewrite(t, &orig.join(format!("{name}.asdf")), out, name, codec);
                }
            });
        }
    });
    let exploded = t.join("exploded");
    let reports: Vec<String> = std::thread::scope(|s| {
        let shards: Vec<_> = (0..SHARDS)
            .map(|shard| {
                let (py, orig, out, exploded) = (&py, &orig, &out, &exploded);
                s.spawn(move || {
                    let (n, k) = (SHARDS.to_string(), shard.to_string());
                    let args = [p(orig), p(out), p(exploded), &n, &k];
                    String::from_utf8(run_python(py, CHECK, &args)).unwrap()
                })
            })
            .collect();
        shards.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let count = |report: &str, what: &str| -> usize {
        let line = report.lines().find_map(|l| l.strip_prefix(what));
        line.and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no `{what}` in:\n{report}"))
    };
    let checked: usize = reports.iter().map(|r| count(r, "checked ")).sum();
    let bad: usize = reports.iter().map(|r| count(r, "bad ")).sum();
    // Per model: its one defragment, the other four verbs, and its exploded file.
    let per_model = dirs.len() - CODECS.len() + 2;
    assert!(
        checked == names.len() * per_model && bad == 0,
        "{}",
        reports.concat()
    );
}

/// `validate --python` over every model in one run (the schemas of the venv's packages, rad's
/// included, loaded once): each file is valid, checked against schema files.
fn validate_all(py: &std::path::Path, orig: &std::path::Path, names: &[&str]) {
    let files: Vec<String> = names
        .iter()
        .map(|n| p(&orig.join(format!("{n}.asdf"))).to_string())
        .collect();
    let mut args = vec!["validate", "--python", p(py)];
    args.extend(files.iter().map(String::as_str));
    let r = run(&args);
    assert_eq!(code(&r), 0, "validate: {}{}", stdout(&r), stderr(&r));
    let text = stdout(&r);
    assert!(!text.contains("only the built-in checks"), "{text}");
    for f in &files {
        assert!(text.contains(&format!("{f}: valid\n")), "{f}:\n{text}");
    }
}

/// `verify` and `info` of one model, then every rewriting verb (`defragment` with `codec`) into
/// its directory of `out` (exploded files into a directory of their own under `t`, with their
/// external arrays).
fn check_and_rewrite(
    t: &TempDir,
    file: &std::path::Path,
    out: &std::path::Path,
    name: &str,
    codec: &str,
) {
    assert_fast_parser_reads(file);
    let f = p(file);
    for args in [["verify", f], ["info", f]] {
        let r = run(&args);
        assert_eq!(code(&r), 0, "{args:?} {name}: {}", stderr(&r));
    }
    let to = |verb: &str| {
        let path = out.join(verb).join(format!("{name}.asdf"));
        path.to_str().unwrap().to_string()
    };
    let exploded = t.join("exploded").join(name).join(format!("{name}.asdf"));
    std::fs::create_dir_all(exploded.parent().unwrap()).unwrap();
    let x = p(&exploded);
    let defragmented = to(&format!("defragment-{codec}"));
    let mut runs: Vec<Vec<String>> = vec![["defragment", f, "-c", codec, "-o", &defragmented]
        .map(String::from)
        .to_vec()];
    runs.extend([
        vec!["to-yaml".into(), f.into(), "-o".into(), to("to-yaml")],
        vec!["convert".into(), f.into(), to("convert")],
        vec!["explode".into(), f.into(), "-o".into(), x.into()],
        vec!["implode".into(), x.into(), "-o".into(), to("implode")],
        vec!["salvage".into(), f.into(), "-o".into(), to("salvage")],
    ]);
    for args in runs {
        let r = run(&args);
        assert_eq!(code(&r), 0, "asdftool {}: {}", args.join(" "), stderr(&r));
    }
}
