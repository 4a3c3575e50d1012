//! The error type of the block layer.

use std::path::PathBuf;

use crate::Label;

/// Everything that can go wrong reading or writing ASDF blocks.
///
/// Errors about a block name its index (0-based, in file order) and the byte offset of its magic
/// token in the file; errors from a file opened by path are wrapped in [`BlockError::File`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BlockError {
    /// An error from a file opened by path, naming the file.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong in it.
        #[source]
        source: Box<BlockError>,
    },

    /// An I/O error while doing `context`.
    #[error("I/O error while {context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// The bytes at `offset` are not a block magic token `\xd3BLK`.
    #[error("expected block magic \\xd3BLK at byte offset {offset}, found {found:02x?}")]
    BadMagic {
        /// Byte offset in the file.
        offset: u64,
        /// The bytes found there (fewer than 4 at the end of the file).
        found: Vec<u8>,
    },

    /// A block header ends beyond the end of the file.
    #[error("block {block} at byte offset {offset}: header is truncated (needs {needed} bytes, the file has {available} left)")]
    TruncatedHeader {
        /// Block index.
        block: usize,
        /// Byte offset of the block magic.
        offset: u64,
        /// Header bytes needed.
        needed: u64,
        /// Bytes left in the file.
        available: u64,
    },

    /// A block header declares a `header_size` below the 48 bytes of the fixed fields.
    #[error("block {block} at byte offset {offset}: header_size {header_size} is smaller than the required 48")]
    HeaderTooSmall {
        /// Block index.
        block: usize,
        /// Byte offset of the block magic.
        offset: u64,
        /// The declared header size.
        header_size: u16,
    },

    /// `used_size` exceeds `allocated_size`.
    #[error("block {block} at byte offset {offset}: used_size {used} exceeds allocated_size {allocated}")]
    UsedExceedsAllocated {
        /// Block index.
        block: usize,
        /// Byte offset of the block magic.
        offset: u64,
        /// `used_size`.
        used: u64,
        /// `allocated_size`.
        allocated: u64,
    },

    /// An uncompressed block whose `data_size` differs from its `used_size`.
    #[error("block {block} at byte offset {offset}: uncompressed block has used_size {used} but data_size {data}")]
    SizeMismatch {
        /// Block index.
        block: usize,
        /// Byte offset of the block magic.
        offset: u64,
        /// `used_size`.
        used: u64,
        /// `data_size`.
        data: u64,
    },

    /// A block's allocated space runs past the end of the file.
    #[error("block {block} at byte offset {offset}: its data runs to byte {end} but the file has only {file_len} bytes")]
    OutOfBounds {
        /// Block index.
        block: usize,
        /// Byte offset of the block magic.
        offset: u64,
        /// End of the block's allocated space.
        end: u64,
        /// File length.
        file_len: u64,
    },

    /// Two blocks overlap (only possible through a block index, which is then not used).
    #[error("block {block} at byte offset {offset} overlaps the previous block, which ends at byte {previous_end}")]
    Overlap {
        /// Block index.
        block: usize,
        /// Byte offset of the block magic.
        offset: u64,
        /// End of the previous block's allocated space.
        previous_end: u64,
    },

    /// A streamed block that is compressed, or not the last block.
    #[error("block {block} at byte offset {offset}: invalid streamed block: {reason}")]
    InvalidStreamed {
        /// Block index.
        block: usize,
        /// Byte offset of the block magic.
        offset: u64,
        /// Why.
        reason: &'static str,
    },

    /// A compression label no registered codec handles.
    #[error(
        "block {block} at byte offset {offset}: unknown compression label {label} (known: {known})"
    )]
    UnknownCompression {
        /// Block index.
        block: usize,
        /// Byte offset of the block magic.
        offset: u64,
        /// The label.
        label: Label,
        /// The labels this reader knows, for the message.
        known: String,
    },

    /// A codec name or label asked for by the caller is unknown.
    #[error("unknown compression {name:?} (known: none, {known})")]
    UnknownCodecName {
        /// The name asked for.
        name: String,
        /// The registered codecs, for the message.
        known: String,
    },

    /// The decoded size declared by a block is above the configured ceiling.
    #[error("block {block} at byte offset {offset}: decoded size {size} bytes exceeds the limit of {limit} bytes (raise Limits::max_decoded_block_size to read it)")]
    TooLarge {
        /// Block index.
        block: usize,
        /// Byte offset of the block magic.
        offset: u64,
        /// The declared decoded size.
        size: u64,
        /// The configured ceiling.
        limit: u64,
    },

    /// The compressed data of a block could not be decoded.
    #[error("block {block} at byte offset {offset}: {codec} data is invalid: {message}")]
    Decode {
        /// Block index.
        block: usize,
        /// Byte offset of the block magic.
        offset: u64,
        /// The codec's name.
        codec: String,
        /// What the codec reported.
        message: String,
    },

    /// The MD5 checksum in a block header matches neither convention.
    #[error("block {block} at byte offset {offset}: checksum mismatch: header has {}, stored bytes hash to {}{}",
        hex(expected), hex(stored), decoded.map(|d| format!(", decoded bytes to {}", hex(&d))).unwrap_or_default())]
    ChecksumMismatch {
        /// Block index.
        block: usize,
        /// Byte offset of the block magic.
        offset: u64,
        /// The checksum in the header.
        expected: [u8; 16],
        /// MD5 of the stored (possibly compressed) bytes.
        stored: [u8; 16],
        /// MD5 of the decoded bytes, when the block is compressed and the policy looked at it.
        decoded: Option<[u8; 16]>,
    },

    /// A block index (`-1` = last) that does not name a block of the file.
    #[error("no block {index}: the file has {count} block(s)")]
    NoSuchBlock {
        /// The requested index.
        index: i64,
        /// How many blocks there are.
        count: usize,
    },

    /// Encoding a block failed.
    #[error("cannot compress with {codec}: {message}")]
    Encode {
        /// The codec's name.
        codec: String,
        /// What went wrong.
        message: String,
    },

    /// A caller-side misuse, e.g. writing after a streamed block.
    #[error("{0}")]
    Usage(String),
}

impl BlockError {
    /// Wraps this error with the path of the file it concerns (once).
    pub fn in_file(self, path: impl Into<PathBuf>) -> BlockError {
        match self {
            e @ BlockError::File { .. } => e,
            e => BlockError::File {
                path: path.into(),
                source: Box::new(e),
            },
        }
    }

    /// The error without its file wrapper.
    pub fn root(&self) -> &BlockError {
        match self {
            BlockError::File { source, .. } => source.root(),
            e => e,
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> BlockError {
        BlockError::Io {
            context: context.into(),
            source,
        }
    }
}

/// Lower-case hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Result alias of this crate.
pub type Result<T, E = BlockError> = std::result::Result<T, E>;
