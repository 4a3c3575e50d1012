//! Reading: options, warnings, and the decoding of every data encoding.

use std::fmt;
use std::io::Read;

use crate::codec::{bits, leb128, lz4_max_decoded_len};
use crate::element::{read_pod_vec, Element};
use crate::error::{Error, Result};
use crate::header::{
    invalid, read_header, Header, Layout, Limits, ParsedHeader, FLAG_BITS, FLAG_COMPRESSED,
};
use crate::kind::{ByteOrder, ElementKind};

/// What flag bit 1 ("compressed") means for a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompressedMeaning {
    /// Tell the two meanings apart from the header and the data (see [`RawArray::from_reader`](crate::RawArray::from_reader)).
    #[default]
    Auto,
    /// The C library's raw LZ4 block (`size` = compressed bytes).
    Lz4Block,
    /// RawArray.jl's LEB128 varints (`size` = decoded bytes, the varints run on).
    Leb128,
}

/// Options for reading untrusted files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    /// Ceilings on `ndims` and on the decoded data size.
    pub limits: Limits,
    /// Accept the historical layouts (no magic; Matlab's rounded magic), with a warning.
    /// Default `true`.
    pub allow_historical: bool,
    /// How to interpret flag bit 1. Default [`CompressedMeaning::Auto`].
    pub compressed: CompressedMeaning,
    /// Most trailing bytes kept (default 64 MiB); more are left unread, with a warning.
    pub max_trailer_bytes: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            limits: Limits::default(),
            allow_historical: true,
            compressed: CompressedMeaning::Auto,
            max_trailer_bytes: 64 << 20,
        }
    }
}

/// How the data segment of a file was stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Plain element bytes.
    Raw,
    /// Flag bit 1, one raw LZ4 block (the C library, 2019).
    Lz4Block,
    /// Flag bit 1, LEB128/zigzag varints (RawArray.jl `compress=true` on integers).
    Leb128,
    /// Flag bit 2, a packed Julia `BitArray`.
    BitPacked,
    /// Flag bit 1 set over plain bytes: RawArray.jl 0.0.3–0.1.1 `compress=true` on floats.
    RawDespiteCompressedFlag,
}

/// Something unusual but readable about a file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// A historical header layout (no magic, or Matlab's rounded magic).
    HistoricalLayout(Layout),
    /// Flag bit 1 is set but the data is plain: written by RawArray.jl's `compress=true` on a
    /// non-integer array.
    CompressedFlagOnRawData,
    /// The data decodes both as an LZ4 block and as LEB128 varints; the LZ4 reading was used.
    AmbiguousCompression,
    /// The trailing bytes exceed [`ReadOptions::max_trailer_bytes`]; only that many were kept.
    TrailerTruncated {
        /// Bytes kept.
        kept: u64,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::HistoricalLayout(Layout::PreMagic) => {
                f.write_str("historical 2015-10-19 layout without magic number")
            }
            Warning::HistoricalLayout(Layout::MatlabRoundedMagic) => f.write_str(
                "historical Matlab magic 0x7961727261776000 (rawrite.m 2015-10 .. 2016-07)",
            ),
            Warning::HistoricalLayout(l) => write!(f, "historical layout {l:?}"),
            Warning::CompressedFlagOnRawData => f.write_str(
                "flag bit 1 set over uncompressed data (RawArray.jl compress=true on a non-integer array)",
            ),
            Warning::AmbiguousCompression => f.write_str(
                "data decodes both as an LZ4 block and as LEB128 varints; read as LZ4",
            ),
            Warning::TrailerTruncated { kept } => {
                write!(f, "trailing metadata longer than the limit; kept {kept} bytes")
            }
        }
    }
}

/// Everything about a file except its element data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// The header as stored.
    pub header: Header,
    /// Header layout.
    pub layout: Layout,
    /// Byte length of the header.
    pub header_len: u64,
    /// The element type of the decoded data (a packed BitArray decodes to [`ElementKind::Bool`]).
    pub kind: ElementKind,
    /// How the data was stored.
    pub encoding: Encoding,
    /// Bytes after the data ("volatile metadata"), possibly empty.
    pub trailer: Vec<u8>,
    /// Unusual but readable features found.
    pub warnings: Vec<Warning>,
}

