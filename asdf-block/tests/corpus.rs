//! The blocks of every asdf-standard reference file (standards 1.0.0 to 1.6.0).

use asdf_block::*;

fn reference_files() -> Vec<std::path::PathBuf> {
    let root = asdf_testkit::corpus_file("asdf-standard/reference_files");
    let mut files = Vec::new();
    for version in std::fs::read_dir(&root).unwrap() {
        let dir = version.unwrap().path();
        if !dir.is_dir() || dir.file_name().unwrap() == "generate" {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "asdf") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(
        files.len() >= 7 * 16,
        "only {} reference files found",
        files.len()
    );
    files
}

fn le_i64(bytes: &[u8]) -> Vec<i64> {
    bytes
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn every_reference_file_reads_and_verifies() {
    for path in reference_files() {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let r = MappedBlocks::open(&path, 0, ReadOptions::default()).unwrap();
        assert!(
            r.layout().warnings.is_empty(),
            "{}: {:?}",
            path.display(),
            r.layout().warnings
        );
        let expected_blocks = match name.as_str() {
            "anchor.asdf" | "scalars.asdf" | "exploded.asdf" => 0,
            "ascii.asdf" | "basic.asdf" | "exploded0000.asdf" | "shared.asdf" | "stream.asdf"
            | "structured.asdf" => 1,
            "compressed.asdf" | "endian.asdf" | "unicode_bmp.asdf" | "unicode_spp.asdf" => 2,
            "complex.asdf" | "float.asdf" => 4,
            "int.asdf" => 12,
            other => panic!("unexpected reference file {other}"),
        };
        assert_eq!(r.len(), expected_blocks, "{}", path.display());
        // Every block except the stream is found through its (valid) index.
        if expected_blocks > 0 && name != "stream.asdf" {
            assert!(r.layout().index_used, "{}", path.display());
        }
        for (i, status) in r
            .verify_all(ChecksumPolicy::AcceptLegacy)
            .into_iter()
            .enumerate()
        {
            let status = status.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let h = r.blocks()[i].header;
            let want = match (h.is_streamed(), h.is_compressed()) {
                (true, _) => ChecksumStatus::Absent,
                // Written by Python asdf < 5.3: compressed blocks carry the MD5 of decoded data.
                (false, true) => ChecksumStatus::Decoded,
                (false, false) => ChecksumStatus::Stored,
            };
            assert_eq!(status, want, "{} block {i}", path.display());
        }
    }
}

#[test]
fn compressed_reference_file_decodes_and_needs_the_legacy_policy() {
    for version in ["1.0.0", "1.6.0"] {
        let path = asdf_testkit::corpus_file(&format!(
            "asdf-standard/reference_files/{version}/compressed.asdf"
        ));
        let r = MappedBlocks::open(&path, 0, ReadOptions::default()).unwrap();
        let labels: Vec<String> = r
            .blocks()
            .iter()
            .map(|b| b.header.compression.to_string())
            .collect();
        assert_eq!(labels, ["zlib", "bzp2"]);
        let want: Vec<i64> = (0..128).collect();
        for i in 0..2 {
            assert_eq!(le_i64(&r.data(i).unwrap()), want, "{version} block {i}");
        }
        let strict = MappedBlocks::open(
            &path,
            0,
            ReadOptions {
                checksums: ChecksumPolicy::Strict,
                ..ReadOptions::default()
            },
        )
        .unwrap();
        let e = strict.data(0).unwrap_err();
        assert!(
            matches!(e.root(), BlockError::ChecksumMismatch { block: 0, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("compressed.asdf"), "{e}");
    }
}

#[test]
fn basic_and_stream_reference_values() {
    let dir = asdf_testkit::corpus_file("asdf-standard/reference_files/1.6.0");
    let r = MappedBlocks::open(dir.join("basic.asdf"), 0, ReadOptions::default()).unwrap();
    assert_eq!(r.blocks()[0].offset, 664);
    assert_eq!(le_i64(&r.data(0).unwrap()), (0..8).collect::<Vec<_>>());
    assert!(
        matches!(r.data(0).unwrap(), std::borrow::Cow::Borrowed(_)),
        "uncompressed data must not be copied"
    );

    let r = MappedBlocks::open(dir.join("stream.asdf"), 0, ReadOptions::default()).unwrap();
    let b = r.info(-1).unwrap();
    assert!(b.header.is_streamed());
    assert_eq!(r.layout().index_offset, None);
    let data = r.data(-1).unwrap();
    let values: Vec<f64> = data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(values.len(), 64);
    for (k, v) in values.iter().enumerate() {
        assert_eq!(*v, (k / 8) as f64);
    }
}

#[test]
fn seek_reader_agrees_on_every_reference_file() {
    for path in reference_files() {
        let bytes = std::fs::read(&path).unwrap();
        let mem = BlockReader::new(&bytes[..], 0, ReadOptions::default()).unwrap();
        let mut seek =
            SeekBlockReader::new(std::io::Cursor::new(&bytes), 0, ReadOptions::default()).unwrap();
        assert_eq!(seek.blocks(), mem.blocks(), "{}", path.display());
        for i in 0..mem.len() as i64 {
            assert!(
                seek.read(i).unwrap() == *mem.data(i).unwrap(),
                "{} block {i}",
                path.display()
            );
        }
    }
}
