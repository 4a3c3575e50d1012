//! RawArray.jl's `FLAG_ENCODED` data: one unsigned LEB128 varint per element, in column-major
//! order; signed integers are zigzag-mapped first (`(n << 1) ^ (n >> (bits - 1))`).

use crate::error::{Error, Result};

/// Encodes `n = le_bytes.len() / width` little-endian integers of `width` bytes (1..=16).
///
/// ```
/// use rawarray::codec::leb128;
/// let vals: Vec<u8> = [0i16, -1, 1, -64, 64, -300].iter().flat_map(|v| v.to_le_bytes()).collect();
/// assert_eq!(leb128::encode(&vals, 2, true), [0x00, 0x01, 0x02, 0x7f, 0x80, 0x01, 0xd7, 0x04]);
/// ```
pub fn encode(le_bytes: &[u8], width: usize, signed: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(le_bytes.len());
    if width == 0 || width > 16 {
        return out;
    }
    for chunk in le_bytes.chunks_exact(width) {
        let mut buf = [0u8; 16];
        buf[..width].copy_from_slice(chunk);
        let mut v = u128::from_le_bytes(buf);
        if signed {
            // Sign-extend to 128 bits, then zigzag; the result fits in `width * 8` bits.
            let shift = 128 - 8 * width as u32;
            let n = ((v << shift) as i128) >> shift;
            v = ((n << 1) ^ (n >> 127)) as u128;
        }
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
    }
    out
}

/// Decodes exactly `n` varints from `input` into `n * width` little-endian bytes.
///
/// Returns the decoded bytes and the number of input bytes consumed (the rest is trailing
/// metadata). Strict: a varint that does not fit in `width` bytes, an over-long encoding, a bool
/// other than 0/1 (`bool_values`) or running out of input is an error at the byte offset
/// `base_offset + position`.
pub fn decode(
    input: &[u8],
    n: usize,
    width: usize,
    signed: bool,
    bool_values: bool,
    base_offset: u64,
) -> Result<(Vec<u8>, usize)> {
    let err = |pos: usize, reason: String| Error::CorruptData {
        encoding: "LEB128",
        offset: base_offset + pos as u64,
        reason,
    };
    if width == 0 || width > 16 {
        return Err(err(0, format!("unsupported element width {width}")));
    }
    // Each varint takes at least one byte: check before allocating for the output.
    if n > input.len() {
        return Err(err(
            input.len(),
            format!(
                "{n} elements need at least {n} bytes of varints, only {} present",
                input.len()
            ),
        ));
    }
    let out_len = n.checked_mul(width).ok_or(Error::SizeOverflow {
        what: "the decoded LEB128 data",
    })?;
    let mut out = Vec::with_capacity(out_len);
    let bits = 8 * width as u32;
    let max_groups = bits.div_ceil(7) as usize;
    let mut pos = 0usize;
    for i in 0..n {
        let start = pos;
        let mut v = varint(input, &mut pos, max_groups, bits).map_err(|(at, what)| match what {
            Some(what) => err(at, format!("varint {i}{what}")),
            None => err(at, format!("input ends inside varint {i} of {n}")),
        })?;
        if bits < 128 && v >> bits != 0 {
            return Err(err(
                start,
                format!("varint {i} = {v} does not fit in {bits} bits"),
            ));
        }
        if signed {
            v = (v >> 1) ^ 0u128.wrapping_sub(v & 1);
        }
        if bool_values && v > 1 {
            return Err(err(
                start,
                format!("Bool element {i} decodes to {v}, not 0 or 1"),
            ));
        }
        out.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    Ok((out, pos))
}

/// The varint at `*pos` (moved past it) as an unsigned value of at most `bits` bits in at most
/// `max_groups` bytes; on failure, the offset to report and what follows "varint i" in the
/// message (`None`: the input ends inside it).
fn varint(
    input: &[u8],
    pos: &mut usize,
    max_groups: usize,
    bits: u32,
) -> std::result::Result<u128, (usize, Option<String>)> {
    let start = *pos;
    let mut v: u128 = 0;
    let mut shift = 0u32;
    loop {
        let Some(&b) = input.get(*pos) else {
            return Err((*pos, None));
        };
        *pos += 1;
        if *pos - start > max_groups {
            return Err((start, Some(format!(" is longer than {max_groups} bytes"))));
        }
        let group = u128::from(b & 0x7f);
        if shift > 121 && group >> (128 - shift) != 0 {
            return Err((start, Some(format!(" does not fit in {bits} bits"))));
        }
        v |= group << shift;
        if b & 0x80 == 0 {
            if b == 0 && *pos - start > 1 {
                return Err((start, Some(" is over-long (ends in a zero group)".into())));
            }
            return Ok(v);
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_all_widths() {
        for width in [1usize, 2, 4, 8, 16] {
            for signed in [false, true] {
                let mut vals = Vec::new();
                for k in 0..200u32 {
                    let mut b = [0u8; 16];
                    let x = (k as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835)
                        >> (k % 128);
                    b.copy_from_slice(&x.to_le_bytes());
                    vals.extend_from_slice(&b[..width]);
                }
                // Extremes.
                vals.extend_from_slice(&[0xff; 16][..width]);
                let mut min = [0u8; 16];
                min[width - 1] = 0x80;
                vals.extend_from_slice(&min[..width]);
                let enc = encode(&vals, width, signed);
                let n = vals.len() / width;
                let (dec, used) = decode(&enc, n, width, signed, false, 0).unwrap();
                assert_eq!(used, enc.len());
                assert_eq!(dec, vals, "width {width} signed {signed}");
            }
        }
    }

    #[test]
    fn known_vectors() {
        let u: Vec<u8> = [0u32, 127, 128, 300000]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            encode(&u, 4, false),
            [0x00, 0x7f, 0x80, 0x01, 0xe0, 0xa7, 0x12]
        );
        assert_eq!(encode(&[0x80], 1, true), [0xff, 0x01]); // -128 -> 255
    }

    #[test]
    fn strictness() {
        // Out of range for u8.
        assert!(decode(&[0x80, 0x02], 1, 1, false, false, 0).is_err());
        // Over-long encoding of 0.
        assert!(decode(&[0x80, 0x00], 1, 4, false, false, 0).is_err());
        // Truncated.
        match decode(&[0x80], 1, 4, false, false, 10) {
            Err(Error::CorruptData { offset: 11, .. }) => {}
            other => panic!("{other:?}"),
        }
        // More elements than bytes: refused before allocating.
        assert!(decode(&[0; 4], usize::MAX, 16, false, false, 0).is_err());
        // Bool out of range.
        assert!(decode(&[2], 1, 1, false, true, 0).is_err());
        // Trailing bytes are not consumed.
        let (v, used) = decode(&[5, 6, 0xff, 0xff], 2, 1, false, false, 0).unwrap();
        assert_eq!((v, used), (vec![5, 6], 2));
    }
}
