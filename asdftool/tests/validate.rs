//! `asdftool validate`, and `awkward to-json` on awkward arrays stored inside ASDF files.

use crate::common::*;

use asdf_testkit::TempDir;

const BROKEN: &str = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
asdf_library: !core/software-1.0.0 {name: hand}\n\
a: !core/ndarray-1.1.0 {data: [1, 2, 3], datatype: float99, shape: [3]}\n...\n";

#[test]
fn validate_reference_files_and_broken_trees() {
    let tmp = TempDir::new("tool-validate");
    let broken = tmp.join("broken.asdf");
    std::fs::write(&broken, BROKEN).unwrap();
    // Built-in checks need no schema files.
    let o = run(&["validate", "--builtin-only", p(&reference("basic.asdf"))]);
    expect(&o, 0);
    assert!(stdout(&o).contains("valid"));
    let o = run(&["validate", "--builtin-only", p(&broken)]);
    expect(&o, 1);
    let text = stdout(&o);
    assert!(
        text.contains("/asdf_library") && text.contains("/a/datatype"),
        "{text}"
    );
    let o = run(&["validate", p(&tmp.join("missing.asdf"))]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    // With the asdf-standard schemas of the interop environment.
    let py = asdf_testkit::require_python!();
    for name in ["basic", "complex", "structured", "stream"] {
        let o = run(&[
            "validate",
            "--python",
            p(&py),
            p(&reference(&format!("{name}.asdf"))),
        ]);
        expect(&o, 0);
    }
    let o = run(&["validate", "--python", p(&py), p(&broken)]);
    expect(&o, 1);
    assert!(stdout(&o).contains("/asdf_library"), "{}", stdout(&o));
}

#[test]
fn awkward_arrays_inside_asdf_files() {
    let tmp = TempDir::new("tool-awk-asdf");
    let path = tmp.join("events.asdf");
    let jets =
        asdf_awkward::Layout::from_json(&serde_json::json!([[1.5, 2.5], [], [3.5]])).unwrap();
    let names = asdf_awkward::Layout::from_json(&serde_json::json!(["a", "bc"])).unwrap();
    let mut w = asdf::AsdfWriter::new();
    let store = asdf::StoreOptions::compressed("zstd").unwrap();
    let tree = asdf::yaml::Node::mapping([
        (
            "jets",
            asdf_awkward::to_asdf(&jets, &mut w, &store).unwrap(),
        ),
        (
            "names",
            asdf_awkward::to_asdf(&names, &mut w, &store).unwrap(),
        ),
    ]);
    w.write_path(&path, tree, &Default::default()).unwrap();
    let o = run(&["awkward", "to-json", p(&path), "--name", "jets"]);
    expect(&o, 0);
    assert_eq!(stdout(&o).trim(), "[[1.5,2.5],[],[3.5]]");
    let o = run(&["awkward", "to-json", p(&path), "--name", "/names"]);
    expect(&o, 0);
    assert_eq!(stdout(&o).trim(), r#"["a","bc"]"#);
    let o = run(&["awkward", "to-json", p(&path)]);
    assert_eq!(code(&o), 2, "several arrays need --name");
    assert!(
        stderr(&o).contains("/jets") && stderr(&o).contains("/names"),
        "{}",
        stderr(&o)
    );
    let o = run(&["awkward", "to-json", p(&reference("basic.asdf"))]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
}

#[test]
fn validate_says_valid_only_about_asdf_files_it_checked() {
    let tmp = TempDir::new("tool-validate-honest");
    let cases: [(&str, &[u8]); 3] = [
        ("empty.asdf", b""),
        ("hello.asdf", b"hello\n"),
        ("fake.asdf", b"not actually an ASDF file\n"),
    ];
    for (name, bytes) in cases {
        let f = tmp.join(name);
        std::fs::write(&f, bytes).unwrap();
        for extra in [&[][..], &["--builtin-only"][..]] {
            let mut args = vec!["validate"];
            args.extend(extra);
            args.push(p(&f));
            let o = run(&args);
            expect(&o, 1);
            assert!(!stdout(&o).contains("valid"), "{name}: {}", stdout(&o));
        }
    }
    // A file every other verb rejects: its only block runs past the end of the file.
    let cut = tmp.join("cut.asdf");
    let sample =
        std::fs::read(asdf_testkit::workspace_root().join("examples/data/sample.asdf")).unwrap();
    let first = sample.windows(4).position(|w| w == b"\xd3BLK").unwrap();
    std::fs::write(&cut, &sample[..first + 70]).unwrap();
    expect(&run(&["info", p(&cut)]), 1);
    let o = run(&["validate", "--builtin-only", p(&cut)]);
    expect(&o, 1);
    assert!(!stdout(&o).contains("valid"), "{}", stdout(&o));
    // Blocks and no tree: valid (Python and every other verb read it).
    let blocks_only = tmp.join("blocks.asdf");
    let head = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n";
    let opts = asdf::block::WriteOptions::default();
    let mut w = asdf::block::BlockWriter::new(head.to_vec(), head.len() as u64, opts);
    w.write_data(b"some bytes", asdf::block::Label::NONE, &Default::default())
        .unwrap();
    std::fs::write(&blocks_only, w.finish().unwrap()).unwrap();
    expect(&run(&["verify", p(&blocks_only)]), 0);
    let o = run(&["validate", "--builtin-only", p(&blocks_only)]);
    expect(&o, 0);
    assert!(stdout(&o).contains(": valid"), "{}", stdout(&o));
}

#[test]
fn validate_says_when_only_the_builtin_checks_ran() {
    let tmp = TempDir::new("tool-validate-builtin");
    let basic = reference("basic.asdf");
    let o = run(&["validate", "--builtin-only", p(&basic)]);
    expect(&o, 0);
    assert!(
        stdout(&o).contains("only the built-in checks"),
        "{}",
        stdout(&o)
    );
    // No schema anywhere: an empty schema directory, no ASDF_SCHEMA_PATH schemas, no Python.
    let empty = tmp.join("schemas");
    std::fs::create_dir_all(&empty).unwrap();
    let o = run_env(
        &["validate", "--schemas", p(&empty), p(&basic)],
        &[
            ("ASDF_SCHEMA_PATH", p(&empty)),
            ("ASDF_PYTHON", "/nonexistent/python"),
        ],
    );
    expect(&o, 0);
    assert!(
        stdout(&o).contains("no schema files were found"),
        "{}",
        stdout(&o)
    );
    // With the asdf-standard schemas, plain "valid".
    let py = asdf_testkit::require_python!();
    let o = run(&["validate", "--python", p(&py), p(&basic)]);
    expect(&o, 0);
    assert!(!stdout(&o).contains("only the built-in"), "{}", stdout(&o));
}

#[test]
fn validate_reports_every_file_and_exits_with_the_worst() {
    let tmp = TempDir::new("tool-validate-many");
    let broken = tmp.join("broken.asdf");
    std::fs::write(&broken, BROKEN).unwrap();
    let basic = reference("basic.asdf");
    let complex = reference("complex.asdf");
    let missing = tmp.join("missing.asdf");
    let o = run(&["validate", "--builtin-only", p(&basic), p(&complex)]);
    expect(&o, 0);
    for f in [&basic, &complex] {
        assert!(stdout(&o).contains(&format!("{}: valid", f.display())));
    }
    // An invalid file among valid ones: every file is still reported, the status is 1.
    let o = run(&["validate", "--builtin-only", p(&broken), p(&basic)]);
    expect(&o, 1);
    let text = stdout(&o);
    assert!(text.contains("/a/datatype"), "{text}");
    assert!(
        text.contains(&format!("{}: valid", basic.display())),
        "{text}"
    );
    // A file that cannot be read: the others are reported, the error named, the status 2.
    let o = run(&[
        "validate",
        "--builtin-only",
        p(&missing),
        p(&broken),
        p(&basic),
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("missing.asdf"), "{}", stderr(&o));
    assert!(stdout(&o).contains("/a/datatype"), "{}", stdout(&o));
    assert!(stdout(&o).contains(&format!("{}: valid", basic.display())));
    // No file at all is a usage error.
    assert_eq!(code(&run(&["validate"])), 2);
}

#[test]
fn a_custom_schema_is_loaded_once_and_checks_every_file() {
    let tmp = TempDir::new("tool-validate-custom");
    let schema = tmp.join("needs-history.yaml");
    std::fs::write(
        &schema,
        "%YAML 1.1\n---\n$schema: http://json-schema.org/draft-04/schema\n\
         type: object\nrequired: [history_of_this_test]\n...\n",
    )
    .unwrap();
    let files = [reference("basic.asdf"), reference("complex.asdf")];
    let o = run_env(
        &[
            "validate",
            "--schema",
            p(&schema),
            p(&files[0]),
            p(&files[1]),
        ],
        &[("ASDF_PYTHON", "/nonexistent/python")],
    );
    expect(&o, 1);
    let text = stdout(&o);
    assert_eq!(text.matches("history_of_this_test").count(), 2, "{text}");
    // A custom schema that cannot be read stops before any file: a usage error.
    let o = run(&[
        "validate",
        "--schema",
        p(&tmp.join("nope.yaml")),
        p(&files[0]),
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("nope.yaml"), "{}", stderr(&o));
}
