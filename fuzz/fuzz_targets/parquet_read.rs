//! Parquet: a file's bytes read as a layout (the crate's own page decoding for number, list and
//! string columns, arrow-rs for the rest), and its footer summarized.
#![no_main]

use std::sync::Once;

use libfuzzer_sys::fuzz_target;

static HOOK: Once = Once::new();

fuzz_target!(|data: &[u8]| {
    // A panic inside the parquet or arrow crates (parquet 59 unwraps a missing page header,
    // arrow-ipc 59 panics on an embedded schema's unsupported integer width) is contained by
    // `read_parquet` and `summarize_parquet`, which turn it into an error; any other still
    // aborts, as libFuzzer's hook does.
    HOOK.call_once(|| {
        let abort = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |p| {
            let upstream = |f: &str| f.contains("/parquet-") || f.contains("/arrow-");
            if !p.location().is_some_and(|l| upstream(l.file())) {
                abort(p)
            }
        }));
    });
    let path = std::env::temp_dir().join(format!("fuzz-parquet-{}.parquet", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(layout) = asdf_awkward::parquet_io::read_parquet(&path) {
        let n = layout.len();
        if n > 0 && n < 10_000 {
            let _ = layout.to_json();
        }
    }
    let _ = asdf_awkward::parquet_io::summarize_parquet(&path);
});
