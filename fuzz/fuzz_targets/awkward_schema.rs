//! awkward0 schema evaluation: a JSON schema (first section) over named blobs (the other
//! sections, alternating name and bytes) in a `MemoryStore`.
#![no_main]

use asdf_awkward::{parse_schema_bytes, read_schema, Limits, MemoryStore, ReadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parts = asdf_fuzz::sections(data);
    let Some((schema, rest)) = parts.split_first() else {
        return;
    };
    let Ok(doc) = parse_schema_bytes("schema.json", schema) else {
        return;
    };
    let mut store = MemoryStore::default();
    for pair in rest.chunks(2) {
        let name = String::from_utf8_lossy(pair[0]).into_owned();
        let bytes = pair.get(1).copied().unwrap_or_default();
        store.blobs.insert(name, bytes.to_vec());
    }
    let ceiling = asdf_fuzz::FUZZ_CEILING;
    let opts = ReadOptions {
        limits: Limits {
            max_blob_bytes: ceiling,
            max_total_bytes: ceiling,
            max_virtual_length: ceiling / 8,
            ..Limits::default()
        },
        ..ReadOptions::default()
    };
    if let Ok(layout) = read_schema(&doc, &store, &opts) {
        let n = layout.len();
        if n > 0 {
            let _ = layout.get(0);
            let _ = layout.get(n - 1);
        }
        let _ = layout.get(n);
        let _ = asdf_awkward::to_awkward2(&layout);
        if n < 10_000 {
            let _ = layout.to_json();
        }
    }
});
