//! Writes the seed corpora of the fuzz targets (`fuzz/corpus/<target>/`) from the shared corpus.
//!
//! `cargo run -p asdf-tests --example fuzz_seeds [-- OUT_DIR]` (default `fuzz/corpus`). Nothing is
//! copied into the repository: `fuzz/corpus` is git-ignored.
//!
//! The `ndarray_read` and `awkward_schema` targets take a section container (each section a
//! little-endian `u32` length and its bytes; see `fuzz/src/lib.rs`): a tree and its decoded
//! blocks, or a schema and alternating blob names and blob bytes.

use std::path::{Path, PathBuf};

use asdf_awkward::BlobStore;

fn files_with(root: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(dir) = std::fs::read_dir(root) else {
        return;
    };
    for e in dir.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_with(&p, ext, out);
        } else if p.extension().is_some_and(|e| e == ext) {
            out.push(p);
        }
    }
}

fn pack(sections: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in sections {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s);
    }
    out
}

fn put(dir: &Path, name: &str, bytes: &[u8], count: &mut usize) {
    std::fs::create_dir_all(dir).expect("create seed dir");
    std::fs::write(dir.join(name), bytes).expect("write seed");
    *count += 1;
}

fn main() {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| asdf_testkit::workspace_root().join("fuzz").join("corpus"));
    let corpus = asdf_testkit::corpus_dir();
    let mut n = 0;

    let mut asdf_files = Vec::new();
    files_with(&corpus, "asdf", &mut asdf_files);
    asdf_files.sort();
    for (i, p) in asdf_files.iter().enumerate() {
        let bytes = std::fs::read(p).expect("read corpus file");
        let name = format!("{i:03}.asdf");
        put(&out.join("asdf_open"), &name, &bytes, &mut n);
        put(&out.join("block_parse"), &name, &bytes, &mut n);
        let Ok(f) = asdf::AsdfFile::from_bytes(&bytes[..], &Default::default()) else {
            continue;
        };
        let Some(range) = f.tree_range() else {
            continue;
        };
        let tree = &bytes[range];
        put(&out.join("yaml_roundtrip"), &name, tree, &mut n);
        put(&out.join("yaml_differential"), &name, tree, &mut n);
        let blocks: Vec<Vec<u8>> = (0..f.blocks().len() as i64)
            .filter_map(|b| f.block_data(b).ok().map(|d| d.into_owned()))
            .collect();
        let mut sections: Vec<&[u8]> = vec![tree];
        sections.extend(blocks.iter().map(|b| &b[..]));
        put(&out.join("ndarray_read"), &name, &pack(&sections), &mut n);
    }

    let mut yaml_files = Vec::new();
    files_with(&corpus, "yaml", &mut yaml_files);
    yaml_files.sort();
    for (i, p) in yaml_files.iter().enumerate() {
        let bytes = std::fs::read(p).expect("read corpus file");
        for target in ["yaml_roundtrip", "yaml_differential"] {
            put(&out.join(target), &format!("{i:03}.yaml"), &bytes, &mut n);
        }
        put(
            &out.join("ndarray_read"),
            &format!("{i:03}.yaml"),
            &pack(&[&bytes]),
            &mut n,
        );
    }

    let mut ra_files = Vec::new();
    files_with(&corpus, "ra", &mut ra_files);
    ra_files.sort();
    for (i, p) in ra_files.iter().enumerate() {
        let bytes = std::fs::read(p).expect("read corpus file");
        if bytes.len() <= 1 << 20 {
            put(
                &out.join("rawarray_read"),
                &format!("{i:03}.ra"),
                &bytes,
                &mut n,
            );
        }
    }

    let mut awkd_files = Vec::new();
    files_with(&corpus, "awkd", &mut awkd_files);
    awkd_files.sort();
    for (i, p) in awkd_files.iter().enumerate() {
        let f = asdf_awkward::AwkdFile::open(p).expect("open corpus .awkd");
        let names = f.entry_names().to_vec();
        let blobs: Vec<(String, Vec<u8>)> = names
            .iter()
            .filter_map(|e| {
                let b = f.get(e, 64 << 20).ok()??;
                Some((e.clone(), b.into_owned()))
            })
            .collect();
        for (j, array) in f.array_names().iter().enumerate() {
            let schema_name = format!("{array}.json");
            let Some((_, schema)) = blobs.iter().find(|(n, _)| *n == schema_name) else {
                continue;
            };
            let mut sections: Vec<&[u8]> = vec![schema];
            for (name, bytes) in &blobs {
                if name != &schema_name {
                    sections.push(name.as_bytes());
                    sections.push(bytes);
                }
            }
            put(
                &out.join("awkward_schema"),
                &format!("{i:03}-{j}.seed"),
                &pack(&sections),
                &mut n,
            );
        }
    }
    // Parquet files of every column shape the readers take, written by the crate.
    let arrays = [
        serde_json::json!([{"x": 1.5, "n": [1, 2], "s": "a"}, {"x": 2.5, "n": [], "s": "bé"}]),
        serde_json::json!([[1.0, 2.0], [], [3.5]]),
        serde_json::json!([{"x": null, "n": [1, null], "s": null}, {"x": 3, "n": null, "s": "c"}]),
        serde_json::json!([[[1, 2], []], [[3]]]),
    ];
    let tmp = std::env::temp_dir().join(format!("fuzz-seed-{}.parquet", std::process::id()));
    for (i, a) in arrays.iter().enumerate() {
        let layout = asdf_awkward::Layout::from_json(a).expect("seed array");
        asdf_awkward::parquet_io::write_parquet(&layout, &tmp).expect("write seed parquet");
        let bytes = std::fs::read(&tmp).expect("read seed parquet");
        put(
            &out.join("parquet_read"),
            &format!("{i:03}.parquet"),
            &bytes,
            &mut n,
        );
    }
    let _ = std::fs::remove_file(&tmp);
    println!("wrote {n} seeds under {}", out.display());
}
