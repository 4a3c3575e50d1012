//! The error type of every fallible operation of this crate.

use crate::kind::ElementKind;

/// Everything that can go wrong reading, viewing, converting or writing a RawArray file.
///
/// Header errors name the field and the byte offset where it starts; data errors give the byte
/// offset (from the start of the file or stream) where the problem was found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error from the underlying reader, writer or file system.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),

    /// The input ended inside a header field.
    #[error("truncated header: field `{field}` at byte {offset} needs 8 bytes, but the input ends at byte {available}")]
    TruncatedHeader {
        /// Header field being read (`magic`, `flags`, `eltype`, `elbyte`, `size`, `ndims`, `dims[i]`).
        field: &'static str,
        /// Byte offset of the field.
        offset: u64,
        /// Bytes the input actually had.
        available: u64,
    },

    /// The first 8 bytes are not a known RawArray magic, and the historical pre-magic layout does
    /// not fit either (or historical layouts were disabled).
    #[error("bad magic at byte 0: expected the bytes \"rawarray\" (72 61 77 61 72 72 61 79), found {found:02x?}")]
    BadMagic {
        /// The 8 bytes found.
        found: [u8; 8],
    },

    /// A header field has a value that is invalid on its own or together with other fields.
    #[error("invalid header field `{field}` at byte {offset} (value {value}): {reason}")]
    InvalidField {
        /// Field name.
        field: &'static str,
        /// Byte offset of the field.
        offset: u64,
        /// The value found.
        value: u64,
        /// What was expected.
        reason: String,
    },

    /// Flag bits that no known writer sets (bit 3 and up).
    #[error("unknown flag bits {unknown:#x} in `flags` at byte 8 (value {flags:#x}); known bits are 0 (big-endian), 1 (compressed/encoded) and 2 (packed bits)")]
    UnknownFlags {
        /// The whole flags field.
        flags: u64,
        /// The unknown bits.
        unknown: u64,
    },

    /// A size computed from header fields does not fit in 64 bits or in this platform's `usize`.
    #[error("size overflow: {what} does not fit in memory on this platform")]
    SizeOverflow {
        /// What was being computed.
        what: &'static str,
    },

    /// A size from the header exceeds a configured ceiling ([`crate::ReadOptions`]).
    #[error("{what} is {value} bytes, above the configured limit of {limit} bytes")]
    LimitExceeded {
        /// What exceeded the limit.
        what: &'static str,
        /// The size requested by the header.
        value: u64,
        /// The configured limit.
        limit: u64,
    },

    /// The data segment is shorter than the header says.
    #[error("truncated data: {expected} bytes of data expected from byte {offset}, but only {available} are present")]
    TruncatedData {
        /// Byte offset where the data starts.
        offset: u64,
        /// Bytes the header calls for.
        expected: u64,
        /// Bytes actually present.
        available: u64,
    },

    /// Compressed or encoded data that cannot be decoded.
    #[error("corrupt {encoding} data at byte {offset}: {reason}")]
    CorruptData {
        /// `"LZ4 block"`, `"LEB128"`, `"bit array"` or `"bool"`.
        encoding: &'static str,
        /// Byte offset (from the start of the file) where the problem was found, as near as known.
        offset: u64,
        /// What is wrong.
        reason: String,
    },

    /// The caller asked for elements of one type, the file holds another.
    #[error("element type mismatch: the file holds {found}, the caller asked for {requested}")]
    TypeMismatch {
        /// The type the caller asked for.
        requested: ElementKind,
        /// The type in the file.
        found: ElementKind,
    },

    /// A record type's size does not match the file's `elbyte`.
    #[error("record size mismatch: the file's elbyte is {elbyte}, the record type is {record_size} bytes")]
    RecordSize {
        /// The file's element size.
        elbyte: u64,
        /// `size_of` the caller's record type.
        record_size: usize,
    },

    /// A zero-copy view cannot be made over this data; the copying read works.
    #[error("cannot view the data in place: {0}")]
    View(#[from] ViewError),

    /// Invalid arguments to a writer or converter.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// The element type has no ASDF equivalent (or the ASDF datatype has no RawArray one).
    #[error("no equivalent type: {0}")]
    NoEquivalent(String),
}

/// Why a zero-copy view is impossible (ndarray-npy style). The copying read always works.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ViewError {
    /// The data starts at an address that is not a multiple of the element type's alignment.
    #[error("the data at byte {offset} is not aligned to {align} bytes for the element type")]
    Misaligned {
        /// Byte offset of the data in the buffer.
        offset: u64,
        /// Required alignment.
        align: usize,
    },
    /// The data is stored in the other byte order.
    #[error("the data is stored in non-native byte order")]
    NonNativeEndian,
    /// The data is compressed, varint-encoded or bit-packed, so it must be decoded (copied).
    #[error("the data is stored with {0} encoding and must be decoded")]
    Encoded(&'static str),
    /// A bool element holds a byte other than 0 or 1.
    #[error("bool element at byte {offset} holds {value:#04x}, not 0 or 1")]
    InvalidBool {
        /// Byte offset in the buffer.
        offset: u64,
        /// The byte found.
        value: u8,
    },
}

/// Shorthand for `Result<T, rawarray::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<array_core::AtomicError> for Error {
    fn from(e: array_core::AtomicError) -> Error {
        Error::Io(e.into())
    }
}
