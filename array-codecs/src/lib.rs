//! The codec kernel: every compression codec of the workspace, by label, and the registry that
//! maps labels to them. ASDF blocks (`asdf-block`) use all of them; RawArray takes only `lz4`
//! (raw blocks) and asdf-awkward `zlib`, `xz` and `lz4` (awkward0's compressed blobs), each
//! through a cargo feature of the same name, so neither pulls in the ASDF stack or the codecs it
//! does not use. Every expansion bound is `array_core::bounds`'.
//!
//! | label | codec | backend | written like |
//! |---|---|---|---|
//! | `zlib` | one zlib (RFC 1950) stream | libdeflate (`libdeflater`); `flate2` on `zlib-rs` for streams of unknown size | Python `zlib.compress` |
//! | `bzp2` | one bzip2 stream | `bzip2` (pure Rust `libbz2-rs-sys`) | Python `bz2.compress` |
//! | `lz4\0` | Python asdf's chunk framing: per 4 MiB chunk a big-endian u32 length, a little-endian u32 size, a raw LZ4 block; LZ4 *frames* (older ASDF.jl) are detected and read too | `lz4_flex` | Python asdf |
//! | `lz4f` | one LZ4 frame | `lz4_flex` | asdf-compression |
//! | `zstd` | one Zstandard frame | `zstd` (vendored libzstd) | asdf-compression |
//! | `blsc` | one Blosc1 buffer | vendored c-blosc 1.21.6 (`blosc-src`) | asdf-compression |
//! | `xz\0\0` | one xz stream | `liblzma` (vendored xz 5.8) | ASDF.jl |
//!
//! Decoding never allocates more than the data actually produces for codecs whose expansion
//! ratio has no useful bound (bzip2, zstd, xz, LZ4 frames), and checks the declared size against
//! the codec's maximum ratio for the others (zlib ≤ 1032:1, raw LZ4 ≤ 255:1) before allocating.

//!
//! Each codec is one file of this folder implementing [`Codec`]; [`CodecRegistry::default`]
//! (`registry.rs`) lists them. Adding a codec is that file plus one line there.

#![forbid(unsafe_op_in_unsafe_fn)]

mod api;
#[cfg(feature = "blosc")]
mod blosc;
#[cfg(feature = "bls2")]
mod blosc2;
#[cfg(feature = "bzip2")]
mod bzip2;
pub mod io;
mod label;
#[cfg(feature = "lz4-block")]
pub mod lz4;
#[cfg(feature = "lz4")]
mod lz4_chunked;
#[cfg(feature = "lz4")]
mod lz4f;
#[cfg(feature = "numcodecs")]
mod numcodecs;
mod registry;
#[cfg(feature = "xz")]
pub mod xz;
#[cfg(feature = "zlib")]
pub mod zlib;
#[cfg(feature = "zstd")]
mod zstd;

pub use api::{Codec, CodecError, CodecErrorKind, CodecExtension, EncodeOptions};
#[cfg(feature = "blosc")]
pub use blosc::{Blosc, BLOSC_MAX_BUFFERSIZE};
#[cfg(feature = "bls2")]
pub use blosc2::{Blosc2, BLOSC2_MAX_BUFFERSIZE};
#[cfg(feature = "bzip2")]
pub use bzip2::Bzip2;
pub use label::Label;
#[cfg(feature = "lz4")]
pub use lz4_chunked::{Lz4Chunked, LZ4_CHUNK_SIZE};
#[cfg(feature = "lz4")]
pub use lz4f::Lz4Frame;
#[cfg(feature = "numcodecs")]
pub use numcodecs::{numcodecs_decode, NUMCODECS_IDS};
pub use registry::CodecRegistry;
#[cfg(feature = "xz")]
pub use xz::Xz;
#[cfg(feature = "zlib")]
pub use zlib::Zlib;
#[cfg(feature = "zstd")]
pub use zstd::Zstd;
