//! Writing an open file back: tree edits, added arrays, referenced blocks copied as stored.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use asdf_block::{encode_blocks, BlockHeader, BlockWriter, EncodedBlock, Label};
use asdf_ndarray::{Element, StoreOptions};
use asdf_yaml::Node;
use ndarray::{ArrayBase, Data, Dimension};

use crate::arrays::array_kind;
use crate::builder::finish_tree;
use crate::error::{AsdfError, Result};
use crate::file::AsdfFile;
use crate::rebuild::rebuild;
use crate::write::{atomic_write_inner, header_and_tree, WriteOptions};

/// Where a block of the output comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// Block `i` of the open file, copied as stored.
    Old(usize),
    /// Array `j` added since opening, encoded now.
    New(usize),
}

/// Adds `by` to every integer `source` of the ndarray nodes under `node`.
fn shift_sources(node: Node, by: i64) -> Result<Node> {
    rebuild(&node, &mut |mut n| {
        if array_kind(&n) == Some(crate::ArrayKind::NdArray) {
            if let Some(s) = n.get("source").and_then(Node::as_i64) {
                if let Some(m) = n.as_map_mut() {
                    m.insert("source", Node::from(s + by));
                }
            }
        }
        Ok(n)
    })
}

impl<B: AsRef<[u8]> + Sync> AsdfFile<B> {
    /// Stores a new array for the next [`save_path`](Self::save_path) /
    /// [`update`](AsdfFile::update) and returns its node; put it anywhere in
    /// [`tree_mut`](Self::tree_mut).
    pub fn add_array<A: Element, S: Data<Elem = A>, D: Dimension>(
        &mut self,
        a: &ArrayBase<S, D>,
        options: &StoreOptions,
    ) -> Result<Node> {
        let before = self.pending.blocks().len();
        let node = self
            .pending
            .add(a, options)
            .map_err(|source| AsdfError::Array {
                pointer: "(new array)".into(),
                source,
            })?;
        debug_assert!(self.pending.blocks().len() >= before);
        // Pending blocks are numbered after the file's own blocks.
        shift_sources(node, self.blocks().len() as i64)
    }

    /// The tree with block numbers rewritten for the output, and the output's blocks in order:
    /// the file's own blocks that the tree still refers to, in their original order (so a file
    /// written back without edits keeps its `source` numbers), then the added arrays. A
    /// streamed block stays last, as `source: -1`. A tree holding an asdf-zarr array keeps
    /// every block of the file.
    fn plan(&self) -> Result<(Node, Vec<Origin>, Option<usize>)> {
        let n_old = self.blocks().len();
        let total = n_old + self.pending.blocks().len();
        let streamed = self
            .blocks()
            .blocks()
            .last()
            .filter(|b| b.header.is_streamed())
            .map(|b| b.index);
        let absolute = |n: &Node| -> Result<Option<usize>> {
            if array_kind(n) != Some(crate::ArrayKind::NdArray) {
                return Ok(None);
            }
            let Some(source) = n.get("source").and_then(Node::as_i64) else {
                return Ok(None);
            };
            // Negative sources count from the end of the file's own blocks.
            let abs = if source < 0 {
                n_old as i64 + source
            } else {
                source
            };
            if abs < 0 || abs as usize >= total {
                return Err(AsdfError::InvalidTree(format!(
                    "an ndarray names block {source}, but there are {total} blocks"
                )));
            }
            Ok(Some(abs as usize))
        };
        let mut used = std::collections::BTreeSet::new();
        rebuild(self.tree(), &mut |n| {
            if let Some(abs) = absolute(&n)? {
                used.insert(abs);
            }
            Ok(n)
        })?;
        // asdf-zarr arrays name their blocks inside a block (the chunk map), which renumbering
        // cannot reach: with one in the tree every block of the file stays, at its number.
        if crate::arrays::find_arrays(self.tree())
            .iter()
            .any(|(_, kind)| *kind == crate::ArrayKind::Zarr)
        {
            used.extend(0..n_old);
        }
        let stream_used = streamed.filter(|s| used.remove(s));
        let order: Vec<Origin> = used
            .iter()
            .map(|&abs| {
                if abs < n_old {
                    Origin::Old(abs)
                } else {
                    Origin::New(abs - n_old)
                }
            })
            .collect();
        let renumber: HashMap<usize, i64> = used
            .iter()
            .enumerate()
            .map(|(k, &abs)| (abs, k as i64))
            .collect();
        let tree = rebuild(self.tree(), &mut |mut n| {
            if let Some(abs) = absolute(&n)? {
                let new_source = if Some(abs) == stream_used {
                    -1
                } else {
                    renumber[&abs]
                };
                if let Some(m) = n.as_map_mut() {
                    m.insert("source", Node::from(new_source));
                }
            }
            Ok(n)
        })?;
        Ok((tree, order, stream_used))
    }

