//! A store that reads through one block already decoded: `verify`'s single pass checks a
//! block's checksum and then its arrays from the same buffer.

use std::borrow::Cow;

use asdf_block::{ChecksumPolicy, ChecksumStatus};
use asdf_ndarray::BlockStore;

use crate::error::Result;
use crate::file::AsdfFile;

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

    fn block_range(
        &self,
        source: i64,
        range: std::ops::Range<u64>,
    ) -> asdf_ndarray::Result<Option<Vec<u8>>> {
        if self.is_mine(source)? {
            return Ok(None); // sliced from `data` through `block`
        }
        self.file.block_range(source, range)
    }

    fn zarr_file(&self, store: &str, key: &str) -> asdf_ndarray::Result<Option<Vec<u8>>> {
        self.file.zarr_file(store, key)
    }
}
