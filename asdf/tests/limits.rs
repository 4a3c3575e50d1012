//! The facade's limits on untrusted input: `OpenOptions::untrusted` on the whole corpus,
//! `OpenOptions::arrays` on chunked and masked reads, and `max_total_decoded_bytes`.

use asdf::block::{encode_block, EncodeOptions, Label};
use asdf::ndarray::{NdError, ReadLimits, Source, CHUNKED_TAG};
use asdf::yaml::{parse_str, Node};
use asdf::{AsdfError, AsdfFile, AsdfWriter, OpenOptions, StoreOptions, WriteOptions};

const NDARRAY: &str = "tag:stsci.edu:asdf/core/ndarray-1.1.0";
const ROOT: &str = "tag:stsci.edu:asdf/core/asdf-1.1.0";
const MIB: u64 = 1 << 20;

fn small_arrays() -> OpenOptions {
    OpenOptions {
        arrays: ReadLimits {
            max_expanded_bytes: MIB,
        },
        ..Default::default()
    }
}

fn too_large(e: &AsdfError) -> bool {
    matches!(e, AsdfError::Array { source: NdError::TooLarge { limit, .. }, .. } if *limit == MIB)
}

fn corpus_asdf_files() -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "asdf") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&asdf_testkit::corpus_dir(), &mut out);
    out.sort();
    out
}

/// What reading everything of the file at `path` gives: whether it opens, then per block and
/// per array (whole, and with its mask for ndarrays) whether the read succeeds.
fn outcome(path: &std::path::Path, options: &OpenOptions) -> Result<Vec<(String, bool)>, String> {
    let f = AsdfFile::open_with(path, options).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for i in 0..f.blocks().len() as i64 {
        out.push((format!("block {i}"), f.block_data(i).is_ok()));
    }
    for (pointer, kind) in f.arrays() {
        out.push((pointer.clone(), f.read(&pointer).is_ok()));
        if kind == asdf::ArrayKind::NdArray {
            out.push((format!("{pointer} masked"), f.read_masked(&pointer).is_ok()));
        }
    }
    Ok(out)
}

#[test]
fn untrusted_preset_reads_every_corpus_file_like_the_defaults() {
    let files = corpus_asdf_files();
    assert!(files.len() > 100, "only {} ASDF files", files.len());
    let (mut opened, mut reads) = (0, 0);
    for path in &files {
        let default = outcome(path, &OpenOptions::default());
        let untrusted = outcome(path, &OpenOptions::untrusted());
        match (&default, &untrusted) {
            (Ok(d), Ok(u)) => {
                assert_eq!(d, u, "{}", path.display());
                opened += 1;
                reads += d.iter().filter(|(_, ok)| *ok).count();
            }
            (Err(_), Err(_)) => {}
            _ => panic!(
                "{}: default {default:?}, untrusted {untrusted:?}",
                path.display()
            ),
        }
    }
    assert!(opened > 100, "{opened} files opened");
    assert!(reads > 200, "{reads} reads");
}

#[test]
fn untrusted_preset_values() {
    let u = OpenOptions::untrusted();
    let d = OpenOptions::default();
    assert_eq!(u.blocks.limits.max_decoded_block_size, 1 << 30);
    assert_eq!(u.arrays.max_expanded_bytes, 1 << 30);
    assert_eq!(u.max_total_decoded_bytes, 4 << 30);
    assert_eq!(d.max_total_decoded_bytes, 64 << 30);
    assert!(u.yaml.limits.max_alias_nodes < d.yaml.limits.max_alias_nodes);
    assert_eq!(u.yaml.limits.max_depth, d.yaml.limits.max_depth);
}

/// A file whose chunked array is 2000 × 2000 float64 (32 MB) of which only one element is
/// stored (inline): the rest is a gap.
fn gappy_chunked_file() -> Vec<u8> {
    let c = parse_str(
        "{shape: [2000, 2000], datatype: float64, chunks: [\
         {start: [3, 4], ndarray: {data: [[2.5]], datatype: float64}}]}",
    )
    .unwrap()
    .with_tag(CHUNKED_TAG);
    let tree = Node::mapping([("c", c)]).with_tag(ROOT);
    let bytes = asdf::write_to(Vec::new(), &tree, &[], &WriteOptions::default()).unwrap();
    assert!(bytes.len() < 2000, "{}", bytes.len());
    bytes
}

