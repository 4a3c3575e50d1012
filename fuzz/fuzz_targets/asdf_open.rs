//! Whole ASDF file: open from bytes, read every array, verify every block.
#![no_main]

use asdf::{AsdfFile, OpenOptions};
use asdf_block::ChecksumPolicy;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let options = OpenOptions {
        blocks: asdf_fuzz::block_options(),
        ..Default::default()
    };
    let Ok(file) = AsdfFile::from_bytes(data, &options) else {
        return;
    };
    let _ = file.standard_version();
    for i in 0..file.blocks().len() as i64 {
        // Twice: the second read keeps the block (the cache of blocks shared by arrays).
        let _ = file.block_data(i);
        let _ = file.block_data(i);
        let _ = file.blocks().verify(i, ChecksumPolicy::AcceptLegacy);
    }
    // `verify`'s single pass: each block decoded once, the views into it checked from it.
    let nodes = asdf::find_array_nodes(file.tree());
    for i in 0..file.blocks().len() as i64 {
        let _ = file.with_checked_block(i, ChecksumPolicy::AcceptLegacy, |_, store| {
            for (_, _, node) in &nodes {
                if let Ok(m) = asdf::ndarray::NdArrayMeta::from_node(node) {
                    let _ = m.check_with(store, &options.arrays);
                }
            }
        });
    }
    asdf_fuzz::read_all_arrays(file.tree(), &file);
    for (pointer, _) in file.arrays() {
        let _ = file.meta(&pointer);
        let _ = file.view::<f32>(&pointer);
    }
});
