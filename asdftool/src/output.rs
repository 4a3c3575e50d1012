//! Output files of the verbs, written crash-safely: a temporary file beside the target,
//! fsync, rename (the previous file stays whole until the new one is complete).

use std::path::Path;

use crate::error::{CliError, Result};

/// Writes `bytes` to `path` crash-safely.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    asdf::atomic_write(path, |w| {
        std::io::Write::write_all(w, bytes).map_err(|e| asdf::AsdfError::Io {
            context: "writing".into(),
            source: e,
        })
    })
    .map_err(|e| CliError::io(path, std::io::Error::other(e.to_string())))
}
