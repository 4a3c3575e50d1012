//! Schema sources without Python: a user directory with a manifest and schemas that refer to
//! each other by id (`asdf://` and `http://`), tag lookup through the manifest, the ASDF
//! keywords, a custom schema, and `ASDF_SCHEMA_PATH`.
#![cfg(feature = "full")]

use asdf_schema::{SchemaError, SchemaSources, SchemaStore, SchemaValidator, ValidateOptions};

const MANIFEST: &str = "id: asdf://example.org/demo/manifests/demo-1.0.0
extension_uri: asdf://example.org/demo/extensions/demo-1.0.0
tags:
- tag_uri: asdf://example.org/demo/tags/image-1.0.0
  schema_uri: asdf://example.org/demo/schemas/image-1.0.0
- tag_uri: asdf://example.org/demo/tags/pair-1.0.0
  schema_uris: [asdf://example.org/demo/schemas/pair-1.0.0]
";

const IMAGE: &str = "%YAML 1.1
---
$schema: http://stsci.edu/schemas/yaml-schema/draft-01
id: asdf://example.org/demo/schemas/image-1.0.0
type: object
properties:
  pixels:
    tag: tag:stsci.edu:asdf/core/ndarray-1.*
    ndim: 2
    datatype: float32
  meta:
    $ref: meta-1.0.0
  owner:
    $ref: http://example.org/schemas/person-1.0.0#/definitions/person
required: [pixels]
propertyOrder: [pixels, meta]
...
";

const META: &str = "id: asdf://example.org/demo/schemas/meta-1.0.0
type: object
properties:
  exposure: {type: number, minimum: 0}
additionalProperties: false
";

const PERSON: &str = "id: http://example.org/schemas/person-1.0.0
definitions:
  person:
    type: object
    required: [name]
    properties:
      name: {type: string, maxLength: 8}
";

const PAIR: &str = "id: asdf://example.org/demo/schemas/pair-1.0.0
type: array
items: {tag: 'asdf://example.org/demo/tags/**'}
minItems: 2
maxItems: 2
";

fn demo_dir() -> asdf_testkit::TempDir {
    let dir = asdf_testkit::TempDir::new("schema-store");
    std::fs::create_dir_all(dir.join("manifests")).unwrap();
    std::fs::create_dir_all(dir.join("schemas/nested")).unwrap();
    std::fs::write(dir.join("manifests/demo-1.0.0.yaml"), MANIFEST).unwrap();
    std::fs::write(dir.join("schemas/image-1.0.0.yaml"), IMAGE).unwrap();
    std::fs::write(dir.join("schemas/meta-1.0.0.yaml"), META).unwrap();
    std::fs::write(dir.join("schemas/nested/person-1.0.0.yml"), PERSON).unwrap();
    std::fs::write(dir.join("schemas/pair-1.0.0.yaml"), PAIR).unwrap();
    std::fs::write(dir.join("schemas/notes.txt"), "not a schema").unwrap();
    std::fs::write(dir.join("schemas/config.yaml"), "just: config\n").unwrap();
    dir
}

const TREE: &str = "%TAG ! tag:stsci.edu:asdf/
%TAG !demo! asdf://example.org/demo/tags/
---
good: !demo!image-1.0.0
  pixels: !core/ndarray-1.1.0 {source: 0, datatype: int16, byteorder: big, shape: [2, 2]}
  meta: {exposure: 1.5}
  owner: {name: ann}
bad: !demo!image-1.0.0
  pixels: !core/ndarray-1.1.0 {source: 0, datatype: float64, byteorder: big, shape: [4]}
  meta: {exposure: -1, extra: 1}
  owner: {name: a-very-long-name}
untagged_pixels: !demo!image-1.0.0
  pixels: {source: 0, datatype: float32, byteorder: big, shape: [2, 2]}
pairs: !demo!pair-1.0.0 [!demo!image-1.0.0 {pixels: !core/ndarray-1.1.0 [[1.5]]}, 3]
";

fn pairs(v: &[asdf_schema::Violation]) -> Vec<(&str, &str)> {
    let mut p: Vec<(&str, &str)> = v
        .iter()
        .map(|v| (v.pointer.as_str(), v.rule.as_str()))
        .collect();
    p.sort();
    p.dedup();
    p
}

#[test]
fn directory_schemas_manifests_refs_and_keywords() {
    let dir = demo_dir();
    let mut store = SchemaStore::new();
    assert_eq!(store.add_dir(dir.path()).unwrap(), 5);
    assert_eq!(store.len(), 4);
    assert_eq!(
        store.property_order("asdf://example.org/demo/tags/image-1.0.0"),
        Some(vec!["pixels".to_string(), "meta".to_string()])
    );
    let v = SchemaValidator::new(store);
    let tree = asdf_yaml::parse_str(TREE).unwrap();
    let got = v.validate_tags(&tree).unwrap();
    assert_eq!(
        pairs(&got),
        vec![
            ("/bad/meta", "additionalProperties"),
            ("/bad/meta/exposure", "minimum"),
            ("/bad/owner/name", "maxLength"),
            ("/bad/pixels", "datatype"),
            ("/bad/pixels", "ndim"),
            ("/pairs/0/pixels", "datatype"),
            ("/pairs/1", "tag"),
            ("/untagged_pixels/pixels", "tag"),
        ],
        "{got:#?}"
    );
    let msg = &got.iter().find(|x| x.rule == "datatype").unwrap().message;
    assert!(msg.contains("float64") && msg.contains("float32"), "{msg}");
}

#[test]
fn custom_schema_for_the_whole_tree() {
    let dir = demo_dir();
    let custom = dir.join("custom.yaml");
    std::fs::write(
        &custom,
        "type: object\nrequired: [good, missing]\nproperties:\n  good: {tag: 'asdf://example.org/demo/tags/image-*'}\n  bad: {$ref: 'asdf://example.org/demo/schemas/meta-1.0.0'}\n",
    )
    .unwrap();
    let tree = asdf_yaml::parse_str(TREE).unwrap();
    let opts = ValidateOptions {
        builtin: false,
        tag_schemas: false,
        custom_schema: Some(custom),
        schema_dirs: vec![dir.path().to_path_buf()],
        use_env_path: false,
        python: None,
        find_python: false,
    };
    let report = asdf_schema::validate_file_tree(&tree, &opts).unwrap();
    assert_eq!(
        pairs(&report.violations),
        vec![("", "required"), ("/bad", "additionalProperties")],
        "{report}"
    );
}

#[test]
fn env_path_and_errors() {
    let dir = demo_dir();
    // Only this test in this binary reads ASDF_SCHEMA_PATH.
    std::env::set_var("ASDF_SCHEMA_PATH", dir.path());
    let store = SchemaSources {
        env: true,
        ..Default::default()
    }
    .load()
    .unwrap();
    std::env::remove_var("ASDF_SCHEMA_PATH");
    assert!(store
        .schema("asdf://example.org/demo/schemas/meta-1.0.0")
        .is_some());
    assert_eq!(
        store.schema_uris_for_tag("asdf://example.org/demo/tags/pair-1.0.0"),
        vec!["asdf://example.org/demo/schemas/pair-1.0.0".to_string()]
    );
    assert!(store
        .schema_uris_for_tag("asdf://example.org/demo/tags/none-1.0.0")
        .is_empty());

    let missing = dir.join("no-such-dir");
    let err = SchemaSources {
        dirs: vec![missing],
        ..Default::default()
    }
    .load()
    .unwrap_err();
    assert!(matches!(err, SchemaError::Io { .. }), "{err}");

    let v = SchemaValidator::new(store);
    let err = v
        .validate_with_schema_uri(&asdf_yaml::Node::null(), "asdf://nowhere/x-1.0.0")
        .unwrap_err();
    assert!(matches!(err, SchemaError::UnknownSchema { .. }), "{err}");
    let bad = serde_json::json!({"type": 12});
    let err = v
        .validate_with_schema(&asdf_yaml::Node::null(), &bad, "bad")
        .unwrap_err();
    assert!(matches!(err, SchemaError::InvalidSchema { .. }), "{err}");
    let bad_kw = serde_json::json!({"max_ndim": "two"});
    assert!(v
        .validate_with_schema(&asdf_yaml::Node::null(), &bad_kw, "bad")
        .is_err());

    let mut s = SchemaStore::new();
    assert!(s.add_schema_text("[1, 2]", "list").is_err());
    assert!(s.add_schema_text("type: object", "no id").is_err());
    assert!(matches!(
        s.add_schema_text("a: [", "broken"),
        Err(SchemaError::Yaml { .. })
    ));
}

#[test]
fn deep_trees_do_not_overflow() {
    // Deeper than the YAML parser allows: a tree built in memory.
    let mut data = asdf_yaml::Node::from(1);
    for _ in 0..5000 {
        data = asdf_yaml::Node::sequence([data]);
    }
    let arr = asdf_yaml::Node::mapping([("data", data), ("datatype", "int8".into())])
        .with_tag("tag:stsci.edu:asdf/core/ndarray-1.1.0");
    let tree = asdf_yaml::Node::mapping([("a", arr)]);
    let mut store = SchemaStore::new();
    store
        .add_schema_text(
            "id: http://example.org/deep-1.0.0\ndefinitions:\n  d: {anyOf: [{type: integer}, {type: array, items: {$ref: '#/definitions/d'}}]}\nproperties:\n  a: {properties: {data: {$ref: '#/definitions/d'}}}\n",
            "deep",
        )
        .unwrap();
    let v = SchemaValidator::new(store);
    let got = v
        .validate_with_schema_uri(&tree, "http://example.org/deep-1.0.0")
        .unwrap();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        (got[0].pointer.as_str(), got[0].rule.as_str()),
        ("", "depth")
    );

    // At the limit: validated (no stack overflow), and the innermost value checked.
    let mut data = asdf_yaml::Node::from("x");
    for _ in 0..(asdf_schema::MAX_VALIDATION_DEPTH - 3) {
        data = asdf_yaml::Node::sequence([data]);
    }
    let arr = asdf_yaml::Node::mapping([("data", data)]);
    let tree = asdf_yaml::Node::mapping([("a", arr)]);
    let got = v
        .validate_with_schema_uri(&tree, "http://example.org/deep-1.0.0")
        .unwrap();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].rule, "anyOf");
}
