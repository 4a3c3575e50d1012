//! What `verify` found, for every format.

/// What `verify` found.
#[derive(Debug, Default)]
pub struct Report {
    /// Lines to print (failures, and details when verbose).
    pub lines: Vec<String>,
    /// Number of failures.
    pub failures: usize,
    /// Number of blocks checked.
    pub blocks: usize,
    /// Number of arrays materialized.
    pub arrays: usize,
}

impl Report {
    pub(crate) fn fail(&mut self, msg: String) {
        self.failures += 1;
        self.lines.push(format!("FAILED {msg}"));
    }
}
