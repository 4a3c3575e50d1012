//! References and external arrays through the binary, run from another working directory:
//! resolved against the file that names them (a decoy in the working directory is never read),
//! within the external-file policy of the verb (`--trusted` to widen it), each external file
//! named on stderr, errors that never quote an unnamed file, special files refused.

use crate::common::*;

use std::path::Path;

use asdf_testkit::TempDir;

const HEAD: &str = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n";

fn asdf_text(path: &Path, body: &str) {
    std::fs::write(path, format!("{HEAD}{body}\n...\n")).unwrap();
}

/// Writes a one-block ASDF file holding `data` as a uint8 array at `/x`.
fn one_block(path: &Path, data: &[u8]) {
    let mut w = asdf::AsdfWriter::new();
    let node = w
        .add(
            &ndarray::Array1::from(data.to_vec()),
            &asdf::StoreOptions::default(),
        )
        .unwrap();
    w.write_path(
        path,
        asdf::yaml::Node::mapping([("x", node)]),
        &Default::default(),
    )
    .unwrap();
}

fn array_from(uri: &str) -> String {
    format!("x: !core/ndarray-1.1.0 {{source: {uri:?}, datatype: uint8, byteorder: little, shape: [4]}}")
}

/// `data/main.asdf` → `data/sub/a.asdf` → `data/sub/b.asdf` (relative at each step), and
/// decoys `b.asdf`, `sub/b.asdf`, `sub/a.asdf` in `cwd/`.
fn chain(tmp: &TempDir) -> (std::path::PathBuf, std::path::PathBuf) {
    let data = tmp.join("data");
    let cwd = tmp.join("cwd");
    for d in [data.join("sub"), cwd.join("sub")] {
        std::fs::create_dir_all(d).unwrap();
    }
    asdf_text(&data.join("main.asdf"), "r: {$ref: 'sub/a.asdf#/v'}");
    asdf_text(&data.join("sub/a.asdf"), "v: {$ref: 'b.asdf#/w'}");
    asdf_text(&data.join("sub/b.asdf"), "w: {value: real}");
    asdf_text(&data.join("expected.asdf"), "r: {value: real}");
    for decoy in ["b.asdf", "sub/b.asdf"] {
        asdf_text(&cwd.join(decoy), "w: {value: DECOY}");
    }
    asdf_text(&cwd.join("sub/a.asdf"), "v: {value: DECOY}");
    (data, cwd)
}

#[test]
fn references_resolve_against_the_file_that_contains_them() {
    let tmp = TempDir::new("cli-ref-chain");
    let (_, cwd) = chain(&tmp);
    let o = run_limited(
        &cwd,
        &["diff", "../data/main.asdf", "../data/expected.asdf"],
    );
    expect(&o, 0);
    assert!(!stdout(&o).contains("DECOY"), "{}", stdout(&o));
    // Each file of the chain is named once on stderr; the decoys never are.
    let err = stderr(&o);
    assert!(
        err.contains("data/sub/a.asdf") && err.contains("data/sub/b.asdf"),
        "{err}"
    );
    assert!(!err.contains("cwd/"), "{err}");
    let o = run_limited(&cwd, &["verify", "-v", "../data/main.asdf"]);
    expect(&o, 0);
    assert!(
        stdout(&o).contains("references: all resolved"),
        "{}",
        stdout(&o)
    );
    // Without the decoys, still the same (nothing depended on them).
    std::fs::remove_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    let o = run_limited(
        &cwd,
        &["diff", "-q", "../data/main.asdf", "../data/expected.asdf"],
    );
    expect(&o, 0);
    assert!(
        stderr(&o).is_empty(),
        "--quiet names no file: {}",
        stderr(&o)
    );
}

#[test]
fn external_arrays_resolve_against_the_file_from_elsewhere() {
    let tmp = TempDir::new("cli-ext-cwd");
    let (data, cwd) = chain(&tmp);
    one_block(&data.join("sub/arr.asdf"), &[1, 2, 3, 4]);
    one_block(&cwd.join("sub/arr.asdf"), &[6, 6, 6, 6]);
    asdf_text(&data.join("ext.asdf"), &array_from("sub/arr.asdf"));
    let o = run_limited(&cwd, &["convert", "../data/ext.asdf", "out.npy"]);
    expect(&o, 0);
    let o = run_limited(
        &cwd,
        &["diff", "out.npy", "../data/sub/arr.asdf", "--pointer", "/x"],
    );
    expect(&o, 0);
}