    /// Writes this file — its (possibly edited) tree, the arrays added since opening, and the
    /// blocks the tree still refers to — to `out`. Blocks are copied as stored (same codec, no
    /// re-encoding), after verifying their checksums; unreferenced blocks are dropped.
    pub fn save_to<W: Write>(&self, out: W, options: &WriteOptions) -> Result<W> {
        if let Some((uri, _)) = self.pending.externals().first() {
            return Err(AsdfError::External {
                uri: uri.clone(),
                reason: "external arrays can only be written next to a file path (save_path)"
                    .into(),
            });
        }
        self.save_inner(out, options)
    }

    /// [`save_to`](Self::save_to) a path, crash-safely (temporary file, fsync, rename); added
    /// external arrays are written next to it.
    pub fn save_path(&self, path: impl AsRef<Path>, options: &WriteOptions) -> Result<()> {
        let path = path.as_ref();
        crate::builder::write_externals(path, self.pending.externals(), options)?;
        atomic_write_inner(path, options.durability, |w| {
            self.save_inner(w, options).map(drop)
        })?;
        Ok(())
    }

    fn save_inner<W: Write>(&self, mut out: W, options: &WriteOptions) -> Result<W> {
        let (tree, order, stream) = self.plan()?;
        // Encode the new arrays' blocks in parallel; copy the old ones as stored.
        let new_items: Vec<(&[u8], Label, asdf_block::EncodeOptions)> = self
            .pending
            .blocks()
            .iter()
            .map(|b| (&b.data[..], b.compression, b.encode.clone()))
            .collect();
        let new_blocks = encode_blocks(&new_items, &options.blocks)?;
        let mut labels: Vec<Label> = Vec::new();
        let mut blocks: Vec<EncodedBlock<'_>> = Vec::with_capacity(order.len());
        for o in &order {
            let b = match *o {
                Origin::New(j) => new_blocks[j].clone(),
                Origin::Old(i) => self.copy_block(i, options)?,
            };
            labels.push(b.header.compression);
            blocks.push(b);
        }
        let tree = finish_tree(tree, &labels, options)?;
        let head = header_and_tree(&tree, options)?;
        out.write_all(head.as_bytes())
            .map_err(|e| AsdfError::io("writing the tree", e))?;
        let mut opts = options.blocks.clone();
        opts.index &= stream.is_none();
        let mut w = BlockWriter::new(out, head.len() as u64, opts);
        for b in &blocks {
            w.write(b)?;
        }
        match stream {
            None => Ok(w.finish()?),
            Some(i) => {
                let data = self.blocks().stored(i as i64)?;
                let mut s = w.into_streamed()?;
                s.write_all(data)
                    .map_err(|e| AsdfError::io("writing the streamed block", e))?;
                s.finish().map_err(|e| AsdfError::io("flushing", e))
            }
        }
    }

    /// Block `i` as stored, with a checksum of the stored bytes; an existing checksum must
    /// match first (under either convention), so corrupted data is never blessed with a new one.
    fn copy_block(&self, i: usize, options: &WriteOptions) -> Result<EncodedBlock<'_>> {
        let info = self.blocks().blocks()[i];
        let stored = self.blocks().stored(i as i64)?;
        let digest = asdf_block::md5(stored);
        if info.header.has_checksum() && digest != info.header.checksum {
            self.blocks()
                .verify(i as i64, asdf_block::ChecksumPolicy::AcceptLegacy)?;
        }
        let checksum = if options.blocks.checksums {
            digest
        } else {
            [0; 16]
        };
        Ok(EncodedBlock {
            header: BlockHeader::new(
                info.header.compression,
                info.header.data_size,
                stored.len() as u64,
                checksum,
            ),
            payload: Cow::Borrowed(stored),
        })
    }
}

impl AsdfFile<memmap2::Mmap> {
    /// Writes this file back over its own path — tree edits, added and removed arrays — and
    /// returns it reopened. The rewrite is crash-safe: the new file is written beside the old
    /// one and renamed over it, so an interruption leaves the old file intact (and views of the
    /// old mapping stay valid until they are dropped).
    pub fn update(self, options: &WriteOptions) -> Result<AsdfFile<memmap2::Mmap>> {
        let path = self
            .path()
            .map(Path::to_path_buf)
            .ok_or_else(|| AsdfError::InvalidTree("update needs a file opened by path".into()))?;
        self.save_path(&path, options)?;
        // Reopened with every option the file was opened with (limits, extensions, checks).
        let open = self.open_options().clone();
        drop(self);
        AsdfFile::open_with(&path, &open)
    }
}
