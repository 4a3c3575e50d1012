//! The native side of `asdf_rs.AsdfFile`: an open file shared by the arrays made from it.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use asdf::ndarray::{ChunkedArray, ZarrArray};
use asdf::{array_kind, ArrayKind, AsdfFile, OpenOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::array::{self, FileBuffer};
use crate::dtype::numpy_dtype;
use crate::errors::{asdf_err, nd_err};
use crate::tree::Converter;

/// An open file (memory-mapped). Closing it only drops this reference: arrays read from it keep
/// the map alive through their base object.
#[pyclass(module = "asdf_rs._native", name = "NativeFile")]
pub struct NativeFile {
    buffer: Option<Py<FileBuffer>>,
}

/// Opens `path` (the GIL is released while the tree is parsed).
#[pyfunction]
#[pyo3(signature = (path, *, validate_checksums = true, untrusted = false))]
pub fn open_native(
    py: Python<'_>,
    path: PathBuf,
    validate_checksums: bool,
    untrusted: bool,
) -> PyResult<NativeFile> {
    let mut options = if untrusted {
        OpenOptions::untrusted()
    } else {
        OpenOptions::default()
    };
    if !validate_checksums {
        options.blocks.checksums = asdf::block::ChecksumPolicy::Skip;
    }
    // Unknown tags are kept (as `Tagged`) without a log line per node.
    options.ignore_unrecognized_tags = true;
    let file = py
        .detach(|| AsdfFile::open_with(&path, &options))
        .map_err(asdf_err)?;
    let buffer = Py::new(
        py,
        FileBuffer {
            file: Arc::new(file),
        },
    )?;
    Ok(NativeFile {
        buffer: Some(buffer),
    })
}

impl NativeFile {
    fn buffer<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, FileBuffer>> {
        self.buffer
            .as_ref()
            .map(|b| b.bind(py).clone())
            .ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err("I/O operation on closed ASDF file")
            })
    }

    fn file(&self, py: Python<'_>) -> PyResult<Arc<AsdfFile>> {
        Ok(self.buffer(py)?.get().file.clone())
    }
}

#[pymethods]
impl NativeFile {
    /// Drops this reference to the file; arrays already read stay valid.
    fn close(&mut self) {
        self.buffer = None;
    }

    #[getter]
    fn closed(&self) -> bool {
        self.buffer.is_none()
    }

