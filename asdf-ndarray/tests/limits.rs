//! `ReadLimits` on every read that can expand: chunked arrays (`array_with`, `read_with`,
//! chunk reads inside `region_with`) and masked arrays (`read_masked_with`, `to_inline_with`).

use asdf_block::{BlockReader, BlockWriter, EncodeOptions, Label, ReadOptions, WriteOptions};
use asdf_ndarray::{ChunkedArray, NdArrayMeta, NdError, NoBlocks, ReadLimits};
use asdf_yaml::parse_str;

const SMALL: ReadLimits = ReadLimits {
    max_expanded_bytes: 1 << 20,
};

fn too_large(e: &NdError, limit: u64) -> bool {
    matches!(e, NdError::TooLarge { limit: l, .. } if *l == limit)
}

/// One uncompressed block holding `data`.
fn blocks(data: &[u8]) -> BlockReader<Vec<u8>> {
    let mut w = BlockWriter::new(Vec::new(), 0, WriteOptions::default());
    w.write_data(data, Label::NONE, &EncodeOptions::default())
        .unwrap();
    BlockReader::new(w.finish().unwrap(), 0, ReadOptions::default()).unwrap()
}

/// 3999 little-endian float64 values 1.5, 2.5, ...: what a 2000 × 2000 array with strides
/// [8, 8] (element [i, j] = value i + j) reads.
fn overlapped() -> Vec<u8> {
    (0..3999)
        .flat_map(|i| (1.5 + i as f64).to_le_bytes())
        .collect()
}

/// A 2000 × 2000 float64 chunked array (32 MB) made of one 1 × 1 chunk: a few bytes of tree.
fn gappy_chunked() -> ChunkedArray {
    let node = parse_str(
        "{shape: [2000, 2000], datatype: float64, chunks: [\
         {start: [5, 5], ndarray: {data: [[2.5]], datatype: float64}}]}",
    )
    .unwrap();
    ChunkedArray::from_node(&node).unwrap()
}

#[test]
fn chunked_whole_array_reads_take_limits() {
    let c = gappy_chunked();
    let e = c.array_with::<f64>(&NoBlocks, &SMALL).unwrap_err();
    assert!(too_large(&e, SMALL.max_expanded_bytes), "{e}");
    let e = c.read_with(&NoBlocks, &SMALL).unwrap_err();
    assert!(too_large(&e, SMALL.max_expanded_bytes), "{e}");
    // The defaults (4 GiB) and the untrusted preset (1 GiB) accept 32 MB.
    for limits in [ReadLimits::default(), ReadLimits::untrusted()] {
        let a = c.array_with::<f64>(&NoBlocks, &limits).unwrap();
        assert_eq!(a.shape(), &[2000, 2000]);
        assert_eq!(a[[5, 5]], 2.5);
        assert_eq!(a[[0, 0]], 0.0);
        assert_eq!(
            c.read_with(&NoBlocks, &limits).unwrap().shape(),
            &[2000, 2000]
        );
    }
    assert_eq!(c.read(&NoBlocks).unwrap().shape(), &[2000, 2000]);
}

#[test]
fn chunk_reads_inside_a_region_take_the_limits() {
    // The region is one element, but its chunk expands a 32 KB block to 32 MB through
    // overlapping strides: the chunk read itself is bounded.
    let r = blocks(&overlapped());
    let node = parse_str(
        "{shape: [2000, 2000], datatype: float64, chunks: [{start: [0, 0], ndarray: \
         {source: 0, datatype: float64, byteorder: little, shape: [2000, 2000], strides: [8, 8]}}]}",
    )
    .unwrap();
    let c = ChunkedArray::from_node(&node).unwrap();
    let e = c.region_with::<f64>(&r, &[0..1, 0..1], &SMALL).unwrap_err();
    assert!(e.to_string().contains("chunks[0]"), "{e}");
    assert!(e.to_string().contains(&(1u64 << 20).to_string()), "{e}");
    let a = c
        .region_with::<f64>(&r, &[0..1, 0..1], &ReadLimits::default())
        .unwrap();
    assert_eq!(a.into_raw_vec_and_offset().0, vec![1.5]);
    let a = c
        .region_with::<f64>(&r, &[1..2, 2..3], &ReadLimits::default())
        .unwrap();
    assert_eq!(a.into_raw_vec_and_offset().0, vec![1.5 + 3.0]);
}

#[test]
fn masked_reads_take_limits() {
    // A 32 KB block expanded to 2000 × 2000 (32 MB) by overlapping strides, with a
    // one-element mask broadcast to the same shape.
    let r = blocks(&overlapped());
    let node = parse_str(
        "{source: 0, datatype: float64, byteorder: little, shape: [2000, 2000], strides: [8, 8], \
         mask: {data: [true], datatype: bool8}}",
    )
    .unwrap();
    let m = NdArrayMeta::from_node(&node).unwrap();
    let e = m.read_masked_with(&r, &SMALL).unwrap_err();
    assert!(too_large(&e, SMALL.max_expanded_bytes), "{e}");
    assert!(m.to_inline_with(&r, &SMALL).is_err());
    let (a, mask) = m.read_masked_with(&r, &ReadLimits::default()).unwrap();
    assert_eq!(a.shape(), &[2000, 2000]);
    let mask = mask.unwrap();
    assert_eq!(mask.shape(), &[2000, 2000]);
    assert!(mask.iter().all(|&b| b));
    assert!(m.read_masked(&r).is_ok());
}

#[test]
fn a_broadcast_mask_no_larger_than_the_array_data_is_always_allowed() {
    // 2 MiB of uint8 data (backed by its block), a one-element mask broadcast over it: the
    // 2 MiB mask is no larger than the data, so even a 1 MiB limit accepts it.
    let r = blocks(&vec![3u8; 2 << 20]);
    let node = parse_str(
        "{source: 0, datatype: uint8, shape: [2048, 1024], mask: {data: [false], datatype: bool8}}",
    )
    .unwrap();
    let m = NdArrayMeta::from_node(&node).unwrap();
    let (a, mask) = m.read_masked_with(&r, &SMALL).unwrap();
    assert_eq!(a.shape(), &[2048, 1024]);
    assert!(mask.unwrap().iter().all(|&b| !b));
}

#[test]
fn untrusted_preset_is_stricter_than_the_default() {
    let u = ReadLimits::untrusted();
    assert_eq!(u.max_expanded_bytes, 1 << 30);
    assert!(u.max_expanded_bytes < ReadLimits::default().max_expanded_bytes);
}
