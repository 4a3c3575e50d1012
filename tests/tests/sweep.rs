//! The deterministic corrupted-file sweep over every corpus file and every reader: the asdf
//! facade (open, read every array, verify every block), the YAML parser, RawArray and
//! asdf-awkward (`.awkd` files, and schemas over their blobs).
//!
//! For every file: truncation points (all of them for small files, an even sample plus every
//! point inside headers for the larger ones), seeded bit flips, and header fields set to 0, their
//! maximum and random values (binary header fields, and every integer of the YAML tree or the
//! awkward schema). Each case must return `Ok` or an error, never panic, finish in under a second
//! and allocate under 64 MiB (counted per thread by the allocator in `common`).
//!
//! The tests of this file run in parallel (the counters are per thread).

use crate::common::*;
use asdf::block::{scan_blocks, ChecksumPolicy};
use asdf::{AsdfFile, OpenOptions};
use asdf_awkward::{AwkdFile, BlobStore, MemoryStore, ReadOptions as AwkReadOptions};

/// Opens an ASDF file from bytes, verifies every block and reads every array: whether all of it
/// succeeded.
fn read_asdf(bytes: &[u8]) -> bool {
    let Ok(f) = AsdfFile::from_bytes(bytes, &OpenOptions::default()) else {
        return false;
    };
    let mut ok = true;
    for i in 0..f.blocks().len() as i64 {
        ok &= f.blocks().verify(i, ChecksumPolicy::AcceptLegacy).is_ok();
    }
    for (pointer, _) in f.arrays() {
        ok &= f.read(&pointer).is_ok();
    }
    ok
}

fn sweep_asdf_files(part: usize, parts: usize) -> Stats {
    let mut stats = Stats::new();
    let mut rng = Rng(0x005e_ed0f_a5df + part as u64);
    let files = corpus_files("asdf");
    assert!(
        files.len() > 100,
        "corpus has only {} ASDF files",
        files.len()
    );
    for (name, path) in files.iter().skip(part).step_by(parts) {
        let orig = std::fs::read(path).unwrap();
        // The original reads fully (whatever the error of a reference file meant to be bad).
        stats.run(&|| format!("{name} as is"), || read_asdf(&orig));
        let layout = scan_blocks(&mut &orig[..], 0, true).unwrap();
        let first_block = layout
            .blocks
            .first()
            .map_or(orig.len(), |b| b.offset as usize);
        let tree = AsdfFile::from_bytes(&orig[..], &OpenOptions::default())
            .ok()
            .and_then(|f| f.tree_range())
            .unwrap_or(0..first_block);

        // Truncations: a sample, plus every point inside each block header and around the tree
        // end and the block index.
        let mut dense: Vec<_> = layout
            .blocks
            .iter()
            .map(|b| b.offset as usize..b.offset as usize + 64)
            .collect();
        dense.push(tree.end.saturating_sub(16)..tree.end + 16);
        if let Some(ix) = layout.index_offset {
            dense.push(ix as usize..ix as usize + 48);
        }
        for cut in cuts(orig.len(), 400, &dense) {
            stats.run(&|| format!("{name} truncated to {cut}"), || {
                read_asdf(&orig[..cut])
            });
        }
        // Bit flips: half in the tree, half in the blocks (all in the tree when there are none).
        for k in 0..240 {
            let span = if k % 2 == 0 || first_block >= orig.len() {
                0..orig.len().min(first_block.max(1))
            } else {
                first_block..orig.len()
            };
            let at = span.start + rng.below(span.len());
            let bit = rng.below(8);
            let mut bad = orig.clone();
            bad[at] ^= 1 << bit;
            stats.run(
                &|| format!("{name}: bit {bit} of byte {at} flipped"),
                || read_asdf(&bad),
            );
        }
        // Block header fields.
        let fields: [(&str, usize, usize); 6] = [
            ("header_size", 4, 2),
            ("flags", 6, 4),
            ("compression", 10, 4),
            ("allocated_size", 14, 8),
            ("used_size", 22, 8),
            ("data_size", 30, 8),
        ];
        for b in &layout.blocks {
            for (field, off, width) in fields {
                let max = if width == 8 {
                    u64::MAX
                } else {
                    (1u64 << (8 * width)) - 1
                };
                for value in field_values(&mut rng, max) {
                    let mut bad = orig.clone();
                    let at = b.offset as usize + off;
                    bad[at..at + width].copy_from_slice(&value.to_be_bytes()[8 - width..]);
                    stats.run(
                        &|| format!("{name} block {} {field} = {value}", b.index),
                        || read_asdf(&bad),
                    );
                }
            }
        }
        // Integers of the tree (shape, offset, strides, source, datatype lengths...), a sample
        // of at most 40 per file.
        let tokens = integer_tokens(&orig[tree.clone()]);
        let step = tokens.len().div_ceil(40).max(1);
        for t in tokens.iter().step_by(step) {
            let range = tree.start + t.start..tree.start + t.end;
            for value in text_values(&mut rng) {
                let bad = replace(&orig, range.clone(), &value);
                stats.run(
                    &|| format!("{name}: integer at {} set to {value}", range.start),
                    || read_asdf(&bad),
                );
            }
        }
    }
    stats
}

