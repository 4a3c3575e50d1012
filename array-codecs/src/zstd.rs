//! `zstd`: one Zstandard frame (asdf-compression).

use crate::api::{Codec, CodecError, CodecExtension, EncodeOptions};
use crate::io::read_growing;
use crate::Label;

/// `zstd`: one Zstandard frame (asdf-compression's label).
#[derive(Debug, Clone, Copy, Default)]
pub struct Zstd;

/// Blocks smaller than this are compressed on one thread (zstd's jobs are megabytes).
const ZSTD_MT_MIN: usize = 4 << 20;

impl Codec for Zstd {
    fn extension(&self) -> Option<CodecExtension> {
        Some(CodecExtension {
            uri: "asdf://asdf-format.org/compression/extensions/zstd-1.0.0",
            class: "asdf_compression.zstd.extensions.ZstdExtension",
        })
    }
    fn label(&self) -> Label {
        Label(*b"zstd")
    }
    fn name(&self) -> &str {
        "zstd"
    }
    fn decode_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
        let mut dec = zstd::bulk::Decompressor::new()?;
        let n = dec
            .decompress_to_buffer(src, dst)
            .map_err(|e| CodecError::new(format!("zstd: {e}")))?;
        if n != dst.len() {
            return Err(CodecError::short(n, dst.len()));
        }
        Ok(())
    }
    fn decode(&self, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
        // The frame's content size is as untrusted as the block header: allocate exactly only
        // when both agree, otherwise grow with the data.
        let declared = zstd::zstd_safe::get_frame_content_size(src).ok().flatten();
        if declared == Some(expected as u64) && expected <= src.len().saturating_mul(64) {
            let mut out = array_core::zeroed_vec(expected)?;
            self.decode_into(src, &mut out)?;
            return Ok(out);
        }
        let dec = zstd::stream::read::Decoder::with_buffer(src)?;
        read_growing(dec, expected, src.len()).map_err(|e| e.context("zstd"))
    }
    fn encode(&self, src: &[u8], opts: &EncodeOptions) -> Result<Vec<u8>, CodecError> {
        let level = opts.level.unwrap_or(3);
        let range = zstd::compression_level_range();
        if !range.contains(&level) {
            return Err(CodecError::new(format!(
                "zstd level {level} is outside {}..={}",
                range.start(),
                range.end()
            )));
        }
        let mut c = zstd::bulk::Compressor::new(level)?;
        c.include_contentsize(true)?;
        // Like Python's asdf-compression (`threads=-1`): a large block is compressed by several
        // workers into one ordinary frame (any zstd decoder reads it).
        let threads = opts.effective_threads();
        if threads > 1 && src.len() >= ZSTD_MT_MIN {
            c.set_parameter(zstd::zstd_safe::CParameter::NbWorkers(threads as u32))?;
        }
        Ok(c.compress(src)?)
    }
}
