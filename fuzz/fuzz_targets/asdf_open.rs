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
        let _ = file.block_data(i);
        let _ = file.blocks().verify(i, ChecksumPolicy::AcceptLegacy);
    }
    asdf_fuzz::read_all_arrays(file.tree(), &file);
    for (pointer, _) in file.arrays() {
        let _ = file.meta(&pointer);
        let _ = file.view::<f32>(&pointer);
    }
});
