//! Where block bytes come from.

use std::borrow::Cow;

use asdf_block::BlockReader;

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
}

impl<B: AsRef<[u8]>> BlockStore for BlockReader<B> {
    fn block(&self, source: i64) -> Result<Cow<'_, [u8]>> {
        Ok(self.data(source)?)
    }
}

impl<S: BlockStore + ?Sized> BlockStore for &S {
    fn block(&self, source: i64) -> Result<Cow<'_, [u8]>> {
        (**self).block(source)
    }
    fn external(&self, uri: &str) -> Result<Cow<'_, [u8]>> {
        (**self).external(uri)
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
