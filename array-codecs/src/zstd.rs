//! `zstd`: one Zstandard frame (asdf-compression).

use std::io::Write;

use crate::api::{Codec, CodecError, CodecExtension, EncodeOptions};
use crate::io::read_growing;
use crate::Label;

/// `zstd`: one Zstandard frame (asdf-compression's label).
#[derive(Debug, Clone, Copy, Default)]
pub struct Zstd;

/// Blocks smaller than this are compressed on one thread, in one call (zstd's jobs are
/// megabytes); larger ones by the streaming encoder, on several threads when allowed.
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
        let level = level(opts)?;
        if src.len() < ZSTD_MT_MIN {
            let mut c = zstd::bulk::Compressor::new(level)?;
            c.include_contentsize(true)?;
            return Ok(c.compress(src)?);
        }
        // The streaming encoder in memory: a block's bytes do not depend on where they go.
        let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(src.len()));
        encode_large(src, level, opts, &mut out)?;
        Ok(out)
    }
    fn encode_to(
        &self,
        src: &[u8],
        opts: &EncodeOptions,
        out: &mut dyn Write,
    ) -> Result<(), CodecError> {
        if src.len() < ZSTD_MT_MIN {
            out.write_all(&self.encode(src, opts)?)?;
            return Ok(());
        }
        encode_large(src, level(opts)?, opts, out)
    }
    fn streams(&self) -> bool {
        true
    }
}

/// The compression level of `opts` (3 when unset), checked.
fn level(opts: &EncodeOptions) -> Result<i32, CodecError> {
    let level = opts.level.unwrap_or(3);
    let range = zstd::compression_level_range();
    if !range.contains(&level) {
        return Err(CodecError::new(format!(
            "zstd level {level} is outside {}..={}",
            range.start(),
            range.end()
        )));
    }
    Ok(level)
}

/// Compresses a large `src` into `out` as it goes, as one frame that declares its content size
/// (Python's `zstandard` needs the size to decompress in one call).
fn encode_large(
    src: &[u8],
    level: i32,
    opts: &EncodeOptions,
    out: &mut dyn Write,
) -> Result<(), CodecError> {
    let mut e = zstd::stream::write::Encoder::new(out, level)?;
    e.include_contentsize(true)?;
    e.set_pledged_src_size(Some(src.len() as u64))?;
    // Like Python's asdf-compression (`threads=-1`): a large block is compressed by several
    // workers into one ordinary frame (any zstd decoder reads it).
    let threads = opts.effective_threads();
    if threads > 1 {
        e.multithread(threads as u32)?;
    }
    e.write_all(src)?;
    e.finish()?;
    Ok(())
}
