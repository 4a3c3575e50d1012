//! `edit`: the YAML tree in `$EDITOR`, written back in place when that cannot leave a torn
//! file, else the whole file rewritten atomically (blocks moved, index updated).
//!
//! Safety of the files involved:
//! * the scratch file the editor gets is created exclusively (`O_EXCL`), with a random name and
//!   mode 0600, so nothing planted in the temporary directory can be followed or read;
//! * an in-place update is one `pwrite` inside one 4 KiB page of the file, then `fsync`: a
//!   process killed at any point leaves the old tree or the new one, never a mix (a page is
//!   copied into the page cache whole). Any larger change rewrites the file atomically
//!   (temporary file, fsync, rename);
//! * a file reached through symbolic links is edited where the links lead, and the links stay.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use asdf::block::encode_index;
use asdf::AsdfFile;

use crate::error::{CliError, Result};
use crate::input;

/// How the edited tree was written back.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The editor changed nothing.
    Unchanged,
    /// Written over the old tree, using the padding before the first block.
    InPlace,
    /// The whole file was rewritten (the tree outgrew its space).
    Rewritten,
}

/// The parts of a file around its tree.
struct Parts {
    tree: std::ops::Range<usize>,
    /// End of the space the tree may use (the first block, or the end of the file).
    room_end: usize,
}

fn parts(bytes: &[u8], file: &AsdfFile<Vec<u8>>) -> Result<Parts> {
    let sections = asdf::layout::split(bytes).map_err(|e| CliError::Invalid(e.to_string()))?;
    let tree = sections
        .tree
        .unwrap_or(sections.blocks_start..sections.blocks_start);
    let room_end = match file.blocks().blocks().first() {
        Some(b) => usize::try_from(b.offset)
            .map_err(|_| CliError::Invalid("block offset overflows".into()))?,
        None => bytes.len(),
    };
    Ok(Parts { tree, room_end })
}

/// A whole new file: `bytes` with the tree replaced by `text`, blocks moved and the block
/// index rewritten with the new offsets.
fn rebuilt(bytes: &[u8], file: &AsdfFile<Vec<u8>>, p: &Parts, text: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len() + text.len());
    out.extend_from_slice(&bytes[..p.tree.start]);
    out.extend_from_slice(text);
    let blocks = file.blocks().blocks();
    if let (Some(first), Some(last)) = (blocks.first(), blocks.last()) {
        let new_first = out.len() as u64;
        let end = usize::try_from(last.end())
            .ok()
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| {
                CliError::Invalid("the last block runs past the end of the file".into())
            })?;
        out.extend_from_slice(&bytes[p.room_end..end]);
        if !last.header.is_streamed() && file.blocks().layout().index_offset.is_some() {
            let offsets: Vec<u64> = blocks
                .iter()
                .map(|b| b.offset - first.offset + new_first)
                .collect();
            out.extend_from_slice(&encode_index(&offsets));
        }
    }
    Ok(out)
}

/// The command that runs the editor: `$VISUAL`, `$EDITOR`, else `vi`.
fn editor() -> String {
    std::env::var("VISUAL")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|s| !s.trim().is_empty())
        })
        .unwrap_or_else(|| "vi".into())
}

/// The scratch file holding `text` for the editor: created exclusively (`O_EXCL`) in the
/// temporary directory with a random name and mode 0600; removed when dropped.
fn scratch_file(text: &[u8]) -> Result<tempfile::NamedTempFile> {
    let mut f = tempfile::Builder::new()
        .prefix("asdftool-edit-")
        .suffix(".yaml")
        .tempfile()
        .map_err(|e| CliError::io(&std::env::temp_dir(), e))?;
    f.write_all(text)
        .and_then(|()| f.flush())
        .map_err(|e| CliError::io(f.path(), e))?;
    Ok(f)
}

