//! The crate's typed error.

use std::fmt;

/// Everything that can go wrong reading or writing awkward0 persistence data.
///
/// Every variant says *where*: a schema location such as `schema.args[1].args[0]`, a blob name, a
/// byte offset or a file path, and what was expected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O error, with the path it concerned.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The ZIP container is malformed or could not be written.
    #[error("ZIP container {path}: {message}")]
    Zip {
        /// The archive's path.
        path: String,
        /// What the ZIP layer reported.
        message: String,
    },
    /// The schema blob is not valid JSON (or not ASCII/UTF-8).
    #[error("schema {name:?} is not valid JSON: {message}")]
    SchemaJson {
        /// The schema blob's name.
        name: String,
        /// Parser message with line/column.
        message: String,
    },
    /// The schema is JSON but does not follow the persistence protocol.
    #[error("schema error at {location}: {message}")]
    Schema {
        /// Location inside the schema document, e.g. `schema.args[0]`.
        location: String,
        /// What was found and what was expected.
        message: String,
    },
    /// The schema asks for something that would run code, import modules or open paths/URLs.
    #[error("refused at {location}: {what}")]
    Refused {
        /// Location inside the schema document.
        location: String,
        /// What was refused and why.
        what: String,
    },
    /// A `call`/`function` spec that does not match the whitelist.
    #[error("call {spec} at {location} is not in the whitelist")]
    NotWhitelisted {
        /// Location inside the schema document.
        location: String,
        /// The spec, e.g. `["os", "system"]`.
        spec: String,
    },
    /// Valid protocol, but a construct this implementation does not support.
    #[error("unsupported at {location}: {what}")]
    Unsupported {
        /// Location (schema location or array path).
        location: String,
        /// What is unsupported.
        what: String,
    },
    /// A blob named by the schema does not exist in the store.
    #[error("blob {name:?} not found in the store")]
    MissingBlob {
        /// Full blob name (prefix included).
        name: String,
    },
    /// A blob's bytes do not fit what the schema declares.
    #[error("blob {name:?}: {message}")]
    Blob {
        /// Full blob name.
        name: String,
        /// What was expected.
        message: String,
    },
    /// A decompressor failed or produced a size other than expected.
    #[error("{codec} decompression at {location} failed: {message}")]
    Decompress {
        /// Codec name (`zlib`, `lzma`, `lz4.block`).
        codec: &'static str,
        /// Location inside the schema.
        location: String,
        /// What went wrong.
        message: String,
    },
    /// A configured [`Limits`](crate::Limits) ceiling was exceeded.
    #[error("limit exceeded at {location}: {what} is {value}, the limit is {limit}")]
    Limit {
        /// Location inside the schema (or the container).
        location: String,
        /// Which limit.
        what: &'static str,
        /// The value found (or a lower bound of it).
        value: u64,
        /// The configured limit.
        limit: u64,
    },
    /// An array's structure is inconsistent (index out of range, wrong lengths, ...).
    #[error("invalid {class} at {location}: {message}")]
    Invalid {
        /// The awkward0 class, e.g. `JaggedArray`.
        class: &'static str,
        /// Location (schema location when reading, `array` path otherwise).
        location: String,
        /// What is wrong.
        message: String,
    },
    /// A blob or array name that cannot be used (path traversal, NUL, conflicts with stored names).
    #[error("bad name {name:?}: {reason}")]
    BadName {
        /// The offending name.
        name: String,
        /// Why.
        reason: String,
    },
    /// The requested array is not in the container.
    #[error("no array named {name:?} in the container (schema blob {schema:?} missing)")]
    NoSuchArray {
        /// Array name.
        name: String,
        /// Schema blob that was looked for.
        schema: String,
    },
    /// The ASDF container failed (reading or writing the file, a missing blob array).
    #[error("ASDF container at {pointer:?}: {message}")]
    Asdf {
        /// JSON Pointer of the awkward node in the ASDF tree.
        pointer: String,
        /// What went wrong.
        message: String,
    },
    /// An awkward 2 form is malformed (a missing or mistyped entry, an unknown class).
    #[error("awkward 2 form error at {location}: {message}")]
    Form {
        /// The form node, e.g. `form.content.contents[1]`.
        location: String,
        /// What was found and what was expected.
        message: String,
    },
    /// A value could not be converted (JSON import/export, awkward 2 export).
    #[error("conversion error at {location}: {message}")]
    Convert {
        /// Where in the value or layout.
        location: String,
        /// What went wrong.
        message: String,
    },
}

/// Shorthand for `Result<T, asdf_awkward::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(path: impl fmt::Display, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_string(),
            source,
        }
    }

    pub(crate) fn invalid(
        class: &'static str,
        location: impl fmt::Display,
        message: impl Into<String>,
    ) -> Error {
        Error::Invalid {
            class,
            location: location.to_string(),
            message: message.into(),
        }
    }
}
