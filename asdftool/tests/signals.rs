//! An interrupted in-place `defragment` (SIGINT, SIGTERM) removes its temporary file and leaves
//! the original intact.

use crate::common::*;

use std::process::{Command, Stdio};

use asdf_testkit::TempDir;

/// A file of 8 arrays of 1 MiB of incompressible bytes: slow enough to compress with xz that
/// the temporary file is seen before the write ends.
fn big_file(path: &std::path::Path) {
    let mut w = asdf::AsdfWriter::new();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut entries = Vec::new();
    for i in 0..8 {
        let data: Vec<u8> = (0..1 << 20)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let node = w
            .add(&ndarray::Array1::from(data), &asdf::StoreOptions::default())
            .unwrap();
        entries.push((format!("a{i}"), node));
    }
    w.write_path(
        path,
        asdf::yaml::Node::mapping(entries),
        &Default::default(),
    )
    .unwrap();
}

fn temp_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn interrupted_defragment_removes_its_temporary_file() {
    let t = TempDir::new("signals");
    let f = t.join("big.asdf");
    big_file(&f);
    let before = std::fs::read(&f).unwrap();
    for (sig, status) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let mut child = Command::new(bin())
            .args(["-q", "defragment", "big.asdf", "-o", "big.asdf", "-c", "xz"])
            .current_dir(t.path())
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        // Wait for the temporary file (the hang guard fails the test after 30 s).
        while temp_files(t.path()).is_empty() {
            assert!(
                child.try_wait().unwrap().is_none(),
                "defragment ended before its temporary file was seen"
            );
            assert!(start.elapsed().as_secs() < 30, "no temporary file appeared");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        // SAFETY: sends a signal to the child this test started (its pid is still ours to
        // signal: it has not been waited for).
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
        let code = child.wait().unwrap().code();
        assert_eq!(code, Some(status));
        assert!(
            temp_files(t.path()).is_empty(),
            "{:?}",
            temp_files(t.path())
        );
        assert!(std::fs::read(&f).unwrap() == before, "the original changed");
    }
}
