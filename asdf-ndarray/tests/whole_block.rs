//! `array()` of an array that is exactly its whole block decodes straight into the result (the
//! `BlockStore::block_into` path): same values and the same errors as the general path.

use std::borrow::Cow;

use asdf_block::{BlockReader, BlockWriter, ChecksumPolicy, ReadOptions, WriteOptions};
use asdf_ndarray::{ArrayWriter, BlockStore, ByteOrder, NdArrayMeta, NdError, StoreOptions};
use asdf_yaml::Node;
use half::f16;
use ndarray::{ArrayD, IxDyn};
use num_complex::Complex;

/// The arrays' blocks written to a file image, read back under `policy`.
fn reader(w: &ArrayWriter, policy: ChecksumPolicy) -> BlockReader<Vec<u8>> {
    let mut bw = BlockWriter::new(Vec::new(), 0, WriteOptions::default());
    w.write_blocks(&mut bw).unwrap();
    let file = bw.finish().unwrap();
    let opts = ReadOptions {
        checksums: policy,
        ..ReadOptions::default()
    };
    BlockReader::new(file, 0, opts).unwrap()
}

/// The same blocks behind a store without `block_into` (the general path).
struct Plain<'a>(&'a BlockReader<Vec<u8>>);

impl BlockStore for Plain<'_> {
    fn block(&self, source: i64) -> Result<Cow<'_, [u8]>, NdError> {
        Ok(self.0.data(source)?)
    }
}

fn check<T>(values: Vec<T>, shape: &[usize])
where
    T: asdf_ndarray::Element,
    ArrayD<T>: PartialEq + std::fmt::Debug,
{
    let a = ArrayD::from_shape_vec(IxDyn(shape), values).unwrap();
    for codec in [None, Some("zlib"), Some("lz4"), Some("zstd")] {
        for order in [ByteOrder::NATIVE, ByteOrder::Big, ByteOrder::Little] {
            let mut opts = match codec {
                Some(c) => StoreOptions::compressed(c).unwrap(),
                None => StoreOptions::default(),
            };
            opts.byteorder = order;
            let mut w = ArrayWriter::new();
            let node = w.add(&a, &opts).unwrap();
            let meta = NdArrayMeta::from_node(&node).unwrap();
            for policy in [ChecksumPolicy::Strict, ChecksumPolicy::Skip] {
                let r = reader(&w, policy);
                assert_eq!(
                    r.block_len(0).unwrap(),
                    Some(r.info(0).unwrap().data_size())
                );
                let fast = meta.array::<T>(&r).unwrap();
                let general = meta.array::<T>(&Plain(&r)).unwrap();
                assert_eq!(fast, a, "{codec:?} {order:?} {policy:?}");
                assert_eq!(general, a);
            }
        }
    }
}

#[test]
fn every_numeric_type_reads_the_same_through_block_into() {
    check((0..1000).map(|i| i as f64 * 0.5).collect(), &[10, 100]);
    check((0..999).map(|i| i as f32).collect(), &[999]);
    check((0..64).map(|i| i as i128 - 32).collect(), &[4, 4, 4]);
    check((0..50).map(|i| i as u16).collect(), &[50]);
    check((0..40).map(|i| i as u8).collect(), &[40]);
    check((0..30).map(|i| f16::from_f32(i as f32)).collect(), &[30]);
    check(
        (0..20)
            .map(|i| Complex::new(i as f32, -(i as f32)))
            .collect(),
        &[20],
    );
    check::<f64>(vec![], &[0]);
    // bool takes the general path (its bytes are validated) and gives the same result.
    check((0..33).map(|i| i % 3 == 0).collect(), &[3, 11]);
}