impl FileInfo {
    /// The dims as stored (first fastest).
    pub fn dims(&self) -> &[u64] {
        &self.header.dims
    }
}

/// What the plain-data callback needs to read elements directly.
pub(crate) struct PlainSpec {
    pub(crate) kind: ElementKind,
    pub(crate) count: usize,
    pub(crate) order: ByteOrder,
    pub(crate) known_available: bool,
    pub(crate) offset: u64,
}

fn to_usize(v: u64, what: &'static str) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::SizeOverflow { what })
}

/// Reads at most `cap` bytes to EOF; returns the bytes and whether more input remains.
fn read_rest<R: Read>(r: &mut R, cap: u64, hint: Option<u64>) -> Result<(Vec<u8>, bool)> {
    let mut out = Vec::new();
    if let Some(h) = hint {
        out.reserve(to_usize(h.min(cap), "the trailing bytes")?);
    }
    r.by_ref().take(cap).read_to_end(&mut out)?;
    let mut probe = [0u8; 1];
    let more = out.len() as u64 == cap
        && loop {
            match r.read(&mut probe) {
                Ok(n) => break n > 0,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        };
    Ok((out, more))
}

fn lz4_decode(input: &[u8], decoded_len: usize, offset: u64) -> Result<Vec<u8>> {
    let mut out = crate::element::zeroed_vec::<u8>(decoded_len)?;
    match array_codecs::lz4::decode_block_into(input, &mut out) {
        Ok(n) if n == decoded_len => Ok(out),
        Ok(n) => Err(Error::CorruptData {
            encoding: "LZ4 block",
            offset,
            reason: format!("the block decodes to {n} bytes, the dims call for {decoded_len}"),
        }),
        Err(e) => Err(Error::CorruptData {
            encoding: "LZ4 block",
            offset,
            reason: e.to_string(),
        }),
    }
}

/// The core reader: header, data in any encoding, trailer.
///
/// `plain` reads uncompressed elements straight from the stream (so typed reads need no extra
/// copy); `decoded` receives the decoded bytes of the other encodings in `spec.order`.
pub(crate) fn read_with<R: Read, D>(
    reader: R,
    opts: &ReadOptions,
    total_len: Option<u64>,
    plain: impl FnOnce(&mut R, &PlainSpec) -> Result<D>,
    decoded: impl FnOnce(Vec<u8>, &PlainSpec) -> Result<D>,
) -> Result<(D, FileInfo)> {
    let mut r = reader;
    let ParsedHeader {
        header: h,
        layout,
        header_len,
    } = read_header(&mut r, &opts.limits, opts.allow_historical)?;
    let mut warnings = Vec::new();
    if layout.is_historical() {
        warnings.push(Warning::HistoricalLayout(layout));
    }
    let seg = Segment::new(&h, layout, header_len, total_len)?;
    let mut spec = PlainSpec {
        kind: seg.kind,
        count: seg.count,
        order: h.data_byte_order(),
        known_available: seg.remaining.is_some(),
        offset: header_len,
    };
    let (data, encoding, trailer) = if h.flags & (FLAG_BITS | FLAG_COMPRESSED) == 0 {
        seg.check_plain()?;
        (plain(&mut r, &spec)?, Encoding::Raw, None)
    } else {
        let d = if h.flags & FLAG_BITS != 0 {
            seg.bit_packed(&mut r)?
        } else {
            seg.compressed(&mut r, opts, &mut warnings)?
        };
        if d.little_endian {
            spec.order = ByteOrder::Little;
        }
        (decoded(d.bytes, &spec)?, d.encoding, d.trailer)
    };
    let trailer = match trailer {
        Some(t) => t,
        None => seg.read_trailer(&mut r, opts, &mut warnings)?,
    };
    let kind = seg.kind;
    Ok((
        data,
        FileInfo {
            header: h,
            layout,
            header_len,
            kind,
            encoding,
            trailer,
            warnings,
        },
    ))
}

/// A data segment decoded to element bytes (every encoding but plain data).
struct Decoded {
    bytes: Vec<u8>,
    encoding: Encoding,
    /// The bytes after the data, when the decoder had to read them (varints run on to the end).
    trailer: Option<Vec<u8>>,
    /// The decoded bytes are little-endian whatever the header says (bit-packed data, varints).
    little_endian: bool,
}

impl Decoded {
    /// Bytes in the file's byte order, the trailer still to read.
    fn new(bytes: Vec<u8>, encoding: Encoding) -> Decoded {
        Decoded {
            bytes,
            encoding,
            trailer: None,
            little_endian: false,
        }
    }
}

/// Bytes read to the end of the input (up to a cap) by a decoder that cannot know where its data
/// ends; what it does not use is the trailer.
struct Rest {
    bytes: Vec<u8>,
    /// The cap was reached with input left over.
    more: bool,
}

impl Rest {
    /// Reads at most `cap` bytes to the end of the input (`hint`: how many there are, if known).
    fn read<R: Read>(r: &mut R, cap: u64, hint: Option<u64>) -> Result<Rest> {
        let (bytes, more) = read_rest(r, cap, hint)?;
        Ok(Rest { bytes, more })
    }

    /// The bytes after the first `used` (the trailer), with a warning when the cap cut it short.
    fn trailer_after(self, used: usize, warnings: &mut Vec<Warning>) -> Vec<u8> {
        if self.more {
            warnings.push(Warning::TrailerTruncated {
                kept: (self.bytes.len() - used) as u64,
            });
        }
        let mut bytes = self.bytes;
        bytes.drain(..used);
        bytes
    }
}

/// The data segment as the header describes it: what every decoder needs.
struct Segment<'h> {
    h: &'h Header,
    kind: ElementKind,
    count: usize,
    /// Bytes of the decoded elements.
    decoded_u64: u64,
    decoded_len: usize,
    /// Offset of the header's `size` field, for errors (the pre-magic layout has no magic in
    /// front).
    size_at: u64,
    /// Where the data starts.
    header_len: u64,
    /// Bytes after the header, when the input's length is known.
    remaining: Option<u64>,
}

