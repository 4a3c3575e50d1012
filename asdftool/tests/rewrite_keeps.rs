//! Rewrites keep what the file declared: datatypes (string widths included), byte orders and
//! shapes; only where the bytes live changes (issue 17, item 1).

use crate::common::*;

use asdf::yaml::Node;
use asdf::{AsdfFile, AsdfWriter, OpenOptions, WriteOptions};
use asdf_testkit::{require_python, run_python, TempDir};

const ND: &str = "tag:stsci.edu:asdf/core/ndarray-1.1.0";

/// The arrays of the test file: inline `[ucs4, 30]` holding `['']`, inline `[ascii, 12]`, an
/// inline `int16` declared big-endian, and a big-endian `int16` block.
fn declared_file(path: &std::path::Path) {
    let inline = |data: Node, dt: Node, shape: usize, big: bool| {
        let mut pairs = vec![("data", data), ("datatype", dt)];
        if big {
            pairs.push(("byteorder", Node::from("big")));
        }
        pairs.push(("shape", Node::sequence([shape])));
        Node::mapping(pairs).with_tag(ND)
    };
    let dt = |kind: &str, n: usize| Node::sequence([Node::from(kind), Node::from(n)]);
    let tree = Node::mapping([
        (
            "ucs",
            inline(Node::sequence([""]), dt("ucs4", 30), 1, false),
        ),
        (
            "asc",
            inline(Node::sequence(["ab", "c"]), dt("ascii", 12), 2, false),
        ),
        (
            "inl_big",
            inline(Node::sequence([1, -2, 300]), Node::from("int16"), 3, true),
        ),
        (
            "blk_big",
            Node::mapping([
                ("source", Node::from(0)),
                ("datatype", Node::from("int16")),
                ("byteorder", Node::from("big")),
                ("shape", Node::sequence([3])),
            ])
            .with_tag(ND),
        ),
    ])
    .with_tag("tag:stsci.edu:asdf/core/asdf-1.1.0");
    let opts = WriteOptions::default();
    let block = asdf::block::encode_block(
        &[0, 1, 0xff, 0xfe, 0x01, 0x2c],
        asdf::block::Label::NONE,
        &Default::default(),
        &opts.blocks,
    )
    .unwrap();
    asdf::write_path(path, &tree, &[block], &opts).unwrap();
}

/// Asserts that every array of `new` declares the datatype, byte order and shape that `old`
/// declares, and holds the same values. (An inline array without a byte order that moves to a
/// block gains one: blocks need it.)
#[track_caller]
fn assert_kept(old: &AsdfFile, new: &AsdfFile, what: &str) {
    for (pointer, _) in old.arrays() {
        let (a, b) = (
            old.pointer(&pointer).unwrap(),
            new.pointer(&pointer).unwrap(),
        );
        for key in ["datatype", "byteorder", "shape"] {
            if a.get(key).is_some() || key != "byteorder" {
                assert_eq!(a.get(key), b.get(key), "{what}: {key} of {pointer}");
            }
        }
        assert_eq!(
            old.read(&pointer).unwrap(),
            new.read(&pointer).unwrap(),
            "{what}: values of {pointer}"
        );
    }
}

fn open(path: &std::path::Path) -> AsdfFile {
    AsdfFile::open_with(path, &OpenOptions::default()).unwrap()
}

#[test]
fn every_rewrite_keeps_declared_datatype_and_byteorder() {
    let t = TempDir::new("rewrite-keeps");
    let src = t.join("declared.asdf");
    declared_file(&src);
    let old = open(&src);
    assert_eq!(
        old.pointer("/ucs/datatype"),
        Some(&Node::sequence([Node::from("ucs4"), Node::from(30)]))
    );
    let verbs: [&[&str]; 5] = [
        &["defragment"],
        &["defragment", "-c", "zlib"],
        &["to-yaml"],
        &["implode"],
        &["explode"],
    ];
    for (i, verb) in verbs.iter().enumerate() {
        let out = t.join(&format!("out{i}.asdf"));
        let mut args: Vec<&str> = verb.to_vec();
        args.extend([p(&src), "-o", p(&out)]);
        expect(&run(&args), 0);
        let new = open(&out);
        assert_kept(&old, &new, &verb.join(" "));
        // A second rewrite of the rewrite changes nothing either.
        let again = t.join(&format!("again{i}.asdf"));
        expect(&run(&["defragment", p(&out), "-o", p(&again)]), 0);
        assert_kept(&old, &open(&again), "defragment of a rewrite");
    }
    let conv = t.join("converted.asdf");
    expect(&run(&["convert", p(&src), p(&conv)]), 0);
    assert_kept(&old, &open(&conv), "convert");
}

#[test]
fn library_rewrites_keep_declared_datatype_and_byteorder() {
    let t = TempDir::new("rewrite-keeps-lib");
    let src = t.join("declared.asdf");
    declared_file(&src);
    let old = open(&src);
    // Saving the open file copies blocks and tree as they are.
    let saved = t.join("saved.asdf");
    old.save_path(&saved, &WriteOptions::default()).unwrap();
    assert_kept(&old, &open(&saved), "save_path");
    // Reading each array and adding it to a new file keeps its string width.
    let mut w = AsdfWriter::new();
    let mut pairs = Vec::new();
    for (pointer, _) in old.arrays() {
        let a = old.read(&pointer).unwrap();
        let node = w.add_any(&a, &asdf::StoreOptions::default()).unwrap();
        assert_eq!(
            node.get("datatype"),
            old.pointer(&pointer).unwrap().get("datatype"),
            "add_any of {pointer}"
        );
        pairs.push((pointer.trim_start_matches('/').to_string(), node));
    }
    let out = t.join("added.asdf");
    w.write_path(&out, Node::mapping(pairs), &WriteOptions::default())
        .unwrap();
    let new = open(&out);
    for (pointer, _) in old.arrays() {
        assert_eq!(old.read(&pointer).unwrap(), new.read(&pointer).unwrap());
    }
}

