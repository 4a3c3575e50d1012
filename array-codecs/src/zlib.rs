//! `zlib`: one zlib (RFC 1950) stream.
//!
//! Blocks are decoded and encoded whole by libdeflate (`libdeflater`): an ASDF block declares
//! its decoded size, so the one-shot API applies, and it inflates 1.4× and deflates 2.7× faster
//! than the streaming zlib-rs (`flate2`) on float data at level 6. `flate2` stays for streams of
//! unknown size ([`decoder`]).

use std::cell::RefCell;

use libdeflater::{CompressionLvl, Compressor, Decompressor};

use crate::api::{Codec, CodecError, EncodeOptions};
use crate::io::{level_u32, read_exact_then_end};
use crate::Label;

/// A reader of the data decoded from the zlib stream `src`, for callers with their own size
/// policy (awkward0's `zlib.decompress` blobs).
pub fn decoder(src: &[u8]) -> impl std::io::Read + '_ {
    flate2::bufread::ZlibDecoder::new(src)
}

/// The highest level, as zlib's (libdeflate goes to 12; files name zlib's levels).
const MAX_LEVEL: u32 = 9;

thread_local! {
    // libdeflate's state is allocated once per thread, not per block: a compressor's tables are
    // hundreds of kilobytes, and a file of thousands of small arrays would allocate each.
    static DECOMPRESSOR: RefCell<Option<Decompressor>> = const { RefCell::new(None) };
    static COMPRESSORS: RefCell<[Option<Compressor>; MAX_LEVEL as usize + 1]> =
        RefCell::new(Default::default());
}

/// The container around a deflate stream.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Framing {
    /// RFC 1950 (`zlib.compress`).
    Zlib,
    /// One RFC 1952 member (`gzip.compress`, numcodecs' `gzip`).
    #[cfg_attr(not(feature = "numcodecs"), allow(dead_code))]
    Gzip,
}

impl Framing {
    fn name(self) -> &'static str {
        match self {
            Framing::Zlib => "zlib",
            Framing::Gzip => "gzip",
        }
    }
}

/// Inflates `src` into exactly `dst`. A stream libdeflate does not decode to exactly
/// `dst.len()` bytes (rare: damaged data or a wrong size) is read again by the streaming
/// decoder, which says exactly why (short, long, or its own diagnosis of the damage), so
/// refusals read as they did before libdeflate.
pub(crate) fn inflate_into(framing: Framing, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    let inflated = DECOMPRESSOR.with_borrow_mut(|d| {
        let d = d.get_or_insert_with(Decompressor::new);
        match framing {
            Framing::Zlib => d.zlib_decompress(src, dst),
            Framing::Gzip => d.gzip_decompress(src, dst),
        }
    });
    match (inflated, framing) {
        (Ok(n), _) if n == dst.len() => Ok(()),
        (_, Framing::Zlib) => read_exact_then_end(decoder(src), dst),
        (_, Framing::Gzip) => read_exact_then_end(flate2::bufread::GzDecoder::new(src), dst),
    }
}

/// Exactly `expected` bytes inflated from `src`, refused before allocating when deflate's
/// ratio bound says `src` cannot hold them.
pub(crate) fn inflate_exact(
    framing: Framing,
    src: &[u8],
    expected: usize,
) -> Result<Vec<u8>, CodecError> {
    let bound = array_core::bounds::deflate_max_decoded_usize(src.len());
    if expected > bound {
        return Err(CodecError::new(format!(
            "{} bytes of {} data cannot decode to the {expected} bytes declared",
            src.len(),
            framing.name()
        )));
    }
    crate::io::decode_fresh(expected, |out| inflate_into(framing, src, out))
}

/// `zlib`: one zlib stream (what Python's `zlib.compress` writes).
#[derive(Debug, Clone, Copy, Default)]
pub struct Zlib;

