//! Raw LZ4 blocks, the primitive under every LZ4 format of the workspace: one chunk of ASDF's
//! `lz4` framing ([`Lz4Chunked`](crate::Lz4Chunked)), RawArray's LZ4 data, awkward0's
//! `lz4.block` blobs and numcodecs' `lz4` (both after a 4-byte size prefix).

use crate::api::CodecError;

/// Raw LZ4 cannot expand data by more than 255:1 (the workspace's one bound).
pub(crate) fn lz4_bound(compressed: usize) -> usize {
    array_core::bounds::lz4_max_decoded_usize(compressed)
}

/// One raw LZ4 block (no framing, no size prefix) of `data`: RawArray's LZ4 data, awkward0's
/// `lz4.block` blobs after their size prefix, one chunk of [`Lz4Chunked`](crate::Lz4Chunked).
///
/// ```
/// use array_codecs::lz4::{decode_block_into, encode_block};
/// let block = encode_block(&[7u8; 1000]);
/// let mut out = vec![0u8; 1000];
/// assert_eq!(decode_block_into(&block, &mut out).unwrap(), 1000);
/// assert_eq!(out, [7u8; 1000]);
/// ```
pub fn encode_block(data: &[u8]) -> Vec<u8> {
    lz4_flex::block::compress(data)
}

/// Decodes one raw LZ4 block into `dst` and returns how many bytes it produced (the caller
/// compares that with what it expected); an error for a corrupt block or one that would
/// overrun `dst`.
pub fn decode_block_into(raw: &[u8], dst: &mut [u8]) -> Result<usize, CodecError> {
    lz4_flex::block::decompress_into(raw, dst)
        .map_err(|e| CodecError::new(format!("LZ4 block: {e}")))
}

/// One raw LZ4 block that declares `size` decoded bytes, refused before allocating when raw
/// LZ4's ratio bound says `raw` cannot hold them (numcodecs' `lz4`, one chunk of a range).
pub fn decode_sized_block(raw: &[u8], size: usize) -> Result<Vec<u8>, CodecError> {
    if size > lz4_bound(raw.len()) {
        return Err(CodecError::new(format!(
            "{} bytes of LZ4 cannot decode to the {size} bytes declared",
            raw.len()
        )));
    }
    let mut out = array_core::zeroed_vec(size)?;
    lz4_decode_chunk(raw, &mut out)?;
    Ok(out)
}

/// One raw LZ4 block decoded into exactly `dst` (a chunk whose size its framing declares).
pub(crate) fn lz4_decode_chunk(raw: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    let n = decode_block_into(raw, dst)?;
    if n != dst.len() {
        return Err(CodecError::new(format!(
            "LZ4 chunk decodes to {n} bytes, its prefix declares {}",
            dst.len()
        )));
    }
    Ok(())
}
