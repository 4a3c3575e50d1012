//! NumPy `.npy` files (format versions 1.0, 2.0 and 3.0), read into and written from
//! [`AnyArray`]s: every numeric type, `bool`, fixed-width `S`/`U` strings, both byte orders,
//! C and Fortran order. Sizes in the header are checked against the file length before anything
//! is allocated.

use std::borrow::Cow;

use asdf::ndarray::{
    AnyArray, ArrayWriter, BlockStore, ByteOrder, Datatype, NdArrayMeta, NdError, StoreOptions,
};

use array_core::{TypeStr, TypeStrElement, TypeStrError};

use crate::error::{CliError, Result};

const MAGIC: &[u8] = b"\x93NUMPY";

/// A parsed `.npy` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    /// Format version `(major, minor)`.
    pub version: (u8, u8),
    /// The `descr` string (`'<f8'`, `'|b1'`, `'>U5'`, ...).
    pub descr: String,
    /// Whether the data is in Fortran (column-major) order.
    pub fortran_order: bool,
    /// The shape.
    pub shape: Vec<usize>,
    /// Byte offset of the data.
    pub data_offset: usize,
}

impl NpyHeader {
    /// The ASDF datatype and byte order of `descr`.
    pub fn datatype(&self) -> Result<(Datatype, ByteOrder)> {
        descr_to_datatype(&self.descr)
    }
}

fn bad(what: impl Into<String>) -> CliError {
    CliError::Invalid(format!("invalid .npy file: {}", what.into()))
}

/// Maps a simple numpy `descr` to an ASDF datatype and byte order.
///
/// ```
/// use asdftool::npy::descr_to_datatype;
/// use asdf::ndarray::{ByteOrder, Datatype, ScalarType};
/// assert_eq!(descr_to_datatype(">i4").unwrap(), (Datatype::Scalar(ScalarType::Int32), ByteOrder::Big));
/// assert_eq!(descr_to_datatype("|S7").unwrap().0, Datatype::Ascii(7));
/// assert!(descr_to_datatype("<M8[ns]").is_err());
/// ```
pub fn descr_to_datatype(descr: &str) -> Result<(Datatype, ByteOrder)> {
    let t = TypeStr::parse(descr).map_err(|e| match e {
        TypeStrError::Malformed(_) => bad(format!("unsupported descr {descr:?}")),
        TypeStrError::Unsupported(_) => CliError::Unsupported(format!(
            "the .npy datatype {descr:?} has no ASDF equivalent supported here"
        )),
    })?;
    let dt = match t.element {
        TypeStrElement::Scalar(s) => Datatype::Scalar(s),
        TypeStrElement::Bytes(n) => Datatype::Ascii(n),
        TypeStrElement::Unicode(n) => Datatype::Ucs4(n),
    };
    Ok((dt, t.order_or_native()))
}

/// The numpy `descr` of an ASDF datatype stored in `order`.
pub fn datatype_to_descr(dt: &Datatype, order: ByteOrder) -> Result<String> {
    let element = match dt {
        Datatype::Ascii(n) => TypeStrElement::Bytes(*n),
        Datatype::Ucs4(n) => TypeStrElement::Unicode(*n),
        Datatype::Scalar(s) if s.numpy_code().is_some() => TypeStrElement::Scalar(*s),
        Datatype::Scalar(s) => {
            return Err(CliError::Unsupported(format!("{s} has no .npy equivalent")))
        }
        Datatype::Record(_) => {
            return Err(CliError::Unsupported(
                "record arrays cannot be written as .npy by this tool".into(),
            ))
        }
    };
    Ok(TypeStr {
        order: Some(order),
        element,
    }
    .to_string())
}

