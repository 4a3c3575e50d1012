//! Writing ASDF files: header, tree, blocks and block index; crash-safe on paths.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use array_core::AtomicFile;

use asdf_block::{BlockWriter, EncodedBlock};
use asdf_yaml::Node;

use crate::error::{AsdfError, Result};

/// How to write a file.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// The `#ASDF_STANDARD` version written in the header.
    pub standard_version: String,
    /// Block writing: checksums, data alignment, block index.
    pub blocks: asdf_block::WriteOptions,
    /// Check the tree against the rules of its core tags before writing (an invalid tree is an
    /// error listing every violation, and nothing is written).
    pub validate: bool,
    /// Whether a file saved to a path waits for the disk before the save returns: synced by
    /// default; [`Durability::Relaxed`](array_core::Durability::Relaxed) leaves a new file's
    /// bytes to the kernel, as Python asdf and NumPy do (a file replaced is synced either way).
    pub durability: array_core::Durability,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            standard_version: "1.6.0".to_string(),
            blocks: asdf_block::WriteOptions::default(),
            validate: true,
            durability: array_core::Durability::Synced,
        }
    }
}

/// Writes a file: the header, `tree` (whose ndarrays refer to `blocks` by position with
/// `source`), the blocks and the block index. Returns the output.
///
/// ```
/// use asdf::yaml::Node;
/// use asdf::block::{encode_block, EncodeOptions, Label};
/// let tree = Node::mapping([("greeting", Node::from("hello"))])
///     .with_tag("tag:stsci.edu:asdf/core/asdf-1.1.0");
/// let opts = asdf::WriteOptions::default();
/// let block = encode_block(b"raw bytes", Label::NONE, &EncodeOptions::default(), &opts.blocks).unwrap();
/// let bytes = asdf::write_to(Vec::new(), &tree, &[block], &opts).unwrap();
/// let f = asdf::AsdfFile::from_bytes(bytes, &Default::default()).unwrap();
/// assert_eq!(f.tree(), &tree);
/// assert_eq!(&*f.block_data(0).unwrap(), b"raw bytes");
/// ```
pub fn write_to<W: Write>(
    out: W,
    tree: &Node,
    blocks: &[EncodedBlock<'_>],
    options: &WriteOptions,
) -> Result<W> {
    let (out, head_len) = write_head(out, tree, options)?;
    let mut w = BlockWriter::new(out, head_len, options.blocks.clone());
    for b in blocks {
        w.write(b)?;
    }
    Ok(w.finish()?)
}

/// Writes the `#ASDF` header, the `#ASDF_STANDARD` comment and the YAML tree into `out`,
/// streaming (large packed inline arrays never exist as one text); returns `out` and the number
/// of bytes written, where the blocks start.
pub(crate) fn write_head<W: Write>(
    out: W,
    tree: &Node,
    options: &WriteOptions,
) -> Result<(W, u64)> {
    let mut out = array_core::CountingWriter::new(out);
    out.write_all(header(options).as_bytes())
        .map_err(|e| AsdfError::io("writing the tree", e))?;
    asdf_yaml::emit_with(tree, &asdf_yaml::EmitOptions::default(), &mut out).map_err(
        |e| match e {
            asdf_yaml::Error::Io(e) => AsdfError::io("writing the tree", e),
            other => AsdfError::Emit(other),
        },
    )?;
    let written = out.written();
    Ok((out.into_inner(), written))
}

/// The `#ASDF` header line and the `#ASDF_STANDARD` comment.
fn header(options: &WriteOptions) -> String {
    format!("#ASDF 1.0.0\n#ASDF_STANDARD {}\n", options.standard_version)
}

/// The `#ASDF` header, the `#ASDF_STANDARD` comment and the YAML tree, as written before the
/// blocks (as one text: for updates that must know its length before writing).
pub(crate) fn header_and_tree(tree: &Node, options: &WriteOptions) -> Result<String> {
    let mut head = header(options);
    head.push_str(&asdf_yaml::emit_to_string(tree).map_err(AsdfError::Emit)?);
    Ok(head)
}

/// [`write_to`] a path, crash-safely: the file appears complete or not at all (see
/// [`atomic_write`]).
pub fn write_path(
    path: impl AsRef<Path>,
    tree: &Node,
    blocks: &[EncodedBlock<'_>],
    options: &WriteOptions,
) -> Result<()> {
    atomic_write_inner(path.as_ref(), options.durability, |w| {
        write_to(w, tree, blocks, options).map(drop)
    })?;
    Ok(())
}

/// Runs `write` on a temporary file next to `path`, then flushes it, syncs it to disk and
/// renames it over `path` (and syncs the directory): the workspace's one crash-safe writer,
/// [`array_core::AtomicFile`]. If `write` fails, or the process dies at any point, `path` keeps
/// its old content (or stays absent) and the temporary file is removed (when the process
/// survives). The new file gets the old file's permissions; a symlink at `path` keeps pointing
/// at the file it named, which receives the new content.
pub fn atomic_write<T>(
    path: &Path,
    write: impl FnOnce(&mut array_core::AtomicWriter) -> Result<T>,
) -> Result<T> {
    let mut out = None;
    atomic_write_inner(path, array_core::Durability::Synced, |w| {
        out = Some(write(w)?);
        Ok(())
    })?;
    out.ok_or_else(|| AsdfError::io("writing", std::io::ErrorKind::Other.into()))
}

/// [`atomic_write`] as far as `durability` says, returning the renamed file opened for
/// appending at its end.
pub(crate) fn atomic_write_inner(
    path: &Path,
    durability: array_core::Durability,
    write: impl FnOnce(&mut array_core::AtomicWriter) -> Result<()>,
) -> Result<File> {
    let atomic_err =
        |e: array_core::AtomicError| AsdfError::io(e.action, e.source).in_file(&e.path);
    let mut file = AtomicFile::create(path)
        .map_err(atomic_err)?
        .with_durability(durability);
    write(file.writer_mut()).map_err(|e| e.in_file(path))?;
    file.commit().map_err(atomic_err)
}
