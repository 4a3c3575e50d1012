//! The bytes of a remote object as a block-layer [`Source`]: ranges read so far are kept and
//! served from memory; a range not held yet is read with one request (and some read-ahead), so
//! the block scanner of `asdf-block` runs unchanged over a remote file.

use std::borrow::Cow;
use std::io;
use std::ops::Range;

use bytes::Bytes;

use super::object::RemoteObject;
use asdf_block::Source;

/// Bytes read ahead on a miss: enough for a block header and what follows it.
const READ_AHEAD: u64 = 64 << 10;

/// Held ranges of one remote object, read through `handle` when missing.
pub(crate) struct HeldRanges<'a> {
    object: &'a RemoteObject,
    handle: &'a tokio::runtime::Handle,
    held: Vec<(u64, Bytes)>,
}

impl<'a> HeldRanges<'a> {
    pub(crate) fn new(object: &'a RemoteObject, handle: &'a tokio::runtime::Handle) -> Self {
        HeldRanges {
            object,
            handle,
            held: Vec::new(),
        }
    }

    /// Keeps `bytes`, the object's bytes from `start`.
    pub(crate) fn hold(&mut self, start: u64, bytes: Bytes) {
        if !bytes.is_empty() {
            self.held.push((start, bytes));
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

    fn covering(&self, start: u64, end: u64) -> Option<usize> {
        self.held
            .iter()
            .position(|(s, b)| *s <= start && end <= s + b.len() as u64)
    }
}

impl Source for HeldRanges<'_> {
    fn len(&self) -> u64 {
        self.object.size()
    }

    fn get(&mut self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        let size = self.object.size();
        let end = offset.saturating_add(len as u64).min(size);
        if offset >= end {
            return Ok(Cow::Borrowed(&[]));
        }
        let i = match self.covering(offset, end) {
            Some(i) => i,
            None => {
                let want = offset..end.max(offset.saturating_add(READ_AHEAD)).min(size);
                let bytes = self
                    .handle
                    .block_on(self.object.fetch_one(want))
                    .map_err(io::Error::other)?;
                self.held.push((offset, bytes));
                self.held.len() - 1
            }
        };
        let (s, b) = &self.held[i];
        let from = (offset - s) as usize;
        Ok(Cow::Borrowed(&b[from..from + (end - offset) as usize]))
    }

    fn window(&self) -> usize {
        // Forward searches (the first block after the tree) look at a few kB: the first read
        // usually holds them already.
        4 << 10
    }
}
