//! The codec interface: the [`Codec`] trait, its error and its encoding options.

use std::fmt;
use std::io;

use crate::Label;

/// What a codec reports when it cannot decode or encode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CodecError {
    /// Human-readable description.
    pub message: String,
    /// What went wrong, for callers that answer differently (a stream longer than declared is
    /// a limit to some, corruption to others).
    pub kind: CodecErrorKind,
}

/// The kind of a [`CodecError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CodecErrorKind {
    /// The data is not valid for the codec, cannot be encoded, or does not fit in memory.
    #[default]
    Invalid,
    /// The data decodes to fewer bytes than declared.
    Short,
    /// The data decodes to more bytes than declared.
    Long,
}

impl CodecError {
    /// An [`Invalid`](CodecErrorKind::Invalid) error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self::with_kind(CodecErrorKind::Invalid, message)
    }

    /// An error of `kind` with this message.
    ///
    /// ```
    /// use array_codecs::{CodecError, CodecErrorKind};
    /// let e = CodecError::with_kind(CodecErrorKind::Long, "too much data").context("zstd");
    /// assert_eq!(e.to_string(), "zstd: too much data");
    /// assert_eq!(e.kind, CodecErrorKind::Long);
    /// ```
    pub fn with_kind(kind: CodecErrorKind, message: impl Into<String>) -> Self {
        CodecError {
            message: message.into(),
            kind,
        }
    }

    /// The data ended after `got` decoded bytes where `expected` were declared.
    pub fn short(got: usize, expected: usize) -> Self {
        Self::with_kind(
            CodecErrorKind::Short,
            format!("data ends after {got} decoded bytes, {expected} expected"),
        )
    }

    /// The data decodes to more than the `expected` bytes declared.
    pub fn long(expected: usize) -> Self {
        Self::with_kind(
            CodecErrorKind::Long,
            format!("data decodes to more than the {expected} bytes the header declares"),
        )
    }

    /// The same error with `prefix: ` before its message.
    pub fn context(self, prefix: &str) -> Self {
        CodecError {
            message: format!("{prefix}: {}", self.message),
            kind: self.kind,
        }
    }
}

impl From<array_core::AllocError> for CodecError {
    fn from(e: array_core::AllocError) -> Self {
        CodecError::new(format!("cannot allocate the decoded data: {e}"))
    }
}

impl From<io::Error> for CodecError {
    fn from(e: io::Error) -> Self {
        CodecError::new(e.to_string())
    }
}

/// Options for encoding one block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeOptions {
    /// Codec-specific compression level; `None` = the codec's default (zlib 6, bzip2 9, zstd 3,
    /// blosc 5, xz 6; LZ4 has one level).
    pub level: Option<i32>,
    /// Size in bytes of one element of the data (Blosc shuffles by it); 1 when unknown.
    pub typesize: usize,
    /// Threads one block may be compressed with, where the codec can split a block (zstd,
    /// blosc, LZ4 chunks); `0` = automatic: one inside a rayon task (blocks are then usually
    /// encoded in parallel already), every core otherwise. `asdf_block::encode_blocks`
    /// sets it from the rayon pool and the number of blocks.
    pub threads: usize,
}

impl EncodeOptions {
    /// The thread count [`EncodeOptions::threads`] stands for (at least 1).
    pub fn effective_threads(&self) -> usize {
        match self.threads {
            0 if in_rayon_task() => 1,
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
        .min(256)
    }
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            level: None,
            typesize: 1,
            threads: 0,
        }
    }
}

/// The ASDF extension that declares a codec in a file's `history.extensions` (as Python asdf
/// records it), for codecs outside the ASDF Standard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodecExtension {
    /// The extension URI, e.g. `asdf://asdf-format.org/compression/extensions/zstd-1.0.0`.
    pub uri: &'static str,
    /// The Python class implementing it, e.g.
    /// `asdf_compression.zstd.extensions.ZstdExtension`.
    pub class: &'static str,
}

