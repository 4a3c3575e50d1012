//! Each codec's raw speed: the compression library alone on one whole buffer, one thread, at
//! the level our writer and Python asdf use by default.

use std::io::{Read, Write};

use asdf::block::{Blosc, Codec, EncodeOptions};

use crate::measure::{best, BenchError, Result};

/// `(compress seconds, decompress seconds)` of `codec` on the little-endian bytes of `data`.
pub fn codec(codec: &str, data: &[f64]) -> Result<(f64, f64)> {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    let n = bytes.len();
    let lib = |e: std::io::Error| BenchError::peer("codec library", e);
    let (c, packed) = best(|| match codec {
        "zlib" => {
            let lvl = libdeflater::CompressionLvl::new(6)
                .map_err(|e| BenchError::peer("libdeflate", format!("{e:?}")))?;
            let mut c = libdeflater::Compressor::new(lvl);
            let mut out = vec![0u8; c.zlib_compress_bound(n)];
            let k = c
                .zlib_compress(&bytes, &mut out)
                .map_err(|e| BenchError::peer("libdeflate", e))?;
            out.truncate(k);
            Ok(out)
        }
        "bzp2" => {
            let mut enc =
                bzip2::write::BzEncoder::new(Vec::with_capacity(n / 2), bzip2::Compression::new(9));
            enc.write_all(&bytes).map_err(lib)?;
            enc.finish().map_err(lib)
        }
        "lz4" => Ok(lz4_flex::block::compress(&bytes)),
        "zstd" => zstd::bulk::compress(&bytes, 3).map_err(lib),
        other => registry_codec(other)?
            .encode(
                &bytes,
                &EncodeOptions {
                    typesize: 8,
                    ..EncodeOptions::default()
                },
            )
            .map_err(BenchError::ours),
    })?;
    let (d, out) = best(|| {
        let mut out = vec![0u8; n];
        match codec {
            "zlib" => {
                let got = libdeflater::Decompressor::new()
                    .zlib_decompress(&packed, &mut out)
                    .map_err(|e| BenchError::peer("libdeflate", e))?;
                if got != n {
                    return Err(BenchError::mismatch("zlib limit", "short output"));
                }
            }
            "bzp2" => bzip2::read::BzDecoder::new(&packed[..])
                .read_exact(&mut out)
                .map_err(lib)?,
            "lz4" => {
                let got = lz4_flex::block::decompress_into(&packed, &mut out)
                    .map_err(|e| BenchError::peer("lz4_flex", e))?;
                if got != n {
                    return Err(BenchError::mismatch("lz4 limit", "short output"));
                }
            }
            "zstd" => {
                zstd::bulk::decompress_to_buffer(&packed, &mut out).map_err(lib)?;
            }
            other => registry_codec(other)?
                .decode_into(&packed, &mut out)
                .map_err(BenchError::ours)?,
        }
        Ok(out)
    })?;
    if out != bytes {
        return Err(BenchError::mismatch(
            "codec limit",
            format!("{codec} round trip changed the data"),
        ));
    }
    Ok((c, d))
}

/// A codec of `asdf-block` (for blosc, whose C library has no other binding here: the
/// `asdf-block` codec is a thin wrapper over `blosc_compress_ctx`/`blosc_decompress_ctx`).
fn registry_codec(name: &str) -> Result<&'static dyn Codec> {
    match name {
        "blsc" => Ok(&Blosc),
        other => Err(BenchError::ours(format!("no raw limit for codec {other}"))),
    }
}
