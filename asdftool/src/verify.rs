//! `verify`: parse everything, decode every block, check every checksum, materialize every
//! array, resolve every reference.

use std::fmt::Write as _;
use std::path::Path;

use asdf::block::{ChecksumPolicy, ChecksumStatus};
use asdf::ArrayKind;
use rayon::prelude::*;

use crate::error::Result;
use crate::input;
use crate::sniff::{sniff_path, Format};

pub use crate::report::Report;

/// Verifies the file at `path` (any supported format).
pub fn verify(path: &Path, verbose: bool) -> Result<Report> {
    match sniff_path(path)? {
        Format::Asdf => verify_asdf(path, verbose),
        Format::RawArray => {
            let a = input::read_ra(path)?;
            Ok(Report {
                lines: vec![format!("rawarray: shape {:?}, {}", a.shape(), a.datatype())],
                arrays: 1,
                ..Report::default()
            })
        }
        Format::Npy => {
            let (a, _) = crate::npy::read(&input::read_bytes(path)?)
                .map_err(|e| crate::error::CliError::invalid(path, e))?;
            Ok(Report {
                lines: vec![format!("npy: shape {:?}, {}", a.shape(), a.datatype())],
                arrays: 1,
                ..Report::default()
            })
        }
        Format::Awkd => crate::awk::verify(path),
    }
}

/// Whether opening failed on the blocks (which a salvage scan may get around).
fn is_block_error(e: &asdf::AsdfError) -> bool {
    match e {
        asdf::AsdfError::Block(_) => true,
        asdf::AsdfError::File { source, .. } => is_block_error(source),
        _ => false,
    }
}

/// Decodes every block and checks its checksum; whether any failed (or the layout needed a
/// warning), which makes a salvage summary worth printing.
fn check_blocks(file: &asdf::AsdfFile, verbose: bool, r: &mut Report) -> bool {
    let blocks = file.blocks();
    r.blocks = blocks.len();
    let mut trouble = !blocks.layout().warnings.is_empty();
    let bar = crate::progress::bar(blocks.len() as u64, "checking blocks");
    let results: Vec<_> = (0..blocks.len())
        .into_par_iter()
        .map(|i| {
            let res = blocks.verify(i as i64, ChecksumPolicy::AcceptLegacy);
            bar.inc(1);
            res
        })
        .collect();
    bar.finish_and_clear();
    for (info, res) in blocks.blocks().iter().zip(results) {
        match res {
            Ok(status) => {
                if verbose {
                    let what = match status {
                        ChecksumStatus::Absent => "no checksum",
                        ChecksumStatus::NotChecked => "checksum not checked",
                        ChecksumStatus::Stored => "checksum OK (MD5 of the stored bytes)",
                        ChecksumStatus::Decoded => {
                            "checksum OK (legacy convention: MD5 of the decoded bytes)"
                        }
                    };
                    r.lines.push(format!(
                        "block {} at byte {}: {} bytes, {what}",
                        info.index,
                        info.offset,
                        info.data_size()
                    ));
                }
            }
            Err(e) => {
                trouble = true;
                r.fail(format!("block {} at byte {}: {e}", info.index, info.offset))
            }
        }
    }
    trouble
}

fn verify_asdf(path: &Path, verbose: bool) -> Result<Report> {
    input::check_readable(path)?;
    let mut r = Report::default();
    let file = match asdf::AsdfFile::open_with(path, &input::open_options()) {
        Ok(f) => f,
        Err(e) if is_block_error(&e) => {
            // The blocks cannot even be located: say so, and what a salvage scan would get.
            r.fail(e.to_string());
            r.lines.extend(crate::salvage::preview(path));
            return Ok(r);
        }
        Err(e) => return Err(crate::error::CliError::Invalid(e.to_string())),
    };
    for w in file.warnings() {
        r.lines.push(format!("warning: {w}"));
    }
    let mut block_trouble = check_blocks(&file, verbose, &mut r);
    // Every block's checksum was checked above: the array pass reads without hashing again.
    let mut opts = file.open_options().clone();
    opts.blocks.checksums = ChecksumPolicy::Skip;
    let unhashed = asdf::AsdfFile::open_with(path, &opts);
    let reader = match &unhashed {
        Ok(f) => f,
        Err(_) => &file,
    };
    let arrays = reader.arrays();
    r.arrays = arrays.len();
    let bar = crate::progress::bar(arrays.len() as u64, "reading arrays");
    let results: Vec<_> = arrays
        .par_iter()
        .map(|(p, kind)| {
            let res = match kind {
                ArrayKind::Chunked => reader.read(p).map(|a| (a, None)),
                ArrayKind::NdArray => reader.read_masked(p),
            };
            bar.inc(1);
            // Only what the report needs is kept, not the arrays.
            res.map(|(a, mask)| {
                (
                    a.shape().to_vec(),
                    a.datatype(),
                    mask.map(|m| m.iter().filter(|&&b| b).count()),
                )
            })
        })
        .collect();
    for ((p, _), res) in arrays.iter().zip(results) {
        match res {
            Ok((shape, dt, masked)) => {
                if verbose {
                    let mut line = format!("array {p}: shape {shape:?}, {dt}");
                    if let Some(m) = masked {
                        let _ = write!(line, ", {m} masked");
                    }
                    r.lines.push(line);
                }
            }
            Err(e) => {
                block_trouble = true;
                r.fail(format!("array {p}: {e}"))
            }
        }
    }
    bar.finish_and_clear();
    if block_trouble && r.failures > 0 {
        r.lines.extend(crate::salvage::preview(path));
    }
    if crate::refs::has_refs(file.tree()) {
        match crate::refs::resolve(file.tree(), Some(path), file.open_options()) {
            Ok(_) => {
                if verbose {
                    r.lines.push("references: all resolved".into());
                }
            }
            Err(e) => r.fail(e.to_string()),
        }
    }
    Ok(r)
}
