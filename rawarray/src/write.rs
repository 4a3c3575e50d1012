//! Writing: options, encodings, and crash-safe file replacement.

use std::io::Write;
use std::path::Path;

use crate::array::{check_count, RawArray};
use crate::codec::{bits, leb128, LZ4_MAX_INPUT_SIZE};
use crate::element::{swap_bytes, Element};
use crate::error::{Error, Result};
use crate::header::{Header, FLAG_BIG_ENDIAN, FLAG_BITS, FLAG_COMPRESSED};
use crate::kind::{ByteOrder, ElementKind, ELTYPE_USER};

/// How to store the data segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteEncoding {
    /// Plain element bytes (every reader understands this).
    #[default]
    Raw,
    /// Flag bit 1 with one raw LZ4 block, as the C library's `ra compress` writes.
    Lz4Block,
    /// Flag bit 1 with LEB128/zigzag varints, as RawArray.jl's `compress=true` writes
    /// (integers and Bool only).
    Leb128,
    /// Flags 6 with a packed Julia `BitArray` (Bool only).
    BitPacked,
}

/// Which `eltype` a Bool array is written with: the two ecosystems disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoolEltype {
    /// eltype 5, elbyte 1: RawArray.jl's `Bool` (the format's definitive implementation).
    #[default]
    Julia,
    /// eltype 0, elbyte 1: what Python's `ra.py` writes for a NumPy bool array.
    User,
}

/// Options for writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteOptions {
    /// Byte order of the data (flag bit 0). `None` keeps the data's current order (native for
    /// Rust slices and arrays). The header is always little-endian.
    pub byte_order: Option<ByteOrder>,
    /// Data encoding.
    pub encoding: WriteEncoding,
    /// eltype for Bool data.
    pub bool_eltype: BoolEltype,
    /// Whether a saved file waits for the disk (synced by default; relaxed leaves a new file's
    /// bytes to the kernel, a replaced file is synced either way).
    pub durability: array_core::Durability,
}

impl WriteOptions {
    /// Plain data in the given byte order.
    pub fn with_byte_order(order: ByteOrder) -> Self {
        WriteOptions {
            byte_order: Some(order),
            ..Self::default()
        }
    }

    /// Plain byte order, with the given encoding.
    pub fn with_encoding(encoding: WriteEncoding) -> Self {
        WriteOptions {
            encoding,
            ..Self::default()
        }
    }
}

/// Writes the plain element bytes, column-major, in the requested byte order.
pub(crate) type ElementSink<'a> = dyn FnMut(&mut dyn Write, ByteOrder) -> std::io::Result<()> + 'a;

/// The writer behind every public write function.
pub(crate) fn write_core<W: Write>(
    mut w: W,
    kind: ElementKind,
    dims: &[u64],
    current_order: ByteOrder,
    opts: &WriteOptions,
    trailer: &[u8],
    elements: &mut ElementSink<'_>,
) -> Result<()> {
    let order = opts.byte_order.unwrap_or(current_order);
    if matches!(kind, ElementKind::User(_)) && order != current_order {
        return Err(Error::InvalidArgument(
            "cannot change the byte order of user records: only the caller knows their fields"
                .into(),
        ));
    }
    let mut header = Header::new(kind, dims)?;
    if kind == ElementKind::Bool && opts.bool_eltype == BoolEltype::User {
        header.eltype = ELTYPE_USER;
    }
    if order == ByteOrder::Big {
        header.flags |= FLAG_BIG_ENDIAN;
    }
    let raw_len = header.size;
    match opts.encoding {
        WriteEncoding::Raw => {
            header.write_to(&mut w)?;
            let mut counter = array_core::CountingWriter::new(&mut w);
            elements(&mut counter, order)?;
            if counter.written() != raw_len {
                return Err(Error::InvalidArgument(format!(
                    "the data has {} bytes, the dims call for {raw_len}",
                    counter.written()
                )));
            }
        }
        encoding => {
            let body = encode_body(&mut header, encoding, kind, order, elements, raw_len)?;
            header.write_to(&mut w)?;
            w.write_all(&body)?;
        }
    }
    w.write_all(trailer)?;
    w.flush()?;
    Ok(())
}

/// The data of a compressed encoding (LZ4 block, LEB128 varints, bit-packed bools), with
/// `header`'s flags, size and element fields set to describe it.
fn encode_body(
    header: &mut Header,
    encoding: WriteEncoding,
    kind: ElementKind,
    order: ByteOrder,
    elements: &mut ElementSink<'_>,
    raw_len: u64,
) -> Result<Vec<u8>> {
    let body = match encoding {
        WriteEncoding::Raw => collect(elements, order, raw_len)?,
        WriteEncoding::Lz4Block => {
            if raw_len > LZ4_MAX_INPUT_SIZE {
                return Err(Error::InvalidArgument(format!(
                    "LZ4 blocks hold at most {LZ4_MAX_INPUT_SIZE} bytes (the C library's limit); the data has {raw_len}"
                )));
            }
            let block = array_codecs::lz4::encode_block(&collect(elements, order, raw_len)?);
            header.size = block.len() as u64;
            block
        }
        WriteEncoding::Leb128 => {
            if !kind.is_integer_like() {
                return Err(Error::InvalidArgument(format!(
                    "LEB128 encoding applies to integers and Bool, not {kind}"
                )));
            }
            if order == ByteOrder::Big && kind.size() > 1 {
                return Err(Error::InvalidArgument(
                    "LEB128 varints have no byte order; write them without a big-endian request"
                        .into(),
                ));
            }
            header.flags &= !FLAG_BIG_ENDIAN;
            let buf = collect(elements, ByteOrder::Little, raw_len)?;
            leb128::encode(&buf, kind.size() as usize, kind.is_signed_int())
        }
        WriteEncoding::BitPacked => {
            if kind != ElementKind::Bool {
                return Err(Error::InvalidArgument(format!(
                    "bit packing applies to Bool, not {kind}"
                )));
            }
            let buf = collect(elements, ByteOrder::Little, raw_len)?;
            let packed = bits::pack(&buf, order);
            header.eltype = ElementKind::Bool.eltype();
            header.elbyte = 8;
            header.flags |= FLAG_BITS;
            header.size = packed.len() as u64;
            packed
        }
    };
    if encoding != WriteEncoding::Raw {
        header.flags |= FLAG_COMPRESSED;
    }
    Ok(body)
}

