//! Inline `data`: nested lists to bytes (with the schema's inference rules) and bytes to nodes.

use asdf_yaml::Node;
use half::f16;
use num_complex::Complex;

use crate::complex::COMPLEX_TAG;
use crate::datatype::{checked_product, ByteOrder, Datatype, Field, ScalarType};
use crate::element::Element;
use crate::error::{NdError, Result};

/// Runs `$body` with `$T` bound to the Rust type of scalar type `$s`.
macro_rules! with_scalar {
    ($s:expr, $T:ident => $body:expr) => {
        match $s {
            $crate::datatype::ScalarType::Int8 => {
                type $T = i8;
                $body
            }
            $crate::datatype::ScalarType::Int16 => {
                type $T = i16;
                $body
            }
            $crate::datatype::ScalarType::Int32 => {
                type $T = i32;
                $body
            }
            $crate::datatype::ScalarType::Int64 => {
                type $T = i64;
                $body
            }
            $crate::datatype::ScalarType::Int128 => {
                type $T = i128;
                $body
            }
            $crate::datatype::ScalarType::UInt8 => {
                type $T = u8;
                $body
            }
            $crate::datatype::ScalarType::UInt16 => {
                type $T = u16;
                $body
            }
            $crate::datatype::ScalarType::UInt32 => {
                type $T = u32;
                $body
            }
            $crate::datatype::ScalarType::UInt64 => {
                type $T = u64;
                $body
            }
            $crate::datatype::ScalarType::UInt128 => {
                type $T = u128;
                $body
            }
            $crate::datatype::ScalarType::Float16 => {
                type $T = half::f16;
                $body
            }
            $crate::datatype::ScalarType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::datatype::ScalarType::Float64 => {
                type $T = f64;
                $body
            }
            $crate::datatype::ScalarType::Complex32 => {
                type $T = num_complex::Complex<half::f16>;
                $body
            }
            $crate::datatype::ScalarType::Complex64 => {
                type $T = num_complex::Complex<f32>;
                $body
            }
            $crate::datatype::ScalarType::Complex128 => {
                type $T = num_complex::Complex<f64>;
                $body
            }
            $crate::datatype::ScalarType::Bool8 => {
                type $T = bool;
                $body
            }
        }
    };
}
pub(crate) use with_scalar;

// Keep the imports used by the macro expansion's type paths referenced.
#[allow(dead_code)]
type _Uses = (f16, Complex<f32>);

fn inline_err(path: &str, message: impl Into<String>) -> NdError {
    NdError::Inline {
        path: if path.is_empty() {
            "top".into()
        } else {
            path.to_string()
        },
        message: message.into(),
    }
}

/// Encodes one inline value into `out` (exactly `dt.size()` bytes). Returns whether it was
/// `null` (masked; the bytes are zero then).
pub(crate) fn encode_value(
    node: &Node,
    dt: &Datatype,
    order: ByteOrder,
    out: &mut [u8],
    path: &str,
) -> Result<bool> {
    if node.is_null() {
        out.fill(0);
        return Ok(true);
    }
    match dt {
        Datatype::Scalar(s) => with_scalar!(*s, T => {
            let v = T::from_node(node).ok_or_else(|| inline_err(path, format!("{:?} is not a {}", node, s.name())))?;
            v.write_bytes(order, out);
        }),
        Datatype::Ascii(n) => encode_ascii(node, *n, out, path)?,
        Datatype::Ucs4(n) => encode_ucs4(node, *n, order, out, path)?,
        Datatype::Record(fields) => encode_record(node, fields, order, out, path)?,
    }
    Ok(false)
}

/// The string of an inline string value, or an error naming what was found.
fn inline_str<'n>(node: &'n Node, path: &str) -> Result<&'n str> {
    node.as_str()
        .ok_or_else(|| inline_err(path, format!("expected a string, found a {}", node.kind())))
}

/// An `ascii` value of at most `n` bytes, zero-padded.
fn encode_ascii(node: &Node, n: usize, out: &mut [u8], path: &str) -> Result<()> {
    let s = inline_str(node, path)?;
    if !s.is_ascii() || s.len() > n {
        return Err(inline_err(
            path,
            format!("{s:?} is not an ASCII string of at most {n} bytes"),
        ));
    }
    out.fill(0);
    out[..s.len()].copy_from_slice(s.as_bytes());
    Ok(())
}

