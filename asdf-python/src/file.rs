//! The native side of `asdf_rs.AsdfFile`: an open file shared by the arrays made from it.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use asdf::ndarray::{ChunkedArray, ZarrArray};
use asdf::remote::{RemoteFile, RemoteOptions};
use asdf::{array_kind, ArrayKind, AsdfFile, OpenOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::array::{self, FileBuffer};
use crate::awkward::{awkward_err, buffers_of};
use crate::dtype::numpy_dtype;
use crate::engine::Engine;
use crate::errors::{asdf_err, nd_err};
use crate::tree::Converter;

/// An open file: memory-mapped (closing it only drops this reference; arrays read from it keep
/// the map alive through their base object) or remote.
#[pyclass(module = "asdf_rs._native", name = "NativeFile")]
pub struct NativeFile {
    open: Option<Opened>,
}

enum Opened {
    Local(Py<FileBuffer>),
    Remote(Arc<RemoteFile>),
}

/// The reading options both kinds of file share.
fn open_options(validate_checksums: bool, untrusted: bool) -> OpenOptions {
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
    options
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
    let options = open_options(validate_checksums, untrusted);
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
        open: Some(Opened::Local(buffer)),
    })
}

/// Opens the file at `url` (`s3://`, `gs://`, `az://`, `http(s)://`) by ranged reads: the
/// header and tree, then only what each array needs (the GIL is released while it waits).
/// `config` holds further `object_store` builder keys (credentials, for instance).
#[pyfunction]
#[pyo3(signature = (
    url, *, validate_checksums = true, untrusted = false, endpoint_url = None, region = None,
    anonymous = false, timeout = None, retries = None, config = Vec::new()
))]
#[allow(clippy::too_many_arguments)] // one keyword argument of `asdf_rs.open` each
pub fn open_remote(
    py: Python<'_>,
    url: String,
    validate_checksums: bool,
    untrusted: bool,
    endpoint_url: Option<String>,
    region: Option<String>,
    anonymous: bool,
    timeout: Option<f64>,
    retries: Option<usize>,
    config: Vec<(String, String)>,
) -> PyResult<NativeFile> {
    let mut options = if untrusted {
        RemoteOptions::untrusted()
    } else {
        RemoteOptions::default()
    };
    options.open = open_options(validate_checksums, untrusted);
    options.endpoint = endpoint_url;
    options.region = region;
    options.anonymous = anonymous;
    if let Some(t) = timeout {
        options.timeout = std::time::Duration::try_from_secs_f64(t)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("timeout {t}: {e}")))?;
    }
    if let Some(r) = retries {
        options.retries = r;
    }
    options.config = config;
    let file = py
        .detach(|| RemoteFile::open(&url, &options))
        .map_err(asdf_err)?;
    Ok(NativeFile {
        open: Some(Opened::Remote(Arc::new(file))),
    })
}

impl NativeFile {
    fn opened(&self) -> PyResult<&Opened> {
        self.open.as_ref().ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err("I/O operation on closed ASDF file")
        })
    }

    fn engine(&self) -> PyResult<Engine> {
        Ok(match self.opened()? {
            Opened::Local(b) => Engine::Local(b.get().file.clone()),
            Opened::Remote(f) => Engine::Remote(f.clone()),
        })
    }

    /// The memory map's owner, for zero-copy views (`None` for remote files).
    fn buffer<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, FileBuffer>>> {
        Ok(match self.opened()? {
            Opened::Local(b) => Some(b.bind(py).clone()),
            Opened::Remote(_) => None,
        })
    }
}

#[pymethods]
impl NativeFile {
    /// Drops this reference to the file; arrays already read stay valid.
    fn close(&mut self) {
        self.open = None;
    }

    #[getter]
    fn closed(&self) -> bool {
        self.open.is_none()
    }

    /// Whether the file is read by ranged requests (a URL) rather than memory-mapped.
    #[getter]
    fn remote(&self) -> PyResult<bool> {
        Ok(matches!(self.opened()?, Opened::Remote(_)))
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
        let engine = self.engine()?;
        let node = engine.node(pointer).map_err(asdf_err)?;
        let mut conv = Converter::new(py, engine.clone(), tagged, make_array)?;
        let mut path = pointer.to_string();
        conv.convert(node, &mut path)
    }

