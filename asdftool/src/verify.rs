//! `verify`: parse everything, decode every block, check every checksum, materialize every
//! array, resolve every reference.

use std::fmt::Write as _;
use std::path::Path;

use asdf::block::{ChecksumPolicy, ChecksumStatus};
use asdf::ndarray::{BlockStore, ChunkedArray, NdArrayMeta, ReadLimits, Source, ZarrArray};
use asdf::yaml::Node;
use asdf::{ArrayKind, AsdfFile};
use rayon::prelude::*;

use crate::error::Result;
use crate::input;
use crate::sniff::{sniff_path, Format};

pub use crate::report::Report;

/// Verifies the file at `path` (any supported format).
pub fn verify(path: &Path, verbose: bool) -> Result<Report> {
    #[cfg(feature = "remote")]
    if let Some(url) = input::url_of(path) {
        return verify_remote(url, verbose);
    }
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
        fmt @ (Format::Awkd | Format::Npz | Format::AwkwardDir | Format::Parquet) => {
            crate::awk::verify(path, fmt)
        }
        Format::Fits => verify_fits(path, verbose),
    }
}

/// Reads every array of a FITS file's ASDF tree (image extensions included, masks counted).
fn verify_fits(path: &Path, verbose: bool) -> Result<Report> {
    let f = input::open_fits(path)?;
    let mut r = Report::default();
    for (p, kind) in f.arrays() {
        let res = match kind {
            ArrayKind::NdArray => f.read_masked(&p),
            _ => f.read(&p).map(|a| (a, None)),
        };
        match res {
            Ok((a, mask)) => {
                r.arrays += 1;
                if verbose {
                    let masked =
                        mask.map(|m| format!(", {} masked", m.iter().filter(|&&b| b).count()));
                    r.lines.push(format!(
                        "{p}: shape {:?}, {}{}",
                        a.shape(),
                        a.datatype(),
                        masked.unwrap_or_default()
                    ));
                }
            }
            Err(e) => r.fail(format!("{p}: {e}")),
        }
    }
    Ok(r)
}

/// What checking one array found: shape, datatype, masked count (when masked).
type Checked = std::result::Result<(Vec<usize>, String, Option<usize>), String>;

/// The arrays of the file, by index in `arrays`: those that are plain views into one block of
/// the file (grouped by that block) and the others (inline, external, chunked, masked).
fn group_by_block(file: &AsdfFile, arrays: &[(String, ArrayKind, &Node)]) -> Groups {
    let mut by_block = vec![Vec::new(); file.blocks().len()];
    let mut rest = Vec::new();
    for (a, (_, kind, node)) in arrays.iter().enumerate() {
        let block = match (kind, NdArrayMeta::from_node(node)) {
            (ArrayKind::NdArray, Ok(m)) if m.mask.is_none() => match m.source {
                Some(Source::Block(i)) => file.blocks().resolve(i).ok(),
                _ => None,
            },
            _ => None,
        };
        match block {
            Some(i) => by_block[i].push(a),
            None => rest.push(a),
        }
    }
    Groups { by_block, rest }
}

struct Groups {
    by_block: Vec<Vec<usize>>,
    rest: Vec<usize>,
}

/// Checks one plain array through `store` without copying its numbers.
fn check_plain(store: &(dyn BlockStore + Sync), node: &Node, limits: &ReadLimits) -> Checked {
    let meta = NdArrayMeta::from_node(node).map_err(|e| e.to_string())?;
    let (shape, dt) = meta.check_with(store, limits).map_err(|e| e.to_string())?;
    Ok((shape, dt.to_string(), None))
}

