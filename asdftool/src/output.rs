//! Output files of the verbs, written crash-safely: a temporary file beside the target,
//! fsync, rename (the previous file stays whole until the new one is complete). With
//! `--no-sync` a new file is renamed into place without waiting for the disk; a file that
//! replaces another is synced either way ([`array_core::Durability`]).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use array_core::Durability;

use crate::error::{CliError, Result};

static NO_SYNC: AtomicBool = AtomicBool::new(false);

/// Sets how far this process's saves go (`--no-sync`: relaxed).
pub fn set_no_sync(no_sync: bool) {
    NO_SYNC.store(no_sync, Ordering::Relaxed);
}

/// How far this process's saves go.
pub fn durability() -> Durability {
    if NO_SYNC.load(Ordering::Relaxed) {
        Durability::Relaxed
    } else {
        Durability::Synced
    }
}

/// The ASDF write options of every verb's output, before the verb's own changes.
pub fn asdf_options() -> asdf::WriteOptions {
    asdf::WriteOptions {
        durability: durability(),
        ..asdf::WriteOptions::default()
    }
}

/// The RawArray write options of every verb's output.
pub fn ra_options() -> rawarray::WriteOptions {
    rawarray::WriteOptions {
        durability: durability(),
        ..rawarray::WriteOptions::default()
    }
}

/// Writes `bytes` to `path` crash-safely.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    array_core::AtomicFile::write_with_durability(path, durability(), |w| {
        std::io::Write::write_all(w, bytes)
    })
    .map_err(|e| CliError::io(path, e))
}
