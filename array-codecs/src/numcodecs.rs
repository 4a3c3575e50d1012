//! Decoding by numcodecs compressor id: what zarr v2 arrays name in `.zarray`'s `compressor`
//! (`{id: zlib, level: 1}`), as asdf-zarr stores them. Each id maps to the codec of this folder
//! that reads the same bytes, so bounds and checks stay those of the ASDF codecs; the two
//! framings numcodecs has of its own (`gzip`, and `lz4`'s size-prefixed raw block) are read
//! here with the workspace's bounds.

use crate::api::{Codec, CodecError};
use crate::lz4::decode_sized_block;
use crate::{Blosc, Bzip2, Xz, Zlib, Zstd};

/// The numcodecs compressor ids [`numcodecs_decode`] reads.
pub const NUMCODECS_IDS: [&str; 7] = ["blosc", "bz2", "gzip", "lz4", "lzma", "zlib", "zstd"];

/// Decodes `src`, compressed by the numcodecs compressor `id`, to exactly `expected` bytes.
///
/// `lzma` reads the xz container (numcodecs' default format); raw and `.lzma` streams are
/// refused by the xz decoder with its own message.
///
/// ```
/// use array_codecs::{numcodecs_decode, Codec, Zlib};
/// let data = vec![7u8; 1000];
/// let z = Zlib.encode(&data, &Default::default()).unwrap();
/// assert_eq!(numcodecs_decode("zlib", &z, 1000).unwrap(), data);
/// // numcodecs' LZ4: a little-endian u32 size, then one raw LZ4 block.
/// let mut l = 1000u32.to_le_bytes().to_vec();
/// l.extend(lz4_flex::block::compress(&data));
/// assert_eq!(numcodecs_decode("lz4", &l, 1000).unwrap(), data);
/// assert!(numcodecs_decode("lz4", &l, 999).is_err());
/// assert!(numcodecs_decode("jpeg", &z, 1000).unwrap_err().to_string().contains("jpeg"));
/// ```
pub fn numcodecs_decode(id: &str, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
    match id {
        "zlib" => Zlib.decode(src, expected),
        "bz2" => Bzip2.decode(src, expected),
        "zstd" => Zstd.decode(src, expected),
        "blosc" => Blosc.decode(src, expected),
        "lzma" => Xz.decode(src, expected),
        "gzip" => gzip_decode(src, expected),
        "lz4" => lz4_sized_decode(src, expected),
        other => Err(CodecError::new(format!(
            "numcodecs compressor {other:?} is not supported (supported: {})",
            NUMCODECS_IDS.join(", ")
        ))),
    }
}

/// One gzip member (RFC 1952), as Python's `gzip.compress` writes.
fn gzip_decode(src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
    crate::zlib::inflate_exact(crate::zlib::Framing::Gzip, src, expected)
}

/// numcodecs' `LZ4`: a little-endian u32 decoded size, then one raw LZ4 block.
fn lz4_sized_decode(src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
    let (size, raw) = match src {
        [a, b, c, d, raw @ ..] => (u32::from_le_bytes([*a, *b, *c, *d]) as usize, raw),
        _ => {
            return Err(CodecError::new(
                "LZ4 data shorter than its 4-byte size prefix",
            ))
        }
    };
    if size != expected {
        return Err(CodecError::new(format!(
            "LZ4 data declares {size} decoded bytes, {expected} expected"
        )));
    }
    decode_sized_block(raw, size)
}