impl Codec for Zlib {
    fn label(&self) -> Label {
        Label(*b"zlib")
    }
    fn name(&self) -> &str {
        "zlib"
    }
    fn decode_into(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
        inflate_into(Framing::Zlib, src, dst)
    }
    fn decode(&self, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecError> {
        inflate_exact(Framing::Zlib, src, expected)
    }
    fn encode(&self, src: &[u8], opts: &EncodeOptions) -> Result<Vec<u8>, CodecError> {
        let level = level_u32(opts.level, 6, MAX_LEVEL, "zlib")?;
        COMPRESSORS.with_borrow_mut(|cache| {
            let c = cache[level as usize].get_or_insert_with(|| {
                let lvl = CompressionLvl::new(level as i32).unwrap_or_default();
                Compressor::new(lvl)
            });
            // Zeroed memory comes from the kernel untouched: only the pages written cost.
            let mut out = array_core::zeroed_vec::<u8>(c.zlib_compress_bound(src.len()))?;
            let n = c
                .zlib_compress(src, &mut out)
                .map_err(|e| CodecError::new(format!("zlib: {e}")))?;
            out.truncate(n);
            out.shrink_to_fit();
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::api::CodecErrorKind;

    /// Data that compresses part-way, like float arrays do.
    fn sample(len: usize) -> Vec<u8> {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        (0..len)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 3 == 0 {
                    x as u8
                } else {
                    (i / 64) as u8
                }
            })
            .collect()
    }

    /// What the streaming decoder (flate2 on zlib-rs, the behaviour before libdeflate) makes of
    /// `src` when `expected` bytes are declared: the data, or the kind of error.
    fn streaming(framing: Framing, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecErrorKind> {
        let mut out = Vec::new();
        let limit = expected as u64 + 1;
        let read = match framing {
            Framing::Zlib => decoder(src).take(limit).read_to_end(&mut out),
            Framing::Gzip => flate2::bufread::GzDecoder::new(src)
                .take(limit)
                .read_to_end(&mut out),
        };
        match read {
            Err(_) => Err(CodecErrorKind::Invalid),
            Ok(_) if out.len() > expected => Err(CodecErrorKind::Long),
            Ok(_) if out.len() < expected => Err(CodecErrorKind::Short),
            Ok(_) => Ok(out),
        }
    }

    fn one_shot(framing: Framing, src: &[u8], expected: usize) -> Result<Vec<u8>, CodecErrorKind> {
        inflate_exact(framing, src, expected).map_err(|e| e.kind)
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
        std::io::Write::write_all(&mut enc, data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn every_level_writes_streams_the_streaming_decoder_reads() {
        for len in [0, 1, 100, 70_000] {
            let data = sample(len);
            for level in 0..=9 {
                let opts = EncodeOptions {
                    level: Some(level),
                    ..EncodeOptions::default()
                };
                let z = Zlib.encode(&data, &opts).unwrap();
                let what = format!("level {level}, {len} B");
                assert_eq!(
                    streaming(Framing::Zlib, &z, len),
                    Ok(data.clone()),
                    "{what}"
                );
                assert_eq!(one_shot(Framing::Zlib, &z, len), Ok(data.clone()), "{what}");
            }
        }
        let too_high = EncodeOptions {
            level: Some(10),
            ..EncodeOptions::default()
        };
        assert!(Zlib.encode(b"x", &too_high).is_err());
    }

    /// The one-shot decoder agrees with the streaming one, for both framings, on every
    /// truncation, every byte changed, trailing bytes and wrong declared sizes of a stream: the
    /// same data, or an error of the same kind.
    #[test]
    fn one_shot_decoding_agrees_with_streaming_on_damaged_streams() {
        let data = sample(3000);
        let zlib = Zlib.encode(&data, &EncodeOptions::default()).unwrap();
        for (framing, z) in [(Framing::Zlib, zlib), (Framing::Gzip, gzip(&data))] {
            let agree = |src: &[u8], expected: usize, what: &str| {
                let a = one_shot(framing, src, expected);
                let b = streaming(framing, src, expected);
                assert_eq!(a, b, "{framing:?}, {what}");
            };
            agree(&z, data.len(), "intact");
            for cut in 0..z.len() {
                agree(&z[..cut], data.len(), &format!("cut at {cut}"));
            }
            for at in 0..z.len() {
                for flip in [0x01, 0x80, 0xff] {
                    let mut bad = z.clone();
                    bad[at] ^= flip;
                    agree(&bad, data.len(), &format!("byte {at} ^ {flip:#x}"));
                }
            }
            let mut trailing = z.clone();
            trailing.extend_from_slice(b"trailing bytes");
            agree(&trailing, data.len(), "trailing bytes");
            for expected in [0, 1, data.len() - 1, data.len() + 1, 2 * data.len()] {
                agree(&z, expected, &format!("{expected} bytes declared"));
            }
        }
    }

    #[test]
    fn wrong_sizes_say_which_way_they_are_wrong() {
        let z = Zlib
            .encode(&sample(500), &EncodeOptions::default())
            .unwrap();
        let short = Zlib.decode(&z, 501).unwrap_err();
        assert_eq!(short.kind, CodecErrorKind::Short);
        assert!(short.message.contains("after 500 decoded bytes"), "{short}");
        assert_eq!(Zlib.decode(&z, 499).unwrap_err().kind, CodecErrorKind::Long);
        let mut bad = z.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1; // the Adler-32 checksum
        let e = Zlib.decode(&bad, 500).unwrap_err();
        assert_eq!(e.kind, CodecErrorKind::Invalid);
        assert!(e.message.contains("corrupt"), "{e}");
    }
}
