//! Every codec: round trips, sizes, garbage, truncation and bombs.

use asdf_block::{CodecRegistry, EncodeOptions, Label};

#[cfg(not(feature = "bls2"))]
const LABELS: &[&str] = &["zlib", "bzp2", "lz4", "lz4f", "zstd", "blsc", "xz"];
/// With the `bls2` feature, Blosc2 goes through every generic test too.
#[cfg(feature = "bls2")]
const LABELS: &[&str] = &["zlib", "bzp2", "lz4", "lz4f", "zstd", "blsc", "xz", "bls2"];

/// Compressible but not trivial data: a noisy ramp of u32s.
fn sample(len: usize) -> Vec<u8> {
    let mut x = 0x2545_f491u32;
    (0..len / 4)
        .flat_map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            ((i as u32 / 3) + (x & 3)).to_le_bytes()
        })
        .collect()
}

fn codec(name: &str) -> &'static dyn asdf_block::Codec {
    let reg: &'static CodecRegistry = Box::leak(Box::new(CodecRegistry::default()));
    reg.get(Label::from_name(name).unwrap()).unwrap()
}

#[test]
fn every_codec_round_trips_every_size() {
    for &name in LABELS {
        let c = codec(name);
        assert_eq!(c.label(), Label::from_name(name).unwrap());
        assert_eq!(c.name(), name);
        for len in [0usize, 1, 7, 4096, 100_003] {
            let data = sample(len);
            let enc = c
                .encode(
                    &data,
                    &EncodeOptions {
                        typesize: 4,
                        ..Default::default()
                    },
                )
                .unwrap();
            assert_eq!(
                c.decode(&enc, data.len()).unwrap(),
                data,
                "{name} len {len}"
            );
            let mut dst = vec![0xffu8; data.len()];
            c.decode_into(&enc, &mut dst).unwrap();
            assert_eq!(dst, data, "{name} decode_into len {len}");
        }
    }
}

#[test]
fn levels_are_honoured_and_checked() {
    let data = sample(200_000);
    for (name, lo, hi) in [
        ("zlib", 1, 9),
        ("bzp2", 1, 9),
        ("zstd", 1, 19),
        ("blsc", 1, 9),
        ("xz", 0, 9),
    ] {
        let c = codec(name);
        for level in [lo, hi] {
            let enc = c
                .encode(
                    &data,
                    &EncodeOptions {
                        level: Some(level),
                        typesize: 4,
                        ..Default::default()
                    },
                )
                .unwrap();
            assert_eq!(
                c.decode(&enc, data.len()).unwrap(),
                data,
                "{name} level {level}"
            );
        }
    }
    assert!(codec("zlib")
        .encode(
            &data,
            &EncodeOptions {
                level: Some(10),
                typesize: 1,
                ..Default::default()
            }
        )
        .is_err());
    assert!(codec("zstd")
        .encode(
            &data,
            &EncodeOptions {
                level: Some(1000),
                typesize: 1,
                ..Default::default()
            }
        )
        .is_err());
}

#[test]
fn wrong_declared_size_is_an_error_either_way() {
    let data = sample(50_000);
    for &name in LABELS {
        let c = codec(name);
        let enc = c.encode(&data, &EncodeOptions::default()).unwrap();
        let short = c.decode(&enc, data.len() - 1).unwrap_err();
        let long = c.decode(&enc, data.len() + 1).unwrap_err();
        assert!(
            !short.message.is_empty() && !long.message.is_empty(),
            "{name}"
        );
        let mut dst = vec![0u8; data.len() + 10];
        assert!(
            c.decode_into(&enc, &mut dst).is_err(),
            "{name} decode_into too long"
        );
        let mut dst = vec![0u8; data.len() - 10];
        assert!(
            c.decode_into(&enc, &mut dst).is_err(),
            "{name} decode_into too short"
        );
    }
}