/// Python asdf writes the declared arrays (argv[1]).
const PY_WRITE: &str = r#"
import sys, asdf, numpy as np
tree = {
    'ucs': np.array([''], dtype='<U30'),
    'asc': np.array([b'ab', b'c'], dtype='S12'),
    'inl_big': np.array([1, -2, 300], dtype='>i2'),
    'blk_big': np.arange(-3, 7, dtype='>i2').reshape(2, 5),
    'blk_ucs': np.array(['a', 'bcd'], dtype='>U9'),
    'blk_f8': np.array([1.5, -2.0], dtype='>f8'),
}
af = asdf.AsdfFile(tree)
for k in ('ucs', 'asc', 'inl_big'):
    af.set_array_storage(af[k], 'inline')
af.write_to(sys.argv[1])
"#;

/// Python asdf reads each rewrite (argv[2:]) and finds the dtypes and values of argv[1]. Python
/// reads inline data in this machine's byte order whatever the node declares, so for the
/// `to-yaml` output the byte order is left out of the comparison.
const PY_CHECK: &str = r#"
import sys, asdf, numpy as np
with asdf.open(sys.argv[1], lazy_load=False) as ref:
    want = {k: np.asarray(v) for k, v in ref.tree.items() if hasattr(v, 'dtype')}
    for new in sys.argv[2:]:
        with asdf.open(new, lazy_load=False, validate_checksums=True) as f:
            for k, a in want.items():
                b = np.asarray(f.tree[k])
                da, db = a.dtype, b.dtype
                if 'to-yaml' in new:
                    da, db = da.newbyteorder('='), db.newbyteorder('=')
                assert da == db, (new, k, a.dtype, b.dtype)
                assert a.shape == b.shape, (new, k, a.shape, b.shape)
                np.testing.assert_array_equal(a, b, err_msg=f'{new} {k}')
print('same')
"#;

#[test]
fn python_reads_our_rewrites_with_the_same_dtypes() {
    let py = require_python!();
    let t = TempDir::new("rewrite-keeps-py");
    let src = t.join("py.asdf");
    run_python(&py, PY_WRITE, &[p(&src)]);
    let old = open(&src);
    let mut outs = Vec::new();
    for verb in ["defragment", "to-yaml", "implode"] {
        let out = t.join(&format!("py-{verb}.asdf"));
        expect(&run(&[verb, p(&src), "-o", p(&out)]), 0);
        assert_kept(&old, &open(&out), verb);
        outs.push(out);
    }
    let mut args = vec![p(&src)];
    args.extend(outs.iter().map(|o| p(o)));
    assert_eq!(run_python(&py, PY_CHECK, &args), b"same\n");
}

/// Loads argv[1] with numpy and prints its dtype and values.
const PY_LOAD: &str = r#"
import sys, numpy as np
a = np.load(sys.argv[1])
print(a.dtype.str, a.tolist())
"#;

#[test]
fn npy_of_a_padded_string_array_loads_with_the_declared_dtype() {
    let py = require_python!();
    let t = TempDir::new("rewrite-keeps-npy");
    let src = t.join("s.asdf");
    let data = Node::mapping([
        ("data", Node::sequence(["ab", "c"])),
        (
            "datatype",
            Node::sequence([Node::from("ucs4"), Node::from(9)]),
        ),
        ("shape", Node::sequence([2])),
    ])
    .with_tag(ND);
    let tree = Node::mapping([("data", data)]);
    asdf::write_path(&src, &tree, &[], &WriteOptions::default()).unwrap();
    let npy = t.join("s.npy");
    expect(&run(&["convert", p(&src), p(&npy)]), 0);
    let printed = String::from_utf8(run_python(&py, PY_LOAD, &[p(&npy)])).unwrap();
    assert_eq!(printed.trim(), "<U9 ['ab', 'c']");
    // And back: the .npy converts to an ASDF array with the same declared width.
    let back = t.join("back.asdf");
    expect(&run(&["convert", p(&npy), p(&back)]), 0);
    assert_eq!(
        open(&back).pointer("/data/datatype"),
        tree.get("data").unwrap().get("datatype")
    );
}

/// Saves argv[1] as a big-endian int16 .npy.
const PY_SAVE_BIG: &str = r#"
import sys, numpy as np
np.save(sys.argv[1], np.arange(-3, 9, dtype='>i2').reshape(3, 4))
"#;

#[test]
fn npy_conversion_keeps_the_byte_order() {
    let py = require_python!();
    let t = TempDir::new("rewrite-keeps-npy-order");
    let npy = t.join("big.npy");
    run_python(&py, PY_SAVE_BIG, &[p(&npy)]);
    let out = t.join("big.asdf");
    expect(&run(&["convert", p(&npy), p(&out)]), 0);
    let f = open(&out);
    assert_eq!(
        f.pointer("/data/byteorder").and_then(Node::as_str),
        Some("big")
    );
    assert_eq!(
        f.pointer("/data/datatype").and_then(Node::as_str),
        Some("int16")
    );
    expect(&run(&["diff", p(&npy), p(&out)]), 0);
}
