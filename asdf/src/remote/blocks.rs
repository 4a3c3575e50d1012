//! Where the blocks of a remote file are.
//!
//! A file whose last bytes hold a block index is opened without reading any other block header:
//! block `i` is taken to span from its index offset to the next one (or to the index), and its
//! header is read with its data, in one request, when an array needs it; the header must then
//! be valid and its block end inside that span, as the index validation of the local reader
//! requires. Everything else — the whole block list ([`Blocks::layout`]), a file without an
//! index, an index or a header that does not check out — goes through the same scan as a local
//! file ([`asdf_block::scan_blocks`]), over ranged reads.

use std::ops::Range;
use std::sync::OnceLock;

use asdf_block::{BlockInfo, BlockLayout, HEADER_LEN, INDEX_HEADER};
use bytes::Bytes;

use super::object::RemoteObject;
use super::source::{header_at, scan, HeldRanges};
use crate::error::Result;

/// The offsets of a block index, checked enough to locate blocks by (increasing, before the
/// index, the first one where the first block is).
#[derive(Debug)]
struct Index {
    offsets: Vec<u64>,
    at: u64,
}

/// The blocks of one remote file: located lazily from its index, or scanned.
#[derive(Debug)]
pub(crate) struct Blocks {
    count: usize,
    start: u64,
    use_index: bool,
    index: Option<Index>,
    /// The bytes read when opening that may hold block headers or the index: reused by a scan.
    opening: Vec<(u64, Bytes)>,
    scanned: OnceLock<BlockLayout>,
    /// Headers read with their blocks' data, by block.
    lazy: Vec<OnceLock<BlockInfo>>,
}

/// Where a block's stored bytes are, or the span its header and data are in.
pub(crate) enum Want {
    /// The stored bytes (header known).
    Stored(Range<u64>),
    /// Header, data and padding: from the block's index offset to the next block.
    Span(Range<u64>),
}

impl Want {
    pub(crate) fn range(&self) -> Range<u64> {
        match self {
            Want::Stored(r) | Want::Span(r) => r.clone(),
        }
    }
}

/// The last `#ASDF BLOCK INDEX` in `tail` (the last bytes of a file): where it starts in `tail`
/// and its offsets, if it parses (a hint: blocks located by it are checked as they are read).
pub(crate) fn tail_index(tail: &[u8]) -> Option<(usize, Vec<u64>)> {
    let at = memchr::memmem::rfind(tail, INDEX_HEADER)?;
    Some((at, asdf_block::parse_index(&tail[at..]).ok()?))
}

impl Blocks {
    /// The blocks of `object`, whose tree ends at `start`; `opening` are the bytes read so far
    /// from `start` on and at the end of the file. Without a usable index, scans them now.
    pub(crate) async fn locate(
        object: &RemoteObject,
        start: u64,
        use_index: bool,
        opening: Vec<(u64, Bytes)>,
    ) -> Result<Blocks> {
        let mut blocks = Blocks {
            count: 0,
            start,
            use_index,
            index: None,
            opening,
            scanned: OnceLock::new(),
            lazy: Vec::new(),
        };
        blocks.index = blocks.usable_index();
        match &blocks.index {
            Some(index) => blocks.count = index.offsets.len(),
            None => {
                let layout = blocks.scan(object).await?;
                blocks.count = layout.blocks.len();
                let _ = blocks.scanned.set(layout);
            }
        }
        blocks.lazy = (0..blocks.count).map(|_| OnceLock::new()).collect();
        blocks.learn_opening(object.size());
        Ok(blocks)
    }

    /// Learns the headers the bytes read at opening hold (the first block's, usually).
    fn learn_opening(&self, size: u64) {
        let Some(index) = &self.index else {
            return;
        };
        let mut held = self.held(size);
        for i in 0..index.offsets.len() {
            let span = self.want(i).range();
            let header = span.start..span.start + HEADER_LEN as u64;
            if held.missing(std::slice::from_ref(&header)).is_empty() {
                self.learn_held(i, &span, &mut held);
            }
        }
    }

    fn held(&self, size: u64) -> HeldRanges {
        let mut held = HeldRanges::new(size);
        for (s, b) in &self.opening {
            held.hold(*s, b.clone());
        }
        held
    }

