//! `edit` safety: an exclusive, private scratch file; edits through symbolic links keep the
//! links; changes beyond one page rewrite the file atomically instead of in place.

use crate::common::*;

use asdf_testkit::TempDir;

fn edit_with(
    file: &std::path::Path,
    tmpdir: &std::path::Path,
    editor: &str,
) -> std::process::Output {
    run_env(
        &["edit", p(file)],
        &[("EDITOR", editor), ("TMPDIR", p(tmpdir))],
    )
}

#[test]
fn the_scratch_file_is_private_unpredictable_and_never_a_planted_link() {
    let t = TempDir::new("edit-scratch");
    let tmp = t.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let victim = t.join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    // Links planted at names an attacker might guess.
    for name in [
        "asdftool-edit-e.asdf.yaml",
        "asdftool-edit-.yaml",
        "asdftool-edit-0.yaml",
    ] {
        std::os::unix::fs::symlink(&victim, tmp.join(name)).unwrap();
    }
    let f = t.join("e.asdf");
    std::fs::copy(reference("basic.asdf"), &f).unwrap();
    let log = t.join("log");
    let editor = format!(
        "sh -c 'printf \"%s %s\\n\" \"$1\" \"$(stat -c %a \"$1\")\" >> {}; sed -i -e s/4.1.0/4.1.9/ -e s/4.1.9/4.1.0/ \"$1\"' sh",
        p(&log)
    );
    for _ in 0..2 {
        expect(&edit_with(&f, &tmp, &editor), 0);
    }
    let log = std::fs::read_to_string(&log).unwrap();
    let runs: Vec<(&str, &str)> = log.lines().map(|l| l.rsplit_once(' ').unwrap()).collect();
    assert_eq!(runs.len(), 2, "{log}");
    for (name, mode) in &runs {
        assert_eq!(*mode, "600", "{log}");
        assert!(name.starts_with(p(&tmp)), "{log}");
        assert!(
            std::fs::symlink_metadata(name).is_err(),
            "scratch file left behind: {name}"
        );
    }
    assert_ne!(
        runs[0].0, runs[1].0,
        "the scratch name is predictable: {log}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

#[test]
fn editing_through_a_link_keeps_the_link() {
    let t = TempDir::new("edit-link");
    std::fs::create_dir(t.join("real")).unwrap();
    let target = t.join("real/e.asdf");
    std::fs::copy(reference("basic.asdf"), &target).unwrap();
    let link = t.join("link.asdf");
    std::os::unix::fs::symlink("real/e.asdf", &link).unwrap();
    let link2 = t.join("link2.asdf");
    std::os::unix::fs::symlink("link.asdf", &link2).unwrap();
    for (editor, how) in [
        ("sed -i -e s/4.1.0/4.1.9/", "in place"),
        (
            "sed -i -e s/author:/author_with_a_longer_name:/",
            "rewritten",
        ),
    ] {
        let o = edit_with(&link2, t.path(), editor);
        expect(&o, 0);
        assert!(stderr(&o).contains(how), "{}", stderr(&o));
        for l in [&link, &link2] {
            assert!(std::fs::symlink_metadata(l)
                .unwrap()
                .file_type()
                .is_symlink());
        }
        expect(&run(&["verify", p(&target)]), 0);
    }
    let f = asdf::AsdfFile::open(&target).unwrap();
    assert!(f
        .pointer("/asdf_library/author_with_a_longer_name")
        .is_some());
    assert_eq!(
        f.pointer("/asdf_library/version").unwrap().as_str(),
        Some("4.1.9")
    );
}

#[test]
fn changes_beyond_one_page_are_rewritten_atomically() {
    let t = TempDir::new("edit-pages");
    let f = t.join("big.asdf");
    two_far_fields(&f, "aaaa", "zzzz");
    // Same length, but the two changes are 6 000 bytes apart: not one page.
    let o = edit_with(&f, t.path(), "sed -i -e s/aaaa/bbbb/ -e s/zzzz/wwww/");
    expect(&o, 0);
    assert!(stderr(&o).contains("rewritten"), "{}", stderr(&o));
    let file = asdf::AsdfFile::open(&f).unwrap();
    assert_eq!(file.pointer("/first").unwrap().as_str(), Some("bbbb"));
    assert_eq!(file.pointer("/last").unwrap().as_str(), Some("wwww"));
    // One of them alone: in place.
    let o = edit_with(&f, t.path(), "sed -i -e s/wwww/vvvv/");
    expect(&o, 0);
    assert!(stderr(&o).contains("in place"), "{}", stderr(&o));
    expect(&run(&["verify", p(&f)]), 0);
    let leftovers: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Writes a file with `first` and `last` 6 000 bytes apart in the tree, and a block.
fn two_far_fields(f: &std::path::Path, first: &str, last: &str) {
    let mut w = asdf::AsdfWriter::new();
    let node = w
        .add(
            &ndarray::Array1::<u8>::zeros(16),
            &asdf::StoreOptions::default(),
        )
        .unwrap();
    let filler = "y".repeat(6000);
    let tree = asdf::yaml::Node::mapping([
        ("first", asdf::yaml::Node::from(first)),
        ("filler", asdf::yaml::Node::from(filler.as_str())),
        ("last", asdf::yaml::Node::from(last)),
        ("data", node),
    ]);
    w.write_path(f, tree, &Default::default()).unwrap();
}

#[test]
fn an_edit_killed_at_any_point_leaves_the_old_or_the_new_tree() {
    let t = TempDir::new("edit-kill");
    let f = t.join("k.asdf");
    let marker = t.join("edited");
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for round in 0..24 {
        two_far_fields(&f, "aaaa", "zzzz");
        let _ = std::fs::remove_file(&marker);
        // Even rounds change one field (in place), odd rounds both (atomic rewrite).
        let sed = if round % 2 == 0 {
            "-e s/zzzz/wwww/".to_string()
        } else {
            "-e s/aaaa/bbbb/ -e s/zzzz/wwww/".to_string()
        };
        let editor = format!("sh -c 'sed -i {sed} \"$1\"; touch {}' sh", p(&marker));
        let mut child = std::process::Command::new(bin())
            .args(["edit", p(&f)])
            .env("EDITOR", &editor)
            .env("TMPDIR", p(t.path()))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while !marker.exists() && start.elapsed().as_secs() < 30 {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(std::time::Duration::from_micros(seed % 3000));
        let _ = child.kill();
        let _ = child.wait();
        let file = asdf::AsdfFile::open(&f).unwrap_or_else(|e| panic!("round {round}: {e}"));
        let first = file
            .pointer("/first")
            .unwrap()
            .as_str()
            .unwrap()
            .to_string();
        let last = file.pointer("/last").unwrap().as_str().unwrap().to_string();
        let state = (first.as_str(), last.as_str());
        let new = if round % 2 == 0 {
            ("aaaa", "wwww")
        } else {
            ("bbbb", "wwww")
        };
        assert!(
            state == ("aaaa", "zzzz") || state == new,
            "round {round}: a mix of old and new trees: {state:?}"
        );
        assert_eq!(
            file.array::<u8>("/data").unwrap().len(),
            16,
            "round {round}"
        );
    }
}
