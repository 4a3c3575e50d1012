//! Case 10: a catalogue tree written by Python asdf (issue 15's shape: 200 000 rows of
//! `{id, name, vals: [a, b, c], ok, nested: {k, n: null}}`, a ~22 MB tree): open and walk it,
//! validate it against its schemas, and parse its text alone beside the YAML parsers people
//! use — rapidyaml (C++, parse only), PyYAML's C loader and saphyr-parser (events only).
//!
//! Ours opens through `AsdfFile::open` (checksums verified, the tree resolved and shared); the
//! tree is dropped outside the timing, as `asdftool` leaves it to the OS at exit. Memory is the
//! growth of peak resident memory during a first open, as a multiple of the tree's text.

use asdf::yaml::{Engine, Node, ParseOptions};

use super::tree::{open_walk_script, walk};
use super::{arg, Ctx};
use crate::measure::{best, best_one_and_all, on_threads, BenchError, Result, Row};
use crate::python::opt;

const PY_WRITE: &str = r#"
import asdf
p, n = sys.argv[1], int(sys.argv[2])
rows = [{"id": i, "name": f"source-{i}", "vals": [i * 0.5, i + 0.25, -i * 1.5],
         "ok": i % 2 == 0, "nested": {"k": f"k{i % 97}", "n": None}} for i in range(n)]
asdf.AsdfFile({"catalog": rows}).write_to(p)
out("written", n)
"#;

/// After [`open_walk_script`]: validation, then parsing the tree text alone.
const PY_VALIDATE_PARSE: &str = r#"
import yaml
def validate():
    with asdf.open(p, lazy_tree=False) as af:
        t = time.perf_counter(); af.validate(); return time.perf_counter() - t
out("validate", min(validate() for _ in range(1 if QUICK else 2)))
with open(p, "rb") as f:
    data = f.read()
text = data[:data.find(b"\n...\n") + 5]  # the same text as ours: header comments and tree
class Loader(yaml.CSafeLoader):
    pass
def tagged(loader, suffix, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)
Loader.add_multi_constructor("tag:stsci.edu:asdf/", tagged)
t, _ = best(lambda: yaml.load(text, Loader=Loader))
out("pyyaml", t)
try:
    import ryml
except ImportError:
    ryml = None
if ryml is not None:
    t, _ = best(lambda: ryml.parse_in_arena(text))
    out("ryml", t)
"#;

/// The same catalogue written by us, for runs without Python.
fn write_ours(path: &std::path::Path, n: usize) -> Result<()> {
    let row = |i: usize| {
        let x = i as f64;
        Node::mapping([
            ("id", Node::from(i)),
            ("name", Node::from(format!("source-{i}"))),
            ("vals", Node::sequence([x * 0.5, x + 0.25, -x * 1.5])),
            ("ok", Node::from(i % 2 == 0)),
            (
                "nested",
                Node::mapping([
                    ("k", Node::from(format!("k{}", i % 97))),
                    ("n", Node::null()),
                ]),
            ),
        ])
    };
    let tree = Node::mapping([("catalog", Node::sequence((0..n).map(row)))]);
    asdf::AsdfWriter::new()
        .write_path(path, tree, &Default::default())
        .map_err(BenchError::ours)
}

/// The hidden command line of [`child`].
const CHILD_FLAG: &str = "--child-open-walk";

/// Opens `path`, walks the tree under `pointer` and returns the leaves and this process's peak
/// resident memory in KiB, leaving the tree unfreed (as `asdftool` does at exit): the child side
/// of [`open_walk_process`].
fn child_report(path: &str, pointer: &str) -> std::result::Result<(u64, u64), String> {
    let f = asdf::AsdfFile::open(path).map_err(|e| e.to_string())?;
    let leaves = f
        .pointer(pointer)
        .map(|n| walk(n).0)
        .ok_or("no such node")?;
    std::mem::forget(f);
    let peak = crate::measure::status_kib("VmHWM").ok_or("no VmHWM in /proc/self/status")?;
    Ok((leaves, peak))
}

