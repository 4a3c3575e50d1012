//! Decoded compressed blocks kept for reuse, so a block shared by many arrays (views with
//! different offsets and shapes into one large compressed block) is decoded once, not once per
//! array; and a store that reads through one block already decoded (`verify`'s single pass).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

use asdf_block::{BlockError, ChecksumPolicy, ChecksumStatus};
use asdf_ndarray::BlockStore;

use crate::error::Result;
use crate::file::AsdfFile;

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

impl<B: AsRef<[u8]>> AsdfFile<B> {
    /// Block `source`'s decoded data through the cache (charged to the decode budget already).
    pub(crate) fn cached_data(
        &self,
        source: i64,
    ) -> std::result::Result<Cow<'_, [u8]>, BlockError> {
        let info = self.blocks().info(source)?;
        if !info.header.is_compressed() {
            return self.blocks().data(source);
        }
        let i = info.index;
        if let Some(kept) = self.cache.get(i) {
            return Ok(Cow::Borrowed(kept));
        }
        let data = self.blocks().data(source)?;
        if self.cache.admit(i, data.len() as u64) {
            return Ok(self.cache.keep(i, data.into_owned()));
        }
        Ok(data)
    }
}

impl<B: AsRef<[u8]> + Sync> AsdfFile<B> {
    /// Decodes block `source` once, checking its checksum under `policy`, and calls `f` with the
    /// checksum status and a store in which that block is the decoded buffer (other blocks and
    /// external files read as usual): a caller that checks a block and then reads its arrays
    /// decodes it once. The block is charged to
    /// [`OpenOptions::max_total_decoded_bytes`](crate::OpenOptions::max_total_decoded_bytes).
    ///
    /// ```
    /// use asdf::{AsdfFile, AsdfWriter, StoreOptions};
    /// use asdf::block::{ChecksumPolicy, ChecksumStatus};
    /// let mut w = AsdfWriter::new();
    /// let node = w.add(&ndarray::Array1::<u16>::from_elem(500, 3), &StoreOptions::compressed("zlib").unwrap()).unwrap();
    /// let tree = asdf::yaml::Node::mapping([("x", node)]);
    /// let f = AsdfFile::from_bytes(w.to_bytes(tree, &Default::default()).unwrap(), &Default::default()).unwrap();
    /// let meta = f.meta("/x").unwrap();
    /// let sum = f.with_checked_block(0, ChecksumPolicy::Strict, |status, store| {
    ///     assert_eq!(status, ChecksumStatus::Stored);
    ///     meta.array::<u16>(store).unwrap().sum()
    /// }).unwrap();
    /// assert_eq!(sum, 1500);
    /// ```
    pub fn with_checked_block<R>(
        &self,
        source: i64,
        policy: ChecksumPolicy,
        f: impl FnOnce(ChecksumStatus, &(dyn BlockStore + Sync)) -> R,
    ) -> Result<R> {
        let info = self.blocks().info(source)?;
        self.decoded.charge(info)?;
        let (data, status) = self.blocks().checked_data(source, policy)?;
        let store = WithBlock {
            file: self,
            index: info.index,
            data: &data,
        };
        Ok(f(status, &store))
    }
}

/// A file's blocks with one of them already decoded into `data`.
struct WithBlock<'a, B> {
    file: &'a AsdfFile<B>,
    index: usize,
    data: &'a [u8],
}

impl<B: AsRef<[u8]>> WithBlock<'_, B> {
    fn is_mine(&self, source: i64) -> asdf_ndarray::Result<bool> {
        Ok(self.file.blocks().resolve(source)? == self.index)
    }
}

impl<B: AsRef<[u8]>> BlockStore for WithBlock<'_, B> {
    fn block(&self, source: i64) -> asdf_ndarray::Result<Cow<'_, [u8]>> {
        if self.is_mine(source)? {
            return Ok(Cow::Borrowed(self.data));
        }
        self.file.block(source)
    }

    fn external(&self, uri: &str) -> asdf_ndarray::Result<Cow<'_, [u8]>> {
        self.file.external(uri)
    }

    fn block_len(&self, source: i64) -> asdf_ndarray::Result<Option<u64>> {
        if self.is_mine(source)? {
            // Copied from `data` through `block`, never decoded again.
            return Ok(None);
        }
        self.file.block_len(source)
    }

    fn block_into(&self, source: i64, dst: &mut [u8]) -> asdf_ndarray::Result<()> {
        self.file.block_into(source, dst)
    }
}
