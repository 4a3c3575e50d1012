//! The RawArray header: magic, flags, eltype, elbyte, size, ndims, dims.

use std::io::{Read, Write};

use crate::error::{Error, Result};
use crate::kind::{ByteOrder, ElementKind};

/// The magic number, `0x7961727261776172`: the ASCII bytes `rawarray` in little-endian order.
pub const MAGIC: u64 = 0x7961_7272_6177_6172;
/// The magic as it appears in a standard file.
pub const MAGIC_BYTES: [u8; 8] = *b"rawarray";
/// The magic Matlab's `rawrite.m` wrote from 2015-10-20 to 2016-07-14: the literal went through a
/// double, which rounds it to `0x7961727261776000`.
pub const MATLAB_ROUNDED_MAGIC: u64 = 0x7961_7272_6177_6000;

/// Flag bit 0: the data (not the header) is big-endian.
pub const FLAG_BIG_ENDIAN: u64 = 1;
/// Flag bit 1: compressed data. The C library stores one raw LZ4 block (`size` = compressed
/// bytes); RawArray.jl stores LEB128/zigzag varints (`size` = decoded bytes).
pub const FLAG_COMPRESSED: u64 = 2;
/// Flag bit 2: a packed Julia `BitArray` (eltype 5, elbyte 8, `UInt64` chunks).
pub const FLAG_BITS: u64 = 4;
/// Every flag bit with a known meaning.
pub const KNOWN_FLAGS: u64 = FLAG_BIG_ENDIAN | FLAG_COMPRESSED | FLAG_BITS;

/// Which header layout the file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Magic `rawarray`, little-endian header fields (every writer on today's hardware).
    Standard,
    /// Magic `yarrawar`: a native writer (C, Julia, Matlab) on a big-endian host; all header
    /// fields are big-endian.
    BigEndianHeader,
    /// The rounded magic `0x7961727261776000` of Matlab's `rawrite.m` (2015-10 .. 2016-07).
    MatlabRoundedMagic,
    /// The 2015-10-19 layout without any magic: the header starts with the flags.
    PreMagic,
}

impl Layout {
    /// Whether the layout is historical (reading it records a [`crate::Warning`]).
    pub fn is_historical(self) -> bool {
        matches!(self, Layout::MatlabRoundedMagic | Layout::PreMagic)
    }
}

/// Limits applied while parsing untrusted input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted `ndims` (default 256; BART writes 16 and accepts at most 100).
    pub max_ndims: u64,
    /// Largest accepted decoded data length in bytes (default: `isize::MAX`).
    pub max_data_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_ndims: 256,
            max_data_bytes: isize::MAX as u64,
        }
    }
}

/// The header fields of a RawArray file.
///
/// ```
/// use rawarray::{ElementKind, Header};
/// let h = Header::new(ElementKind::C64, &[3, 4]).unwrap();
/// assert_eq!((h.flags, h.eltype, h.elbyte, h.size), (0, 4, 8, 96));
/// assert_eq!(h.encoded_len(), 64);
/// let bytes = h.to_bytes();
/// assert_eq!(&bytes[..8], b"rawarray");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Header {
    /// Flag bits ([`FLAG_BIG_ENDIAN`], [`FLAG_COMPRESSED`], [`FLAG_BITS`]).
    pub flags: u64,
    /// Element class code (0 user, 1 int, 2 uint, 3 float, 4 complex, 5 bool/bfloat16).
    pub eltype: u64,
    /// Bytes per element (a whole complex pair; 8 for a packed BitArray).
    pub elbyte: u64,
    /// Length of the data segment in bytes (for Julia LEB128 data: the decoded length).
    pub size: u64,
    /// Dimensions, first one fastest (column-major).
    pub dims: Vec<u64>,
}

impl Header {
    /// A header for uncompressed, little-endian data of `kind` with `dims` (first fastest).
    pub fn new(kind: ElementKind, dims: &[u64]) -> Result<Header> {
        let mut h = Header {
            flags: 0,
            eltype: kind.eltype(),
            elbyte: kind.size(),
            size: 0,
            dims: dims.to_vec(),
        };
        h.size = h.decoded_len()?;
        Ok(h)
    }

