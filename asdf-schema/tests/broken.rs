//! Deliberately broken trees: each rejected with the right pointer and rule, by the built-in
//! checks and by full validation against the asdf-standard schemas of the test venv.
#![cfg(feature = "full")]

use crate::common::*;
use asdf_schema::{check_builtin, SchemaValidator};

#[test]
fn builtin_checks_reject_each_broken_tree_at_its_node() {
    for case in CASES {
        let got = pairs(&check_builtin(&tree(case)));
        assert_eq!(got, expected(case.builtin), "case {}", case.name);
    }
}

#[test]
fn schemas_reject_each_broken_tree_at_its_node() {
    let py = asdf_testkit::require_python!();
    let v = SchemaValidator::new(venv_store(&py));
    assert!(v.store().knows_tag("tag:stsci.edu:asdf/core/ndarray-1.1.0"));
    for case in CASES {
        let got = pairs(&schema_violations(&v, case));
        assert_eq!(got, expected(case.schema), "case {}", case.name);
    }
}

#[test]
fn report_lists_every_violation() {
    let py = asdf_testkit::require_python!();
    let dir = asdf_testkit::TempDir::new("schema-report");
    let custom = dir.join("custom.yaml");
    std::fs::write(&custom, CUSTOM).unwrap();
    let body = "a: !core/ndarray-1.1.0 {data: [[1, 2]], datatype: int64, shape: [1, 2], strides: [8]}\nb: !core/software-1.0.0 {name: x}\n";
    let t = asdf_yaml::parse_str(&format!("{HEAD}{body}...\n")).unwrap();
    let opts = asdf_schema::ValidateOptions {
        custom_schema: Some(custom),
        python: Some(py),
        use_env_path: false,
        ..Default::default()
    };
    let report = asdf_schema::validate_file_tree(&t, &opts).unwrap();
    let got = pairs(&report.violations);
    assert_eq!(
        got,
        expected(&[
            ("/a/strides", "strides-length"),
            ("/a", "max_ndim"),
            ("/b", "required")
        ])
    );
    // The builtin and the schema "required" messages are the same text: reported once.
    assert_eq!(report.violations.len(), 3, "{report}");
    let text = report.to_string();
    assert!(text.starts_with("3 violations:\n"), "{text}");
    assert!(
        text.contains("/a: [max_ndim] Wrong number of dimensions: Expected max of 1, got 2"),
        "{text}"
    );
}

#[test]
fn deep_inline_data_against_the_real_ndarray_schema() {
    let py = asdf_testkit::require_python!();
    let v = SchemaValidator::new(venv_store(&py));
    let mut data = asdf_yaml::Node::from(1);
    for _ in 0..(asdf_schema::MAX_VALIDATION_DEPTH - 2) {
        data = asdf_yaml::Node::sequence([data]);
    }
    let arr = asdf_yaml::Node::mapping([("data", data), ("datatype", "int8".into())])
        .with_tag("tag:stsci.edu:asdf/core/ndarray-1.1.0");
    let tree = asdf_yaml::Node::mapping([("a", arr.clone())]);
    assert_eq!(v.validate_tags(&tree).unwrap(), vec![]);
    // One level deeper than the limit below the tagged node: refused, not overflowed.
    let mut wrapped = arr;
    let d = wrapped.get_mut("data").unwrap();
    *d = asdf_yaml::Node::sequence([d.clone()]);
    let tree = asdf_yaml::Node::mapping([("a", wrapped)]);
    let got = pairs(&v.validate_tags(&tree).unwrap());
    assert_eq!(got, expected(&[("/a", "depth")]));
}

#[test]
fn every_venv_schema_compiles() {
    let py = asdf_testkit::require_python!();
    let v = SchemaValidator::new(venv_store(&py));
    assert!(v.store().len() >= 50, "{} schemas", v.store().len());
    let failed = v.compile_all();
    // Only the legacy wcs schemas fail: they refer to transform schemas that live in the
    // separate asdf-transform-schemas package, not installed in the venv.
    assert!(failed.len() <= 4, "{failed:#?}");
    for (id, e) in &failed {
        assert!(
            id.starts_with("http://stsci.edu/schemas/asdf/wcs/"),
            "{id}: {e}"
        );
        assert!(
            e.to_string().contains("transform/transform-1."),
            "{id}: {e}"
        );
    }
}

/// A schema whose `definitions` holds a non-schema entry (rad 1.2.1's catalogue tables write
/// `definitions: {$ref: "..."}`) breaks the draft-4 metaschema where validation never looks:
/// it compiles, as Python asdf uses it, and still validates what it says. A schema broken where
/// it matters is still refused with the metaschema's complaint.
#[test]
fn stray_definitions_are_tolerated_and_real_errors_are_not() {
    let v = SchemaValidator::new(asdf_schema::SchemaStore::new());
    let schema = serde_json::json!({
        "definitions": {"$ref": "asdf://example.org/elsewhere#/definitions"},
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    });
    let good = asdf_yaml::parse_str("n: 3").unwrap();
    let bad = asdf_yaml::parse_str("n: three").unwrap();
    assert_eq!(
        v.validate_with_schema(&good, &schema, "stray").unwrap(),
        vec![]
    );
    let got = pairs(&v.validate_with_schema(&bad, &schema, "stray").unwrap());
    assert_eq!(got, expected(&[("/n", "type")]));
    let broken = serde_json::json!({"type": "object", "properties": {"n": {"type": 7}}});
    let e = v
        .validate_with_schema(&good, &broken, "broken")
        .unwrap_err();
    assert!(e.to_string().contains("broken"), "{e}");
}
