//! numpy leaves: `numpy.frombuffer` (with the in-place fast path) and the decompressors.

use std::borrow::Cow;
use std::io::Read;
use std::sync::Arc;

use array_codecs::CodecErrorKind;
use serde_json::Value as Json;

use crate::call::{schema_err_s, short, Args, Val};
use crate::dtype::{DType, Primitive};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::numpy::{Buffer, NumpyArray};

use super::dispatch::Ctor;
use super::expr::{kind_of, Eval, Kind, Loc};

impl<'a> Eval<'a> {
    /// The fast path of `numpy.frombuffer` for the two shapes awkward0 writes — a plain `read`,
    /// or `zlib.decompress` of a plain `read` — filling a typed array in place from the store
    /// or the zlib stream, with no intermediate copy. `None` means "not that shape": the general
    /// path evaluates it instead.
    pub(super) fn direct_leaf(
        &mut self,
        expr: &'a Json,
        dtype: &DType,
        count: Option<u64>,
        loc: &Loc<'_>,
    ) -> Result<Option<Val<'a>>> {
        let Json::Object(o) = expr else {
            return Ok(None);
        };
        if o.contains_key("id") || matches!(dtype.primitive, Primitive::Bool) {
            return Ok(None);
        }
        let Some(eb) = dtype.element_bytes().filter(|&e| e > 0).map(|e| e as u64) else {
            return Ok(None);
        };
        let ceiling = self.ceiling();
        let leaf = match kind_of(o) {
            Some(Kind::Read) => self.read_leaf(o, dtype, eb, count, ceiling, loc)?,
            Some(Kind::Call) => self.zlib_leaf(o, dtype, eb, count, loc)?,
            _ => None,
        };
        let Some((mut buf, count)) = leaf else {
            return Ok(None);
        };
        buf.fix_order(dtype.order);
        let leaf = NumpyArray::from_parts(dtype, buf, count as usize);
        Ok(Some(self.leaf_val(leaf)))
    }

    /// [`direct_leaf`](Self::direct_leaf) of a plain `read`: `count` elements of `eb` bytes
    /// (all the blob holds when `count` is `None`) read from the store into a typed buffer.
    fn read_leaf(
        &mut self,
        o: &'a serde_json::Map<String, Json>,
        dtype: &DType,
        eb: u64,
        count: Option<u64>,
        ceiling: u64,
        loc: &Loc<'_>,
    ) -> Result<Option<(Buffer, u64)>> {
        self.bump(loc)?;
        let name = self.blob_name(o, loc)?;
        let size = self.store.size(&name)?.ok_or_else(|| Error::MissingBlob {
            name: name.to_string(),
        })?;
        if size > ceiling {
            return Err(Error::Limit {
                location: format!("{loc} (blob {name:?})"),
                what: "blob size in bytes",
                value: size,
                limit: ceiling,
            });
        }
        let count = match count {
            Some(c) => c,
            None if size % eb == 0 => size / eb,
            None => return Ok(None),
        };
        let needed = count.checked_mul(eb).filter(|&n| n <= size).ok_or_else(|| Error::Blob {
            name: name.to_string(),
            message: format!(
                "at {loc}: the schema declares {count} elements of {} ({eb} bytes each) but the blob has only {size} bytes",
                dtype.to_json()
            ),
        })?;
        let scalars = (needed / dtype.primitive.itemsize() as u64) as usize;
        let Some(mut buf) = Buffer::zeroed(&dtype.primitive, scalars) else {
            return Ok(None);
        };
        if let Some(bytes) = buf.bytes_mut() {
            self.store.read_into(&name, bytes)?;
        }
        self.total_bytes = self.total_bytes.saturating_add(needed);
        Ok(Some((buf, count)))
    }

    /// [`direct_leaf`](Self::direct_leaf) of `zlib.decompress(read)` with a declared count:
    /// the stream inflated straight into a typed buffer of exactly the declared size.
    fn zlib_leaf(
        &mut self,
        o: &'a serde_json::Map<String, Json>,
        dtype: &DType,
        eb: u64,
        count: Option<u64>,
        loc: &Loc<'_>,
    ) -> Result<Option<(Buffer, u64)>> {
        let spec_ok = matches!(o["call"].as_array().map(|a| a.as_slice()), Some([a, b]) if a == "zlib" && b == "decompress");
        let read = match o
            .get("args")
            .and_then(|a| a.as_array())
            .map(|a| a.as_slice())
        {
            Some([Json::Object(r)]) if kind_of(r) == Some(Kind::Read) && !r.contains_key("id") => r,
            _ => return Ok(None),
        };
        let (Some(count), true, None, true) = (
            count,
            spec_ok,
            o.get("kwargs"),
            self.opts.whitelist.allows(&["zlib", "decompress"]),
        ) else {
            return Ok(None);
        };
        self.bump(loc)?;
        let rl = loc.key("args");
        let rl = rl.idx(0);
        self.bump(&rl)?;
        let name = self.blob_name(read, &rl)?;
        let ceiling = self.ceiling();
        let compressed = self
            .store
            .get(&name, ceiling)?
            .ok_or_else(|| Error::MissingBlob {
                name: name.to_string(),
            })?;
        self.total_bytes = self.total_bytes.saturating_add(compressed.len() as u64);
        let ceiling = self.ceiling();
        let needed = count.saturating_mul(eb);
        if needed > ceiling {
            return Err(Error::Limit {
                location: loc.to_string(),
                what: "decompressed size (declared by frombuffer's count × dtype)",
                value: needed,
                limit: ceiling,
            });
        }
        let scalars = (needed / dtype.primitive.itemsize() as u64) as usize;
        // Refused before allocating when deflate could not expand that far.
        check_inflated_size(&compressed, needed, loc)?;
        let Some(mut buf) = Buffer::zeroed(&dtype.primitive, scalars) else {
            return Ok(None);
        };
        if let Some(bytes) = buf.bytes_mut() {
            inflate_exact(&compressed, bytes, loc)?;
        }
        self.total_bytes = self.total_bytes.saturating_add(needed);
        Ok(Some((buf, count)))
    }

    /// The most bytes one blob may still take: the per-blob limit, or what is left of the
    /// total.
    pub(super) fn ceiling(&self) -> u64 {
        let remaining = self
            .opts
            .limits
            .max_total_bytes
            .saturating_sub(self.total_bytes);
        self.opts.limits.max_blob_bytes.min(remaining)
    }

    /// Wraps a numpy leaf (an expanded size of 1).
    pub(super) fn leaf_val(&mut self, leaf: NumpyArray) -> Val<'a> {
        let node = Arc::new(Layout::Numpy(leaf));
        self.expanded.insert(Arc::as_ptr(&node), 1);
        Val::Array(node)
    }

    pub(super) fn frombuffer_hint(
        &self,
        slots: &[Option<(Val<'a>, String)>],
        count: Option<u64>,
    ) -> Option<u64> {
        let dtype = match slots.get(1).and_then(|s| s.as_ref()) {
            Some((Val::DType(d), _)) => d.clone(),
            _ => return None,
        };
        let eb = dtype.element_bytes()? as u64;
        count?.checked_mul(eb)
    }

    pub(super) fn frombuffer(&mut self, a: &Args<'a>) -> Result<Val<'a>> {
        let blob = match a.val(0) {
            Some(Val::Blob(b)) => b.clone(),
            other => return Err(a.wrong(0, "a blob (a 'read' or a decompression call)", other)),
        };
        let dtype = match a.val(1) {
            None => DType::scalar(Primitive::F64),
            Some(Val::DType(d)) => (**d).clone(),
            Some(Val::Json(j @ Json::String(_))) => {
                DType::from_json(j).map_err(|m| schema_err_s(a.arg_loc(1), m))?
            }
            other => return Err(a.wrong(1, "a dtype", other)),
        };
        let offset = match a.val(3) {
            None => 0u64,
            Some(Val::Json(j)) => j.as_u64().ok_or_else(|| {
                schema_err_s(a.arg_loc(3), "offset must be a non-negative integer")
            })?,
            other => return Err(a.wrong(3, "an integer offset", other)),
        };
        let eb = dtype.element_bytes().filter(|&e| e > 0).ok_or_else(|| {
            schema_err_s(
                a.arg_loc(1),
                format!(
                    "dtype {} has a zero or overflowing element size",
                    dtype.to_json()
                ),
            )
        })? as u64;
        let avail = (blob.len() as u64)
            .checked_sub(offset)
            .ok_or_else(|| Error::Blob {
                name: a.arg_loc(0).to_string(),
                message: format!("offset {offset} is beyond the blob's {} bytes", blob.len()),
            })?;
        let count = match a.val(2) {
            None => None,
            Some(Val::Json(j)) => match j.as_i64() {
                Some(-1) => None,
                _ => Some(j.as_u64().ok_or_else(|| {
                    schema_err_s(
                        a.arg_loc(2),
                        format!(
                            "count must be a non-negative integer or -1, found {}",
                            short(j)
                        ),
                    )
                })?),
            },
            other => return Err(a.wrong(2, "a JSON count", other)),
        };
        let count = match count {
            Some(c) => c,
            None => {
                if avail % eb != 0 {
                    return Err(Error::Blob {
                        name: a.arg_loc(0).to_string(),
                        message: format!(
                            "{avail} bytes is not a whole number of {eb}-byte elements of {}",
                            dtype.to_json()
                        ),
                    });
                }
                avail / eb
            }
        };
        let needed = count.checked_mul(eb).filter(|&n| n <= avail).ok_or_else(|| Error::Blob {
            name: a.arg_loc(0).to_string(),
            message: format!(
                "the schema declares {count} elements of {} ({eb} bytes each) but the blob has only {avail} bytes after offset {offset}",
                dtype.to_json()
            ),
        })?;
        // Both fit in usize: they are bounded by the blob's in-memory length.
        let start = offset as usize;
        let bytes = &blob[start..start + needed as usize];
        let leaf = NumpyArray::decode(&dtype, count as usize, bytes);
        Ok(self.leaf_val(leaf))
    }

    pub(super) fn decompress(
        &mut self,
        ctor: Ctor,
        a: &Args<'a>,
        hint: Option<u64>,
    ) -> Result<Val<'a>> {
        let codec = match ctor {
            Ctor::Zlib => "zlib",
            Ctor::Lzma => "lzma",
            _ => "lz4.block",
        };
        let input = match a.val(0) {
            Some(Val::Blob(b)) => b.clone(),
            other => return Err(a.wrong(0, "a blob", other)),
        };
        let ceiling = self.ceiling();
        let (max, what) = match hint {
            Some(h) if h <= ceiling => (
                h,
                "decompressed size (declared by frombuffer's count × dtype)",
            ),
            _ => (ceiling, "decompressed size in bytes"),
        };
        let out: Vec<u8> = match ctor {
            Ctor::Lz4Block => lz4_block(&input, max, hint, &a.loc)?,
            ctor => inflate(ctor, &input, max, hint, what, &a.loc)?,
        };
        if let Some(h) = hint {
            if out.len() as u64 != h {
                return Err(decompress_error(
                    codec,
                    &a.loc,
                    format!(
                        "produced {} bytes, frombuffer expects exactly {h}",
                        out.len()
                    ),
                ));
            }
        }
        self.total_bytes = self.total_bytes.saturating_add(out.len() as u64);
        Ok(Val::Blob(Arc::new(Cow::Owned(out))))
    }
}

/// An `lz4.block.decompress` of `input` (a 4-byte little-endian size, then the block): the
/// declared size must be within `max`, equal to `hint` when there is one, and possible for the
/// input's length.
fn lz4_block(input: &[u8], max: u64, hint: Option<u64>, loc: &str) -> Result<Vec<u8>> {
    let derr = |m: String| decompress_error("lz4.block", loc, m);
    if input.len() < 4 {
        return Err(derr("input shorter than the 4-byte size prefix".into()));
    }
    let declared = u32::from_le_bytes([input[0], input[1], input[2], input[3]]) as u64;
    if declared > max || hint.is_some_and(|h| h != declared) {
        return Err(Error::Limit {
            location: loc.to_string(),
            what: "lz4 declared uncompressed size",
            value: declared,
            limit: hint.unwrap_or(max).min(max),
        });
    }
    // lz4 expands at most 255:1, so a larger declaration cannot be honest.
    if declared > array_core::bounds::lz4_max_decoded(input.len() as u64) {
        return Err(derr(format!(
            "declared size {declared} is impossible for {} compressed bytes",
            input.len()
        )));
    }
    array_codecs::lz4::decode_sized_block(&input[4..], declared as usize)
        .map_err(|e| derr(e.to_string()))
}

/// A `zlib.decompress` or `lzma.decompress` of `input`, stopped past `max` bytes (an error
/// naming `what`); `hint`, the size frombuffer expects, sizes the output up front.
fn inflate(
    ctor: Ctor,
    input: &[u8],
    max: u64,
    hint: Option<u64>,
    what: &'static str,
    loc: &str,
) -> Result<Vec<u8>> {
    let zlib = matches!(ctor, Ctor::Zlib);
    let codec = if zlib { "zlib" } else { "lzma" };
    let derr = |m: String| decompress_error(codec, loc, m);
    let cap = hint
        .unwrap_or(0)
        .min(max)
        .min(array_core::bounds::deflate_max_decoded(input.len() as u64)) as usize;
    let mut out = Vec::with_capacity(cap);
    let res = if zlib {
        array_codecs::zlib::decoder(input)
            .take(max.saturating_add(1))
            .read_to_end(&mut out)
    } else {
        array_codecs::xz::auto_decoder(input)
            .map_err(|e| derr(e.to_string()))?
            .take(max.saturating_add(1))
            .read_to_end(&mut out)
    };
    res.map_err(|e| derr(e.to_string()))?;
    if out.len() as u64 > max {
        return Err(Error::Limit {
            location: loc.to_string(),
            what,
            value: out.len() as u64,
            limit: max,
        });
    }
    Ok(out)
}

fn decompress_error(codec: &'static str, location: &str, message: String) -> Error {
    Error::Decompress {
        codec,
        location: location.to_string(),
        message,
    }
}

/// Deflate cannot expand more than 1032:1, so a declaration of more is a lie: refused before
/// anything is allocated for it.
fn check_inflated_size(compressed: &[u8], needed: u64, loc: &Loc<'_>) -> Result<()> {
    if needed > array_core::bounds::deflate_max_decoded(compressed.len() as u64) {
        return Err(zlib_error(
            loc,
            format!(
                "frombuffer declares {needed} bytes, impossible from {} zlib bytes",
                compressed.len()
            ),
        ));
    }
    Ok(())
}

/// Inflates the zlib stream `compressed` into exactly `out`: an error if it holds less, or more
/// (a limit: frombuffer's count × dtype declared the size).
fn inflate_exact(compressed: &[u8], out: &mut [u8], loc: &Loc<'_>) -> Result<()> {
    let needed = out.len() as u64;
    array_codecs::Codec::decode_into(&array_codecs::Zlib, compressed, out).map_err(|e| {
        match e.kind {
            CodecErrorKind::Long => Error::Limit {
                location: loc.to_string(),
                what: "decompressed size (declared by frombuffer's count × dtype)",
                value: needed.saturating_add(1),
                limit: needed,
            },
            _ => zlib_error(
                loc,
                format!("{e} (frombuffer expects {needed} decompressed bytes)"),
            ),
        }
    })
}

fn zlib_error(loc: &Loc<'_>, message: String) -> Error {
    decompress_error("zlib", &loc.to_string(), message)
}
