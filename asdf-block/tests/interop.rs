//! Interop with Python asdf 6.0.0 + asdf-compression: blocks they write decode here byte for
//! byte, and blocks written here are read back by them with checksum validation.

use asdf_block::*;
use asdf_testkit::{require_python, run_python, TempDir};

/// The labels both sides know (xz is ASDF.jl's, which Python lacks).
const PY_LABELS: [&str; 6] = ["zlib", "bzp2", "lz4", "lz4f", "zstd", "blsc"];

const WRITE_WITH_PYTHON: &str = r#"
import sys, asdf, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(42)
for label in sys.argv[2:]:
    # lz4 gets 10 MiB so Python writes three 4 MiB chunks; the others 1 MiB.
    n = (10 << 20) // 8 if label == "lz4" else (1 << 20) // 8
    arr = np.cumsum(rng.standard_normal(n)).round(2)
    af = asdf.AsdfFile({"data": arr})
    af.set_array_compression(arr, label)
    af.write_to(f"{out}/{label}.asdf")
    arr.tofile(f"{out}/{label}.raw")
"#;

#[test]
fn blocks_written_by_python_decode_byte_exactly() {
    let py = require_python!();
    let dir = TempDir::new("interop-py-blocks");
    let mut args = vec![dir.path().to_str().unwrap()];
    args.extend(PY_LABELS);
    run_python(&py, WRITE_WITH_PYTHON, &args);
    for label in PY_LABELS {
        let path = dir.join(&format!("{label}.asdf"));
        let want = std::fs::read(dir.join(&format!("{label}.raw"))).unwrap();
        // asdf 6.0.0 writes the MD5 of the stored bytes: the strict policy must pass.
        let opts = ReadOptions {
            checksums: ChecksumPolicy::Strict,
            ..ReadOptions::default()
        };
        let r = MappedBlocks::open(&path, 0, opts).unwrap();
        assert_eq!(r.len(), 1, "{label}");
        assert!(r.layout().index_used, "{label}: {:?}", r.layout().warnings);
        let h = r.blocks()[0].header;
        assert_eq!(h.compression, Label::from_name(label).unwrap(), "{label}");
        assert_eq!(
            r.verify(0, ChecksumPolicy::Strict).unwrap(),
            ChecksumStatus::Stored,
            "{label}"
        );
        let got = r.data(0).unwrap();
        assert_eq!(got.len(), want.len(), "{label}");
        assert!(*got == want[..], "{label}: decoded bytes differ");
        if label == "lz4" {
            // Three chunks: 4 MiB, 4 MiB, 2 MiB.
            let stored = r.stored(0).unwrap();
            let first = u32::from_be_bytes(stored[..4].try_into().unwrap()) as usize;
            let size = u32::from_le_bytes(stored[4..8].try_into().unwrap());
            assert_eq!(size, 4 << 20);
            assert!(first + 4 < stored.len());
        }
    }
}

const READ_WITH_PYTHON: &str = r#"
import sys, asdf, numpy as np
path = sys.argv[1]
labels = sys.argv[2:]
with asdf.open(path, validate_checksums=True, lazy_load=False) as af:
    ref = np.asarray(af["reference"])
    assert ref.dtype == np.float64 and ref.shape == (200000,), (ref.dtype, ref.shape)
    for label in labels:
        arr = np.asarray(af[label])
        assert np.array_equal(arr, ref), label
    blocks = af._blocks.blocks
    print(len(blocks), " ".join(b.header["compression"].decode("ascii").rstrip("\x00") or "none" for b in blocks))
"#;

/// A YAML tree with one float64 ndarray of `n` elements per block.
fn tree(names: &[&str], n: usize) -> Vec<u8> {
    let mut t = String::from(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n",
    );
    for (i, name) in names.iter().enumerate() {
        t.push_str(&format!(
            "{name}: !core/ndarray-1.1.0\n  source: {i}\n  datatype: float64\n  byteorder: little\n  shape: [{n}]\n"
        ));
    }
    t.push_str("...\n");
    t.into_bytes()
}

fn write_for_python(
    dir: &TempDir,
    file: &str,
    options: WriteOptions,
    padding: u64,
) -> std::path::PathBuf {
    let n = 200_000;
    let values: Vec<u8> = (0..n)
        .flat_map(|i| ((i as f64 * 0.37).sin().round() * 3.0).to_le_bytes())
        .collect();
    let mut names = vec!["reference"];
    names.extend(PY_LABELS);
    let tree = tree(&names, n);
    let start = tree.len() as u64;
    let mut w = BlockWriter::new(tree, start, options);
    let enc = EncodeOptions {
        typesize: 8,
        ..EncodeOptions::default()
    };
    for name in &names {
        let label = Label::from_name(name).unwrap_or(Label::NONE);
        let b = encode_block(&values, label, &enc, w.options())
            .unwrap()
            .with_padding(padding);
        assert_eq!(b.header.compression, label, "{name} did not compress");
        w.write(&b).unwrap();
    }
    let path = dir.join(file);
    std::fs::write(&path, w.finish().unwrap()).unwrap();
    path
}

