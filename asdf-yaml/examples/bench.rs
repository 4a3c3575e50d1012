//! Parse and emit throughput on a ~20 MB ASDF tree, beside PyYAML's CLoader on the same file.
//!
//! ```text
//! cargo run --release -p asdf-yaml --example bench [-- /path/to/python]
//! ```
//! The tree mixes what large ASDF trees hold: tagged mappings (like astropy/gwcs objects),
//! inline float arrays, strings and integers. Not part of the test suite.

use std::time::Instant;

use asdf_yaml::{emit_to_string, parse_str, Node};

fn build() -> Node {
    let mut objects = Vec::new();
    for i in 0..52_000i64 {
        objects.push(
            Node::mapping([
                ("name", Node::from(format!("object {i}"))),
                ("index", Node::from(i)),
                ("scale", Node::from(i as f64 * 0.125 + 1e-3)),
                ("enabled", Node::from(i % 2 == 0)),
                ("unit", Node::from("yes")),
                ("shape", Node::sequence([i % 7 + 1, 3, 4])),
            ])
            .with_tag("tag:stsci.edu:asdf/transform/shift-1.2.0"),
        );
    }
    let rows: Vec<Node> = (0..3_300)
        .map(|r| Node::sequence((0..200).map(|c| Node::from((r * 200 + c) as f64 / 7.0))))
        .collect();
    Node::mapping([
        ("objects", Node::from(objects)),
        (
            "data",
            Node::mapping([
                ("data", Node::from(rows)),
                ("datatype", Node::from("float64")),
                ("shape", Node::sequence([3300i64, 200])),
            ])
            .with_tag("tag:stsci.edu:asdf/core/ndarray-1.1.0"),
        ),
    ])
    .with_tag("tag:stsci.edu:asdf/core/asdf-1.1.0")
}

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(v);
    }
    (best, out.expect("runs > 0"))
}

fn main() {
    let tree = build();
    let text = emit_to_string(&tree).expect("emit");
    let mb = text.len() as f64 / 1e6;
    let dir = std::env::temp_dir().join("asdf-yaml-bench");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("tree.yaml");
    std::fs::write(&path, format!("#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n{text}")).expect("write");
    println!("tree: {mb:.2} MB at {}", path.display());

    let (t_events, n_events) = best(5, || {
        let mut p = saphyr_parser::Parser::new_from_str(&text);
        let mut n = 0usize;
        while let Some(ev) = p.next_event() {
            ev.expect("event");
            n += 1;
        }
        n
    });
    println!(
        "saphyr-parser events only ({n_events} events): {:.3} s = {:.1} MB/s",
        t_events,
        mb / t_events
    );
    if std::env::var_os("BENCH_PARSE_ONLY").is_some() {
        for _ in 0..20 {
            std::hint::black_box(parse_str(&text).expect("parse"));
        }
        return;
    }
    let (t_parse, parsed) = best(5, || parse_str(&text).expect("parse"));
    assert!(parsed == tree, "round trip");
    println!(
        "asdf-yaml parse: {:.3} s = {:.1} MB/s",
        t_parse,
        mb / t_parse
    );
    let (t_emit, _) = best(5, || emit_to_string(&parsed).expect("emit"));
    println!("asdf-yaml emit:  {:.3} s = {:.1} MB/s", t_emit, mb / t_emit);

    if let Some(py) = std::env::args().nth(1) {
        let script = r#"
import sys, time, yaml
text = open(sys.argv[1], encoding="utf-8").read()
class L(yaml.CSafeLoader): pass
def undefined(loader, suffix, node):
    if isinstance(node, yaml.MappingNode): return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode): return loader.construct_sequence(node)
    return loader.construct_scalar(node)
L.add_multi_constructor("tag:stsci.edu:asdf/", undefined)
best = 1e9
for _ in range(3):
    t = time.perf_counter(); tree = yaml.load(text, Loader=L); best = min(best, time.perf_counter() - t)
mb = len(text.encode()) / 1e6
print(f"PyYAML CSafeLoader load: {best:.3f} s = {mb / best:.1f} MB/s")
best = 1e9
for _ in range(2):
    t = time.perf_counter(); yaml.dump(tree, Dumper=yaml.CSafeDumper); best = min(best, time.perf_counter() - t)
print(f"PyYAML CSafeDumper dump (tags dropped): {best:.3f} s = {mb / best:.1f} MB/s")
"#;
        let out = std::process::Command::new(py)
            .arg("-c")
            .arg(script)
            .arg(&path)
            .output()
            .expect("run python");
        print!("{}", String::from_utf8_lossy(&out.stdout));
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
    }
}
