//! External array files: resolved against the file that names them, within the external-file
//! policy of `OpenOptions`, only regular files, and errors that never quote an unnamed file.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use asdf::{AsdfFile, AsdfWriter, ExternalFiles, ExternalObserver, OpenOptions, StoreOptions};
use asdf_testkit::TempDir;

/// Writes a one-block ASDF file holding `data` as a uint8 array.
fn one_block(path: &Path, data: &[u8]) {
    let mut w = AsdfWriter::new();
    let a = ndarray::Array1::from(data.to_vec());
    let node = w.add(&a, &StoreOptions::default()).unwrap();
    w.write_path(
        path,
        asdf::yaml::Node::mapping([("x", node)]),
        &Default::default(),
    )
    .unwrap();
}

/// Writes a file whose `/x` is a 4-byte uint8 array in the external file `uri`.
fn referring(path: &Path, uri: &str) {
    let text = format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
         --- !core/asdf-1.1.0\nx: !core/ndarray-1.1.0 {{source: {uri:?}, datatype: uint8, \
         byteorder: little, shape: [4]}}\n...\n"
    );
    std::fs::write(path, text).unwrap();
}

fn with(policy: ExternalFiles) -> (OpenOptions, Arc<Mutex<Vec<PathBuf>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let options = OpenOptions {
        external_files: policy,
        external_observer: Some(ExternalObserver::new(move |p| {
            log.lock().unwrap().push(p.to_path_buf())
        })),
        ..Default::default()
    };
    (options, seen)
}

/// Reads `/x` of a file naming `uri`, with `policy`.
fn read(dir: &Path, uri: &str, policy: ExternalFiles) -> Result<Vec<u8>, String> {
    let main = dir.join("main.asdf");
    referring(&main, uri);
    let (options, _) = with(policy);
    let f = AsdfFile::open_with(&main, &options).unwrap();
    f.array::<u8>("/x")
        .map(|a| a.iter().copied().collect())
        .map_err(|e| e.to_string())
}

struct Layout {
    _tmp: TempDir,
    dir: PathBuf,
    outside: PathBuf,
}

/// `dir/` with `near.asdf` [1,2,3,4] and `sub/below.asdf` [5,6,7,8]; `outside/far.asdf`
/// [9,9,9,9] next to it.
fn layout() -> Layout {
    let tmp = TempDir::new("external-policy");
    let dir = tmp.join("dir");
    let outside = tmp.join("outside");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    one_block(&dir.join("near.asdf"), &[1, 2, 3, 4]);
    one_block(&dir.join("sub/below.asdf"), &[5, 6, 7, 8]);
    one_block(&outside.join("far.asdf"), &[9, 9, 9, 9]);
    Layout {
        _tmp: tmp,
        dir,
        outside,
    }
}

#[test]
fn each_policy_allows_what_it_says() {
    let l = layout();
    let far_abs = l.outside.join("far.asdf");
    let far_abs = far_abs.to_str().unwrap();
    let far_url = format!("file://{far_abs}");
    let near_url = format!("file://{}", l.dir.join("near.asdf").to_str().unwrap());
    std::os::unix::fs::symlink(far_abs, l.dir.join("link-out.asdf")).unwrap();
    std::os::unix::fs::symlink(l.dir.join("sub/below.asdf"), l.dir.join("link-in.asdf")).unwrap();
    let cases: &[(&str, [bool; 3], [u8; 4])] = &[
        // uri, allowed by [None, SameDirAndBelow, Any], content
        ("near.asdf", [false, true, true], [1, 2, 3, 4]),
        ("./sub/below.asdf", [false, true, true], [5, 6, 7, 8]),
        ("sub/../near.asdf", [false, true, true], [1, 2, 3, 4]),
        ("../outside/far.asdf", [false, false, true], [9; 4]),
        ("sub/../../outside/far.asdf", [false, false, true], [9; 4]),
        (far_abs, [false, false, true], [9; 4]),
        (&far_url, [false, false, true], [9; 4]),
        (&near_url, [false, true, true], [1, 2, 3, 4]),
        ("link-out.asdf", [false, false, true], [9; 4]),
        ("link-in.asdf", [false, true, true], [5, 6, 7, 8]),
    ];
    let policies = [
        ExternalFiles::None,
        ExternalFiles::SameDirAndBelow,
        ExternalFiles::Any,
    ];
    for (uri, allowed, content) in cases {
        for (policy, ok) in policies.iter().zip(allowed) {
            let got = read(&l.dir, uri, *policy);
            if *ok {
                assert_eq!(got.as_deref(), Ok(&content[..]), "{uri} with {policy:?}");
            } else {
                let e = got.expect_err(uri);
                assert!(e.contains("external file") && e.contains(uri), "{uri}: {e}");
            }
        }
    }
    assert_eq!(
        OpenOptions::untrusted().external_files,
        ExternalFiles::SameDirAndBelow
    );
    assert_eq!(OpenOptions::default().external_files, ExternalFiles::Any);
}

