//! `salvage`: recover what a damaged ASDF file still holds into a new, valid file; and the
//! summary of such a scan that `verify` prints when blocks cannot be read.

use std::path::Path;

use asdf::block::salvage::{BlockState, Matching, Scan};
use asdf::{Salvage, WriteOptions};

use crate::error::{CliError, Result};

/// What `salvage` did.
#[derive(Debug, Default)]
pub struct SalvageReport {
    /// Lines to print: how blocks were matched, every block found damaged or rejected, every
    /// array not recovered and why.
    pub lines: Vec<String>,
    /// Arrays recovered.
    pub recovered: usize,
    /// Arrays not recovered.
    pub lost: usize,
    /// Blocks written.
    pub blocks: usize,
}

/// Whether `a` and `b` name the same existing file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Salvages `input` into `output` (crash-safely). Writing over `input` itself is refused unless
/// `replace_input`.
pub fn salvage(input: &Path, output: &Path, replace_input: bool) -> Result<SalvageReport> {
    if !replace_input && same_file(input, output) {
        return Err(CliError::Usage(format!(
            "{} is the input: salvage writes a new file (pass --replace-input to replace it)",
            output.display()
        )));
    }
    let map = asdf::block::map_file(input).map_err(|e| CliError::Invalid(e.to_string()))?;
    let options = crate::input::open_options();
    let s = asdf::salvage(&map, &options).map_err(|e| CliError::invalid(input, e))?;
    let mut r = SalvageReport {
        lines: describe_scan(&s.scan, &s.matching),
        recovered: s.recovered.len(),
        lost: s.lost.len(),
        blocks: s.block_count(),
    };
    for l in &s.lost {
        r.lines
            .push(format!("NOT RECOVERED array {}: {}", l.pointer, l.reason));
    }
    let opts = write_options(&s);
    s.write_path(output, &opts).map_err(|e| match e {
        asdf::AsdfError::Io { .. } | asdf::AsdfError::File { .. } => {
            CliError::io(output, std::io::Error::other(e.to_string()))
        }
        other => CliError::Unsupported(other.to_string()),
    })?;
    Ok(r)
}

/// The damaged file's ASDF Standard version when this library writes it, else 1.6.0.
fn write_options(s: &Salvage<'_>) -> WriteOptions {
    let v = s.header.standard_version.as_str();
    let known = matches!(
        v,
        "1.0.0" | "1.1.0" | "1.2.0" | "1.3.0" | "1.4.0" | "1.5.0" | "1.6.0" | "1.7.0"
    );
    WriteOptions {
        standard_version: if known { v.into() } else { "1.6.0".into() },
        ..crate::output::asdf_options()
    }
}

/// One line per fact of a scan: how blocks were numbered, each damaged or rejected block.
pub fn describe_scan(scan: &Scan, matching: &Matching) -> Vec<String> {
    let mut lines = Vec::new();
    let usable = scan.found.iter().filter(|f| f.state.is_usable()).count();
    let unverified = scan
        .found
        .iter()
        .filter(|f| f.state == BlockState::Unverified)
        .count();
    lines.push(format!(
        "found {} block header(s): {usable} usable ({unverified} without a checksum to confirm them), {} damaged; {} block magic(s) with an impossible header",
        scan.found.len(),
        scan.found.len() - usable,
        scan.rejected_count
    ));
    lines.push(match matching {
        Matching::Index { max_shift: 0 } => "block numbers: from the block index".to_string(),
        Matching::Index { max_shift } => format!(
            "block numbers: from the block index, each entry matched with the block nearest to it (up to {max_shift} byte(s) away)"
        ),
        Matching::Order {
            certain,
            unexplained_at: None,
        } => format!("block numbers: by file order ({certain} block(s))"),
        Matching::Order {
            certain,
            unexplained_at: Some(at),
        } => format!(
            "block numbers: by file order, certain for the first {certain} block(s) only (bytes that are not a block end at byte {at})"
        ),
    });
    for f in &scan.found {
        if let BlockState::Damaged(why) = &f.state {
            lines.push(format!("damaged block at byte {}: {why}", f.info.offset));
        }
    }
    for (at, why) in &scan.rejected {
        lines.push(format!("not a usable block header at byte {at}: {why}"));
    }
    if scan.rejected_count > scan.rejected.len() {
        lines.push(format!(
            "... and {} more",
            scan.rejected_count - scan.rejected.len()
        ));
    }
    lines
}

/// What a salvage scan of `path` would recover, for `verify` after a block failure: a few
/// lines, or why the scan itself cannot run.
pub fn preview(path: &Path) -> Vec<String> {
    let map = match asdf::block::map_file(path) {
        Ok(m) => m,
        Err(e) => return vec![format!("salvage scan: cannot read the file: {e}")],
    };
    match asdf::salvage(&map, &crate::input::open_options()) {
        Ok(s) => {
            let mut lines: Vec<String> = describe_scan(&s.scan, &s.matching)
                .into_iter()
                .map(|l| format!("salvage scan: {l}"))
                .collect();
            lines.push(format!(
                "salvage scan: `asdftool salvage` would recover {} of {} array(s) in blocks{}",
                s.recovered.len(),
                s.recovered.len() + s.lost.len(),
                if s.lost.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (not: {})",
                        s.lost
                            .iter()
                            .map(|l| l.pointer.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            ));
            lines
        }
        Err(e) => vec![format!("salvage scan: not possible: {e}")],
    }
}
