//! Getting the data back from a damaged file: the blocks a scan for block magics finds intact
//! ([`asdf_block::salvage`]), matched with the block numbers of the tree, written as a new valid
//! file; every array that cannot be recovered is named with the reason and left out (its node
//! becomes `null`), so nothing is invented.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::Path;

use asdf_block::salvage::{scan_damaged, BlockState, Matching, Scan, Slot};
use asdf_block::{BlockHeader, EncodedBlock, Label};
use asdf_ndarray::{BlockStore, ChunkedArray, NdArrayMeta, NdError};
use asdf_yaml::Node;

use crate::arrays::{array_kind, find_arrays, ArrayKind};
use crate::builder::finish_tree;
use crate::error::{AsdfError, Result};
use crate::file::OpenOptions;
use crate::layout::{split, FileHeader};
use crate::rebuild::rebuild;
use crate::write::{atomic_write_inner, header_and_tree, WriteOptions};

/// An array of the tree that could not be recovered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LostArray {
    /// Its JSON Pointer.
    pub pointer: String,
    /// Why.
    pub reason: String,
}

/// What a damaged file still holds, ready to be written as a new file.
#[derive(Debug)]
pub struct Salvage<'a> {
    /// The header and comments of the damaged file.
    pub header: FileHeader,
    /// The tree to write: recovered arrays renumbered for the blocks written, lost
    /// arrays replaced by `null`.
    pub tree: Node,
    /// The scan of the damaged file.
    pub scan: Scan,
    /// How block numbers were matched with the blocks found.
    pub matching: Matching,
    /// The pointers of the arrays recovered.
    pub recovered: Vec<String>,
    /// The arrays not recovered, with why.
    pub lost: Vec<LostArray>,
    /// The blocks to write (every usable block found, in file order), borrowed from the file.
    blocks: Vec<EncodedBlock<'a>>,
}

/// The blocks of the original numbering, as far as the scan can tell, for reading arrays.
struct ScanStore<'s> {
    bytes: &'s [u8],
    scan: &'s Scan,
    slots: &'s [Slot],
    /// The original number of blocks, when certain (for negative sources).
    count: Option<usize>,
    /// Where file order stops numbering blocks with certainty.
    unexplained_at: Option<u64>,
    options: &'s asdf_block::ReadOptions,
}

impl ScanStore<'_> {
    /// The found block that original block `source` is, or why there is none.
    fn found(&self, source: i64) -> std::result::Result<usize, String> {
        let abs = if source < 0 {
            let n = self.count.ok_or_else(|| {
                format!("block {source} counts from the end, and the damage hides how many blocks there were")
            })?;
            n as i64 + source
        } else {
            source
        };
        let slot = usize::try_from(abs).ok().and_then(|i| self.slots.get(i));
        match slot {
            Some(Slot::Found(i)) => match &self.scan.found[*i].state {
                BlockState::Damaged(why) => Err(format!("block {source} is damaged: {why}")),
                _ => Ok(*i),
            },
            Some(Slot::Missing(why)) => Err(format!("block {source} was not found: {why}")),
            None => Err(match self.unexplained_at {
                Some(at) => format!(
                    "block {source} was not found: block numbers are certain only up to {} \
                     (unexplained bytes before byte {at})",
                    self.slots.len()
                ),
                None => format!(
                    "block {source} was not found: the scan found {} usable block(s) in sequence",
                    self.slots.len()
                ),
            }),
        }
    }
}

impl BlockStore for ScanStore<'_> {
    fn block(&self, source: i64) -> asdf_ndarray::Result<Cow<'_, [u8]>> {
        let i = self.found(source).map_err(NdError::Usage)?;
        self.scan
            .data(self.bytes, i, self.options)
            .map_err(|e| NdError::Usage(e.to_string()))
    }
    fn external(&self, uri: &str) -> asdf_ndarray::Result<Cow<'_, [u8]>> {
        Err(NdError::NoExternal(uri.into()))
    }
}

/// The integer `source`s of the ndarrays in `node` (itself, its mask, a chunked array's
/// chunks).
fn sources(node: &Node) -> Result<BTreeSet<i64>> {
    let mut out = BTreeSet::new();
    rebuild(node, &mut |n| {
        if array_kind(&n) == Some(ArrayKind::NdArray) {
            if let Some(s) = n.get("source").and_then(Node::as_i64) {
                out.insert(s);
            }
        }
        Ok(n)
    })?;
    Ok(out)
}

