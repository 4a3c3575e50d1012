//! Arrays of an open file as NumPy arrays: zero-copy views of the memory map when the layout
//! allows, decoded (with the GIL released) otherwise.

use std::ops::Range;
use std::sync::Arc;

use asdf::ndarray::{AnyArray, ChunkedArray, Datatype, ScalarType};
use asdf::{array_kind, ArrayKind, AsdfFile};
use ndarray::ArrayD;
use num_complex::Complex;
use numpy::PyArray;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyList};

use crate::dtype::numpy_dtype;
use crate::engine::Engine;
use crate::errors::{asdf_err, nd_err};

/// Runs `$body` with `$T` bound to the Rust type of scalar `$s` for the types NumPy has, or
/// evaluates `$other` for the others (128-bit integers, complex32).
macro_rules! with_numpy_scalar {
    ($s:expr, $T:ident => $body:expr, $other:expr) => {
        match $s {
            ScalarType::Int8 => {
                type $T = i8;
                $body
            }
            ScalarType::Int16 => {
                type $T = i16;
                $body
            }
            ScalarType::Int32 => {
                type $T = i32;
                $body
            }
            ScalarType::Int64 => {
                type $T = i64;
                $body
            }
            ScalarType::UInt8 => {
                type $T = u8;
                $body
            }
            ScalarType::UInt16 => {
                type $T = u16;
                $body
            }
            ScalarType::UInt32 => {
                type $T = u32;
                $body
            }
            ScalarType::UInt64 => {
                type $T = u64;
                $body
            }
            ScalarType::Float16 => {
                type $T = half::f16;
                $body
            }
            ScalarType::Float32 => {
                type $T = f32;
                $body
            }
            ScalarType::Float64 => {
                type $T = f64;
                $body
            }
            ScalarType::Complex64 => {
                type $T = Complex<f32>;
                $body
            }
            ScalarType::Complex128 => {
                type $T = Complex<f64>;
                $body
            }
            ScalarType::Bool8 => {
                type $T = bool;
                $body
            }
            ScalarType::Int128 | ScalarType::UInt128 | ScalarType::Complex32 => $other,
        }
    };
}

/// The file every array of an open file keeps alive: the base object of zero-copy views.
#[pyclass(module = "asdf_rs._native", frozen, name = "FileBuffer")]
pub struct FileBuffer {
    pub file: Arc<AsdfFile>,
}

#[pymethods]
impl FileBuffer {
    fn __repr__(&self) -> String {
        match self.file.path() {
            Some(p) => format!("<asdf_rs memory map of {}>", p.display()),
            None => "<asdf_rs file buffer>".to_string(),
        }
    }
}

/// A zero-copy, read-only NumPy view of the array at `pointer`, if its layout allows one.
fn try_view<'py>(
    buffer: &Bound<'py, FileBuffer>,
    pointer: &str,
    scalar: ScalarType,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let file: &AsdfFile = &buffer.get().file;
    let arr = with_numpy_scalar!(scalar, T => {
        let Ok(view) = file.view::<T>(pointer) else {
            return Ok(None);
        };
        // SAFETY: `view` borrows the memory map owned by `buffer.file` (an `Arc` that the
        // `FileBuffer` keeps for its whole life). The map is read-only and never remapped or
        // unmapped while an `AsdfFile` holds it, and `buffer` becomes the NumPy array's base
        // object, so the map outlives every array (and every view of it) made here. The array
        // is made read-only below, so NumPy never writes into the shared map.
        let a = unsafe { PyArray::<T, _>::borrow_from_array(&view, buffer.clone().into_any()) };
        a.into_any()
    }, return Ok(None));
    let kwargs = PyDict::new(buffer.py());
    kwargs.set_item("write", false)?;
    arr.call_method("setflags", (), Some(&kwargs))?;
    Ok(Some(arr))
}

