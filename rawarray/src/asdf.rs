//! The mapping between RawArray headers and ASDF `core/ndarray` type descriptions, for
//! `asdftool convert`.
//!
//! ASDF shapes are row-major (last axis fastest) and RawArray dims are column-major (first axis
//! fastest), so converting reverses the dims and leaves every data byte where it is.
//!
//! ```
//! use rawarray::asdf::{header_to_asdf, asdf_to_header, AsdfDatatype, ScalarType, BoolCode};
//! use rawarray::{ByteOrder, ElementKind, Header};
//! let h = Header::new(ElementKind::C64, &[3, 4]).unwrap();
//! let m = header_to_asdf(&h, None).unwrap();
//! assert_eq!(m.array.datatype, AsdfDatatype::Scalar(ScalarType::Complex64));
//! assert_eq!(m.array.datatype.to_string(), "complex64");
//! assert_eq!(m.array.shape, vec![4, 3]);
//! assert_eq!(m.array.byteorder, ByteOrder::Little);
//! assert!(m.exact);
//! assert_eq!(asdf_to_header(&m.array, BoolCode::Julia).unwrap(), h);
//! ```

use std::fmt;

use crate::error::{Error, Result};
use crate::header::{Header, FLAG_BIG_ENDIAN, FLAG_BITS};
use crate::kind::{ByteOrder, ElementKind, ELTYPE_USER};

/// The workspace's scalar vocabulary (from `array-core`); ASDF files hold the standard ones
/// ([`ScalarType::is_standard`]).
pub use array_core::ScalarType;

/// An ASDF `datatype`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AsdfDatatype {
    /// A scalar, e.g. `float64`.
    Scalar(ScalarType),
    /// `[ascii, n]`: fixed-length byte strings.
    Ascii(u64),
    /// `[ucs4, n]`: fixed-length UCS-4 strings (4 bytes per character).
    Ucs4(u64),
    /// A record (structured) datatype: a list of fields.
    Record(Vec<AsdfField>),
}

/// One field of an ASDF record datatype.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AsdfField {
    /// Field name (ASDF allows unnamed list items).
    pub name: Option<String>,
    /// The field's datatype.
    pub datatype: AsdfDatatype,
    /// The field's byte order, if it differs from the array's.
    pub byteorder: Option<ByteOrder>,
    /// Sub-array shape (empty for a scalar field).
    pub shape: Vec<u64>,
}

impl AsdfDatatype {
    /// Bytes per element, with overflow checking.
    pub fn size(&self) -> Result<u64> {
        let overflow = Error::SizeOverflow {
            what: "the ASDF datatype size",
        };
        match self {
            AsdfDatatype::Scalar(s) => Ok(s.size() as u64),
            AsdfDatatype::Ascii(n) => Ok(*n),
            AsdfDatatype::Ucs4(n) => n.checked_mul(4).ok_or(overflow),
            AsdfDatatype::Record(fields) => fields.iter().try_fold(0u64, |acc, f| {
                let count = f
                    .shape
                    .iter()
                    .try_fold(1u64, |a, &d| a.checked_mul(d))
                    .ok_or(Error::SizeOverflow {
                        what: "an ASDF field shape",
                    })?;
                f.datatype
                    .size()?
                    .checked_mul(count)
                    .and_then(|s| acc.checked_add(s))
                    .ok_or(Error::SizeOverflow {
                        what: "the ASDF record size",
                    })
            }),
        }
    }
}