#[test]
fn blocks_written_here_are_read_by_python_with_checksums() {
    let py = require_python!();
    let dir = TempDir::new("interop-rs-blocks");
    let cases = [
        ("plain.asdf", WriteOptions::default(), 0),
        (
            "aligned.asdf",
            WriteOptions {
                align: 64,
                ..WriteOptions::default()
            },
            0,
        ),
        (
            "padded.asdf",
            WriteOptions {
                align: 4096,
                ..WriteOptions::default()
            },
            1000,
        ),
    ];
    for (file, options, padding) in cases {
        let path = write_for_python(&dir, file, options, padding);
        let mut args = vec![path.to_str().unwrap()];
        args.extend(PY_LABELS);
        let out = String::from_utf8(run_python(&py, READ_WITH_PYTHON, &args)).unwrap();
        assert_eq!(
            out.trim(),
            format!("7 none {}", PY_LABELS.join(" ")),
            "{file}"
        );
        // And our reader agrees on the same file.
        let r = MappedBlocks::open(
            &path,
            0,
            ReadOptions {
                checksums: ChecksumPolicy::Strict,
                ..ReadOptions::default()
            },
        )
        .unwrap();
        assert!(r.layout().index_used, "{file}");
        let reference = r.data(0).unwrap().into_owned();
        for i in 1..7 {
            assert!(*r.data(i).unwrap() == reference[..], "{file} block {i}");
        }
    }
}

#[test]
fn python_memmaps_aligned_blocks_in_place() {
    // The alignment option exists for zero-copy readers; numpy's memmap of our aligned file
    // must see the same values.
    let py = require_python!();
    let dir = TempDir::new("interop-rs-aligned");
    let n = 1000usize;
    let values: Vec<u8> = (0..n).flat_map(|i| (i as f64).to_le_bytes()).collect();
    let tree = tree(&["a", "b"], n);
    let start = tree.len() as u64;
    let mut w = BlockWriter::new(
        tree,
        start,
        WriteOptions {
            align: 64,
            ..WriteOptions::default()
        },
    );
    let a = w
        .write_data(&values, Label::NONE, &EncodeOptions::default())
        .unwrap();
    let b = w
        .write_data(&values, Label::NONE, &EncodeOptions::default())
        .unwrap();
    assert_eq!((a.data_offset % 64, b.data_offset % 64), (0, 0));
    let path = dir.join("aligned.asdf");
    std::fs::write(&path, w.finish().unwrap()).unwrap();
    let script = r#"
import sys, asdf, numpy as np
with asdf.open(sys.argv[1], memmap=True, validate_checksums=True) as af:
    a = af["b"]
    assert isinstance(a.base, np.memmap) or isinstance(a, np.memmap) or a.base is not None
    assert np.array_equal(a, np.arange(1000, dtype=float))
    print(af._blocks.blocks[1].data_offset)
"#;
    let out = String::from_utf8(run_python(&py, script, &[path.to_str().unwrap()])).unwrap();
    assert_eq!(out.trim().parse::<u64>().unwrap(), b.data_offset);
}

/// Cross-checks one codec's stream format with a Python module, both ways: Python decodes our
/// encoding of `data` with `py_decode(bytes)`, and we decode Python's `py_encode(data)`.
fn cross_check(
    codec: &dyn Codec,
    data: &[u8],
    typesize: usize,
    module: &str,
    py_decode: &str,
    py_encode: &str,
) {
    let py = require_python!();
    let dir = TempDir::new(&format!("interop-{}", codec.name()));
    let ours = codec
        .encode(
            data,
            &EncodeOptions {
                typesize,
                ..Default::default()
            },
        )
        .unwrap();
    std::fs::write(dir.join("ours.bin"), &ours).unwrap();
    std::fs::write(dir.join("data.bin"), data).unwrap();
    let script = format!(
        r#"
import sys, {module}
d = sys.argv[1]
data = open(f"{{d}}/data.bin", "rb").read()
assert ({py_decode})(open(f"{{d}}/ours.bin", "rb").read()) == data
open(f"{{d}}/theirs.bin", "wb").write(({py_encode})(data))
"#
    );
    run_python(&py, &script, &[dir.path().to_str().unwrap()]);
    let theirs = std::fs::read(dir.join("theirs.bin")).unwrap();
    assert!(
        codec.decode(&theirs, data.len()).unwrap() == data,
        "{}",
        codec.name()
    );
}

#[test]
fn xz_blocks_are_standard_xz_streams() {
    // Python asdf has no xz codec (ASDF.jl writes `xz\0\0`): check the stream format against
    // Python's lzma module instead.
    let data: Vec<u8> = (0..300_000u32)
        .flat_map(|i| (i / 7).to_le_bytes())
        .collect();
    cross_check(
        &Xz,
        &data,
        1,
        "lzma",
        "lzma.decompress",
        "lambda b: lzma.compress(b, preset=6)",
    );
}

#[cfg(feature = "bls2")]
#[test]
fn blosc2_chunks_match_python_blosc2() {
    // asdf-compression 0.1.0 on PyPI has no bls2 compressor: check the chunk format against
    // python-blosc2 itself.
    let data: Vec<u8> = (0..250_000u32)
        .flat_map(|i| ((i / 3) as f32).to_le_bytes())
        .collect();
    cross_check(
        &asdf_block::Blosc2,
        &data,
        4,
        "blosc2",
        "blosc2.decompress",
        "lambda b: blosc2.compress(b, typesize=4)",
    );
}