/// Edits the tree of the ASDF file at `path` in the user's editor.
pub fn edit(path: &Path) -> Result<Outcome> {
    // The file the links lead to: edited there, so that every link keeps pointing at it.
    let path = &std::fs::canonicalize(path).map_err(|e| CliError::io(path, e))?;
    let bytes = input::read_bytes(path)?;
    let file = AsdfFile::from_bytes(bytes.clone(), &input::open_options())
        .map_err(|e| CliError::invalid(path, e))?;
    let p = parts(&bytes, &file)?;
    let old = &bytes[p.tree.clone()];
    let scratch_file = scratch_file(old)?;
    let scratch = scratch_file.path();
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{} \"$1\"", editor()))
        .arg("sh")
        .arg(scratch)
        .status();
    // Read by name: editors often write a new file and rename it over the old one.
    let new = std::fs::read(scratch);
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => {
            return Err(CliError::Usage(format!(
                "the editor exited with {s}; {} is unchanged",
                path.display()
            )))
        }
        Err(e) => return Err(CliError::io(Path::new("sh"), e)),
    }
    let new = new.map_err(|e| CliError::io(scratch, e))?;
    drop(scratch_file);
    if new == old {
        return Ok(Outcome::Unchanged);
    }
    apply(path, &bytes, &file, &p, &new)
}

/// The size of the page a single in-place write must stay within: the page cache copies one page
/// of a `write` whole, so a process killed during the call leaves all of it or none.
const PAGE: usize = 4096;

/// Where `new` differs from `old` (same length, both starting at file offset `base`): the
/// offset and length of the changed span within them, if it lies in one [`PAGE`]-aligned page
/// of the file.
fn one_page_change_at(base: usize, old: &[u8], new: &[u8]) -> Option<(usize, usize)> {
    let first = old.iter().zip(new).position(|(a, b)| a != b)?;
    let last = old.iter().zip(new).rposition(|(a, b)| a != b)?;
    ((base + first) / PAGE == (base + last) / PAGE).then_some((first, last - first + 1))
}

/// Writes `data` at `offset` of the file at `path` with one positioned write, then syncs it.
#[cfg(unix)]
fn write_in_place(path: &Path, offset: u64, data: &[u8]) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| CliError::io(path, e))?;
    let n = f
        .write_at(data, offset)
        .map_err(|e| CliError::io(path, e))?;
    if n != data.len() {
        // Not expected within one page; the bytes written are a prefix of the new tree's
        // change, so finish the write rather than leave it.
        f.write_all_at(&data[n..], offset + n as u64)
            .map_err(|e| CliError::io(path, e))?;
    }
    f.sync_all().map_err(|e| CliError::io(path, e))
}

/// Writes `text` as the new tree of the file at `path` (whose content is `bytes`), after
/// checking that the result is a valid ASDF file.
fn apply(
    path: &Path,
    bytes: &[u8],
    file: &AsdfFile<Vec<u8>>,
    p: &Parts,
    text: &[u8],
) -> Result<Outcome> {
    let mut text = text.to_vec();
    if !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    let room = p.room_end - p.tree.start;
    let whole = rebuilt(bytes, file, p, &text)?;
    let check = AsdfFile::from_bytes(whole.clone(), &Default::default()).map_err(|e| {
        CliError::Invalid(format!(
            "the edited tree is not valid, {} is unchanged: {e}",
            path.display()
        ))
    })?;
    if check.standard_version() != file.standard_version() {
        return Err(CliError::Invalid(format!(
            "the ASDF Standard version may not change ({} to {}); {} is unchanged",
            file.standard_version(),
            check.standard_version(),
            path.display()
        )));
    }
    if text.len() <= room && !file.blocks().is_empty() {
        let mut region = text;
        region.resize(room, 0);
        let old_region = &bytes[p.tree.start..p.room_end];
        #[cfg(unix)]
        if let Some((at, span)) = one_page_change_at(p.tree.start, old_region, &region) {
            let offset = (p.tree.start + at) as u64;
            write_in_place(path, offset, &region[at..at + span])?;
            return Ok(Outcome::InPlace);
        }
    }
    crate::output::write_file(path, &whole)?;
    Ok(Outcome::Rewritten)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changes_within_one_page_go_in_place() {
        let old = vec![b'a'; 3 * PAGE];
        let mut new = old.clone();
        new[10] = b'b';
        new[20] = b'c';
        assert_eq!(one_page_change_at(0, &old, &new), Some((10, 11)));
        // The same bytes, but starting 4090 bytes into the file: they straddle a page boundary.
        assert_eq!(one_page_change_at(PAGE - 15, &old, &new), None);
        assert_eq!(one_page_change_at(PAGE - 10, &old, &new), Some((10, 11)));
        let mut far = old.clone();
        far[0] = b'x';
        far[PAGE] = b'x';
        assert_eq!(one_page_change_at(0, &old, &far), None);
        assert_eq!(one_page_change_at(0, &old, &old), None);
    }
}