impl<'h> Segment<'h> {
    fn new(h: &'h Header, layout: Layout, header_len: u64, total_len: Option<u64>) -> Result<Self> {
        let decoded_u64 = h.decoded_len()?;
        Ok(Segment {
            h,
            kind: h.kind()?,
            count: to_usize(h.element_count()?, "the element count")?,
            decoded_u64,
            decoded_len: to_usize(decoded_u64, "the decoded data")?,
            size_at: if layout == Layout::PreMagic { 24 } else { 32 },
            header_len,
            remaining: total_len.map(|t| t.saturating_sub(header_len)),
        })
    }

    /// An error about the header's `size` field.
    fn bad_size(&self, reason: String) -> Error {
        invalid("size", self.size_at, self.h.size, reason)
    }

    /// Fails when the input is known to hold fewer than `need` bytes after the header.
    fn check_available(&self, need: u64) -> Result<()> {
        match self.remaining {
            Some(have) if have < need => Err(Error::TruncatedData {
                offset: self.header_len,
                expected: need,
                available: have,
            }),
            _ => Ok(()),
        }
    }

    /// The next `n` bytes of data.
    fn read_bytes<R: Read>(&self, r: &mut R, n: u64) -> Result<Vec<u8>> {
        self.check_available(n)?;
        read_pod_vec::<u8, _>(
            r,
            to_usize(n, "the data segment")?,
            self.remaining.is_some(),
            self.header_len,
        )
    }

    /// Plain data: `size` must be the decoded size, and the input must hold it.
    fn check_plain(&self) -> Result<()> {
        if self.h.size != self.decoded_u64 {
            return Err(self.bad_size(format!(
                "uncompressed data must be the product of the dims times elbyte = {} bytes",
                self.decoded_u64
            )));
        }
        self.check_available(self.h.size)
    }

