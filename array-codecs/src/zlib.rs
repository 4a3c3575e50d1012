//! `zlib`: one zlib (RFC 1950) stream.

use std::io::Write;

use crate::api::{Codec, CodecError, EncodeOptions};
use crate::io::{inflate_exact, level_u32, read_exact_then_end};
use crate::Label;

/// A reader of the data decoded from the zlib stream `src`, for callers with their own size
/// policy (awkward0's `zlib.decompress` blobs).
pub fn decoder(src: &[u8]) -> impl std::io::Read + '_ {
    flate2::bufread::ZlibDecoder::new(src)
}

/// `zlib`: one zlib stream (what Python's `zlib.compress` writes).
#[derive(Debug, Clone, Copy, Default)]
pub struct Zlib;

impl Codec for Zlib {
    fn label(&self) -> Label {
        Label(*b"zlib")
    }
    fn name(&self) -> &str {
        "zlib"
    }
    fn decode_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
        read_exact_then_end(flate2::bufread::ZlibDecoder::new(src), dst)
    }
    fn decode(&self, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
        let decoder = flate2::bufread::ZlibDecoder::new(src);
        inflate_exact(decoder, src.len(), expected, "zlib")
    }
    fn encode(&self, src: &[u8], opts: &EncodeOptions) -> Result<Vec<u8>, CodecError> {
        let level = level_u32(opts.level, 6, 9, "zlib")?;
        let mut enc = flate2::write::ZlibEncoder::new(
            Vec::with_capacity(src.len() / 2 + 64),
            flate2::Compression::new(level),
        );
        enc.write_all(src)?;
        Ok(enc.finish()?)
    }
}
