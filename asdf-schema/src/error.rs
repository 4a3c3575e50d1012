//! The error type.

use std::path::PathBuf;

/// Why validation could not run (as opposed to a tree that breaks a rule, which is a
/// [`Violation`](crate::Violation)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is larger than the configured ceiling.
    #[error("{path} is {size} bytes, more than the limit of {limit} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The ceiling.
        limit: u64,
    },
    /// The YAML text of a tree or schema does not parse.
    #[error("{what}: invalid YAML: {source}")]
    Yaml {
        /// The file or URI.
        what: String,
        /// The parser's error (with line and column).
        source: asdf_yaml::Error,
    },
    /// The tree of an ASDF file is not UTF-8 text.
    #[error("the YAML tree is not UTF-8 (invalid byte at offset {offset})")]
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// A schema is not a mapping or cannot be compiled.
    #[error("invalid schema {uri}: {message}")]
    InvalidSchema {
        /// The schema's URI or file.
        uri: String,
        /// What is wrong.
        message: String,
    },
    /// A schema URI named by the caller is not known to the store.
    #[error("unknown schema {uri}")]
    UnknownSchema {
        /// The URI.
        uri: String,
    },
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, SchemaError>;
