//! The binary block header: magic, `header_size`, flags, label, sizes and MD5, all big-endian.

use crate::error::{BlockError, Result};
use crate::Label;

/// The 4 bytes that start every block: `\xd3BLK` (invalid UTF-8, so never inside the YAML tree).
pub const BLOCK_MAGIC: [u8; 4] = [0xd3, b'B', b'L', b'K'];

/// Size of the fixed header fields that follow the magic and the `header_size` field.
pub const MIN_HEADER_SIZE: u16 = 48;

/// Bytes from the magic to the end of a header with `header_size == 48`.
pub const HEADER_LEN: usize = 6 + MIN_HEADER_SIZE as usize;

/// Flag bit: the block is streamed (runs to the end of the file, sizes are not meaningful).
pub const FLAG_STREAMED: u32 = 0x1;

/// A decoded block header.
///
/// ```
/// use asdf_block::{BlockHeader, Label};
/// let h = BlockHeader::new(Label(*b"zlib"), 10, 4, [0; 16]);
/// let bytes = h.to_bytes();
/// assert_eq!(bytes.len(), 54);
/// assert_eq!(BlockHeader::parse(&bytes, 0, 0).unwrap(), h);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockHeader {
    /// Size of the header after the magic and this field; at least 48. Bytes past the 48 fixed
    /// ones are padding (this crate uses them to align block data).
    pub header_size: u16,
    /// Flag bits; see [`FLAG_STREAMED`]. Unknown bits are kept and ignored.
    pub flags: u32,
    /// The compression label.
    pub compression: Label,
    /// Bytes reserved for the block's data after the header.
    pub allocated_size: u64,
    /// Bytes of the reserved space that hold data (the compressed size when compressed).
    pub used_size: u64,
    /// Size of the decoded data.
    pub data_size: u64,
    /// MD5 digest of the stored bytes; all zeros means "no checksum".
    pub checksum: [u8; 16],
}

impl BlockHeader {
    /// A header for `used_size` stored bytes that decode to `data_size` bytes, no padding.
    pub fn new(compression: Label, data_size: u64, used_size: u64, checksum: [u8; 16]) -> Self {
        BlockHeader {
            header_size: MIN_HEADER_SIZE,
            flags: 0,
            compression,
            allocated_size: used_size,
            used_size,
            data_size,
            checksum,
        }
    }

    /// The header of a streamed block: flag set, sizes and checksum zero, uncompressed.
    pub fn streamed() -> Self {
        BlockHeader {
            header_size: MIN_HEADER_SIZE,
            flags: FLAG_STREAMED,
            compression: Label::NONE,
            allocated_size: 0,
            used_size: 0,
            data_size: 0,
            checksum: [0; 16],
        }
    }

