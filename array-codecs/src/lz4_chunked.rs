//! `lz4\0`: Python asdf's chunk framing of raw LZ4 blocks ([`crate::lz4`]) (LZ4 frames under this label read too).

use rayon::prelude::*;

use crate::api::{Codec, CodecError, EncodeOptions};
use crate::lz4::{decode_sized_block, lz4_bound, lz4_decode_chunk};
use crate::lz4f::Lz4Frame;
use crate::Label;

/// `lz4\0`: Python asdf's framing. Per chunk of at most 4 MiB of input: a big-endian u32 `N`,
/// then `N` bytes made of a little-endian u32 decoded chunk size and a raw LZ4 block.
///
/// Chunks decode and encode in parallel. An LZ4 *frame* stored under this label (as ASDF.jl up
/// to 2.0.2 wrote) is recognised by its magic number and decoded as a frame.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lz4Chunked;

/// Uncompressed bytes per chunk, as Python asdf writes.
pub const LZ4_CHUNK_SIZE: usize = 1 << 22;

const LZ4_FRAME_MAGIC: [u8; 4] = [0x04, 0x22, 0x4d, 0x18];

/// The chunks of a Python-framed lz4 block: (raw LZ4 bytes, decoded size).
fn lz4_chunks(src: &[u8], expected: usize) -> Result<Vec<(&[u8], usize)>, CodecError> {
    let mut chunks = Vec::new();
    let mut pos = 0usize;
    let mut total = 0usize;
    while pos < src.len() {
        let at = pos;
        let len_bytes = src.get(pos..pos + 4).ok_or_else(|| {
            CodecError::new(format!("chunk header truncated at byte {at} of the block"))
        })?;
        let n =
            u32::from_be_bytes([len_bytes[0], len_bytes[1], len_bytes[2], len_bytes[3]]) as usize;
        pos += 4;
        if n < 4 {
            return Err(CodecError::new(format!(
                "chunk at byte {at} of the block declares length {n}, less than its 4-byte size prefix"
            )));
        }
        let body = src.get(pos..pos.saturating_add(n)).ok_or_else(|| {
            CodecError::new(format!(
                "chunk at byte {at} of the block declares {n} bytes but only {} remain",
                src.len() - pos
            ))
        })?;
        pos += n;
        let size = u32::from_le_bytes([body[0], body[1], body[2], body[3]]) as usize;
        let raw = &body[4..];
        if size > lz4_bound(raw.len()) {
            return Err(CodecError::new(format!(
                "chunk at byte {at} of the block declares {size} decoded bytes, impossible for {} bytes of LZ4",
                raw.len()
            )));
        }
        total = total.saturating_add(size);
        if total > expected {
            return Err(CodecError::new(format!(
                "chunks decode to more than the {expected} bytes the header declares"
            )));
        }
        chunks.push((raw, size));
    }
    if total != expected {
        return Err(CodecError::new(format!(
            "chunks decode to {total} bytes, {expected} declared"
        )));
    }
    Ok(chunks)
}

impl Lz4Chunked {
    fn decode_chunks_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
        let chunks = lz4_chunks(src, dst.len())?;
        let mut slices = Vec::with_capacity(chunks.len());
        let mut rest = dst;
        for (raw, size) in &chunks {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(*size);
            slices.push((*raw, head));
            rest = tail;
        }
        if slices.len() > 1 {
            slices
                .into_par_iter()
                .try_for_each(|(raw, out)| lz4_decode_chunk(raw, out))
        } else {
            slices
                .into_iter()
                .try_for_each(|(raw, out)| lz4_decode_chunk(raw, out))
        }
    }

    fn frame_first(src: &[u8]) -> bool {
        src.starts_with(&LZ4_FRAME_MAGIC)
    }
}

