//! Decoded compressed blocks kept for reuse, so a block shared by many arrays (views with
//! different offsets and shapes into one large compressed block) is decoded once, not once per
//! array. The file reads through it in `arrays.rs` (`cached_data`).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

/// Per block of one open file: how often it was decoded, and its decoded bytes once kept.
///
/// A block is kept from its **second** use on (most blocks hold one array and are read once:
/// keeping them would only hold memory), while the bytes kept stay within a budget
/// ([`OpenOptions::max_cached_block_bytes`](crate::OpenOptions::max_cached_block_bytes));
/// past it, blocks are decoded on every use as before. Kept blocks live as long as the file.
#[derive(Debug)]
pub(crate) struct BlockCache {
    budget: u64,
    used: AtomicU64,
    uses: Vec<AtomicU32>,
    slots: Vec<OnceLock<Vec<u8>>>,
}

impl BlockCache {
    pub(crate) fn new(budget: u64, blocks: usize) -> Self {
        BlockCache {
            budget,
            used: AtomicU64::new(0),
            uses: (0..blocks).map(|_| AtomicU32::new(0)).collect(),
            slots: (0..blocks).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The kept data of block `i`.
    pub(crate) fn get(&self, i: usize) -> Option<&[u8]> {
        self.slots.get(i)?.get().map(Vec::as_slice)
    }

    /// Whether block `i` was decoded before (or is kept).
    pub(crate) fn seen(&self, i: usize) -> bool {
        self.uses
            .get(i)
            .is_some_and(|u| u.load(Ordering::Relaxed) > 0)
    }

    /// Counts one use of block `i` decoded outside the cache (straight into an array).
    pub(crate) fn note_use(&self, i: usize) {
        if let Some(u) = self.uses.get(i) {
            u.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts one use of block `i`, `size` bytes decoded; true when it should be kept: used
    /// before, and `size` fits the budget (then reserved).
    pub(crate) fn admit(&self, i: usize, size: u64) -> bool {
        let Some(uses) = self.uses.get(i) else {
            return false;
        };
        if uses.fetch_add(1, Ordering::Relaxed) == 0 {
            return false;
        }
        self.used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |u| {
                u.checked_add(size).filter(|&t| t <= self.budget)
            })
            .is_ok()
    }

    /// Keeps `data` as block `i` (reserved by [`admit`](Self::admit)) and returns the kept
    /// bytes; when another thread kept it first, its reservation is released.
    pub(crate) fn keep(&self, i: usize, data: Vec<u8>) -> Cow<'_, [u8]> {
        let Some(slot) = self.slots.get(i) else {
            return Cow::Owned(data);
        };
        let size = data.len() as u64;
        let mut data = Some(data);
        let kept = slot.get_or_init(|| data.take().unwrap_or_default());
        if data.is_some() {
            self.used.fetch_sub(size, Ordering::SeqCst);
        }
        Cow::Borrowed(kept)
    }
}
