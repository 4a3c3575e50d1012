//! Finding the blocks of a file: the first magic after the tree, then a validated block index or
//! a walk along the headers.

use std::ops::Range;

use crate::error::{BlockError, Result};
use crate::header::{BlockHeader, BLOCK_MAGIC, HEADER_LEN};
use crate::index::{parse_index, INDEX_HEADER};
use crate::source::Source;

/// Where one block is and what its header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockInfo {
    /// Position among the file's blocks (0-based).
    pub index: usize,
    /// File offset of the block's magic token.
    pub offset: u64,
    /// The decoded header.
    pub header: BlockHeader,
    /// File offset of the first data byte (`offset + 6 + header_size`).
    pub data_offset: u64,
    /// For a streamed block, the number of bytes from `data_offset` to the end of the file;
    /// otherwise `header.used_size`.
    pub stored_len: u64,
}

impl BlockInfo {
    /// File range of the stored (possibly compressed) bytes.
    ///
    /// For a non-streamed block this trusts `used_size`; readers check it against
    /// `allocated_size` (which the layout scan bounded by the file length) before using it.
    pub fn stored_range(&self) -> Range<u64> {
        self.data_offset..self.data_offset.saturating_add(self.stored_len)
    }

    /// File offset just past the block's allocated space (where the next block starts).
    pub fn end(&self) -> u64 {
        if self.header.is_streamed() {
            self.data_offset + self.stored_len
        } else {
            self.data_offset + self.header.allocated_size
        }
    }

    /// Decoded size of the block (the stored length for streamed blocks).
    pub fn data_size(&self) -> u64 {
        if self.header.is_streamed() {
            self.stored_len
        } else {
            self.header.data_size
        }
    }
}

/// How the blocks of a file were located.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockLayout {
    /// The blocks in file order.
    pub blocks: Vec<BlockInfo>,
    /// File offset of the block index, when the file has one.
    pub index_offset: Option<u64>,
    /// Whether the block index was valid and used.
    pub index_used: bool,
    /// Non-fatal oddities (an index that failed validation, junk after the last block, ...).
    pub warnings: Vec<String>,
}

/// Where the first block magic is at or after `start`, if anywhere.
pub fn find_first_block<S: Source>(src: &mut S, start: u64) -> Result<Option<u64>> {
    let len = src.len();
    let window = src.window().max(64);
    let mut pos = start;
    while pos < len {
        let bytes = src.get(pos, window).map_err(|e| {
            BlockError::io(format!("searching for the first block at byte {pos}"), e)
        })?;
        if let Some(i) = memchr::memmem::find(&bytes, &BLOCK_MAGIC) {
            return Ok(Some(pos + i as u64));
        }
        if bytes.len() < 4 {
            break;
        }
        // Overlap by 3 bytes so a magic split between windows is found.
        pos += (bytes.len() - 3) as u64;
    }
    Ok(None)
}

fn read_header<S: Source>(src: &mut S, offset: u64, block: usize) -> Result<BlockHeader> {
    let first = src
        .get(offset, HEADER_LEN)
        .map_err(|e| BlockError::io(format!("reading block {block} header at byte {offset}"), e))?;
    let header = match BlockHeader::parse(&first, offset, block) {
        Ok(h) => h,
        Err(BlockError::TruncatedHeader { needed, .. }) if needed > HEADER_LEN as u64 => {
            // header_size > 48: the rest of the header must exist too.
            let full = src.get(offset, needed as usize).map_err(|e| {
                BlockError::io(format!("reading block {block} header at byte {offset}"), e)
            })?;
            BlockHeader::parse(&full, offset, block)?
        }
        Err(e) => return Err(e),
    };
    let total = header.total_len() as u64;
    if offset.saturating_add(total) > src.len() {
        return Err(BlockError::TruncatedHeader {
            block,
            offset,
            needed: total,
            available: src.len().saturating_sub(offset),
        });
    }
    Ok(header)
}

/// Reads and checks the header of block `block` at `offset`, returning the block's position and
/// extent (for readers that locate blocks themselves, e.g. from a block index read remotely).
/// The same checks as [`scan_blocks`] makes of each block: a valid header, a data range inside
/// the source, no compressed streamed block.
///
/// ```
/// use asdf_block::{layout::block_info_at, BlockWriter, Label};
/// let mut w = BlockWriter::new(Vec::new(), 0, Default::default());
/// w.write_data(b"0123456789", Label::NONE, &Default::default()).unwrap();
/// let file = w.finish().unwrap();
/// let info = block_info_at(&mut &file[..], 0, 0).unwrap();
/// assert_eq!(info.stored_len, 10);
/// assert!(block_info_at(&mut &file[..], 1, 0).is_err());
/// ```
pub fn block_info_at<S: Source>(src: &mut S, offset: u64, block: usize) -> Result<BlockInfo> {
    block_at(src, offset, block)
}

/// Reads and checks the header at `offset`, returning the block's position and extent.
pub(crate) fn block_at<S: Source>(src: &mut S, offset: u64, block: usize) -> Result<BlockInfo> {
    let header = read_header(src, offset, block)?;
    let data_offset = offset + header.total_len() as u64;
    let file_len = src.len();
    if header.is_streamed() {
        if header.is_compressed() {
            return Err(BlockError::InvalidStreamed {
                block,
                offset,
                reason: "a streamed block cannot be compressed",
            });
        }
        return Ok(BlockInfo {
            index: block,
            offset,
            header,
            data_offset,
            stored_len: file_len - data_offset,
        });
    }
    let end = data_offset
        .checked_add(header.allocated_size)
        .filter(|&e| e <= file_len)
        .ok_or(BlockError::OutOfBounds {
            block,
            offset,
            end: data_offset.saturating_add(header.allocated_size),
            file_len,
        })?;
    debug_assert!(end <= file_len);
    Ok(BlockInfo {
        index: block,
        offset,
        header,
        data_offset,
        stored_len: header.used_size,
    })
}

