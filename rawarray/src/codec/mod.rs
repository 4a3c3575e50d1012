//! Data encodings behind flag bits 1 and 2: Julia's LEB128 varints and packed `BitArray`s.
//! (LZ4 blocks are the codec kernel's, `array_codecs::lz4`.)

pub mod bits;
pub mod leb128;

/// The largest input a C `LZ4_compress_default` accepts (`LZ4_MAX_INPUT_SIZE`): files we
/// compress must stay readable by the C library.
pub const LZ4_MAX_INPUT_SIZE: u64 = 0x7E00_0000;

/// The most an LZ4 block can expand: every 255 bytes of a literal-length or match-length run
/// take one byte, so a block of `n` bytes decodes to at most `255 * n + 64` bytes (the
/// workspace's one bound, `array_core::bounds::lz4_max_decoded`). Used to
/// reject a header whose decompressed size the compressed bytes cannot possibly produce before
/// allocating for it.
pub fn lz4_max_decoded_len(compressed: u64) -> u64 {
    array_core::bounds::lz4_max_decoded(compressed)
}
