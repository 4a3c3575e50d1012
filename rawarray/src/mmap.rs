//! Memory-mapped files with zero-copy element access.

use std::path::Path;

use crate::array::{check_record, RawArray};
use crate::element::{cast_slice, Element, Pod};
use crate::error::{Error, Result};
use crate::header::Header;
use crate::kind::ElementKind;
use crate::read::ReadOptions;
use crate::view::{locate, DataLocation};

/// A RawArray file mapped into memory.
///
/// Plain (uncompressed) data can be viewed in place; [`MappedRawArray::decode`] handles every
/// encoding by copying.
///
/// ```no_run
/// let m = rawarray::MappedRawArray::open("image.ra").unwrap();
/// let v = m.view::<f64>().unwrap(); // ArrayViewD over the map, shape = dims, Fortran layout
/// println!("{:?} {}", v.shape(), v.sum());
/// ```
pub struct MappedRawArray {
    map: memmap2::Mmap,
    /// Where the plain data lies; `None` for encoded data (which must be decoded).
    loc: Option<DataLocation>,
    header_only: crate::header::ParsedHeader,
    opts: ReadOptions,
}

impl MappedRawArray {
    /// Maps the file at `path` with default [`ReadOptions`].
    pub fn open<P: AsRef<Path>>(path: P) -> Result<MappedRawArray> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Maps the file at `path`, parsing its header with `opts`.
    pub fn open_with<P: AsRef<Path>>(path: P, opts: &ReadOptions) -> Result<MappedRawArray> {
        let file = std::fs::File::open(path)?;
        // SAFETY: the map is read-only and private to this value. Modifying or truncating the
        // file while it is mapped (by another process) is undefined behaviour and can raise
        // SIGBUS; this is the documented contract of every memory-mapped reader, and callers
        // who cannot rule it out should use the copying `RawArray::open` instead.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        let header_only =
            crate::header::read_header(&map[..], &opts.limits, opts.allow_historical)?;
        header_only.header.kind()?;
        let loc = match locate(&map, opts) {
            Ok(l) => Some(l),
            Err(Error::View(_)) => None,
            Err(e) => return Err(e),
        };
        Ok(MappedRawArray {
            map,
            loc,
            header_only,
            opts: opts.clone(),
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header_only.header
    }

    /// Dimensions, first fastest.
    pub fn dims(&self) -> &[u64] {
        &self.header_only.header.dims
    }

    /// The element type of the data.
    pub fn kind(&self) -> Result<ElementKind> {
        self.header_only.header.kind()
    }

    /// The whole mapped file.
    pub fn as_bytes(&self) -> &[u8] {
        &self.map
    }

    fn location(&self) -> Result<&DataLocation> {
        match &self.loc {
            Some(l) => Ok(l),
            // Say why the data cannot be accessed in place (a `ViewError`).
            None => Err(locate(&self.map, &self.opts)
                .err()
                .unwrap_or(Error::View(crate::ViewError::Encoded("an unknown")))),
        }
    }

    /// The plain data bytes (errors for encoded data).
    pub fn data_bytes(&self) -> Result<&[u8]> {
        let loc = self.location()?;
        Ok(&self.map[loc.data.clone()])
    }

    /// The trailing bytes after plain data (errors for encoded data: use [`Self::decode`]).
    pub fn trailer(&self) -> Result<&[u8]> {
        let loc = self.location()?;
        Ok(&self.map[loc.data.end..])
    }

    /// The elements as a column-major slice over the map, without copying.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        Ok(crate::view::view_slice_with::<T>(&self.map, &self.opts)?.0)
    }

    /// User-type (eltype 0) records over the map, without copying.
    pub fn records<R: Pod>(&self) -> Result<&[R]> {
        let loc = self.location()?;
        check_record::<R>(loc.kind)?;
        if !loc.parsed.header.data_byte_order().is_native() {
            return Err(crate::ViewError::NonNativeEndian.into());
        }
        Ok(cast_slice::<R>(
            &self.map[loc.data.clone()],
            loc.data.start as u64,
        )?)
    }

    /// A zero-copy `ArrayViewD` of shape `dims` (Fortran layout) over the map.
    #[cfg(feature = "ndarray")]
    pub fn view<T: Element>(&self) -> Result<ndarray::ArrayViewD<'_, T>> {
        crate::nd::view_array_with::<T>(&self.map, &self.opts)
    }

    /// Decodes the file (any encoding) into an owned [`RawArray`].
    pub fn decode(&self) -> Result<RawArray> {
        RawArray::from_slice(&self.map, &self.opts)
    }
}
