//! Block layout, index validation, checksums, streamed blocks and limits, through the public API.

use std::io::{Cursor, Write};

use asdf_block::*;

const TREE: &[u8] = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n--- {}\n...\n";

fn ramp(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

/// A file with a tree and blocks of `sizes` with `label`, plus its block offsets.
fn file_with(sizes: &[usize], label: &str, opts: WriteOptions) -> (Vec<u8>, Vec<u64>) {
    let mut w = BlockWriter::new(TREE.to_vec(), TREE.len() as u64, opts);
    let mut offsets = Vec::new();
    for &n in sizes {
        let info = w
            .write_data(
                &ramp(n),
                Label::from_name(label).unwrap(),
                &EncodeOptions::default(),
            )
            .unwrap();
        offsets.push(info.offset);
    }
    (w.finish().unwrap(), offsets)
}

fn read(bytes: &[u8]) -> BlockReader<&[u8]> {
    BlockReader::new(bytes, TREE.len() as u64, ReadOptions::default()).unwrap()
}

#[test]
fn layout_with_valid_index_matches_walk() {
    let (file, offsets) = file_with(&[10, 0, 5000, 3], "none", WriteOptions::default());
    let r = read(&file);
    assert!(r.layout().index_used, "{:?}", r.layout().warnings);
    assert_eq!(
        r.blocks().iter().map(|b| b.offset).collect::<Vec<_>>(),
        offsets
    );
    let walked = scan_blocks(&mut &file[..], 0, false).unwrap();
    assert!(!walked.index_used);
    assert_eq!(walked.blocks, r.layout().blocks);
    assert_eq!(walked.index_offset, r.layout().index_offset);
    assert_eq!(&*r.data(2).unwrap(), &ramp(5000)[..]);
    assert_eq!(r.data(1).unwrap().len(), 0);
    assert!(r.data(4).is_err());
    assert_eq!(&*r.data(-1).unwrap(), &ramp(3)[..]);
    assert!(matches!(
        r.data(-5).unwrap_err(),
        BlockError::NoSuchBlock {
            index: -5,
            count: 4
        }
    ));
}

/// Replaces the index of `file` with `text` and returns where the blocks were found from.
fn with_index(file: &[u8], text: &[u8]) -> BlockLayout {
    let at = memchr_last(file, INDEX_HEADER);
    let mut f = file[..at].to_vec();
    f.extend_from_slice(text);
    scan_blocks(&mut &f[..], TREE.len() as u64, true).unwrap()
}

fn memchr_last(hay: &[u8], needle: &[u8]) -> usize {
    (0..=hay.len() - needle.len())
        .rev()
        .find(|&i| &hay[i..i + needle.len()] == needle)
        .unwrap()
}

#[test]
fn every_index_failure_mode_falls_back_to_the_walk() {
    let (file, offs) = file_with(&[100, 200, 300], "none", WriteOptions::default());
    let good = with_index(&file, &encode_index(&offs));
    assert!(good.index_used);
    let expect = good.blocks.clone();
    let idx = |s: String| s.into_bytes();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "first offset wrong",
            idx(format!(
                "#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- {}\n- {}\n- {}\n...\n",
                offs[0] + 1,
                offs[1],
                offs[2]
            )),
        ),
        (
            "not increasing",
            idx(format!(
                "#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- {}\n- {}\n- {}\n...\n",
                offs[0], offs[2], offs[1]
            )),
        ),
        (
            "middle offset not at a magic",
            idx(format!(
                "#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- {}\n- {}\n- {}\n...\n",
                offs[0],
                offs[1] + 4,
                offs[2]
            )),
        ),
        (
            "missing last block",
            idx(format!(
                "#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- {}\n- {}\n...\n",
                offs[0], offs[1]
            )),
        ),
        (
            "offset past the index",
            idx(format!(
                "#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- {}\n- {}\n- {}\n- 999999\n...\n",
                offs[0], offs[1], offs[2]
            )),
        ),
        (
            "not a list",
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\nfoo: 1\n...\n".to_vec(),
        ),
        (
            "empty",
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n[]\n...\n".to_vec(),
        ),
        ("junk", b"#ASDF BLOCK INDEX\n\xff\xfe garbage".to_vec()),
    ];
    for (what, text) in cases {
        let got = with_index(&file, &text);
        assert!(!got.index_used, "{what}: index used");
        assert_eq!(got.blocks, expect, "{what}: wrong blocks");
        assert!(
            got.warnings.iter().any(|w| w.contains("not used")),
            "{what}: {:?}",
            got.warnings
        );
    }
    // Legal variants are used: flow style with trailing comma, NUL padding after the index.
    let flow = format!(
        "#ASDF BLOCK INDEX\n%YAML 1.1\n--- [{}, {}, {},]\n...\n\0\0\0\0",
        offs[0], offs[1], offs[2]
    );
    let got = with_index(&file, flow.as_bytes());
    assert!(got.index_used, "{:?}", got.warnings);
    assert_eq!(got.blocks, expect);
}

