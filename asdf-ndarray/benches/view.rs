//! View and copy throughput against `memcpy` of the same bytes (64 MiB of float64).

use std::hint::black_box;
use std::time::Duration;

use asdf_block::{
    BlockReader, BlockWriter, ChecksumPolicy, EncodeOptions, Label, ReadOptions, WriteOptions,
};
use asdf_ndarray::{ByteOrder, NdArrayMeta, ScalarType};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const N: usize = 8 << 20; // elements: 64 MiB

fn file(order: ByteOrder) -> BlockReader<Vec<u8>> {
    let data: Vec<u8> = (0..N)
        .flat_map(|i| match order {
            ByteOrder::Little => (i as f64).to_le_bytes(),
            ByteOrder::Big => (i as f64).to_be_bytes(),
        })
        .collect();
    let mut w = BlockWriter::new(
        Vec::new(),
        0,
        WriteOptions {
            align: 64,
            checksums: false,
            ..WriteOptions::default()
        },
    );
    w.write_data(&data, Label::NONE, &EncodeOptions::default())
        .unwrap();
    let opts = ReadOptions {
        checksums: ChecksumPolicy::Skip,
        ..ReadOptions::default()
    };
    BlockReader::new(w.finish().unwrap(), 0, opts).unwrap()
}

fn bench(c: &mut Criterion) {
    let native = file(ByteOrder::NATIVE);
    let other = if ByteOrder::NATIVE == ByteOrder::Little {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    };
    let swapped = file(other);
    let meta = NdArrayMeta::block(
        0,
        vec![N / 1024, 1024],
        ScalarType::Float64.into(),
        ByteOrder::NATIVE,
    );
    let meta_sw = NdArrayMeta::block(0, vec![N / 1024, 1024], ScalarType::Float64.into(), other);
    let mut rev = meta.clone();
    rev.offset = (N as u64 - 1) * 8;
    rev.strides = Some(vec![-8192, -8]);
    let src = native.data(0).unwrap().into_owned();

    let mut g = c.benchmark_group("64MiB_f64");
    g.throughput(Throughput::Bytes((N * 8) as u64));
    g.sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    g.bench_function("memcpy", |b| {
        let mut dst = vec![0u8; src.len()];
        b.iter(|| {
            dst.copy_from_slice(black_box(&src));
            black_box(&dst);
        })
    });
    g.bench_function("memcpy_into_new_vec", |b| {
        b.iter(|| black_box(black_box(&src[..]).to_vec()))
    });
    g.bench_function("view", |b| {
        b.iter(|| black_box(meta.view::<f64>(&native).unwrap()))
    });
    g.bench_function("view_and_sum", |b| {
        b.iter(|| black_box(meta.view::<f64>(&native).unwrap().sum()))
    });
    g.bench_function("copy_native", |b| {
        b.iter(|| black_box(meta.array::<f64>(&native).unwrap()))
    });
    g.bench_function("copy_byteswap", |b| {
        b.iter(|| black_box(meta_sw.array::<f64>(&swapped).unwrap()))
    });
    g.bench_function("copy_reversed_strides", |b| {
        b.iter(|| black_box(rev.array::<f64>(&native).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