/// Parses the header of a `.npy` file held in `bytes`.
pub fn parse_header(bytes: &[u8]) -> Result<NpyHeader> {
    if !bytes.starts_with(MAGIC) {
        return Err(bad("missing the \\x93NUMPY magic"));
    }
    let major = *bytes.get(6).ok_or_else(|| bad("truncated header"))?;
    let minor = *bytes.get(7).ok_or_else(|| bad("truncated header"))?;
    let (len, start): (usize, usize) = match major {
        1 => {
            let b = bytes.get(8..10).ok_or_else(|| bad("truncated header"))?;
            (u16::from_le_bytes([b[0], b[1]]) as usize, 10)
        }
        2 | 3 => {
            let b = bytes.get(8..12).ok_or_else(|| bad("truncated header"))?;
            (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 12)
        }
        v => return Err(bad(format!("unsupported format version {v}.{minor}"))),
    };
    let end = start
        .checked_add(len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| {
            bad(format!(
                "header of {len} bytes at byte {start} runs past the end of the file ({} bytes)",
                bytes.len()
            ))
        })?;
    let text = std::str::from_utf8(&bytes[start..end])
        .map_err(|_| bad(format!("header at byte {start} is not text")))?;
    let descr = dict_value(text, "descr").ok_or_else(|| bad("header has no 'descr'"))?;
    let descr = descr
        .trim()
        .strip_prefix('\'')
        .and_then(|s| s.split('\'').next())
        .ok_or_else(|| {
            CliError::Unsupported(format!(
                "only simple .npy datatypes are supported, not {}",
                descr.trim()
            ))
        })?
        .to_string();
    let fortran =
        dict_value(text, "fortran_order").ok_or_else(|| bad("header has no 'fortran_order'"))?;
    let fortran_order = match fortran.trim_start() {
        s if s.starts_with("True") => true,
        s if s.starts_with("False") => false,
        s => return Err(bad(format!("fortran_order is {s:?}"))),
    };
    let shape_text = dict_value(text, "shape").ok_or_else(|| bad("header has no 'shape'"))?;
    let shape_text = shape_text.trim_start();
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad(format!("shape is not a tuple: {shape_text:?}")))?;
    let mut shape = Vec::new();
    for part in inner.split(',') {
        let p = part.trim();
        if p.is_empty() {
            continue;
        }
        if shape.len() >= asdf::ndarray::MAX_NDIM {
            return Err(bad("too many dimensions"));
        }
        shape.push(
            p.trim_end_matches('L')
                .parse::<usize>()
                .map_err(|_| bad(format!("shape entry {p:?} is not a size")))?,
        );
    }
    Ok(NpyHeader {
        version: (major, minor),
        descr,
        fortran_order,
        shape,
        data_offset: end,
    })
}

/// The text after `'key':` in a Python dict literal.
fn dict_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("'{key}':");
    let i = text.find(&pat)?;
    Some(&text[i + pat.len()..])
}

struct OneBlock<'a>(&'a [u8]);

impl BlockStore for OneBlock<'_> {
    fn block(&self, source: i64) -> asdf::ndarray::Result<Cow<'_, [u8]>> {
        if source == 0 || source == -1 {
            Ok(Cow::Borrowed(self.0))
        } else {
            Err(NdError::Usage(format!("no block {source}")))
        }
    }
}

/// Decodes `bytes` laid out as `shape` of `dt` (C order, or Fortran order) into an
/// [`AnyArray`]; every size is checked against `bytes.len()` first.
pub fn decode(
    bytes: &[u8],
    shape: &[usize],
    dt: &Datatype,
    order: ByteOrder,
    fortran: bool,
) -> Result<AnyArray> {
    let item = dt
        .size()
        .map_err(|e| CliError::Unsupported(e.to_string()))?;
    let count = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| bad(format!("shape {shape:?} overflows")))?;
    let need = count
        .checked_mul(item)
        .ok_or_else(|| bad(format!("shape {shape:?} overflows")))?;
    if need > bytes.len() {
        return Err(bad(format!(
            "shape {shape:?} of {dt} needs {need} data bytes, the file has {}",
            bytes.len()
        )));
    }
    let mut meta = NdArrayMeta::block(0, shape.to_vec(), dt.clone(), order);
    if fortran && shape.len() > 1 && count > 0 {
        let mut strides = Vec::with_capacity(shape.len());
        let mut s = item as i64;
        for &d in shape {
            strides.push(s);
            s = s.saturating_mul(d as i64);
        }
        meta.strides = Some(strides);
    }
    meta.read(&OneBlock(&bytes[..need]))
        .map_err(|e| bad(e.to_string()))
}

/// Reads a whole `.npy` file held in `bytes`.
///
/// ```
/// use asdf::ndarray::AnyArray;
/// let a = AnyArray::from(ndarray::ArrayD::from_shape_vec(vec![2, 3], (0..6).map(|x| x as f32).collect()).unwrap());
/// let bytes = asdftool::npy::to_bytes(&a).unwrap();
/// assert_eq!(&bytes[..6], b"\x93NUMPY");
/// let (back, header) = asdftool::npy::read(&bytes).unwrap();
/// assert_eq!(header.shape, [2, 3]);
/// assert_eq!(back, a);
/// ```
pub fn read(bytes: &[u8]) -> Result<(AnyArray, NpyHeader)> {
    let h = parse_header(bytes)?;
    let (dt, order) = h.datatype()?;
    let data = &bytes[h.data_offset..];
    let a = decode(data, &h.shape, &dt, order, h.fortran_order)?;
    Ok((a, h))
}

