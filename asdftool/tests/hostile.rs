//! Hostile inputs (issue 21), generated small, through every verb of the binary in a child
//! process under an address-space limit, from a directory other than the files': each run ends
//! by itself (a 30 s guard kills a hang and fails the test) with a clear error or a correct
//! result, never a panic (101), an abort (134) or a signal.
//!
//! Classes covered here: special files behind a path (1), many external files (2), alias
//! expansion counted in bytes (3), huge numerals (4), repeated and long
//! tags (5), very many arrays and blocks (6), one compressed block shared by many arrays (7),
//! allocation by declared size and allocation failure (8), references resolved against the
//! working directory (9), external files outside the file's directory and errors quoting them
//! (10), `diff` on large mappings and arrays and `to-yaml` of a large array (11), terminal escapes in printed strings and
//! unsafe `.awkd` member names (13), the per-verb trust defaults (14). The library side of each class
//! is tested in `asdf/tests/external.rs` and `asdf-yaml/tests/limits.rs`.

use crate::common::*;

use std::path::{Path, PathBuf};

use asdf_testkit::TempDir;

const HEAD: &str = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n";

fn asdf_file(path: &Path, directives: &str, body: &str) {
    std::fs::write(
        path,
        format!("{HEAD}{directives}--- !core/asdf-1.1.0\n{body}\n...\n"),
    )
    .unwrap();
}

/// The hostile files, in `files/`, and what a failing run must say (`None`: may succeed).
fn generate(files: &Path) -> Vec<(PathBuf, Option<&'static str>)> {
    let mut out = Vec::new();
    let mut add = |name: &str, directives: &str, body: String, says: Option<&'static str>| {
        let p = files.join(name);
        asdf_file(&p, directives, &body);
        out.push((p, says));
    };
    // 4: huge numerals (decimal, hex, octal, base 60, explicit !!int).
    add(
        "dec.asdf",
        "",
        format!("n: {}", "9".repeat(1_000_000)),
        Some("digits"),
    );
    add(
        "hex.asdf",
        "",
        format!("n: 0x{}", "f".repeat(100_000)),
        Some("digits"),
    );
    add(
        "oct.asdf",
        "",
        format!("n: 0{}", "7".repeat(100_000)),
        Some("digits"),
    );
    add(
        "b60.asdf",
        "",
        format!("n: 1{}", ":59".repeat(50_000)),
        Some("digits"),
    );
    add(
        "int.asdf",
        "",
        format!("n: !!int {}", "1".repeat(100_000)),
        Some("digits"),
    );
    // 5: one long tag on many nodes (shared), a tag over the limit, many distinct long tags.
    let prefix = format!("tag:example.org:{}", "p".repeat(990));
    let many: String = (0..5_000).map(|i| format!("k{i}: !h!x {i}\n")).collect();
    add(
        "tag-shared.asdf",
        &format!("%TAG !h! {prefix}\n"),
        many,
        None,
    );
    let long = format!("tag:example.org:{}", "q".repeat(100_000));
    let body: String = (0..100).map(|i| format!("k{i}: !h!x {i}\n")).collect();
    add(
        "tag-long.asdf",
        &format!("%TAG !h! {long}\n"),
        body,
        Some("tag"),
    );
    // 17 500 distinct tags of about 1 000 bytes: more than the 16 MiB all tags may take.
    let distinct: String = (0..17_500).map(|i| format!("k{i}: !h!{i} x\n")).collect();
    add(
        "tag-distinct.asdf",
        &format!("%TAG !h! {prefix}\n"),
        distinct,
        Some("tag"),
    );
    // 13: terminal escapes in strings and keys.
    add(
        "escapes.asdf",
        "",
        "title: \"\\e]0;pwned\\a\\e[2J\\x9b31m\"\n\"\\e[31mkey\": \"\\u202egnp.exe\"".into(),
        None,
    );
    // 1, 9, 10: references and external arrays to special files, outside files, a non-ASDF
    // file with a secret line.
    let array = |uri: &str| {
        format!(
            "x: !core/ndarray-1.1.0 {{source: {uri:?}, datatype: uint8, byteorder: little, \
             shape: [4]}}"
        )
    };
    add("src-fifo.asdf", "", array("pipe"), Some("FIFO"));
    add("src-dir.asdf", "", array("."), Some("directory"));
    add("src-dev.asdf", "", array("/dev/zero"), Some("/dev/zero"));
    add(
        "src-outside.asdf",
        "",
        array("../outside/secret"),
        Some("or below"),
    );
    add("src-secret.asdf", "", array("secret-here"), None);
    add("ref-fifo.asdf", "", "r: {$ref: 'pipe#/x'}".into(), None);
    add(
        "ref-outside.asdf",
        "",
        "r: {$ref: '../outside/secret#/x'}".into(),
        None,
    );
    add(
        "ref-abs.asdf",
        "",
        "r: {$ref: 'file:///etc/passwd#/x'}".into(),
        None,
    );
    add(
        "ref-self.asdf",
        "",
        "r: {$ref: 'ref-self.asdf#/r'}".into(),
        None,
    );
    // 3: a 1 MiB scalar aliased 60 times (60 MiB when printed, under the 256 MiB default) and
    // 300 times (over it: refused by the parser).
    let alias = |n: usize| -> String {
        let mut body = format!("big: &a {}\n", "x".repeat(1 << 20));
        body.extend((0..n).map(|i| format!("r{i}: *a\n")));
        body
    };
    add("alias-60.asdf", "", alias(60), None);
    add("alias-300.asdf", "", alias(300), Some("alias"));
    // 2: 2 000 external files, each opened once per verb and released after its array is read.
    let mut w = asdf::AsdfWriter::new();
    let node = w
        .add(&ndarray::arr1(&[1u8, 2, 3, 4]), &Default::default())
        .unwrap();
    std::fs::write(
        files.join("ext-one.asdf"),
        w.to_bytes(
            asdf::yaml::Node::mapping([("x", node)]),
            &Default::default(),
        )
        .unwrap(),
    )
    .unwrap();
    let mut body = String::new();
    for i in 0..2_000 {
        std::fs::copy(
            files.join("ext-one.asdf"),
            files.join(format!("ext{i:04}.asdf")),
        )
        .unwrap();
        body.push_str(&format!(
            "a{i}: !core/ndarray-1.1.0 {{source: ext{i:04}.asdf, datatype: uint8, \
             byteorder: little, shape: [4]}}\n"
        ));
    }
    add("many-externals.asdf", "", body, None);
    // The same file spelled differently at each step: still one document, so a cycle.
    std::fs::create_dir_all(files.join("sub")).unwrap();
    add(
        "ref-respelled.asdf",
        "",
        "r: {$ref: 'sub/../ref-respelled.asdf#/r'}".into(),
        None,
    );
    out
}

