//! YAML parsers: on any input, the default engine (fast parser, reference parser for what it
//! leaves) gives exactly what the reference parser gives — the same tree (`Node::identical`:
//! tags, float bits, sharing) or the same error message — and the fast parser alone, where it
//! accepts the text, gives the reference tree too.
#![no_main]

use asdf_yaml::{parse_document, Engine, ParseOptions};
use libfuzzer_sys::fuzz_target;

fn parse(text: &str, engine: Engine) -> Result<asdf_yaml::Document, String> {
    let options = ParseOptions {
        engine,
        ..ParseOptions::default()
    };
    parse_document(text, &options).map_err(|e| e.to_string())
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let reference = parse(text, Engine::Reference);
    let auto = parse(text, Engine::Auto);
    let same = |a: &Result<asdf_yaml::Document, String>| match (a, &reference) {
        (Ok(a), Ok(r)) => {
            a.root.identical(&r.root) && a.warnings == r.warnings && a.tag_handles == r.tag_handles
        }
        (Err(a), Err(r)) => a == r,
        _ => false,
    };
    assert!(
        same(&auto),
        "Auto differs from Reference on {text:?}: {auto:?} vs {reference:?}"
    );
    let fast = parse(text, Engine::Fast);
    if fast.is_ok() {
        assert!(
            same(&fast),
            "Fast differs from Reference on {text:?}: {fast:?} vs {reference:?}"
        );
    }
});
