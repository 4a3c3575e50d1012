//! Case 1: open a file whose tree is about 50 MB of small mappings, and walk all of it.

use asdf::yaml::{Node, Value};

use super::{arg, Ctx};
use crate::measure::{best, BenchError, Result, Row};
use crate::python::opt;

/// Python asdf opening the file `sys.argv[1]` and walking its `/KEY` (of `sys.argv[2]` items):
/// the best time as `open_walk`, the number of leaves as `leaves`. Shared with case 10.
pub(super) fn open_walk_script(key: &str) -> String {
    r#"
import asdf
warm()
p, n = sys.argv[1], int(sys.argv[2])
def walk(x):
    if isinstance(x, dict):
        return sum(walk(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return sum(walk(v) for v in x)
    return 1
def open_walk():
    with asdf.open(p) as af:
        assert len(af.tree["KEY"]) == n
        return walk(af.tree["KEY"])
t, leaves = best(open_walk)
out("open_walk", t)
out("leaves", leaves)
"#
    .replace("KEY", key)
}

/// Leaves under `node`, and the sum of its float leaves.
pub(super) fn walk(node: &Node) -> (u64, f64) {
    match node.value() {
        Value::Map(m) => m.values().map(walk).fold((0, 0.0), add),
        Value::Seq(s) => s.iter().map(walk).fold((0, 0.0), add),
        Value::Float(f) => (1, *f),
        _ => (1, 0.0),
    }
}

fn add(a: (u64, f64), b: (u64, f64)) -> (u64, f64) {
    (a.0 + b.0, a.1 + b.1)
}

fn walk_rs(v: asdf_rs::Value<'_>) -> u64 {
    if v.is_mapping() {
        v.entries().map(|(_, c)| walk_rs(c)).sum()
    } else if v.is_sequence() {
        v.items().map(walk_rs).sum()
    } else {
        1
    }
}

/// About 130 bytes of YAML per object.
fn object(i: usize) -> Node {
    let x = i as f64;
    Node::mapping([
        ("name", Node::from(format!("NGC {i}"))),
        ("ra", Node::from((x * 0.618_033_988_75) % 360.0)),
        ("dec", Node::from((x * 0.414_213_562_37) % 180.0 - 90.0)),
        (
            "mag",
            Node::sequence([12.5 + (i % 7) as f64 * 0.25, 13.0, 14.75]),
        ),
        (
            "flags",
            Node::mapping([
                ("good", Node::from(i % 3 != 0)),
                ("n", Node::from(i as i64)),
            ]),
        ),
    ])
}

pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let n = ((380_000.0 * ctx.scale) as usize).max(100);
    let path = ctx.dir.join("tree.asdf");
    let objects = Node::mapping((0..n).map(|i| (format!("obj{i:07}"), object(i))));
    let tree = Node::mapping([("objects", objects)]);
    asdf::AsdfWriter::new()
        .write_path(&path, tree, &Default::default())
        .map_err(BenchError::ours)?;
    let size = std::fs::metadata(&path)
        .map_err(|e| BenchError::io(&path, e))?
        .len();
    let what = format!("{n} objects, {:.1} MB file", size as f64 / 1e6);

    let (ours, (leaves, _)) = best(|| {
        let f = asdf::AsdfFile::open(&path).map_err(BenchError::ours)?;
        let objects = f
            .pointer("/objects")
            .ok_or_else(|| BenchError::mismatch("tree", "no /objects"))?;
        Ok(walk(objects))
    })?;
    let (theirs_rs, leaves_rs) = best(|| {
        let f = asdf_rs::AsdfFile::open(&path).map_err(|e| BenchError::peer("asdf-rs", e))?;
        let tree = f
            .tree()
            .map_err(|e| BenchError::peer("asdf-rs", e))?
            .ok_or_else(|| BenchError::peer("asdf-rs", "no tree"))?;
        let objects = tree
            .get("objects")
            .ok_or_else(|| BenchError::peer("asdf-rs", "no objects"))?;
        Ok(walk_rs(objects))
    })?;
    if leaves_rs != leaves {
        return Err(BenchError::mismatch(
            "tree",
            format!("asdf-rs saw {leaves_rs} leaves, we saw {leaves}"),
        ));
    }
    let py = ctx
        .py
        .run(&open_walk_script("objects"), &[arg(&path), n.to_string()])?;
    if let Some(l) = opt(&py, "leaves")? {
        if l as u64 != leaves {
            return Err(BenchError::mismatch(
                "tree",
                format!("Python saw {l} leaves, we saw {leaves}"),
            ));
        }
    }
    Ok(vec![
        Row::new("1. open + walk tree vs Python asdf", ours)
            .peer_opt("Python asdf", opt(&py, "open_walk")?)
            .bytes(size)
            .note(what.clone()),
        Row::new("1. open + walk tree vs asdf-rs", ours)
            .peer("asdf-rs", theirs_rs)
            .bytes(size)
            .note(what),
    ])
}
