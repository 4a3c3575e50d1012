//! Progress bars: shown on a terminal only, never when piped or with `-q`.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressStyle};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Silences every progress bar (`-q`).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// A bar of `len` steps labelled `what`, hidden unless standard error is a terminal.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    if QUIET.load(Ordering::Relaxed) || !std::io::stderr().is_terminal() || len < 2 {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed})") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_string());
    pb
}