/// The C-order bytes of `a` in this machine's byte order.
pub fn native_bytes(a: &AnyArray) -> Result<Vec<u8>> {
    let mut w = ArrayWriter::new();
    w.add_any(a, &StoreOptions::default())
        .map_err(|e| CliError::Unsupported(e.to_string()))?;
    match w.blocks() {
        [b] => Ok(b.data.to_vec()),
        _ => Err(CliError::Unsupported(
            "this array does not map to one contiguous buffer".into(),
        )),
    }
}

/// Encodes `a` as a `.npy` file (version 1.0, or 2.0 for a very long header).
pub fn to_bytes(a: &AnyArray) -> Result<Vec<u8>> {
    let dt = a.datatype();
    let descr = datatype_to_descr(&dt, ByteOrder::NATIVE)?;
    let data = native_bytes(a)?;
    let shape = a.shape();
    let shape_text = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}");
    let (prefix, version) = if dict.len() + 11 < 65536 {
        (10, 1u8)
    } else {
        (12, 2u8)
    };
    let total = (prefix + dict.len() + 1).div_ceil(64) * 64;
    while prefix + dict.len() + 1 < total {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = Vec::with_capacity(total + data.len());
    out.extend_from_slice(MAGIC);
    out.push(version);
    out.push(0);
    if version == 1 {
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.extend_from_slice(&data);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(dict: &str) -> Vec<u8> {
        let mut v = b"\x93NUMPY\x01\x00".to_vec();
        v.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        v.extend_from_slice(dict.as_bytes());
        v
    }

    #[test]
    fn hostile_headers_are_errors() {
        // A shape far larger than the data: refused before any allocation.
        let mut h =
            header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 1000000), }");
        h.extend_from_slice(&[0; 16]);
        let e = read(&h).unwrap_err();
        assert!(
            e.to_string().contains("overflows") || e.to_string().contains("needs"),
            "{e}"
        );
        let mut h = header("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }");
        h.extend_from_slice(&[0; 16]);
        assert!(read(&h)
            .unwrap_err()
            .to_string()
            .contains("needs 24 data bytes"));
        // Header length past the end.
        let mut h = b"\x93NUMPY\x01\x00\xff\xff{".to_vec();
        h.push(b'}');
        assert!(read(&h)
            .unwrap_err()
            .to_string()
            .contains("runs past the end"));
        // Unsupported version, descr, garbage shape.
        assert!(read(b"\x93NUMPY\x09\x00\x00\x00").is_err());
        assert_eq!(
            read(&header(
                "{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (1,), }"
            ))
            .unwrap_err()
            .exit_code(),
            2
        );
        assert!(read(&header(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (a,), }"
        ))
        .is_err());
        assert!(read(&header(
            "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }"
        ))
        .is_err());
        // Deeply nested descriptors (which make py_literal-based parsers take exponential
        // time) are refused at once: the reader only accepts a quoted type string.
        let nested = format!(
            "{{'descr': {}'<f8'{}, 'fortran_order': False, 'shape': (1,), }}",
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        let e = read(&header(&nested)).unwrap_err();
        assert!(e.to_string().contains("simple"), "{e}");
        assert!(read(&header(
            "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (1,), }"
        ))
        .is_err());
    }

    #[test]
    fn fortran_order_and_big_endian() {
        let mut h = header("{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }");
        for v in [0i16, 3, 1, 4, 2, 5] {
            h.extend_from_slice(&v.to_be_bytes());
        }
        let (a, hd) = read(&h).unwrap();
        assert!(hd.fortran_order);
        let a = a.into_array::<i16>().unwrap();
        assert_eq!(a.iter().copied().collect::<Vec<_>>(), [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn written_header_is_aligned_and_round_trips() {
        let a = AnyArray::from(ndarray::ArrayD::from_elem(vec![0, 3], 1u8));
        let bytes = to_bytes(&a).unwrap();
        assert_eq!(parse_header(&bytes).unwrap().data_offset % 64, 0);
        assert_eq!(read(&bytes).unwrap().0, a);
        let s = AnyArray::String {
            data: ndarray::ArrayD::from_shape_vec(vec![2], vec!["ab".to_string(), "c".into()])
                .unwrap(),
            datatype: Datatype::Ucs4(2),
        };
        let (back, h) = read(&to_bytes(&s).unwrap()).unwrap();
        assert!(h.descr.ends_with("U2"));
        assert_eq!(back, s);
    }
}