/// Every verb over `file` (relative to `cwd`), writing into `scratch`.
fn verbs(file: &str, scratch: &Path) -> Vec<Vec<String>> {
    let o = |n: &str| scratch.join(n).to_str().unwrap().to_string();
    let f = file.to_string();
    [
        vec!["info".into(), f.clone()],
        vec!["info".into(), "--json".into(), f.clone()],
        vec!["info".into(), "--show-blocks".into(), f.clone()],
        vec!["verify".into(), "-v".into(), f.clone()],
        vec!["search".into(), f.clone(), "--type".into(), "str".into()],
        vec!["diff".into(), f.clone(), f.clone()],
        vec!["validate".into(), "--builtin-only".into(), f.clone()],
        vec!["to-yaml".into(), f.clone(), "-o".into(), o("y.asdf")],
        vec!["defragment".into(), f.clone(), "-o".into(), o("d.asdf")],
        vec!["explode".into(), f.clone(), "-o".into(), o("e.asdf")],
        vec!["implode".into(), f.clone(), "-o".into(), o("i.asdf")],
        vec!["convert".into(), f.clone(), o("c.asdf")],
        vec!["salvage".into(), f.clone(), "-o".into(), o("s.asdf")],
        vec!["convert".into(), f.clone(), o("c.npy")],
        // `run_limited` sets EDITOR=true: the tree is parsed and handed over unchanged.
        vec!["edit".into(), f.clone()],
        vec!["--trusted".into(), "verify".into(), f.clone()],
        vec!["--untrusted".into(), "convert".into(), f, o("u.asdf")],
    ]
    .into()
}