#[test]
fn index_text_inside_block_data_is_not_mistaken_for_the_index() {
    // The last occurrence of the index header is the real one (asdf #990).
    let mut payload = b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- 1\n...\n".to_vec();
    payload.extend(ramp(100));
    let mut w = BlockWriter::new(TREE.to_vec(), TREE.len() as u64, WriteOptions::default());
    w.write_data(&payload, Label::NONE, &EncodeOptions::default())
        .unwrap();
    w.write_data(&payload, Label::NONE, &EncodeOptions::default())
        .unwrap();
    let file = w.finish().unwrap();
    let r = read(&file);
    assert!(r.layout().index_used);
    assert_eq!(r.len(), 2);
    // Without the real index the walk still finds both blocks and stops at nothing wrong.
    let at = memchr_last(&file, INDEX_HEADER);
    let r = BlockReader::new(&file[..at], TREE.len() as u64, ReadOptions::default()).unwrap();
    assert_eq!(r.len(), 2);
    assert!(!r.layout().index_used);
}

#[test]
fn padding_before_between_and_after_blocks() {
    let mut f = TREE.to_vec();
    f.extend_from_slice(&[0u8; 37]); // NULs after the tree, as pad_blocks writes
    f.extend_from_slice(b"    "); // and spaces, as the standard recommends
    let start = f.len() as u64;
    let mut w = BlockWriter::new(
        f,
        start,
        WriteOptions {
            index: false,
            ..WriteOptions::default()
        },
    );
    let (ra, rb) = (ramp(10), ramp(3000));
    let a = encode_block(&ra, Label::NONE, &EncodeOptions::default(), w.options())
        .unwrap()
        .with_padding(90);
    let b = encode_block(&rb, Label(*b"zlib"), &EncodeOptions::default(), w.options())
        .unwrap()
        .with_padding(7);
    w.write(&a).unwrap();
    w.write(&b).unwrap();
    let mut file = w.finish().unwrap();
    file.extend_from_slice(&[0u8; 100]);
    let r = read(&file);
    assert_eq!(r.len(), 2);
    assert_eq!(r.blocks()[0].offset, start);
    assert_eq!(r.blocks()[0].header.allocated_size, 100);
    assert_eq!(&*r.data(0).unwrap(), &ramp(10)[..]);
    assert_eq!(&*r.data(1).unwrap(), &ramp(3000)[..]);
    assert!(r.layout().warnings.is_empty(), "{:?}", r.layout().warnings);
    // Junk after the last block is reported, not fatal.
    file.extend_from_slice(b"junk");
    let r = read(&file);
    assert_eq!(r.len(), 2);
    assert_eq!(r.layout().warnings.len(), 1, "{:?}", r.layout().warnings);
}