#[test]
fn files_outside_the_directory_need_trusted() {
    let tmp = TempDir::new("cli-ext-policy");
    let dir = tmp.join("dir");
    let outside = tmp.join("outside");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    one_block(&outside.join("far.asdf"), &[9, 9, 9, 9]);
    let far = outside.join("far.asdf");
    std::os::unix::fs::symlink(&far, dir.join("link.asdf")).unwrap();
    let uris = [
        "../outside/far.asdf".to_string(),
        far.to_str().unwrap().to_string(),
        format!("file://{}", far.to_str().unwrap()),
        "link.asdf".to_string(),
    ];
    for uri in &uris {
        asdf_text(&dir.join("main.asdf"), &array_from(uri));
        for verb in [&["verify"][..], &["convert"][..], &["to-yaml", "-o"][..]] {
            let mut args: Vec<String> = verb.iter().map(|s| s.to_string()).collect();
            args.insert(1, "dir/main.asdf".into());
            if verb[0] == "convert" {
                args.push("dir/out.npy".into());
            } else if verb[0] == "to-yaml" {
                args.push("dir/out.asdf".into());
            }
            let o = run_limited(tmp.path(), &args);
            expect_clean(&o, uri);
            assert_ne!(code(&o), 0, "{args:?} {uri}: {}", stderr(&o));
            let text = stdout(&o) + &stderr(&o);
            assert!(text.contains("or below"), "{args:?} {uri}: {text}");
            assert!(!text.contains("reading external file"), "{text}");
            args.insert(0, "--trusted".into());
            let o = run_limited(tmp.path(), &args);
            expect(&o, 0);
            assert!(
                stderr(&o).contains("reading external file"),
                "{}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn errors_never_quote_an_external_file() {
    let tmp = TempDir::new("cli-ext-quote");
    std::fs::write(
        tmp.join("passwd"),
        "root:x:0:0:SECRET-LINE:/root:/bin/bash\n",
    )
    .unwrap();
    asdf_text(&tmp.join("arr.asdf"), &array_from("passwd"));
    asdf_text(&tmp.join("ref.asdf"), "r: {$ref: 'passwd#/x'}");
    for args in [
        &["--trusted", "verify", "arr.asdf"][..],
        &["--trusted", "convert", "arr.asdf", "o.npy"][..],
        &["--trusted", "verify", "ref.asdf"][..],
        &["--trusted", "diff", "ref.asdf", "arr.asdf"][..],
    ] {
        let o = run_limited(tmp.path(), args);
        expect_clean(&o, &args.join(" "));
        let text = stdout(&o) + &stderr(&o);
        assert!(
            !text.contains("SECRET") && !text.contains("root:x"),
            "{args:?}: {text}"
        );
    }
}

#[test]
fn special_files_are_refused_without_blocking() {
    let tmp = TempDir::new("cli-special");
    let fifo = tmp.join("pipe.asdf");
    let ok = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(ok.success());
    std::fs::create_dir(tmp.join("adir.asdf")).unwrap();
    asdf_text(&tmp.join("arr.asdf"), &array_from("pipe.asdf"));
    asdf_text(&tmp.join("ref.asdf"), "r: {$ref: 'pipe.asdf#/x'}");
    asdf_text(&tmp.join("dref.asdf"), "r: {$ref: 'adir.asdf'}");
    let runs: &[(&[&str], &str)] = &[
        (&["info", "pipe.asdf"], "FIFO"),
        (&["verify", "pipe.asdf"], "FIFO"),
        (&["diff", "pipe.asdf", "pipe.asdf"], "FIFO"),
        (&["convert", "pipe.asdf", "o.npy"], "FIFO"),
        (&["validate", "pipe.asdf"], "FIFO"),
        (&["awkward", "to-json", "pipe.asdf"], "FIFO"),
        (&["info", "adir.asdf"], "directory"),
        (&["info", "/dev/zero"], "device"),
        (&["verify", "arr.asdf"], "FIFO"),
        (&["verify", "ref.asdf"], "FIFO"),
        (&["verify", "dref.asdf"], "directory"),
    ];
    for (args, kind) in runs {
        let o = run_limited(tmp.path(), args);
        expect_clean(&o, &args.join(" "));
        assert_ne!(code(&o), 0);
        let text = stdout(&o) + &stderr(&o);
        assert!(text.contains(kind), "{args:?}: {text}");
    }
}

#[test]
fn help_documents_the_trust_flags() {
    let o = run(&["--help"]);
    expect(&o, 0);
    let text = stdout(&o);
    for needle in ["--untrusted", "--trusted", "external files", "1 GiB"] {
        assert!(text.contains(needle), "--help lacks {needle}:\n{text}");
    }
    let o = run(&["--trusted", "--untrusted", "tags"]);
    expect(&o, 2);
}

#[test]
fn inspecting_verbs_are_untrusted_by_default_and_writers_are_not() {
    // 200 aliases of a 1 000-item list: 200 000 nodes, over untrusted()'s 100 000 and under
    // the default 1 000 000.
    let tmp = TempDir::new("cli-trust");
    let items = vec!["1"; 1000].join(", ");
    let aliases = vec!["*a"; 200].join(", ");
    asdf_text(
        &tmp.join("many.asdf"),
        &format!("base: &a [{items}]\nuses: [{aliases}]"),
    );
    let untrusted = ["info", "verify", "search", "diff"];
    for verb in untrusted {
        let mut args = vec![verb, "many.asdf"];
        if verb == "diff" {
            args.push("many.asdf");
        }
        let o = run_limited(tmp.path(), &args);
        expect(&o, 1);
        assert!(stderr(&o).contains("100000"), "{verb}: {}", stderr(&o));
        args.insert(0, "--trusted");
        let o = run_limited(tmp.path(), &args);
        assert_ne!(code(&o), 1, "--trusted {verb}: {}", stderr(&o));
    }
    let o = run_limited(tmp.path(), &["to-yaml", "many.asdf", "-o", "out.asdf"]);
    expect(&o, 0);
    let o = run_limited(
        tmp.path(),
        &["--untrusted", "to-yaml", "many.asdf", "-o", "out.asdf"],
    );
    expect(&o, 1);
}
