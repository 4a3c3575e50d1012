//! Awkward arrays as awkward 2 has them: what `ak.from_buffers` takes (a form as JSON, a
//! length, named buffers), read from `.awkd` files and from awkward nodes of ASDF trees, and
//! what `ak.to_buffers` gives, made into a layout for writing.

use std::path::PathBuf;

use asdf_awkward::{
    from_buffers, parse_form, to_awkward2, AwkdFile, FromBuffersOptions, Layout, MemoryStore,
};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors::AsdfError;

/// An error of the awkward layer as a Python exception, naming where it happened.
pub fn awkward_err(place: &str, e: asdf_awkward::Error) -> PyErr {
    AsdfError::new_err(format!("{place}: {e}"))
}

/// `(form, length, buffers)` of `layout` for `ak.from_buffers`: the form as JSON text and each
/// buffer a `uint8` NumPy array (handed over without copying).
pub fn buffers_of<'py>(
    py: Python<'py>,
    layout: &Layout,
    place: &str,
) -> PyResult<(String, usize, Bound<'py, PyDict>)> {
    let b = py
        .detach(|| to_awkward2(layout))
        .map_err(|e| awkward_err(place, e))?;
    let buffers = PyDict::new(py);
    for (key, bytes) in b.buffers {
        buffers.set_item(key, PyArray1::from_vec(py, bytes))?;
    }
    Ok((b.form.to_string(), b.length, buffers))
}

/// The names of the arrays of the `.awkd` file at `path`.
#[pyfunction]
pub fn awkd_names(py: Python<'_>, path: PathBuf) -> PyResult<Vec<String>> {
    let file = py
        .detach(|| AwkdFile::open(&path))
        .map_err(|e| awkward_err(&path.display().to_string(), e))?;
    Ok(file.array_names())
}

/// Array `name` of the `.awkd` file at `path` as `(form, length, buffers)` (the archive's
/// whitelist and limits apply: nothing in the file is executed).
#[pyfunction]
pub fn awkd_buffers<'py>(
    py: Python<'py>,
    path: PathBuf,
    name: &str,
) -> PyResult<(String, usize, Bound<'py, PyDict>)> {
    let place = format!("{} (array {name:?})", path.display());
    let layout = py
        .detach(|| AwkdFile::open(&path).and_then(|f| f.read(name)))
        .map_err(|e| awkward_err(&place, e))?;
    buffers_of(py, &layout, &place)
}

/// The layout of `ak.to_buffers` output: `form` (JSON text), `length` and `buffers` (`bytes` by
/// key), checked as untrusted input is (offsets, indices and sizes against the form).
pub fn layout_from_parts(
    form: &str,
    length: usize,
    buffers: &Bound<'_, PyDict>,
    place: &str,
) -> PyResult<Layout> {
    let opts = FromBuffersOptions::default();
    let form = parse_form(form, &opts.limits).map_err(|e| awkward_err(place, e))?;
    let mut store = MemoryStore::default();
    for (k, v) in buffers.iter() {
        let bytes = v.cast::<PyBytes>()?.as_bytes().to_vec();
        store.blobs.insert(k.extract()?, bytes);
    }
    from_buffers(&form, length, &store, &opts).map_err(|e| awkward_err(place, e))
}
