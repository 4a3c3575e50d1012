//! Corrupted corpus files (truncations, byte flips, zeroed ranges) through every read verb:
//! each run must end with status 0, 1 or 2 — never a panic (101) or a signal — and every
//! failure must say something on standard error.

use crate::common::*;

use std::path::Path;

use asdf_testkit::{Rng, TempDir};

fn variants(bytes: &[u8], rng: &mut Rng, flips: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let n = bytes.len();
    // Truncations at interesting places and at random ones.
    for cut in [
        0,
        1,
        5,
        12,
        n / 4,
        n / 2,
        n.saturating_sub(60),
        n.saturating_sub(1),
    ] {
        out.push(bytes[..cut.min(n)].to_vec());
    }
    for _ in 0..3 {
        out.push(bytes[..rng.below(n)].to_vec());
    }
    // Byte flips, concentrated in the headers/trees where they matter most.
    for i in 0..flips {
        let mut b = bytes.to_vec();
        let at = if i % 2 == 0 {
            rng.below(n.min(1024))
        } else {
            rng.below(n)
        };
        b[at] ^= 1 << rng.below(8);
        out.push(b);
    }
    // Runs of 0xff and of zeros (sizes in block headers become huge or null).
    for fill in [0xffu8, 0] {
        let mut b = bytes.to_vec();
        let at = rng.below(n);
        for x in b.iter_mut().skip(at).take(8) {
            *x = fill;
        }
        out.push(b);
    }
    out
}

fn check(file: &Path, args: &[&str], what: &str) {
    let mut all: Vec<&str> = args.to_vec();
    all.push(p(file));
    let o = run(&all);
    let status = o.status.code();
    assert!(
        matches!(status, Some(0..=2)),
        "{what}: `asdftool {}` ended with {:?}\n{}",
        args.join(" "),
        o.status,
        stderr(&o)
    );
    if status != Some(0) && args[0] != "diff" && args[0] != "search" {
        assert!(
            !stderr(&o).trim().is_empty(),
            "{what}: {args:?} failed silently"
        );
    }
}

fn sweep(rel: &str, ext: &str, verbs: &[&[&str]], flips: usize, seed: u64) {
    let src = asdf_testkit::corpus_file(rel);
    let bytes = std::fs::read(&src).unwrap();
    let t = TempDir::new("asdftool-corrupt");
    let mut rng = Rng(seed);
    let out = t.join("out.asdf");
    let out_s = p(&out).to_string();
    for (i, v) in variants(&bytes, &mut rng, flips).into_iter().enumerate() {
        let f = t.join(&format!("v{i}.{ext}"));
        std::fs::write(&f, &v).unwrap();
        let what = format!("{rel} variant {i}");
        for verb in verbs {
            let mut args: Vec<&str> = verb.to_vec();
            if args[0] == "diff" {
                args.push(p(&src));
            }
            if matches!(args[0], "to-yaml" | "defragment") {
                args.push("-o");
                args.push(&out_s);
            }
            check(&f, &args, &what);
        }
    }
}

const ASDF_VERBS: &[&[&str]] = &[
    &["info", "--show-blocks"],
    &["info", "--json"],
    &["verify"],
    &["diff"],
    &["to-yaml"],
    &["defragment", "-c", "zlib"],
    &["search", "--type", "ndarray"],
];

#[test]
fn corrupted_asdf_files_never_panic() {
    for (i, name) in [
        "basic",
        "compressed",
        "stream",
        "structured",
        "shared",
        "complex",
        "anchor",
        "unicode_spp",
    ]
    .iter()
    .enumerate()
    {
        sweep(
            &format!("asdf-standard/reference_files/1.6.0/{name}.asdf"),
            "asdf",
            ASDF_VERBS,
            14,
            0x9e37_79b9_7f4a_7c15 ^ i as u64,
        );
    }
}

#[test]
fn corrupted_rawarray_npy_and_awkd_files_never_panic() {
    let single: &[&[&str]] = &[&["info"], &["info", "--json"], &["verify"], &["diff"]];
    for (i, name) in std::fs::read_dir(asdf_testkit::corpus_file("rawarray/generated/synthesized"))
        .unwrap()
        .enumerate()
    {
        let name = name.unwrap().file_name().into_string().unwrap();
        sweep(
            &format!("rawarray/generated/synthesized/{name}"),
            "ra",
            single,
            8,
            77 + i as u64,
        );
    }
    // A .npy file made here from the corpus, then corrupted.
    let t = TempDir::new("asdftool-npy-src");
    let npy = t.join("basic.npy");
    expect(
        &run(&[
            "convert",
            p(&reference("complex.asdf")),
            p(&npy),
            "--pointer",
            "/datatype>c8",
        ]),
        0,
    );
    let bytes = std::fs::read(&npy).unwrap();
    let mut rng = Rng(5);
    for (i, v) in variants(&bytes, &mut rng, 16).into_iter().enumerate() {
        let f = t.join(&format!("n{i}.npy"));
        std::fs::write(&f, &v).unwrap();
        for verb in single {
            let mut args = verb.to_vec();
            if args[0] == "diff" {
                args.push(p(&npy));
            }
            check(&f, &args, &format!("npy variant {i}"));
        }
    }
    let awk: &[&[&str]] = &[&["info"], &["verify"], &["awkward", "to-json"]];
    for (i, name) in ["jagged", "table", "strings"].iter().enumerate() {
        sweep(
            &format!("awkward0/{name}.awkd"),
            "awkd",
            awk,
            10,
            1234 + i as u64,
        );
    }
}
