//! `asdf_rs._native`: the Rust half of the `asdf_rs` Python package (the Python half, in
//! `python/asdf_rs/`, adds the file object, lazy arrays, `Tagged` and Dask).
//!
//! Arrays come out as NumPy arrays: zero-copy, read-only views of the file's memory map when
//! the data is uncompressed, aligned and in this machine's byte order (the view's base object
//! keeps the map alive), decoded with the GIL released otherwise. Files given by URL (S3, GCS,
//! Azure, HTTP) are read by ranged requests through the same calls (`engine.rs`). Every engine error becomes a
//! Python exception carrying the engine's message.

mod array;
mod awkward;
mod dtype;
mod engine;
mod errors;
mod file;
mod tree;
mod write;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("AsdfError", m.py().get_type::<errors::AsdfError>())?;
    m.add_class::<array::FileBuffer>()?;
    m.add_class::<file::NativeFile>()?;
    m.add_function(wrap_pyfunction!(file::open_native, m)?)?;
    m.add_function(wrap_pyfunction!(file::open_remote, m)?)?;
    m.add_function(wrap_pyfunction!(write::write_native, m)?)?;
    m.add_function(wrap_pyfunction!(awkward::awkd_names, m)?)?;
    m.add_function(wrap_pyfunction!(awkward::awkd_buffers, m)?)?;
    m.add("ENGINE", asdf::LIBRARY_NAME)?;
    Ok(())
}
