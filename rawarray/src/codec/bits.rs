//! Julia `BitArray` chunks (flag bit 2): element `i` (column-major) is bit `i % 64` of the
//! `u64` chunk `i / 64`; unused high bits of the last chunk are zero.

use crate::error::{Error, Result};
use crate::kind::ByteOrder;

/// Number of `u64` chunks for `n` bits, i.e. `ceil(n / 64)`.
pub fn chunk_count(n: u64) -> u64 {
    n.div_ceil(64)
}

/// Unpacks `n` bits from `chunks` (8 bytes per chunk in `order`) into one 0/1 byte per element.
///
/// ```
/// use rawarray::{codec::bits, ByteOrder};
/// let chunk = 0x5249u64.to_le_bytes();
/// assert_eq!(bits::unpack(&chunk, 15, ByteOrder::Little, 0).unwrap(),
///            [1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 1]);
/// ```
pub fn unpack(chunks: &[u8], n: usize, order: ByteOrder, base_offset: u64) -> Result<Vec<u8>> {
    let need = chunk_count(n as u64).saturating_mul(8);
    if (chunks.len() as u64) < need {
        return Err(Error::CorruptData {
            encoding: "bit array",
            offset: base_offset,
            reason: format!(
                "{n} bits need {need} bytes of chunks, found {}",
                chunks.len()
            ),
        });
    }
    let mut out = Vec::with_capacity(n);
    for c in chunks.chunks_exact(8) {
        if out.len() >= n {
            break;
        }
        let mut b = [0u8; 8];
        b.copy_from_slice(c);
        let word = match order {
            ByteOrder::Little => u64::from_le_bytes(b),
            ByteOrder::Big => u64::from_be_bytes(b),
        };
        let take = (n - out.len()).min(64);
        out.extend((0..take).map(|i| ((word >> i) & 1) as u8));
    }
    Ok(out)
}

/// Packs 0/1 bytes into `u64` chunks in `order` (any non-zero byte counts as 1).
pub fn pack(bools: &[u8], order: ByteOrder) -> Vec<u8> {
    let mut out = Vec::with_capacity(bools.len().div_ceil(64) * 8);
    for group in bools.chunks(64) {
        let word = group
            .iter()
            .enumerate()
            .fold(0u64, |w, (i, &b)| w | (u64::from(b != 0) << i));
        out.extend_from_slice(&match order {
            ByteOrder::Little => word.to_le_bytes(),
            ByteOrder::Big => word.to_be_bytes(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for n in [0usize, 1, 63, 64, 65, 200] {
            let bools: Vec<u8> = (0..n).map(|i| ((i * 7 + i / 3) % 2) as u8).collect();
            for order in [ByteOrder::Little, ByteOrder::Big] {
                let packed = pack(&bools, order);
                assert_eq!(packed.len() as u64, chunk_count(n as u64) * 8);
                assert_eq!(unpack(&packed, n, order, 0).unwrap(), bools);
            }
        }
        assert!(unpack(&[0; 8], 65, ByteOrder::Little, 0).is_err());
    }
}
