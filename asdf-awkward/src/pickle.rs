//! A non-executing decoder for the one pickle shape awkward0 writes into schemas: a single
//! scalar (`None`, `bool`, `int`, `float` — e.g. a `SparseArray` default of NaN). Only the
//! opcodes that build such a scalar are understood; anything else (`GLOBAL`, `REDUCE`, ...) is
//! refused, so nothing is ever imported or called.

/// A scalar recovered from a pickle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PyScalar {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
}

fn b64_value(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => (c - b'A') as u32,
        b'a'..=b'z' => (c - b'a' + 26) as u32,
        b'0'..=b'9' => (c - b'0' + 52) as u32,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    })
}

/// Standard base64 with `=` padding (what Python's `base64.b64encode` gives).
pub(crate) fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=').as_bytes();
    if s.len() > 1 << 16 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in s {
        acc = (acc << 6) | b64_value(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Standard base64 with padding.
pub(crate) fn base64_encode(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for chunk in b.chunks(3) {
        let n = chunk.len();
        let v = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= n {
                out.push(A[((v >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `pickle.dumps(x)` (protocol 4, as CPython 3.8+ writes it) of a float, base64-encoded: what
/// awkward0 stores for defaults JSON cannot represent (NaN, ±inf).
pub(crate) fn pickle_float_b64(x: f64) -> String {
    let mut p = vec![0x80, 4, 0x95, 10, 0, 0, 0, 0, 0, 0, 0, b'G'];
    p.extend_from_slice(&x.to_be_bytes());
    p.push(b'.');
    base64_encode(&p)
}

/// Decodes a pickle holding exactly one scalar; `None` for anything else.
pub(crate) fn decode_scalar(p: &[u8]) -> Option<PyScalar> {
    let mut i = 0;
    let take = |i: &mut usize, n: usize| -> Option<&[u8]> {
        let s = p.get(*i..i.checked_add(n)?)?;
        *i += n;
        Some(s)
    };
    let mut value: Option<PyScalar> = None;
    loop {
        let op = *take(&mut i, 1)?.first()?;
        let v = match op {
            0x80 if i == 1 => {
                take(&mut i, 1)?;
                continue;
            }
            0x95 => {
                take(&mut i, 8)?;
                continue;
            }
            b'.' => return if i == p.len() { value } else { None },
            b'N' => PyScalar::None,
            0x88 => PyScalar::Bool(true),
            0x89 => PyScalar::Bool(false),
            b'K' => PyScalar::Int(take(&mut i, 1)?[0] as i64),
            b'M' => {
                let b = take(&mut i, 2)?;
                PyScalar::Int(u16::from_le_bytes([b[0], b[1]]) as i64)
            }
            b'J' => {
                let b = take(&mut i, 4)?;
                PyScalar::Int(i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64)
            }
            0x8a => {
                let n = take(&mut i, 1)?[0] as usize;
                if n == 0 || n > 8 {
                    return None;
                }
                let b = take(&mut i, n)?;
                let neg = b[n - 1] & 0x80 != 0;
                let mut full = if neg { [0xffu8; 8] } else { [0u8; 8] };
                full[..n].copy_from_slice(b);
                PyScalar::Int(i64::from_le_bytes(full))
            }
            b'G' => {
                let b = take(&mut i, 8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                PyScalar::Float(f64::from_be_bytes(a))
            }
            _ => return None,
        };
        if value.replace(v).is_some() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(b64: &str) -> Option<PyScalar> {
        decode_scalar(&base64_decode(b64)?)
    }

    /// Pickles made by CPython 3.11 `pickle.dumps` (protocol 4).
    #[test]
    fn scalars() {
        assert!(
            matches!(dec("gASVCgAAAAAAAABHf/gAAAAAAAAu"), Some(PyScalar::Float(f)) if f.is_nan())
        );
        assert_eq!(
            dec("gASVCgAAAAAAAABHf/AAAAAAAAAu"),
            Some(PyScalar::Float(f64::INFINITY))
        );
        assert_eq!(
            dec("gASVCgAAAAAAAABH//AAAAAAAAAu"),
            Some(PyScalar::Float(f64::NEG_INFINITY))
        );
        assert_eq!(
            dec("gASVCgAAAAAAAABHP/gAAAAAAAAu"),
            Some(PyScalar::Float(1.5))
        );
        assert_eq!(dec("gARLAy4="), Some(PyScalar::Int(3)));
        assert_eq!(dec("gASILg=="), Some(PyScalar::Bool(true)));
        assert_eq!(dec("gAROLg=="), Some(PyScalar::None));
        assert_eq!(
            dec("gASVCQAAAAAAAACKBgAAAAAAAS4="),
            Some(PyScalar::Int(1 << 40))
        );
        assert_eq!(dec("gASVBgAAAAAAAABK+f///y4="), Some(PyScalar::Int(-7)));
        assert_eq!(dec("gASVBAAAAAAAAABNLAEu"), Some(PyScalar::Int(300)));
    }

    #[test]
    fn encoding_matches_cpython() {
        assert_eq!(pickle_float_b64(f64::NAN), "gASVCgAAAAAAAABHf/gAAAAAAAAu");
        assert_eq!(
            pickle_float_b64(f64::NEG_INFINITY),
            "gASVCgAAAAAAAABH//AAAAAAAAAu"
        );
        for n in 0..8 {
            let v: Vec<u8> = (0..n).map(|i| (i * 71 + 5) as u8).collect();
            assert_eq!(base64_decode(&base64_encode(&v)).unwrap(), v);
        }
        assert_eq!(base64_encode(b"ab"), "YWI=");
    }

    #[test]
    fn everything_else_is_refused() {
        // pickle.dumps(os.system): protocol 4 with STACK_GLOBAL.
        assert_eq!(dec("gASVFAAAAAAAAACMBXBvc2l4lIwGc3lzdGVtlJOULg=="), None);
        // Protocol 0 GLOBAL 'cos\nsystem\n'.
        assert_eq!(decode_scalar(b"cos\nsystem\n(S'echo'\ntR."), None);
        // Two values, trailing bytes, truncation, bad base64.
        assert_eq!(decode_scalar(&[0x80, 4, b'N', b'N', b'.']), None);
        assert_eq!(decode_scalar(&[0x80, 4, b'N', b'.', 0]), None);
        assert_eq!(decode_scalar(&[0x80, 4, b'G', 1, 2]), None);
        assert_eq!(decode_scalar(&[]), None);
        assert_eq!(dec("!!!"), None);
    }
}
