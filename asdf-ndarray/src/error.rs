//! The error type of the array layer.

/// Everything that can go wrong turning ndarray nodes into arrays and back.
///
/// Errors about a node name the field (`shape`, `strides`, `datatype`, ...) and what was expected;
/// errors about data name the block and the byte offset inside it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NdError {
    /// A chunk of an asdf-zarr array could not be read or decoded.
    #[error("zarr chunk {chunk:?} ({place}): {message}")]
    ZarrChunk {
        /// The chunk's coordinates in the chunk grid.
        chunk: Vec<usize>,
        /// Where it is stored: `block N`, or the file of a zarr store.
        place: String,
        /// What went wrong.
        message: String,
    },

    /// A field of an ndarray node is missing or malformed.
    #[error("ndarray field `{field}`: {message}")]
    Field {
        /// The field (`shape`, `datatype`, `chunks[2].start`, ...).
        field: String,
        /// What was expected and what was found.
        message: String,
    },

    /// An unknown or malformed datatype.
    #[error("datatype: {0}")]
    Datatype(String),

    /// The array's bytes are not all inside its block.
    #[error(
        "{what}: the array needs bytes {start}..{end} of its block but the block has {len} bytes"
    )]
    OutOfBlock {
        /// Which array or block.
        what: String,
        /// First byte needed (may be negative when strides point before the block start).
        start: i128,
        /// One past the last byte needed.
        end: i128,
        /// Length of the block data.
        len: u64,
    },

    /// A size computed from the header overflows or exceeds a limit.
    #[error("{what}: size overflows or exceeds the limit of {limit} bytes")]
    TooLarge {
        /// What was being sized.
        what: String,
        /// The limit.
        limit: u64,
    },

    /// The requested Rust type does not match the stored datatype.
    #[error("the array stores {stored}, not {requested}")]
    TypeMismatch {
        /// The stored datatype.
        stored: String,
        /// What was asked for.
        requested: String,
    },

    /// A zero-copy view is impossible; copy with `read` instead.
    #[error("no zero-copy view: {0}")]
    NotViewable(String),

    /// Inline `data` does not match the shape or datatype.
    #[error("inline data at {path}: {message}")]
    Inline {
        /// Position in the nested lists, like `[1][0]`.
        path: String,
        /// What went wrong.
        message: String,
    },

    /// Stored values are invalid for their datatype (bool bytes other than 0/1, non-ASCII
    /// bytes in an `ascii` string, invalid code points in `ucs4`).
    #[error("invalid value at element {index}: {message}")]
    InvalidValue {
        /// Element index in C order.
        index: usize,
        /// What is wrong.
        message: String,
    },

    /// An external file (string `source`) was named but the block store cannot resolve it.
    #[error("external block `{0}` cannot be resolved by this block store")]
    NoExternal(String),

    /// An error from the block layer.
    #[error(transparent)]
    Block(#[from] asdf_block::BlockError),

    /// A usage error (inconsistent writer options, views outside their base array, ...).
    #[error("{0}")]
    Usage(String),
}

/// Result type of this crate.
pub type Result<T, E = NdError> = std::result::Result<T, E>;

pub(crate) fn field_err(field: impl Into<String>, message: impl Into<String>) -> NdError {
    NdError::Field {
        field: field.into(),
        message: message.into(),
    }
}