#[test]
fn garbage_and_truncation_are_errors_not_panics() {
    let data = sample(300_000);
    for &name in LABELS {
        let c = codec(name);
        let enc = c.encode(&data, &EncodeOptions::default()).unwrap();
        for cut in [0, 1, 3, 4, 5, 8, 16, enc.len() / 2, enc.len() - 1] {
            // An error, or (when only an end marker was cut, as LZ4 frames allow) exactly the
            // original bytes: never wrong data.
            if let Ok(out) = c.decode(&enc[..cut], data.len()) {
                assert!(
                    cut >= enc.len() - 4 && out == data,
                    "{name} truncated to {cut} decoded"
                );
            }
        }
        // Flip bytes across the stream; decoders must report errors (or, for codecs without
        // an integrity check, at worst produce different bytes), never panic or overrun.
        for i in (0..enc.len()).step_by(enc.len() / 37 + 1) {
            let mut bad = enc.clone();
            bad[i] ^= 0x5a;
            let _ = c.decode(&bad, data.len());
        }
        let junk: Vec<u8> = (0..1000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
            .collect();
        assert!(c.decode(&junk, 5000).is_err(), "{name} accepted junk");
    }
}

#[test]
fn python_lz4_framing_is_exact() {
    // Two full 4 MiB chunks and a partial one, like Python asdf writes for a 10 MiB array.
    let data = sample(10 << 20);
    let enc = codec("lz4")
        .encode(&data, &EncodeOptions::default())
        .unwrap();
    let mut pos = 0;
    let mut sizes = Vec::new();
    while pos < enc.len() {
        let n = u32::from_be_bytes(enc[pos..pos + 4].try_into().unwrap()) as usize;
        let size = u32::from_le_bytes(enc[pos + 4..pos + 8].try_into().unwrap()) as usize;
        let raw = &enc[pos + 8..pos + 4 + n];
        assert_eq!(lz4_flex::block::decompress(raw, size).unwrap().len(), size);
        sizes.push(size);
        pos += 4 + n;
    }
    assert_eq!(sizes, vec![4 << 20, 4 << 20, 2 << 20]);
    assert_eq!(codec("lz4").decode(&enc, data.len()).unwrap(), data);
}

#[test]
fn lz4_label_also_reads_frames_like_old_asdf_jl() {
    let data = sample(1 << 20);
    let frame = codec("lz4f")
        .encode(&data, &EncodeOptions::default())
        .unwrap();
    assert_eq!(&frame[..4], &[0x04, 0x22, 0x4d, 0x18]);
    assert_eq!(codec("lz4").decode(&frame, data.len()).unwrap(), data);
    let mut dst = vec![0; data.len()];
    codec("lz4").decode_into(&frame, &mut dst).unwrap();
    assert_eq!(dst, data);
}

#[test]
fn impossible_expansion_is_refused_before_allocating() {
    // 20 bytes of zlib or raw LZ4 cannot hold 1 TiB; the error comes without trying.
    let tiny = codec("zlib")
        .encode(&[0u8; 100], &EncodeOptions::default())
        .unwrap();
    let e = codec("zlib").decode(&tiny, 1 << 40).unwrap_err();
    assert!(e.message.contains("cannot decode"), "{e}");
    let mut chunk = Vec::new();
    chunk.extend_from_slice(&12u32.to_be_bytes());
    chunk.extend_from_slice(&u32::MAX.to_le_bytes());
    chunk.extend_from_slice(&[0u8; 8]);
    let e = codec("lz4").decode(&chunk, u32::MAX as usize).unwrap_err();
    assert!(e.message.contains("impossible"), "{e}");
}

#[test]
fn unbounded_codecs_allocate_only_what_they_produce() {
    // A real bomb: 64 MiB of zeros in a few hundred bytes. Declaring a huge size must not
    // allocate it: decoding stops with an error once the stream ends.
    let zeros = vec![0u8; 64 << 20];
    for name in ["bzp2", "zstd", "xz", "lz4f"] {
        let c = codec(name);
        let enc = c.encode(&zeros, &EncodeOptions::default()).unwrap();
        let t = std::time::Instant::now();
        let e = c.decode(&enc, 1 << 40).unwrap_err(); // 1 TiB declared
        assert!(e.message.contains("ends after"), "{name}: {e}");
        assert!(t.elapsed().as_secs() < 20, "{name} took {:?}", t.elapsed());
    }
}

#[test]
fn blosc_validates_its_header() {
    let data = sample(100_000);
    let c = codec("blsc");
    let enc = c
        .encode(
            &data,
            &EncodeOptions {
                typesize: 4,
                ..Default::default()
            },
        )
        .unwrap();
    // Trailing bytes after the buffer are ignored; a declared size beyond the block is not.
    let mut longer = enc.clone();
    longer.extend_from_slice(&[0u8; 10]);
    assert_eq!(c.decode(&longer, data.len()).unwrap(), data);
    let mut lying = enc.clone();
    let claimed = (enc.len() as u32 + 1000).to_le_bytes();
    lying[12..16].copy_from_slice(&claimed);
    assert!(c.decode(&lying, data.len()).is_err());
    assert!(c.decode(&enc[..15], data.len()).is_err());
}

#[test]
fn multithreaded_encoding_gives_ordinary_streams() {
    // 12 MiB: above the size at which zstd splits a block between workers.
    let data = sample(12 << 20);
    for &name in LABELS {
        let c = codec(name);
        let enc = |threads| {
            c.encode(
                &data,
                &EncodeOptions {
                    typesize: 4,
                    threads,
                    ..Default::default()
                },
            )
            .unwrap()
        };
        let (one, four) = (enc(1), enc(4));
        for (threads, stream) in [(1, &one), (4, &four)] {
            assert_eq!(
                c.decode(stream, data.len()).unwrap(),
                data,
                "{name} encoded on {threads} threads"
            );
        }
        if name == "zstd" {
            // One frame, content size declared, readable by plain libzstd.
            assert_eq!(
                zstd::zstd_safe::get_frame_content_size(&four).ok(),
                Some(Some(data.len() as u64))
            );
            assert_eq!(zstd::bulk::decompress(&four, data.len()).unwrap(), data);
            assert_ne!(one, four, "zstd workers were not used");
        }
    }
}

#[test]
fn encode_blocks_shares_the_pool_between_blocks() {
    use asdf_block::{encode_blocks, WriteOptions};
    let data = sample(12 << 20);
    let zstd = Label::from_name("zstd").unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let (single, pair) = pool.install(|| {
        let one = [(&data[..], zstd, EncodeOptions::default())];
        let two = [
            (&data[..], zstd, EncodeOptions::default()),
            (&data[..], zstd, EncodeOptions::default()),
        ];
        let opts = WriteOptions::default();
        (
            encode_blocks(&one, &opts).unwrap(),
            encode_blocks(&two, &opts).unwrap(),
        )
    });
    // One block gets both threads (a multi-worker frame); two blocks get one each.
    let serial = codec("zstd")
        .encode(
            &data,
            &EncodeOptions {
                threads: 1,
                ..Default::default()
            },
        )
        .unwrap();
    assert_ne!(&*single[0].payload, &serial[..]);
    assert_eq!(&*pair[0].payload, &serial[..]);
    assert_eq!(&*pair[1].payload, &serial[..]);
}