impl fmt::Display for AsdfDatatype {
    /// The YAML flow form: `float64`, `[ascii, 8]`, `[{name: x, datatype: int32}, ...]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AsdfDatatype::Scalar(s) => f.write_str(s.name()),
            AsdfDatatype::Ascii(n) => write!(f, "[ascii, {n}]"),
            AsdfDatatype::Ucs4(n) => write!(f, "[ucs4, {n}]"),
            AsdfDatatype::Record(fields) => {
                f.write_str("[")?;
                for (i, fl) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str("{")?;
                    if let Some(n) = &fl.name {
                        write!(f, "name: {n}, ")?;
                    }
                    write!(f, "datatype: {}", fl.datatype)?;
                    if let Some(b) = fl.byteorder {
                        write!(f, ", byteorder: {}", b.name())?;
                    }
                    if !fl.shape.is_empty() {
                        write!(f, ", shape: {:?}", fl.shape)?;
                    }
                    f.write_str("}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// The type part of an ASDF `core/ndarray`: `datatype`, `byteorder`, `shape` (row-major).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AsdfArrayType {
    /// Element datatype.
    pub datatype: AsdfDatatype,
    /// Byte order of the block's data.
    pub byteorder: ByteOrder,
    /// Shape, slowest axis first.
    pub shape: Vec<u64>,
}

/// The result of [`header_to_asdf`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsdfMapping {
    /// The ASDF description of the same bytes.
    pub array: AsdfArrayType,
    /// `false` when ASDF has no such element type (user records without a description,
    /// 128-bit integers, bfloat16, complex-of-float16) and the data is described as raw
    /// `uint8` bytes with one extra, fastest axis of length `elbyte`.
    pub exact: bool,
}

/// Describes the (decoded) data of a RawArray header as an ASDF array type.
///
/// * the shape is the reversed dims, and the bytes stay where they are;
/// * complex maps to `complex64`/`complex128`, Bool (eltype 5, elbyte 1, or a decoded packed
///   BitArray) to `bool8`;
/// * eltype 0 maps to `record` when given (its size must equal `elbyte`), else to `uint8` bytes
///   with shape `[reversed dims.., elbyte]`; so do the kinds ASDF lacks.
///
/// For compressed files the description is of the decoded data, whose byte order is
/// [`crate::RawArray::data_byte_order`]; use [`kind_to_asdf`] with those values.
pub fn header_to_asdf(h: &Header, record: Option<&AsdfDatatype>) -> Result<AsdfMapping> {
    let mut kind = h.kind()?;
    let mut order = h.data_byte_order();
    if h.flags & FLAG_BITS != 0 {
        kind = ElementKind::Bool;
        order = ByteOrder::Little;
    }
    kind_to_asdf(kind, order, &h.dims, record)
}

/// Like [`header_to_asdf`], from an element kind, byte order and dims (first fastest).
pub fn kind_to_asdf(
    kind: ElementKind,
    order: ByteOrder,
    dims: &[u64],
    record: Option<&AsdfDatatype>,
) -> Result<AsdfMapping> {
    let mut shape: Vec<u64> = dims.iter().rev().copied().collect();
    if let (ElementKind::User(elbyte), Some(rec)) = (kind, record) {
        let size = rec.size()?;
        if size != elbyte {
            return Err(Error::RecordSize {
                elbyte,
                record_size: usize::try_from(size).unwrap_or(usize::MAX),
            });
        }
        return Ok(AsdfMapping {
            array: AsdfArrayType {
                datatype: rec.clone(),
                byteorder: order,
                shape,
            },
            exact: true,
        });
    }
    match kind.scalar().filter(|s| s.is_standard()) {
        Some(s) => Ok(AsdfMapping {
            array: AsdfArrayType {
                datatype: AsdfDatatype::Scalar(s),
                byteorder: order,
                shape,
            },
            exact: true,
        }),
        None => {
            shape.push(kind.size());
            Ok(AsdfMapping {
                array: AsdfArrayType {
                    datatype: AsdfDatatype::Scalar(ScalarType::UInt8),
                    byteorder: order,
                    shape,
                },
                exact: false,
            })
        }
    }
}

/// Which RawArray `eltype` an ASDF `bool8` becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoolCode {
    /// eltype 5, elbyte 1 (RawArray.jl).
    #[default]
    Julia,
    /// eltype 0, elbyte 1 (Python `ra.py`).
    User,
}