#[test]
fn sweep_asdf_even() {
    let stats = sweep_asdf_files(0, 2);
    stats.report("asdf facade sweep (even files)");
    assert!(stats.cases > 20_000, "only {} cases", stats.cases);
}

#[test]
fn sweep_asdf_odd() {
    let stats = sweep_asdf_files(1, 2);
    stats.report("asdf facade sweep (odd files)");
    assert!(stats.cases > 20_000, "only {} cases", stats.cases);
}

fn read_yaml(bytes: &[u8]) -> bool {
    match asdf_yaml::parse_bytes(bytes) {
        Ok(tree) => asdf_yaml::emit_to_string(&tree).is_ok(),
        Err(e) => {
            assert!(!e.to_string().is_empty());
            false
        }
    }
}

#[test]
fn sweep_yaml_trees() {
    let mut stats = Stats::new();
    let mut rng = Rng(0x7a31);
    let files = corpus_files("yaml");
    assert!(files.len() > 100);
    for (name, path) in &files {
        let orig = std::fs::read(path).unwrap();
        stats.run(&|| format!("{name} as is"), || read_yaml(&orig));
        for cut in cuts(orig.len(), 200, &[]) {
            stats.run(&|| format!("{name} truncated to {cut}"), || {
                read_yaml(&orig[..cut])
            });
        }
        for _ in 0..60 {
            let at = rng.below(orig.len());
            let bit = rng.below(8);
            let mut bad = orig.clone();
            bad[at] ^= 1 << bit;
            stats.run(
                &|| format!("{name}: bit {bit} of byte {at} flipped"),
                || read_yaml(&bad),
            );
        }
    }
    stats.report("YAML sweep");
    assert!(stats.cases > 10_000, "only {} cases", stats.cases);
}

/// Reads a RawArray from bytes (the slice reader and the streaming reader) and its data as a
/// few element types: whether the slice reader accepted it.
fn read_ra(bytes: &[u8]) -> bool {
    let opts = rawarray::ReadOptions::default();
    let _ = rawarray::read_vec::<u8, _>(bytes, &opts);
    let _ = rawarray::read_vec::<f64, _>(bytes, &opts);
    match rawarray::RawArray::from_slice(bytes, &opts) {
        Ok(ra) => {
            let _ = ra.to_vec::<u8>();
            let _ = ra.to_vec::<i32>();
            let _ = ra.to_array::<f32>();
            let _ = ra.to_array::<bool>();
            true
        }
        Err(e) => {
            assert!(!e.to_string().is_empty());
            false
        }
    }
}

