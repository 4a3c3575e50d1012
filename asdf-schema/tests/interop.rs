//! Agreement with Python asdf 6.0.0's schema validation on every case of the broken-tree set
//! (and on the valid ones): the same verdict, the same rules, at the same nodes.
//!
//! Python reports the path of an error found while walking tagged nodes relative to that node
//! (its `absolute_path` is empty for `/b` when `/b` is a tagged node reached by the tag walk),
//! so without a custom schema our pointer must *end with* Python's path; with a custom schema
//! Python's paths are absolute and must be equal.
#![cfg(feature = "full")]

use crate::common::*;
use asdf_schema::SchemaValidator;

const SCRIPT: &str = r#"
import sys, json, warnings
import asdf, asdf.schema
warnings.simplefilter("ignore")
for arg in sys.argv[1:]:
    path, _, custom = arg.partition("=")
    custom = custom or None
    with asdf.open(path, _force_raw_types=True, lazy_load=False, custom_schema=custom) as af:
        schema = asdf.schema.load_schema(custom) if custom else {}
        v = asdf.schema.get_validator(schema, af)
        errors = sorted({("".join("/" + str(p) for p in e.absolute_path), e.validator) for e in v.iter_errors(af.tree)})
        try:
            af.validate()
            ok = True
        except asdf.exceptions.ValidationError:
            ok = False
    print(json.dumps({"errors": errors, "valid": ok}))
"#;

#[test]
fn schema_validation_agrees_with_python_asdf() {
    let py = asdf_testkit::require_python!();
    let dir = asdf_testkit::TempDir::new("schema-interop");
    let custom = dir.join("custom.yaml");
    std::fs::write(&custom, CUSTOM).unwrap();
    let mut args = Vec::new();
    for case in CASES {
        let p = dir.join(&format!("{}.asdf", case.name));
        std::fs::write(&p, text(case)).unwrap();
        let mut a = p.display().to_string();
        if case.custom {
            a = format!("{a}={}", custom.display());
        }
        args.push(a);
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = String::from_utf8(asdf_testkit::run_python(&py, SCRIPT, &argv)).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), CASES.len(), "{out}");

    let v = SchemaValidator::new(venv_store(&py));
    for (case, line) in CASES.iter().zip(lines) {
        let py_result: serde_json::Value = serde_json::from_str(line).unwrap();
        let py_valid = py_result["valid"].as_bool().unwrap();
        let py_errors: Vec<(String, String)> = py_result["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e[0].as_str().unwrap().to_string(),
                    e[1].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let ours = pairs(&schema_violations(&v, case));
        assert_eq!(
            ours.is_empty(),
            py_valid,
            "case {}: verdict; ours {ours:?}, python {py_errors:?}",
            case.name
        );
        assert_eq!(ours.is_empty(), py_errors.is_empty(), "case {}", case.name);
        // The expected list of the case is what we report...
        assert_eq!(ours, expected(case.schema), "case {}", case.name);
        // ...and each of Python's errors is one of ours, same rule, same node.
        let mut rules_py: Vec<&str> = py_errors.iter().map(|(_, r)| r.as_str()).collect();
        let mut rules_ours: Vec<&str> = ours.iter().map(|(_, r)| r.as_str()).collect();
        rules_py.sort();
        rules_ours.sort();
        assert_eq!(
            rules_ours, rules_py,
            "case {}: rules; python {py_errors:?}",
            case.name
        );
        for (p, rule) in &py_errors {
            let hit = ours.iter().any(|(q, r)| {
                r == rule
                    && if case.custom {
                        q == p
                    } else {
                        q.ends_with(p.as_str())
                    }
            });
            assert!(
                hit,
                "case {}: python's {p} {rule} not among ours {ours:?}",
                case.name
            );
        }
    }
}

const VERDICTS: &str = r#"
import sys, json, warnings
import asdf
warnings.simplefilter("ignore")
for path in sys.argv[1:]:
    with asdf.open(path, _force_raw_types=True) as af:
        try:
            af.validate()
            print(json.dumps([path, True]))
        except asdf.exceptions.ValidationError as e:
            print(json.dumps([path, False]))
"#;

/// The reference files of ASDF Standard 1.6.0 as they are (valid for both) and with the datatype
/// of their first ndarray broken (invalid for both).
#[test]
fn reference_file_verdicts_agree_with_python_asdf() {
    let py = asdf_testkit::require_python!();
    let v = SchemaValidator::new(venv_store(&py));
    let dir = asdf_testkit::TempDir::new("schema-interop-ref");
    let src = asdf_testkit::corpus_file("asdf-standard/reference_files/1.6.0");
    let mut files: Vec<(String, bool)> = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for f in entries {
        if f.extension().and_then(|e| e.to_str()) != Some("asdf") {
            continue;
        }
        let tree = asdf_schema::read_tree(&f, 1 << 20).unwrap();
        let ours = v.validate_tags(&tree).unwrap();
        assert!(ours.is_empty(), "{}: {ours:?}", f.display());
        files.push((f.display().to_string(), true));
        // Break the first ndarray's datatype and write the tree alone (no blocks needed: the
        // raw tree is validated).
        let mut broken = tree.clone();
        let Some(arr) = broken
            .as_map_mut()
            .unwrap()
            .iter_mut()
            .map(|(_, v)| v)
            .find(|n| {
                n.tag().is_some_and(|t| t.contains("core/ndarray-")) && n.get("datatype").is_some()
            })
        else {
            continue;
        };
        arr.as_map_mut().unwrap().insert("datatype", "float80");
        let ours = v.validate_tags(&broken).unwrap();
        assert!(!ours.is_empty(), "{}", f.display());
        let out = dir.join(&format!(
            "broken-{}",
            f.file_name().unwrap().to_str().unwrap()
        ));
        let text = asdf_yaml::emit_to_string(&broken).unwrap();
        std::fs::write(&out, format!("#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n{text}")).unwrap();
        files.push((out.display().to_string(), false));
    }
    assert!(files.len() > 25, "{files:?}");
    let argv: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    let out = String::from_utf8(asdf_testkit::run_python(&py, VERDICTS, &argv)).unwrap();
    let got: Vec<(String, bool)> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got, files);
}