#[test]
fn every_verb_ends_cleanly_on_every_hostile_file() {
    let t = TempDir::new("hostile");
    let files = t.join("files");
    let cwd = t.join("elsewhere");
    let scratch = t.join("scratch");
    let outside = t.join("outside");
    for d in [&files, &cwd, &scratch, &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    let secret = "root:x:0:0:SECRET-LINE:/root:/bin/bash\n";
    std::fs::write(outside.join("secret"), secret).unwrap();
    std::fs::write(files.join("secret-here"), secret).unwrap();
    let fifo = files.join("pipe");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // Decoys in the working directory: never read.
    std::fs::create_dir_all(cwd.join("outside")).unwrap();
    std::fs::write(cwd.join("secret-here"), "DECOY").unwrap();
    for (path, says) in generate(&files) {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let rel = format!("../files/{name}");
        for args in verbs(&rel, &scratch) {
            let what = format!("asdftool {}", args.join(" "));
            let o = run_limited(&cwd, &args);
            expect_clean(&o, &what);
            let text = stdout(&o) + &stderr(&o);
            assert!(
                !text.contains("SECRET") && !text.contains("DECOY"),
                "{what}: {text}"
            );
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{9b}') && !text.contains('\u{202e}'),
                "{what} printed a raw control character"
            );
            // (`--trusted` opens outside files, so their refusal is not expected there.)
            // (A "no" without a message, as `search` finding nothing, is a correct result.)
            let failed = code(&o) != 0 && !text.trim().is_empty();
            if let (Some(needle), true) = (says, failed && args[0] != "--trusted") {
                assert!(
                    text.contains(needle),
                    "{what}: expected {needle:?} in\n{text}"
                );
            }
        }
    }
}

#[test]
fn hostile_files_get_the_expected_answers() {
    let t = TempDir::new("hostile-answers");
    let files = t.join("files");
    let cwd = t.join("elsewhere");
    for d in [&files, &cwd] {
        std::fs::create_dir_all(d).unwrap();
    }
    let gen = generate(&files);
    let path = |n: &str| {
        gen.iter()
            .find(|(p, _)| p.ends_with(n))
            .map(|(p, _)| format!("../files/{}", p.file_name().unwrap().to_str().unwrap()))
            .unwrap_or_else(|| panic!("no generated file {n}"))
    };
    // Numerals: refused with the limit named.
    let o = run_limited(&cwd, &["info", &path("dec.asdf")]);
    expect(&o, 1);
    assert!(stderr(&o).contains("4300 digits"), "{}", stderr(&o));
    // One long tag shared by 5 000 nodes: read, each line shows it.
    let o = run_limited(
        &cwd,
        &["search", &path("tag-shared.asdf"), "--type", "example.org"],
    );
    expect(&o, 0);
    assert_eq!(stdout(&o).lines().count(), 5_000);
    // Escapes: shown escaped.
    let o = run_limited(&cwd, &["info", &path("escapes.asdf")]);
    expect(&o, 0);
    let text = stdout(&o);
    assert!(text.contains("\\u001b]0;pwned\\u0007"), "{text}");
    assert!(text.contains("\\u202egnp.exe"), "{text}");
    // JSON stays valid JSON with the same strings.
    let o = run_limited(&cwd, &["info", "--json", &path("escapes.asdf")]);
    expect(&o, 0);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(j.to_string().contains("\u{202e}gnp.exe"), "{j}");
    // A self-reference is a cycle, reported as such, however the file is spelled.
    for name in ["ref-self.asdf", "ref-respelled.asdf"] {
        for trust in ["--untrusted", "--trusted"] {
            let o = run_limited(&cwd, &[trust, "verify", &path(name)]);
            expect(&o, 1);
            assert!(stdout(&o).contains("cycle"), "{name}: {}", stdout(&o));
        }
    }
}

#[test]
fn awkd_member_names_cannot_leave_the_archive() {
    use asdf_awkward::{save_awkd, AwkdFile, Layout, SaveMode, WriteOptions};
    let t = TempDir::new("hostile-awkd");
    let cwd = t.join("elsewhere");
    std::fs::create_dir_all(&cwd).unwrap();
    let src = t.join("evil.awkd");
    let layout = Layout::from_json(&serde_json::json!([1, 2, 3])).unwrap();
    for name in ["../../tmp/evil.json", "/etc/cron.d/x"] {
        save_awkd(
            &src,
            &[(name, &layout)],
            SaveMode::Create,
            &WriteOptions::default(),
        )
        .unwrap();
        let out = t.join("out.awkd");
        let o = run_limited(
            &cwd,
            &["convert", src.to_str().unwrap(), out.to_str().unwrap()],
        );
        expect(&o, 0);
        assert!(stderr(&o).contains("renamed"), "{}", stderr(&o));
        let f = AwkdFile::open(&out).unwrap();
        for member in f.entry_names() {
            assert!(
                !member.starts_with('/') && !member.split('/').any(|c| c == ".."),
                "{member}"
            );
        }
        assert_eq!(
            f.read(&f.array_names()[0]).unwrap().to_json().unwrap(),
            serde_json::json!([1, 2, 3])
        );
    }
}

