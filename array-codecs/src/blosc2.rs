//! `bls2`: one Blosc2 chunk, as python-blosc2's `blosc2.compress` writes (asdf-compression's
//! label). Behind the `bls2` feature because c-blosc2 builds with cmake.

use std::sync::Once;

use crate::api::{Codec, CodecError, CodecExtension, EncodeOptions};
use crate::Label;

use blosc2_sys as ffi;

/// `bls2`: one Blosc2 chunk. Written like python-blosc2's defaults (zstd, level 1, byte shuffle
/// by [`EncodeOptions::typesize`]); any chunk c-blosc2 can decode is read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Blosc2;

/// Largest input one Blosc2 chunk can hold.
pub const BLOSC2_MAX_BUFFERSIZE: usize = ffi::BLOSC2_MAX_BUFFERSIZE as usize;

const EXTENDED_HEADER: usize = 32;

fn init() {
    static INIT: Once = Once::new();
    // SAFETY: blosc2_init only sets up the library's global tables; `Once` runs it once.
    INIT.call_once(|| unsafe { ffi::blosc2_init() });
}

/// A decompression or compression context, freed on drop.
struct Ctx(*mut ffi::blosc2_context);

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: the pointer came from blosc2_create_[cd]ctx, is non-null and freed only here.
        unsafe { ffi::blosc2_free_ctx(self.0) }
    }
}

fn threads() -> i16 {
    if rayon::current_thread_index().is_some() {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(64) as i16)
    }
}

impl Blosc2 {
    /// (decoded size, chunk size) declared by a chunk's header, checked against `src`.
    fn sizes(src: &[u8]) -> Result<(usize, usize), CodecError> {
        if src.len() < EXTENDED_HEADER {
            return Err(CodecError::new(format!(
                "blosc2 chunk of {} bytes is shorter than its 32-byte header",
                src.len()
            )));
        }
        let (mut nbytes, mut cbytes, mut blocksize) = (0i32, 0i32, 0i32);
        init();
        // SAFETY: `src` holds at least the 32 header bytes blosc2_cbuffer_sizes reads; the
        // out-pointers are valid locals.
        let rc = unsafe {
            ffi::blosc2_cbuffer_sizes(
                src.as_ptr().cast(),
                &mut nbytes,
                &mut cbytes,
                &mut blocksize,
            )
        };
        if rc < 0 || nbytes < 0 || cbytes < EXTENDED_HEADER as i32 || cbytes as usize > src.len() {
            return Err(CodecError::new(format!(
                "blosc2 header is invalid (code {rc}, {cbytes} compressed bytes declared, block has {})",
                src.len()
            )));
        }
        Ok((nbytes as usize, cbytes as usize))
    }
}

impl Codec for Blosc2 {
    fn extension(&self) -> Option<CodecExtension> {
        Some(CodecExtension {
            uri: "asdf://asdf-format.org/compression/extensions/bls2-1.0.0",
            class: "asdf_compression.bls2.extensions.Blosc2Extension",
        })
    }
    fn label(&self) -> Label {
        Label(*b"bls2")
    }
    fn name(&self) -> &str {
        "bls2"
    }
    fn decode_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
        let (nbytes, cbytes) = Self::sizes(src)?;
        if nbytes != dst.len() {
            return Err(CodecError::new(format!(
                "blosc2 chunk decodes to {nbytes} bytes, {} expected",
                dst.len()
            )));
        }
        // SAFETY: plain struct returned by value from the library.
        let mut params = unsafe { ffi::blosc2_get_blosc2_dparams_defaults() };
        params.nthreads = threads();
        // SAFETY: `params` is a fully initialised parameter struct.
        let ctx = Ctx(unsafe { ffi::blosc2_create_dctx(params) });
        if ctx.0.is_null() {
            return Err(CodecError::new("cannot create a blosc2 context"));
        }
        // SAFETY: `src[..cbytes]` is readable (cbytes <= src.len(), checked), `dst` is writable
        // for `dst.len()` bytes, which is passed as the destination size so nothing is written
        // beyond it; the context is live.
        let rc = unsafe {
            ffi::blosc2_decompress_ctx(
                ctx.0,
                src.as_ptr().cast(),
                cbytes as i32,
                dst.as_mut_ptr().cast(),
                dst.len() as i32,
            )
        };
        if rc < 0 || rc as usize != nbytes {
            return Err(CodecError::new(format!(
                "blosc2 decompression failed (code {rc})"
            )));
        }
        Ok(())
    }
    fn decode(&self, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
        let (nbytes, _) = Self::sizes(src)?;
        if nbytes != expected {
            return Err(CodecError::new(format!(
                "blosc2 chunk decodes to {nbytes} bytes, {expected} expected"
            )));
        }
        let mut out = array_core::zeroed_vec(expected)?;
        self.decode_into(src, &mut out)?;
        Ok(out)
    }
    fn encode(&self, src: &[u8], opts: &EncodeOptions) -> Result<Vec<u8>, CodecError> {
        if src.len() > BLOSC2_MAX_BUFFERSIZE {
            return Err(CodecError::new(format!(
                "blosc2 (bls2) holds at most {BLOSC2_MAX_BUFFERSIZE} bytes per block, got {}",
                src.len()
            )));
        }
        let level = match opts.level {
            None => 1,
            Some(l @ 0..=9) => l as u8,
            Some(l) => return Err(CodecError::new(format!("bls2 level {l} is outside 0..=9"))),
        };
        init();
        // SAFETY: plain struct returned by value from the library.
        let mut params = unsafe { ffi::blosc2_get_blosc2_cparams_defaults() };
        params.compcode = ffi::BLOSC_ZSTD as u8;
        params.clevel = level;
        params.typesize = opts.typesize.clamp(1, 255) as i32;
        params.nthreads = threads();
        // Defaults put SHUFFLE last in the filter pipeline, as python-blosc2 does.
        // SAFETY: `params` is a fully initialised parameter struct.
        let ctx = Ctx(unsafe { ffi::blosc2_create_cctx(params) });
        if ctx.0.is_null() {
            return Err(CodecError::new("cannot create a blosc2 context"));
        }
        let mut out = vec![0u8; src.len() + ffi::BLOSC2_MAX_OVERHEAD as usize];
        // SAFETY: `src` is readable and `out` writable for the lengths passed; they do not overlap.
        let rc = unsafe {
            ffi::blosc2_compress_ctx(
                ctx.0,
                src.as_ptr().cast(),
                src.len() as i32,
                out.as_mut_ptr().cast(),
                out.len() as i32,
            )
        };
        if rc <= 0 {
            return Err(CodecError::new(format!(
                "blosc2 compression failed (code {rc})"
            )));
        }
        out.truncate(rc as usize);
        Ok(out)
    }
}
