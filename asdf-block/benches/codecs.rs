//! Block encode/decode throughput per codec, beside the raw codec speed (the backend called
//! directly, without the block layer), MD5 and memcpy of the same bytes.
//!
//! `cargo bench -p asdf-block --bench codecs`; figures are in the README.

use std::hint::black_box;
use std::io::{Read, Write};

use asdf_block::{
    BlockReader, BlockWriter, ChecksumPolicy, CodecRegistry, EncodeOptions, Label, ReadOptions,
    WriteOptions,
};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const SIZE: usize = 32 << 20;

/// A float64 random walk rounded to 0.01: compressible like real measurements, not trivially.
fn data() -> Vec<u8> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut v = 0.0f64;
    (0..SIZE / 8)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v += ((x >> 11) as f64 / (1u64 << 53) as f64) - 0.5;
            ((v * 100.0).round() / 100.0).to_le_bytes()
        })
        .collect()
}

const CODECS: [&str; 8] = ["none", "zlib", "bzp2", "lz4", "lz4f", "zstd", "blsc", "xz"];

/// The slow codecs (bzip2, xz) get an eighth of the data so the run stays short.
fn sized<'a>(data: &'a [u8], label: &str) -> &'a [u8] {
    if matches!(label, "bzp2" | "xz") {
        &data[..SIZE / 8]
    } else {
        data
    }
}

fn file_with(data: &[u8], label: &str) -> Vec<u8> {
    let mut w = BlockWriter::new(Vec::new(), 0, WriteOptions::default());
    let enc = EncodeOptions {
        typesize: 8,
        ..EncodeOptions::default()
    };
    w.write_data(data, Label::from_name(label).unwrap(), &enc)
        .unwrap();
    w.finish().unwrap()
}

fn block_decode(c: &mut Criterion) {
    let data = data();
    let mut g = c.benchmark_group("block_decode");
    g.throughput(Throughput::Bytes(SIZE as u64)).sample_size(10);
    for label in CODECS {
        let data = sized(&data, label);
        g.throughput(Throughput::Bytes(data.len() as u64));
        let file = file_with(data, label);
        let ratio = data.len() as f64 / file.len() as f64;
        for (policy, name) in [
            (ChecksumPolicy::Skip, "nocheck"),
            (ChecksumPolicy::AcceptLegacy, "md5"),
        ] {
            let opts = ReadOptions {
                checksums: policy,
                ..ReadOptions::default()
            };
            g.bench_with_input(
                BenchmarkId::new(format!("{label}/{name}"), format!("ratio {ratio:.2}")),
                &file,
                |b, f| {
                    b.iter(|| {
                        let r = BlockReader::new(&f[..], 0, opts.clone()).unwrap();
                        let d = r.data(0).unwrap();
                        // Touch the data so the uncompressed (zero-copy) case is not free.
                        black_box(d.iter().step_by(4096).map(|&b| b as u64).sum::<u64>())
                    })
                },
            );
        }
    }
    g.finish();
}

fn block_encode(c: &mut Criterion) {
    let data = data();
    let mut g = c.benchmark_group("block_encode");
    g.throughput(Throughput::Bytes(SIZE as u64)).sample_size(10);
    for label in CODECS {
        let data = sized(&data, label);
        g.throughput(Throughput::Bytes(data.len() as u64));
        g.bench_function(label, |b| {
            b.iter(|| black_box(file_with(data, label).len()))
        });
    }
    g.finish();
}

/// The backends called directly: what the block layer adds shows against these.
fn raw_codecs(c: &mut Criterion) {
    let data = data();
    let reg = CodecRegistry::default();
    let mut g = c.benchmark_group("raw");
    g.throughput(Throughput::Bytes(SIZE as u64)).sample_size(10);
    g.bench_function("memcpy", |b| {
        let mut dst = vec![0u8; SIZE];
        b.iter(|| {
            dst.copy_from_slice(&data);
            black_box(dst[SIZE - 1])
        })
    });
    g.bench_function("md5", |b| b.iter(|| black_box(asdf_block::md5(&data))));
    let z = reg
        .get(Label(*b"zlib"))
        .unwrap()
        .encode(&data, &EncodeOptions::default())
        .unwrap();
    g.bench_function("zlib-rs inflate (flate2 read)", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(SIZE);
            flate2::read::ZlibDecoder::new(&z[..])
                .read_to_end(&mut out)
                .unwrap();
            black_box(out.len())
        })
    });
    g.bench_function("zlib-rs deflate level 6", |b| {
        b.iter(|| {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(6));
            e.write_all(&data).unwrap();
            black_box(e.finish().unwrap().len())
        })
    });
    let chunks: Vec<Vec<u8>> = data
        .chunks(4 << 20)
        .map(lz4_flex::block::compress)
        .collect();
    g.bench_function("lz4_flex block decompress (serial, 4 MiB chunks)", |b| {
        let mut out = vec![0u8; SIZE];
        b.iter(|| {
            for (c, dst) in chunks.iter().zip(out.chunks_mut(4 << 20)) {
                lz4_flex::block::decompress_into(c, dst).unwrap();
            }
            black_box(out[0])
        })
    });
    g.bench_function("lz4_flex block compress (serial, 4 MiB chunks)", |b| {
        b.iter(|| {
            black_box(
                data.chunks(4 << 20)
                    .map(|c| lz4_flex::block::compress(c).len())
                    .sum::<usize>(),
            )
        })
    });
    let zs = zstd::bulk::compress(&data, 3).unwrap();
    g.bench_function("zstd decompress (bulk)", |b| {
        b.iter(|| black_box(zstd::bulk::decompress(&zs, SIZE).unwrap().len()))
    });
    g.bench_function("zstd compress level 3 (bulk)", |b| {
        b.iter(|| black_box(zstd::bulk::compress(&data, 3).unwrap().len()))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = block_decode, block_encode, raw_codecs
}
criterion_main!(benches);
