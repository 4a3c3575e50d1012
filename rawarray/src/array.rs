//! [`RawArray`]: a file of any element type, held as decoded bytes.

use std::io::Read;

use crate::element::{read_pod_vec, Element};
use crate::error::{Error, Result};
use crate::header::{Header, Layout};
use crate::kind::{ByteOrder, ElementKind};
use crate::read::{read_with, Encoding, FileInfo, ReadOptions, Warning};

/// A RawArray of any element type, held as decoded bytes.
///
/// ```
/// use rawarray::{ElementKind, RawArray};
/// let a = RawArray::from_elements(&[1i16, 4, 2, 5, 3, 6], &[2, 3]).unwrap();
/// let bytes = a.to_bytes(&Default::default()).unwrap();
/// let b = RawArray::from_reader(&bytes[..], &Default::default()).unwrap();
/// assert_eq!(b.kind(), ElementKind::I16);
/// assert_eq!(b.dims(), [2, 3]);
/// assert_eq!(b.to_vec::<i16>().unwrap(), [1, 4, 2, 5, 3, 6]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawArray {
    pub(crate) info: FileInfo,
    /// Byte order of `data`.
    pub(crate) order: ByteOrder,
    /// Decoded element bytes, column-major.
    pub(crate) data: Vec<u8>,
}

impl RawArray {
    /// Reads a file from any reader (streaming; memory follows the bytes actually received).
    ///
    /// Flag bit 1 has two meanings in the wild. With [`CompressedMeaning::Auto`](crate::CompressedMeaning::Auto): for integer
    /// and Bool data whose `size` equals the decoded size, the data is tried strictly both as an
    /// LZ4 block and as LEB128 varints and whichever decodes is used; for other data whose `size`
    /// equals the decoded size, an LZ4 block is tried and otherwise the data is taken as plain
    /// (RawArray.jl's float bug, with a warning); otherwise it is an LZ4 block.
    pub fn from_reader<R: Read>(reader: R, opts: &ReadOptions) -> Result<RawArray> {
        Self::read_sized(reader, opts, None)
    }

    /// Reads a file of `len` bytes from `reader` (a network stream, a ranged remote reader):
    /// as [`from_reader`](Self::from_reader), with the data segment read in one call once the
    /// header has declared it (its size checked against `len` before anything is allocated).
    pub fn from_reader_with_len<R: Read>(
        reader: R,
        opts: &ReadOptions,
        len: u64,
    ) -> Result<RawArray> {
        Self::read_sized(reader, opts, Some(len))
    }

    /// Parses a complete file held in memory.
    pub fn from_slice(bytes: &[u8], opts: &ReadOptions) -> Result<RawArray> {
        Self::read_sized(bytes, opts, Some(bytes.len() as u64))
    }

    /// Reads the file at `path`.
    pub fn open<P: AsRef<std::path::Path>>(path: P, opts: &ReadOptions) -> Result<RawArray> {
        let f = std::fs::File::open(path)?;
        let len = f.metadata()?.len();
        Self::read_sized(
            std::io::BufReader::with_capacity(1 << 16, f),
            opts,
            Some(len),
        )
    }

    pub(crate) fn read_sized<R: Read>(
        reader: R,
        opts: &ReadOptions,
        total_len: Option<u64>,
    ) -> Result<RawArray> {
        let ((data, order), info) = read_with(
            reader,
            opts,
            total_len,
            |r, spec| {
                let n = spec.count.checked_mul(spec.kind.size() as usize).ok_or(
                    Error::SizeOverflow {
                        what: "the data segment",
                    },
                )?;
                Ok((
                    read_pod_vec::<u8, _>(r, n, spec.known_available, spec.offset)?,
                    spec.order,
                ))
            },
            |bytes, spec| Ok((bytes, spec.order)),
        )?;
        Ok(RawArray { info, order, data })
    }

    /// An array of `data` (column-major) with `dims` (first fastest).
    pub fn from_elements<T: Element>(data: &[T], dims: &[u64]) -> Result<RawArray> {
        let header = Header::new(T::KIND, dims)?;
        check_count(&header, data.len())?;
        let mut bytes = Vec::with_capacity(std::mem::size_of_val(data));
        T::write_slice(&mut bytes, data, ByteOrder::NATIVE)?;
        Ok(Self::from_parts(header, T::KIND, ByteOrder::NATIVE, bytes))
    }

    /// An eltype-0 array of plain records (see [`crate::Pod`]); `elbyte` = `size_of::<R>()`.
    pub fn from_records<R: crate::Pod>(records: &[R], dims: &[u64]) -> Result<RawArray> {
        let kind = ElementKind::User(std::mem::size_of::<R>() as u64);
        if std::mem::size_of::<R>() == 0 {
            return Err(Error::InvalidArgument("zero-sized record type".into()));
        }
        let header = Header::new(kind, dims)?;
        check_count(&header, records.len())?;
        let bytes = crate::element::bytes_of(records).to_vec();
        Ok(Self::from_parts(header, kind, ByteOrder::NATIVE, bytes))
    }