/// The RawArray header (uncompressed data) for an ASDF array type: dims = reversed shape,
/// flag bit 0 from the byte order, records and strings as eltype 0 with their byte size.
pub fn asdf_to_header(t: &AsdfArrayType, bool_code: BoolCode) -> Result<Header> {
    let dims: Vec<u64> = t.shape.iter().rev().copied().collect();
    let kind = match &t.datatype {
        AsdfDatatype::Scalar(s) => ElementKind::from_scalar(*s),
        other => {
            let size = other.size()?;
            if size == 0 {
                return Err(Error::NoEquivalent(format!(
                    "the zero-sized ASDF datatype {other} has no RawArray equivalent"
                )));
            }
            ElementKind::User(size)
        }
    };
    let mut h = Header::new(kind, &dims)?;
    if kind == ElementKind::Bool && bool_code == BoolCode::User {
        h.eltype = ELTYPE_USER;
    }
    if t.byteorder == ByteOrder::Big {
        h.flags |= FLAG_BIG_ENDIAN;
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_maps_and_back() {
        for (eltype, elbyte) in [
            (1, 1),
            (1, 2),
            (1, 4),
            (1, 8),
            (2, 1),
            (2, 2),
            (2, 4),
            (2, 8),
            (3, 2),
            (3, 4),
            (3, 8),
            (4, 8),
            (4, 16),
            (5, 1),
        ] {
            let mut h = Header::new(
                ElementKind::from_codes(eltype, elbyte, false).unwrap(),
                &[2, 3, 5],
            )
            .unwrap();
            h.flags = FLAG_BIG_ENDIAN;
            let m = header_to_asdf(&h, None).unwrap();
            assert!(m.exact);
            assert_eq!(m.array.shape, [5, 3, 2]);
            assert_eq!(m.array.byteorder, ByteOrder::Big);
            assert_eq!(asdf_to_header(&m.array, BoolCode::Julia).unwrap(), h);
        }
        let names: Vec<String> = [(1u64, 8u64), (2, 1), (3, 2), (4, 16), (5, 1)]
            .iter()
            .map(|&(t, b)| {
                let h = Header::new(ElementKind::from_codes(t, b, false).unwrap(), &[1]).unwrap();
                header_to_asdf(&h, None).unwrap().array.datatype.to_string()
            })
            .collect();
        assert_eq!(names, ["int64", "uint8", "float16", "complex128", "bool8"]);
    }

    #[test]
    fn user_records_and_fallbacks() {
        let h = Header::new(ElementKind::User(12), &[4, 2]).unwrap();
        let m = header_to_asdf(&h, None).unwrap();
        assert!(!m.exact);
        assert_eq!(m.array.datatype, AsdfDatatype::Scalar(ScalarType::UInt8));
        assert_eq!(m.array.shape, [2, 4, 12]);
        let rec = AsdfDatatype::Record(vec![
            AsdfField {
                name: Some("id".into()),
                datatype: AsdfDatatype::Scalar(ScalarType::Int32),
                byteorder: None,
                shape: vec![],
            },
            AsdfField {
                name: Some("xy".into()),
                datatype: AsdfDatatype::Scalar(ScalarType::Float32),
                byteorder: Some(ByteOrder::Little),
                shape: vec![2],
            },
        ]);
        assert_eq!(rec.to_string(), "[{name: id, datatype: int32}, {name: xy, datatype: float32, byteorder: little, shape: [2]}]");
        let m = header_to_asdf(&h, Some(&rec)).unwrap();
        assert!(m.exact);
        assert_eq!(m.array.shape, [2, 4]);
        assert_eq!(asdf_to_header(&m.array, BoolCode::Julia).unwrap(), h);
        // Wrong record size.
        let h16 = Header::new(ElementKind::User(16), &[1]).unwrap();
        assert!(matches!(
            header_to_asdf(&h16, Some(&rec)),
            Err(Error::RecordSize {
                elbyte: 16,
                record_size: 12
            })
        ));
        // Kinds ASDF lacks.
        for k in [
            ElementKind::I128,
            ElementKind::U128,
            ElementKind::BF16,
            ElementKind::C32,
        ] {
            let m = kind_to_asdf(k, ByteOrder::Little, &[3], None).unwrap();
            assert!(!m.exact);
            assert_eq!(m.array.shape, [3, k.size()]);
        }
        // Strings.
        let t = AsdfArrayType {
            datatype: AsdfDatatype::Ucs4(3),
            byteorder: ByteOrder::Little,
            shape: vec![7],
        };
        let h = asdf_to_header(&t, BoolCode::Julia).unwrap();
        assert_eq!((h.eltype, h.elbyte, h.size), (0, 12, 84));
        // Bool to Python's eltype 0.
        let t = AsdfArrayType {
            datatype: AsdfDatatype::Scalar(ScalarType::Bool8),
            byteorder: ByteOrder::Big,
            shape: vec![2, 3],
        };
        let h = asdf_to_header(&t, BoolCode::User).unwrap();
        assert_eq!((h.eltype, h.elbyte, h.dims.clone()), (0, 1, vec![3, 2]));
        assert_eq!(
            ScalarType::from_name("complex64"),
            Some(ScalarType::Complex64)
        );
        assert!(!ScalarType::from_name("int128").unwrap().is_standard());
        // A packed BitArray header describes its decoded bools.
        let bits = Header {
            flags: 6,
            eltype: 5,
            elbyte: 8,
            size: 8,
            dims: vec![3, 5],
        };
        let m = header_to_asdf(&bits, None).unwrap();
        assert_eq!(
            (m.array.datatype, m.array.shape),
            (AsdfDatatype::Scalar(ScalarType::Bool8), vec![5, 3])
        );
    }
}
