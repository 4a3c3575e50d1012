//! Block layer: header parse, block index parse, block scan (with and without the index), and
//! the data and checksum of every block through `BlockReader`.
#![no_main]

use asdf_block::{parse_index, scan_blocks, BlockHeader, BlockReader, ChecksumPolicy};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = BlockHeader::parse(data, 0, 0);
    let _ = parse_index(data);
    for use_index in [true, false] {
        if let Ok(layout) = scan_blocks(&mut &data[..], 0, use_index) {
            for b in &layout.blocks {
                assert!(b.offset < data.len() as u64, "block offset past the end");
            }
        }
    }
    if let Ok(r) = BlockReader::new(data, 0, asdf_fuzz::block_options()) {
        for i in 0..r.len() as i64 {
            if let Ok(d) = r.data(i) {
                assert!(d.len() as u64 <= asdf_fuzz::FUZZ_CEILING);
            }
            let _ = r.verify(i, ChecksumPolicy::AcceptLegacy);
            let _ = r.verify(i, ChecksumPolicy::Strict);
        }
        let _ = r.data(-1);
    }
});
