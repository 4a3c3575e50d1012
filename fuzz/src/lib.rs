//! Shared helpers of the fuzz targets: the section container that packs a tree and its blocks
//! (or a schema and its blobs) into one fuzz input, and the reads every target performs.
//!
//! Container: a sequence of sections, each a little-endian `u32` length followed by that many
//! bytes; a length running past the end takes the rest of the input. The seed generator
//! (`cargo run -p asdf-tests --example fuzz_seeds`) writes the same layout.

use asdf_ndarray::{BlockStore, ChunkedArray, NdArrayMeta, ReadLimits};
use asdf_yaml::Node;

/// Most bytes one fuzz case may make a reader produce (decoded blocks, expanded arrays): low
/// enough that libFuzzer's RSS limit catches a header that was believed, high enough for every
/// seed.
pub const FUZZ_CEILING: u64 = 64 << 20;

/// Splits `data` into its sections.
pub fn sections(mut data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while data.len() >= 4 {
        let n = u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize;
        let rest = &data[4..];
        let n = n.min(rest.len());
        out.push(&rest[..n]);
        data = &rest[n..];
    }
    out
}

/// Block limits for fuzzing (see [`FUZZ_CEILING`]).
pub fn block_options() -> asdf_block::ReadOptions {
    asdf_block::ReadOptions {
        limits: asdf_block::Limits {
            max_decoded_block_size: FUZZ_CEILING,
        },
        ..Default::default()
    }
}

/// Reads every array of `tree` (ndarrays and chunked ndarrays) from `store`, also with masks and
/// zero-copy views; only errors are expected on bad input, never panics.
pub fn read_all_arrays(tree: &Node, store: &(impl BlockStore + Sync)) {
    let limits = ReadLimits {
        max_expanded_bytes: FUZZ_CEILING,
    };
    for (pointer, kind) in asdf::find_arrays(tree) {
        let Some(node) = tree.pointer(&pointer) else {
            panic!("find_arrays returned {pointer}, which does not resolve");
        };
        match kind {
            asdf::ArrayKind::NdArray => {
                if let Ok(meta) = NdArrayMeta::from_node(node) {
                    if let Ok(a) = meta.read_with(store, &limits) {
                        let _ = a.to_data_node();
                    }
                    let _ = meta.view::<f64>(store);
                    let _ = meta.view::<u8>(store);
                    if meta.mask.is_some() {
                        let _ = meta.read_masked_with(store, &limits);
                    }
                }
            }
            asdf::ArrayKind::Chunked => {
                if let Ok(c) = ChunkedArray::from_node(node) {
                    // The limits bound expansion beyond the chunks' data; the result itself is
                    // bounded here too, so the fuzzer's RSS limit is not hit by big valid files.
                    let bytes = c
                        .shape
                        .iter()
                        .try_fold(c.datatype.size().unwrap_or(usize::MAX), |acc, &d| {
                            acc.checked_mul(d)
                        });
                    if bytes.is_some_and(|b| (b as u64) <= FUZZ_CEILING) {
                        let _ = c.read_with(store, &limits);
                    }
                }
            }
            asdf::ArrayKind::Zarr => {
                // Chunks live in blocks (or an external store the fuzzed bytes cannot name); the
                // chunk and result sizes are bounded by the limits.
                if let Ok(z) = asdf::ndarray::ZarrArray::from_node(node) {
                    let _ = z.read_with(store, &limits);
                }
            }
        }
    }
}