/// A decoded array as NumPy (Rust allocations handed over without copying).
pub fn any_to_numpy(py: Python<'_>, a: AnyArray) -> PyResult<Bound<'_, PyAny>> {
    macro_rules! owned {
        ($a:expr) => {
            Ok(PyArray::from_owned_array(py, $a).into_any())
        };
    }
    match a {
        AnyArray::Int8(a) => owned!(a),
        AnyArray::Int16(a) => owned!(a),
        AnyArray::Int32(a) => owned!(a),
        AnyArray::Int64(a) => owned!(a),
        AnyArray::UInt8(a) => owned!(a),
        AnyArray::UInt16(a) => owned!(a),
        AnyArray::UInt32(a) => owned!(a),
        AnyArray::UInt64(a) => owned!(a),
        AnyArray::Float16(a) => owned!(a),
        AnyArray::Float32(a) => owned!(a),
        AnyArray::Float64(a) => owned!(a),
        AnyArray::Complex64(a) => owned!(a),
        AnyArray::Complex128(a) => owned!(a),
        AnyArray::Bool(a) => owned!(a),
        AnyArray::Complex32(a) => {
            owned!(a.mapv(|z| Complex::new(z.re.to_f32(), z.im.to_f32())))
        }
        AnyArray::Int128(a) => object_ints(py, a.shape(), a.iter().map(|v| v.to_string())),
        AnyArray::UInt128(a) => object_ints(py, a.shape(), a.iter().map(|v| v.to_string())),
        AnyArray::String { data, datatype } => strings(py, &data, &datatype),
        AnyArray::Record(r) => {
            let dtype = numpy_dtype(py, &r.datatype(), r.byteorder())?;
            from_bytes(py, r.bytes(), &dtype, r.shape())
        }
    }
}

/// `numpy.frombuffer(bytearray(bytes), dtype).reshape(shape)`: a writeable array owning a copy.
fn from_bytes<'py>(
    py: Python<'py>,
    bytes: &[u8],
    dtype: &Bound<'py, PyAny>,
    shape: &[usize],
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let buf = PyByteArray::new(py, bytes);
    let flat = np.getattr("frombuffer")?.call1((buf, dtype))?;
    flat.call_method1("reshape", (shape.to_vec(),))
}

/// Integers beyond 64 bits as an `object` array of Python ints.
fn object_ints<'py>(
    py: Python<'py>,
    shape: &[usize],
    decimals: impl Iterator<Item = String>,
) -> PyResult<Bound<'py, PyAny>> {
    let int = py.import("builtins")?.getattr("int")?;
    let items = PyList::empty(py);
    for d in decimals {
        items.append(int.call1((d,))?)?;
    }
    let np = py.import("numpy")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", "O")?;
    let flat = np.getattr("array")?.call((items,), Some(&kwargs))?;
    flat.call_method1("reshape", (shape.to_vec(),))
}

/// `[ascii, N]` as `S<N>`, `[ucs4, N]` as native `U<N>` (NumPy pads with NULs as ASDF does).
fn strings<'py>(
    py: Python<'py>,
    data: &ArrayD<String>,
    datatype: &Datatype,
) -> PyResult<Bound<'py, PyAny>> {
    let (width, ucs4) = match datatype {
        Datatype::Ascii(n) => ((*n).max(1), false),
        Datatype::Ucs4(n) => ((*n).max(1), true),
        other => {
            return Err(PyTypeError::new_err(format!(
                "{other} is not a string type"
            )))
        }
    };
    let unit = if ucs4 { 4 } else { 1 };
    let mut bytes = vec![0u8; data.len() * width * unit];
    for (s, dst) in data.iter().zip(bytes.chunks_exact_mut(width * unit)) {
        if ucs4 {
            for (c, d) in s.chars().zip(dst.chunks_exact_mut(4)) {
                d.copy_from_slice(&(c as u32).to_ne_bytes());
            }
        } else {
            for (b, d) in s.bytes().zip(dst.iter_mut()) {
                *d = b;
            }
        }
    }
    let order = asdf::ndarray::ByteOrder::NATIVE;
    let dt = if ucs4 {
        Datatype::Ucs4(width)
    } else {
        Datatype::Ascii(width)
    };
    let dtype = numpy_dtype(py, &dt, order)?;
    from_bytes(py, &bytes, &dtype, data.shape())
}

