//! `salvage` over a corpus of damaged files made here from one good file: blocks shifted
//! against the index, a wrong index, one block's bytes flipped, a destroyed header with and
//! without an index, a truncated file. Every intact block's array comes back with its values,
//! every other array is reported (and written as null), nothing is invented; Python asdf reads
//! every salvaged file.

use crate::common::*;

use asdf::yaml::Node;
use asdf::{AnyArray, AsdfFile, AsdfWriter, StoreOptions, WriteOptions};
use asdf_testkit::{require_python, run_python, TempDir};

const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];

/// The good file: five arrays in five blocks (two compressed, one big-endian), a note string
/// to shorten by one byte, and a block index.
fn good_file(path: &std::path::Path) {
    let mut w = AsdfWriter::new();
    let plain = StoreOptions::default();
    let zlib = StoreOptions::compressed("zlib").unwrap();
    let big = StoreOptions {
        byteorder: asdf::ndarray::ByteOrder::Big,
        ..StoreOptions::default()
    };
    let a = ndarray::Array1::from_iter(0i64..100);
    let b = ndarray::Array2::from_shape_fn((20, 7), |(i, j)| (i * 7 + j) as f32 * 0.5);
    let c = ndarray::Array1::from_iter((0..300).map(|i| (i * 7 - 500) as i16));
    let d = ndarray::Array1::from_iter((0..64).map(|i| i as u8));
    let e = ndarray::Array1::from_iter((0..50).map(|i| i as f64 / 3.0));
    let nodes = [
        w.add(&a, &plain).unwrap(),
        w.add(&b, &zlib).unwrap(),
        w.add(&c, &big).unwrap(),
        w.add(&d, &plain).unwrap(),
        w.add(&e, &zlib).unwrap(),
    ];
    let mut pairs: Vec<(&str, Node)> = NAMES.iter().copied().zip(nodes).collect();
    pairs.push(("note", Node::from("xxxx")));
    w.write_path(path, Node::mapping(pairs), &WriteOptions::default())
        .unwrap();
}

/// The block offsets of the good file, their data offsets, and where its index starts.
fn offsets(bytes: &[u8]) -> (Vec<usize>, Vec<usize>, usize) {
    let f = AsdfFile::from_bytes(bytes.to_vec(), &Default::default()).unwrap();
    let infos = f.blocks().blocks();
    let offs = infos.iter().map(|b| b.offset as usize).collect();
    let data = infos.iter().map(|b| b.data_offset as usize).collect();
    let index = f.blocks().layout().index_offset.unwrap() as usize;
    (offs, data, index)
}

