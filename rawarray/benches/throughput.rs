//! Read/write throughput of plain and compressed RawArray files (64 MiB of f64 by default;
//! `RA_BENCH_MIB` changes the size). The 1 GiB comparison with crates.io `rawarray` 0.1.4 and
//! `numpy.fromfile` is `examples/compare_1gib.rs`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rawarray::{ByteOrder, RawArray, ReadOptions, WriteEncoding, WriteOptions};

fn data(mib: usize) -> Vec<f64> {
    let n = mib * (1 << 20) / 8;
    (0..n).map(|i| (i as f64 * 0.001).sin()).collect()
}

fn bench(c: &mut Criterion) {
    let mib: usize = std::env::var("RA_BENCH_MIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    let v = data(mib);
    let dims = [1024u64, (v.len() / 1024) as u64];
    let bytes = (v.len() * 8) as u64;
    let dir = asdf_testkit::TempDir::new("ra-bench");
    let path = dir.join("bench.ra");
    rawarray::save(&path, &v, &dims, &WriteOptions::default()).unwrap();
    let plain = rawarray::to_bytes(&v, &dims, &WriteOptions::default()).unwrap();
    let big =
        rawarray::to_bytes(&v, &dims, &WriteOptions::with_byte_order(ByteOrder::Big)).unwrap();
    let lz4 = rawarray::to_bytes(
        &v,
        &dims,
        &WriteOptions::with_encoding(WriteEncoding::Lz4Block),
    )
    .unwrap();

    let mut g = c.benchmark_group("rawarray");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("read_file_vec_f64", |b| {
        b.iter(|| black_box(rawarray::open_vec::<f64, _>(&path).unwrap()))
    });
    g.bench_function("read_file_array_f64", |b| {
        b.iter(|| {
            black_box(rawarray::open_array::<f64, _>(&path, &ReadOptions::default()).unwrap())
        })
    });
    g.bench_function("mmap_view_sum_f64", |b| {
        b.iter(|| {
            let m = rawarray::MappedRawArray::open(&path).unwrap();
            black_box(m.view::<f64>().unwrap().sum())
        })
    });
    g.bench_function("read_mem_dynamic", |b| {
        b.iter(|| black_box(RawArray::from_slice(&plain, &ReadOptions::default()).unwrap()))
    });
    g.bench_function("read_mem_bigendian_swap", |b| {
        b.iter(|| {
            black_box(rawarray::read_vec::<f64, _>(&big[..], &ReadOptions::default()).unwrap())
        })
    });
    g.bench_function("read_mem_lz4", |b| {
        b.iter(|| {
            black_box(rawarray::read_vec::<f64, _>(&lz4[..], &ReadOptions::default()).unwrap())
        })
    });
    g.bench_function("write_file_atomic_f64", |b| {
        b.iter(|| rawarray::save(&path, &v, &dims, &WriteOptions::default()).unwrap())
    });
    g.bench_function("write_mem_f64", |b| {
        let mut out = Vec::with_capacity(plain.len());
        b.iter(|| {
            out.clear();
            rawarray::write_slice(&mut out, &v, &dims, &WriteOptions::default()).unwrap();
            black_box(out.len())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
