//! Every asdf-standard reference file (all standard versions, `.asdf` and `.yaml` twins)
//! validates, by the built-in checks and against the asdf-standard schemas of the test venv;
//! and each one with a broken ndarray datatype is rejected at that node.
#![cfg(feature = "full")]

use crate::common;

use std::path::PathBuf;

use asdf_schema::{check_builtin, tree_from_asdf_bytes, SchemaValidator, DEFAULT_MAX_TREE_BYTES};
use asdf_yaml::{Node, Value};

fn reference_files() -> Vec<PathBuf> {
    let root = asdf_testkit::corpus_file("asdf-standard/reference_files");
    let mut files = Vec::new();
    for v in std::fs::read_dir(&root).unwrap() {
        let v = v.unwrap().path();
        if !v.is_dir() || v.file_name().unwrap() == "generate" {
            continue;
        }
        for f in std::fs::read_dir(&v).unwrap() {
            let f = f.unwrap().path();
            let ext = f.extension().and_then(|e| e.to_str());
            if matches!(ext, Some("asdf") | Some("yaml")) {
                files.push(f);
            }
        }
    }
    files.sort();
    // 7 versions x 31 files.
    assert_eq!(files.len(), 7 * 31, "reference files in {}", root.display());
    files
}

fn read_tree(p: &PathBuf) -> Node {
    let whole = tree_from_asdf_bytes(&std::fs::read(p).unwrap(), DEFAULT_MAX_TREE_BYTES)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    // Reading only the tree's lines gives the same tree.
    let lines = asdf_schema::read_tree(p, DEFAULT_MAX_TREE_BYTES).unwrap();
    assert!(lines == whole, "{}", p.display());
    whole
}

#[test]
fn tree_size_ceiling() {
    let f = asdf_testkit::corpus_file("asdf-standard/reference_files/1.6.0/basic.asdf");
    let err = asdf_schema::read_tree(&f, 100).unwrap_err();
    assert!(
        matches!(err, asdf_schema::SchemaError::TooLarge { limit: 100, .. }),
        "{err}"
    );
    let err = tree_from_asdf_bytes(&std::fs::read(&f).unwrap(), 100).unwrap_err();
    assert!(
        matches!(err, asdf_schema::SchemaError::TooLarge { .. }),
        "{err}"
    );
    // Blocks are never read: a tree ending at `...` parses even with a ceiling just above it.
    let text = std::fs::read(&f).unwrap();
    let end = text.windows(5).position(|w| w == b"\n...\n").unwrap() + 5;
    assert!(asdf_schema::read_tree(&f, end).is_ok());
    let mut bad = text[..end].to_vec();
    bad[20] = 0xff;
    assert!(matches!(
        tree_from_asdf_bytes(&bad, DEFAULT_MAX_TREE_BYTES),
        Err(asdf_schema::SchemaError::NotUtf8 { offset: 20 })
    ));
}

/// The pointer of the first ndarray node with a `datatype` key, if any.
fn first_ndarray(n: &Node, ptr: String) -> Option<String> {
    if n.tag().is_some_and(|t| t.contains("core/ndarray-")) && n.get("datatype").is_some() {
        return Some(ptr);
    }
    match n.value() {
        Value::Map(m) => m
            .iter()
            .find_map(|(k, v)| first_ndarray(v, format!("{ptr}/{}", k.as_str()?))),
        Value::Seq(s) => s
            .iter()
            .enumerate()
            .find_map(|(i, v)| first_ndarray(v, format!("{ptr}/{i}"))),
        _ => None,
    }
}

fn break_datatype(tree: &Node, ptr: &str) -> Node {
    let mut t = tree.clone();
    let arr = t.pointer_mut(ptr).unwrap();
    arr.as_map_mut().unwrap().insert("datatype", "int33");
    t
}

#[test]
fn reference_files_pass_builtin_checks() {
    let mut broken = 0;
    for f in reference_files() {
        let tree = read_tree(&f);
        let v = check_builtin(&tree);
        assert!(v.is_empty(), "{}: {v:?}", f.display());
        if let Some(ptr) = first_ndarray(&tree, String::new()) {
            let v = check_builtin(&break_datatype(&tree, &ptr));
            assert_eq!(v.len(), 1, "{}", f.display());
            assert_eq!(v[0].pointer, format!("{ptr}/datatype"));
            broken += 1;
        }
    }
    assert!(broken > 100, "only {broken} files with an ndarray");
}

#[test]
fn reference_files_validate_against_the_venv_schemas() {
    let py = asdf_testkit::require_python!();
    let v = SchemaValidator::new(common::venv_store(&py));
    let mut tagged = 0;
    for f in reference_files() {
        let tree = read_tree(&f);
        let got = v.validate_tags(&tree).unwrap();
        assert!(got.is_empty(), "{}: {got:?}", f.display());
        if tree.tag().is_some() {
            tagged += 1;
        }
        if let Some(ptr) = first_ndarray(&tree, String::new()) {
            let got = v.validate_tags(&break_datatype(&tree, &ptr)).unwrap();
            assert!(
                got.iter().any(|x| x.pointer == ptr),
                "{}: broken datatype at {ptr} not reported: {got:?}",
                f.display()
            );
        }
    }
    assert_eq!(
        tagged,
        7 * 31,
        "every reference tree has a core/asdf root tag"
    );
}
