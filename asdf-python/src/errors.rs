//! Rust errors as Python exceptions carrying the Rust message (file, block, byte offset).

use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::{create_exception, PyErr};

create_exception!(
    asdf_rs,
    AsdfError,
    PyValueError,
    "A file could not be read or written; the message is the engine's (file, block, byte offset, \
     what was expected)."
);

/// Whether `e` (or an error it wraps) is an I/O "not found".
fn not_found(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::NotFound {
                return true;
            }
        }
        cur = err.source();
    }
    false
}

/// An engine error as a Python exception: `FileNotFoundError` for a missing file, `AsdfError`
/// (a `ValueError`) otherwise.
pub fn asdf_err(e: asdf::AsdfError) -> PyErr {
    if not_found(&e) {
        PyFileNotFoundError::new_err(e.to_string())
    } else {
        AsdfError::new_err(e.to_string())
    }
}

/// [`asdf_err`] for errors of the array layer, naming the array.
pub fn nd_err(pointer: &str, e: asdf::ndarray::NdError) -> PyErr {
    AsdfError::new_err(format!("array at {pointer:?}: {e}"))
}