#[test]
fn checksum_and_decode_errors_are_the_same_as_the_general_path() {
    let a = ArrayD::from_shape_vec(IxDyn(&[4096]), (0..4096).map(f64::from).collect()).unwrap();
    for codec in [None, Some("zlib")] {
        let mut w = ArrayWriter::new();
        let opts = match codec {
            Some(c) => StoreOptions::compressed(c).unwrap(),
            None => StoreOptions::default(),
        };
        let node = w.add(&a, &opts).unwrap();
        let meta = NdArrayMeta::from_node(&node).unwrap();
        let mut bw = BlockWriter::new(Vec::new(), 0, WriteOptions::default());
        let info = w.write_blocks(&mut bw).unwrap();
        let mut file = bw.finish().unwrap();
        // Flip a data byte: the checksum no longer matches.
        let at = info[0].data_offset as usize + 100;
        file[at] ^= 0x40;
        let r = BlockReader::new(
            file,
            0,
            ReadOptions {
                checksums: ChecksumPolicy::Strict,
                ..ReadOptions::default()
            },
        )
        .unwrap();
        let fast = meta.array::<f64>(&r).unwrap_err().to_string();
        let general = meta.array::<f64>(&Plain(&r)).unwrap_err().to_string();
        assert_eq!(fast, general, "{codec:?}");
        assert!(fast.contains("checksum"), "{fast}");
    }
}

#[test]
fn arrays_that_are_not_their_whole_block_take_the_general_path() {
    // A view of part of a block (offset and strides) shares the block with its base.
    let base = ArrayD::from_shape_vec(IxDyn(&[6, 4]), (0..24i32).collect()).unwrap();
    let mut w = ArrayWriter::new();
    let whole = w
        .add_view(&base, &base.view(), &StoreOptions::default())
        .unwrap();
    let part = w
        .add_view(
            &base,
            &base.slice(ndarray::s![2.., 1..3]),
            &StoreOptions::default(),
        )
        .unwrap();
    let r = reader(&w, ChecksumPolicy::Strict);
    let get = |n: &Node| NdArrayMeta::from_node(n).unwrap().array::<i32>(&r).unwrap();
    assert_eq!(get(&whole), base);
    assert_eq!(
        get(&part),
        base.slice(ndarray::s![2.., 1..3]).to_owned().into_dyn()
    );
}

#[test]
fn implausibly_compressed_blocks_are_not_sized_up_front() {
    // 8 MiB of zeros compress more than 64:1: the declared size is not trusted to size a
    // buffer; the general path (which grows with the data) reads it.
    let a = ArrayD::<f64>::zeros(IxDyn(&[1 << 20]));
    let mut w = ArrayWriter::new();
    let node = w
        .add(&a, &StoreOptions::compressed("zstd").unwrap())
        .unwrap();
    let r = reader(&w, ChecksumPolicy::Strict);
    assert!(r.info(0).unwrap().header.used_size * 64 < 8 << 20);
    assert_eq!(r.block_len(0).unwrap(), None);
    let meta = NdArrayMeta::from_node(&node).unwrap();
    assert_eq!(meta.array::<f64>(&r).unwrap(), a);
}