#[test]
fn chunked_arrays_use_the_array_limits_on_every_read() {
    let bytes = gappy_chunked_file();
    let f = AsdfFile::from_bytes(bytes.clone(), &small_arrays()).unwrap();
    let e = f.array::<f64>("/c").unwrap_err();
    assert!(too_large(&e), "{e}");
    let e = f.read("/c").unwrap_err();
    assert!(too_large(&e), "{e}");
    assert!(e.to_string().contains("/c"), "{e}");
    for options in [OpenOptions::default(), OpenOptions::untrusted()] {
        let f = AsdfFile::from_bytes(bytes.clone(), &options).unwrap();
        let a = f.array::<f64>("/c").unwrap();
        assert_eq!(
            (a.shape(), a[[3, 4]], a[[0, 0]]),
            (&[2000, 2000][..], 2.5, 0.0)
        );
        assert_eq!(f.read("/c").unwrap().shape(), &[2000, 2000]);
    }
}

#[test]
fn masked_arrays_use_the_array_limits() {
    // 3999 float64 values read as 2000 × 2000 through overlapping strides, with a one-element
    // mask broadcast over it.
    let data: Vec<u8> = (0..3999).flat_map(|i| (i as f64).to_le_bytes()).collect();
    let node = parse_str(
        "{source: 0, datatype: float64, byteorder: little, shape: [2000, 2000], strides: [8, 8], \
         mask: {data: [false], datatype: bool8}}",
    )
    .unwrap()
    .with_tag(NDARRAY);
    let tree = Node::mapping([("m", node)]).with_tag(ROOT);
    let opts = WriteOptions::default();
    let block = encode_block(&data, Label::NONE, &EncodeOptions::default(), &opts.blocks).unwrap();
    let bytes = asdf::write_to(Vec::new(), &tree, &[block], &opts).unwrap();
    let f = AsdfFile::from_bytes(bytes.clone(), &small_arrays()).unwrap();
    let e = f.read_masked("/m").unwrap_err();
    assert!(too_large(&e), "{e}");
    let f = AsdfFile::from_bytes(bytes, &OpenOptions::default()).unwrap();
    let (a, mask) = f.read_masked("/m").unwrap();
    assert_eq!(a.shape(), &[2000, 2000]);
    assert!(mask.unwrap().iter().all(|&m| !m));
    assert!(matches!(
        f.read_masked("/nothing"),
        Err(AsdfError::NoNode(_))
    ));
}

/// A file with `n` zstd-compressed arrays `/a0`, `/a1`, ... of 1 MiB each (a few hundred
/// bytes each in the file).
fn compressed_arrays(n: usize) -> Vec<u8> {
    let mut w = AsdfWriter::new();
    let opts = StoreOptions::compressed("zstd").unwrap();
    let entries: Vec<(String, Node)> = (0..n)
        .map(|i| {
            let a = ndarray::Array1::<u8>::from_elem(MIB as usize, i as u8);
            (format!("a{i}"), w.add(&a, &opts).unwrap())
        })
        .collect();
    let tree = Node::mapping(entries.into_iter().map(|(k, v)| (Node::from(k), v)));
    let bytes = w.to_bytes(tree, &Default::default()).unwrap();
    assert!(bytes.len() < 64 * 1024, "{}", bytes.len());
    bytes
}

fn block_of(f: &AsdfFile<Vec<u8>>, pointer: &str) -> i64 {
    match f.meta(pointer).unwrap().source {
        Some(Source::Block(b)) => b,
        other => panic!("{pointer}: {other:?}"),
    }
}

