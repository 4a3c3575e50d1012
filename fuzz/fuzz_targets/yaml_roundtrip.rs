//! YAML tree: parse, emit, re-parse; the re-parsed tree equals the first one (NaN aside), and
//! from the second round on emission is a fixed point. (The first emission may differ in layout
//! only: a single-use anchor is dropped, which can change flow/block style; see
//! `tests/tests/fuzz_regressions.rs`.)
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
    let third = asdf_yaml::parse_str(&text2)
        .unwrap_or_else(|e| panic!("re-emitted text does not parse: {e}\n{text2}"));
    let text3 = asdf_yaml::emit_to_string(&third).expect("re-emit");
    assert_eq!(text2, text3, "emission is not a fixed point");
});
