//! Reading policies: checksums, resource limits, codecs.

use std::sync::Arc;

use crate::codec::CodecRegistry;

/// How block checksums are verified when block data is read.
///
/// Python asdf ≤ 5.2 (and so every asdf-standard reference file) stored the MD5 of the *decoded*
/// bytes of compressed blocks; the standard, asdf ≥ 5.3, ASDF.jl and this crate store the MD5 of
/// the stored bytes. For uncompressed blocks the two agree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ChecksumPolicy {
    /// Only the standard convention: the MD5 of the stored bytes.
    Strict,
    /// The standard convention, then the legacy one (MD5 of the decoded bytes).
    #[default]
    AcceptLegacy,
    /// Do not verify (as Python asdf does by default); zero-copy access is then O(1).
    Skip,
}

/// Resource ceilings applied before anything is allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limits {
    /// Largest decoded size accepted for one compressed block (uncompressed blocks are never
    /// copied, and are bounded by the file length). Default 16 GiB.
    pub max_decoded_block_size: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_decoded_block_size: 16 << 30,
        }
    }
}

impl Limits {
    /// The preset for files from untrusted sources: one compressed block may decode to at most
    /// 1 GiB (instead of 16 GiB). zstd, xz and bzip2 reach ratios above 1000:1 on real data, so
    /// with the default a file of a few MiB may legitimately demand tens of GiB; a service
    /// reading files from the internet should not honour that. Real compressed blocks are a few
    /// MiB (the largest in the test corpus) to a few hundred MiB.
    ///
    /// ```
    /// use asdf_block::Limits;
    /// assert_eq!(Limits::untrusted().max_decoded_block_size, 1 << 30);
    /// ```
    pub fn untrusted() -> Self {
        Limits {
            max_decoded_block_size: 1 << 30,
        }
    }
}

/// Options of a block reader.
///
/// ```
/// use asdf_block::{ChecksumPolicy, ReadOptions};
/// let opts = ReadOptions { checksums: ChecksumPolicy::Strict, ..ReadOptions::default() };
/// assert!(opts.use_index);
/// ```
#[derive(Clone, Debug)]
pub struct ReadOptions {
    /// Checksum verification policy.
    pub checksums: ChecksumPolicy,
    /// Resource ceilings.
    pub limits: Limits,
    /// Whether a (validated) block index may be used to locate blocks; blocks are found by
    /// walking their headers otherwise, or when the index fails validation.
    pub use_index: bool,
    /// The codecs by label.
    pub codecs: Arc<CodecRegistry>,
}

impl ReadOptions {
    /// The default options with [`Limits::untrusted`].
    ///
    /// ```
    /// use asdf_block::{Limits, ReadOptions};
    /// assert_eq!(ReadOptions::untrusted().limits, Limits::untrusted());
    /// ```
    pub fn untrusted() -> Self {
        ReadOptions {
            limits: Limits::untrusted(),
            ..ReadOptions::default()
        }
    }
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            checksums: ChecksumPolicy::default(),
            limits: Limits::default(),
            use_index: true,
            codecs: Arc::new(CodecRegistry::default()),
        }
    }
}

/// Options of a block writer.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// Write the MD5 of each block's stored bytes (else all zeros: "no checksum").
    pub checksums: bool,
    /// Align each block's data to this many bytes in the file (by enlarging `header_size`), so
    /// readers can view it in place; 0 or 1 = no alignment (Python asdf's layout).
    pub align: u32,
    /// Write a block index after the last block (never after a streamed block).
    pub index: bool,
    /// The codecs by label.
    pub codecs: Arc<CodecRegistry>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            checksums: true,
            align: 0,
            index: true,
            codecs: Arc::new(CodecRegistry::default()),
        }
    }
}
