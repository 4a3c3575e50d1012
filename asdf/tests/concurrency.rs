//! Many threads read one file while others write different files and one replaces the file being
//! read: readers keep a consistent view (their memory map of the old file), writers never tear.

use std::sync::{Arc, Barrier};

use asdf::block::{encode_block, EncodeOptions, Label};
use asdf::yaml::Node;
use asdf::{AsdfFile, WriteOptions};

fn write_generation(path: &std::path::Path, g: u8) {
    let tree = Node::mapping([("generation", Node::from(i64::from(g)))])
        .with_tag("tag:stsci.edu:asdf/core/asdf-1.1.0");
    let opts = WriteOptions::default();
    let raw = vec![g; 1 << 20];
    let zipped: Vec<u8> = (0..(1u32 << 18))
        .flat_map(|i| (i / 64 + u32::from(g)).to_le_bytes())
        .collect();
    let blocks = [
        encode_block(&raw, Label::NONE, &EncodeOptions::default(), &opts.blocks).unwrap(),
        encode_block(
            &zipped,
            Label(*b"zstd"),
            &EncodeOptions::default(),
            &opts.blocks,
        )
        .unwrap(),
    ];
    asdf::write_path(path, &tree, &blocks, &opts).unwrap();
}

fn check(f: &AsdfFile) -> u8 {
    let g = f.pointer("/generation").and_then(Node::as_i64).unwrap() as u8;
    assert!(f.block_data(0).unwrap().iter().all(|&b| b == g));
    let z = f.block_data(1).unwrap();
    assert!(z
        .chunks_exact(4)
        .enumerate()
        .all(|(i, c)| u32::from_le_bytes(c.try_into().unwrap()) == i as u32 / 64 + u32::from(g)));
    g
}

#[test]
fn readers_and_writers_at_once() {
    let dir = asdf_testkit::TempDir::new("asdf-concurrency");
    let shared = dir.join("shared.asdf");
    write_generation(&shared, 0);
    let file = Arc::new(AsdfFile::open(&shared).unwrap());
    let threads = 4;
    let barrier = Arc::new(Barrier::new(threads + 2));
    let mut handles = Vec::new();
    // Readers share one open file (AsdfFile is Sync) and also open it anew, while it is replaced.
    for _ in 0..threads {
        let (file, barrier, shared) = (file.clone(), barrier.clone(), shared.clone());
        handles.push(std::thread::spawn(move || {
            barrier.wait();
            for _ in 0..8 {
                assert_eq!(check(&file), 0, "the open file changed under its reader");
                let fresh = AsdfFile::open(&shared).unwrap();
                check(&fresh);
            }
        }));
    }
    // One writer replaces the shared file repeatedly.
    {
        let (barrier, shared) = (barrier.clone(), shared.clone());
        handles.push(std::thread::spawn(move || {
            barrier.wait();
            for g in 1..=12 {
                write_generation(&shared, g);
            }
        }));
    }
    // Others write their own files.
    {
        let (barrier, dir) = (barrier.clone(), dir.path().to_path_buf());
        handles.push(std::thread::spawn(move || {
            barrier.wait();
            for g in 0..6 {
                let p = dir.join(format!("own{g}.asdf"));
                write_generation(&p, g);
                assert_eq!(check(&AsdfFile::open(&p).unwrap()), g);
            }
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(check(&AsdfFile::open(&shared).unwrap()), 12);
}
