//! ndarray materialization: a YAML tree (first section) over arbitrary decoded blocks (the other
//! sections) in a `MemoryStore`.
#![no_main]

use asdf_ndarray::MemoryStore;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parts = asdf_fuzz::sections(data);
    let Some((tree, blocks)) = parts.split_first() else {
        return;
    };
    let Ok(tree) = asdf_yaml::parse_bytes(tree) else {
        return;
    };
    let store = MemoryStore {
        blocks: blocks.iter().map(|b| b.to_vec()).collect(),
        externals: Vec::new(),
    };
    asdf_fuzz::read_all_arrays(&tree, &store);
});