    /// Flag bit 2: a packed Julia `BitArray`, unpacked to one byte per element.
    fn bit_packed<R: Read>(&self, r: &mut R) -> Result<Decoded> {
        let expected = bits::chunk_count(self.count as u64) * 8;
        if self.h.size != expected {
            return Err(self.bad_size(format!(
                "a packed BitArray of {} elements has {expected} bytes of chunks",
                self.count
            )));
        }
        let chunks = self.read_bytes(r, self.h.size)?;
        let order = self.h.data_byte_order();
        Ok(Decoded {
            bytes: bits::unpack(&chunks, self.count, order, self.header_len)?,
            encoding: Encoding::BitPacked,
            trailer: None,
            little_endian: true,
        })
    }

    /// Flag bit 1, read with the meaning `opts` give it (or told from the header and data).
    fn compressed<R: Read>(
        &self,
        r: &mut R,
        opts: &ReadOptions,
        warnings: &mut Vec<Warning>,
    ) -> Result<Decoded> {
        let integer_like = self.kind.is_integer_like();
        let same_size = self.h.size == self.decoded_u64;
        match opts.compressed {
            CompressedMeaning::Leb128 if !integer_like => Err(invalid(
                "flags",
                8,
                self.h.flags,
                format!(
                    "LEB128 encoding applies to integer and Bool data, not {}",
                    self.kind
                ),
            )),
            CompressedMeaning::Leb128 => self.leb128(r, opts, warnings),
            CompressedMeaning::Auto if integer_like && same_size => {
                self.lz4_or_leb128(r, opts, warnings)
            }
            CompressedMeaning::Auto if same_size => self.lz4_or_raw(r, warnings),
            CompressedMeaning::Lz4Block | CompressedMeaning::Auto => self.lz4(r),
        }
    }

    /// The C library's raw LZ4 block of `size` bytes.
    fn lz4<R: Read>(&self, r: &mut R) -> Result<Decoded> {
        if self.decoded_u64 > lz4_max_decoded_len(self.h.size) {
            return Err(self.bad_size(format!(
                "an LZ4 block of {} bytes cannot decode to the {} bytes the dims call for",
                self.h.size, self.decoded_u64
            )));
        }
        let input = self.read_bytes(r, self.h.size)?;
        let bytes = lz4_decode(&input, self.decoded_len, self.header_len)?;
        Ok(Decoded::new(bytes, Encoding::Lz4Block))
    }

    /// The varints and whatever follows them: as many bytes as the varints can take, plus the
    /// trailer's cap.
    fn read_varints<R: Read>(&self, r: &mut R, opts: &ReadOptions) -> Result<Rest> {
        let groups = (8 * self.h.elbyte).div_ceil(7);
        let cap = (self.count as u64)
            .saturating_mul(groups)
            .saturating_add(opts.max_trailer_bytes);
        Rest::read(r, cap, self.remaining)
    }

    /// Decodes RawArray.jl's LEB128/zigzag varints at the start of `input`; returns the
    /// little-endian elements and the bytes the varints took.
    fn decode_varints(&self, input: &[u8]) -> Result<(Vec<u8>, usize)> {
        leb128::decode(
            input,
            self.count,
            to_usize(self.kind.size(), "elbyte")?,
            self.kind.is_signed_int(),
            self.kind == ElementKind::Bool,
            self.header_len,
        )
    }

    /// RawArray.jl's varints (`size` = decoded bytes; the varints run on).
    fn leb128<R: Read>(
        &self,
        r: &mut R,
        opts: &ReadOptions,
        warnings: &mut Vec<Warning>,
    ) -> Result<Decoded> {
        let rest = self.read_varints(r, opts)?;
        let (bytes, used) = self.decode_varints(&rest.bytes)?;
        Ok(Decoded {
            bytes,
            encoding: Encoding::Leb128,
            trailer: Some(rest.trailer_after(used, warnings)),
            little_endian: true,
        })
    }