    /// The block index in the bytes read at opening, if blocks can be located by it.
    fn usable_index(&self) -> Option<Index> {
        if !self.use_index {
            return None;
        }
        // The first block magic after the tree, in the bytes read after it (as the scan finds it).
        let (rest_start, rest) = self.opening.first()?;
        let first = rest_start + memchr::memmem::find(rest, &asdf_block::BLOCK_MAGIC)? as u64;
        let (tail_start, tail) = self.opening.last()?;
        let (at, offsets) = tail_index(tail)?;
        let at = tail_start + at as u64;
        let increasing = offsets.windows(2).all(|w| w[0] < w[1]);
        let usable = offsets.first() == Some(&first)
            && increasing
            && offsets
                .last()
                .is_some_and(|&l| l.saturating_add(HEADER_LEN as u64) <= at);
        usable.then_some(Index { offsets, at })
    }

    /// Scans the blocks as the local reader does, reading the headers the index names first
    /// (in concurrent, coalesced requests).
    async fn scan(&self, object: &RemoteObject) -> Result<BlockLayout> {
        let mut held = self.held(object.size());
        if let Some(index) = &self.index {
            let ranges: Vec<Range<u64>> = index
                .offsets
                .iter()
                .map(|&o| o..o.saturating_add(HEADER_LEN as u64))
                .collect();
            let missing = held.missing(&ranges);
            for (r, b) in missing.iter().zip(object.fetch(&missing).await?) {
                held.hold(r.start, b);
            }
        }
        scan(object, &mut held, self.start, self.use_index).await
    }

    /// Every block, scanned (once) if not yet.
    pub(crate) async fn layout(&self, object: &RemoteObject) -> Result<&BlockLayout> {
        if let Some(l) = self.scanned.get() {
            return Ok(l);
        }
        let layout = self.scan(object).await?;
        Ok(self.scanned.get_or_init(|| layout))
    }

    /// The bytes read at opening after the tree and at the end of the file: block reads take
    /// what they hold from them (a small file entirely).
    pub(crate) fn opening(&self) -> &[(u64, Bytes)] {
        &self.opening
    }

    /// The scanned layout, if scanned.
    pub(crate) fn scanned(&self) -> Option<&BlockLayout> {
        self.scanned.get()
    }

    /// The number of blocks.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// The header of block `i`, when known.
    pub(crate) fn info(&self, i: usize) -> Option<&BlockInfo> {
        match self.scanned.get() {
            Some(l) => l.blocks.get(i),
            None => self.lazy.get(i)?.get(),
        }
    }

    /// What to read for block `i`.
    pub(crate) fn want(&self, i: usize) -> Want {
        if let Some(info) = self.info(i) {
            return Want::Stored(info.stored_range());
        }
        let (offsets, at) = match &self.index {
            Some(x) => (&x.offsets, x.at),
            None => return Want::Span(0..0),
        };
        let end = offsets.get(i + 1).copied().unwrap_or(at);
        Want::Span(offsets[i]..end)
    }

    /// Learns block `i`'s header from `bytes`, read from the start of its span: `None` unless
    /// they hold a valid header of a block that ends inside the span, stored bytes included
    /// (the caller scans then).
    pub(crate) fn learn(
        &self,
        i: usize,
        span: &Range<u64>,
        bytes: &Bytes,
        size: u64,
    ) -> Option<BlockInfo> {
        let mut held = HeldRanges::new(size);
        held.hold(span.start, bytes.clone());
        self.learn_held(i, span, &mut held)
    }

    /// [`learn`](Self::learn) from the bytes of `held`.
    fn learn_held(&self, i: usize, span: &Range<u64>, held: &mut HeldRanges) -> Option<BlockInfo> {
        let info = header_at(held, span.start, i)?;
        let inside = info.end() <= span.end && info.stored_range().end <= span.end;
        if info.header.is_streamed() || !inside {
            return None;
        }
        Some(*self.lazy.get(i)?.get_or_init(|| info))
    }

    /// Block `i`'s stored bytes out of `bytes`, read for `want`; `None` when its header, read
    /// from a span, does not check out ([`learn`](Self::learn)).
    pub(crate) fn stored(&self, i: usize, want: &Want, bytes: Bytes, size: u64) -> Option<Bytes> {
        let span = match want {
            Want::Stored(_) => return Some(bytes),
            Want::Span(r) => r.clone(),
        };
        let info = self.learn(i, &span, &bytes, size)?;
        let from = (info.data_offset - span.start) as usize;
        Some(bytes.slice(from..from + info.stored_len as usize))
    }
}
