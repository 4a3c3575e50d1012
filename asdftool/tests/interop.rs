//! Interop with the Python peers (asdf 6.0.0 + asdf-compression, numpy, awkward0 0.15.5):
//! files they write go through every verb; files the tool writes are read back by them.

use crate::common::*;

use asdf_testkit::{require_python, run_python, TempDir};

/// Writes a set of ASDF files with Python asdf into argv[1].
const WRITE_ASDF: &str = r#"
import sys, os, asdf, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(1)
tree = {
    'ints': np.arange(1000, dtype='>i4'),
    'floats': np.array([0.0, -0.0, np.nan, np.inf, 1.5]),
    'image': rng.random((40, 30)).astype('<f4'),
    'masked': np.ma.masked_array(np.arange(6.0), mask=[0, 1, 0, 0, 1, 0]),
    'strings': np.array(['ab', 'cde']),
    'meta': {'name': 'obs', 'n': 3, 'list': [1, 'two', 3.0]},
}
tree['view'] = tree['ints'][::3]
for comp in ['zlib', 'bzp2', 'lz4', 'zstd', 'blsc', 'lz4f']:
    asdf.AsdfFile(tree).write_to(os.path.join(d, f'py-{comp}.asdf'), all_array_compression=comp)
asdf.AsdfFile(tree).write_to(os.path.join(d, 'py-plain.asdf'))
asdf.AsdfFile(tree).write_to(os.path.join(d, 'py-inline.asdf'), all_array_storage='inline')
asdf.AsdfFile(tree).write_to(os.path.join(d, 'py-padded.asdf'), pad_blocks=True)
os.makedirs(os.path.join(d, 'ext'), exist_ok=True)
asdf.AsdfFile({'a': np.arange(10), 'b': np.ones((2, 3))}).write_to(os.path.join(d, 'ext', 'py-ext.asdf'), all_array_storage='external')
af = asdf.AsdfFile({'s': asdf.Stream([4], np.float64)})
with open(os.path.join(d, 'py-stream.asdf'), 'wb') as fd:
    af.write_to(fd)
    for i in range(5):
        fd.write(np.full(4, i, np.float64).tobytes())
"#;

/// Compares two ASDF files with Python asdf (values, ignoring asdf_library/history).
const COMPARE: &str = r#"
import sys, asdf, numpy as np
def walk(a, b, p):
    if isinstance(a, dict):
        assert set(k for k in a if p or k not in ('asdf_library', 'history')) == set(k for k in b if p or k not in ('asdf_library', 'history')), p
        for k in a:
            if not p and k in ('asdf_library', 'history'): continue
            walk(a[k], b[k], p + '/' + str(k))
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), p
        for i, (x, y) in enumerate(zip(a, b)): walk(x, y, f'{p}/{i}')
    elif isinstance(a, np.ndarray) or hasattr(a, 'dtype'):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, (p, a.shape, b.shape)
        assert a.dtype.newbyteorder('=') == b.dtype.newbyteorder('='), (p, a.dtype, b.dtype)
        np.testing.assert_array_equal(a, b, err_msg=p)
    else:
        assert a == b or (a != a and b != b), (p, a, b)
for ref, new in zip(sys.argv[1::2], sys.argv[2::2]):
    with asdf.open(ref, lazy_load=False) as fa, asdf.open(new, lazy_load=False, validate_checksums=True) as fb:
        try:
            walk(fa.tree, fb.tree, '')
        except AssertionError as e:
            raise AssertionError(f'{ref} vs {new}: {e}')
print('same')
"#;