/// Reads one array of any kind (masks counted) from `file`.
fn check_read(file: &AsdfFile, kind: ArrayKind, node: &Node, limits: &ReadLimits) -> Checked {
    let res = match kind {
        ArrayKind::Chunked => ChunkedArray::from_node(node)
            .and_then(|c| c.read_with(file, limits))
            .map(|a| (a, None)),
        ArrayKind::Zarr => ZarrArray::open(node, file)
            .and_then(|z| z.read_with(file, limits))
            .map(|a| (a, None)),
        ArrayKind::NdArray => {
            NdArrayMeta::from_node(node).and_then(|m| m.read_masked_with(file, limits))
        }
    };
    // Only what the report needs is kept, not the arrays.
    res.map(|(a, mask)| {
        (
            a.shape().to_vec(),
            a.datatype().to_string(),
            mask.map(|m| m.iter().filter(|&&b| b).count()),
        )
    })
    .map_err(|e| e.to_string())
}

fn status_text(status: ChecksumStatus) -> &'static str {
    match status {
        ChecksumStatus::Absent => "no checksum",
        ChecksumStatus::NotChecked => "checksum not checked",
        ChecksumStatus::Stored => "checksum OK (MD5 of the stored bytes)",
        ChecksumStatus::Decoded => "checksum OK (legacy convention: MD5 of the decoded bytes)",
    }
}

/// Every block decoded once: its checksum checked, then the plain arrays viewing it checked
/// from the same decoded bytes (a compressed block shared by thousands of views is neither
/// decoded per view nor copied per view). Arrays of a block that fails go to `groups.rest`.
/// Returns whether any block failed (or the layout needed a warning), which makes a salvage
/// summary worth printing.
fn check_blocks(
    file: &AsdfFile,
    arrays: &[(String, ArrayKind, &Node)],
    groups: &mut Groups,
    checked: &mut [Option<Checked>],
    r: &mut Report,
    verbose: bool,
) -> bool {
    let mut trouble = !file.blocks().layout().warnings.is_empty();
    let limits = file.open_options().arrays;
    let bar = crate::progress::bar(file.blocks().len() as u64, "checking blocks");
    let results: Vec<_> = groups
        .by_block
        .par_iter()
        .enumerate()
        .map(|(i, mine)| {
            let res = file.with_checked_block(i as i64, ChecksumPolicy::AcceptLegacy, |s, st| {
                let arrays: Vec<Checked> = mine
                    .par_iter()
                    .map(|&a| check_plain(st, arrays[a].2, &limits))
                    .collect();
                (s, arrays)
            });
            bar.inc(1);
            res
        })
        .collect();
    bar.finish_and_clear();
    for ((info, res), mine) in file
        .blocks()
        .blocks()
        .iter()
        .zip(results)
        .zip(&groups.by_block)
    {
        match res {
            Ok((status, found)) => {
                if verbose {
                    r.lines.push(format!(
                        "block {} at byte {}: {} bytes, {}",
                        info.index,
                        info.offset,
                        info.data_size(),
                        status_text(status)
                    ));
                }
                for (&a, c) in mine.iter().zip(found) {
                    checked[a] = Some(c);
                }
            }
            Err(e) => {
                trouble = true;
                r.fail(format!("block {} at byte {}: {e}", info.index, info.offset));
                groups.rest.extend(mine);
            }
        }
    }
    trouble
}

/// Whether opening failed on the blocks (which a salvage scan may get around).
fn is_block_error(e: &asdf::AsdfError) -> bool {
    match e {
        asdf::AsdfError::Block(_) => true,
        asdf::AsdfError::File { source, .. } => is_block_error(source),
        _ => false,
    }
}

/// Opens the file to verify; when its blocks cannot even be located, records that in `r` with
/// what a salvage scan would recover, and returns `None`.
fn open_for_verify(path: &Path, r: &mut Report) -> Result<Option<AsdfFile>> {
    input::check_readable(path)?;
    match asdf::AsdfFile::open_with(path, &input::open_options()) {
        Ok(f) => Ok(Some(f)),
        Err(e) if is_block_error(&e) => {
            r.fail(e.to_string());
            r.lines.extend(crate::salvage::preview(path));
            Ok(None)
        }
        Err(e) => Err(crate::error::CliError::Invalid(e.to_string())),
    }
}

