//! Shared cases for the integration tests.
#![allow(dead_code)]

use std::path::Path;

use asdf_schema::{SchemaStore, SchemaValidator, Violation};
use asdf_yaml::Node;

pub(crate) const HEAD: &str = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nasdf_library: !core/software-1.0.0 {name: x, version: '1'}\n";

/// A custom schema using the ASDF keywords and a tag wildcard.
pub(crate) const CUSTOM: &str = "%YAML 1.1\n---\n$schema: http://stsci.edu/schemas/yaml-schema/draft-01\n\
id: http://example.org/schemas/custom-1.0.0\ntype: object\nproperties:\n  a:\n    max_ndim: 1\n    datatype: float64\n  \
b:\n    tag: 'tag:stsci.edu:asdf/core/software-1.*'\n  n:\n    ndim: 2\n  e:\n    datatype: int16\n    exact_datatype: true\n...\n";

/// One case: a file body, whether the custom schema applies, and the expected schema-level
/// violations `(pointer, rule)` (what Python asdf also reports) and built-in ones.
pub(crate) struct Case {
    pub name: &'static str,
    pub body: &'static str,
    pub custom: bool,
    pub schema: &'static [(&'static str, &'static str)],
    pub builtin: &'static [(&'static str, &'static str)],
}

pub(crate) const CASES: &[Case] = &[
    Case { name: "ok", body: "a: !core/ndarray-1.1.0 {data: [1, 2], datatype: int64, shape: [2]}\n", custom: false, schema: &[], builtin: &[] },
    Case { name: "ok-custom", body: "a: !core/ndarray-1.1.0 {data: [1, 2], datatype: int32, shape: [2]}\nb: !core/software-1.0.0 {name: y, version: '2'}\nn: !core/ndarray-1.1.0 {data: [[1]], datatype: int8, shape: [1, 1]}\ne: !core/ndarray-1.1.0 {source: 0, datatype: int16, byteorder: big, shape: [3]}\n", custom: true, schema: &[], builtin: &[] },
    Case { name: "wrong-datatype", body: "a: !core/ndarray-1.1.0 {data: [1, 2], datatype: int33, shape: [2]}\n", custom: false, schema: &[("/a", "anyOf")], builtin: &[("/a/datatype", "datatype")] },
    Case { name: "unsafe-datatype", body: "a: !core/ndarray-1.1.0 {source: 0, datatype: complex64, byteorder: little, shape: [2]}\n", custom: true, schema: &[("/a", "datatype")], builtin: &[] },
    Case { name: "inexact-datatype", body: "e: !core/ndarray-1.1.0 {source: 0, datatype: int8, byteorder: big, shape: [3]}\n", custom: true, schema: &[("/e", "datatype")], builtin: &[] },
    Case { name: "strides-mismatch", body: "a: !core/ndarray-1.1.0 {source: 0, datatype: int64, byteorder: little, shape: [2, 2], strides: [8]}\n", custom: false, schema: &[], builtin: &[("/a/strides", "strides-length")] },
    Case { name: "negative-shape", body: "a: !core/ndarray-1.1.0 {data: [1, 2], datatype: int64, shape: [-2]}\n", custom: false, schema: &[("/a", "anyOf")], builtin: &[("/a/shape/0", "minimum")] },
    Case { name: "bad-tag-version", body: "b: !core/software-9.9.9 {name: x, version: '1'}\n", custom: false, schema: &[], builtin: &[("/b", "tag")] },
    Case { name: "bad-tag-version-custom", body: "b: !core/software-9.9.9 {name: x, version: '1'}\n", custom: true, schema: &[("/b", "tag")], builtin: &[("/b", "tag")] },
    Case { name: "missing-required", body: "b: !core/software-1.0.0 {name: x}\n", custom: false, schema: &[("/b", "required")], builtin: &[("/b", "required")] },
    Case { name: "missing-required-history", body: "history: {entries: [!core/history_entry-1.0.0 {time: '2020-01-01'}]}\n", custom: false, schema: &[("/history", "anyOf"), ("/history/entries/0", "required")], builtin: &[("/history/entries/0", "required")] },
    Case { name: "ndim-beyond-max", body: "a: !core/ndarray-1.1.0 {data: [[1, 2]], datatype: int64, shape: [1, 2]}\n", custom: true, schema: &[("/a", "max_ndim")], builtin: &[] },
    Case { name: "wrong-ndim", body: "n: !core/ndarray-1.1.0 {source: 0, datatype: int8, byteorder: big, shape: [4]}\n", custom: true, schema: &[("/n", "ndim")], builtin: &[] },
    Case { name: "both-source-and-data", body: "a: !core/ndarray-1.1.0 {source: 0, data: [1], datatype: int64, byteorder: little, shape: [1]}\n", custom: false, schema: &[("/a", "anyOf")], builtin: &[("/a", "oneOf")] },
    Case { name: "bad-complex", body: "c: !core/complex-1.0.0 '1+2k'\n", custom: false, schema: &[("/c", "pattern")], builtin: &[("/c", "pattern")] },
    Case { name: "bad-integer-sign", body: "i: !core/integer-1.1.0 {sign: '*', words: !core/ndarray-1.1.0 {data: [1], datatype: uint32, shape: [1]}}\n", custom: false, schema: &[("/i/sign", "pattern")], builtin: &[("/i/sign", "pattern")] },
];

pub(crate) fn text(case: &Case) -> String {
    format!("{HEAD}{}...\n", case.body)
}

pub(crate) fn tree(case: &Case) -> Node {
    asdf_yaml::parse_str(&text(case)).unwrap()
}

pub(crate) fn pairs(v: &[Violation]) -> Vec<(String, String)> {
    let mut p: Vec<(String, String)> = v
        .iter()
        .map(|v| (v.pointer.clone(), v.rule.clone()))
        .collect();
    p.sort();
    p.dedup();
    p
}

pub(crate) fn expected(list: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut p: Vec<(String, String)> = list
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    p.sort();
    p
}

/// The asdf-standard schemas of the interop venv.
pub(crate) fn venv_store(python: &Path) -> SchemaStore {
    let dirs = asdf_schema::python_resource_dirs(python).expect("the venv has asdf_standard");
    let mut store = SchemaStore::new();
    for d in dirs {
        store.add_dir(&d).unwrap();
    }
    store
}

/// Schema-level violations of a case: tag schemas, plus the custom schema when the case uses it.
pub(crate) fn schema_violations(v: &SchemaValidator, case: &Case) -> Vec<Violation> {
    let t = tree(case);
    let mut out = v.validate_tags(&t).unwrap();
    if case.custom {
        let doc = asdf_yaml::parse_str(CUSTOM).unwrap();
        let mut store = SchemaStore::new();
        store.add_document(&doc, "custom").unwrap();
        let schema = store
            .schema("http://example.org/schemas/custom-1.0.0")
            .unwrap()
            .clone();
        out.extend(v.validate_with_schema(&t, &schema, "custom").unwrap());
    }
    out
}