#[test]
fn python_written_files_through_every_verb() {
    let py = require_python!();
    let t = TempDir::new("asdftool-py");
    run_python(&py, WRITE_ASDF, &[p(t.path())]);
    let mut files: Vec<_> = [
        "zlib", "bzp2", "lz4", "zstd", "blsc", "lz4f", "plain", "inline", "padded", "stream",
    ]
    .iter()
    .map(|n| t.join(&format!("py-{n}.asdf")))
    .collect();
    files.push(t.path().join("ext").join("py-ext.asdf"));
    let mut pairs = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let o = run(&["verify", p(f)]);
        expect(&o, 0);
        expect(&run(&["info", "--show-blocks", p(f)]), 0);
        expect(
            &run(&["diff", p(f), p(&files[6])]),
            if f.ends_with("py-ext.asdf") || f.ends_with("py-stream.asdf") {
                1
            } else {
                0
            },
        );
        let y = t.join(&format!("out{i}.yaml"));
        expect(&run(&["to-yaml", p(f), "-o", p(&y)]), 0);
        expect(&run(&["diff", p(f), p(&y)]), 0);
        pairs.push(f.clone());
        pairs.push(y);
    }
    let args: Vec<&str> = pairs.iter().map(|x| p(x)).collect();
    assert_eq!(
        String::from_utf8_lossy(&run_python(&py, COMPARE, &args)),
        "same\n"
    );
    let text = stdout(&run(&["info", p(&files[0])]));
    assert!(text.contains("masked (array)"), "{text}");
    let o = run(&["info", p(&files[9])]);
    assert!(stdout(&o).contains("streamed block -1"), "{}", stdout(&o));
    // The streamed array has 5 rows.
    let y = t.join("s.yaml");
    expect(&run(&["to-yaml", p(&files[9]), "-o", p(&y)]), 0);
    assert!(std::fs::read_to_string(&y)
        .unwrap()
        .contains("shape: [5, 4]"));
}

#[test]
fn tool_outputs_are_read_by_python_asdf() {
    let py = require_python!();
    let t = TempDir::new("asdftool-py-out");
    run_python(&py, WRITE_ASDF, &[p(t.path())]);
    let src = t.join("py-zlib.asdf");
    let mut pairs: Vec<(std::path::PathBuf, std::path::PathBuf)> = Vec::new();
    for codec in ["none", "zlib", "bzp2", "lz4", "lz4f", "zstd", "blsc"] {
        let out = t.join(&format!("d-{codec}.asdf"));
        expect(
            &run(&["defragment", p(&src), "-o", p(&out), "-c", codec]),
            0,
        );
        pairs.push((src.clone(), out));
        let conv = t.join(&format!("c-{codec}.asdf"));
        expect(&run(&["convert", p(&src), p(&conv), "-c", codec]), 0);
        pairs.push((src.clone(), conv));
    }
    for name in [
        "complex",
        "structured",
        "unicode_spp",
        "anchor",
        "stream",
        "shared",
    ] {
        let r = reference(&format!("{name}.asdf"));
        let out = t.join(&format!("r-{name}.asdf"));
        expect(&run(&["defragment", p(&r), "-o", p(&out), "-c", "zstd"]), 0);
        pairs.push((r, out));
    }
    // explode / implode read by Python.
    let ex = t.join("ex.asdf");
    expect(&run(&["explode", p(&src), "-o", p(&ex)]), 0);
    pairs.push((src.clone(), ex.clone()));
    let im = t.join("im.asdf");
    expect(&run(&["implode", p(&ex), "-o", p(&im)]), 0);
    pairs.push((src.clone(), im));
    let args: Vec<&str> = pairs.iter().flat_map(|(a, b)| [p(a), p(b)]).collect();
    assert_eq!(
        String::from_utf8_lossy(&run_python(&py, COMPARE, &args)),
        "same\n"
    );
    // An edited file (rewritten) is read by Python with its checksums.
    let e = t.join("edit.asdf");
    std::fs::copy(&src, &e).unwrap();
    expect(
        &run_env(
            &["edit", p(&e)],
            &[(
                "EDITOR",
                "sed -i -e s/name:\\ obs/name:\\ observation-with-a-long-name/",
            )],
        ),
        0,
    );
    let out = run_python(&py, "import sys, asdf\nf = asdf.open(sys.argv[1], validate_checksums=True)\nprint(f['meta']['name'], int(f['ints'][-1]))", &[p(&e)]);
    assert_eq!(
        String::from_utf8_lossy(&out),
        "observation-with-a-long-name 999\n"
    );
}

