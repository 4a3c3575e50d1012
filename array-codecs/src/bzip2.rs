//! `bzp2`: one bzip2 stream.

use std::io::Write;

use crate::api::{Codec, CodecError, EncodeOptions};
use crate::io::{level_u32, read_exact_then_end, read_growing};
use crate::Label;

/// `bzp2`: one bzip2 stream (what Python's `bz2.compress` writes).
#[derive(Debug, Clone, Copy, Default)]
pub struct Bzip2;

impl Codec for Bzip2 {
    fn label(&self) -> Label {
        Label(*b"bzp2")
    }
    fn name(&self) -> &str {
        "bzp2"
    }
    fn decode_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
        read_exact_then_end(bzip2::bufread::BzDecoder::new(src), dst)
    }
    fn decode(&self, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
        read_growing(bzip2::bufread::BzDecoder::new(src), expected, src.len())
    }
    fn encode(&self, src: &[u8], opts: &EncodeOptions) -> Result<Vec<u8>, CodecError> {
        let level = level_u32(opts.level, 9, 9, "bzp2")?.max(1);
        let mut enc = bzip2::write::BzEncoder::new(
            Vec::with_capacity(src.len() / 4 + 64),
            bzip2::Compression::new(level),
        );
        enc.write_all(src)?;
        Ok(enc.finish()?)
    }
}