fn collect(elements: &mut ElementSink<'_>, order: ByteOrder, raw_len: u64) -> Result<Vec<u8>> {
    let cap = usize::try_from(raw_len).map_err(|_| Error::SizeOverflow { what: "the data" })?;
    let mut buf = Vec::with_capacity(cap);
    elements(&mut buf, order)?;
    if buf.len() as u64 != raw_len {
        return Err(Error::InvalidArgument(format!(
            "the data has {} bytes, the dims call for {raw_len}",
            buf.len()
        )));
    }
    Ok(buf)
}

/// Writes a column-major slice with `dims` (first fastest) to `w`.
///
/// Plain data in native order goes out without any copy.
///
/// ```
/// let mut out = Vec::new();
/// rawarray::write_slice(&mut out, &[1u8, 2, 3, 4], &[2, 2], &Default::default()).unwrap();
/// assert_eq!(out.len(), 48 + 16 + 4);
/// assert_eq!(&out[..8], b"rawarray");
/// ```
pub fn write_slice<T: Element, W: Write>(
    w: W,
    data: &[T],
    dims: &[u64],
    opts: &WriteOptions,
) -> Result<()> {
    let header = Header::new(T::KIND, dims)?;
    check_count(&header, data.len())?;
    write_core(
        w,
        T::KIND,
        dims,
        ByteOrder::NATIVE,
        opts,
        &[],
        &mut |w: &mut dyn Write, order| T::write_slice(&mut &mut *w, data, order),
    )
}

/// A complete file in memory.
///
/// ```
/// let opts = rawarray::WriteOptions::with_encoding(rawarray::WriteEncoding::Leb128);
/// let bytes = rawarray::to_bytes(&[0i16, -1, 1, -64, 64, -300], &[3, 2], &opts).unwrap();
/// assert_eq!(&bytes[64..], [0x00, 0x01, 0x02, 0x7f, 0x80, 0x01, 0xd7, 0x04]);
/// ```
pub fn to_bytes<T: Element>(data: &[T], dims: &[u64], opts: &WriteOptions) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write_slice(&mut out, data, dims, opts)?;
    Ok(out)
}

/// Writes a column-major slice to `path`, atomically (see [`write_file_atomic`]).
pub fn save<T: Element, P: AsRef<Path>>(
    path: P,
    data: &[T],
    dims: &[u64],
    opts: &WriteOptions,
) -> Result<()> {
    save_atomic(path.as_ref(), opts, |w| write_slice(w, data, dims, opts))
}

impl RawArray {
    /// Writes the array (and its trailer) to `w`.
    pub fn write_to<W: Write>(&self, w: W, opts: &WriteOptions) -> Result<()> {
        let kind = self.info.kind;
        let unit = kind.swap_unit().unwrap_or(1) as usize;
        let current = self.order;
        let data = &self.data;
        write_core(
            w,
            kind,
            self.dims(),
            current,
            opts,
            &self.info.trailer,
            &mut |w: &mut dyn Write, order| {
                if order == current || unit == 1 {
                    return w.write_all(data);
                }
                let mut buf = vec![0u8; (1 << 16).min(data.len())];
                for chunk in data.chunks(buf.len().max(unit)) {
                    let out = &mut buf[..chunk.len()];
                    out.copy_from_slice(chunk);
                    swap_bytes(out, unit);
                    w.write_all(out)?;
                }
                Ok(())
            },
        )
    }

    /// The complete file in memory.
    pub fn to_bytes(&self, opts: &WriteOptions) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_to(&mut out, opts)?;
        Ok(out)
    }

    /// Writes the file to `path` atomically (see [`write_file_atomic`]).
    pub fn save<P: AsRef<Path>>(&self, path: P, opts: &WriteOptions) -> Result<()> {
        save_atomic(path.as_ref(), opts, |w| self.write_to(w, opts))
    }
}

/// Replaces `path` without ever leaving it half-written: the content goes to a new temporary
/// file in the same directory, which is flushed, `fsync`ed and then renamed over `path` (and the
/// directory is synced). On error the temporary file is removed and `path` is untouched. This is
/// the workspace's one crash-safe writer, [`array_core::AtomicFile`].
pub fn write_file_atomic<F>(path: &Path, write: F) -> Result<()>
where
    F: FnOnce(&mut array_core::AtomicWriter) -> Result<()>,
{
    array_core::AtomicFile::write_with(path, write)
}

/// [`write_file_atomic`], waiting for the disk as `opts.durability` says.
pub(crate) fn save_atomic<F>(path: &Path, opts: &WriteOptions, write: F) -> Result<()>
where
    F: FnOnce(&mut array_core::AtomicWriter) -> Result<()>,
{
    array_core::AtomicFile::write_with_durability(path, opts.durability, write)
}
