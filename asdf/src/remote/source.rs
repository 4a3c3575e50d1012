//! The bytes of a remote object as a block-layer [`Source`]: the ranges read so far, served from
//! memory. A range not held yet is not read here (that would block inside async code): the
//! read fails and the range is recorded, the caller fetches it and runs the block scanner
//! again ([`scan`]). Each round adds the missing range, so the rounds end.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;
use std::ops::Range;

use asdf_block::{BlockLayout, Source};
use bytes::Bytes;

use super::object::RemoteObject;
use crate::error::{AsdfError, Result};

/// Bytes read ahead on a miss: enough for a block header and what follows it.
const READ_AHEAD: u64 = 64 << 10;

/// Held ranges of one remote object of `size` bytes, and the first range a read missed.
pub(crate) struct HeldRanges {
    size: u64,
    held: BTreeMap<u64, Bytes>,
    missed: Option<Range<u64>>,
}

impl HeldRanges {
    pub(crate) fn new(size: u64) -> Self {
        HeldRanges {
            size,
            held: BTreeMap::new(),
            missed: None,
        }
    }

    /// Keeps `bytes`, the object's bytes from `start` (the longer piece when two start there).
    pub(crate) fn hold(&mut self, start: u64, bytes: Bytes) {
        if bytes.is_empty() {
            return;
        }
        let longer = self.held.get(&start).is_none_or(|b| b.len() < bytes.len());
        if longer {
            self.held.insert(start, bytes);
        }
    }

    /// Which of `ranges` no held piece covers.
    pub(crate) fn missing(&self, ranges: &[Range<u64>]) -> Vec<Range<u64>> {
        ranges
            .iter()
            .filter(|r| self.covering(r.start, r.end).is_none())
            .cloned()
            .collect()
    }

    /// The first range a read missed since the last call.
    pub(crate) fn take_missed(&mut self) -> Option<Range<u64>> {
        self.missed.take()
    }

    fn covering(&self, start: u64, end: u64) -> Option<(&u64, &Bytes)> {
        self.held
            .range(..=start)
            .rev()
            .find(|(s, b)| end <= **s + b.len() as u64)
    }
}

impl Source for HeldRanges {
    fn len(&self) -> u64 {
        self.size
    }

    fn get(&mut self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        let end = offset.saturating_add(len as u64).min(self.size);
        if offset >= end {
            return Ok(Cow::Borrowed(&[]));
        }
        if self.covering(offset, end).is_none() {
            let want = offset..end.max(offset.saturating_add(READ_AHEAD)).min(self.size);
            self.missed.get_or_insert(want);
            return Err(io::Error::other("not read yet"));
        }
        let (s, b) = self
            .covering(offset, end)
            .ok_or_else(|| io::Error::other("not held"))?;
        let from = (offset - s) as usize;
        Ok(Cow::Borrowed(&b[from..from + (end - offset) as usize]))
    }

    fn window(&self) -> usize {
        // Forward searches (the first block after the tree) look at a few kB: the first read
        // usually holds them already.
        4 << 10
    }
}

/// Locates the blocks of `object` after byte `start`, as the local reader does
/// ([`asdf_block::scan_blocks`]), over `held`: each range the scan misses is fetched and the
/// scan runs again.
pub(crate) async fn scan(
    object: &RemoteObject,
    held: &mut HeldRanges,
    start: u64,
    use_index: bool,
) -> Result<BlockLayout> {
    loop {
        let result = asdf_block::scan_blocks(held, start, use_index);
        match held.take_missed() {
            Some(range) => {
                let bytes = object.fetch_one(range.clone()).await?;
                held.hold(range.start, bytes);
            }
            None => return result.map_err(|e| AsdfError::from(e.in_file(object.url()))),
        }
    }
}

/// The header of block `index` at `offset`, read from `held` alone: `None` when the bytes held
/// do not make a valid header there.
pub(crate) fn header_at(
    held: &mut HeldRanges,
    offset: u64,
    index: usize,
) -> Option<asdf_block::BlockInfo> {
    let info = asdf_block::layout::block_info_at(held, offset, index).ok();
    if held.take_missed().is_some() {
        return None;
    }
    info
}
