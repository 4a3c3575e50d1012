//! Decoding helpers the stream codecs share, and [`read_exact_then_end`] for callers that
//! decode into a buffer of their own.

// The helpers each codec uses: a build with only some codecs leaves others unused.
#![cfg_attr(not(feature = "numcodecs"), allow(dead_code))]

use std::io::{self, Read};

use crate::api::CodecError;

/// Reads exactly `dst.len()` bytes from `r` and requires the stream to end there: a shorter
/// stream is a [`Short`](crate::CodecErrorKind::Short) error, a longer one [`Long`](crate::CodecErrorKind::Long).
pub fn read_exact_then_end<R: Read>(mut r: R, dst: &mut [u8]) -> Result<(), CodecError> {
    let mut filled = 0;
    while filled < dst.len() {
        match r.read(&mut dst[filled..]) {
            Ok(0) => return Err(CodecError::short(filled, dst.len())),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    ensure_end(r, dst.len())
}

fn ensure_end<R: Read>(mut r: R, expected: usize) -> Result<(), CodecError> {
    let mut probe = [0u8; 1];
    loop {
        match r.read(&mut probe) {
            Ok(0) => return Ok(()),
            Ok(_) => return Err(CodecError::long(expected)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Runs `fill` on `dst` with another core faulting in `dst`'s pages meanwhile
/// ([`array_core::fill_prefaulted`]) when the current rayon pool has a second thread (feature
/// `parallel`); a pool of one thread, or a build without the feature, fills on this core alone.
///
/// ```
/// let mut out = vec![0u8; 1 << 10];
/// array_codecs::io::fill_beside(&mut out, |d| d.fill(7));
/// assert!(out.iter().all(|&b| b == 7));
/// ```
pub fn fill_beside<R>(dst: &mut [u8], fill: impl FnOnce(&mut [u8]) -> R) -> R {
    #[cfg(feature = "parallel")]
    if rayon::current_num_threads() > 1 {
        return array_core::fill_prefaulted(dst, fill);
    }
    fill(dst)
}

/// A fresh buffer of `len` bytes that `fill` writes whole ([`fill_beside`]): how the codecs
/// that know their output size decode.
pub(crate) fn decode_fresh(
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<(), CodecError>,
) -> Result<Vec<u8>, CodecError> {
    let mut out = array_core::zeroed_vec(len)?;
    fill_beside(&mut out, fill)?;
    Ok(out)
}

/// Reads the whole stream, growing the output only as data arrives, and requires exactly
/// `expected` bytes. `src_len` sizes the first allocation.
pub(crate) fn read_growing<R: Read>(
    r: R,
    expected: usize,
    src_len: usize,
) -> Result<Vec<u8>, CodecError> {
    let first = expected.min(src_len.saturating_mul(4).max(1 << 16));
    let mut out = Vec::new();
    // Growing further (`read_to_end`) is fallible too: an allocation failure is an error.
    out.try_reserve_exact(first).map_err(|_| {
        CodecError::new(format!(
            "cannot allocate {first} bytes for the decoded data"
        ))
    })?;
    array_core::advise_huge_pages(&out);
    let limit = (expected as u64).saturating_add(1);
    r.take(limit).read_to_end(&mut out)?;
    if out.len() > expected {
        return Err(CodecError::long(expected));
    }
    if out.len() < expected {
        return Err(CodecError::short(out.len(), expected));
    }
    Ok(out)
}

pub(crate) fn level_u32(
    level: Option<i32>,
    default: u32,
    max: u32,
    codec: &str,
) -> Result<u32, CodecError> {
    match level {
        None => Ok(default),
        Some(l) if l >= 0 && l as u32 <= max => Ok(l as u32),
        Some(l) => Err(CodecError::new(format!(
            "{codec} level {l} is outside 0..={max}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::CodecErrorKind;

    #[test]
    fn exact_reads_tell_short_from_long() {
        let mut dst = [0u8; 4];
        assert_eq!(read_exact_then_end(&b"abcd"[..], &mut dst), Ok(()));
        assert_eq!(&dst, b"abcd");
        let short = read_exact_then_end(&b"abc"[..], &mut dst).unwrap_err();
        assert_eq!(short.kind, CodecErrorKind::Short);
        assert!(short.message.contains("after 3 decoded bytes, 4 expected"));
        let long = read_exact_then_end(&b"abcde"[..], &mut dst).unwrap_err();
        assert_eq!(long.kind, CodecErrorKind::Long);
    }

    #[test]
    fn growing_reads_tell_short_from_long() {
        assert_eq!(read_growing(&b"abcd"[..], 4, 4).unwrap(), b"abcd");
        let short = read_growing(&b"abc"[..], 4, 3).unwrap_err();
        assert_eq!(short.kind, CodecErrorKind::Short);
        let long = read_growing(&b"abcde"[..], 4, 5).unwrap_err();
        assert_eq!(long.kind, CodecErrorKind::Long);
    }
}
