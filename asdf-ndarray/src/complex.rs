//! `core/complex-1.0.0` scalars: text like `(1+2j)`, `3.5i`, `nan`, `(nan+infj)`.

use asdf_yaml::Node;
use num_complex::Complex;

use crate::error::{NdError, Result};

/// Tag of complex scalars.
pub const COMPLEX_TAG: &str = "tag:stsci.edu:asdf/core/complex-1.0.0";

fn parse_real(s: &str) -> Option<f64> {
    let l = s.trim().to_ascii_lowercase();
    let (neg, body) = match l.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, l.strip_prefix('+').unwrap_or(&l)),
    };
    let v = match body {
        "inf" | "infinity" => f64::INFINITY,
        "nan" => f64::NAN,
        _ if body.starts_with(|c: char| c.is_ascii_digit() || c == '.') => body.parse().ok()?,
        _ => return None,
    };
    Some(if neg { -v } else { v })
}

/// Parses the text of a `core/complex-1.0.0` scalar (every form the schema allows: real only,
/// imaginary only with suffix `j`, `J`, `i` or `I`, `real±imag`, optional parentheses, `inf` and
/// `nan` in either case, scientific notation).
///
/// ```
/// use asdf_ndarray::parse_complex;
/// assert_eq!(parse_complex("(1+2j)").unwrap().im, 2.0);
/// assert_eq!(parse_complex("-3.5e2-1I").unwrap().re, -350.0);
/// assert!(parse_complex("(nan+infj)").unwrap().re.is_nan());
/// assert_eq!(parse_complex("0j").unwrap().re, 0.0);
/// ```
pub fn parse_complex(text: &str) -> Result<Complex<f64>> {
    let bad = || NdError::Datatype(format!("invalid complex number `{text}`"));
    let mut s = text.trim();
    if let Some(inner) = s.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        s = inner.trim();
    }
    if s.is_empty() {
        return Err(bad());
    }
    let imag_suffix = s.ends_with(['j', 'J', 'i', 'I']);
    if !imag_suffix {
        return parse_real(s)
            .map(|re| Complex::new(re, 0.0))
            .ok_or_else(bad);
    }
    let body = &s[..s.len() - 1];
    // Split at the last sign that is not at the start and not part of an exponent.
    let bytes = body.as_bytes();
    let split = (1..bytes.len())
        .rev()
        .find(|&i| matches!(bytes[i], b'+' | b'-') && !matches!(bytes[i - 1], b'e' | b'E'));
    match split {
        Some(i) => {
            let re = parse_real(&body[..i]).ok_or_else(bad)?;
            let im_text = &body[i..];
            let im = if im_text == "+" || im_text == "-" {
                if im_text == "-" {
                    -1.0
                } else {
                    1.0
                }
            } else {
                parse_real(im_text).ok_or_else(bad)?
            };
            Ok(Complex::new(re, im))
        }
        None => {
            let im = if body.is_empty() || body == "+" {
                1.0
            } else if body == "-" {
                -1.0
            } else {
                parse_real(body).ok_or_else(bad)?
            };
            Ok(Complex::new(0.0, im))
        }
    }
}

fn real_text(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{x:?}")
    }
}

/// Formats a complex number the way Python's `str(complex)` does (`(1.0+2.0j)`), which every
/// ASDF reader accepts.
///
/// ```
/// use asdf_ndarray::{format_complex, parse_complex};
/// use num_complex::Complex;
/// let z = Complex::new(-0.5, f64::NEG_INFINITY);
/// assert_eq!(format_complex(z), "(-0.5-infj)");
/// assert_eq!(parse_complex(&format_complex(z)).unwrap(), z);
/// ```
pub fn format_complex(z: Complex<f64>) -> String {
    let sign = if z.im.is_sign_negative() && !z.im.is_nan() {
        '-'
    } else {
        '+'
    };
    format!("({}{}{}j)", real_text(z.re), sign, real_text(z.im.abs()))
}

/// A `core/complex-1.0.0` node.
pub fn complex_node(z: Complex<f64>) -> Node {
    Node::from(format_complex(z)).with_tag(COMPLEX_TAG)
}

/// Reads a complex value from a node: a `core/complex-1.0.0` string or a plain number.
pub fn complex_from_node(node: &Node) -> Result<Complex<f64>> {
    if let Some(s) = node.as_str() {
        return parse_complex(s);
    }
    node.as_f64()
        .map(|re| Complex::new(re, 0.0))
        .ok_or_else(|| {
            NdError::Datatype(format!(
                "expected a complex number, found a {}",
                node.kind()
            ))
        })
}
