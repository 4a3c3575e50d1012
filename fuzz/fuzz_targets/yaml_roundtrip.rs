//! YAML tree: parse, emit, re-parse; the re-parsed tree equals the first one (NaN aside), and
//! the first emission is already a fixed point (see `tests/tests/fuzz_regressions.rs` for the
//! single-use-anchor case that once broke this).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(tree) = asdf_yaml::parse_bytes(data) else {
        return;
    };
    // Emitting may refuse some trees (a clear error), never panic.
    let Ok(text) = asdf_yaml::emit_to_string(&tree) else {
        return;
    };
    let again = asdf_yaml::parse_str(&text)
        .unwrap_or_else(|e| panic!("emitted text does not parse: {e}\n{text}"));
    if !text.contains(".nan") && !text.contains(".NaN") {
        assert!(again == tree, "re-parsed tree differs:\n{text}");
    }
    let text2 = asdf_yaml::emit_to_string(&again).expect("re-emit");
    assert_eq!(text, text2, "emission is not a fixed point");
});
