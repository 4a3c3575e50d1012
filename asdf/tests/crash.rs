//! Kill a writing process at random moments: the destination always holds either the old file or
//! a complete new one, never a torn mix.
//!
//! The test binary re-executes itself as the writer: with `ASDF_CRASH_WRITER` set, the
//! `writer_child` test becomes an endless loop of writes to that path.

use std::process::{Command, Stdio};
use std::time::Duration;

use asdf::block::{encode_block, EncodeOptions, Label};
use asdf::yaml::Node;
use asdf::{AsdfFile, WriteOptions};

/// Generation `g`'s file: a tree naming `g` and a block of 4 MiB filled with `g`.
fn generation(g: u64) -> (Node, Vec<u8>) {
    let tree = Node::mapping([
        ("generation", Node::from(g as i64)),
        ("padding", Node::from("x".repeat(10_000))),
    ])
    .with_tag("tag:stsci.edu:asdf/core/asdf-1.1.0");
    (tree, vec![(g % 251) as u8; 4 << 20])
}

#[test]
fn writer_child() {
    let Some(path) = std::env::var_os("ASDF_CRASH_WRITER") else {
        return; // Only meaningful as the child of `killed_writers_never_leave_a_torn_file`.
    };
    let opts = WriteOptions::default();
    for g in 1.. {
        let (tree, data) = generation(g);
        let block =
            encode_block(&data, Label::NONE, &EncodeOptions::default(), &opts.blocks).unwrap();
        asdf::write_path(&path, &tree, &[block], &opts).unwrap();
    }
}

fn check(path: &std::path::Path) -> u64 {
    let f = AsdfFile::open(path).unwrap_or_else(|e| panic!("torn file: {e}"));
    let g = f.pointer("/generation").and_then(Node::as_i64).unwrap() as u64;
    let data = f.block_data(0).unwrap();
    assert_eq!(data.len(), 4 << 20);
    assert!(
        data.iter().all(|&b| b == (g % 251) as u8),
        "generation {g} has foreign bytes"
    );
    g
}

#[test]
fn killed_writers_never_leave_a_torn_file() {
    let dir = asdf_testkit::TempDir::new("asdf-crash");
    let path = dir.join("target.asdf");
    let opts = WriteOptions::default();
    let (tree, data) = generation(0);
    let block = encode_block(&data, Label::NONE, &EncodeOptions::default(), &opts.blocks).unwrap();
    asdf::write_path(&path, &tree, &[block], &opts).unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut last = 0;
    let mut advanced = 0;
    let mut x = 0x1234_5678_9abc_def0u64;
    for _ in 0..12 {
        let mut child = Command::new(&exe)
            .args([
                &asdf_testkit::harness_name!("writer_child"),
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("ASDF_CRASH_WRITER", &path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::thread::sleep(Duration::from_millis(20 + x % 180));
        child.kill().unwrap();
        child.wait().unwrap();
        let g = check(&path);
        advanced += (g != last) as u32;
        last = g;
    }
    // The kills landed at different points: some runs completed writes, and the directory holds
    // at most the file and the temporary files of killed runs (never a half-renamed file).
    assert!(
        advanced > 0,
        "no write ever completed; the test proves nothing"
    );
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name == "target.asdf" || (name.starts_with(".target.asdf.") && name.ends_with(".tmp")),
            "{name}"
        );
    }
}