impl Codec for Lz4Chunked {
    fn label(&self) -> Label {
        Label(*b"lz4\0")
    }
    fn name(&self) -> &str {
        "lz4"
    }
    fn decode_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
        if Self::frame_first(src) {
            // A chunk claiming 0x04224D18 bytes is not plausible; still, fall back to chunks.
            return Lz4Frame.decode_into(src, dst).or_else(|frame_err| {
                self.decode_chunks_into(src, dst).map_err(|_| {
                    CodecError::new(format!("LZ4 frame under the lz4 label: {frame_err}"))
                })
            });
        }
        self.decode_chunks_into(src, dst)
    }
    fn decode(&self, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
        if Self::frame_first(src) {
            return Lz4Frame.decode(src, expected).or_else(|frame_err| {
                self.decode_chunked(src, expected).map_err(|_| {
                    CodecError::new(format!("LZ4 frame under the lz4 label: {frame_err}"))
                })
            });
        }
        self.decode_chunked(src, expected)
    }
    /// Decodes only the chunks that overlap `range` (in parallel); `None` for an LZ4 frame
    /// stored under this label, which has no chunks to skip. Every chunk header is checked as
    /// for a whole decode.
    ///
    /// ```
    /// use array_codecs::{Codec, Lz4Chunked, LZ4_CHUNK_SIZE};
    /// let data: Vec<u8> = (0..3 * LZ4_CHUNK_SIZE as u32).map(|i| (i % 251) as u8).collect();
    /// let stored = Lz4Chunked.encode(&data, &Default::default()).unwrap();
    /// let r = LZ4_CHUNK_SIZE - 10..LZ4_CHUNK_SIZE + 10;
    /// let part = Lz4Chunked.decode_range(&stored, data.len(), r.clone()).unwrap().unwrap();
    /// assert_eq!(part, &data[r]);
    /// assert!(Lz4Chunked.decode_range(&stored, data.len(), 0..data.len() + 1).is_err());
    /// ```
    fn decode_range(
        &self,
        src: &[u8],
        expected: usize,
        range: std::ops::Range<usize>,
    ) -> Result<Option<Vec<u8>>, CodecError> {
        if Self::frame_first(src) {
            return Ok(None);
        }
        if range.start > range.end || range.end > expected {
            return Err(CodecError::new(format!(
                "decoded range {range:?} lies outside the block's {expected} bytes"
            )));
        }
        let mut parts = Vec::new();
        let mut at = 0usize;
        for (raw, size) in lz4_chunks(src, expected)? {
            let chunk = at..at + size;
            if chunk.start < range.end && range.start < chunk.end {
                parts.push((raw, chunk.clone()));
            }
            at = chunk.end;
        }
        let decoded: Vec<Vec<u8>> = parts
            .par_iter()
            .map(|(raw, chunk)| decode_sized_block(raw, chunk.len()))
            .collect::<Result<_, CodecError>>()?;
        let mut out = Vec::with_capacity(range.len());
        for ((_, chunk), bytes) in parts.iter().zip(&decoded) {
            let from = range.start.max(chunk.start) - chunk.start;
            let to = range.end.min(chunk.end) - chunk.start;
            out.extend_from_slice(&bytes[from..to]);
        }
        Ok(Some(out))
    }

    fn encode(&self, src: &[u8], _opts: &EncodeOptions) -> Result<Vec<u8>, CodecError> {
        let encode_chunk = |chunk: &[u8]| -> Result<Vec<u8>, CodecError> {
            let max = lz4_flex::block::get_maximum_output_size(chunk.len());
            let mut out = vec![0u8; 8 + max];
            let n = lz4_flex::block::compress_into(chunk, &mut out[8..])
                .map_err(|e| CodecError::new(format!("LZ4 block: {e}")))?;
            out.truncate(8 + n);
            out[0..4].copy_from_slice(&((n + 4) as u32).to_be_bytes());
            out[4..8].copy_from_slice(&(chunk.len() as u32).to_le_bytes());
            Ok(out)
        };
        let parts: Vec<Vec<u8>> = if src.len() > LZ4_CHUNK_SIZE {
            src.par_chunks(LZ4_CHUNK_SIZE)
                .map(encode_chunk)
                .collect::<Result<_, _>>()?
        } else if src.is_empty() {
            Vec::new()
        } else {
            vec![encode_chunk(src)?]
        };
        Ok(parts.concat())
    }
}

impl Lz4Chunked {
    fn decode_chunked(&self, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
        // lz4_chunks bounds every declared size by the LZ4 ratio of bytes actually present.
        lz4_chunks(src, expected)?;
        let mut out = array_core::zeroed_vec(expected)?;
        self.decode_chunks_into(src, &mut out)?;
        Ok(out)
    }
}
