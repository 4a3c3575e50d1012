//! `blsc`: one Blosc1 buffer (asdf-compression), through vendored c-blosc.

use crate::api::{Codec, CodecError, CodecExtension, EncodeOptions};
use crate::io::level_u32;
use crate::Label;

/// `blsc`: one Blosc1 buffer, as python-blosc writes (asdf-compression's label).
///
/// Written with the `lz4` inner codec, byte shuffle by [`EncodeOptions::typesize`], level 5 by
/// default. Blosc1 holds at most 2 GiB − 16 bytes per buffer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Blosc;

/// Largest input one Blosc1 buffer can hold.
pub const BLOSC_MAX_BUFFERSIZE: usize = blosc_src::BLOSC_MAX_BUFFERSIZE as usize;

impl Blosc {
    /// The decoded size a Blosc1 buffer declares, after validating that it is safe to decode.
    fn validated_size(src: &[u8]) -> Result<(usize, usize), CodecError> {
        const MIN: usize = blosc_src::BLOSC_MIN_HEADER_LENGTH as usize;
        if src.len() < MIN {
            return Err(CodecError::new(format!(
                "blosc buffer of {} bytes is shorter than its 16-byte header",
                src.len()
            )));
        }
        // Header bytes 12..16: the buffer's compressed size (little-endian); trailing bytes in
        // the block after it are ignored, a shorter block is an error.
        let cbytes = u32::from_le_bytes([src[12], src[13], src[14], src[15]]) as usize;
        if cbytes < MIN || cbytes > src.len() {
            return Err(CodecError::new(format!(
                "blosc header declares {cbytes} compressed bytes, the block holds {}",
                src.len()
            )));
        }
        let mut nbytes = 0usize;
        // SAFETY: `src[..cbytes]` is a live, initialised slice of `cbytes >= 16` bytes and
        // `nbytes` a valid out-pointer; blosc_cbuffer_validate reads only the 16-byte header.
        let rc =
            unsafe { blosc_src::blosc_cbuffer_validate(src.as_ptr().cast(), cbytes, &mut nbytes) };
        if rc != 0 {
            return Err(CodecError::new("blosc header is invalid"));
        }
        Ok((nbytes, cbytes))
    }

    fn threads() -> i32 {
        // Inside a rayon task the blocks are already decoded in parallel.
        if rayon::current_thread_index().is_some() {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(64) as i32)
        }
    }
}

impl Codec for Blosc {
    fn extension(&self) -> Option<CodecExtension> {
        Some(CodecExtension {
            uri: "asdf://asdf-format.org/compression/extensions/blsc-1.0.0",
            class: "asdf_compression.blsc.extensions.BloscExtension",
        })
    }
    fn label(&self) -> Label {
        Label(*b"blsc")
    }
    fn name(&self) -> &str {
        "blsc"
    }
    fn decode_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
        let (nbytes, _) = Self::validated_size(src)?;
        if nbytes != dst.len() {
            return Err(CodecError::new(format!(
                "blosc buffer decodes to {nbytes} bytes, {} expected",
                dst.len()
            )));
        }
        if nbytes == 0 {
            return Ok(());
        }
        // SAFETY: blosc_cbuffer_validate accepted the buffer (its declared compressed size equals
        // the length of the slice passed, so decompression reads only inside `src`), and blosc
        // never writes beyond `destsize` = `dst.len()` bytes of the live mutable slice `dst`.
        let rc = unsafe {
            blosc_src::blosc_decompress_ctx(
                src.as_ptr().cast(),
                dst.as_mut_ptr().cast(),
                dst.len(),
                Self::threads(),
            )
        };
        if rc < 0 || rc as usize != nbytes {
            return Err(CodecError::new(format!(
                "blosc decompression failed (code {rc})"
            )));
        }
        Ok(())
    }
    fn decode(&self, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
        // Validate the buffer and its declared size before allocating anything. The allocation
        // is then at most 2 GiB (Blosc1's limit) and zero-filled lazily by the allocator.
        let (nbytes, _) = Self::validated_size(src)?;
        if nbytes != expected {
            return Err(CodecError::new(format!(
                "blosc buffer decodes to {nbytes} bytes, {expected} expected"
            )));
        }
        let mut out = array_core::zeroed_vec(expected)?;
        self.decode_into(src, &mut out)?;
        Ok(out)
    }
    fn encode(&self, src: &[u8], opts: &EncodeOptions) -> Result<Vec<u8>, CodecError> {
        if src.len() > BLOSC_MAX_BUFFERSIZE {
            return Err(CodecError::new(format!(
                "blosc (blsc) holds at most {BLOSC_MAX_BUFFERSIZE} bytes per block, got {}; \
                 use a chunked array or another codec",
                src.len()
            )));
        }
        let level = level_u32(opts.level, 5, 9, "blsc")? as i32;
        let typesize = opts.typesize.clamp(1, 255);
        let mut out = vec![0u8; src.len() + blosc_src::BLOSC_MAX_OVERHEAD as usize];
        // SAFETY: `src` is readable for `src.len()` bytes, `out` writable for `out.len()` bytes,
        // they do not overlap, and the compressor name is a NUL-terminated static string.
        let rc = unsafe {
            blosc_src::blosc_compress_ctx(
                level,
                1,
                typesize,
                src.len(),
                src.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                out.len(),
                c"lz4".as_ptr(),
                0,
                opts.effective_threads().min(64) as i32,
            )
        };
        if rc <= 0 {
            return Err(CodecError::new(format!(
                "blosc compression failed (code {rc})"
            )));
        }
        out.truncate(rc as usize);
        Ok(out)
    }
}