    /// Number of dimensions.
    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    /// Byte order of the data segment (flag bit 0).
    pub fn data_byte_order(&self) -> ByteOrder {
        if self.flags & FLAG_BIG_ENDIAN != 0 {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    }

    /// The element kind, validated against `eltype`, `elbyte` and the flags.
    pub fn kind(&self) -> Result<ElementKind> {
        let bits = self.flags & FLAG_BITS != 0;
        if let Some(k) = ElementKind::from_codes(self.eltype, self.elbyte, bits) {
            if bits && k != ElementKind::Bool {
                return Err(invalid(
                    "flags",
                    8,
                    self.flags,
                    format!("bit 2 (packed bits) needs eltype 5 and elbyte 8, found eltype {} elbyte {}", self.eltype, self.elbyte),
                ));
            }
            return Ok(k);
        }
        if self.eltype > 5 {
            return Err(invalid(
                "eltype",
                16,
                self.eltype,
                "unknown element type code; known codes are 0 (user), 1 (int), 2 (uint), 3 (float), 4 (complex), 5 (bool / bfloat16)".into(),
            ));
        }
        let expected = match self.eltype {
            0 => "a positive record size",
            1 | 2 => "1, 2, 4, 8 or 16",
            3 => "2, 4 or 8",
            4 => "4, 8 or 16 (the size of the whole pair)",
            _ if bits => "8 (packed bits)",
            _ => "1 (Julia Bool) or 2 (bfloat16); 8 only with flag bit 2",
        };
        Err(invalid(
            "elbyte",
            24,
            self.elbyte,
            format!(
                "not a valid element size for eltype {}: expected {expected}",
                self.eltype
            ),
        ))
    }

    /// Number of elements, the product of the dims (1 for ndims = 0), with overflow checking.
    pub fn element_count(&self) -> Result<u64> {
        self.dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .ok_or(Error::SizeOverflow {
                what: "the product of the dims",
            })
    }

    /// Length in bytes of the decoded data, `element_count * element size`.
    ///
    /// For a packed BitArray this is one byte per element (the unpacked bools).
    pub fn decoded_len(&self) -> Result<u64> {
        let unit = if self.flags & FLAG_BITS != 0 {
            1
        } else {
            self.elbyte
        };
        self.element_count()?
            .checked_mul(unit)
            .ok_or(Error::SizeOverflow {
                what: "the product of the dims times elbyte",
            })
    }

    /// Length in bytes of this header in the standard layout: `48 + 8 * ndims`.
    pub fn encoded_len(&self) -> u64 {
        48 + 8 * self.dims.len() as u64
    }

    /// The header in the standard layout with little-endian fields (as Python and Rust write).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(48 + 8 * self.dims.len());
        out.extend_from_slice(&MAGIC_BYTES);
        for v in [
            self.flags,
            self.eltype,
            self.elbyte,
            self.size,
            self.dims.len() as u64,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for d in &self.dims {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out
    }

    /// Writes [`Header::to_bytes`] to `w`.
    pub fn write_to<W: Write>(&self, mut w: W) -> Result<()> {
        w.write_all(&self.to_bytes())?;
        Ok(())
    }
}

pub(crate) fn invalid(field: &'static str, offset: u64, value: u64, reason: String) -> Error {
    Error::InvalidField {
        field,
        offset,
        value,
        reason,
    }
}

/// A parsed header and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedHeader {
    /// The header fields.
    pub header: Header,
    /// The layout found.
    pub layout: Layout,
    /// Bytes the header occupies; the data starts here.
    pub header_len: u64,
}

struct FieldReader<R> {
    inner: R,
    pos: u64,
    big: bool,
}

impl<R: Read> FieldReader<R> {
    fn raw(&mut self, field: &'static str) -> Result<[u8; 8]> {
        let mut buf = [0u8; 8];
        let mut got = 0;
        while got < 8 {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => {
                    return Err(Error::TruncatedHeader {
                        field,
                        offset: self.pos,
                        available: self.pos + got as u64,
                    })
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.pos += 8;
        Ok(buf)
    }

    fn u64(&mut self, field: &'static str) -> Result<u64> {
        let b = self.raw(field)?;
        Ok(if self.big {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        })
    }
}

const DIM_NAMES: [&str; 16] = [
    "dims[0]", "dims[1]", "dims[2]", "dims[3]", "dims[4]", "dims[5]", "dims[6]", "dims[7]",
    "dims[8]", "dims[9]", "dims[10]", "dims[11]", "dims[12]", "dims[13]", "dims[14]", "dims[15]",
];

fn dim_name(i: usize) -> &'static str {
    DIM_NAMES.get(i).copied().unwrap_or("dims[16..]")
}

/// Reads and validates a header from `r`, leaving `r` at the first data byte.
///
/// Recognises every layout in [`Layout`]; the historical ones only when `allow_historical`.
/// Validates the flags (unknown bits are an error), the `eltype`/`elbyte` pair, `ndims` against
/// `limits`, and that the decoded data length is computable and within `limits`. It does not
/// check `size` against the dims, because its meaning depends on the encoding (see
/// [`crate::RawArray::from_reader`]).
///
/// ```
/// use rawarray::{read_header, Layout, Limits};
/// let mut bytes = rawarray::Header::new(rawarray::ElementKind::F32, &[2, 3]).unwrap().to_bytes();
/// bytes.extend_from_slice(&[0u8; 24]);
/// let p = read_header(&bytes[..], &Limits::default(), true).unwrap();
/// assert_eq!(p.layout, Layout::Standard);
/// assert_eq!(p.header.dims, vec![2, 3]);
/// assert_eq!(p.header_len, 64);
/// ```
pub fn read_header<R: Read>(r: R, limits: &Limits, allow_historical: bool) -> Result<ParsedHeader> {
    let mut fr = FieldReader {
        inner: r,
        pos: 0,
        big: false,
    };
    let first = fr.raw("magic")?;
    let (layout, flags) = magic_and_flags(&mut fr, first, allow_historical)?;
    // Field offsets: the pre-magic layout has no magic, so everything sits 8 bytes earlier.
    let base: u64 = if layout == Layout::PreMagic { 0 } else { 8 };
    let eltype = fr.u64("eltype")?;
    let elbyte = fr.u64("elbyte")?;
    let size = fr.u64("size")?;
    let ndims = fr.u64("ndims")?;
    let bad_premagic = || Error::BadMagic { found: first };
    if flags & !KNOWN_FLAGS != 0 {
        if layout == Layout::PreMagic {
            return Err(bad_premagic());
        }
        return Err(Error::UnknownFlags {
            flags,
            unknown: flags & !KNOWN_FLAGS,
        });
    }
    if ndims > limits.max_ndims {
        if layout == Layout::PreMagic {
            return Err(bad_premagic());
        }
        return Err(invalid(
            "ndims",
            base + 32,
            ndims,
            format!("more dimensions than the limit of {}", limits.max_ndims),
        ));
    }
    // ndims is bounded by the limit here, so this allocation is bounded too.
    let mut dims = Vec::with_capacity(ndims as usize);
    for i in 0..ndims as usize {
        dims.push(fr.u64(dim_name(i))?);
    }
    let header = Header {
        flags,
        eltype,
        elbyte,
        size,
        dims,
    };
    let header_len = fr.pos;
    match check_parsed(&header, layout, base, limits) {
        Err(_) if layout == Layout::PreMagic => Err(bad_premagic()),
        Err(e) => Err(e),
        Ok(()) => Ok(ParsedHeader {
            header,
            layout,
            header_len,
        }),
    }
}

/// The layout the first 8 bytes (`first`) announce, and the flags (read next, or those 8
/// bytes themselves in the pre-magic layout).
fn magic_and_flags<R: Read>(
    fr: &mut FieldReader<R>,
    first: [u8; 8],
    allow_historical: bool,
) -> Result<(Layout, u64)> {
    Ok(if first == MAGIC_BYTES {
        (Layout::Standard, fr.u64("flags")?)
    } else if u64::from_be_bytes(first) == MAGIC {
        fr.big = true;
        (Layout::BigEndianHeader, fr.u64("flags")?)
    } else if allow_historical && u64::from_le_bytes(first) == MATLAB_ROUNDED_MAGIC {
        (Layout::MatlabRoundedMagic, fr.u64("flags")?)
    } else if allow_historical && u64::from_le_bytes(first) <= FLAG_BIG_ENDIAN {
        // The pre-magic layout: these 8 bytes are the flags. Only bit 0 existed then.
        (Layout::PreMagic, u64::from_le_bytes(first))
    } else {
        return Err(Error::BadMagic { found: first });
    })
}

/// The checks of a header read in full: a known element kind, a decoded size within the
/// limits, and for the pre-magic layout, what that layout could hold (any failure there is
/// reported by the caller as a bad magic).
fn check_parsed(header: &Header, layout: Layout, base: u64, limits: &Limits) -> Result<()> {
    let kind = header.kind().map_err(|e| shift_offset(e, base))?;
    let decoded = header.decoded_len()?;
    if decoded > limits.max_data_bytes {
        return Err(Error::LimitExceeded {
            what: "the decoded data",
            value: decoded,
            limit: limits.max_data_bytes,
        });
    }
    let premagic_misfit =
        header.eltype > 4 || matches!(kind, ElementKind::User(_)) || header.size != decoded;
    if layout == Layout::PreMagic && premagic_misfit {
        return Err(Error::InvalidArgument(
            "not what the pre-magic layout holds".into(),
        ));
    }
    Ok(())
}

/// [`Header::kind`] reports offsets for the standard layout; shift them for the pre-magic one.
fn shift_offset(e: Error, base: u64) -> Error {
    match e {
        Error::InvalidField {
            field,
            offset,
            value,
            reason,
        } => Error::InvalidField {
            field,
            offset: offset - 8 + base,
            value,
            reason,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(fields: &[u64]) -> Vec<u8> {
        let mut v = MAGIC_BYTES.to_vec();
        for f in fields {
            v.extend_from_slice(&f.to_le_bytes());
        }
        v
    }

    #[test]
    fn truncated_header_names_field() {
        let bytes = hdr(&[0, 3]);
        match read_header(&bytes[..], &Limits::default(), true) {
            Err(Error::TruncatedHeader {
                field,
                offset,
                available,
            }) => {
                assert_eq!((field, offset, available), ("elbyte", 24, 24));
            }
            other => panic!("{other:?}"),
        }
        let mut bytes = hdr(&[0, 3, 8, 16, 2, 2]);
        bytes.extend_from_slice(&[1, 2, 3]);
        match read_header(&bytes[..], &Limits::default(), true) {
            Err(Error::TruncatedHeader {
                field,
                offset,
                available,
            }) => assert_eq!((field, offset, available), ("dims[1]", 56, 59)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rejects_huge_ndims_without_allocating() {
        let bytes = hdr(&[0, 3, 8, 16, u64::MAX]);
        match read_header(&bytes[..], &Limits::default(), true) {
            Err(Error::InvalidField { field, offset, .. }) => {
                assert_eq!((field, offset), ("ndims", 40))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rejects_overflowing_dims_and_limits() {
        let bytes = hdr(&[0, 3, 8, 0, 2, u64::MAX, 3]);
        assert!(matches!(
            read_header(&bytes[..], &Limits::default(), true),
            Err(Error::SizeOverflow { .. })
        ));
        let bytes = hdr(&[0, 3, 8, 0, 1, 1 << 20]);
        let limits = Limits {
            max_data_bytes: 1000,
            ..Limits::default()
        };
        assert!(matches!(
            read_header(&bytes[..], &limits, true),
            Err(Error::LimitExceeded { value, limit: 1000, .. }) if value == 8 << 20
        ));
    }

    #[test]
    fn unknown_flags_and_eltypes() {
        let bytes = hdr(&[8, 3, 8, 8, 1, 1]);
        assert!(matches!(
            read_header(&bytes[..], &Limits::default(), true),
            Err(Error::UnknownFlags {
                flags: 8,
                unknown: 8
            })
        ));
        let bytes = hdr(&[0, 6, 8, 8, 1, 1]);
        assert!(matches!(
            read_header(&bytes[..], &Limits::default(), true),
            Err(Error::InvalidField {
                field: "eltype",
                offset: 16,
                value: 6,
                ..
            })
        ));
        let bytes = hdr(&[0, 3, 3, 3, 1, 1]);
        assert!(matches!(
            read_header(&bytes[..], &Limits::default(), true),
            Err(Error::InvalidField {
                field: "elbyte",
                offset: 24,
                value: 3,
                ..
            })
        ));
        // Bit 2 on a float.
        let bytes = hdr(&[4, 3, 8, 8, 1, 1]);
        assert!(matches!(
            read_header(&bytes[..], &Limits::default(), true),
            Err(Error::InvalidField { field: "flags", .. })
        ));
    }

    #[test]
    fn big_endian_header_layout() {
        let mut v = MAGIC.to_be_bytes().to_vec();
        for f in [1u64, 1, 2, 4, 1, 2] {
            v.extend_from_slice(&f.to_be_bytes());
        }
        let p = read_header(&v[..], &Limits::default(), true).unwrap();
        assert_eq!(p.layout, Layout::BigEndianHeader);
        assert_eq!(p.header.dims, vec![2]);
        assert_eq!(p.header.data_byte_order(), ByteOrder::Big);
    }

    #[test]
    fn garbage_is_bad_magic() {
        let bytes = b"hello world, this is not an array file at all......".to_vec();
        assert!(matches!(
            read_header(&bytes[..], &Limits::default(), true),
            Err(Error::BadMagic { .. })
        ));
        // Zero bytes that do not form a plausible pre-magic header.
        let bytes = [0u8; 64];
        assert!(matches!(
            read_header(&bytes[..], &Limits::default(), true),
            Err(Error::BadMagic { .. })
        ));
        // Historical layouts disabled.
        let mut v = 0u64.to_le_bytes().to_vec();
        for f in [3u64, 8, 8, 1, 1] {
            v.extend_from_slice(&f.to_le_bytes());
        }
        assert_eq!(
            read_header(&v[..], &Limits::default(), true)
                .unwrap()
                .layout,
            Layout::PreMagic
        );
        assert!(matches!(
            read_header(&v[..], &Limits::default(), false),
            Err(Error::BadMagic { found }) if found == [0u8; 8]
        ));
    }
}