/// Class 7: one compressed block (8 MiB, zstd) viewed by 10 000 arrays with different offsets
/// and shapes. Each verb decodes the block once (it used to decode it once per array: 10 000
/// decodes; the test uses 3 000 views to stay fast in debug builds) and `verify` checks the views without copying them.
fn shared_block_file(path: &Path, views: usize) -> Vec<u8> {
    use asdf::yaml::Node;
    let base: Vec<u8> = (0..8usize << 20).map(|i| (i * 7 % 251) as u8).collect();
    let mut w = asdf::AsdfWriter::new();
    let node = w
        .add(
            &ndarray::Array1::from(base.clone()),
            &asdf::StoreOptions::compressed("zstd").unwrap(),
        )
        .unwrap();
    let tag = node.tag().unwrap().to_string();
    let list: Vec<Node> = (0..views)
        .map(|i| {
            let mut map = node.as_map().cloned().unwrap();
            map.insert("offset", Node::from((i * 797) as i64));
            map.insert("shape", Node::sequence([Node::from((1 + i % 37) as i64)]));
            Node::from(map).with_tag(tag.clone())
        })
        .collect();
    // (The base array itself is not in the tree: `to-yaml` would write its 8 Mi numbers.)
    let tree = Node::mapping([("views", Node::sequence(list))]);
    std::fs::write(path, w.to_bytes(tree, &Default::default()).unwrap()).unwrap();
    base
}

#[test]
fn one_compressed_block_shared_by_many_arrays() {
    let t = TempDir::new("hostile-shared");
    let (files, cwd, scratch) = (t.join("files"), t.join("elsewhere"), t.join("scratch"));
    for d in [&files, &cwd, &scratch] {
        std::fs::create_dir_all(d).unwrap();
    }
    let base = shared_block_file(&files.join("shared.asdf"), 3_000);
    for args in verbs("../files/shared.asdf", &scratch) {
        let what = format!("asdftool {}", args.join(" "));
        let start = std::time::Instant::now();
        let o = run_limited(&cwd, &args);
        eprintln!("{what}: {:?}", start.elapsed());
        expect_clean(&o, &what);
    }
    let o = run_limited(&cwd, &["verify", "-v", "../files/shared.asdf"]);
    expect(&o, 0);
    let text = stdout(&o);
    assert!(
        text.contains(&format!(
            "array /views/2999: shape [{}], uint8",
            1 + 2999 % 37
        )),
        "{text}"
    );
    assert_eq!(text.matches("array /views/").count(), 3_000);
    // The rewritten files hold the same views.
    for out in ["y.asdf", "d.asdf"] {
        let f = asdf::AsdfFile::open(scratch.join(out)).unwrap();
        for i in [0usize, 1, 1_499, 2_999] {
            let a = f.array::<u8>(&format!("/views/{i}")).unwrap();
            let off = i * 797;
            assert_eq!(
                a.as_slice().unwrap(),
                &base[off..off + 1 + i % 37],
                "{out} {i}"
            );
        }
    }
}

/// A zstd frame that decodes to `len` zero bytes (a multiple of 128 KiB), made of RLE blocks:
/// 4 bytes per 128 KiB.
fn zstd_zeros(len: u64) -> Vec<u8> {
    const BLOCK: u64 = 128 << 10;
    let mut out = vec![0x28, 0xB5, 0x2F, 0xFD, 0xC0, 7 << 3];
    out.extend_from_slice(&len.to_le_bytes());
    let n = len / BLOCK;
    for i in 0..n {
        let header = u32::from(i + 1 == n) | (1 << 1) | ((BLOCK as u32) << 3);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(0);
    }
    out
}