/// Reads the array at `pointer`: `(data, mask)`, `mask` a bool array or `None`. Uncompressed,
/// aligned, native-order block arrays of a memory-mapped file (`buffer`) are zero-copy views
/// whose base is `buffer`; the others are decoded with the GIL released (numbers straight into
/// the array handed to NumPy).
pub fn read<'py>(
    py: Python<'py>,
    engine: &Engine,
    buffer: Option<&Bound<'py, FileBuffer>>,
    pointer: &str,
) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
    let node = engine.node(pointer).map_err(asdf_err)?;
    let scalar = match array_kind(node) {
        Some(ArrayKind::NdArray) => {
            let meta = engine.meta(pointer).map_err(asdf_err)?;
            if meta.mask.is_some() || meta.data.is_some() {
                let (a, mask) = py
                    .detach(|| engine.read_masked(pointer))
                    .map_err(asdf_err)?;
                let mask = mask.map(|m| PyArray::from_owned_array(py, m).into_any());
                return Ok((any_to_numpy(py, a)?, mask));
            }
            let scalar = meta.datatype.as_ref().and_then(Datatype::scalar);
            // `AsdfFile::view` refuses a compressed block from its header, without decoding.
            if let (Some(s), Some(buffer)) = (scalar, buffer) {
                if let Some(v) = try_view(buffer, pointer, s)? {
                    return Ok((v, None));
                }
            }
            scalar
        }
        Some(ArrayKind::Chunked) | Some(ArrayKind::Zarr) => element_scalar(node, pointer, engine)?,
        None => None,
    };
    if let Some(s) = scalar {
        with_numpy_scalar!(s, T => {
            let a = py.detach(|| engine.array::<T>(pointer)).map_err(asdf_err)?;
            return Ok((PyArray::from_owned_array(py, a).into_any(), None));
        }, {})
    }
    let a = py.detach(|| engine.read(pointer)).map_err(asdf_err)?;
    Ok((any_to_numpy(py, a)?, None))
}

/// The element type of the array `node` (at `pointer`), `None` for records, strings and
/// ndarrays whose datatype is inferred from inline data.
fn element_scalar(
    node: &asdf::yaml::Node,
    pointer: &str,
    engine: &Engine,
) -> PyResult<Option<ScalarType>> {
    Ok(match array_kind(node) {
        Some(ArrayKind::Zarr) => Some(engine.zarr(node, pointer).map_err(asdf_err)?.scalar),
        Some(ArrayKind::Chunked) => ChunkedArray::from_node(node)
            .map_err(|e| nd_err(pointer, e))?
            .datatype
            .scalar(),
        _ => engine
            .meta(pointer)
            .map_err(asdf_err)?
            .datatype
            .as_ref()
            .and_then(Datatype::scalar),
    })
}

/// The region `ranges` (one per dimension) of the numeric array at `pointer`, reading only what
/// covers it where the layout allows (the chunks it touches, in parallel; the rows of an
/// uncompressed block; the 4 MiB chunks of an `lz4` block), with the GIL released.
pub fn read_region<'py>(
    py: Python<'py>,
    engine: &Engine,
    pointer: &str,
    ranges: Vec<Range<usize>>,
) -> PyResult<Bound<'py, PyAny>> {
    let node = engine.node(pointer).map_err(asdf_err)?;
    let scalar = element_scalar(node, pointer, engine)?.ok_or_else(|| {
        PyTypeError::new_err(format!(
            "array at {pointer:?}: region reads need a numeric datatype"
        ))
    })?;
    with_numpy_scalar!(scalar, T => {
        let a = py
            .detach(|| engine.read_region::<T>(pointer, &ranges))
            .map_err(asdf_err)?;
        Ok(PyArray::from_owned_array(py, a).into_any())
    }, Err(PyTypeError::new_err(format!(
        "array at {pointer:?}: NumPy has no {} type", scalar.name()
    ))))
}