    /// Parses a header from `bytes`, which start at the block magic. `offset` (the magic's file
    /// offset) and `block` (its index) only serve the error messages.
    ///
    /// `bytes` may be longer than the header; it must hold at least the 54 fixed bytes, and the
    /// whole `6 + header_size` bytes for the header to be complete.
    pub fn parse(bytes: &[u8], offset: u64, block: usize) -> Result<BlockHeader> {
        let magic = bytes.get(..4).unwrap_or(bytes);
        if magic != BLOCK_MAGIC {
            return Err(BlockError::BadMagic {
                offset,
                found: magic.to_vec(),
            });
        }
        let truncated = |needed: usize| BlockError::TruncatedHeader {
            block,
            offset,
            needed: needed as u64,
            available: bytes.len() as u64,
        };
        let fixed = bytes
            .get(..HEADER_LEN)
            .ok_or_else(|| truncated(HEADER_LEN))?;
        let header_size = u16::from_be_bytes([fixed[4], fixed[5]]);
        if header_size < MIN_HEADER_SIZE {
            return Err(BlockError::HeaderTooSmall {
                block,
                offset,
                header_size,
            });
        }
        let full = 6 + header_size as usize;
        if bytes.len() < full {
            return Err(truncated(full));
        }
        let u32_at =
            |i: usize| u32::from_be_bytes([fixed[i], fixed[i + 1], fixed[i + 2], fixed[i + 3]]);
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&fixed[i..i + 8]);
            u64::from_be_bytes(b)
        };
        let mut compression = [0u8; 4];
        compression.copy_from_slice(&fixed[10..14]);
        let mut checksum = [0u8; 16];
        checksum.copy_from_slice(&fixed[38..54]);
        Ok(BlockHeader {
            header_size,
            flags: u32_at(6),
            compression: Label(compression),
            allocated_size: u64_at(14),
            used_size: u64_at(22),
            data_size: u64_at(30),
            checksum,
        })
    }

    /// The header's bytes: magic, fields, then `header_size - 48` zero bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.total_len());
        out.extend_from_slice(&BLOCK_MAGIC);
        out.extend_from_slice(&self.header_size.max(MIN_HEADER_SIZE).to_be_bytes());
        out.extend_from_slice(&self.flags.to_be_bytes());
        out.extend_from_slice(&self.compression.0);
        out.extend_from_slice(&self.allocated_size.to_be_bytes());
        out.extend_from_slice(&self.used_size.to_be_bytes());
        out.extend_from_slice(&self.data_size.to_be_bytes());
        out.extend_from_slice(&self.checksum);
        out.resize(self.total_len(), 0);
        out
    }

    /// Bytes from the magic to the first data byte: `6 + header_size`.
    pub fn total_len(&self) -> usize {
        6 + self.header_size.max(MIN_HEADER_SIZE) as usize
    }

    /// Whether the STREAMED flag is set.
    pub fn is_streamed(&self) -> bool {
        self.flags & FLAG_STREAMED != 0
    }

    /// Whether the header carries a checksum (not all zeros).
    pub fn has_checksum(&self) -> bool {
        self.checksum != [0; 16]
    }

    /// Whether the data is compressed (label not all zeros).
    pub fn is_compressed(&self) -> bool {
        !self.compression.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_extra_header_bytes() {
        let mut h = BlockHeader::new(Label(*b"bzp2"), 1000, 77, [7; 16]);
        h.header_size = 58;
        h.allocated_size = 100;
        let bytes = h.to_bytes();
        assert_eq!(bytes.len(), 64);
        assert!(bytes[54..].iter().all(|&b| b == 0));
        assert_eq!(BlockHeader::parse(&bytes, 0, 0).unwrap(), h);
    }

    #[test]
    fn big_endian_fields_at_their_offsets() {
        let h = BlockHeader {
            header_size: 48,
            flags: 1,
            compression: Label(*b"zstd"),
            allocated_size: 0x0102030405060708,
            used_size: 2,
            data_size: 3,
            checksum: [0xab; 16],
        };
        let b = h.to_bytes();
        assert_eq!(&b[0..4], b"\xd3BLK");
        assert_eq!(&b[4..6], &[0, 48]);
        assert_eq!(&b[6..10], &[0, 0, 0, 1]);
        assert_eq!(&b[10..14], b"zstd");
        assert_eq!(&b[14..22], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(b[29], 2);
        assert_eq!(b[37], 3);
        assert_eq!(&b[38..54], &[0xab; 16]);
        assert!(BlockHeader::parse(&b, 0, 0).unwrap().is_streamed());
    }

    #[test]
    fn errors_name_offset_and_problem() {
        let h = BlockHeader::new(Label::NONE, 0, 0, [0; 16]).to_bytes();
        let e = BlockHeader::parse(&h[..20], 99, 3).unwrap_err();
        assert!(
            matches!(
                e,
                BlockError::TruncatedHeader {
                    block: 3,
                    offset: 99,
                    needed: 54,
                    available: 20
                }
            ),
            "{e}"
        );
        let mut small = h.clone();
        small[5] = 47;
        let e = BlockHeader::parse(&small, 7, 0).unwrap_err();
        assert!(
            matches!(
                e,
                BlockError::HeaderTooSmall {
                    header_size: 47,
                    offset: 7,
                    ..
                }
            ),
            "{e}"
        );
        let mut big = h.clone();
        big[5] = 60; // declares 12 extra header bytes that are not there
        let e = BlockHeader::parse(&big, 0, 0).unwrap_err();
        assert!(
            matches!(e, BlockError::TruncatedHeader { needed: 66, .. }),
            "{e}"
        );
        let e = BlockHeader::parse(b"\xd3BLX", 5, 0).unwrap_err();
        assert!(e.to_string().contains("byte offset 5"), "{e}");
    }
}