fn verify_asdf(path: &Path, verbose: bool) -> Result<Report> {
    let mut r = Report::default();
    let Some(file) = open_for_verify(path, &mut r)? else {
        return Ok(r);
    };
    for w in file.warnings() {
        r.lines.push(format!("warning: {w}"));
    }
    r.blocks = file.blocks().len();
    let arrays = asdf::find_array_nodes(file.tree());
    r.arrays = arrays.len();
    let mut groups = group_by_block(&file, &arrays);
    let mut checked: Vec<Option<Checked>> = vec![None; arrays.len()];
    let mut block_trouble =
        check_blocks(&file, &arrays, &mut groups, &mut checked, &mut r, verbose);
    // Every block's checksum was checked above: the other arrays (if any: opening parses the
    // tree again) are read without hashing.
    let unhashed = (!groups.rest.is_empty()).then(|| {
        let mut opts = file.open_options().clone();
        opts.blocks.checksums = ChecksumPolicy::Skip;
        asdf::AsdfFile::open_with(path, &opts)
    });
    let reader = match &unhashed {
        Some(Ok(f)) => f,
        _ => &file,
    };
    let limits = file.open_options().arrays;
    let bar = crate::progress::bar(groups.rest.len() as u64, "reading arrays");
    let results: Vec<Checked> = groups
        .rest
        .par_iter()
        .map(|&a| {
            let res = check_read(reader, arrays[a].1, arrays[a].2, &limits);
            bar.inc(1);
            res
        })
        .collect();
    bar.finish_and_clear();
    for (&a, c) in groups.rest.iter().zip(results) {
        checked[a] = Some(c);
    }
    for ((p, _, _), c) in arrays.iter().zip(checked) {
        match c {
            Some(Ok((shape, dt, masked))) if verbose => {
                let mut line = format!("array {p}: shape {shape:?}, {dt}");
                if let Some(m) = masked {
                    let _ = write!(line, ", {m} masked");
                }
                r.lines.push(line);
            }
            Some(Err(e)) => {
                block_trouble = true;
                r.fail(format!("array {p}: {e}"))
            }
            Some(Ok(_)) | None => {}
        }
    }
    if block_trouble && r.failures > 0 {
        r.lines.extend(crate::salvage::preview(path));
    }
    check_refs(&file, path, verbose, &mut r);
    input::release(unhashed);
    input::release(file);
    Ok(r)
}

fn check_refs(file: &AsdfFile, path: &Path, verbose: bool, r: &mut Report) {
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
}

/// `verify` of a remote file: every block fetched, decoded and checked, every array read (its
/// blocks fetched again only beyond the file's cache budget).
#[cfg(feature = "remote")]
fn verify_remote(url: &str, verbose: bool) -> Result<Report> {
    let mut r = Report::default();
    let file = match input::open_remote(url) {
        Ok(f) => f,
        Err(e) => {
            r.fail(e.to_string());
            return Ok(r);
        }
    };
    for w in file.warnings() {
        r.lines.push(format!("warning: {w}"));
    }
    for b in 0..file.block_count() {
        r.blocks += 1;
        match file.block_data(b as i64) {
            Ok(d) if verbose => r.lines.push(format!("block {b}: {} bytes, ok", d.len())),
            Ok(_) => {}
            Err(e) => r.fail(format!("block {b}: {e}")),
        }
    }
    for (p, _) in file.arrays() {
        r.arrays += 1;
        match file.read(&p) {
            Ok(a) if verbose => r.lines.push(format!(
                "array {p}: shape {:?}, {}",
                a.shape(),
                a.datatype()
            )),
            Ok(_) => {}
            Err(e) => r.fail(format!("array {p}: {e}")),
        }
    }
    if verbose {
        let t = file.traffic();
        r.lines.push(format!(
            "fetched {} bytes of {} in {} request(s) from {url}",
            t.bytes,
            file.size(),
            t.requests
        ));
    }
    Ok(r)
}