/// A block compression codec.
///
/// Implement it to read or write a label this crate does not know, and register it in a
/// [`CodecRegistry`](crate::CodecRegistry):
///
/// ```
/// use array_codecs::{Codec, CodecError, CodecRegistry, EncodeOptions, Label};
/// /// A toy codec that stores bytes reversed.
/// #[derive(Debug)]
/// struct Reverse;
/// impl Codec for Reverse {
///     fn label(&self) -> Label { Label(*b"rev\0") }
///     fn name(&self) -> &str { "rev" }
///     fn decode_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
///         if src.len() != dst.len() { return Err(CodecError::new("length mismatch")); }
///         dst.iter_mut().zip(src.iter().rev()).for_each(|(d, s)| *d = *s);
///         Ok(())
///     }
///     fn encode(&self, src: &[u8], _: &EncodeOptions) -> Result<Vec<u8>, CodecError> {
///         Ok(src.iter().rev().copied().collect())
///     }
/// }
/// let mut reg = CodecRegistry::default();
/// reg.register(std::sync::Arc::new(Reverse));
/// let codec = reg.get(Label(*b"rev\0")).unwrap();
/// assert_eq!(codec.decode(b"cba", 3).unwrap(), b"abc");
/// ```
pub trait Codec: Send + Sync + fmt::Debug {
    /// The 4-byte label written in block headers.
    fn label(&self) -> Label;

    /// A short name for messages and command lines (usually the label without padding).
    fn name(&self) -> &str;

    /// Decodes `src` into exactly `dst.len()` bytes; producing fewer or more is an error.
    fn decode_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError>;

    /// Decodes `src`, which must produce exactly `expected` bytes.
    ///
    /// The default allocates `expected` bytes up front, so a registered codec relies on the
    /// reader's size ceiling; the built-in codecs override it to allocate only what the data
    /// can produce.
    fn decode(&self, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
        crate::io::decode_fresh(expected, |out| self.decode_into(src, out))
    }

    /// Exactly the decoded bytes `range` of `src` (data decoding to `expected` bytes), when this
    /// codec can decode them without the rest; `None` (the default) when the whole of `src` must
    /// be decoded. Python asdf's chunked `lz4` decodes only the 4 MiB chunks the range overlaps.
    fn decode_range(
        &self,
        src: &[u8],
        expected: usize,
        range: std::ops::Range<usize>,
    ) -> Result<Option<Vec<u8>>, CodecError> {
        let _ = (src, expected, range);
        Ok(None)
    }

    /// Compresses `src`.
    fn encode(&self, src: &[u8], opts: &EncodeOptions) -> Result<Vec<u8>, CodecError>;

    /// Compresses `src` into `out`. The default encodes all of `src`, then writes the result;
    /// codecs with a streaming encoder (`zstd`) write while they compress, and say so with
    /// [`streams`](Self::streams). A block writer hashes and writes such a codec's output as it
    /// comes, instead of compressing, hashing and writing a large block one after another.
    ///
    /// When `out` fails, so does the encoding, with an error whose message is `out`'s.
    fn encode_to(
        &self,
        src: &[u8],
        opts: &EncodeOptions,
        out: &mut dyn io::Write,
    ) -> Result<(), CodecError> {
        out.write_all(&self.encode(src, opts)?)?;
        Ok(())
    }

    /// Whether [`encode_to`](Self::encode_to) writes its output while it compresses (and uses
    /// [`EncodeOptions::threads`] on one block), so that a large block is best encoded alone,
    /// straight into the file. `false` (the default) for codecs that are given many blocks at
    /// once to compress in parallel.
    fn streams(&self) -> bool {
        false
    }

    /// The extension a file using this codec must list, `None` for the codecs the ASDF
    /// Standard and Python asdf know without one (`zlib`, `bzp2`, `lz4`).
    fn extension(&self) -> Option<CodecExtension> {
        None
    }
}

/// Whether the caller runs inside a rayon task (where blocks are usually encoded in parallel
/// already).
pub(crate) fn in_rayon_task() -> bool {
    #[cfg(feature = "parallel")]
    {
        rayon::current_thread_index().is_some()
    }
    #[cfg(not(feature = "parallel"))]
    {
        false
    }
}