/// One damaged variant: (name, bytes, arrays that must come back, arrays that must be lost).
type Damaged = (&'static str, Vec<u8>, Vec<&'static str>, Vec<&'static str>);

/// The damaged variants.
fn corpus(good: &[u8]) -> Vec<Damaged> {
    let (offs, data, index) = offsets(good);
    let all = NAMES.to_vec();
    let mut out = Vec::new();
    // Shifted: the tree one byte shorter, every block one byte before where the index says.
    let note = good.windows(4).position(|w| w == b"xxxx").unwrap();
    let mut shifted = good.to_vec();
    shifted.remove(note);
    out.push(("shifted", shifted.clone(), all.clone(), vec![]));
    // Shifted, and block 2's header destroyed: the index still numbers the blocks after it.
    let mut shifted_hole = shifted.clone();
    shifted_hole[offs[2] - 1..offs[2] + 7].fill(b'#');
    out.push((
        "shifted-hole",
        shifted_hole,
        vec!["a", "b", "d", "e"],
        vec!["c"],
    ));
    // A wrong index: file order numbers the blocks.
    let mut wrong = good.to_vec();
    let text = b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- 17\n- 4000000\n- 3\n...\n";
    wrong.truncate(index);
    wrong.extend_from_slice(text);
    out.push(("wrong-index", wrong, all.clone(), vec![]));
    // One block's data flipped (block 1, compressed): that array is lost.
    let mut flipped = good.to_vec();
    let at = data[1] + 5;
    flipped[at] ^= 0x5a;
    flipped[at + 1] ^= 0xa5;
    out.push(("flipped", flipped, vec!["a", "c", "d", "e"], vec!["b"]));
    // Block 3's header destroyed, no index: file order is certain up to block 3 only.
    let mut hole = good[..index].to_vec();
    hole[offs[3]..offs[3] + 10].fill(0x55);
    out.push(("hole-no-index", hole, vec!["a", "b", "c"], vec!["d", "e"]));
    // Truncated inside the last block.
    let cut = good[..data[4] + 6].to_vec();
    out.push(("truncated", cut, vec!["a", "b", "c", "d"], vec!["e"]));
    out
}

fn read_all(f: &AsdfFile) -> Vec<(String, AnyArray)> {
    NAMES
        .iter()
        .filter_map(|n| {
            let p = format!("/{n}");
            f.pointer(&p)
                .filter(|node| !node.is_null())
                .map(|_| (p.clone(), f.read(&p).unwrap()))
        })
        .collect()
}

#[test]
fn damaged_corpus_recovers_every_intact_block_and_invents_nothing() {
    let t = TempDir::new("salvage");
    let good_path = t.join("good.asdf");
    good_file(&good_path);
    let good = std::fs::read(&good_path).unwrap();
    let original = AsdfFile::open(&good_path).unwrap();
    for (name, bytes, back, lost) in corpus(&good) {
        let damaged = t.join(&format!("{name}.asdf"));
        std::fs::write(&damaged, &bytes).unwrap();
        let out = t.join(&format!("{name}-salvaged.asdf"));
        let o = run(&["salvage", p(&damaged), "-o", p(&out)]);
        expect(&o, if lost.is_empty() { 0 } else { 1 });
        let report = stdout(&o);
        for l in &lost {
            assert!(
                report.contains(&format!("NOT RECOVERED array /{l}:")),
                "{name}: /{l} not reported:\n{report}"
            );
        }
        // The salvaged file is valid and verifies; what it holds is the original's.
        expect(&run(&["verify", p(&out)]), 0);
        let f = AsdfFile::open(&out).unwrap();
        let got = read_all(&f);
        let names: Vec<&str> = got.iter().map(|(p, _)| &p[1..]).collect();
        assert_eq!(names, back, "{name}: recovered arrays\n{report}");
        for (p, a) in &got {
            assert_eq!(a, &original.read(p).unwrap(), "{name}: values of {p}");
        }
        for l in &lost {
            assert!(
                f.pointer(&format!("/{l}")).unwrap().is_null(),
                "{name}: /{l}"
            );
        }
        assert_eq!(
            f.pointer("/note").and_then(Node::as_str).map(str::len),
            Some(if name.starts_with("shifted") { 3 } else { 4 })
        );
        // The damaged file is left as it was.
        assert_eq!(
            std::fs::read(&damaged).unwrap(),
            bytes,
            "{name}: input changed"
        );
    }
}

#[test]
fn verify_says_what_a_salvage_would_recover() {
    let t = TempDir::new("salvage-verify");
    let good_path = t.join("good.asdf");
    good_file(&good_path);
    let good = std::fs::read(&good_path).unwrap();
    for (name, bytes, back, lost) in corpus(&good) {
        if lost.is_empty() {
            continue;
        }
        let damaged = t.join(&format!("{name}.asdf"));
        std::fs::write(&damaged, &bytes).unwrap();
        let o = run(&["verify", p(&damaged)]);
        expect(&o, 1);
        let text = stdout(&o);
        let want = format!(
            "would recover {} of {} array(s)",
            back.len(),
            back.len() + lost.len()
        );
        assert!(
            text.contains(&want),
            "{name}: {want:?} missing from\n{text}"
        );
    }
}

#[test]
fn salvage_never_writes_over_its_input_unless_asked() {
    let t = TempDir::new("salvage-input");
    let path = t.join("f.asdf");
    good_file(&path);
    let before = std::fs::read(&path).unwrap();
    let o = run(&["salvage", p(&path), "-o", p(&path)]);
    expect(&o, 2);
    assert!(stderr(&o).contains("--replace-input"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    expect(
        &run(&["salvage", p(&path), "-o", p(&path), "--replace-input"]),
        0,
    );
    expect(&run(&["verify", p(&path)]), 0);
}

/// Python asdf reads each salvaged file (argv[2:]) with checksums checked; every array present
/// equals the good file's (argv[1]).
const PY_CHECK: &str = r#"
import sys, asdf, numpy as np
with asdf.open(sys.argv[1], lazy_load=False) as good:
    for path in sys.argv[2:]:
        with asdf.open(path, lazy_load=False, validate_checksums=True) as f:
            for k in 'abcde':
                if f.tree[k] is not None:
                    np.testing.assert_array_equal(np.asarray(f.tree[k]), np.asarray(good.tree[k]), err_msg=f'{path} {k}')
                    assert np.asarray(f.tree[k]).dtype == np.asarray(good.tree[k]).dtype, (path, k)
print('ok')
"#;

#[test]
fn python_reads_every_salvaged_file() {
    let py = require_python!();
    let t = TempDir::new("salvage-py");
    let good_path = t.join("good.asdf");
    good_file(&good_path);
    let good = std::fs::read(&good_path).unwrap();
    let mut outs = Vec::new();
    for (name, bytes, _, _) in corpus(&good) {
        let damaged = t.join(&format!("{name}.asdf"));
        std::fs::write(&damaged, &bytes).unwrap();
        let out = t.join(&format!("{name}-salvaged.asdf"));
        let o = run(&["salvage", p(&damaged), "-o", p(&out)]);
        assert!(matches!(code(&o), 0 | 1), "{name}: {}", stderr(&o));
        outs.push(out);
    }
    let mut args = vec![p(&good_path)];
    args.extend(outs.iter().map(|o| p(o)));
    assert_eq!(run_python(&py, PY_CHECK, &args), b"ok\n");
}