/// A `ucs4` value of at most `n` characters, zero-padded.
fn encode_ucs4(node: &Node, n: usize, order: ByteOrder, out: &mut [u8], path: &str) -> Result<()> {
    let s = inline_str(node, path)?;
    out.fill(0);
    for (i, c) in s.chars().enumerate() {
        if i >= n {
            return Err(inline_err(
                path,
                format!("{s:?} is longer than {n} characters"),
            ));
        }
        (c as u32).write_bytes(order, &mut out[4 * i..4 * i + 4]);
    }
    Ok(())
}

/// A record value: a list of one value per field, each encoded at its field's place.
fn encode_record(
    node: &Node,
    fields: &[Field],
    order: ByteOrder,
    out: &mut [u8],
    path: &str,
) -> Result<()> {
    let items = node.as_seq().ok_or_else(|| {
        inline_err(
            path,
            format!(
                "expected a record (list of {} values), found a {}",
                fields.len(),
                node.kind()
            ),
        )
    })?;
    if items.len() != fields.len() {
        return Err(inline_err(
            path,
            format!(
                "a record needs {} values, found {}",
                fields.len(),
                items.len()
            ),
        ));
    }
    let mut pos = 0;
    for (f, item) in fields.iter().zip(items) {
        let size = f.size()?;
        let fo = f.byteorder.unwrap_or(order);
        let esize = f.datatype.size()?;
        let dst = &mut out[pos..pos + size];
        let fpath = format!("{path}.{}", f.name);
        if f.shape.is_empty() {
            encode_value(item, &f.datatype, fo, dst, &fpath)?;
        } else {
            let leaves = flatten(item, &f.shape, &fpath)?;
            for (i, leaf) in leaves.iter().enumerate() {
                encode_value(
                    leaf,
                    &f.datatype,
                    fo,
                    &mut dst[i * esize..(i + 1) * esize],
                    &fpath,
                )?;
            }
        }
        pos += size;
    }
    Ok(())
}

/// The nested-list leaves of `node` for `shape` (C order), checking every list length.
pub(crate) fn flatten<'n>(node: &'n Node, shape: &[usize], path: &str) -> Result<Vec<&'n Node>> {
    let count = checked_product(shape).ok_or_else(|| inline_err(path, "shape overflows"))?;
    if count == 0 {
        // Zero-size arrays: `[]`, or lists of empty lists for zero-length inner dimensions.
        return Ok(Vec::new());
    }
    let mut out = Vec::with_capacity(count.min(1 << 20));
    fn walk<'n>(
        n: &'n Node,
        shape: &[usize],
        path: &mut String,
        out: &mut Vec<&'n Node>,
    ) -> Result<()> {
        let Some((&d, rest)) = shape.split_first() else {
            out.push(n);
            return Ok(());
        };
        let items = n.as_seq().ok_or_else(|| {
            inline_err(
                path,
                format!("expected a list of {d} items, found a {}", n.kind()),
            )
        })?;
        if items.len() != d {
            return Err(inline_err(
                path,
                format!("expected {d} items, found {}", items.len()),
            ));
        }
        for (i, it) in items.iter().enumerate() {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            walk(it, rest, path, out)?;
            path.truncate(len);
        }
        Ok(())
    }
    let mut p = path.to_string();
    walk(node, shape, &mut p, &mut out)?;
    Ok(out)
}

/// The datatype the schema's inference rules give nested-list data: any string → `ucs4` of
/// the longest length; else any complex → `complex128`; else any float → `float64`; else any
/// integer → `int64`; else `bool8` (`float64` for no values at all, as NumPy does).
pub fn infer_datatype(node: &Node) -> Datatype {
    #[derive(Default)]
    struct Seen {
        chars: Option<usize>,
        complex: bool,
        float: bool,
        int: bool,
        bool_: bool,
    }
    fn walk(n: &Node, s: &mut Seen, depth: usize) {
        if depth > 512 {
            return;
        }
        if let Some(items) = n.as_seq() {
            items.iter().for_each(|i| walk(i, s, depth + 1));
        } else if n.tag() == Some(COMPLEX_TAG) {
            s.complex = true;
        } else if let Some(t) = n.as_str() {
            let c = t.chars().count();
            s.chars = Some(s.chars.map_or(c, |m| m.max(c)));
        } else if n.as_bool().is_some() {
            s.bool_ = true;
        } else if n.as_i64().is_some() || n.as_integer_text().is_some() {
            s.int = true;
        } else if n.as_f64().is_some() {
            s.float = true;
        }
    }
    let mut s = Seen::default();
    walk(node, &mut s, 0);
    if let Some(c) = s.chars {
        Datatype::Ucs4(c)
    } else if s.complex {
        Datatype::Scalar(ScalarType::Complex128)
    } else if s.float {
        Datatype::Scalar(ScalarType::Float64)
    } else if s.int {
        Datatype::Scalar(ScalarType::Int64)
    } else if s.bool_ {
        Datatype::Scalar(ScalarType::Bool8)
    } else {
        Datatype::Scalar(ScalarType::Float64)
    }
}

