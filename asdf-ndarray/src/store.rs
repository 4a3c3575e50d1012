//! Where block bytes come from.

use std::borrow::Cow;

use asdf_block::{BlockInfo, BlockReader, ReadOptions};

use crate::error::{NdError, Result};

/// The source of ndarray block data: the blocks of the file the tree belongs to and, when the
/// caller supports it, external files named by string `source`s.
///
/// Implemented for [`asdf_block::BlockReader`]: uncompressed blocks are borrowed from its
/// buffer or memory map (so typed views are zero-copy), compressed blocks are decoded.
///
/// ```
/// use std::borrow::Cow;
/// use asdf_ndarray::{BlockStore, NdError};
/// /// A store holding the decoded blocks in memory.
/// struct InMemory(Vec<Vec<u8>>);
/// impl BlockStore for InMemory {
///     fn block(&self, source: i64) -> Result<Cow<'_, [u8]>, NdError> {
///         let i = if source < 0 { self.0.len() as i64 + source } else { source };
///         usize::try_from(i).ok().and_then(|i| self.0.get(i))
///             .map(|b| Cow::Borrowed(&b[..]))
///             .ok_or_else(|| NdError::Usage(format!("no block {source}")))
///     }
/// }
/// let store = InMemory(vec![vec![1, 2, 3]]);
/// assert_eq!(&*store.block(-1).unwrap(), &[1, 2, 3]);
/// assert!(store.external("other.asdf").is_err());
/// ```
pub trait BlockStore {
    /// The decoded data of block `source` (negative counts from the end, `-1` = last).
    fn block(&self, source: i64) -> Result<Cow<'_, [u8]>>;

    /// The decoded data of the first block of the external ASDF file `uri` (relative to the
    /// file the tree came from). The default resolves nothing.
    fn external(&self, uri: &str) -> Result<Cow<'_, [u8]>> {
        Err(NdError::NoExternal(uri.to_string()))
    }

    /// The decoded size of block `source`, when this store can also decode it straight into a
    /// caller's buffer with [`block_into`](Self::block_into). The default: `None` (it cannot).
    fn block_len(&self, source: i64) -> Result<Option<u64>> {
        let _ = source;
        Ok(None)
    }

    /// The bytes of the file `key` (a chunk key, or `.zarray`) of the zarr directory store at
    /// `store` (as an asdf-zarr node names it: relative to the file the tree came from, or
    /// absolute); `None` when the store has no such file (a chunk never written). The default
    /// resolves nothing: [`NdError::NoExternal`].
    fn zarr_file(&self, store: &str, key: &str) -> Result<Option<Vec<u8>>> {
        Err(NdError::NoExternal(format!("{store}/{key}")))
    }

    /// The decoded bytes `range` of block `source`, when this store can decode them without the
    /// rest of the block (Python asdf's chunked `lz4`: only the chunks the range overlaps).
    /// The default: `None` (the caller decodes the whole block with [`block`](Self::block)).
    fn block_range(&self, source: i64, range: std::ops::Range<u64>) -> Result<Option<Vec<u8>>> {
        let _ = (source, range);
        Ok(None)
    }

    /// Decodes block `source` into `dst` (exactly [`block_len`](Self::block_len) bytes), with
    /// the same checks as [`block`](Self::block). Used to fill an owned array without an
    /// intermediate buffer. Only called when `block_len` returned a size.
    fn block_into(&self, source: i64, dst: &mut [u8]) -> Result<()> {
        let _ = dst;
        Err(NdError::Usage(format!(
            "this store cannot decode block {source} into a buffer"
        )))
    }
}

/// Largest decoded/stored ratio for which a compressed block's declared size is trusted to
/// size a buffer up front (real data compresses far less; bombs far more).
const MAX_DIRECT_RATIO: u64 = 64;

/// The decoded size of a block that a caller may allocate before decoding it, for
/// [`BlockStore::block_len`]: only a size bounded by the file (uncompressed data) or plausible
/// for the stored bytes (within the block ceiling and 64 × them). Other blocks take
/// [`BlockStore::block`], which applies the ceilings and each codec's own bounds before
/// allocating.
///
/// ```
/// use asdf_block::{BlockReader, BlockWriter, Label, ReadOptions};
/// let mut w = BlockWriter::new(Vec::new(), 0, Default::default());
/// w.write_data(&[1u8; 4096], Label::from_name("zlib").unwrap(), &Default::default()).unwrap();
/// let file = w.finish().unwrap();
/// let r = BlockReader::new(&file[..], 0, ReadOptions::default()).unwrap();
/// // 4096 bytes of ones compress far more than 64 times: not trusted to size a buffer.
/// assert_eq!(asdf_ndarray::direct_len(&r.blocks()[0], r.options()), None);
/// ```
pub fn direct_len(info: &BlockInfo, options: &ReadOptions) -> Option<u64> {
    let (h, size) = (&info.header, info.data_size());
    let plausible = !h.is_compressed()
        || (size <= options.limits.max_decoded_block_size
            && size <= h.used_size.saturating_mul(MAX_DIRECT_RATIO));
    plausible.then_some(size)
}

impl<B: AsRef<[u8]>> BlockStore for BlockReader<B> {
    fn block(&self, source: i64) -> Result<Cow<'_, [u8]>> {
        Ok(self.data(source)?)
    }
    fn block_len(&self, source: i64) -> Result<Option<u64>> {
        Ok(direct_len(self.info(source)?, self.options()))
    }
    fn block_into(&self, source: i64, dst: &mut [u8]) -> Result<()> {
        Ok(self.decode_into(source, dst)?)
    }
    fn block_range(&self, source: i64, range: std::ops::Range<u64>) -> Result<Option<Vec<u8>>> {
        Ok(self.data_range(source, range)?)
    }
}

impl<S: BlockStore + ?Sized> BlockStore for &S {
    fn block(&self, source: i64) -> Result<Cow<'_, [u8]>> {
        (**self).block(source)
    }
    fn external(&self, uri: &str) -> Result<Cow<'_, [u8]>> {
        (**self).external(uri)
    }
    fn block_len(&self, source: i64) -> Result<Option<u64>> {
        (**self).block_len(source)
    }
    fn block_into(&self, source: i64, dst: &mut [u8]) -> Result<()> {
        (**self).block_into(source, dst)
    }
    fn block_range(&self, source: i64, range: std::ops::Range<u64>) -> Result<Option<Vec<u8>>> {
        (**self).block_range(source, range)
    }
    fn zarr_file(&self, store: &str, key: &str) -> Result<Option<Vec<u8>>> {
        (**self).zarr_file(store, key)
    }
}

/// A store without blocks, for trees whose arrays are all inline.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoBlocks;

impl BlockStore for NoBlocks {
    fn block(&self, source: i64) -> Result<Cow<'_, [u8]>> {
        Err(NdError::Usage(format!(
            "the ndarray refers to block {source} but no blocks are available"
        )))
    }
}
