//! `zstd`: one Zstandard frame (asdf-compression).

use std::io::Write;

use crate::api::{Codec, CodecError, CodecExtension, EncodeOptions};
use crate::io::{decode_fresh, read_growing};
use crate::Label;

/// `zstd`: one Zstandard frame (asdf-compression's label).
#[derive(Debug, Clone, Copy, Default)]
pub struct Zstd;

/// Blocks smaller than this are compressed on one thread, in one call (zstd's jobs are
/// megabytes); larger ones, when several threads are allowed, by zstd's workers through the
/// streaming encoder.
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
            return decode_fresh(expected, |out| self.decode_into(src, out));
        }
        let dec = zstd::stream::read::Decoder::with_buffer(src)?;
        read_growing(dec, expected, src.len()).map_err(|e| e.context("zstd"))
    }
    fn encode(&self, src: &[u8], opts: &EncodeOptions) -> Result<Vec<u8>, CodecError> {
        let level = level(opts)?;
        let Some(workers) = workers(src, opts) else {
            let mut c = zstd::bulk::Compressor::new(level)?;
            c.include_contentsize(true)?;
            return Ok(c.compress(src)?);
        };
        // The streaming encoder in memory: a block's bytes do not depend on where they go.
        let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(src.len()));
        encode_parallel(src, level, workers, &mut out)?;
        Ok(out)
    }
    fn encode_to(
        &self,
        src: &[u8],
        opts: &EncodeOptions,
        out: &mut dyn Write,
    ) -> Result<(), CodecError> {
        match workers(src, opts) {
            Some(workers) => encode_parallel(src, level(opts)?, workers, out),
            None => Ok(out.write_all(&self.encode(src, opts)?)?),
        }
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

/// The workers a block is compressed with: `None` for one thread, in one call (small blocks,
/// or one thread allowed), which is a little faster than the streaming encoder on one thread.
fn workers(src: &[u8], opts: &EncodeOptions) -> Option<u32> {
    let threads = opts.effective_threads();
    (threads > 1 && src.len() >= ZSTD_MT_MIN).then_some(threads as u32)
}

/// Compresses a large `src` into `out` as it goes, with zstd's `workers`, as one ordinary frame
/// (any zstd decoder reads it; like Python's asdf-compression with `threads=-1`) that declares
/// its content size (Python's `zstandard` needs the size to decompress in one call).
fn encode_parallel(
    src: &[u8],
    level: i32,
    workers: u32,
    out: &mut dyn Write,
) -> Result<(), CodecError> {
    let mut e = zstd::stream::write::Encoder::new(out, level)?;
    e.include_contentsize(true)?;
    e.set_pledged_src_size(Some(src.len() as u64))?;
    e.multithread(workers)?;
    e.write_all(src)?;
    e.finish()?;
    Ok(())
}