/// The shape of nested-list data: list lengths along the first items (records stop at the
/// list holding a record's values).
pub(crate) fn infer_shape(node: &Node, dt: &Datatype) -> Vec<usize> {
    let mut shape = Vec::new();
    let mut n = node;
    while let Some(items) = n.as_seq() {
        if matches!(dt, Datatype::Record(_))
            && items.first().is_none_or(|f| f.as_seq().is_none())
            && !shape.is_empty()
        {
            break;
        }
        shape.push(items.len());
        match items.first() {
            Some(f) => n = f,
            None => break,
        }
        if matches!(dt, Datatype::Record(_))
            && n.as_seq()
                .and_then(|s| s.first())
                .is_none_or(|f| f.as_seq().is_none())
        {
            break;
        }
    }
    shape
}

/// Decodes one stored value to an inline node.
pub(crate) fn decode_value(
    bytes: &[u8],
    dt: &Datatype,
    order: ByteOrder,
    index: usize,
) -> Result<Node> {
    Ok(match dt {
        Datatype::Scalar(s) => with_scalar!(*s, T => T::from_bytes(bytes, order).to_node()),
        Datatype::Ascii(_) => Node::from(ascii_string(bytes, index)?),
        Datatype::Ucs4(_) => Node::from(ucs4_string(bytes, order, index)?),
        Datatype::Record(fields) => {
            let mut pos = 0;
            let mut items = Vec::with_capacity(fields.len());
            for f in fields {
                let size = f.size()?;
                let esize = f.datatype.size()?;
                let fo = f.byteorder.unwrap_or(order);
                let src = &bytes[pos..pos + size];
                if f.shape.is_empty() {
                    items.push(decode_value(src, &f.datatype, fo, index)?);
                } else {
                    let mut leaves = Vec::with_capacity(size / esize.max(1));
                    let count = checked_product(&f.shape).unwrap_or(0);
                    for i in 0..count {
                        leaves.push(decode_value(
                            &src[i * esize..(i + 1) * esize],
                            &f.datatype,
                            fo,
                            index,
                        )?);
                    }
                    items.push(nest(leaves, &f.shape)?);
                }
                pos += size;
            }
            Node::from(items)
        }
    })
}

/// Groups C-ordered leaves into nested lists of `shape` (a 0-d shape gives the single leaf).
pub(crate) fn nest(leaves: Vec<Node>, shape: &[usize]) -> Result<Node> {
    // Zero-size arrays with long leading dimensions would need many empty lists: bound them.
    let mut lists: usize = 1;
    for &d in shape {
        if d == 0 {
            break;
        }
        lists = lists.saturating_mul(d);
    }
    if lists > (1 << 26) && leaves.is_empty() {
        return Err(NdError::TooLarge {
            what: format!("inline lists for shape {shape:?}"),
            limit: 1 << 26,
        });
    }
    fn build(it: &mut std::vec::IntoIter<Node>, shape: &[usize]) -> Node {
        match shape.split_first() {
            None => it.next().unwrap_or_default(),
            Some((&d, rest)) => Node::from((0..d).map(|_| build(it, rest)).collect::<Vec<_>>()),
        }
    }
    Ok(build(&mut leaves.into_iter(), shape))
}

/// An `ascii` value: NUL padding stripped, non-ASCII bytes rejected.
pub(crate) fn ascii_string(bytes: &[u8], index: usize) -> Result<String> {
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
    let b = &bytes[..end];
    if !b.is_ascii() {
        return Err(NdError::InvalidValue {
            index,
            message: format!("ascii string {b:?} has bytes ≥ 128"),
        });
    }
    Ok(b.iter().map(|&c| c as char).collect())
}

/// A `ucs4` value: trailing NUL code units stripped, invalid code points rejected.
pub(crate) fn ucs4_string(bytes: &[u8], order: ByteOrder, index: usize) -> Result<String> {
    let units: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_bytes(c, order))
        .collect();
    let end = units.iter().rposition(|&u| u != 0).map_or(0, |p| p + 1);
    units[..end]
        .iter()
        .map(|&u| {
            char::from_u32(u).ok_or_else(|| NdError::InvalidValue {
                index,
                message: format!("{u:#x} is not a Unicode scalar value"),
            })
        })
        .collect()
}
