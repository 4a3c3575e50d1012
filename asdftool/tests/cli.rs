//! The verbs through the built binary, on the shared corpus.

use crate::common::*;

use asdf_testkit::TempDir;

const REFERENCE_NAMES: &[&str] = &[
    "anchor",
    "ascii",
    "basic",
    "complex",
    "compressed",
    "endian",
    "exploded",
    "float",
    "int",
    "scalars",
    "shared",
    "stream",
    "structured",
    "unicode_bmp",
    "unicode_spp",
];

#[test]
fn help_lists_every_verb() {
    let o = run(&["--help"]);
    expect(&o, 0);
    let text = stdout(&o);
    for verb in [
        "info",
        "verify",
        "to-yaml",
        "defragment",
        "explode",
        "implode",
        "diff",
        "convert",
        "edit",
        "search",
        "tags",
        "extensions",
        "awkward",
        "validate",
    ] {
        assert!(text.contains(verb), "--help lacks {verb}:\n{text}");
    }
    for verb in [
        "info",
        "verify",
        "to-yaml",
        "to_yaml",
        "defragment",
        "diff",
        "convert",
        "edit",
        "search",
    ] {
        let o = run(&[verb, "--help"]);
        expect(&o, 0);
        assert!(stdout(&o).contains("Usage"), "{verb} --help");
    }
    let o = run(&["awkward", "from-json", "--help"]);
    expect(&o, 0);
}

#[test]
fn usage_errors_exit_2() {
    expect(&run(&["no-such-verb"]), 2);
    expect(&run(&["info"]), 2);
    let o = run(&["info", "/nonexistent/file.asdf"]);
    expect(&o, 2);
    assert!(stderr(&o).contains("/nonexistent/file.asdf"));
    let basic = reference("basic.asdf");
    let t = TempDir::new("asdftool-usage");
    let o = run(&[
        "defragment",
        p(&basic),
        "-o",
        p(&t.join("x.asdf")),
        "-c",
        "nope",
    ]);
    expect(&o, 2);
    assert!(stderr(&o).contains("nope"));
    let o = run(&["convert", p(&basic), p(&t.join("x.txt"))]);
    expect(&o, 2);
    assert!(!t.join("x.txt").exists());
    let o = run(&[
        "convert",
        p(&basic),
        p(&t.join("x.npy")),
        "--pointer",
        "/nothing",
    ]);
    expect(&o, 2);
    assert!(stderr(&o).contains("/nothing"));
    let o = run(&["search", p(&basic), "--key", "("]);
    expect(&o, 2);
}

#[test]
fn info_renders_tree_arrays_and_blocks() {
    let o = run(&["info", p(&reference("compressed.asdf")), "--show-blocks"]);
    expect(&o, 0);
    let text = stdout(&o);
    assert!(text.starts_with("root (core/asdf-1.1.0)\n"), "{text}");
    assert!(text.contains("├─asdf_library (core/software-1.0.0)"));
    assert!(text.contains("│ ├─author (str): The ASDF Developers"));
    assert!(
        text.contains("└─zlib (core/ndarray-1.1.0): shape [128], int64, little, block 0 (zlib)"),
        "{text}"
    );
    assert!(text.contains("bzp2"));
    assert!(text.contains("block index at byte 1302"));
    assert!(text.contains("7f1a85bed4cf6d03b940e3d7f95dbc5a"));
    assert!(text.contains("    0          757"));

    let text = stdout(&run(&[
        "info",
        p(&reference("stream.asdf")),
        "--show-blocks",
    ]));
    assert!(
        text.contains("shape ['*', 8], float64, little, streamed block -1"),
        "{text}"
    );
    assert!(text.contains("0x00000001 (streamed)"));
    let text = stdout(&run(&["info", p(&reference("shared.asdf"))]));
    assert!(text.contains("view (offset 8, strides [16])"), "{text}");
    let text = stdout(&run(&["info", p(&reference("exploded.asdf"))]));
    assert!(text.contains("external exploded0000.asdf"), "{text}");

    let o = run(&["info", p(&reference("complex.asdf")), "--max-rows", "3"]);
    expect(&o, 0);
    let text = stdout(&o);
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(text.contains("Some nodes not shown"));
}

#[test]
fn info_json_is_machine_readable() {
    let o = run(&["info", "--json", p(&reference("compressed.asdf"))]);
    expect(&o, 0);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["format"], "asdf");
    assert_eq!(j["asdf_standard"], "1.6.0");
    assert_eq!(j["tree"]["asdf_library"]["name"], "asdf");
    assert_eq!(j["blocks"][0]["compression"], "zlib");
    assert_eq!(j["blocks"][1]["offset"], 1022);
    assert_eq!(j["blocks"][0]["data_size"], 1024);
    let arrays = j["arrays"].as_array().unwrap();
    assert_eq!(arrays.len(), 2);
    assert_eq!(arrays[1]["pointer"], "/zlib");
    assert_eq!(arrays[1]["compression"], "zlib");
    assert_eq!(arrays[1]["shape"], serde_json::json!([128]));
}

