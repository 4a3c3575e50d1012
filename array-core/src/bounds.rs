//! How far each codec can expand its input: the ceilings every reader checks a declared
//! decompressed size against before allocating for it. One definition per codec, so a
//! security-relevant bound cannot drift between the formats that use the codec.

/// Deflate (zlib, gzip, ZIP method 8) cannot expand data by more than 1032:1: a stored run of
/// 258-byte matches costs at least 2 bits per match.
pub const DEFLATE_MAX_RATIO: u64 = 1032;

/// The most `compressed` bytes of a zlib/deflate stream can decode to (the ratio, plus room
/// for the stream's header, trailer and a final short block).
///
/// ```
/// assert_eq!(array_core::bounds::deflate_max_decoded(0), 4096);
/// assert!(array_core::bounds::deflate_max_decoded(1000) >= 1_032_000);
/// ```
pub fn deflate_max_decoded(compressed: u64) -> u64 {
    compressed
        .saturating_mul(DEFLATE_MAX_RATIO)
        .saturating_add(4096)
}

/// The most a raw LZ4 block of `compressed` bytes can decode to: every 255 bytes of a literal or
/// match run take at least one input byte, plus a few bytes of slack for the last sequence.
///
/// ```
/// assert_eq!(array_core::bounds::lz4_max_decoded(4), 255 * 4 + 64);
/// ```
pub fn lz4_max_decoded(compressed: u64) -> u64 {
    compressed.saturating_mul(255).saturating_add(64)
}

/// [`lz4_max_decoded`] for in-memory lengths (saturating at `usize::MAX`).
pub fn lz4_max_decoded_usize(compressed: usize) -> usize {
    usize::try_from(lz4_max_decoded(compressed as u64)).unwrap_or(usize::MAX)
}

/// [`deflate_max_decoded`] for in-memory lengths (saturating at `usize::MAX`).
pub fn deflate_max_decoded_usize(compressed: usize) -> usize {
    usize::try_from(deflate_max_decoded(compressed as u64)).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_streams_stay_within_their_bound() {
        // The most compressible input there is: one repeated byte.
        let data = vec![0u8; 1 << 20];
        let lz4 = lz4_block_of_zeros(data.len());
        assert!(lz4_max_decoded(lz4 as u64) >= data.len() as u64);
        assert_eq!(lz4_max_decoded(u64::MAX), u64::MAX);
        assert_eq!(deflate_max_decoded_usize(usize::MAX), usize::MAX);
    }

    /// Size of the smallest LZ4 block that encodes `n` zeros: one literal, then one match of
    /// `n - 1` bytes whose length takes `(n - 1 - 4 - 15) / 255 + 1` extension bytes, and the
    /// five literals the format requires at the end.
    fn lz4_block_of_zeros(n: usize) -> usize {
        1 + 1 + 2 + (n - 1 - 5 - 4 - 15) / 255 + 1 + 1 + 5
    }
}