/// Reads the array of `node` from the scan, mask included: what recovering it means.
fn read_check(
    node: &Node,
    kind: ArrayKind,
    store: &ScanStore<'_>,
    limits: &asdf_ndarray::ReadLimits,
) -> std::result::Result<(), String> {
    let res = match kind {
        ArrayKind::Chunked => {
            ChunkedArray::from_node(node).and_then(|c| c.read_with(store, limits).map(drop))
        }
        ArrayKind::NdArray => {
            NdArrayMeta::from_node(node).and_then(|m| m.read_masked_with(store, limits).map(drop))
        }
        ArrayKind::Zarr => {
            return Err("asdf-zarr arrays are not salvaged".into());
        }
    };
    res.map_err(|e| e.to_string())
}

/// Scans the damaged file `bytes` and works out what can be recovered (see the module
/// documentation). Fails only when the tree itself cannot be read: without it no array can
/// be named.
pub fn salvage<'a>(bytes: &'a [u8], options: &OpenOptions) -> Result<Salvage<'a>> {
    let sections = split(bytes)?;
    let mut tree = match &sections.tree {
        Some(range) => {
            asdf_yaml::parse_document_bytes(&bytes[range.clone()], &options.yaml)
                .map_err(|source| AsdfError::Yaml {
                    tree_start: range.start,
                    source,
                })?
                .root
        }
        None => Node::mapping(std::iter::empty::<(Node, Node)>()),
    };
    let scan = scan_damaged(bytes, sections.blocks_start as u64, &options.blocks);
    let (matching, slots) = scan.slots();
    let unexplained_at = match &matching {
        Matching::Order { unexplained_at, .. } => *unexplained_at,
        Matching::Index { .. } => None,
    };
    let count = match &matching {
        Matching::Index { .. } => Some(slots.len()),
        Matching::Order {
            unexplained_at: None,
            ..
        } if scan.rejected_count == 0 => Some(slots.len()),
        Matching::Order { .. } => None,
    };
    let store = ScanStore {
        bytes,
        scan: &scan,
        slots: &slots,
        count,
        unexplained_at,
        options: &options.blocks,
    };
    let (recovered, lost, map) = judge_arrays(&tree, &store, &options.arrays)?;
    for l in &lost {
        if let Some(n) = tree.pointer_mut(&l.pointer) {
            *n = Node::null();
        }
    }
    let (blocks, out_of) = usable_blocks(bytes, &scan);
    tree = renumber(&tree, &map, &out_of, &scan)?;
    Ok(Salvage {
        header: sections.header,
        tree,
        matching,
        recovered,
        lost,
        blocks,
        scan,
    })
}

type Judged = (Vec<String>, Vec<LostArray>, HashMap<i64, usize>);

/// Which arrays can be read from the scan, and the found block of every source they use.
fn judge_arrays(
    tree: &Node,
    store: &ScanStore<'_>,
    limits: &asdf_ndarray::ReadLimits,
) -> Result<Judged> {
    let (mut recovered, mut lost, mut map) = (Vec::new(), Vec::new(), HashMap::new());
    for (pointer, kind) in find_arrays(tree) {
        let Some(node) = tree.pointer(&pointer) else {
            continue;
        };
        if kind == ArrayKind::Zarr {
            // Its chunk map (a block) names the chunks' blocks, which cannot be renumbered.
            lost.push(LostArray {
                pointer,
                reason: "an asdf-zarr array: its chunk map names blocks by number, which \
                         salvaging renumbers"
                    .into(),
            });
            continue;
        }
        let used = sources(node)?;
        if used.is_empty() {
            continue; // inline or external: not in this file's blocks
        }
        let found: std::result::Result<Vec<(i64, usize)>, String> = used
            .iter()
            .map(|&s| store.found(s).map(|i| (s, i)))
            .collect();
        let verdict = found.and_then(|f| read_check(node, kind, store, limits).map(|()| f));
        match verdict {
            Ok(f) => {
                map.extend(f);
                recovered.push(pointer);
            }
            Err(reason) => lost.push(LostArray { pointer, reason }),
        }
    }
    Ok((recovered, lost, map))
}