    /// An array from decoded element bytes of `kind` in `order` (column-major), e.g. for an
    /// ASDF conversion that keeps the bytes where they are.
    pub fn from_raw_bytes(
        kind: ElementKind,
        order: ByteOrder,
        dims: &[u64],
        bytes: Vec<u8>,
    ) -> Result<RawArray> {
        if kind.size() == 0 {
            return Err(Error::InvalidArgument("elbyte must be positive".into()));
        }
        let header = Header::new(kind, dims)?;
        if header.size != bytes.len() as u64 {
            return Err(Error::InvalidArgument(format!(
                "the dims call for {} bytes of data, {} were given",
                header.size,
                bytes.len()
            )));
        }
        Ok(Self::from_parts(header, kind, order, bytes))
    }

    fn from_parts(
        mut header: Header,
        kind: ElementKind,
        order: ByteOrder,
        data: Vec<u8>,
    ) -> RawArray {
        if order == ByteOrder::Big {
            header.flags |= crate::header::FLAG_BIG_ENDIAN;
        }
        RawArray {
            info: FileInfo {
                header_len: header.encoded_len(),
                header,
                layout: Layout::Standard,
                kind,
                encoding: Encoding::Raw,
                trailer: Vec::new(),
                warnings: Vec::new(),
            },
            order,
            data,
        }
    }

    /// Header, layout, encoding, trailer and warnings.
    pub fn info(&self) -> &FileInfo {
        &self.info
    }

    /// The header as read (or as it will be written, before encoding options).
    pub fn header(&self) -> &Header {
        &self.info.header
    }

    /// The element type of the decoded data.
    pub fn kind(&self) -> ElementKind {
        self.info.kind
    }

    /// Dimensions, first fastest.
    pub fn dims(&self) -> &[u64] {
        &self.info.header.dims
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len() / (self.info.kind.size().max(1) as usize)
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The decoded element bytes in column-major order, in [`RawArray::data_byte_order`].
    pub fn data_bytes(&self) -> &[u8] {
        &self.data
    }

    /// Byte order of [`RawArray::data_bytes`].
    pub fn data_byte_order(&self) -> ByteOrder {
        self.order
    }

    /// The trailing "volatile metadata" bytes.
    pub fn trailer(&self) -> &[u8] {
        &self.info.trailer
    }

    /// Replaces the trailing bytes written after the data.
    pub fn set_trailer(&mut self, trailer: Vec<u8>) {
        self.info.trailer = trailer;
    }

    /// Warnings found while reading.
    pub fn warnings(&self) -> &[Warning] {
        &self.info.warnings
    }

    /// The elements as `T` in column-major order (byte-swapped to native order if needed).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if !T::accepts(self.info.kind) {
            return Err(Error::TypeMismatch {
                requested: T::KIND,
                found: self.info.kind,
            });
        }
        T::from_bytes(&self.data, self.order, self.info.header_len)
    }

    /// User-type (eltype 0) elements as records of type `R` (copied, so any alignment works).
    ///
    /// The records are returned as stored; a file with the big-endian flag gives
    /// [`crate::ViewError::NonNativeEndian`] because only the caller knows the record's fields
    /// (use [`RawArray::data_bytes`] to swap them yourself).
    pub fn records<R: crate::Pod>(&self) -> Result<Vec<R>> {
        check_record::<R>(self.info.kind)?;
        if !self.order.is_native() {
            return Err(Error::View(crate::ViewError::NonNativeEndian));
        }
        let n = self.data.len() / std::mem::size_of::<R>();
        let mut v = crate::element::zeroed_vec::<R>(n)?;
        crate::element::bytes_of_mut(&mut v).copy_from_slice(&self.data);
        Ok(v)
    }
}

pub(crate) fn check_record<R>(kind: ElementKind) -> Result<()> {
    match kind {
        ElementKind::User(n) if n == std::mem::size_of::<R>() as u64 => Ok(()),
        ElementKind::User(n) => Err(Error::RecordSize {
            elbyte: n,
            record_size: std::mem::size_of::<R>(),
        }),
        other => Err(Error::TypeMismatch {
            requested: ElementKind::User(std::mem::size_of::<R>() as u64),
            found: other,
        }),
    }
}

pub(crate) fn check_count(header: &Header, len: usize) -> Result<()> {
    let n = header.element_count()?;
    if n != len as u64 {
        return Err(Error::InvalidArgument(format!(
            "dims {:?} hold {n} elements, the data has {len}",
            header.dims
        )));
    }
    Ok(())
}
