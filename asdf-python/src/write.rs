//! `asdf_rs.write`: Python values into a tree and blocks, written crash-safely by the engine.

use std::path::PathBuf;

use asdf::ndarray::{BigInteger, BlockBytes, ByteOrder, Datatype, RecordArray, StoreOptions};
use asdf::yaml::Node;
use asdf::{AsdfWriter, WriteOptions};
use numpy::{
    PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyComplex, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::awkward::{awkward_err, layout_from_parts};
use crate::dtype::from_numpy;
use crate::errors::asdf_err;

/// Deepest nesting accepted (a cycle in the tree ends here, as an error).
const MAX_DEPTH: usize = 512;

/// The Python classes a tree may hold beyond builtins.
struct Builder<'py> {
    py: Python<'py>,
    writer: AsdfWriter,
    options: StoreOptions,
    tagged: Bound<'py, PyAny>,
    chunked: Bound<'py, PyAny>,
    /// `awkward_parts(obj)`: `(form, length, buffers)` of an `ak.Array`, `None` otherwise.
    awkward_parts: Bound<'py, PyAny>,
    ndarray: Bound<'py, PyAny>,
    masked: Bound<'py, PyAny>,
    generic: Bound<'py, PyAny>,
    datetime: Bound<'py, PyAny>,
    date: Bound<'py, PyAny>,
    b64encode: Bound<'py, PyAny>,
}

/// Writes `tree` at `path` (see `asdf_rs.write`).
// The arguments are Python keyword arguments of one call.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (path, tree, tagged, chunked, awkward_parts, *, compression = None, version = None, align = 64, sync = true))]
pub fn write_native(
    py: Python<'_>,
    path: PathBuf,
    tree: Bound<'_, PyAny>,
    tagged: Bound<'_, PyAny>,
    chunked: Bound<'_, PyAny>,
    awkward_parts: Bound<'_, PyAny>,
    compression: Option<&str>,
    version: Option<String>,
    align: u32,
    sync: bool,
) -> PyResult<()> {
    let options = match compression {
        None | Some("none") | Some("") => StoreOptions::default(),
        Some(c) => StoreOptions::compressed(c).map_err(|e| PyValueError::new_err(e.to_string()))?,
    };
    let np = py.import("numpy")?;
    let dt = py.import("datetime")?;
    let mut b = Builder {
        py,
        writer: AsdfWriter::new(),
        options,
        tagged,
        chunked,
        awkward_parts,
        ndarray: np.getattr("ndarray")?,
        masked: np.getattr("ma")?.getattr("MaskedArray")?,
        generic: np.getattr("generic")?,
        datetime: dt.getattr("datetime")?,
        date: dt.getattr("date")?,
        b64encode: py.import("base64")?.getattr("b64encode")?,
    };
    let root = b.node(&tree, &mut String::new(), 0)?;
    let mut wopts = WriteOptions::default();
    wopts.blocks.align = align;
    if !sync {
        wopts.durability = asdf::Durability::Relaxed;
    }
    if let Some(v) = version {
        wopts.standard_version = v;
    }
    let writer = b.writer;
    py.detach(|| writer.write_path(&path, root, &wopts))
        .map_err(asdf_err)
}

impl<'py> Builder<'py> {
    fn node(&mut self, obj: &Bound<'py, PyAny>, path: &mut String, depth: usize) -> PyResult<Node> {
        if depth > MAX_DEPTH {
            return Err(PyValueError::new_err(format!(
                "the tree at {path:?} is nested deeper than {MAX_DEPTH} levels (or has a cycle)"
            )));
        }
        if obj.is_none() {
            return Ok(Node::null());
        }
        if let Ok(b) = obj.cast::<PyBool>() {
            return Ok(Node::from(b.is_true()));
        }
        if obj.is_instance(&self.tagged)? {
            let tag: String = obj.getattr("tag")?.extract()?;
            let value = obj.call_method0("_untagged")?;
            return Ok(self.node(&value, path, depth + 1)?.with_tag(tag));
        }
        if let Some(n) = self.number_or_text(obj)? {
            return Ok(n);
        }
        if let Some(n) = self.numpy_value(obj, path, depth)? {
            return Ok(n);
        }
        if let Ok(d) = obj.cast::<PyDict>() {
            return self.mapping(d, path, depth);
        }
        if obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok() {
            let mut items = Vec::new();
            let len = path.len();
            for (i, item) in obj.try_iter()?.enumerate() {
                path.push_str(&format!("/{i}"));
                items.push(self.node(&item?, path, depth + 1)?);
                path.truncate(len);
            }
            return Ok(Node::sequence(items));
        }
        if let Some(n) = self.bytes_or_time(obj)? {
            return Ok(n);
        }
        if let Some(n) = self.array_like(obj, path)? {
            return Ok(n);
        }
        Err(PyTypeError::new_err(format!(
            "cannot store a {} at {path:?} in an ASDF tree",
            obj.get_type().name()?
        )))
    }