/// The bench binary's child mode: with `--child-open-walk FILE POINTER`, prints what
/// [`child_report`] finds and exits. `None` for any other command line.
pub fn child(args: &[String]) -> Option<std::process::ExitCode> {
    let [flag, path, pointer] = args else {
        return None;
    };
    if flag != CHILD_FLAG {
        return None;
    }
    Some(match child_report(path, pointer) {
        Ok((leaves, peak)) => {
            println!("leaves {leaves}\npeak_kib {peak}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::ExitCode::FAILURE
        }
    })
}

/// The command that runs [`child_report`] in a process of its own: the bench binary in child
/// mode, or under `cargo test` (where this executable is the test harness) the test
/// `open_walk_child` with the request in the environment.
fn child_command(path: &std::path::Path, pointer: &str) -> Result<std::process::Command> {
    let exe = std::env::current_exe().map_err(|e| BenchError::io(std::path::Path::new("."), e))?;
    let mut cmd = std::process::Command::new(exe);
    if cfg!(test) {
        cmd.args([
            "--exact",
            "cases::catalog::tests::open_walk_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, format!("{}\n{pointer}", path.display()));
    } else {
        cmd.arg(CHILD_FLAG).arg(path).arg(pointer);
    }
    Ok(cmd)
}

/// Under `cargo test`: the file and pointer the child test is to open and walk.
const CHILD_ENV: &str = "ASDF_BENCH_OPEN_WALK_CHILD";

/// Our open + walk of `pointer` in `path` as a process of its own (what `asdftool info` does):
/// the best wall time of a few runs, and the peak resident memory of the process in bytes.
fn open_walk_process(path: &std::path::Path, pointer: &str, leaves: u64) -> Result<(f64, u64)> {
    let mut peak = 0;
    let (secs, ()) = best(|| {
        let out = child_command(path, pointer)?
            .output()
            .map_err(|e| BenchError::io(path, e))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let value = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok())
        };
        match (out.status.success(), value("leaves "), value("peak_kib ")) {
            (true, Some(l), Some(k)) if l == leaves => {
                peak = k * 1024;
                Ok(())
            }
            _ => Err(BenchError::mismatch(
                "catalog",
                format!(
                    "the child process said {text:?}, {}",
                    String::from_utf8_lossy(&out.stderr)
                ),
            )),
        }
    })?;
    Ok((secs, peak))
}

/// Parse-only rows: ours on one thread and on all, saphyr-parser's events, and the Python
/// parsers' times from `py`.
fn parse_rows(ctx: &Ctx, text: &str, py: &Option<crate::python::Outputs>) -> Result<Vec<Row>> {
    let parse =
        || asdf::yaml::parse_document(text, &ParseOptions::default()).map_err(BenchError::ours);
    let (one, all) = best_one_and_all(ctx.threads, parse)?;
    let (saphyr, _) = best(|| {
        let mut p = saphyr_parser::Parser::new_from_str(text);
        let mut n = 0u64;
        while let Some(ev) = p.next_event() {
            ev.map_err(|e| BenchError::peer("saphyr-parser", e))?;
            n += 1;
        }
        Ok(n)
    })?;
    // Ours without the fast parser: the reference path every input can take.
    let reference = ParseOptions {
        engine: Engine::Reference,
        ..ParseOptions::default()
    };
    let (slow, _) = on_threads(1, || {
        best(|| asdf::yaml::parse_document(text, &reference).map_err(BenchError::ours))
    })??;
    let bytes = text.len() as u64;
    let t = ctx.threads;
    let mut rows = vec![
        Row::new(
            "10. parse catalogue text to a tree [1 thr] vs rapidyaml parse (no scalar resolution)",
            one,
        )
        // Absent when the venv has no rapidyaml.
        .peer_opt("rapidyaml", py.as_ref().and_then(|o| o.get("ryml").ok()))
        .bytes(bytes),
        Row::new(
            "10. parse catalogue text to a tree [1 thr] vs PyYAML CSafeLoader",
            one,
        )
        .peer_opt("PyYAML C", opt(py, "pyyaml")?)
        .bytes(bytes),
        Row::new(
            "10. parse catalogue text to a tree [1 thr] vs saphyr-parser events only",
            one,
        )
        .peer("saphyr-parser", saphyr)
        .bytes(bytes),
        Row::new(format!("10. parse catalogue text to a tree [{t} thr]"), all)
            .peer("ours [1 thr]", one)
            .bytes(bytes),
        Row::new(
            "10. parse catalogue text to a tree [1 thr] vs our reference parser (saphyr events)",
            one,
        )
        .peer("ours, reference", slow)
        .bytes(bytes),
    ];
    rows.extend(rare_rows(ctx, text, &reference)?);
    Ok(rows)
}

/// On one thread, ours against our reference parser reading all of it: the catalogue with a
/// verbatim tag on every row (Python asdf writes every tag outside `tag:stsci.edu:asdf/` so:
/// gwcs, asdf-astropy, roman_datamodels), with tabs in comments and at line ends, as minified
/// JSON (which is YAML too), with constructs the fast parser reads since 2026-11-30 in every row
/// (two sets), and nested past the 96 levels the fast parser follows on its caller's thread,
/// once and in every row.
fn rare_rows(ctx: &Ctx, text: &str, reference: &ParseOptions) -> Result<Vec<Row>> {
    let parse = |text: &str, options: &ParseOptions| {
        on_threads(1, || {
            best(|| asdf::yaml::parse_document(text, options).map_err(BenchError::ours))
        })
    };
    let ours_vs_reference = |label: &str, text: &str| -> Result<Row> {
        let (ours, _) = parse(text, &ParseOptions::default())??;
        let (slow, _) = parse(text, reference)??;
        Ok(Row::new(label, ours)
            .peer("ours, reference", slow)
            .bytes(text.len() as u64))
    };
    let tagged = text.replace("\n- id: ", "\n- !<tag:example.org:row-1.0.0>\n  id: ");
    let tabbed = text
        .replace("\n- id: ", "\t# row\tcomment\n- id: ")
        .replace("\n  name: source-", "\t\n  name: source-");
    let mut rows = vec![
        ours_vs_reference(
            "10. parse catalogue text with a verbatim tag (`!<...>`) on every row, as gwcs and asdf-astropy write them [1 thr] vs our reference parser",
            &tagged,
        )?,
        ours_vs_reference(
            "10. parse catalogue text with tabs, as hand-edited YAML has them (a tab comment after every row, a trailing tab before every name) [1 thr] vs our reference parser",
            &tabbed,
        )?,
    ];
    rows.extend(json_rows(text, reference)?);
    // What the fast parser left to the reference parser until 2026-11-30, in every row: a
    // plain scalar continued on a tab-led line, an anchor on a key, a `:`-led plain scalar and
    // a single-pair mapping in a flow sequence.
    let widened = text.replace(
        "\n  name: source-",
        "\n  memo: a plain scalar\n    \tcontinued\n  state: :active\n  pairs: [a: 1, b: 2]\n  &n name: source-",
    );
    // The row means what it says only if the fast parser reads all of it itself.
    let fast_only = ParseOptions {
        engine: Engine::Fast,
        ..ParseOptions::default()
    };
    asdf::yaml::parse_document(&widened, &fast_only).map_err(BenchError::ours)?;
    rows.push(ours_vs_reference(
        "10. parse catalogue text with constructs the fast parser reads since 2026-11-30 in every row (a plain scalar continued on a tab-led line, an anchor on a key, a `:`-led plain scalar, single-pair mappings in a flow sequence) [1 thr] vs our reference parser",
        &widened,
    )?);
    // What it left until the evening of 2026-11-30 (the last of the YAML test suite's valid
    // inputs it did not read), in every row: an alias as a key, an empty key (a null key: one
    // warning per row), tabs after `:` and in a line's indentation, explicit and empty keys in a
    // flow mapping, properties alone on a line before an indentless sequence.
    let rest = text.replace(
        "\n  name: source-",
        "\n  memo: &m a note\n  *m : an alias as a key\n  : an empty key\n  tabbed:\t value\n  list:\n   \t- after a tab\n  flow: {? explicit: key, : empty}\n  seq:\n   &s\n  - a\n  name: source-",
    );
    asdf::yaml::parse_document(&rest, &fast_only).map_err(BenchError::ours)?;
    rows.push(ours_vs_reference(
        "10. parse catalogue text with the constructs the fast parser reads since the evening of 2026-11-30 in every row (an alias as a key, an empty key, tabs after `:` and in indentation, explicit and empty keys in a flow mapping, properties before an indentless sequence) [1 thr] vs our reference parser",
        &rest,
    )?);
    // Nesting past the 96 levels the fast parser follows on a thread whose stack bounds are
    // unknown: on Linux it is followed in place while the stack has room (the fast parser alone
    // reads it).
    let deep = format!("{}1{}", "[".repeat(100), "]".repeat(100));
    let memo = format!("\n  memo: {deep}\n  name: source-");
    let memo = memo.as_str();
    if let Some(at) = text
        .find("\n  name: source-100000\n")
        .or_else(|| text.find("\n  name: source-50\n"))
    {
        let once = format!(
            "{}{memo}{}",
            &text[..at],
            &text[at + "\n  name: source-".len()..]
        );
        asdf::yaml::parse_document(&once, &fast_only).map_err(BenchError::ours)?;
        rows.push(ours_vs_reference(
            "10. parse catalogue text nested 100 deep in one row (past the 96 levels the fast parser follows where a thread's stack bounds are unknown; followed in place while the stack has room) [1 thr] vs our reference parser",
            &once,
        )?);
    }
    let every = text.replace("\n  name: source-", memo);
    let label = "10. parse catalogue text nested 100 deep in every row";
    let (one, all) = best_one_and_all(ctx.threads, || {
        asdf::yaml::parse_document(&every, &ParseOptions::default()).map_err(BenchError::ours)
    })?;
    let (slow, _) = parse(&every, reference)??;
    let bytes = every.len() as u64;
    rows.push(
        Row::new(format!("{label} [1 thr] vs our reference parser"), one)
            .peer("ours, reference", slow)
            .bytes(bytes),
    );
    rows.push(
        Row::new(
            format!(
                "{label} [{} thr] vs our reference parser [1 thr]",
                ctx.threads
            ),
            all,
        )
        .peer("ours, reference", slow)
        .bytes(bytes),
    );
    Ok(rows)
}

/// The catalogue's rows as minified JSON (`{"catalog":[{"id":0,...},...]}`, one line, as
/// `json.dumps` writes it), parsed by ours (one thread; a single line is not split) against
/// our reference parser and against serde_json building its own `Value` (JSON only, no YAML
/// resolution: a limit, not a peer that reads YAML). The rows are read back from the parsed
/// catalogue (through `asdf_schema::to_json`), so the JSON holds the same values.
fn json_rows(text: &str, reference: &ParseOptions) -> Result<Vec<Row>> {
    let doc =
        asdf::yaml::parse_document(text, &ParseOptions::default()).map_err(BenchError::ours)?;
    let json = serde_json::to_string(&serde_json::json!({
        "catalog": asdf_schema::to_json(&doc.root["catalog"])
    }))
    .map_err(BenchError::ours)?;
    let parse = |options: &ParseOptions| {
        on_threads(1, || {
            best(|| asdf::yaml::parse_document(&json, options).map_err(BenchError::ours))
        })
    };
    let (ours, parsed) = parse(&ParseOptions::default())??;
    let (slow, _) = parse(reference)??;
    let (serde, _) = best(|| {
        serde_json::from_str::<serde_json::Value>(&json)
            .map_err(|e| BenchError::peer("serde_json", e))
    })?;
    if parsed.root["catalog"].len() != doc.root["catalog"].len() {
        return Err(BenchError::mismatch("catalog", "the JSON text lost rows"));
    }
    let label = "10. parse catalogue as minified JSON text (one line) [1 thr]";
    let bytes = json.len() as u64;
    Ok(vec![
        Row::new(format!("{label} vs our reference parser"), ours)
            .peer("ours, reference", slow)
            .bytes(bytes),
        Row::new(
            format!("{label} vs serde_json to its Value (JSON only, no YAML; limit)"),
            ours,
        )
        .peer("serde_json", serde)
        .bytes(bytes),
    ])
}

/// Our validation of `tree` with every schema its tags name: the best time, and what ran.
fn validate(ctx: &Ctx, tree: &Node) -> Result<(f64, String)> {
    let validator = asdf_schema::Validator::new(&asdf_schema::ValidateOptions {
        python: ctx.py.exe().map(Into::into),
        ..Default::default()
    })
    .map_err(BenchError::ours)?;
    let (valid, report) = best(|| validator.validate(tree).map_err(BenchError::ours))?;
    if !report.report.is_valid() {
        return Err(BenchError::mismatch(
            "catalog",
            format!("validate: {}", report.report),
        ));
    }
    let schemas = match report.schemas {
        0 => "no schema files found: built-in checks only".to_string(),
        k => format!("{k} schemas"),
    };
    Ok((valid, schemas))
}

pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let n = ((200_000.0 * ctx.scale) as usize).max(100);
    let path = ctx.dir.join("catalog.asdf");
    if ctx
        .py
        .run(PY_WRITE, &[arg(&path), n.to_string()])?
        .is_none()
    {
        write_ours(&path, n)?;
    }
    let bytes = std::fs::read(&path).map_err(|e| BenchError::io(&path, e))?;
    // The header comments and the YAML document, without the blocks: what each parser is given.
    let text =
        std::str::from_utf8(asdf_testkit::asdf_tree_text(&bytes)).map_err(BenchError::ours)?;
    let tree_bytes = text.len() as u64;
    let what = format!("{n} rows, {:.1} MB tree", tree_bytes as f64 / 1e6);

    let open_walk = || {
        let f = asdf::AsdfFile::open(&path).map_err(BenchError::ours)?;
        let n = f
            .pointer("/catalog")
            .map(|n| walk(n).0)
            .ok_or_else(|| BenchError::mismatch("catalog", "no /catalog"))?;
        Ok((n, f))
    };
    let (ours, (count, file)) = best(open_walk)?;
    let (process, peak) = open_walk_process(&path, "/catalog", count)?;
    let (valid, schemas) = validate(ctx, file.tree())?;
    drop(file);

    let script = open_walk_script("catalog") + PY_VALIDATE_PARSE;
    let py = ctx.py.run(&script, &[arg(&path), n.to_string()])?;
    if let Some(l) = opt(&py, "leaves")? {
        if l as u64 != count {
            return Err(BenchError::mismatch(
                "catalog",
                format!("Python saw {l} leaves, we saw {count}"),
            ));
        }
    }
    let mut rows = vec![
        Row::new("10. open + walk catalogue tree vs Python asdf", ours)
            .peer_opt("Python asdf", opt(&py, "open_walk")?)
            .bytes(tree_bytes)
            .note(what.clone()),
        Row::new(
            "10. open + walk catalogue tree as a process of its own (like asdftool info)",
            process,
        )
        .peer_opt("Python asdf, in process", opt(&py, "open_walk")?)
        .bytes(tree_bytes)
        .note(format!(
            "{what}; peak resident memory {} MiB = {:.1}× the tree text",
            peak >> 20,
            peak as f64 / tree_bytes as f64
        )),
        Row::new(
            "10. validate catalogue tree with its schemas vs Python asdf validate()",
            valid,
        )
        .peer_opt("Python asdf", opt(&py, "validate")?)
        .bytes(tree_bytes)
        .note(format!(
            "{what}; tree already read on both sides; ours: {schemas}"
        )),
    ];
    rows.extend(parse_rows(ctx, text, &py)?);
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The child of [`open_walk_process`] under `cargo test` when [`CHILD_ENV`] is set; otherwise
    /// the parent side on a small catalogue: the child's walk must count every leaf and report
    /// its memory.
    #[test]
    fn open_walk_child() {
        if let Ok(spec) = std::env::var(CHILD_ENV) {
            let (path, pointer) = spec.split_once('\n').expect("file and pointer");
            let (leaves, peak) = child_report(path, pointer).expect("child report");
            // After libtest's "test ... " (no newline): our lines start on a line of their own.
            println!("\nleaves {leaves}\npeak_kib {peak}");
            return;
        }
        let dir = std::env::temp_dir().join(format!("asdf-bench-child-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let path = dir.join("catalog.asdf");
        write_ours(&path, 50).expect("write");
        // Eight leaves a row: id, name, three vals, ok, nested k and n.
        let (secs, peak) = open_walk_process(&path, "/catalog", 8 * 50).expect("child run");
        assert!(secs > 0.0 && peak > 0, "{secs} s, {peak} bytes");
        assert!(
            open_walk_process(&path, "/catalog", 1).is_err(),
            "a wrong count must fail"
        );
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
