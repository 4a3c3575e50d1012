//! The facade's error type.

use std::path::PathBuf;

/// Everything that can go wrong opening, reading or writing an ASDF file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AsdfError {
    /// An error in a file opened or written by path, naming the file.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong in it.
        #[source]
        source: Box<AsdfError>,
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
    /// The file does not start with an `#ASDF` header line.
    #[error("not an ASDF file: expected a first line `#ASDF 1.0.0`, found {found:?}")]
    NotAsdf {
        /// The start of the first line.
        found: String,
    },
    /// The `#ASDF` line names a file-format version other than 1.0.0.
    #[error("unsupported ASDF file format version {0:?} (only 1.0.0 exists)")]
    UnsupportedFormatVersion(String),
    /// The tree has no `...` end marker.
    #[error("the YAML tree starting at byte {start} has no end marker (a line `...`)")]
    MissingEndMarker {
        /// Byte offset where the tree starts.
        start: usize,
    },
    /// Bytes after the header that are neither a comment, a tree nor a block.
    #[error("invalid content at byte {offset}: expected a `#` comment line, `%YAML`, `---` or a block, found {found:?}")]
    InvalidContent {
        /// Byte offset of the content.
        offset: usize,
        /// The start of it.
        found: String,
    },
    /// The YAML tree could not be parsed.
    #[error("in the YAML tree (which starts at byte {tree_start}): {source}")]
    Yaml {
        /// Byte offset where the tree starts in the file.
        tree_start: usize,
        /// The parser's error (line and column are relative to the tree).
        #[source]
        source: asdf_yaml::Error,
    },
    /// The tree cannot be written as an ASDF file (root not a mapping, a feature the requested
    /// ASDF Standard version lacks, ...).
    #[error("cannot write this tree: {0}")]
    InvalidTree(String),
    /// The tree breaks the rules of its core tags (checked by default on write, on request on
    /// read): every violation with its JSON Pointer and rule.
    #[error("the tree is not valid ASDF: {0}")]
    Invalid(asdf_schema::Report),
    /// The tree could not be written as YAML.
    #[error("cannot write the tree: {0}")]
    Emit(#[source] asdf_yaml::Error),
    /// A block-layer error.
    #[error(transparent)]
    Block(#[from] asdf_block::BlockError),
    /// An array at a JSON Pointer could not be read or written.
    #[error("array at {pointer:?}: {source}")]
    Array {
        /// Where the array is in the tree.
        pointer: String,
        /// What went wrong.
        #[source]
        source: asdf_ndarray::NdError,
    },
    /// Nothing in the tree at this JSON Pointer.
    #[error("nothing in the tree at {0:?}")]
    NoNode(String),
    /// The node at a JSON Pointer is not an ndarray.
    #[error("the node at {pointer:?} is not an ndarray (its tag is {tag:?})")]
    NotAnArray {
        /// Where the node is.
        pointer: String,
        /// Its tag, if any.
        tag: Option<String>,
    },
    /// Decoding a block would bring the bytes decoded from one open file above
    /// [`OpenOptions::max_total_decoded_bytes`](crate::OpenOptions::max_total_decoded_bytes).
    #[error("block {block} at byte offset {offset}: decoding its {size} bytes would bring the bytes decoded from this file above the limit of {limit} bytes ({decoded} already decoded; raise OpenOptions::max_total_decoded_bytes to read it)")]
    DecodedTotalTooLarge {
        /// Block index.
        block: usize,
        /// Byte offset of the block magic.
        offset: u64,
        /// The block's declared decoded size.
        size: u64,
        /// Bytes already decoded from the file (each block counted once).
        decoded: u64,
        /// The configured limit.
        limit: u64,
    },
    /// An external file (an ndarray's `source`, a `$ref` target) could not be used, or the
    /// external-file policy refused it. The reason never quotes the file's content.
    #[error("external file {uri:?}: {reason}")]
    External {
        /// The URI as the referring file wrote it (or the path it was resolved to).
        uri: String,
        /// Why.
        reason: String,
    },
    /// A remote object could not be read: the URL, the byte range when one was being read, and
    /// why (missing object, access denied, a short or non-ranged answer, a timeout, the object
    /// replaced while reading).
    #[error("{url}{}: {reason}", range.as_ref().map(|r| format!(" (bytes {}..{})", r.start, r.end)).unwrap_or_default())]
    Remote {
        /// The object's URL.
        url: String,
        /// The byte range being read, if any.
        range: Option<std::ops::Range<u64>>,
        /// What went wrong.
        reason: String,
    },
}

impl AsdfError {
    /// Wraps this error with the file it concerns (once; block errors already naming the file
    /// are kept as they are).
    pub fn in_file(self, path: impl Into<PathBuf>) -> AsdfError {
        match self {
            e @ AsdfError::File { .. } => e,
            e @ AsdfError::Block(asdf_block::BlockError::File { .. }) => e,
            e => AsdfError::File {
                path: path.into(),
                source: Box::new(e),
            },
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> AsdfError {
        AsdfError::Io {
            context: context.into(),
            source,
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = AsdfError> = std::result::Result<T, E>;