#[test]
fn total_decoded_bytes_are_bounded_per_file() {
    let bytes = compressed_arrays(3);
    let opts = OpenOptions {
        max_total_decoded_bytes: 2 * MIB + MIB / 2,
        ..Default::default()
    };
    let f = AsdfFile::from_bytes(bytes.clone(), &opts).unwrap();
    assert_eq!(f.decoded_bytes(), 0);
    assert_eq!(f.array::<u8>("/a0").unwrap()[7], 0);
    assert_eq!(f.array::<u8>("/a1").unwrap()[7], 1);
    // Reading a block again does not count again.
    for _ in 0..5 {
        assert!(f.array::<u8>("/a0").is_ok());
        assert!(f.block_data(block_of(&f, "/a1")).is_ok());
    }
    assert_eq!(f.decoded_bytes(), 2 * MIB);
    // The third block would bring the total to 3 MiB.
    let third = block_of(&f, "/a2");
    let e = f.array::<u8>("/a2").unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(&e, AsdfError::Array { source: NdError::TooLarge { limit, .. }, .. }
            if *limit == opts.max_total_decoded_bytes),
        "{e}"
    );
    assert!(msg.contains(&format!("block {third} ")), "{msg}");
    assert!(msg.contains("max_total_decoded_bytes"), "{msg}");
    let e = f.block_data(third).unwrap_err();
    assert!(
        matches!(e, AsdfError::DecodedTotalTooLarge { block, size, decoded, limit, .. }
            if block as i64 == third && size == MIB && decoded == 2 * MIB
                && limit == opts.max_total_decoded_bytes),
        "{e}"
    );
    assert!(e.to_string().contains("max_total_decoded_bytes"), "{e}");
    assert_eq!(f.decoded_bytes(), 2 * MIB);
    // The defaults read everything.
    let f = AsdfFile::from_bytes(bytes, &OpenOptions::default()).unwrap();
    for i in 0..3 {
        assert!(f.array::<u8>(&format!("/a{i}")).is_ok());
    }
    assert_eq!(f.decoded_bytes(), 3 * MIB);
}

#[test]
fn total_decoded_bytes_hold_under_parallel_reads() {
    let bytes = compressed_arrays(8);
    let opts = OpenOptions {
        max_total_decoded_bytes: 3 * MIB,
        ..Default::default()
    };
    let f = AsdfFile::from_bytes(bytes, &opts).unwrap();
    let ok = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for i in 0..8 {
            let (f, ok) = (&f, &ok);
            s.spawn(move || {
                // Every thread reads its block twice, and block 0 too.
                let mine = f.block_data(i).is_ok();
                assert_eq!(f.block_data(i).is_ok(), mine);
                let _ = f.block_data(0);
                if mine {
                    ok.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
    });
    // Whatever the interleaving, exactly three distinct blocks fit (each is charged once,
    // and a refused block stays refused).
    assert_eq!(ok.into_inner(), 3);
    assert_eq!(f.decoded_bytes(), 3 * MIB);
}

/// A compressed block read again is kept (within `max_cached_block_bytes`) and borrowed from
/// then on, so arrays sharing one block decode it once; with no budget it is decoded each time.
#[test]
fn a_block_read_twice_is_kept_within_the_cache_budget() {
    use std::borrow::Cow;
    let mut w = asdf::AsdfWriter::new();
    let node = w
        .add(
            &ndarray::Array1::<u32>::from_iter(0..100_000),
            &asdf::StoreOptions::compressed("zstd").unwrap(),
        )
        .unwrap();
    let bytes = w
        .to_bytes(
            asdf::yaml::Node::mapping([("x", node)]),
            &Default::default(),
        )
        .unwrap();
    let open = |budget: u64| {
        let opts = asdf::OpenOptions {
            max_cached_block_bytes: budget,
            ..Default::default()
        };
        asdf::AsdfFile::from_bytes(bytes.clone(), &opts).unwrap()
    };
    let f = open(1 << 20);
    assert!(
        matches!(f.block_data(0).unwrap(), Cow::Owned(_)),
        "first read"
    );
    for _ in 0..3 {
        let d = f.block_data(0).unwrap();
        assert!(matches!(d, Cow::Borrowed(_)), "kept from the second read");
        assert_eq!(d.len(), 400_000);
    }
    assert_eq!(f.array::<u32>("/x").unwrap()[[99_999]], 99_999);
    assert_eq!(f.decoded_bytes(), 400_000, "charged once");
    for budget in [0, 399_999] {
        let f = open(budget);
        for _ in 0..3 {
            assert!(
                matches!(f.block_data(0).unwrap(), Cow::Owned(_)),
                "{budget}"
            );
        }
    }
}