#[test]
fn header_size_above_48_is_honoured_and_alignment_uses_it() {
    for align in [8u32, 64, 4096] {
        let (file, _) = file_with(
            &[10, 77, 1 << 16],
            "none",
            WriteOptions {
                align,
                ..WriteOptions::default()
            },
        );
        let r = read(&file);
        for b in r.blocks() {
            assert_eq!(b.data_offset % align as u64, 0, "align {align}");
            assert!(b.header.header_size >= 48);
        }
        assert!(r.layout().index_used);
        assert_eq!(&*r.data(2).unwrap(), &ramp(1 << 16)[..]);
    }
}

#[test]
fn header_errors_name_block_and_offset() {
    let (file, offs) = file_with(
        &[10, 20],
        "none",
        WriteOptions {
            index: false,
            ..WriteOptions::default()
        },
    );
    let at = offs[1] as usize;
    let mut bad = file.clone();
    bad[at + 5] = 40; // header_size 40 < 48
    let e = BlockReader::new(&bad[..], 0, ReadOptions::default()).unwrap_err();
    assert!(
        matches!(
            e,
            BlockError::HeaderTooSmall {
                block: 1,
                header_size: 40,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains(&format!("byte offset {at}")), "{e}");

    let mut bad = file.clone();
    bad[at + 14..at + 22].copy_from_slice(&u64::MAX.to_be_bytes()); // allocated_size
    let e = BlockReader::new(&bad[..], 0, ReadOptions::default()).unwrap_err();
    assert!(matches!(e, BlockError::OutOfBounds { block: 1, .. }), "{e}");

    let e = BlockReader::new(&file[..at + 30], 0, ReadOptions::default()).unwrap_err();
    assert!(
        matches!(e, BlockError::TruncatedHeader { block: 1, .. }),
        "{e}"
    );

    let e = BlockReader::new(&file[..file.len() - 3], 0, ReadOptions::default()).unwrap_err();
    assert!(matches!(e, BlockError::OutOfBounds { block: 1, .. }), "{e}");

    // used > allocated and used != data for raw blocks are errors on access.
    let mut bad = file.clone();
    bad[at + 22..at + 30].copy_from_slice(&21u64.to_be_bytes());
    let r = BlockReader::new(&bad[..], 0, ReadOptions::default()).unwrap();
    assert!(matches!(
        r.data(1).unwrap_err(),
        BlockError::UsedExceedsAllocated { .. }
    ));
    let mut bad = file.clone();
    bad[at + 30..at + 38].copy_from_slice(&19u64.to_be_bytes());
    let r = BlockReader::new(&bad[..], 0, ReadOptions::default()).unwrap();
    assert!(matches!(
        r.data(1).unwrap_err(),
        BlockError::SizeMismatch { .. }
    ));
    assert!(r.data(0).is_ok());
}

#[test]
fn unknown_compression_label_is_named() {
    let (mut file, offs) = file_with(&[5000], "zlib", WriteOptions::default());
    let at = offs[0] as usize;
    file[at + 10..at + 14].copy_from_slice(b"qux\x01");
    let r = read(&file);
    let e = r.data(0).unwrap_err();
    assert!(matches!(e, BlockError::UnknownCompression { .. }), "{e}");
    assert!(e.to_string().contains("qux\\x01"), "{e}");
    assert!(e.to_string().contains("zstd"), "{e}");
}

/// Rewrites the checksum of block 0 in place.
fn set_checksum(file: &mut [u8], at: usize, sum: [u8; 16]) {
    file[at + 38..at + 54].copy_from_slice(&sum);
}

#[test]
fn checksum_conventions_and_policies() {
    let data = ramp(20_000);
    let (mut file, offs) = file_with(&[20_000], "zlib", WriteOptions::default());
    let at = offs[0] as usize;
    fn with_in(file: &[u8], policy: ChecksumPolicy) -> BlockReader<Vec<u8>> {
        BlockReader::new(
            file.to_vec(),
            0,
            ReadOptions {
                checksums: policy,
                ..ReadOptions::default()
            },
        )
        .unwrap()
    }
    // `decode_into` (which hashes while it decodes) must agree with `data` on a fresh reader.
    fn agree(file: &[u8], policy: ChecksumPolicy) -> Result<Vec<u8>, BlockError> {
        let by_data = with_in(file, policy).data(0).map(|d| d.to_vec());
        let r = with_in(file, policy);
        let mut buf = vec![0; r.info(0).unwrap().data_size() as usize];
        let by_into = r.decode_into(0, &mut buf).map(|()| buf);
        match (&by_data, &by_into) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            _ => panic!("data {by_data:?} but decode_into {by_into:?}"),
        }
        by_data
    }
    // Written: MD5 of the stored (compressed) bytes, accepted by every policy.
    let stored = with_in(&file, ChecksumPolicy::Strict)
        .stored(0)
        .unwrap()
        .to_vec();
    assert_eq!(file[at + 38..at + 54], md5(&stored));
    for p in [ChecksumPolicy::Strict, ChecksumPolicy::AcceptLegacy] {
        assert_eq!(
            with_in(&file, p).verify(0, p).unwrap(),
            ChecksumStatus::Stored
        );
        assert_eq!(&*with_in(&file, p).data(0).unwrap(), &data[..]);
        assert_eq!(agree(&file, p).unwrap(), data);
    }
    // Legacy: MD5 of the decoded bytes (Python asdf <= 5.2).
    set_checksum(&mut file, at, md5(&data));
    assert_eq!(
        with_in(&file, ChecksumPolicy::AcceptLegacy)
            .verify(0, ChecksumPolicy::AcceptLegacy)
            .unwrap(),
        ChecksumStatus::Decoded
    );
    assert_eq!(agree(&file, ChecksumPolicy::AcceptLegacy).unwrap(), data);
    let e = agree(&file, ChecksumPolicy::Strict).unwrap_err();
    assert!(
        matches!(
            e,
            BlockError::ChecksumMismatch {
                block: 0,
                decoded: None,
                ..
            }
        ),
        "{e}"
    );
    // Wrong: fails both, naming both digests and the offset.
    set_checksum(&mut file, at, [9; 16]);
    let e = agree(&file, ChecksumPolicy::AcceptLegacy).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(
            e,
            BlockError::ChecksumMismatch {
                decoded: Some(_),
                ..
            }
        ),
        "{e}"
    );
    assert!(
        msg.contains(&hex(&md5(&data))) && msg.contains(&format!("byte offset {at}")),
        "{msg}"
    );
    assert_eq!(agree(&file, ChecksumPolicy::Skip).unwrap(), data);
    // All zeros: no checksum.
    set_checksum(&mut file, at, [0; 16]);
    assert_eq!(
        with_in(&file, ChecksumPolicy::Strict)
            .verify(0, ChecksumPolicy::Strict)
            .unwrap(),
        ChecksumStatus::Absent
    );
    // Uncompressed: both conventions coincide; a flipped data byte is caught.
    let (mut raw, offs) = file_with(&[64], "none", WriteOptions::default());
    let d = offs[0] as usize + 54;
    raw[d + 3] ^= 1;
    let r = BlockReader::new(raw, 0, ReadOptions::default()).unwrap();
    assert!(matches!(
        r.data(0).unwrap_err(),
        BlockError::ChecksumMismatch { decoded: None, .. }
    ));
    assert!(r.verify_all(ChecksumPolicy::Skip)[0].is_ok());
    let mut buf = vec![0; 64];
    assert!(matches!(
        r.decode_into(0, &mut buf).unwrap_err(),
        BlockError::ChecksumMismatch { decoded: None, .. }
    ));
    // A corrupt compressed stream under a correct checksum of it: a decode error, either way.
    let (mut bad, offs) = file_with(&[20_000], "zlib", WriteOptions::default());
    let at = offs[0] as usize;
    let used = u64::from_be_bytes(bad[at + 22..at + 30].try_into().unwrap()) as usize;
    bad[at + 54 + used / 2] ^= 0x55;
    let sum = md5(&bad[at + 54..at + 54 + used]);
    set_checksum(&mut bad, at, sum);
    assert!(matches!(
        agree(&bad, ChecksumPolicy::Strict).unwrap_err(),
        BlockError::Decode { .. }
    ));
}

