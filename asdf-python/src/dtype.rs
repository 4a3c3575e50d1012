//! ASDF datatypes and NumPy dtypes, both ways.

use asdf::ndarray::{ByteOrder, Datatype, Field, ScalarType};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

/// NumPy's byte-order character for `order` (`|` for types without one).
fn order_char(order: ByteOrder, sized: bool) -> &'static str {
    match (sized, order) {
        (false, _) => "|",
        (true, ByteOrder::Little) => "<",
        (true, ByteOrder::Big) => ">",
    }
}

/// NumPy's type code of a scalar type (`None` for the 128-bit and complex32 types NumPy lacks).
pub fn scalar_code(s: ScalarType) -> Option<&'static str> {
    Some(match s {
        ScalarType::Int8 => "i1",
        ScalarType::Int16 => "i2",
        ScalarType::Int32 => "i4",
        ScalarType::Int64 => "i8",
        ScalarType::UInt8 => "u1",
        ScalarType::UInt16 => "u2",
        ScalarType::UInt32 => "u4",
        ScalarType::UInt64 => "u8",
        ScalarType::Float16 => "f2",
        ScalarType::Float32 => "f4",
        ScalarType::Float64 => "f8",
        ScalarType::Complex64 => "c8",
        ScalarType::Complex128 => "c16",
        ScalarType::Bool8 => "b1",
        ScalarType::Int128 | ScalarType::UInt128 | ScalarType::Complex32 => return None,
    })
}

/// The NumPy dtype of `dt` stored with `order` (records keep per-field byte orders, like
/// Python asdf). The 128-bit integers, which NumPy has no type for, become `object` and
/// complex32 becomes complex64 (what [`crate::array`] converts them to).
pub fn numpy_dtype<'py>(
    py: Python<'py>,
    dt: &Datatype,
    order: ByteOrder,
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    np.getattr("dtype")?
        .call1((dtype_spec(py, dt, order, false)?,))
}

/// What `numpy.dtype(...)` accepts for `dt`: a type string, or a list of fields.
fn dtype_spec<'py>(
    py: Python<'py>,
    dt: &Datatype,
    order: ByteOrder,
    in_record: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let text = match dt {
        Datatype::Scalar(s) => match (scalar_code(*s), s) {
            (Some(code), _) => format!("{}{code}", order_char(order, s.size() > 1)),
            (None, ScalarType::Complex32) if !in_record => format!("{}c8", order_char(order, true)),
            (None, _) if !in_record => "O".to_string(),
            (None, _) => {
                return Err(PyTypeError::new_err(format!(
                    "NumPy has no type for {} record fields",
                    s.name()
                )))
            }
        },
        Datatype::Ascii(n) => format!("|S{}", (*n).max(1)),
        Datatype::Ucs4(n) => format!("{}U{}", order_char(order, true), (*n).max(1)),
        Datatype::Record(fields) => {
            let items = PyList::empty(py);
            for (i, f) in fields.iter().enumerate() {
                let name = if f.name.is_empty() {
                    format!("f{i}")
                } else {
                    f.name.clone()
                };
                let sub = dtype_spec(py, &f.datatype, f.byteorder.unwrap_or(order), true)?;
                let shape = PyTuple::new(py, &f.shape)?;
                items.append((name, sub, shape))?;
            }
            return Ok(items.into_any());
        }
    };
    Ok(text.into_pyobject(py)?.into_any())
}

/// The ASDF datatype (and byte order) of a NumPy dtype; records become [`Datatype::Record`]
/// with per-field byte orders. Padded (aligned) record dtypes are refused: ASDF records are
/// packed.
pub fn from_numpy(dtype: &Bound<'_, PyAny>) -> PyResult<(Datatype, ByteOrder)> {
    let fields = dtype.getattr("fields")?;
    if !fields.is_none() {
        return record_from_numpy(dtype);
    }
    let kind: String = dtype.getattr("kind")?.extract()?;
    let size: usize = dtype.getattr("itemsize")?.extract()?;
    let bo: String = dtype.getattr("byteorder")?.extract()?;
    let order = match bo.as_str() {
        ">" => ByteOrder::Big,
        "<" => ByteOrder::Little,
        _ => ByteOrder::NATIVE,
    };
    let scalar = |s: ScalarType| Ok((Datatype::Scalar(s), order));
    match (kind.as_str(), size) {
        ("b", 1) => scalar(ScalarType::Bool8),
        ("i", 1) => scalar(ScalarType::Int8),
        ("i", 2) => scalar(ScalarType::Int16),
        ("i", 4) => scalar(ScalarType::Int32),
        ("i", 8) => scalar(ScalarType::Int64),
        ("u", 1) => scalar(ScalarType::UInt8),
        ("u", 2) => scalar(ScalarType::UInt16),
        ("u", 4) => scalar(ScalarType::UInt32),
        ("u", 8) => scalar(ScalarType::UInt64),
        ("f", 2) => scalar(ScalarType::Float16),
        ("f", 4) => scalar(ScalarType::Float32),
        ("f", 8) => scalar(ScalarType::Float64),
        ("c", 8) => scalar(ScalarType::Complex64),
        ("c", 16) => scalar(ScalarType::Complex128),
        ("S", n) => Ok((Datatype::Ascii(n), order)),
        ("U", n) => Ok((Datatype::Ucs4(n / 4), order)),
        _ => Err(PyTypeError::new_err(format!(
            "ASDF has no datatype for NumPy dtype {}",
            dtype.str()?
        ))),
    }
}

fn record_from_numpy(dtype: &Bound<'_, PyAny>) -> PyResult<(Datatype, ByteOrder)> {
    let names: Vec<String> = dtype.getattr("names")?.extract()?;
    let fields_map = dtype.getattr("fields")?;
    let mut fields = Vec::with_capacity(names.len());
    let mut expected_offset = 0usize;
    for name in names {
        let entry = fields_map.get_item(&name)?;
        let sub = entry.get_item(0)?;
        let offset: usize = entry.get_item(1)?.extract()?;
        if offset != expected_offset {
            return Err(PyTypeError::new_err(format!(
                "record field {name:?} is at byte {offset}, not {expected_offset}: ASDF records \
                 are packed (use numpy.lib.recfunctions.repack_fields)"
            )));
        }
        expected_offset += sub.getattr("itemsize")?.extract::<usize>()?;
        let (base, shape): (Bound<'_, PyAny>, Vec<usize>) = match sub.getattr("subdtype")? {
            s if s.is_none() => (sub.clone(), Vec::new()),
            s => (s.get_item(0)?, s.get_item(1)?.extract()?),
        };
        let (datatype, order) = from_numpy(&base)?;
        let byteorder = datatype.has_byteorder().then_some(order);
        fields.push(Field {
            name,
            datatype,
            byteorder,
            shape,
        });
    }
    Ok((Datatype::Record(fields), ByteOrder::NATIVE))
}