/// Class 8 files: a block that really decodes to 3 GiB (more than the address-space limit of
/// the runs), a chunked array of 5 000 chunks over the same 1 MiB (5 GiB to copy), one with a 2⁴⁰-element
/// gap, and `.awkd` archives with a member declaring 4 GiB and with overlapping members.
fn allocation_files(files: &Path) -> Vec<PathBuf> {
    use asdf::block::{BlockHeader, EncodedBlock, Label};
    use asdf::ndarray::{CHUNKED_TAG, CHUNK_TAG};
    use asdf::yaml::Node;
    let ndarray = |len: u64| {
        Node::mapping([
            ("source", Node::from(0i64)),
            ("datatype", Node::from("uint8")),
            ("byteorder", Node::from("little")),
            ("shape", Node::sequence([Node::from(len as i64)])),
        ])
        .with_tag("tag:stsci.edu:asdf/core/ndarray-1.1.0")
    };
    let root = |tree: Node| tree.with_tag("tag:stsci.edu:asdf/core/asdf-1.1.0");
    let mut out = Vec::new();
    let len = 3u64 << 30;
    let payload = zstd_zeros(len);
    let block = EncodedBlock {
        header: BlockHeader::new(Label(*b"zstd"), len, payload.len() as u64, [0; 16]),
        payload: payload.into(),
    };
    let tree = root(Node::mapping([("big", ndarray(len))]));
    let bytes = asdf::write_to(Vec::new(), &tree, &[block], &Default::default()).unwrap();
    out.push(files.join("zstd-3g.asdf"));
    std::fs::write(&out[0], bytes).unwrap();
    let chunked = |name: &str, shape: u64, chunks: usize| {
        let chunk = Node::mapping([
            ("start", Node::sequence([Node::from(0i64)])),
            ("ndarray", ndarray(1 << 20)),
        ])
        .with_tag(CHUNK_TAG);
        let node = Node::mapping([
            ("shape", Node::sequence([Node::from(shape as i64)])),
            ("datatype", Node::from("uint8")),
            ("chunks", Node::sequence(vec![chunk; chunks])),
        ])
        .with_tag(CHUNKED_TAG);
        let block = EncodedBlock {
            header: BlockHeader::new(Label::NONE, 1 << 20, 1 << 20, [0; 16]),
            payload: vec![1u8; 1 << 20].into(),
        };
        let tree = root(Node::mapping([("c", node)]));
        let bytes = asdf::write_to(Vec::new(), &tree, &[block], &Default::default()).unwrap();
        let p = files.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    out.push(chunked("chunks-overlap.asdf", 1 << 20, 5_000));
    out.push(chunked("chunks-gap.asdf", 1 << 40, 1));
    out.push(files.join("lying-size.awkd"));
    std::fs::write(&out[3], zip(&[("a", 0)], 0xFFFF_FFF0)).unwrap();
    out.push(files.join("overlap.awkd"));
    std::fs::write(&out[4], zip(&[("a", 0), ("b", 0), ("c", 0)], 5)).unwrap();
    out
}

/// A stored ZIP archive with one local entry `x` of 5 bytes and central entries `(name, local
/// header offset)`, each declaring `size` uncompressed bytes.
fn zip(entries: &[(&str, u32)], size: u32) -> Vec<u8> {
    let data = b"hello";
    let crc = 0x3610_a686u32; // CRC-32 of "hello"
    let mut z = Vec::new();
    let u16le = |z: &mut Vec<u8>, v: u16| z.extend_from_slice(&v.to_le_bytes());
    let u32le = |z: &mut Vec<u8>, v: u32| z.extend_from_slice(&v.to_le_bytes());
    u32le(&mut z, 0x0403_4b50);
    for v in [20u16, 0, 0, 0, 0] {
        u16le(&mut z, v);
    }
    for v in [crc, 5, size] {
        u32le(&mut z, v);
    }
    u16le(&mut z, 1);
    u16le(&mut z, 0);
    z.push(b'x');
    z.extend_from_slice(data);
    let cd = z.len() as u32;
    for (name, offset) in entries {
        u32le(&mut z, 0x0201_4b50);
        for v in [20u16, 20, 0, 0, 0, 0] {
            u16le(&mut z, v);
        }
        for v in [crc, 5, size] {
            u32le(&mut z, v);
        }
        for v in [name.len() as u16, 0, 0, 0, 0] {
            u16le(&mut z, v);
        }
        u32le(&mut z, 0);
        u32le(&mut z, *offset);
        z.extend_from_slice(name.as_bytes());
    }
    let cd_len = z.len() as u32 - cd;
    u32le(&mut z, 0x0605_4b50);
    for v in [0u16, 0, entries.len() as u16, entries.len() as u16] {
        u16le(&mut z, v);
    }
    u32le(&mut z, cd_len);
    u32le(&mut z, cd);
    u16le(&mut z, 0);
    z
}

#[test]
fn allocation_by_declared_size_fails_cleanly() {
    let t = TempDir::new("hostile-alloc");
    let (files, cwd, scratch) = (t.join("files"), t.join("elsewhere"), t.join("scratch"));
    for d in [&files, &cwd, &scratch] {
        std::fs::create_dir_all(d).unwrap();
    }
    for path in allocation_files(&files) {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let rel = format!("../files/{name}");
        let mut all = verbs(&rel, &scratch);
        all.push(vec!["awkward".into(), "to-json".into(), rel.clone()]);
        if name == "zstd-3g.asdf" {
            // Each verb that decodes the block fills the address space before failing (about
            // 2 s): a few of them show it, the rest decode the same way.
            all.retain(|a| ["info", "verify", "to-yaml", "edit"].contains(&a[0].as_str()));
        }
        for args in all {
            let what = format!("asdftool {}", args.join(" "));
            let start = std::time::Instant::now();
            let o = run_limited(&cwd, &args);
            eprintln!("{what}: {:?}", start.elapsed());
            expect_clean(&o, &what);
        }
    }
    // What each refusal says.
    let says = |args: &[&str], needle: &str| {
        let o = run_limited(&cwd, args);
        assert_ne!(code(&o), 0, "{args:?}");
        let text = stdout(&o) + &stderr(&o);
        assert!(text.contains(needle), "{args:?}: {needle:?} not in\n{text}");
    };
    let out = scratch.join("o.asdf");
    let out = out.to_str().unwrap();
    // 3 GiB under a 2 GiB address space: the allocation fails, named with the block.
    let o = run_limited(&cwd, &["to-yaml", "../files/zstd-3g.asdf", "-o", out]);
    expect(&o, 1);
    let text = stderr(&o);
    assert!(text.contains("block 0 at byte offset"), "{text}");
    assert!(
        text.contains("allocate") || text.contains("out of memory"),
        "{text}"
    );
    says(
        &["--trusted", "verify", "../files/chunks-overlap.asdf"],
        "overlapping chunks",
    );
    says(
        &["to-yaml", "../files/chunks-gap.asdf", "-o", out],
        "region",
    );
    says(
        &["awkward", "to-json", "../files/lying-size.awkd"],
        "declares 4294967280 bytes",
    );
    says(&["awkward", "to-json", "../files/overlap.awkd"], "overlap");
}

/// Class 11: `diff` of large mappings compares keys through an index (it was quadratic: 100 000
/// keys took 90 s) and arrays element by element in place (it built a tree node per element:
/// 50 MB of uint8 took 9.6 GB); the answers are the same.
#[test]
fn diff_of_large_mappings_and_arrays() {
    let t = TempDir::new("hostile-diff");
    let keys = |n: usize, changed: usize| -> String {
        (0..n)
            .map(|i| {
                let v = if i == changed { i + 1 } else { i };
                format!("k{i}: {v}\n")
            })
            .collect()
    };
    let (a, b) = (t.join("a.asdf"), t.join("b.asdf"));
    asdf_file(&a, "", &keys(20_000, usize::MAX));
    asdf_file(&b, "", &format!("{}extra: 1\n", keys(20_000, 12_345)));
    let o = run_limited(&t.join(""), &["diff", p(&a), p(&b)]);
    expect(&o, 1);
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(
        lines,
        [
            "/k12345: \"12345\" != \"12346\"",
            "/extra: only in the second file"
        ],
        "{}",
        stderr(&o)
    );
    let array = |path: &Path, change: Option<usize>, nan: f64| {
        let mut v: Vec<f64> = (0..1 << 20).map(|i| i as f64).collect();
        v[7] = nan;
        if let Some(i) = change {
            v[i] += 0.5;
        }
        let mut w = asdf::AsdfWriter::new();
        let node = w
            .add(&ndarray::Array1::from(v), &Default::default())
            .unwrap();
        let tree = asdf::yaml::Node::mapping([("x", node)]);
        std::fs::write(path, w.to_bytes(tree, &Default::default()).unwrap()).unwrap();
    };
    array(&a, None, f64::NAN);
    array(&b, None, -f64::NAN);
    let o = run_limited(&t.join(""), &["diff", p(&a), p(&b)]);
    expect(&o, 0);
    array(&b, Some(1 << 19), f64::NAN);
    let o = run_limited(&t.join(""), &["diff", p(&a), p(&b)]);
    expect(&o, 1);
    assert!(
        stdout(&o).contains("/x: array values differ"),
        "{}",
        stdout(&o)
    );
}

/// Class 11: `to-yaml` writes an inline array as it goes, without a tree node per element (it
/// took 118 bytes per element: 7.6 GB for 64 MiB of `uint8`). 24 MiB here, under the 2 GiB
/// address-space limit the old way could not fit in; the YAML holds every element in order.
#[test]
fn to_yaml_of_a_large_array_fits_in_memory() {
    let t = TempDir::new("hostile-to-yaml");
    let (input, output) = (t.join("big.asdf"), t.join("inline.asdf"));
    let len = 24 << 20;
    let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    let mut w = asdf::AsdfWriter::new();
    let node = w
        .add(&ndarray::ArrayView1::from(&data[..]), &Default::default())
        .unwrap();
    let tree = asdf::yaml::Node::mapping([("x", node)]);
    w.write_path(&input, tree, &Default::default()).unwrap();
    let o = run_limited(&t.join(""), &["to-yaml", p(&input), "-o", p(&output)]);
    expect(&o, 0);
    let text = std::fs::read(&output).unwrap();
    let start = text.windows(8).position(|w| w == b"  data: ").unwrap() + 8;
    let end = start + text[start..].iter().position(|&b| b == b']').unwrap();
    let flow = std::str::from_utf8(&text[start + 1..end]).unwrap();
    let mut n = 0usize;
    for (i, item) in flow.split(',').enumerate() {
        assert_eq!(item.trim().parse::<usize>().unwrap(), i % 251, "item {i}");
        n += 1;
    }
    assert_eq!(n, len);
}

/// Class 6: very many arrays and blocks (2 000 here; 10⁵ took minutes to `explode` with two
/// fsyncs per file, and `info --json` looked each array up from the root). Every verb ends
/// cleanly, `explode` writes every file, and `info --json` lists every array and block.
#[test]
fn very_many_arrays_and_blocks() {
    let t = TempDir::new("hostile-many");
    let (files, cwd, scratch) = (t.join("files"), t.join("elsewhere"), t.join("scratch"));
    for d in [&files, &cwd, &scratch] {
        std::fs::create_dir_all(d).unwrap();
    }
    let n = 2_000;
    let mut w = asdf::AsdfWriter::new();
    let entries: Vec<(String, asdf::yaml::Node)> = (0..n)
        .map(|i| {
            let a = ndarray::Array1::from(vec![i as u32, 1, 2]);
            (format!("a{i}"), w.add(&a, &Default::default()).unwrap())
        })
        .collect();
    let tree = asdf::yaml::Node::mapping(entries);
    std::fs::write(
        files.join("many.asdf"),
        w.to_bytes(tree, &Default::default()).unwrap(),
    )
    .unwrap();
    for args in verbs("../files/many.asdf", &scratch) {
        let what = format!("asdftool {}", args.join(" "));
        let start = std::time::Instant::now();
        let o = run_limited(&cwd, &args);
        expect_clean(&o, &what);
        eprintln!("{what}: {:?}", start.elapsed());
        // (Converting to .npy needs one array named: a usage error.)
        if !what.contains("c.npy") {
            assert_eq!(code(&o), 0, "{what}: {}", stderr(&o));
        }
    }
    let o = run_limited(&cwd, &["info", "--json", "../files/many.asdf"]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["arrays"].as_array().unwrap().len(), n);
    assert_eq!(j["blocks"].as_array().unwrap().len(), n);
    assert_eq!(j["arrays"][1_234]["pointer"], "/a1234");
    assert_eq!(j["tree"]["a1234"]["source"], 1_234);
    // Every exploded file is in place and holds its array.
    let exploded = std::fs::read_dir(&scratch)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_str().unwrap();
            name.starts_with('e') && name.ends_with(".asdf") && name != "e.asdf"
        })
        .count();
    assert_eq!(exploded, n);
    let f = asdf::AsdfFile::open(scratch.join("e.asdf")).unwrap();
    assert_eq!(
        f.array::<u32>("/a1234").unwrap().as_slice().unwrap(),
        [1_234, 1, 2]
    );
    let o = run_limited(&cwd, &["verify", scratch.join("e.asdf").to_str().unwrap()]);
    expect(&o, 0);
}