    /// `(data, mask)` of the array at `pointer` (see `asdf_rs.AsdfFile.__getitem__`).
    fn read<'py>(
        &self,
        py: Python<'py>,
        pointer: &str,
    ) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
        array::read(py, &self.engine()?, self.buffer(py)?.as_ref(), pointer)
    }

    /// The region `[starts, stops)` of the numeric array at `pointer`, reading only what covers
    /// it where the layout allows (chunks, rows of an uncompressed block, lz4 chunks).
    fn read_region<'py>(
        &self,
        py: Python<'py>,
        pointer: &str,
        starts: Vec<usize>,
        stops: Vec<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ranges: Vec<Range<usize>> = starts.into_iter().zip(stops).map(|(a, b)| a..b).collect();
        array::read_region(py, &self.engine()?, pointer, ranges)
    }

    /// What the lazy array object needs: `kind` (`"ndarray"`/`"chunked"`, zarr arrays being
    /// chunked ones), `shape`, `dtype`,
    /// `masked`, `compressed` and, for chunked arrays, `chunks` (start and shape of each).
    fn array_info<'py>(&self, py: Python<'py>, pointer: &str) -> PyResult<Bound<'py, PyDict>> {
        let engine = self.engine()?;
        let node = engine.node(pointer).map_err(asdf_err)?;
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
                let z = engine.zarr(node, pointer).map_err(asdf_err)?;
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
            _ => ndarray_info(py, &engine, pointer, &info)?,
        }
        Ok(info)
    }

    /// `"ndarray"`, `"chunked"`, `"zarr"`, `"awkward"` or `None` (not an array) for the node at
    /// `pointer`; `KeyError` when there is none.
    fn kind(&self, pointer: &str) -> PyResult<Option<&'static str>> {
        let engine = self.engine()?;
        let node = engine.tree().pointer(pointer).ok_or_else(|| {
            pyo3::exceptions::PyKeyError::new_err(format!("nothing in the tree at {pointer:?}"))
        })?;
        Ok(match array_kind(node) {
            Some(ArrayKind::NdArray) => Some("ndarray"),
            Some(ArrayKind::Chunked) => Some("chunked"),
            Some(ArrayKind::Zarr) => Some("zarr"),
            None if asdf_awkward::is_awkward_tag(node.tag()) => Some("awkward"),
            None => None,
        })
    }

    /// The awkward array (awkward0 or awkward 2 tag) at `pointer` as `(form, length, buffers)`
    /// for `ak.from_buffers`.
    fn awkward<'py>(
        &self,
        py: Python<'py>,
        pointer: &str,
    ) -> PyResult<(String, usize, Bound<'py, PyDict>)> {
        let Engine::Local(file) = self.engine()? else {
            return Err(pyo3::exceptions::PyNotImplementedError::new_err(format!(
                "awkward array at {pointer:?}: awkward arrays are read from local files only"
            )));
        };
        let opts = asdf_awkward::ReadOptions::default();
        let layout = py
            .detach(|| asdf_awkward::from_asdf(&file, pointer, &opts))
            .map_err(|e| awkward_err(pointer, e))?;
        buffers_of(py, &layout, pointer)
    }

    /// JSON Pointers of every array in the tree, in tree order.
    fn arrays(&self) -> PyResult<Vec<String>> {
        Ok(self
            .engine()?
            .arrays()
            .into_iter()
            .map(|(p, _)| p)
            .collect())
    }

    /// Built-in checks of the core tags: a list of `(pointer, rule, message)`.
    fn validate(&self, py: Python<'_>) -> PyResult<Vec<(String, String, String)>> {
        let engine = self.engine()?;
        Ok(py.detach(|| engine.validate()))
    }

    /// `#ASDF_STANDARD` version.
    fn standard_version(&self) -> PyResult<String> {
        Ok(self.engine()?.standard_version().to_string())
    }

    /// Non-fatal oddities found while reading.
    fn warnings(&self) -> PyResult<Vec<String>> {
        Ok(self.engine()?.warnings().to_vec())
    }

    /// For a remote file, `(size, etag)`: what names the version of the object read (`None`
    /// for a local file).
    fn version(&self) -> PyResult<Option<(u64, Option<String>)>> {
        Ok(match self.opened()? {
            Opened::Local(_) => None,
            Opened::Remote(f) => Some((f.size(), f.etag().map(str::to_string))),
        })
    }

    /// For a remote file, `(requests, bytes)` received so far (`None` for a local file).
    fn traffic(&self) -> PyResult<Option<(u64, u64)>> {
        Ok(match self.opened()? {
            Opened::Local(_) => None,
            Opened::Remote(f) => {
                let t = f.traffic();
                Some((t.requests, t.bytes))
            }
        })
    }

    /// The file's path or URL.
    fn path(&self) -> PyResult<Option<String>> {
        Ok(self.engine()?.location())
    }
}

/// [`NativeFile::array_info`] of a `core/ndarray` at `pointer`.
fn ndarray_info(
    py: Python<'_>,
    engine: &Engine,
    pointer: &str,
    info: &Bound<'_, PyDict>,
) -> PyResult<()> {
    let meta = engine.meta(pointer).map_err(asdf_err)?;
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
        Some(asdf::ndarray::Source::Block(b)) => engine.block_compressed(*b).unwrap_or(true),
        _ => true,
    };
    info.set_item("compressed", compressed)?;
    Ok(())
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