#[test]
fn verify_accepts_every_reference_file() {
    for version in ["1.0.0", "1.3.0", "1.6.0"] {
        for name in REFERENCE_NAMES {
            let f = asdf_testkit::corpus_file(&format!(
                "asdf-standard/reference_files/{version}/{name}.asdf"
            ));
            let o = run(&["verify", p(&f)]);
            expect(&o, 0);
            assert!(stdout(&o).contains("OK:"));
        }
    }
    let o = run(&["verify", "-v", p(&reference("compressed.asdf"))]);
    expect(&o, 0);
    let text = stdout(&o);
    assert!(text.contains("legacy convention"), "{text}");
    assert!(text.contains("array /zlib: shape [128], int64"));
}

#[test]
fn verify_reports_a_bad_checksum_with_block_and_offset() {
    let t = TempDir::new("asdftool-verify");
    let mut bytes = std::fs::read(reference("basic.asdf")).unwrap();
    // The data of the only block (64 bytes at 664+54) gets one byte changed.
    bytes[664 + 54 + 3] ^= 0x40;
    let f = t.join("bad.asdf");
    std::fs::write(&f, &bytes).unwrap();
    let o = run(&["verify", p(&f)]);
    expect(&o, 1);
    let text = stdout(&o);
    assert!(text.contains("FAILED block 0 at byte 664"), "{text}");
    assert!(text.to_lowercase().contains("checksum"), "{text}");
    // info still works on it: the tree is fine.
    expect(&run(&["info", p(&f)]), 0);
    // A missing external file is a failure too.
    let d = t.join("exploded.asdf");
    std::fs::copy(reference("exploded.asdf"), &d).unwrap();
    let o = run(&["verify", p(&d)]);
    expect(&o, 1);
    assert!(stdout(&o).contains("exploded0000.asdf"));
}

