//! `xz\0\0`: one xz stream (ASDF.jl).

use std::io::Write;

use crate::api::{Codec, CodecError, EncodeOptions};
use crate::io::{level_u32, read_exact_then_end, read_growing};
use crate::Label;

/// A reader of the data decoded from `src`, an xz stream or a legacy `.lzma` one (what Python's
/// `lzma.decompress` accepts by default: awkward0's `lzma.decompress` blobs), for callers with
/// their own size policy.
pub fn auto_decoder(src: &[u8]) -> Result<impl std::io::Read + '_, CodecError> {
    let stream = liblzma::stream::Stream::new_auto_decoder(XZ_MEMLIMIT, 0)
        .map_err(|e| CodecError::new(format!("xz: {e}")))?;
    Ok(liblzma::bufread::XzDecoder::new_stream(src, stream))
}

/// `xz\0\0`: one xz stream (ASDF.jl's label; Python asdf has no xz codec).
#[derive(Debug, Clone, Copy, Default)]
pub struct Xz;

/// Memory the xz decoder may use (dictionary etc.); presets up to 9 need 65 MiB.
const XZ_MEMLIMIT: u64 = 1 << 30;

impl Xz {
    fn decoder(src: &[u8]) -> Result<liblzma::bufread::XzDecoder<&[u8]>, CodecError> {
        let stream = liblzma::stream::Stream::new_stream_decoder(XZ_MEMLIMIT, 0)
            .map_err(|e| CodecError::new(format!("xz: {e}")))?;
        Ok(liblzma::bufread::XzDecoder::new_stream(src, stream))
    }
}

impl Codec for Xz {
    fn label(&self) -> Label {
        Label(*b"xz\0\0")
    }
    fn name(&self) -> &str {
        "xz"
    }
    fn decode_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
        read_exact_then_end(Self::decoder(src)?, dst)
    }
    fn decode(&self, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
        read_growing(Self::decoder(src)?, expected, src.len())
    }
    fn encode(&self, src: &[u8], opts: &EncodeOptions) -> Result<Vec<u8>, CodecError> {
        let level = level_u32(opts.level, 6, 9, "xz")?;
        let mut enc = liblzma::write::XzEncoder::new(Vec::with_capacity(src.len() / 4 + 64), level);
        enc.write_all(src)?;
        Ok(enc.finish()?)
    }
}
