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
    match lz4_flex::block::decompress_into(input, &mut out) {
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
    // Offset of the `size` field (the pre-magic layout has no magic in front).
    let size_at = if layout == Layout::PreMagic { 24 } else { 32 };
    let kind = h.kind()?;
    let count = to_usize(h.element_count()?, "the element count")?;
    let decoded_u64 = h.decoded_len()?;
    let decoded_len = to_usize(decoded_u64, "the decoded data")?;
    let remaining = total_len.map(|t| t.saturating_sub(header_len));
    let order = h.data_byte_order();
    let mut spec = PlainSpec {
        kind,
        count,
        order,
        known_available: remaining.is_some(),
        offset: header_len,
    };
    let check_available = |need: u64| -> Result<()> {
        match remaining {
            Some(have) if have < need => Err(Error::TruncatedData {
                offset: header_len,
                expected: need,
                available: have,
            }),
            _ => Ok(()),
        }
    };
    let read_bytes = |r: &mut R, n: u64| -> Result<Vec<u8>> {
        check_available(n)?;
        read_pod_vec::<u8, _>(
            r,
            to_usize(n, "the data segment")?,
            remaining.is_some(),
            header_len,
        )
    };

    let (data, encoding, mut trailer_pre): (D, Encoding, Option<Vec<u8>>) = if h.flags & FLAG_BITS
        != 0
    {
        let expected = bits::chunk_count(count as u64) * 8;
        if h.size != expected {
            return Err(invalid(
                "size",
                size_at,
                h.size,
                format!("a packed BitArray of {count} elements has {expected} bytes of chunks"),
            ));
        }
        let chunks = read_bytes(&mut r, h.size)?;
        let bools = bits::unpack(&chunks, count, order, header_len)?;
        spec.order = ByteOrder::Little;
        (decoded(bools, &spec)?, Encoding::BitPacked, None)
    } else if h.flags & FLAG_COMPRESSED == 0 {
        if h.size != decoded_u64 {
            return Err(invalid(
                "size",
                size_at,
                h.size,
                format!(
                    "uncompressed data must be the product of the dims times elbyte = {decoded_u64} bytes"
                ),
            ));
        }
        check_available(h.size)?;
        (plain(&mut r, &spec)?, Encoding::Raw, None)
    } else {
        let lz4_bound_ok = decoded_u64 <= lz4_max_decoded_len(h.size);
        let lz4_too_big = || {
            invalid(
                "size",
                size_at,
                h.size,
                format!("an LZ4 block of {} bytes cannot decode to the {decoded_u64} bytes the dims call for", h.size),
            )
        };
        let meaning = match opts.compressed {
            CompressedMeaning::Leb128 if !kind.is_integer_like() => {
                return Err(invalid(
                    "flags",
                    8,
                    h.flags,
                    format!("LEB128 encoding applies to integer and Bool data, not {kind}"),
                ))
            }
            m => m,
        };
        let width = to_usize(kind.size(), "elbyte")?;
        let leb = |rest: &[u8]| {
            leb128::decode(
                rest,
                count,
                width,
                kind.is_signed_int(),
                kind == ElementKind::Bool,
                header_len,
            )
        };
        let leb_cap = |h: &Header| -> u64 {
            let groups = (8 * h.elbyte).div_ceil(7);
            (count as u64)
                .saturating_mul(groups)
                .saturating_add(opts.max_trailer_bytes)
        };
        match meaning {
            CompressedMeaning::Lz4Block => {
                if !lz4_bound_ok {
                    return Err(lz4_too_big());
                }
                let input = read_bytes(&mut r, h.size)?;
                let out = lz4_decode(&input, decoded_len, header_len)?;
                (decoded(out, &spec)?, Encoding::Lz4Block, None)
            }
            CompressedMeaning::Leb128 => {
                let (rest, more) = read_rest(&mut r, leb_cap(&h), remaining)?;
                let (out, used) = leb(&rest)?;
                if more {
                    warnings.push(Warning::TrailerTruncated {
                        kept: (rest.len() - used) as u64,
                    });
                }
                spec.order = ByteOrder::Little;
                let trailer = rest[used..].to_vec();
                (decoded(out, &spec)?, Encoding::Leb128, Some(trailer))
            }
            CompressedMeaning::Auto if kind.is_integer_like() && h.size == decoded_u64 => {
                // Either meaning fits the header: decide from the data. Both decoders are strict
                // (an LZ4 block must consume exactly `size` bytes and inflate to exactly the
                // decoded length; varints must be canonical and in range).
                let (rest, more) = read_rest(&mut r, leb_cap(&h), remaining)?;
                let lz4 = if (rest.len() as u64) >= h.size {
                    lz4_decode(&rest[..decoded_len], decoded_len, header_len).ok()
                } else {
                    None
                };
                let leb_result = leb(&rest);
                let (out, enc, used) = match (lz4, leb_result) {
                    (Some(out), Ok(_)) => {
                        warnings.push(Warning::AmbiguousCompression);
                        (out, Encoding::Lz4Block, decoded_len)
                    }
                    (Some(out), Err(_)) => (out, Encoding::Lz4Block, decoded_len),
                    (None, Ok((out, used))) => {
                        spec.order = ByteOrder::Little;
                        (out, Encoding::Leb128, used)
                    }
                    (None, Err(e)) => {
                        return Err(Error::CorruptData {
                            encoding: "LEB128",
                            offset: header_len,
                            reason: format!(
                                "flag bit 1 is set, but the data is neither an LZ4 block inflating to {decoded_len} bytes nor valid LEB128 varints ({e})"
                            ),
                        })
                    }
                };
                if more {
                    warnings.push(Warning::TrailerTruncated {
                        kept: (rest.len() - used) as u64,
                    });
                }
                let trailer = rest[used..].to_vec();
                (decoded(out, &spec)?, enc, Some(trailer))
            }
            CompressedMeaning::Auto if h.size == decoded_u64 => {
                // Non-integer data whose size equals the decoded size: an LZ4 block that happens
                // not to shrink, or RawArray.jl's float `compress=true` bug (plain bytes).
                let input = read_bytes(&mut r, h.size)?;
                match lz4_decode(&input, decoded_len, header_len) {
                    Ok(out) => (decoded(out, &spec)?, Encoding::Lz4Block, None),
                    Err(_) => {
                        warnings.push(Warning::CompressedFlagOnRawData);
                        (
                            decoded(input, &spec)?,
                            Encoding::RawDespiteCompressedFlag,
                            None,
                        )
                    }
                }
            }
            CompressedMeaning::Auto => {
                if !lz4_bound_ok {
                    return Err(lz4_too_big());
                }
                let input = read_bytes(&mut r, h.size)?;
                let out = lz4_decode(&input, decoded_len, header_len)?;
                (decoded(out, &spec)?, Encoding::Lz4Block, None)
            }
        }
    };
    let trailer = match trailer_pre.take() {
        Some(t) => t,
        None => {
            let (t, more) = read_rest(
                &mut r,
                opts.max_trailer_bytes,
                remaining.map(|x| x.saturating_sub(h.size)),
            )?;
            if more {
                warnings.push(Warning::TrailerTruncated {
                    kept: t.len() as u64,
                });
            }
            t
        }
    };
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