#[test]
fn checksums_can_be_left_out() {
    let (file, _) = file_with(
        &[100],
        "bzp2",
        WriteOptions {
            checksums: false,
            ..WriteOptions::default()
        },
    );
    let r = read(&file);
    assert!(!r.blocks()[0].header.has_checksum());
    assert_eq!(
        r.verify(0, ChecksumPolicy::Strict).unwrap(),
        ChecksumStatus::Absent
    );
}

#[test]
fn streamed_block_runs_to_eof_and_excludes_an_index() {
    let mut w = BlockWriter::new(TREE.to_vec(), TREE.len() as u64, WriteOptions::default());
    w.write_data(&ramp(16), Label::NONE, &EncodeOptions::default())
        .unwrap();
    let mut s = w.into_streamed().unwrap();
    for row in 0..8u64 {
        s.write_all(&row.to_le_bytes()).unwrap();
    }
    s.write_all(&[1, 2, 3]).unwrap(); // a partial row: kept in the block, the array layer drops it
    assert_eq!(s.written(), 67);
    let file = s.finish().unwrap();
    assert!(memchr::memmem::find(&file, INDEX_HEADER).is_none());
    let r = read(&file);
    assert_eq!(r.len(), 2);
    let b = r.blocks()[1];
    assert!(b.header.is_streamed());
    assert_eq!(b.stored_len, 67);
    assert_eq!(b.data_size(), 67);
    assert_eq!(r.data(-1).unwrap().len(), 67);
    // A compressed streamed block is invalid.
    let mut bad = file.clone();
    let at = b.offset as usize;
    bad[at + 10..at + 14].copy_from_slice(b"zlib");
    let e = BlockReader::new(bad, 0, ReadOptions::default()).unwrap_err();
    assert!(
        matches!(e, BlockError::InvalidStreamed { block: 1, .. }),
        "{e}"
    );
}

