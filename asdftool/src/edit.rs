//! `edit`: the YAML tree in `$EDITOR`, written back in place when it fits in the space before
//! the first block, else the whole file rewritten atomically (blocks moved, index updated).

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
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

fn scratch_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    std::env::temp_dir().join(format!("asdftool-edit-{}-{name}.yaml", std::process::id()))
}

/// Edits the tree of the ASDF file at `path` in the user's editor.
pub fn edit(path: &Path) -> Result<Outcome> {
    let bytes = input::read_bytes(path)?;
    let file = AsdfFile::from_bytes(bytes.clone(), &Default::default())
        .map_err(|e| CliError::invalid(path, e))?;
    let p = parts(&bytes, &file)?;
    let old = &bytes[p.tree.clone()];
    let scratch = scratch_path(path);
    std::fs::write(&scratch, old).map_err(|e| CliError::io(&scratch, e))?;
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{} \"$1\"", editor()))
        .arg("sh")
        .arg(&scratch)
        .status();
    let new = std::fs::read(&scratch);
    let _ = std::fs::remove_file(&scratch);
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
    let new = new.map_err(|e| CliError::io(&scratch, e))?;
    if new == old {
        return Ok(Outcome::Unchanged);
    }
    apply(path, &bytes, &file, &p, &new)
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
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| CliError::io(path, e))?;
        f.seek(SeekFrom::Start(p.tree.start as u64))
            .and_then(|_| f.write_all(&region))
            .and_then(|_| f.sync_all())
            .map_err(|e| CliError::io(path, e))?;
        return Ok(Outcome::InPlace);
    }
    asdf::atomic_write(path, |w| {
        w.write_all(&whole).map_err(|e| asdf::AsdfError::Io {
            context: "writing".into(),
            source: e,
        })
    })
    .map_err(|e| CliError::io(path, std::io::Error::other(e.to_string())))?;
    Ok(Outcome::Rewritten)
}