#[test]
fn sweep_rawarray() {
    let mut stats = Stats::new();
    let mut rng = Rng(0x4a3);
    let files = corpus_files("ra");
    assert!(files.len() > 30);
    for (name, path) in &files {
        let orig = std::fs::read(path).unwrap();
        stats.run(&|| format!("{name} as is"), || read_ra(&orig));
        // Header: magic, flags, eltype, elbyte, size, ndims, then ndims dims (u64 LE each).
        let ndims = orig.get(40..48).map_or(0, |b| {
            u64::from_le_bytes(b.try_into().unwrap()).min(16) as usize
        });
        let header_len = (48 + 8 * ndims).min(orig.len());
        let header_region = [std::ops::Range {
            start: 0,
            end: header_len + 16,
        }];
        for cut in cuts(orig.len(), 400, &header_region) {
            stats.run(&|| format!("{name} truncated to {cut}"), || {
                read_ra(&orig[..cut])
            });
        }
        for k in 0..200 {
            let at = if k % 2 == 0 {
                rng.below(header_len)
            } else {
                rng.below(orig.len())
            };
            let bit = rng.below(8);
            let mut bad = orig.clone();
            bad[at] ^= 1 << bit;
            stats.run(
                &|| format!("{name}: bit {bit} of byte {at} flipped"),
                || read_ra(&bad),
            );
        }
        let mut fields = vec![
            ("magic".to_string(), 0),
            ("flags".to_string(), 8),
            ("eltype".to_string(), 16),
            ("elbyte".to_string(), 24),
            ("size".to_string(), 32),
            ("ndims".to_string(), 40),
        ];
        fields.extend((0..ndims).map(|d| (format!("dims[{d}]"), 48 + 8 * d)));
        for (field, at) in &fields {
            if at + 8 > orig.len() {
                continue;
            }
            let mut values = field_values(&mut rng, u64::MAX).to_vec();
            values.extend([1, 2, 4, 8, 16, 1 << 32]);
            for value in values {
                let mut bad = orig.clone();
                bad[*at..at + 8].copy_from_slice(&value.to_le_bytes());
                stats.run(&|| format!("{name}: {field} = {value}"), || read_ra(&bad));
            }
        }
    }
    stats.report("RawArray sweep");
    assert!(stats.cases > 10_000, "only {} cases", stats.cases);
}

/// Reads every array of an `.awkd` file written to `path`.
fn read_awkd(path: &std::path::Path) -> bool {
    let Ok(f) = AwkdFile::open(path) else {
        return false;
    };
    let mut ok = true;
    for name in f.array_names() {
        match f.read(&name) {
            Ok(layout) => {
                if layout.len() < 100_000 {
                    ok &= layout.to_json().is_ok();
                }
            }
            Err(_) => ok = false,
        }
    }
    ok
}

#[test]
fn sweep_awkd_files() {
    let mut stats = Stats::new();
    let mut rng = Rng(0xa3d);
    let dir = asdf_testkit::TempDir::new("sweep-awkd");
    let scratch = dir.join("case.awkd");
    let files = corpus_files("awkd");
    assert!(files.len() >= 6);
    for (name, path) in &files {
        let orig = std::fs::read(path).unwrap();
        let case = |stats: &mut Stats, what: &dyn Fn() -> String, bytes: &[u8]| {
            std::fs::write(&scratch, bytes).unwrap();
            stats.run(what, || read_awkd(&scratch));
        };
        case(&mut stats, &|| format!("{name} as is"), &orig);
        for cut in cuts(orig.len(), 500, &[]) {
            case(
                &mut stats,
                &|| format!("{name} truncated to {cut}"),
                &orig[..cut],
            );
        }
        for _ in 0..300 {
            let at = rng.below(orig.len());
            let bit = rng.below(8);
            let mut bad = orig.clone();
            bad[at] ^= 1 << bit;
            case(
                &mut stats,
                &|| format!("{name}: bit {bit} of byte {at} flipped"),
                &bad,
            );
        }
        // ZIP size fields: local headers (compressed/uncompressed size at +18/+22) and central
        // directory entries (+20/+24), and the end record's entry counts and offset.
        let mut fields = Vec::new();
        for at in 0..orig.len().saturating_sub(4) {
            match &orig[at..at + 4] {
                b"PK\x03\x04" => fields.extend([at + 18, at + 22]),
                b"PK\x01\x02" => fields.extend([at + 20, at + 24, at + 42]),
                b"PK\x05\x06" => fields.extend([at + 10, at + 12, at + 16]),
                _ => {}
            }
        }
        for at in fields {
            if at + 4 > orig.len() {
                continue;
            }
            for value in field_values(&mut rng, u32::MAX as u64) {
                let mut bad = orig.clone();
                bad[at..at + 4].copy_from_slice(&(value as u32).to_le_bytes());
                case(
                    &mut stats,
                    &|| format!("{name}: ZIP field at {at} = {value}"),
                    &bad,
                );
            }
        }
    }
    stats.report(".awkd file sweep");
    assert!(stats.cases > 3_000, "only {} cases", stats.cases);
}