#[test]
fn the_observer_is_told_each_file_before_it_is_opened() {
    let l = layout();
    let main = l.dir.join("main.asdf");
    referring(&main, "sub/below.asdf");
    let (options, seen) = with(ExternalFiles::SameDirAndBelow);
    let f = AsdfFile::open_with(&main, &options).unwrap();
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing read before arrays are"
    );
    f.array::<u8>("/x").unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].ends_with("sub/below.asdf"), "{seen:?}");
    // Refused files are not reported as opened.
    let (options, seen) = with(ExternalFiles::None);
    let f = AsdfFile::open_with(&main, &options).unwrap();
    assert!(f.array::<u8>("/x").is_err());
    assert!(seen.lock().unwrap().is_empty());
}

#[test]
fn relative_sources_are_relative_to_the_file() {
    // The file is opened by a relative path's absolute form; a decoy with the same name in
    // the working directory (the package directory during tests) is never considered: the
    // base is the file's own directory, fixed when it was opened.
    let l = layout();
    let main = l.dir.join("main.asdf");
    referring(&main, "near.asdf");
    let f = AsdfFile::open(&main).unwrap();
    assert_eq!(f.absolute_path(), Some(main.as_path()));
    assert_eq!(
        f.array::<u8>("/x").unwrap().as_slice().unwrap(),
        &[1, 2, 3, 4]
    );
}

#[test]
fn errors_never_quote_an_external_file() {
    let l = layout();
    let secret = "root:x:0:0:SECRET-LINE:/root:/bin/bash\n";
    std::fs::write(l.dir.join("passwd"), secret).unwrap();
    std::fs::write(
        l.dir.join("bad-tree.asdf"),
        "#ASDF 1.0.0\n%YAML 1.1\n--- {a: [SECRET-LINE\n...\n",
    )
    .unwrap();
    std::fs::write(l.dir.join("bad-version.asdf"), "#ASDF SECRET-LINE\n").unwrap();
    let mut block = b"#ASDF 1.0.0\n".to_vec();
    block.extend_from_slice(b"\xd3BLK\x00\x30\x00\x00SECRET-LINE");
    std::fs::write(l.dir.join("bad-block.asdf"), block).unwrap();
    for uri in [
        "passwd",
        "bad-tree.asdf",
        "bad-version.asdf",
        "bad-block.asdf",
    ] {
        let e = read(&l.dir, uri, ExternalFiles::Any).unwrap_err();
        assert!(!e.contains("SECRET") && !e.contains("root:x"), "{uri}: {e}");
        assert!(e.contains(uri), "{e}");
    }
}

#[test]
fn only_regular_files_are_opened_and_never_block() {
    let l = layout();
    let fifo = l.dir.join("pipe.asdf");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::create_dir(l.dir.join("adir.asdf")).unwrap();
    let sock = l.dir.join("sock.asdf");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    for (uri, kind) in [
        ("pipe.asdf", "FIFO"),
        ("adir.asdf", "directory"),
        ("sock.asdf", "socket"),
        ("/dev/zero", "device"),
    ] {
        let e = read(&l.dir, uri, ExternalFiles::Any).unwrap_err();
        assert!(e.contains(kind) && e.contains(uri), "{uri}: {e}");
    }
    // The same check for files opened directly.
    let e = AsdfFile::open(&fifo).unwrap_err().to_string();
    assert!(e.contains("FIFO") && e.contains("pipe.asdf"), "{e}");
}

#[test]
fn the_number_of_external_files_is_bounded() {
    let l = layout();
    for i in 0..5 {
        one_block(&l.dir.join(format!("e{i}.asdf")), &[i; 4]);
    }
    let arrays: String = (0..5)
        .chain([0, 1])
        .enumerate()
        .map(|(k, i)| {
            format!(
                "a{k}: !core/ndarray-1.1.0 {{source: e{i}.asdf, datatype: uint8, \
                 byteorder: little, shape: [4]}}\n"
            )
        })
        .collect();
    let main = l.dir.join("many.asdf");
    std::fs::write(
        &main,
        format!("#ASDF 1.0.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n{arrays}...\n"),
    )
    .unwrap();
    let options = OpenOptions {
        max_external_files: 3,
        ..Default::default()
    };
    let f = AsdfFile::open_with(&main, &options).unwrap();
    for k in 0..3 {
        assert_eq!(f.array::<u8>(&format!("/a{k}")).unwrap()[0], k as u8);
    }
    let e = f.array::<u8>("/a3").unwrap_err().to_string();
    assert!(
        e.contains("more than 3 external files") && e.contains("max_external_files"),
        "{e}"
    );
    // Files already opened are read again without counting twice.
    assert_eq!(f.array::<u8>("/a5").unwrap()[0], 0);
    assert_eq!(f.array::<u8>("/a6").unwrap()[0], 1);
    assert_eq!(OpenOptions::untrusted().max_external_files, 10_000);
}