    /// Python `int`, `float`, `str` and `complex` values.
    fn number_or_text(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Node>> {
        if let Ok(i) = obj.cast::<PyInt>() {
            return self.int(i).map(Some);
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            return Ok(Some(Node::from(f.value())));
        }
        if let Ok(s) = obj.cast::<PyString>() {
            return Ok(Some(Node::from(s.to_str()?)));
        }
        if let Ok(z) = obj.cast::<PyComplex>() {
            let c = num_complex::Complex::new(z.real(), z.imag());
            return Ok(Some(asdf::ndarray::complex_node(c)));
        }
        Ok(None)
    }

    /// NumPy values: chunked, masked and plain arrays, and NumPy scalars (as Python values).
    fn numpy_value(
        &mut self,
        obj: &Bound<'py, PyAny>,
        path: &mut String,
        depth: usize,
    ) -> PyResult<Option<Node>> {
        if obj.is_instance(&self.chunked)? {
            return self.chunked_array(obj, path).map(Some);
        }
        if obj.is_instance(&self.masked)? {
            return self.masked_array(obj, path).map(Some);
        }
        if obj.is_instance(&self.ndarray)? {
            return self.array(obj, path).map(Some);
        }
        if obj.is_instance(&self.generic)? {
            return self
                .node(&obj.call_method0("item")?, path, depth + 1)
                .map(Some);
        }
        Ok(None)
    }

    /// `bytes` (as base64 `!!binary`) and dates and times (as `!!timestamp`).
    fn bytes_or_time(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Node>> {
        if let Ok(b) = obj.cast::<PyBytes>() {
            let text: String = self
                .b64encode
                .call1((b,))?
                .call_method1("decode", ("ascii",))?
                .extract()?;
            return Ok(Some(Node::from(text).with_tag("tag:yaml.org,2002:binary")));
        }
        if obj.is_instance(&self.datetime)? || obj.is_instance(&self.date)? {
            let text: String = obj
                .call_method1("isoformat", (" ",))
                .or_else(|_| obj.call_method0("isoformat"))?
                .extract()?;
            return Ok(Some(
                Node::from(text).with_tag("tag:yaml.org,2002:timestamp"),
            ));
        }
        Ok(None)
    }

    /// Awkward arrays (stored as awkward 2 buffers), then anything with `__array__`.
    fn array_like(&mut self, obj: &Bound<'py, PyAny>, path: &str) -> PyResult<Option<Node>> {
        let parts = self.awkward_parts.call1((obj,))?;
        if !parts.is_none() {
            let (form, length, buffers): (String, usize, Bound<'py, PyDict>) = parts.extract()?;
            let layout = layout_from_parts(&form, length, &buffers, path)?;
            return asdf_awkward::to_asdf_awkward2(&layout, &mut self.writer, &self.options)
                .map(Some)
                .map_err(|e| awkward_err(path, e));
        }
        if obj.hasattr("__array__")? {
            let a = self.py.import("numpy")?.getattr("asarray")?.call1((obj,))?;
            return self.array(&a, path).map(Some);
        }
        Ok(None)
    }

    fn mapping(
        &mut self,
        d: &Bound<'py, PyDict>,
        path: &mut String,
        depth: usize,
    ) -> PyResult<Node> {
        let mut entries = Vec::with_capacity(d.len());
        let len = path.len();
        for (k, v) in d.iter() {
            let token = k.str()?.to_string().replace('~', "~0").replace('/', "~1");
            let key = self.node(&k, path, depth + 1)?;
            path.push('/');
            path.push_str(&token);
            let value = self.node(&v, path, depth + 1)?;
            path.truncate(len);
            entries.push((key, value));
        }
        Ok(Node::mapping(entries))
    }

    /// Integers within `i64` as YAML ints; larger ones as `core/integer-1.1.0` (which Python
    /// asdf reads back as `int`; it refuses to write such literals).
    fn int(&mut self, i: &Bound<'py, PyInt>) -> PyResult<Node> {
        if let Ok(v) = i.extract::<i64>() {
            return Ok(Node::from(v));
        }
        let text = i.str()?.to_string();
        let big =
            BigInteger::from_decimal(&text).map_err(|e| PyValueError::new_err(e.to_string()))?;
        big.to_node(self.writer.arrays_mut(), &StoreOptions::inline())
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    fn array(&mut self, a: &Bound<'py, PyAny>, path: &str) -> PyResult<Node> {
        let ua = a.cast::<PyUntypedArray>()?;
        let (dt, _) = from_numpy(&ua.dtype().into_any())?;
        let err = |e: asdf::AsdfError| PyValueError::new_err(format!("array at {path:?}: {e}"));
        match &dt {
            Datatype::Scalar(_) => {
                // Native byte order, any strides.
                let native = native_order(a)?;
                if let Some(bytes) = NumpyBytes::of(&native)? {
                    // C order: the block is the array's own memory, not a copy of it.
                    let shape = ua.shape().to_vec();
                    return self
                        .writer
                        .arrays_mut()
                        .add_raw(bytes, &shape, &dt, ByteOrder::NATIVE, &self.options)
                        .map_err(|e| PyValueError::new_err(format!("array at {path:?}: {e}")));
                }
                let opts = self.options.clone();
                add_typed(&mut self.writer, &native, AddOp::Plain(&opts))
                    .map_err(err)?
                    .ok_or_else(|| unsupported(path, &dt))
            }
            Datatype::Ascii(_) | Datatype::Ucs4(_) => {
                let shape = ua.shape().to_vec();
                let flat = a.call_method0("ravel")?.call_method0("tolist")?;
                let mut strings = Vec::new();
                for item in flat.try_iter()? {
                    let item = item?;
                    let s: String = match item.cast::<PyBytes>() {
                        Ok(b) => String::from_utf8(b.as_bytes().to_vec()).map_err(|_| {
                            PyValueError::new_err(format!(
                                "array at {path:?}: bytes strings must be ASCII"
                            ))
                        })?,
                        Err(_) => item.extract()?,
                    };
                    strings.push(s);
                }
                let arr = ndarray::ArrayD::from_shape_vec(shape, strings)
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                self.writer
                    .arrays_mut()
                    // The dtype's width, as Python asdf writes it (`<U30` stays `[ucs4, 30]`).
                    .add_strings_as(&arr, &dt, &self.options)
                    .map_err(|e| PyValueError::new_err(format!("array at {path:?}: {e}")))
            }
            Datatype::Record(fields) => {
                let contiguous = self
                    .py
                    .import("numpy")?
                    .getattr("ascontiguousarray")?
                    .call1((a,))?;
                let bytes: Vec<u8> = contiguous.call_method0("tobytes")?.extract()?;
                let r = RecordArray::new(
                    fields.clone(),
                    ua.shape().to_vec(),
                    asdf::ndarray::ByteOrder::NATIVE,
                    bytes,
                )
                .map_err(|e| PyValueError::new_err(format!("array at {path:?}: {e}")))?;
                self.writer
                    .arrays_mut()
                    .add_records(&r, &self.options)
                    .map_err(|e| PyValueError::new_err(format!("array at {path:?}: {e}")))
            }
        }
    }

    fn masked_array(&mut self, m: &Bound<'py, PyAny>, path: &str) -> PyResult<Node> {
        let np = self.py.import("numpy")?;
        let data = m.getattr("data")?;
        let mask = np.getattr("ma")?.getattr("getmaskarray")?.call1((m,))?;
        let mask = mask.cast::<PyArrayDyn<bool>>()?.readonly();
        let mask_view = mask.as_array();
        let native = native_order(&data)?;
        let opts = self.options.clone();
        let (dt, _) = from_numpy(&data.getattr("dtype")?)?;
        add_typed(&mut self.writer, &native, AddOp::Masked(mask_view, &opts))
            .map_err(|e| PyValueError::new_err(format!("array at {path:?}: {e}")))?
            .ok_or_else(|| unsupported(path, &dt))
    }

    fn chunked_array(&mut self, c: &Bound<'py, PyAny>, path: &str) -> PyResult<Node> {
        let data = c.getattr("array")?;
        let chunks: Vec<usize> = c.getattr("chunks")?.extract()?;
        let (dt, _) = from_numpy(&data.getattr("dtype")?)?;
        let native = native_order(&data)?;
        let opts = self.options.clone();
        add_typed(&mut self.writer, &native, AddOp::Chunked(&chunks, &opts))
            .map_err(|e| PyValueError::new_err(format!("array at {path:?}: {e}")))?
            .ok_or_else(|| unsupported(path, &dt))
    }
}

/// The memory of a C-contiguous NumPy array, shared with the writer as the array's block (no
/// copy of what may be gigabytes). The array is held until the file is written: NumPy neither
/// frees nor resizes the memory of an array that is referenced. Like every extension that
/// releases the GIL while it reads an array, the write sees whatever another Python thread
/// stores into the array meanwhile (`asdf_rs.write` documents it).
struct NumpyBytes {
    _owner: Py<PyAny>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: the pointer is only read, through `as_ref`, and the memory it points to stays alive
// and in place as long as `_owner` (the array) does; `Py` may be dropped on any thread.
unsafe impl Send for NumpyBytes {}
// SAFETY: as for `Send`: shared access only reads.
unsafe impl Sync for NumpyBytes {}

impl NumpyBytes {
    /// `a`'s memory as a shared block, `None` when `a` is not C-contiguous.
    fn of(a: &Bound<'_, PyAny>) -> PyResult<Option<BlockBytes>> {
        let ua = a.cast::<PyUntypedArray>()?;
        if !ua.is_c_contiguous() {
            return Ok(None);
        }
        let len = ua.len().saturating_mul(ua.dtype().itemsize());
        // SAFETY: `ua` is a live array object (we hold a reference), so reading its `data`
        // field is valid; the pointer it holds is not dereferenced here.
        let ptr = unsafe { (*ua.as_array_ptr()).fields.data } as *const u8;
        let bytes = NumpyBytes {
            _owner: a.clone().unbind(),
            ptr,
            len,
        };
        Ok(Some(BlockBytes::shared(std::sync::Arc::new(bytes))))
    }
}

impl AsRef<[u8]> for NumpyBytes {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: a C-contiguous array's `len` bytes start at `ptr` and stay valid while the
        // array is held (see the type's comment); nothing writes through this slice.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// `a` in this machine's byte order (the array itself when it already is: no copy).
fn native_order<'py>(a: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let dtype = a.getattr("dtype")?.call_method1("newbyteorder", ("=",))?;
    let kwargs = PyDict::new(a.py());
    kwargs.set_item("copy", false)?;
    a.call_method("astype", (dtype,), Some(&kwargs))
}

fn unsupported(path: &str, dt: &Datatype) -> PyErr {
    PyTypeError::new_err(format!("array at {path:?}: cannot store {dt} arrays"))
}

/// How an array is added to the writer.
enum AddOp<'a> {
    Plain(&'a StoreOptions),
    Masked(ndarray::ArrayViewD<'a, bool>, &'a StoreOptions),
    Chunked(&'a [usize], &'a StoreOptions),
}

impl AddOp<'_> {
    fn apply<T: asdf::Element>(
        &self,
        w: &mut AsdfWriter,
        v: &ndarray::ArrayViewD<'_, T>,
    ) -> Result<Node, asdf::AsdfError> {
        match self {
            AddOp::Plain(o) => w.add(v, o),
            AddOp::Masked(mask, o) => {
                w.arrays_mut()
                    .add_masked(v, mask, o)
                    .map_err(|e| asdf::AsdfError::Array {
                        pointer: "a masked array".into(),
                        source: e,
                    })
            }
            AddOp::Chunked(chunks, o) => w.add_chunked(v, Some(chunks), o),
        }
    }
}

/// Adds the native-order NumPy array `a` with `op` (`None` for a dtype without an ASDF scalar
/// type).
fn add_typed(
    w: &mut AsdfWriter,
    a: &Bound<'_, PyAny>,
    op: AddOp<'_>,
) -> Result<Option<Node>, asdf::AsdfError> {
    macro_rules! try_type {
        ($($t:ty),*) => {$(
            if let Ok(arr) = a.cast::<PyArrayDyn<$t>>() {
                let ro = arr.readonly();
                return op.apply(w, &ro.as_array()).map(Some);
            }
        )*};
    }
    try_type!(
        i8,
        i16,
        i32,
        i64,
        u8,
        u16,
        u32,
        u64,
        half::f16,
        f32,
        f64,
        num_complex::Complex<f32>,
        num_complex::Complex<f64>,
        bool
    );
    Ok(None)
}