#[test]
fn sweep_awkward_schemas() {
    let mut stats = Stats::new();
    let mut rng = Rng(0x5c4e);
    let opts = AwkReadOptions::default();
    for (name, path) in corpus_files("awkd") {
        let f = AwkdFile::open(&path).unwrap();
        let mut store = MemoryStore::default();
        for e in f.entry_names() {
            let b = f.get(e, 1 << 30).unwrap().unwrap();
            store.blobs.insert(e.clone(), b.into_owned());
        }
        for array in f.array_names() {
            let key = format!("{array}.json");
            let schema = store.blobs[&key].clone();
            let read = |store: &MemoryStore| match asdf_awkward::read_array(store, &array, &opts) {
                Ok(layout) => layout.len() >= 100_000 || layout.to_json().is_ok(),
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                    false
                }
            };
            stats.run(&|| format!("{name}:{array} as is"), || read(&store));
            let with_schema = |bytes: Vec<u8>| {
                let mut s = store.clone();
                s.blobs.insert(key.clone(), bytes);
                s
            };
            // Every integer of the schema (lengths, ids, counts, dtypes...) set to extreme values.
            for t in integer_tokens(&schema) {
                for value in text_values(&mut rng) {
                    let s = with_schema(replace(&schema, t.clone(), &value));
                    stats.run(
                        &|| format!("{name}:{array}: schema integer at {} = {value}", t.start),
                        || read(&s),
                    );
                }
            }
            for cut in 0..schema.len() {
                let s = with_schema(schema[..cut].to_vec());
                stats.run(&|| format!("{name}:{array}: schema cut at {cut}"), || {
                    read(&s)
                });
            }
            for _ in 0..300 {
                let mut bad = schema.clone();
                let at = rng.below(bad.len());
                let bit = rng.below(8);
                bad[at] ^= 1 << bit;
                let s = with_schema(bad);
                stats.run(
                    &|| format!("{name}:{array}: schema bit {bit} of byte {at} flipped"),
                    || read(&s),
                );
            }
            // Blobs: truncated and bit-flipped.
            let blob_names: Vec<String> =
                store.blobs.keys().filter(|k| **k != key).cloned().collect();
            for blob in &blob_names {
                let data = store.blobs[blob].clone();
                for cut in cuts(data.len(), 64, &[]) {
                    let mut s = store.clone();
                    s.blobs.insert(blob.clone(), data[..cut].to_vec());
                    stats.run(&|| format!("{name}:{array}: {blob} cut at {cut}"), || {
                        read(&s)
                    });
                }
                for _ in 0..40 {
                    if data.is_empty() {
                        break;
                    }
                    let mut bad = data.clone();
                    let at = rng.below(bad.len());
                    let bit = rng.below(8);
                    bad[at] ^= 1 << bit;
                    let mut s = store.clone();
                    s.blobs.insert(blob.clone(), bad);
                    stats.run(
                        &|| format!("{name}:{array}: {blob} bit {bit} of byte {at} flipped"),
                        || read(&s),
                    );
                }
            }
        }
    }
    stats.report("awkward schema sweep");
    assert!(stats.cases > 3_000, "only {} cases", stats.cases);
}