#[test]
fn decoded_size_ceiling_is_checked_before_decoding() {
    let (file, _) = file_with(&[1 << 20], "zstd", WriteOptions::default());
    let opts = ReadOptions {
        limits: Limits {
            max_decoded_block_size: 1000,
        },
        ..ReadOptions::default()
    };
    let r = BlockReader::new(&file[..], 0, opts).unwrap();
    let e = r.data(0).unwrap_err();
    assert!(
        matches!(
            e,
            BlockError::TooLarge {
                size: 1048576,
                limit: 1000,
                ..
            }
        ),
        "{e}"
    );
    // A header that lies about a compressed block's size beyond the ceiling never allocates it.
    let (mut file, offs) = file_with(
        &[4096],
        "zstd",
        WriteOptions {
            checksums: false,
            ..WriteOptions::default()
        },
    );
    let at = offs[0] as usize;
    file[at + 30..at + 38].copy_from_slice(&(u64::MAX / 2).to_be_bytes());
    let e = read(&file).data(0).unwrap_err();
    assert!(matches!(e, BlockError::TooLarge { .. }), "{e}");
    // Below the ceiling, a lie is caught by the decoder without allocating the lie.
    file[at + 30..at + 38].copy_from_slice(&(8u64 << 30).to_be_bytes());
    let e = read(&file).data(0).unwrap_err();
    assert!(matches!(e, BlockError::Decode { .. }), "{e}");
}