#[test]
fn invalid_python_files_fail_with_status_1() {
    let py = require_python!();
    let t = TempDir::new("asdftool-py-bad");
    run_python(&py, WRITE_ASDF, &[p(t.path())]);
    // A flipped data byte in a compressed block: the checksum (or the codec) fails.
    let src = std::fs::read(t.join("py-zlib.asdf")).unwrap();
    let f = asdf::AsdfFile::from_bytes(src.clone(), &Default::default()).unwrap();
    let b = f.blocks().blocks()[1];
    let mut bad = src.clone();
    bad[(b.data_offset + b.header.used_size / 2) as usize] ^= 0x10;
    let bf = t.join("bad.asdf");
    std::fs::write(&bf, &bad).unwrap();
    let o = run(&["verify", p(&bf)]);
    expect(&o, 1);
    assert!(
        stdout(&o).contains(&format!("FAILED block 1 at byte {}", b.offset)),
        "{}",
        stdout(&o)
    );
    // Python agrees that the file is damaged.
    let script = "import sys, asdf\ntry:\n    f = asdf.open(sys.argv[1], validate_checksums=True, lazy_load=False)\n    [f[k][()] for k in ('ints','floats','image','strings')]\n    print('read')\nexcept Exception as e:\n    print('error')";
    assert_eq!(
        String::from_utf8_lossy(&run_python(&py, script, &[p(&bf)])),
        "error\n"
    );
    // A truncated file.
    let tf = t.join("trunc.asdf");
    std::fs::write(&tf, &src[..src.len() * 2 / 3]).unwrap();
    let o = run(&["verify", p(&tf)]);
    expect(&o, 1);
    assert!(!stdout(&o).is_empty() || !stderr(&o).is_empty());
    // A missing external block file.
    std::fs::remove_file(t.path().join("ext").join("py-ext0000.asdf")).unwrap();
    let o = run(&["verify", p(&t.path().join("ext").join("py-ext.asdf"))]);
    expect(&o, 1);
    assert!(stdout(&o).contains("py-ext0000.asdf"), "{}", stdout(&o));
}

#[test]
fn numpy_files_both_ways() {
    let py = require_python!();
    let t = TempDir::new("asdftool-npy");
    let script = r#"
import sys, os, numpy as np
d = sys.argv[1]
np.save(os.path.join(d, 'f.npy'), np.asfortranarray(np.arange(24.0).reshape(2, 3, 4)))
np.save(os.path.join(d, 'b.npy'), np.arange(10, dtype='>i2'))
np.save(os.path.join(d, 'u.npy'), np.array(['x', 'yz', 'αβγ']))
np.save(os.path.join(d, 's.npy'), np.array([b'ab', b'c']))
np.save(os.path.join(d, 'c.npy'), np.array([1+2j, np.nan], dtype='<c8'))
np.save(os.path.join(d, 'z.npy'), np.float64(2.5))
np.save(os.path.join(d, 'e.npy'), np.zeros((0, 3), dtype='u1'))
np.save(os.path.join(d, 'h.npy'), np.array([1.5, -2], dtype='<f2'))
np.save(os.path.join(d, 'k.npy'), np.array([True, False]))
"#;
    run_python(&py, script, &[p(t.path())]);
    let check = r#"
import sys, asdf, numpy as np
for x, y, z in zip(sys.argv[1::3], sys.argv[2::3], sys.argv[3::3]):
    a = np.load(x)
    with asdf.open(y, lazy_load=False) as f:
        b = np.asarray(f['data'])
    c = np.load(z)
    assert a.shape == b.shape == c.shape, (x, a.shape, b.shape, c.shape)
    np.testing.assert_array_equal(a, b, err_msg=x); np.testing.assert_array_equal(a, c, err_msg=x)
    assert a.dtype.newbyteorder('=') == c.dtype.newbyteorder('=') or a.dtype.kind in 'SU', (x, a.dtype, c.dtype)
print('ok')
"#;
    let mut triples = Vec::new();
    for n in ["f", "b", "u", "s", "c", "z", "e", "h", "k"] {
        let npy = t.join(&format!("{n}.npy"));
        let asdf_out = t.join(&format!("{n}.asdf"));
        let back = t.join(&format!("{n}-back.npy"));
        expect(&run(&["info", p(&npy)]), 0);
        expect(&run(&["convert", p(&npy), p(&asdf_out), "-c", "zlib"]), 0);
        expect(&run(&["diff", p(&npy), p(&asdf_out)]), 0);
        expect(&run(&["convert", p(&asdf_out), p(&back)]), 0);
        triples.extend([npy.clone(), asdf_out, back]);
        if !matches!(n, "u" | "s") {
            let ra = t.join(&format!("{n}.ra"));
            expect(&run(&["convert", p(&npy), p(&ra)]), 0);
            expect(&run(&["diff", p(&ra), p(&npy)]), 0);
        }
    }
    let args: Vec<&str> = triples.iter().map(|x| p(x)).collect();
    assert_eq!(
        String::from_utf8_lossy(&run_python(&py, check, &args)),
        "ok\n"
    );
}