#[test]
fn invalid_files_exit_1_with_a_message() {
    let t = TempDir::new("asdftool-invalid");
    let cases: &[(&str, &[u8])] = &[
        ("empty.asdf", b""),
        ("text.asdf", b"hello world\n"),
        ("version.asdf", b"#ASDF 2.0.0\n"),
        ("noend.asdf", b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: 1}\n"),
        ("badyaml.asdf", b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: [1\n...\n"),
        ("short.npy", b"\x93NUMPY\x01\x00\x76\x00{'descr': '<f8'"),
        ("short.ra", b"rawarray\x00\x00"),
    ];
    for (name, bytes) in cases {
        let f = t.join(name);
        std::fs::write(&f, bytes).unwrap();
        for verb in ["info", "verify"] {
            let o = run(&[verb, p(&f)]);
            expect(&o, 1);
            assert!(stderr(&o).contains(name), "{verb} {name}: {}", stderr(&o));
        }
    }
}

#[test]
fn to_yaml_inlines_every_array_and_matches_the_twin() {
    let t = TempDir::new("asdftool-to-yaml");
    for name in REFERENCE_NAMES {
        let out = t.join(&format!("{name}.yaml"));
        let o = run(&[
            "to_yaml",
            p(&reference(&format!("{name}.asdf"))),
            "-o",
            p(&out),
        ]);
        expect(&o, 0);
        let f = asdf::AsdfFile::open(&out).unwrap();
        assert!(f.blocks().is_empty(), "{name} kept blocks");
        // Same content as the reference file's own YAML twin.
        expect(
            &run(&["diff", p(&out), p(&reference(&format!("{name}.yaml")))]),
            0,
        );
    }
    let text = std::fs::read_to_string(t.join("anchor.yaml")).unwrap();
    assert!(
        text.contains("a: &id001") && text.contains("b: *id001"),
        "{text}"
    );
}

#[test]
fn defragment_with_every_codec_keeps_the_content() {
    let t = TempDir::new("asdftool-defrag");
    for name in [
        "complex",
        "compressed",
        "shared",
        "stream",
        "structured",
        "anchor",
        "int",
    ] {
        let input = reference(&format!("{name}.asdf"));
        for codec in ["none", "zlib", "bzp2", "lz4", "lz4f", "zstd", "blsc", "xz"] {
            let out = t.join(&format!("{name}-{codec}.asdf"));
            let o = run(&["defragment", p(&input), "-o", p(&out), "-c", codec, "-q"]);
            expect(&o, 0);
            expect(&run(&["diff", p(&input), p(&out)]), 0);
            expect(&run(&["verify", p(&out)]), 0);
            let f = asdf::AsdfFile::open(&out).unwrap();
            for b in f.blocks().blocks() {
                // The block layer stores a block raw when compressing does not make it smaller.
                let label = b.header.compression.to_string();
                assert!(label == codec || label == "none", "{name} {codec}: {label}");
                if name == "compressed" {
                    assert_eq!(
                        label, codec,
                        "arange(128) int64 compresses with every codec"
                    );
                }
                assert_eq!(
                    b.header.allocated_size, b.header.used_size,
                    "no unused space"
                );
                assert!(!b.header.is_streamed());
            }
        }
    }
    // Views no longer share a block: each array has its own contiguous one.
    let f = asdf::AsdfFile::open(t.join("shared-none.asdf")).unwrap();
    assert_eq!(f.blocks().len(), 2);
    assert!(f.pointer("/subset/strides").is_none());
    // Level is accepted.
    let out = t.join("lvl.asdf");
    expect(
        &run(&[
            "defragment",
            p(&reference("basic.asdf")),
            "-o",
            p(&out),
            "-c",
            "zstd",
            "--level",
            "19",
        ]),
        0,
    );
    expect(&run(&["diff", p(&reference("basic.asdf")), p(&out)]), 0);
}

#[test]
fn explode_and_implode_round_trip() {
    let t = TempDir::new("asdftool-explode");
    let src = reference("float.asdf");
    let ex = t.join("ex.asdf");
    let o = run(&["explode", p(&src), "-o", p(&ex)]);
    expect(&o, 0);
    for i in 0..4 {
        assert!(t.join(&format!("ex{i:04}.asdf")).exists());
    }
    let f = asdf::AsdfFile::open(&ex).unwrap();
    assert!(f.blocks().is_empty());
    expect(&run(&["diff", p(&src), p(&ex)]), 0);
    expect(&run(&["verify", p(&ex)]), 0);
    let im = t.join("im.asdf");
    expect(&run(&["implode", p(&ex), "-o", p(&im)]), 0);
    let f = asdf::AsdfFile::open(&im).unwrap();
    assert_eq!(f.blocks().len(), 4);
    expect(&run(&["diff", p(&src), p(&im)]), 0);
    // The reference exploded file implodes to one block.
    let im2 = t.join("im2.asdf");
    expect(
        &run(&["implode", p(&reference("exploded.asdf")), "-o", p(&im2)]),
        0,
    );
    assert_eq!(asdf::AsdfFile::open(&im2).unwrap().blocks().len(), 1);
    expect(&run(&["diff", p(&reference("basic.asdf")), p(&im2)]), 0);
}

#[test]
fn diff_reports_each_difference_with_its_pointer() {
    let a = reference("float.asdf");
    let o = run(&["diff", p(&a), p(&a)]);
    expect(&o, 0);
    assert!(stdout(&o).is_empty());
    // All reference twins, all versions: equal.
    for version in ["1.1.0", "1.6.0"] {
        for name in REFERENCE_NAMES {
            let base = asdf_testkit::corpus_file(&format!(
                "asdf-standard/reference_files/{version}/{name}"
            ));
            let o = run(&[
                "diff",
                &format!("{}.asdf", base.display()),
                &format!("{}.yaml", base.display()),
            ]);
            expect(&o, 0);
        }
    }
    // Different files: each difference named.
    let o = run(&[
        "diff",
        p(&reference("basic.asdf")),
        p(&reference("endian.asdf")),
    ]);
    expect(&o, 1);
    let text = stdout(&o);
    assert!(text.contains("/data: only in the first file"), "{text}");
    assert!(text.contains("/big: only in the second file"), "{text}");
    let o = run(&[
        "diff",
        p(&reference("scalars.asdf")),
        p(&reference("anchor.asdf")),
    ]);
    expect(&o, 1);
    // Metadata differs between versions (asdf_library): only with -m.
    let v0 = asdf_testkit::corpus_file("asdf-standard/reference_files/1.0.0/basic.asdf");
    expect(&run(&["diff", p(&v0), p(&reference("basic.asdf"))]), 0);
    let o = run(&["diff", "-m", p(&v0), p(&reference("basic.asdf"))]);
    expect(&o, 1);
    assert!(stdout(&o).contains("/asdf_library"), "{}", stdout(&o));
}

#[test]
fn diff_sees_a_changed_array_value_and_tag() {
    let t = TempDir::new("asdftool-diff");
    let text = std::fs::read_to_string(reference("scalars.yaml")).unwrap();
    let changed = text.replace("int: 42", "int: 43");
    assert_ne!(changed, text);
    let f = t.join("s.yaml");
    std::fs::write(&f, changed).unwrap();
    let o = run(&["diff", p(&reference("scalars.asdf")), p(&f)]);
    expect(&o, 1);
    assert!(
        stdout(&o).contains("/int: \"42\" != \"43\""),
        "{}",
        stdout(&o)
    );

    let basic = std::fs::read_to_string(reference("basic.yaml")).unwrap();
    let changed = basic.replace(
        "data: [0, 1, 2, 3, 4, 5, 6, 7]",
        "data: [0, 1, 2, 3, 4, 5, 6, 9]",
    );
    assert_ne!(changed, basic, "{basic}");
    let f = t.join("b.yaml");
    std::fs::write(&f, changed).unwrap();
    let o = run(&["diff", p(&reference("basic.asdf")), p(&f)]);
    expect(&o, 1);
    assert!(
        stdout(&o).contains("/data: array values differ"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn diff_compares_bytes_and_leaves_checksums_to_verify() {
    let t = TempDir::new("asdftool-diff-md5");
    let orig = std::fs::read(reference("basic.asdf")).unwrap();
    let block = orig.windows(4).position(|w| w == b"\xd3BLK").unwrap();
    // The stored MD5 (header bytes 38..54 after the magic's start) made wrong, the data kept.
    let mut bad_md5 = orig.clone();
    bad_md5[block + 40] ^= 0xff;
    let f = t.join("bad-md5.asdf");
    std::fs::write(&f, &bad_md5).unwrap();
    assert_ne!(
        code(&run(&["verify", p(&f)])),
        0,
        "verify must see the checksum"
    );
    expect(&run(&["diff", p(&reference("basic.asdf")), p(&f)]), 0);
    // A changed data byte (its checksum now wrong too) is a difference in the values.
    let mut bad_data = orig.clone();
    let header = u16::from_be_bytes([orig[block + 4], orig[block + 5]]) as usize;
    bad_data[block + 6 + header] ^= 0x01;
    let g = t.join("bad-data.asdf");
    std::fs::write(&g, &bad_data).unwrap();
    let o = run(&["diff", p(&reference("basic.asdf")), p(&g)]);
    expect(&o, 1);
    assert!(
        stdout(&o).contains("/data: array values differ"),
        "{}",
        stdout(&o)
    );
}

/// `--no-sync` changes when outputs reach the disk, not what they hold: each verb that writes
/// gives the same bytes with and without it, replacing an earlier output included.
#[test]
fn no_sync_outputs_equal_synced_ones() {
    let t = TempDir::new("asdftool-no-sync");
    let src = reference("basic.asdf");
    let outputs = ["x.npy", "x.ra", "x.asdf"];
    for (dir, flag) in [("synced", None), ("relaxed", Some("--no-sync"))] {
        let d = t.join(dir);
        std::fs::create_dir_all(&d).unwrap();
        for _ in 0..2 {
            for name in outputs {
                let mut args = vec!["convert", p(&src)];
                let out = d.join(name);
                args.extend([p(&out), "--pointer", "/data"]);
                args.extend(flag);
                expect(&run(&args), 0);
            }
            let defrag = d.join("defrag.asdf");
            let mut args = vec!["defragment", p(&src), "--output", p(&defrag)];
            args.extend(flag);
            expect(&run(&args), 0);
        }
    }
    for name in outputs.into_iter().chain(["defrag.asdf"]) {
        let a = std::fs::read(t.join("synced").join(name)).unwrap();
        let b = std::fs::read(t.join("relaxed").join(name)).unwrap();
        assert!(a == b && !a.is_empty(), "{name} differs");
    }
    let names: Vec<_> = std::fs::read_dir(t.join("relaxed"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
}

#[test]
fn convert_between_asdf_ra_and_npy() {
    let t = TempDir::new("asdftool-convert");
    for (name, ptr) in [
        ("basic", "/data"),
        ("complex", "/datatype>c16"),
        ("float", "/datatype>f4"),
        ("int", "/datatype<u2"),
    ] {
        let src = reference(&format!("{name}.asdf"));
        let npy = t.join(&format!("{name}.npy"));
        let ra = t.join(&format!("{name}.ra"));
        expect(&run(&["convert", p(&src), p(&npy), "--pointer", ptr]), 0);
        expect(&run(&["convert", p(&npy), p(&ra)]), 0);
        expect(&run(&["diff", p(&src), p(&npy), "--pointer", ptr]), 0);
        expect(&run(&["diff", p(&ra), p(&src), "--pointer", ptr]), 0);
        expect(&run(&["diff", p(&ra), p(&npy)]), 0);
        let back = t.join(&format!("{name}-back.asdf"));
        expect(&run(&["convert", p(&ra), p(&back), "-c", "lz4"]), 0);
        let f = asdf::AsdfFile::open(&back).unwrap();
        assert!(f.pointer("/data").is_some());
        expect(&run(&["diff", p(&back), p(&npy)]), 0);
        expect(&run(&["info", p(&ra)]), 0);
        expect(&run(&["info", "--json", p(&npy)]), 0);
        expect(&run(&["verify", p(&ra)]), 0);
    }
    // Strings go to .npy (not to .ra), with a clear message.
    let src = reference("unicode_bmp.asdf");
    expect(
        &run(&[
            "convert",
            p(&src),
            p(&t.join("u.npy")),
            "--pointer",
            "/datatype<U",
        ]),
        0,
    );
    let o = run(&[
        "convert",
        p(&src),
        p(&t.join("u.ra")),
        "--pointer",
        "/datatype<U",
    ]);
    expect(&o, 2);
    assert!(stderr(&o).contains("RawArray"), "{}", stderr(&o));
    // Several arrays and no /data: the pointer is required.
    let o = run(&["convert", p(&reference("float.asdf")), p(&t.join("f.npy"))]);
    expect(&o, 2);
    assert!(stderr(&o).contains("--pointer"));
    // ASDF to ASDF is a rewrite.
    let out = t.join("c.asdf");
    expect(
        &run(&[
            "convert",
            p(&reference("complex.asdf")),
            p(&out),
            "-c",
            "zstd",
        ]),
        0,
    );
    expect(&run(&["diff", p(&out), p(&reference("complex.asdf"))]), 0);
}

#[test]
fn convert_rawarray_corpus_files() {
    let dir = asdf_testkit::corpus_file("rawarray/generated/synthesized");
    let mut n = 0;
    let t = TempDir::new("asdftool-ra");
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().and_then(|x| x.to_str()) != Some("ra") {
            continue;
        }
        let o = run(&["info", p(&path)]);
        assert!(
            matches!(code(&o), 0 | 1),
            "{}: {}",
            path.display(),
            stderr(&o)
        );
        if code(&o) != 0 {
            assert!(!stderr(&o).is_empty());
            continue;
        }
        let out = t.join("x.asdf");
        let o = run(&["convert", p(&path), p(&out)]);
        assert!(matches!(code(&o), 0..=2), "{}", stderr(&o));
        if code(&o) == 0 {
            expect(&run(&["diff", p(&path), p(&out)]), 0);
            n += 1;
        }
    }
    assert!(n >= 5, "only {n} RawArray files converted");
}

#[test]
fn edit_in_place_rewrite_and_refusal() {
    let t = TempDir::new("asdftool-edit");
    let f = t.join("e.asdf");
    std::fs::copy(reference("basic.asdf"), &f).unwrap();
    let before = std::fs::read(&f).unwrap();
    // Same length: in place.
    let o = run_env(&["edit", p(&f)], &[("EDITOR", "sed -i -e s/4.1.0/4.1.9/")]);
    expect(&o, 0);
    assert!(stderr(&o).contains("in place"), "{}", stderr(&o));
    let after = std::fs::read(&f).unwrap();
    assert_eq!(after.len(), before.len());
    let file = asdf::AsdfFile::open(&f).unwrap();
    assert_eq!(
        file.pointer("/asdf_library/version").unwrap().as_str(),
        Some("4.1.9")
    );
    // Longer: rewritten, blocks moved, index updated.
    let o = run_env(
        &["edit", p(&f)],
        &[("EDITOR", "sed -i -e s/author:/author_with_a_longer_name:/")],
    );
    expect(&o, 0);
    assert!(stderr(&o).contains("rewritten"), "{}", stderr(&o));
    expect(&run(&["verify", p(&f)]), 0);
    let file = asdf::AsdfFile::open(&f).unwrap();
    assert!(file
        .pointer("/asdf_library/author_with_a_longer_name")
        .is_some());
    assert!(file.warnings().is_empty(), "{:?}", file.warnings());
    assert_eq!(
        file.array::<i64>("/data")
            .unwrap()
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        (0..8).collect::<Vec<_>>()
    );
    // Shorter: in place, NUL padding.
    let o = run_env(
        &["edit", p(&f)],
        &[("EDITOR", "sed -i -e s/author_with_a_longer_name:/a:/")],
    );
    expect(&o, 0);
    assert!(stderr(&o).contains("in place"));
    expect(&run(&["verify", p(&f)]), 0);
    // Invalid YAML: refused, file unchanged.
    let good = std::fs::read(&f).unwrap();
    let o = run_env(
        &["edit", p(&f)],
        &[("EDITOR", "sed -i -e s/name:/name:\\ [/")],
    );
    expect(&o, 1);
    assert!(stderr(&o).contains("unchanged"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&f).unwrap(), good);
    // A failing editor: usage error, file unchanged.
    let o = run_env(&["edit", p(&f)], &[("EDITOR", "false")]);
    expect(&o, 2);
    assert_eq!(std::fs::read(&f).unwrap(), good);
    // No change.
    let o = run_env(&["edit", p(&f)], &[("EDITOR", "true")]);
    expect(&o, 0);
    assert!(stderr(&o).contains("no changes"));
    // A file without blocks grows.
    let s = t.join("s.asdf");
    std::fs::copy(reference("scalars.asdf"), &s).unwrap();
    expect(
        &run_env(
            &["edit", p(&s)],
            &[("EDITOR", "sed -i -e s/string:\\ foo/string:\\ foobar/")],
        ),
        0,
    );
    let file = asdf::AsdfFile::open(&s).unwrap();
    assert_eq!(file.pointer("/string").unwrap().as_str(), Some("foobar"));
}

#[test]
fn search_prints_matching_pointers() {
    let f = reference("complex.asdf");
    let o = run(&["search", p(&f), "--key", "c16$"]);
    expect(&o, 0);
    assert_eq!(stdout(&o), "/datatype<c16\n/datatype>c16\n");
    let o = run(&["search", p(&f), "--type", "ndarray"]);
    assert_eq!(stdout(&o).lines().count(), 4);
    let o = run(&["search", p(&reference("scalars.asdf")), "--value", "3.14"]);
    assert_eq!(stdout(&o), "/float\n");
    let o = run(&[
        "search",
        p(&reference("scalars.asdf")),
        "--type",
        "str",
        "--key",
        "^name$",
    ]);
    assert_eq!(stdout(&o), "/asdf_library/name\n/history/extensions/0/manifest_software/name\n/history/extensions/0/software/name\n");
    let o = run(&[
        "search",
        p(&reference("scalars.asdf")),
        "--value",
        "nothing-like-this",
    ]);
    expect(&o, 1);
    assert!(stdout(&o).is_empty());
    let o = run(&["search", p(&f), "--type", "software"]);
    expect(&o, 0);
    assert!(stdout(&o).starts_with("/asdf_library\n"));
}

#[test]
fn tags_and_extensions() {
    let o = run(&["tags"]);
    expect(&o, 0);
    assert!(stdout(&o).contains("tag:stsci.edu:asdf/core/ndarray-1.1.0"));
    assert!(stdout(&o).contains("chunked-ndarray"));
    let o = run(&["extensions"]);
    expect(&o, 0);
    for l in ["zlib", "bzp2", "lz4", "lz4f", "zstd", "blsc", "xz"] {
        assert!(
            stdout(&o).lines().any(|x| x.trim() == l),
            "{l}: {}",
            stdout(&o)
        );
    }
}

#[test]
fn awkward_verbs_on_the_corpus() {
    let dir = asdf_testkit::corpus_file("awkward0");
    let o = run(&["info", p(&dir.join("nested.awkd"))]);
    expect(&o, 0);
    assert!(
        stdout(&o).contains("union: UnionArray of length 3"),
        "{}",
        stdout(&o)
    );
    let o = run(&["info", "--json", p(&dir.join("strings.awkd"))]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["format"], "awkd");
    let o = run(&["awkward", "to-json", p(&dir.join("jagged.awkd"))]);
    expect(&o, 0);
    assert_eq!(stdout(&o).trim(), "[[1.1,2.2,3.3],[],[4.4,5.5]]");
    let o = run(&["awkward", "to-json", p(&dir.join("table.awkd"))]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j[0]["x"], 1);
    let o = run(&["awkward", "to-json", p(&dir.join("masked.awkd"))]);
    expect(&o, 2);
    assert!(stderr(&o).contains("--name"));
    let o = run(&[
        "awkward",
        "to-json",
        p(&dir.join("masked.awkd")),
        "--name",
        "masked",
    ]);
    expect(&o, 0);
    assert!(stdout(&o).contains("null"));
    for f in [
        "jagged",
        "masked",
        "nested",
        "strings",
        "table",
        "legacy_awkward0140",
    ] {
        expect(&run(&["verify", p(&dir.join(format!("{f}.awkd")))]), 0);
    }
    // Round trip through from-json and convert .awkd → .awkd.
    let t = TempDir::new("asdftool-awk");
    let json = t.join("v.json");
    std::fs::write(
        &json,
        r#"[{"a": 1, "s": "x", "l": [1.5]}, null, {"a": 2, "s": "yz", "l": []}]"#,
    )
    .unwrap();
    let out = t.join("v.awkd");
    expect(
        &run(&[
            "awkward",
            "from-json",
            p(&json),
            "-o",
            p(&out),
            "--name",
            "ev",
        ]),
        0,
    );
    let o = run(&["awkward", "to-json", p(&out)]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        j,
        serde_json::json!([{"a": 1, "s": "x", "l": [1.5]}, null, {"a": 2, "s": "yz", "l": []}])
    );
    let copy = t.join("c.awkd");
    expect(&run(&["convert", p(&out), p(&copy)]), 0);
    expect(&run(&["diff", p(&out), p(&copy)]), 0);
    expect(&run(&["diff", p(&out), p(&dir.join("table.awkd"))]), 1);
    // A flat numeric array converts to and from .awkd.
    let npy = t.join("b.npy");
    expect(&run(&["convert", p(&reference("basic.asdf")), p(&npy)]), 0);
    let awk = t.join("b.awkd");
    expect(&run(&["convert", p(&npy), p(&awk)]), 0);
    let back = t.join("b2.npy");
    expect(&run(&["convert", p(&awk), p(&back)]), 0);
    expect(&run(&["diff", p(&npy), p(&back)]), 0);
    // A jagged array is not rectangular: no .npy, but an ASDF file holds it as an awkward
    // array, and it converts back to .awkd with the same values.
    let o = run(&["convert", p(&dir.join("jagged.awkd")), p(&t.join("j.npy"))]);
    expect(&o, 2);
    let jagged_asdf = t.join("j.asdf");
    expect(
        &run(&[
            "convert",
            p(&dir.join("jagged.awkd")),
            p(&jagged_asdf),
            "-c",
            "zstd",
        ]),
        0,
    );
    let o = run(&["awkward", "to-json", p(&jagged_asdf)]);
    expect(&o, 0);
    assert_eq!(stdout(&o).trim(), "[[1.1,2.2,3.3],[],[4.4,5.5]]");
    let jagged_back = t.join("j2.awkd");
    expect(
        &run(&[
            "convert",
            p(&jagged_asdf),
            p(&jagged_back),
            "--pointer",
            "/data",
        ]),
        0,
    );
    let o = run(&["awkward", "to-json", p(&jagged_back)]);
    expect(&o, 0);
    assert_eq!(stdout(&o).trim(), "[[1.1,2.2,3.3],[],[4.4,5.5]]");
    // Invalid JSON.
    std::fs::write(&json, "[1, 2").unwrap();
    expect(&run(&["awkward", "from-json", p(&json), "-o", p(&out)]), 1);
}

#[test]
fn quiet_when_piped_and_thread_cap() {
    let t = TempDir::new("asdftool-quiet");
    let out = t.join("d.asdf");
    // Piped: no progress bar, only the final message on standard error; -q removes it too.
    let o = run(&[
        "defragment",
        p(&reference("complex.asdf")),
        "-o",
        p(&out),
        "-c",
        "zlib",
    ]);
    expect(&o, 0);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let o = run(&[
        "-q",
        "defragment",
        p(&reference("complex.asdf")),
        "-o",
        p(&out),
    ]);
    expect(&o, 0);
    assert!(stderr(&o).is_empty() && stdout(&o).is_empty());
    let o = run(&["--threads", "1", "verify", p(&reference("complex.asdf"))]);
    expect(&o, 0);
    assert!(stderr(&o).is_empty());
    let o = run(&[
        "verify",
        "--threads",
        "2",
        "-q",
        p(&reference("complex.asdf")),
    ]);
    expect(&o, 0);
    assert!(stdout(&o).is_empty());
    expect(
        &run(&["--threads", "0", "verify", p(&reference("complex.asdf"))]),
        2,
    );
}

/// The README's first command runs on the sample file the repository ships; the sample must stay
/// valid (checksums, schema) and every array in it readable and convertible.
#[test]
fn readme_sample_file_works_with_every_reading_verb() {
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/data/sample.asdf")
        .to_string_lossy()
        .into_owned();
    let o = run(&["info", &sample]);
    expect(&o, 0);
    let text = stdout(&o);
    for name in ["sci", "dq", "wavelength", "catalog", "float32", "zlib"] {
        assert!(text.contains(name), "info lacks {name}:\n{text}");
    }
    expect(&run(&["verify", &sample]), 0);
    expect(&run(&["validate", &sample]), 0);
    let dir = TempDir::new("readme-sample");
    let inline = dir.path().join("inline.asdf");
    expect(
        &run(&["to-yaml", &sample, "-o", inline.to_str().unwrap()]),
        0,
    );
    let yaml = std::fs::read_to_string(&inline).unwrap();
    assert!(
        yaml.contains("F200W") && !yaml.contains("source:"),
        "{yaml}"
    );
    let npy = dir.path().join("sci.npy");
    let o = run(&[
        "convert",
        &sample,
        npy.to_str().unwrap(),
        "--pointer",
        "/sci",
    ]);
    expect(&o, 0);
    expect(
        &run(&["diff", &sample, npy.to_str().unwrap(), "--pointer", "/sci"]),
        0,
    );
}

/// Issue 17 item 6: a file with a bad checksum stops the rewriting verbs unless
/// `--ignore-checksums`, which names the block; an old-standard file holding float16 is
/// rewritten as ASDF Standard 1.6.0 rather than refused.
#[test]
fn rewrites_proceed_on_request_and_upgrade_float16() {
    let t = TempDir::new("asdftool-lenient");
    let mut bytes = std::fs::read(reference("basic.asdf")).unwrap();
    bytes[664 + 54 + 3] ^= 0x40;
    let bad = t.join("bad.asdf");
    std::fs::write(&bad, &bytes).unwrap();
    let out = t.join("out.asdf");
    let o = run(&["defragment", p(&bad), "-o", p(&out)]);
    assert_ne!(code(&o), 0, "{}", stdout(&o));
    let o = run(&["--ignore-checksums", "defragment", p(&bad), "-o", p(&out)]);
    expect(&o, 0);
    assert!(
        stderr(&o).contains("block 0") && stderr(&o).contains("--ignore-checksums"),
        "{}",
        stderr(&o)
    );
    let y = t.join("out.yaml");
    expect(
        &run(&["--ignore-checksums", "to-yaml", p(&bad), "--output", p(&y)]),
        0,
    );

    // float16 under ASDF Standard 1.5.0 (as asdf-cxx writes it).
    let f16 = t.join("f16.asdf");
    std::fs::write(
        &f16,
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
         --- !core/asdf-1.1.0\nh: !core/ndarray-1.0.0 {data: [1.5, 2.5], datatype: float16, \
         shape: [2]}\n...\n",
    )
    .unwrap();
    let o = run(&["defragment", p(&f16), "-o", p(&out)]);
    expect(&o, 0);
    assert!(stderr(&o).contains("1.6.0"), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&std::fs::read(&out).unwrap()).into_owned();
    assert!(text.contains("#ASDF_STANDARD 1.6.0"), "{text}");
    expect(&run(&["diff", p(&f16), p(&out)]), 0);
}

/// Issue 17 item 4: an `.awkd` file of several arrays converts to ASDF whole, each array
/// under its name, with the same values.
#[test]
fn convert_awkd_with_several_arrays_keeps_every_array() {
    let t = TempDir::new("asdftool-awkd-all");
    let opts = asdf_awkward::ReadOptions::default();
    for file in ["nested.awkd", "strings.awkd", "masked.awkd"] {
        let src = asdf_testkit::corpus_dir().join("awkward0").join(file);
        let out = t.join("all.asdf");
        let o = run(&["convert", p(&src), p(&out)]);
        expect(&o, 0);
        let awkd = asdf_awkward::AwkdFile::open(&src).unwrap();
        let f = asdf::AsdfFile::open(&out).unwrap();
        let names = awkd.array_names();
        assert!(names.len() > 1, "{file}");
        for name in names {
            let want = awkd.read(&name).unwrap().to_json().unwrap();
            let pointer = format!("/{name}");
            let got = match asdf::array_kind(f.pointer(&pointer).unwrap()) {
                Some(_) => {
                    let a = f.read(&pointer).unwrap();
                    let l = asdftool::awk::array_to_layout(&a).unwrap();
                    l.to_json().unwrap()
                }
                None => asdf_awkward::from_asdf(&f, &pointer, &opts)
                    .unwrap()
                    .to_json()
                    .unwrap(),
            };
            assert_eq!(got, want, "{file} {name}");
        }
        // --name still picks one, at /data.
        let o = run(&["convert", "--name", "utf8", p(&src), p(&out)]);
        if file == "strings.awkd" {
            expect(&o, 0);
            assert!(asdf::AsdfFile::open(&out)
                .unwrap()
                .pointer("/data")
                .is_some());
        }
    }
}

/// Issue 17 item 4: `.ra → .asdf → .ra` keeps a RawArray element type ASDF lacks (eltype 0, as
/// Python's writer stores NumPy bools; bfloat16): the same header and data come back.
#[test]
fn rawarray_elements_asdf_lacks_survive_a_round_trip() {
    let t = TempDir::new("asdftool-ra-roundtrip");
    let dir = asdf_testkit::corpus_dir().join("rawarray/generated/by-reference");
    for name in ["py_bool_2x3_user.ra", "rust_bf16_4.ra", "py_int16_2x3.ra"] {
        let src = dir.join(name);
        let (mid, back) = (t.join("mid.asdf"), t.join("back.ra"));
        expect(&run(&["convert", p(&src), p(&mid)]), 0);
        expect(&run(&["convert", p(&mid), p(&back)]), 0);
        let opts = rawarray::ReadOptions::default();
        let (a, b) = (
            rawarray::RawArray::open(&src, &opts).unwrap(),
            rawarray::RawArray::open(&back, &opts).unwrap(),
        );
        assert_eq!(b.kind(), a.kind(), "{name}");
        assert_eq!(b.dims(), a.dims(), "{name}");
        assert_eq!(b.data_bytes(), a.data_bytes(), "{name}");
        let tree = String::from_utf8_lossy(&std::fs::read(&mid).unwrap()).into_owned();
        assert_eq!(
            tree.contains("rawarray_element"),
            name != "py_int16_2x3.ra",
            "{name}"
        );
    }
}