#[test]
fn seek_reader_matches_memory_reader() {
    let (file, _) = file_with(&[1000, 0, 70_000], "lz4", WriteOptions::default());
    let mem = read(&file);
    let mut seek =
        SeekBlockReader::new(Cursor::new(file.clone()), 0, ReadOptions::default()).unwrap();
    assert_eq!(seek.blocks(), mem.blocks());
    for i in 0..3 {
        assert_eq!(seek.read(i).unwrap(), &*mem.data(i).unwrap());
    }
    assert!(seek.read(3).is_err());
}

#[test]
fn mapped_file_reader_and_errors_name_the_file() {
    let dir = asdf_testkit::TempDir::new("asdf-block-map");
    let (file, _) = file_with(&[123, 456], "blsc", WriteOptions::default());
    let path = dir.join("two.asdf");
    std::fs::write(&path, &file).unwrap();
    let r = MappedBlocks::open(&path, 0, ReadOptions::default()).unwrap();
    assert_eq!(r.path(), Some(path.as_path()));
    assert_eq!(&*r.data(1).unwrap(), &ramp(456)[..]);
    let uncompressed = MappedBlocks::open(&path, 0, ReadOptions::default()).unwrap();
    assert_eq!(uncompressed.bytes(), &file[..]);
    let e = MappedBlocks::open(dir.join("missing.asdf"), 0, ReadOptions::default()).unwrap_err();
    assert!(e.to_string().contains("missing.asdf"), "{e}");
    std::fs::write(&path, &file[..file.len() - 200]).unwrap();
    let e = MappedBlocks::open(&path, 0, ReadOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("two.asdf") && e.to_string().contains("block 1"),
        "{e}"
    );
    // An empty file maps and has no blocks.
    std::fs::write(&path, b"").unwrap();
    assert!(MappedBlocks::open(&path, 0, ReadOptions::default())
        .unwrap()
        .is_empty());
}

#[test]
fn many_blocks_decode_in_parallel_and_into_buffers() {
    let labels = ["zlib", "bzp2", "lz4", "lz4f", "zstd", "blsc", "xz", "none"];
    let mut w = BlockWriter::new(Vec::new(), 0, WriteOptions::default());
    for (i, l) in labels.iter().enumerate() {
        w.write_data(
            &ramp(10_000 + i),
            Label::from_name(l).unwrap(),
            &EncodeOptions::default(),
        )
        .unwrap();
    }
    let file = w.finish().unwrap();
    let r = BlockReader::new(&file[..], 0, ReadOptions::default()).unwrap();
    assert!(r.layout().index_used);
    let all = r.data_all().unwrap();
    for (i, d) in all.iter().enumerate() {
        assert_eq!(d.len(), 10_000 + i, "{}", labels[i]);
        assert!(**d == ramp(10_000 + i)[..], "{}", labels[i]);
        let mut buf = vec![0; 10_000 + i];
        r.decode_into(i as i64, &mut buf).unwrap();
        assert_eq!(buf, ramp(10_000 + i));
    }
    assert!(r
        .verify_all(ChecksumPolicy::Strict)
        .iter()
        .all(|s| *s.as_ref().unwrap() == ChecksumStatus::Stored));
    let mut wrong = vec![0; 3];
    assert!(r.decode_into(0, &mut wrong).is_err());
}