#[test]
fn awkward_from_json_is_loaded_by_awkward0() {
    let py = require_python!();
    let t = TempDir::new("asdftool-awk-py");
    let cases = [
        r#"[1, 2, 3]"#,
        r#"[1.5, 2, -3]"#,
        r#"[true, false]"#,
        r#"["a", "βγ", ""]"#,
        r#"[[1, 2], [], [3]]"#,
        r#"[{"x": 1, "y": [1.5]}, {"x": 2, "y": []}]"#,
        r#"[1, null, 3]"#,
        r#"[{"a": "s"}, null, {"a": "t"}]"#,
        r#"[1, "two", [3]]"#,
        r#"[[[1], [2, 3]], [], [[]]]"#,
    ];
    let load = "import sys, json, awkward0\nout = []\nfor f in sys.argv[1:]:\n    a = awkward0.load(f)\n    out.append(a['data'].tolist() if hasattr(a, 'keys') and 'data' in a.keys() else a.tolist())\nprint(json.dumps(out))";
    let mut outs = Vec::new();
    for (i, json) in cases.iter().enumerate() {
        let src = t.join(&format!("{i}.json"));
        std::fs::write(&src, json).unwrap();
        let out = t.join(&format!("{i}.awkd"));
        expect(&run(&["awkward", "from-json", p(&src), "-o", p(&out)]), 0);
        let want: serde_json::Value = serde_json::from_str(json).unwrap();
        let o = run(&["awkward", "to-json", p(&out)]);
        let back: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(numbers_as_f64(&back), numbers_as_f64(&want), "case {i}");
        outs.push(out);
    }
    let args: Vec<&str> = outs.iter().map(|x| p(x)).collect();
    let got: serde_json::Value = serde_json::from_slice(&run_python(&py, load, &args)).unwrap();
    for (i, json) in cases.iter().enumerate() {
        let want: serde_json::Value = serde_json::from_str(json).unwrap();
        // Numbers compare by value: [1.5, 2] infers float64, which awkward0 prints as 2.0.
        assert_eq!(
            numbers_as_f64(&got[i]),
            numbers_as_f64(&want),
            "case {i}: awkward0 reads {}",
            got[i]
        );
    }
    // Files awkward0 writes: to-json gives awkward0's own values.
    let script = r#"
import sys, os, json, awkward0, numpy as np
d = sys.argv[1]
a = awkward0.fromiter([{'p': [1.0, 2.0], 'q': 'x'}, {'p': [], 'q': 'yy'}])
awkward0.save(os.path.join(d, 'w.awkd'), {'ev': a}, mode='w')
print(json.dumps(a.tolist()))
"#;
    let want: serde_json::Value =
        serde_json::from_slice(&run_python(&py, script, &[p(t.path())])).unwrap();
    let o = run(&["awkward", "to-json", p(&t.join("w.awkd")), "--name", "ev"]);
    expect(&o, 0);
    let got: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(got, want);
}

fn numbers_as_f64(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        J::Number(n) => serde_json::json!(n.as_f64().unwrap()),
        J::Array(a) => J::Array(a.iter().map(numbers_as_f64).collect()),
        J::Object(o) => J::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), numbers_as_f64(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}