/// Locates every block of a file whose tree ends at `start` (0 also works: the tree is UTF-8 and
/// cannot contain the block magic).
///
/// The first block is the first magic at or after `start` (any bytes may pad the gap). With
/// `use_index`, a block index is used only if every entry passes the standard's checks: the first
/// offset is the first block found here, offsets increase, each points at a valid header whose
/// block ends at or before the next one, and the last block ends where the index starts.
/// Otherwise the blocks are found by walking from header to header. After the last block the
/// walk accepts the end of the file, a block index, or NUL/white-space padding; anything else is
/// reported in [`BlockLayout::warnings`].
pub fn scan_blocks<S: Source>(src: &mut S, start: u64, use_index: bool) -> Result<BlockLayout> {
    let mut layout = BlockLayout::default();
    let Some(first) = find_first_block(src, start)? else {
        return Ok(layout);
    };
    let index_offset = find_index(src, first)?;
    layout.index_offset = index_offset;
    if let (true, Some(at)) = (use_index, index_offset) {
        match blocks_from_index(src, first, at) {
            Ok(blocks) => {
                layout.blocks = blocks;
                layout.index_used = true;
                return Ok(layout);
            }
            Err(why) => layout
                .warnings
                .push(format!("block index at byte {at} not used: {why}")),
        }
    }
    walk_blocks(src, first, &mut layout)?;
    Ok(layout)
}

fn walk_blocks<S: Source>(src: &mut S, first: u64, layout: &mut BlockLayout) -> Result<()> {
    let len = src.len();
    let mut pos = first;
    loop {
        let info = block_at(src, pos, layout.blocks.len())?;
        let end = info.end();
        let streamed = info.header.is_streamed();
        layout.blocks.push(info);
        if streamed || end >= len {
            return Ok(());
        }
        pos = end;
        let head = src
            .get(pos, INDEX_HEADER.len())
            .map_err(|e| BlockError::io(format!("reading after block at byte {pos}"), e))?
            .into_owned();
        if head.starts_with(&BLOCK_MAGIC) {
            continue;
        }
        if INDEX_HEADER.starts_with(&head) || head == INDEX_HEADER {
            return Ok(());
        }
        if !only_padding_from(src, pos)? {
            layout.warnings.push(format!(
                "{} bytes after the last block (at byte {pos}) are neither a block, a block index nor padding; ignored",
                len - pos
            ));
        }
        return Ok(());
    }
}

fn only_padding_from<S: Source>(src: &mut S, mut pos: u64) -> Result<bool> {
    let window = src.window().min(1 << 20);
    while pos < src.len() {
        let bytes = src
            .get(pos, window)
            .map_err(|e| BlockError::io(format!("reading after the blocks at byte {pos}"), e))?;
        if bytes.is_empty() {
            break;
        }
        if !bytes.iter().all(|&b| b == 0 || b.is_ascii_whitespace()) {
            return Ok(false);
        }
        pos += bytes.len() as u64;
    }
    Ok(true)
}

/// Offset of the last `#ASDF BLOCK INDEX` after the first block header, searching back from the
/// end of the file (at most 16 MiB: enough for an index of a million blocks).
pub(crate) fn find_index<S: Source>(src: &mut S, first: u64) -> Result<Option<u64>> {
    let len = src.len();
    let floor = first + HEADER_LEN as u64;
    for span in [64u64 << 10, 16 << 20] {
        let from = len.saturating_sub(span).max(floor);
        if from >= len {
            return Ok(None);
        }
        let bytes = src
            .get(from, (len - from) as usize)
            .map_err(|e| BlockError::io("searching for the block index", e))?;
        if let Some(i) = memchr::memmem::rfind(&bytes, INDEX_HEADER) {
            return Ok(Some(from + i as u64));
        }
        if from == floor {
            break;
        }
    }
    Ok(None)
}

fn blocks_from_index<S: Source>(
    src: &mut S,
    first: u64,
    at: u64,
) -> Result<Vec<BlockInfo>, String> {
    let text = src
        .get(at, (src.len() - at) as usize)
        .map_err(|e| format!("cannot read it: {e}"))?
        .into_owned();
    let offsets = parse_index(&text)?;
    if offsets[0] != first {
        return Err(format!(
            "its first offset {} is not the first block, at byte {first}",
            offsets[0]
        ));
    }
    let mut blocks: Vec<BlockInfo> = Vec::with_capacity(offsets.len().min(1 << 20));
    for (i, &off) in offsets.iter().enumerate() {
        if let Some(prev) = blocks.last() {
            if off < prev.end() {
                return Err(format!(
                    "offset {off} of block {i} is inside block {}, which ends at byte {}",
                    i - 1,
                    prev.end()
                ));
            }
        }
        if off >= at {
            return Err(format!("offset {off} of block {i} is not before the index"));
        }
        let info = block_at(src, off, i).map_err(|e| e.to_string())?;
        if info.header.is_streamed() {
            return Err(format!("block {i} is streamed, which excludes an index"));
        }
        blocks.push(info);
    }
    let last_end = blocks.last().map_or(first, BlockInfo::end);
    if last_end != at {
        return Err(format!(
            "the last block ends at byte {last_end}, not where the index starts"
        ));
    }
    Ok(blocks)
}