#[test]
fn incompressible_data_is_stored_raw_and_encode_blocks_is_parallel() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let noise: Vec<u8> = (0..50_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect();
    let zeros = vec![0u8; 50_000];
    let opts = WriteOptions::default();
    let items: Vec<(&[u8], Label, EncodeOptions)> = ["zlib", "lz4", "zstd", "xz"]
        .iter()
        .flat_map(|l| {
            let l = Label::from_name(l).unwrap();
            [
                (&noise[..], l, EncodeOptions::default()),
                (&zeros[..], l, EncodeOptions::default()),
            ]
        })
        .collect();
    let blocks = encode_blocks(&items, &opts).unwrap();
    for (b, (data, label, _)) in blocks.iter().zip(&items) {
        if data.as_ptr() == noise.as_ptr() {
            assert!(
                b.header.compression.is_none(),
                "noise compressed with {label}"
            );
            assert_eq!(b.header.used_size, 50_000);
        } else {
            assert_eq!(b.header.compression, *label);
            assert!(b.header.used_size < 5_000);
        }
    }
    assert!(matches!(
        encode_block(&zeros, Label(*b"nope"), &EncodeOptions::default(), &opts).unwrap_err(),
        BlockError::UnknownCodecName { .. }
    ));
}

/// `n` bytes no codec shrinks (splitmix64).
fn noise(n: usize) -> Vec<u8> {
    let mut x = 0u64;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

/// Blocks written with [`BlockWriter::write_streaming`] into a seekable output: a compressible
/// block (zstd streams), an incompressible one (stored raw over the partial payload), a block
/// of a codec that does not stream (zlib), an uncompressed one, an empty one, with and without
/// checksums and alignment. The file must equal the one `write_data` makes, byte for byte.
#[test]
fn streaming_writes_the_same_file_as_encoding_first() {
    let noise = noise(300_000);
    let blocks: Vec<(Vec<u8>, &str)> = vec![
        (ramp(5 << 20), "zstd"),
        (noise.clone(), "zstd"),
        (ramp(100_000), "zlib"),
        (noise, "none"),
        (Vec::new(), "zstd"),
        (ramp(7), "zstd"),
    ];
    for (checksums, align) in [(true, 1), (false, 1), (true, 4096)] {
        let opts = WriteOptions {
            checksums,
            align,
            ..WriteOptions::default()
        };
        let enc = EncodeOptions {
            threads: 2,
            ..EncodeOptions::default()
        };
        let mut eager = BlockWriter::new(TREE.to_vec(), TREE.len() as u64, opts.clone());
        let mut out = Cursor::new(TREE.to_vec());
        out.set_position(TREE.len() as u64);
        let mut streaming = BlockWriter::new(out, TREE.len() as u64, opts);
        for (data, label) in &blocks {
            let label = Label::from_name(label).unwrap();
            let a = eager.write_data(data, label, &enc).unwrap();
            let b = streaming.write_streaming(data, label, &enc).unwrap();
            assert_eq!(a, b, "{label} block of {} bytes", data.len());
        }
        let eager = eager.finish().unwrap();
        let streamed = streaming.finish().unwrap().into_inner();
        assert!(eager == streamed, "checksums {checksums}, align {align}");
        let r = read(&streamed);
        let h = r.layout().blocks[1].header;
        assert!(h.compression.is_none(), "noise is stored raw");
        for (i, (data, _)) in blocks.iter().enumerate() {
            assert_eq!(&*r.data(i as i64).unwrap(), &data[..], "block {i}");
        }
    }
}

/// An output that fails once it holds `room` bytes.
struct FullDisk {
    inner: Cursor<Vec<u8>>,
    room: u64,
}

impl Write for FullDisk {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.inner.position() + buf.len() as u64 > self.room {
            return Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "disk full",
            ));
        }
        self.inner.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::io::Seek for FullDisk {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// A failing output while the codec streams is an I/O error that names the byte, not a codec
/// error.
#[test]
fn streaming_reports_a_failing_output_as_such() {
    let out = FullDisk {
        inner: Cursor::new(Vec::new()),
        room: 10_000,
    };
    let mut w = BlockWriter::new(out, 0, WriteOptions::default());
    let data = noise(4_000_000);
    let e = w
        .write_streaming(&data, Label(*b"zstd"), &EncodeOptions::default())
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("writing block data at byte") && msg.contains("disk full"),
        "{msg}"
    );
}
