//! The tool's error type and its exit codes.

use std::path::{Path, PathBuf};

/// Everything a verb can fail with. [`CliError::exit_code`] maps it to the documented exit
/// status: 1 for an invalid file or a "no" answer, 2 for usage and I/O errors.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line asks for something impossible (unknown codec, wrong extension, ...).
    #[error("usage: {0}")]
    Usage(String),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An input file is not valid (its format, tree, blocks or arrays).
    #[error("{0}")]
    Invalid(String),
    /// The output could not be produced from a valid input (e.g. no equivalent datatype).
    #[error("{0}")]
    Unsupported(String),
}

impl CliError {
    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Invalid(_) => 1,
            CliError::Usage(_) | CliError::Io { .. } | CliError::Unsupported(_) => 2,
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> CliError {
        CliError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// An invalid-file error naming `path`.
    pub fn invalid(path: &Path, what: impl std::fmt::Display) -> CliError {
        CliError::Invalid(format!("{}: {what}", path.display()))
    }
}

/// Result alias of the tool.
pub type Result<T, E = CliError> = std::result::Result<T, E>;