    /// Integer data whose header fits both meanings: decided from the data. Both decoders are
    /// strict (an LZ4 block must consume exactly `size` bytes and inflate to exactly the decoded
    /// length; varints must be canonical and in range); when both succeed, LZ4 wins, with a
    /// warning.
    fn lz4_or_leb128<R: Read>(
        &self,
        r: &mut R,
        opts: &ReadOptions,
        warnings: &mut Vec<Warning>,
    ) -> Result<Decoded> {
        let rest = self.read_varints(r, opts)?;
        let n = self.decoded_len;
        let lz4 = if (rest.bytes.len() as u64) >= self.h.size {
            lz4_decode(&rest.bytes[..n], n, self.header_len).ok()
        } else {
            None
        };
        let (bytes, encoding, used) = match (lz4, self.decode_varints(&rest.bytes)) {
            (Some(out), Ok(_)) => {
                warnings.push(Warning::AmbiguousCompression);
                (out, Encoding::Lz4Block, n)
            }
            (Some(out), Err(_)) => (out, Encoding::Lz4Block, n),
            (None, Ok((out, used))) => (out, Encoding::Leb128, used),
            (None, Err(e)) => {
                return Err(Error::CorruptData {
                    encoding: "LEB128",
                    offset: self.header_len,
                    reason: format!(
                        "flag bit 1 is set, but the data is neither an LZ4 block inflating to {n} bytes nor valid LEB128 varints ({e})"
                    ),
                })
            }
        };
        Ok(Decoded {
            bytes,
            encoding,
            trailer: Some(rest.trailer_after(used, warnings)),
            little_endian: encoding == Encoding::Leb128,
        })
    }

    /// Non-integer data whose size equals the decoded size: an LZ4 block that happens not to
    /// shrink, or RawArray.jl's float `compress=true` bug (plain bytes, with a warning).
    fn lz4_or_raw<R: Read>(&self, r: &mut R, warnings: &mut Vec<Warning>) -> Result<Decoded> {
        let input = self.read_bytes(r, self.h.size)?;
        match lz4_decode(&input, self.decoded_len, self.header_len) {
            Ok(bytes) => Ok(Decoded::new(bytes, Encoding::Lz4Block)),
            Err(_) => {
                warnings.push(Warning::CompressedFlagOnRawData);
                Ok(Decoded::new(input, Encoding::RawDespiteCompressedFlag))
            }
        }
    }

    /// The bytes after the data (up to the trailer's cap, with a warning when there is more).
    fn read_trailer<R: Read>(
        &self,
        r: &mut R,
        opts: &ReadOptions,
        warnings: &mut Vec<Warning>,
    ) -> Result<Vec<u8>> {
        let hint = self.remaining.map(|x| x.saturating_sub(self.h.size));
        Ok(Rest::read(r, opts.max_trailer_bytes, hint)?.trailer_after(0, warnings))
    }
}

/// Reads a whole file from `reader` as elements of type `T` (in column-major order).
///
/// Plain data is read straight into the returned vector (no intermediate copy); compressed,
/// varint and bit-packed data is decoded first. The element type must match the file
/// ([`Error::TypeMismatch`] otherwise).
///
/// ```
/// let bytes = rawarray::to_bytes(&[1.5f64, 2.5, 3.5], &[3], &Default::default()).unwrap();
/// let (v, info) = rawarray::read_vec::<f64, _>(&bytes[..], &Default::default()).unwrap();
/// assert_eq!(v, [1.5, 2.5, 3.5]);
/// assert_eq!(info.dims(), [3]);
/// ```
pub fn read_vec<T: Element, R: Read>(reader: R, opts: &ReadOptions) -> Result<(Vec<T>, FileInfo)> {
    read_vec_sized(reader, opts, None)
}

pub(crate) fn read_vec_sized<T: Element, R: Read>(
    reader: R,
    opts: &ReadOptions,
    total_len: Option<u64>,
) -> Result<(Vec<T>, FileInfo)> {
    let check = |spec: &PlainSpec| -> Result<()> {
        if T::accepts(spec.kind) {
            Ok(())
        } else {
            Err(Error::TypeMismatch {
                requested: T::KIND,
                found: spec.kind,
            })
        }
    };
    read_with(
        reader,
        opts,
        total_len,
        |r, spec| {
            check(spec)?;
            T::read_vec(r, spec.count, spec.order, spec.known_available, spec.offset)
        },
        |bytes, spec| {
            check(spec)?;
            T::from_bytes(&bytes, spec.order, spec.offset)
        },
    )
}