    /// The tree as Python values; ndarray nodes become `make_array(pointer)`, other tagged nodes
    /// `tagged(tag, value)`.
    fn tree<'py>(
        &self,
        py: Python<'py>,
        tagged: Bound<'py, PyAny>,
        make_array: Bound<'py, PyAny>,
        pointer: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let file = self.file(py)?;
        let node = file
            .pointer(pointer)
            .ok_or_else(|| asdf_err(asdf::AsdfError::NoNode(pointer.to_string())))?;
        let mut conv = Converter::new(py, file.clone(), tagged, make_array)?;
        let mut path = pointer.to_string();
        conv.convert(node, &mut path)
    }

    /// `(data, mask)` of the array at `pointer` (see `asdf_rs.AsdfFile.__getitem__`).
    fn read<'py>(
        &self,
        py: Python<'py>,
        pointer: &str,
    ) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
        array::read(&self.buffer(py)?, pointer)
    }

    /// The region `[starts, stops)` of the chunked array at `pointer`.
    fn read_region<'py>(
        &self,
        py: Python<'py>,
        pointer: &str,
        starts: Vec<usize>,
        stops: Vec<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ranges: Vec<Range<usize>> = starts.into_iter().zip(stops).map(|(a, b)| a..b).collect();
        array::read_region(py, &self.file(py)?, pointer, ranges)
    }

    /// What the lazy array object needs: `kind` (`"ndarray"`/`"chunked"`, zarr arrays being
    /// chunked ones), `shape`, `dtype`,
    /// `masked`, `compressed` and, for chunked arrays, `chunks` (start and shape of each).
    fn array_info<'py>(&self, py: Python<'py>, pointer: &str) -> PyResult<Bound<'py, PyDict>> {
        let file = self.file(py)?;
        let node = file
            .pointer(pointer)
            .ok_or_else(|| asdf_err(asdf::AsdfError::NoNode(pointer.to_string())))?;
        let info = PyDict::new(py);
        match array_kind(node) {
            Some(ArrayKind::Chunked) => {
                let c = ChunkedArray::from_node(node).map_err(|e| nd_err(pointer, e))?;
                info.set_item("kind", "chunked")?;
                info.set_item("shape", c.shape.clone())?;
                info.set_item(
                    "dtype",
                    numpy_dtype(py, &c.datatype, asdf::ndarray::ByteOrder::NATIVE)?,
                )?;
                info.set_item("masked", false)?;
                let chunks = PyList::empty(py);
                for ch in &c.chunks {
                    chunks.append((ch.start.clone(), ch.shape.clone()))?;
                }
                info.set_item("chunks", chunks)?;
                info.set_item("compressed", true)?;
            }
            Some(ArrayKind::Zarr) => {
                let z = ZarrArray::open(node, &*file).map_err(|e| nd_err(pointer, e))?;
                info.set_item("kind", "chunked")?;
                info.set_item("shape", z.shape.clone())?;
                let dt = asdf::ndarray::Datatype::Scalar(z.scalar);
                info.set_item(
                    "dtype",
                    numpy_dtype(py, &dt, asdf::ndarray::ByteOrder::NATIVE)?,
                )?;
                info.set_item("masked", false)?;
                info.set_item("chunks", zarr_chunks(&z)?)?;
                info.set_item("compressed", true)?;
            }
            _ => {
                let meta = file.meta(pointer).map_err(asdf_err)?;
                let shape = match (&meta.shape, &meta.data, meta.streamed) {
                    (Some(s), None, false) => Some(s.clone()),
                    // Inline data and streamed arrays: the shape is known after reading.
                    _ => None,
                };
                info.set_item("kind", "ndarray")?;
                info.set_item("shape", shape)?;
                let dtype = match &meta.datatype {
                    Some(dt) => Some(numpy_dtype(py, dt, native_or(dt, meta.byteorder))?),
                    None => None,
                };
                info.set_item("dtype", dtype)?;
                info.set_item("masked", meta.mask.is_some() || meta.data.is_some())?;
                let compressed = match &meta.source {
                    Some(asdf::ndarray::Source::Block(b)) => file
                        .blocks()
                        .info(*b)
                        .map(|i| i.header.is_compressed())
                        .unwrap_or(true),
                    _ => true,
                };
                info.set_item("compressed", compressed)?;
            }
        }
        Ok(info)
    }

    /// `"ndarray"`, `"chunked"`, `"zarr"` or `None` (not an array) for the node at `pointer`; `KeyError`
    /// when there is none.
    fn kind(&self, py: Python<'_>, pointer: &str) -> PyResult<Option<&'static str>> {
        let file = self.file(py)?;
        let node = file.pointer(pointer).ok_or_else(|| {
            pyo3::exceptions::PyKeyError::new_err(format!("nothing in the tree at {pointer:?}"))
        })?;
        Ok(match array_kind(node) {
            Some(ArrayKind::NdArray) => Some("ndarray"),
            Some(ArrayKind::Chunked) => Some("chunked"),
            Some(ArrayKind::Zarr) => Some("zarr"),
            None => None,
        })
    }

    /// JSON Pointers of every array in the tree, in tree order.
    fn arrays(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        Ok(self
            .file(py)?
            .arrays()
            .into_iter()
            .map(|(p, _)| p)
            .collect())
    }

    /// Built-in checks of the core tags: a list of `(pointer, rule, message)`.
    fn validate(&self, py: Python<'_>) -> PyResult<Vec<(String, String, String)>> {
        let file = self.file(py)?;
        let report = py.detach(|| file.validate());
        Ok(report
            .violations
            .into_iter()
            .map(|v| (v.pointer, v.rule, v.message))
            .collect())
    }

    /// `#ASDF_STANDARD` version.
    fn standard_version(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.file(py)?.standard_version().to_string())
    }

    /// Non-fatal oddities found while reading.
    fn warnings(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        Ok(self.file(py)?.warnings().to_vec())
    }

    /// The file's path.
    fn path(&self, py: Python<'_>) -> PyResult<Option<PathBuf>> {
        Ok(self.file(py)?.path().map(|p| p.to_path_buf()))
    }
}

/// The byte order arrays come out in: the stored one for records (like Python asdf), native
/// for numbers (decoded copies are converted; views exist only for native data).
fn native_or(
    dt: &asdf::ndarray::Datatype,
    stored: asdf::ndarray::ByteOrder,
) -> asdf::ndarray::ByteOrder {
    match dt {
        asdf::ndarray::Datatype::Record(_) => stored,
        _ => asdf::ndarray::ByteOrder::NATIVE,
    }
}

/// The (start, shape) of every chunk of a zarr array's grid, clipped to the array (zarr pads
/// edge chunks when storing them).
fn zarr_chunks(z: &ZarrArray) -> PyResult<Vec<(Vec<usize>, Vec<usize>)>> {
    let grid = z.grid();
    let count = grid
        .iter()
        .try_fold(1usize, |a, &g| a.checked_mul(g))
        .filter(|&n| n <= MAX_LISTED_CHUNKS)
        .ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "a zarr chunk grid of {grid:?} lists more than {MAX_LISTED_CHUNKS} chunks"
            ))
        })?;
    let mut out = Vec::with_capacity(count);
    for mut k in 0..count {
        let mut start = vec![0; grid.len()];
        for d in (0..grid.len()).rev() {
            start[d] = (k % grid[d]) * z.chunks[d];
            k /= grid[d];
        }
        let shape = start
            .iter()
            .zip(z.chunks.iter().zip(&z.shape))
            .map(|(&s, (&c, &n))| c.min(n - s))
            .collect();
        out.push((start, shape));
    }
    Ok(out)
}

/// Most chunks a zarr array's description lists (a grid larger than this is refused rather
/// than spelled out).
const MAX_LISTED_CHUNKS: usize = 1 << 22;
