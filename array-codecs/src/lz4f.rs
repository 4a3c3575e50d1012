//! `lz4f`: one LZ4 frame (asdf-compression).

use std::io::Write;

use crate::api::{Codec, CodecError, CodecExtension, EncodeOptions};
use crate::io::{read_exact_then_end, read_growing};
use crate::Label;

/// `lz4f`: one LZ4 frame (asdf-compression's label).
#[derive(Debug, Clone, Copy, Default)]
pub struct Lz4Frame;

impl Codec for Lz4Frame {
    fn extension(&self) -> Option<CodecExtension> {
        Some(CodecExtension {
            uri: "asdf://asdf-format.org/compression/extensions/lz4f-1.0.0",
            class: "asdf_compression.lz4f.extensions.LZ4FrameExtension",
        })
    }
    fn label(&self) -> Label {
        Label(*b"lz4f")
    }
    fn name(&self) -> &str {
        "lz4f"
    }
    fn decode_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
        read_exact_then_end(lz4_flex::frame::FrameDecoder::new(src), dst)
            .map_err(|e| CodecError::new(format!("LZ4 frame: {e}")))
    }
    fn decode(&self, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
        read_growing(lz4_flex::frame::FrameDecoder::new(src), expected, src.len())
            .map_err(|e| CodecError::new(format!("LZ4 frame: {e}")))
    }
    fn encode(&self, src: &[u8], _opts: &EncodeOptions) -> Result<Vec<u8>, CodecError> {
        let info = lz4_flex::frame::FrameInfo::new()
            .content_size(Some(src.len() as u64))
            .block_size(lz4_flex::frame::BlockSize::Max4MB)
            .block_mode(lz4_flex::frame::BlockMode::Independent);
        let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(
            info,
            Vec::with_capacity(src.len() / 2 + 64),
        );
        enc.write_all(src)?;
        enc.finish()
            .map_err(|e| CodecError::new(format!("LZ4 frame: {e}")))
    }
}