/// Every usable block found, as stored, in file order; and found position → output number.
fn usable_blocks<'a>(
    bytes: &'a [u8],
    scan: &Scan,
) -> (Vec<EncodedBlock<'a>>, HashMap<usize, usize>) {
    let mut blocks = Vec::new();
    let mut out_of = HashMap::new();
    for (i, f) in scan.found.iter().enumerate() {
        if !f.state.is_usable() {
            continue;
        }
        let r = f.info.stored_range();
        let Some(stored) = bytes.get(r.start as usize..r.end as usize) else {
            continue;
        };
        // Only a checksum that held is renewed: unverified data gets none.
        let checksum = match f.state {
            BlockState::Intact(_) => asdf_block::md5(stored),
            _ => [0; 16],
        };
        let compression: Label = f.info.header.compression;
        out_of.insert(i, blocks.len());
        blocks.push(EncodedBlock {
            header: BlockHeader::new(
                compression,
                f.info.data_size(),
                stored.len() as u64,
                checksum,
            ),
            payload: Cow::Borrowed(stored),
        });
    }
    (blocks, out_of)
}

/// The tree with every block `source` renumbered for the output; a streamed array (`'*'`)
/// gets its row count, since the output stores it as an ordinary block.
fn renumber(
    tree: &Node,
    map: &HashMap<i64, usize>,
    out_of: &HashMap<usize, usize>,
    scan: &Scan,
) -> Result<Node> {
    rebuild(tree, &mut |mut n| {
        if array_kind(&n) != Some(ArrayKind::NdArray) {
            return Ok(n);
        }
        let Some(s) = n.get("source").and_then(Node::as_i64) else {
            return Ok(n);
        };
        let found = map.get(&s).copied();
        let out = found.and_then(|i| out_of.get(&i)).copied().ok_or_else(|| {
            AsdfError::InvalidTree(format!(
                "internal: block {s} of a recovered array has no output block"
            ))
        })?;
        let rows = match found {
            Some(i) if n.pointer("/shape/0").and_then(Node::as_str) == Some("*") => {
                Some(streamed_rows(&n, scan.found[i].info.data_size())?)
            }
            _ => None,
        };
        if let Some(m) = n.as_map_mut() {
            m.insert("source", Node::from(out as i64));
            if let (Some(rows), Some(shape)) = (rows, m.get_mut("shape")) {
                if let Some(first) = shape.as_seq_mut().and_then(|s| s.first_mut()) {
                    *first = Node::from(rows);
                }
            }
        }
        Ok(n)
    })
}

/// The number of whole rows of a streamed array in `len` bytes.
fn streamed_rows(node: &Node, len: u64) -> Result<u64> {
    let meta = NdArrayMeta::from_node(node).map_err(|source| AsdfError::Array {
        pointer: "(streamed array)".into(),
        source,
    })?;
    let item = meta
        .datatype
        .as_ref()
        .map(|d| d.size())
        .transpose()
        .map_err(|source| AsdfError::Array {
            pointer: "(streamed array)".into(),
            source,
        })?
        .unwrap_or(0);
    let row = meta
        .shape
        .unwrap_or_default()
        .iter()
        .try_fold(item as u64, |acc, &d| acc.checked_mul(d as u64))
        .unwrap_or(0);
    Ok(len.checked_div(row).unwrap_or(0))
}

impl Salvage<'_> {
    /// The number of blocks the output holds (every usable block found, referenced or not).
    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// Writes the recovered file to `out`.
    pub fn write_to<W: Write>(&self, out: W, options: &WriteOptions) -> Result<W> {
        let labels: Vec<Label> = self.blocks.iter().map(|b| b.header.compression).collect();
        let tree = finish_tree(self.tree.clone(), &labels, options)?;
        let head = header_and_tree(&tree, options)?;
        let mut out = out;
        out.write_all(head.as_bytes())
            .map_err(|e| AsdfError::io("writing the tree", e))?;
        let mut w = asdf_block::BlockWriter::new(out, head.len() as u64, options.blocks.clone());
        for b in &self.blocks {
            w.write(b)?;
        }
        Ok(w.finish()?)
    }

    /// [`write_to`](Self::write_to) a path, crash-safely.
    pub fn write_path(&self, path: &Path, options: &WriteOptions) -> Result<()> {
        atomic_write_inner(path, options.durability, |w| {
            self.write_to(w, options).map(drop)
        })?;
        Ok(())
    }
}
