//! Zero-copy access to the data of a complete file held in memory (e.g. a memory map).

use std::ops::Range;

use crate::array::check_record;
use crate::element::{cast_slice, Element, Pod};
use crate::error::{Error, Result, ViewError};
use crate::header::{invalid, read_header, Layout, ParsedHeader, FLAG_BITS, FLAG_COMPRESSED};
use crate::kind::ElementKind;
use crate::read::ReadOptions;

/// Where the plain data of an in-memory file lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataLocation {
    /// The parsed header.
    pub parsed: ParsedHeader,
    /// Element type.
    pub kind: ElementKind,
    /// Byte range of the data within the buffer.
    pub data: Range<usize>,
}

/// Parses the header of `bytes` and locates its plain data.
///
/// Compressed, varint or bit-packed data cannot be viewed ([`ViewError::Encoded`]); use the
/// copying read ([`crate::RawArray::from_slice`]) for those.
pub fn locate(bytes: &[u8], opts: &ReadOptions) -> Result<DataLocation> {
    let parsed = read_header(bytes, &opts.limits, opts.allow_historical)?;
    let h = &parsed.header;
    let kind = h.kind()?;
    if h.flags & FLAG_BITS != 0 {
        return Err(ViewError::Encoded("bit-packed (Julia BitArray)").into());
    }
    if h.flags & FLAG_COMPRESSED != 0 {
        return Err(ViewError::Encoded("compressed (LZ4 block or LEB128 varints)").into());
    }
    let decoded = h.decoded_len()?;
    if h.size != decoded {
        let size_at = if parsed.layout == Layout::PreMagic {
            24
        } else {
            32
        };
        return Err(invalid(
            "size",
            size_at,
            h.size,
            format!(
                "uncompressed data must be the product of the dims times elbyte = {decoded} bytes"
            ),
        ));
    }
    let start = parsed.header_len;
    let available = (bytes.len() as u64).saturating_sub(start);
    if available < h.size {
        return Err(Error::TruncatedData {
            offset: start,
            expected: h.size,
            available,
        });
    }
    // Both fit in the buffer length, so in usize.
    let data = start as usize..(start + h.size) as usize;
    Ok(DataLocation { parsed, kind, data })
}

/// The elements of an in-memory file as a column-major slice of `T`, without copying.
///
/// Fails with [`ViewError::Misaligned`] or [`ViewError::NonNativeEndian`] when the data cannot
/// be reinterpreted in place; [`crate::read_vec`] always works.
///
/// ```
/// let bytes = rawarray::to_bytes(&[1u8, 2, 3], &[3], &Default::default()).unwrap();
/// let (s, loc) = rawarray::view_slice::<u8>(&bytes).unwrap();
/// assert_eq!(s, [1, 2, 3]);
/// assert_eq!(loc.data, 56..59);
/// ```
pub fn view_slice<T: Element>(bytes: &[u8]) -> Result<(&[T], DataLocation)> {
    view_slice_with(bytes, &ReadOptions::default())
}

pub(crate) fn view_slice_with<'a, T: Element>(
    bytes: &'a [u8],
    opts: &ReadOptions,
) -> Result<(&'a [T], DataLocation)> {
    let loc = locate(bytes, opts)?;
    if !T::accepts(loc.kind) {
        return Err(Error::TypeMismatch {
            requested: T::KIND,
            found: loc.kind,
        });
    }
    let s = T::view_slice(
        &bytes[loc.data.clone()],
        loc.parsed.header.data_byte_order(),
        loc.data.start as u64,
    )?;
    Ok((s, loc))
}

/// The user-type (eltype 0) records of an in-memory file, without copying.
pub fn view_records<R: Pod>(bytes: &[u8]) -> Result<(&[R], DataLocation)> {
    let loc = locate(bytes, &ReadOptions::default())?;
    check_record::<R>(loc.kind)?;
    if !loc.parsed.header.data_byte_order().is_native() {
        return Err(ViewError::NonNativeEndian.into());
    }
    let s = cast_slice::<R>(&bytes[loc.data.clone()], loc.data.start as u64)?;
    Ok((s, loc))
}