/// Chunked arrays cut along the first axis (the common layout) are decoded chunk by chunk
/// straight into the result; regions, other codecs and byte orders, and chunk layouts with gaps
/// or overlaps (read by the general path) give the same values.
#[test]
fn chunked_slabs_read_like_the_general_path() {
    use asdf_ndarray::ChunkedArray;
    let big = ndarray::Array3::from_shape_fn((50, 6, 7), |(i, j, k)| (i * 42 + j * 7 + k) as f64);
    for (codec, order) in [
        (None, ByteOrder::NATIVE),
        (Some("lz4"), ByteOrder::NATIVE),
        (Some("zlib"), ByteOrder::Big),
    ] {
        let mut opts = match codec {
            Some(c) => StoreOptions::compressed(c).unwrap(),
            None => StoreOptions::default(),
        };
        opts.byteorder = order;
        let mut w = ArrayWriter::new();
        let node = w.add_chunked(&big, Some(&[8, 6, 7]), &opts).unwrap();
        for policy in [ChecksumPolicy::Strict, ChecksumPolicy::Skip] {
            let r = reader(&w, policy);
            let c = ChunkedArray::from_node(&node).unwrap();
            assert_eq!(c.chunks.len(), 7);
            assert_eq!(c.array::<f64>(&r).unwrap(), big.clone().into_dyn());
            // Partial chunks at both ends, and a region narrower along the other axes.
            assert_eq!(
                c.region::<f64>(&r, &[5..43, 0..6, 0..7]).unwrap(),
                big.slice(ndarray::s![5..43, .., ..]).to_owned().into_dyn()
            );
            assert_eq!(
                c.region::<f64>(&r, &[3..20, 1..4, 2..7]).unwrap(),
                big.slice(ndarray::s![3..20, 1..4, 2..7])
                    .to_owned()
                    .into_dyn()
            );
        }
    }
    // Gaps (rows 8..16 and 24..32 absent) and an overlap (a later chunk rewrites rows 20..24):
    // zeros in the gaps, file order in the overlap.
    let yaml = "{shape: [32, 2], datatype: int32, chunks: [\
        {start: [0, 0], ndarray: {data: [[1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1]], datatype: int32}},\
        {start: [16, 0], ndarray: {data: [[2, 2], [2, 2], [2, 2], [2, 2], [2, 2], [2, 2], [2, 2], [2, 2]], datatype: int32}},\
        {start: [20, 0], ndarray: {data: [[3, 3], [3, 3], [3, 3], [3, 3]], datatype: int32}}]}";
    let c = ChunkedArray::from_node(&asdf_yaml::parse_str(yaml).unwrap()).unwrap();
    let a = c.array::<i32>(&asdf_ndarray::NoBlocks).unwrap();
    let col: Vec<i32> = a.index_axis(ndarray::Axis(1), 0).iter().copied().collect();
    let mut want = vec![1; 8];
    want.extend([0; 8]);
    want.extend([2; 4]);
    want.extend([3; 4]);
    want.extend([0; 8]);
    assert_eq!(col, want);
}

/// `write_blocks_streaming` writes large `zstd` blocks alone, straight into the output, and
/// batches the rest (small ones, and large ones of codecs that do not stream): the file is the
/// one `write_blocks` makes, its blocks in the order they were added, and reads back.
#[test]
fn streaming_blocks_keep_their_order_and_bytes() {
    let big = ArrayD::from_shape_fn(IxDyn(&[(65 << 20) / 8]), |i| (i[0] / 3) as f64);
    let small = ArrayD::from_shape_fn(IxDyn(&[1000]), |i| i[0] as f64);
    let mut w = ArrayWriter::new();
    let arrays = [
        (&small, "zstd"),
        (&big, "zstd"),
        (&small, "zlib"),
        (&big, "lz4"),
        (&big, "zstd"),
        (&small, "zstd"),
    ];
    let nodes: Vec<Node> = arrays
        .iter()
        .map(|(a, codec)| {
            w.add(*a, &StoreOptions::compressed(codec).unwrap())
                .unwrap()
        })
        .collect();
    let mut bw = BlockWriter::new(Vec::new(), 0, WriteOptions::default());
    let eager = w.write_blocks(&mut bw).unwrap();
    let eager_file = bw.finish().unwrap();
    let out = Seeks {
        inner: std::io::Cursor::new(Vec::new()),
        seeks: 0,
    };
    let mut bw = BlockWriter::new(out, 0, WriteOptions::default());
    let streamed = w.write_blocks_streaming(&mut bw).unwrap();
    let out = bw.finish().unwrap();
    // Each of the two large zstd blocks went back to rewrite its header, and forward again.
    assert_eq!(out.seeks, 4);
    let file = out.inner.into_inner();
    assert_eq!(eager, streamed);
    assert!(eager_file == file, "the two writes differ");
    let r = BlockReader::new(file, 0, ReadOptions::default()).unwrap();
    for (i, (node, (want, _))) in nodes.iter().zip(arrays).enumerate() {
        let meta = NdArrayMeta::from_node(node).unwrap();
        assert_eq!(&meta.array::<f64>(&r).unwrap(), want, "array {i}");
    }
}

/// A seekable output that counts its seeks.
struct Seeks {
    inner: std::io::Cursor<Vec<u8>>,
    seeks: usize,
}

impl std::io::Write for Seeks {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::io::Seek for Seeks {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.seeks += 1;
        self.inner.seek(pos)
    }
}
