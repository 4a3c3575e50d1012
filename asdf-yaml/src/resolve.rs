//! YAML 1.1 implicit typing of plain scalars, exactly as PyYAML's `SafeLoader` resolves them.
//!
//! PyYAML decides the type of an untagged plain scalar by matching its text against a fixed set of
//! regular expressions (bool, float, int, merge, null, timestamp, value). The matchers below are
//! hand-written equivalents of those expressions; [`resolve_plain`] applies them in PyYAML's
//! order. The constructors ([`construct_int`], [`construct_float`], [`construct_bool`]) convert
//! the text the way PyYAML's `SafeConstructor` does (underscores removed, `0`-prefixed octal,
//! `0x` hex, `0b` binary, base-60 "sexagesimal" numbers).

/// The tag namespace of the YAML core types (`!!str`, `!!int`, ...).
pub const YAML_TAG_PREFIX: &str = "tag:yaml.org,2002:";
/// The tag PyYAML gives to implicit timestamps (`2001-12-14`, `2001-12-14 21:59:43.10 -5`).
pub const TIMESTAMP_TAG: &str = "tag:yaml.org,2002:timestamp";
/// The tag PyYAML gives to the plain scalar `=`.
pub const VALUE_TAG: &str = "tag:yaml.org,2002:value";

/// The YAML 1.1 type of a plain (unquoted, untagged) scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Implicit {
    /// `~`, `null`, `Null`, `NULL` or the empty scalar.
    Null,
    /// `yes`/`no`/`true`/`false`/`on`/`off` in lower, Capitalised or UPPER case.
    Bool,
    /// Decimal, `0b` binary, `0`-octal, `0x` hex or sexagesimal integer.
    Int,
    /// A float: needs a `.` (or is `.inf`/`.nan`); an exponent needs a sign.
    Float,
    /// `YYYY-MM-DD` or a full timestamp; kept as a string tagged `tag:yaml.org,2002:timestamp`.
    Timestamp,
    /// The merge key `<<`.
    Merge,
    /// The value key `=` (kept as a string tagged `tag:yaml.org,2002:value`).
    Value,
    /// Anything else: a string.
    Str,
}

/// Resolves the type of a plain scalar with PyYAML's YAML 1.1 rules.
///
/// ```
/// use asdf_yaml::resolve::{resolve_plain, Implicit};
/// assert_eq!(resolve_plain("yes"), Implicit::Bool);
/// assert_eq!(resolve_plain("017"), Implicit::Int);
/// assert_eq!(resolve_plain("1e3"), Implicit::Str); // YAML 1.1 floats need a dot
/// assert_eq!(resolve_plain("1.0e+3"), Implicit::Float);
/// assert_eq!(resolve_plain("2001-12-14"), Implicit::Timestamp);
/// ```
pub fn resolve_plain(text: &str) -> Implicit {
    let b = text.as_bytes();
    if is_null(b) {
        return Implicit::Null;
    }
    // PyYAML tries only the resolvers registered for the first character, in registration order:
    // bool, float, int, merge, null, timestamp, value. The sets below are disjoint, so the order
    // only matters for speed here.
    match b[0] {
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' => {
            if is_bool(text) {
                Implicit::Bool
            } else {
                Implicit::Str
            }
        }
        b'-' | b'+' | b'.' | b'0'..=b'9' => {
            if is_float(b) {
                Implicit::Float
            } else if is_int(b) {
                Implicit::Int
            } else if is_timestamp(b) {
                Implicit::Timestamp
            } else {
                Implicit::Str
            }
        }
        b'<' if b == b"<<" => Implicit::Merge,
        b'=' if b == b"=" => Implicit::Value,
        _ => Implicit::Str,
    }
}

fn is_null(b: &[u8]) -> bool {
    matches!(b, b"" | b"~" | b"null" | b"Null" | b"NULL")
}

fn is_bool(s: &str) -> bool {
    matches!(
        s,
        "yes"
            | "Yes"
            | "YES"
            | "no"
            | "No"
            | "NO"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
    )
}

/// Number of leading bytes of `b` that satisfy `f`.
fn span(b: &[u8], f: impl Fn(u8) -> bool) -> usize {
    b.iter().take_while(|&&c| f(c)).count()
}

fn digit_or_us(c: u8) -> bool {
    c.is_ascii_digit() || c == b'_'
}

fn strip_sign(b: &[u8]) -> &[u8] {
    match b.first() {
        Some(b'-' | b'+') => &b[1..],
        _ => b,
    }
}

/// `[eE][-+][0-9]+` at the end of the text, or nothing.
fn exponent_rest_ok(b: &[u8]) -> bool {
    if b.is_empty() {
        return true;
    }
    if !matches!(b[0], b'e' | b'E') || b.len() < 3 || !matches!(b[1], b'-' | b'+') {
        return false;
    }
    b[2..].iter().all(u8::is_ascii_digit)
}

/// One or more `:[0-5]?[0-9]` groups; returns how many bytes they span (0 if none).
fn sexagesimal_groups(b: &[u8]) -> usize {
    let mut i = 0;
    loop {
        if b.get(i) != Some(&b':') {
            return i;
        }
        let d = span(&b[i + 1..], |c| c.is_ascii_digit());
        let ok = match d {
            1 => true,
            n if n >= 2 => b[i + 1] <= b'5',
            _ => false,
        };
        if !ok {
            return i;
        }
        // `[0-5]?[0-9]` takes at most two digits; a third digit ends the group (and the match
        // fails later because the next byte is not `:` or what follows).
        i += 1 + d.min(2);
    }
}

fn is_float(b: &[u8]) -> bool {
    // [-+]?\.(inf|Inf|INF)  and  \.(nan|NaN|NAN)
    let unsigned = strip_sign(b);
    if matches!(unsigned, b".inf" | b".Inf" | b".INF") {
        return true;
    }
    if matches!(b, b".nan" | b".NaN" | b".NAN") {
        return true;
    }
    // \.[0-9][0-9_]*([eE][-+][0-9]+)?   (no sign allowed)
    if b.first() == Some(&b'.') {
        if b.get(1).is_some_and(u8::is_ascii_digit) {
            let n = 1 + span(&b[1..], digit_or_us);
            return exponent_rest_ok(&b[n..]);
        }
        return false;
    }
    if !unsigned.first().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    let n = span(unsigned, digit_or_us);
    let rest = &unsigned[n..];
    match rest.first() {
        // [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?
        Some(b'.') => {
            let m = span(&rest[1..], digit_or_us);
            exponent_rest_ok(&rest[1 + m..])
        }
        // [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
        Some(b':') => {
            let g = sexagesimal_groups(rest);
            if g == 0 {
                return false;
            }
            let after = &rest[g..];
            after.first() == Some(&b'.') && after[1..].iter().all(|&c| digit_or_us(c))
        }
        _ => false,
    }
}

fn is_int(b: &[u8]) -> bool {
    let u = strip_sign(b);
    if u.is_empty() {
        return false;
    }
    if let Some(rest) = u.strip_prefix(b"0b") {
        return !rest.is_empty() && rest.iter().all(|&c| matches!(c, b'0' | b'1' | b'_'));
    }
    if let Some(rest) = u.strip_prefix(b"0x") {
        return !rest.is_empty() && rest.iter().all(|&c| c.is_ascii_hexdigit() || c == b'_');
    }
    if u == b"0" {
        return true;
    }
    if u[0] == b'0' {
        return u[1..].iter().all(|&c| matches!(c, b'0'..=b'7' | b'_'));
    }
    if !matches!(u[0], b'1'..=b'9') {
        return false;
    }
    let n = span(u, digit_or_us);
    if n == u.len() {
        return true;
    }
    // [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+
    let g = sexagesimal_groups(&u[n..]);
    g > 0 && n + g == u.len()
}

fn digits(b: &[u8], min: usize, max: usize) -> Option<usize> {
    let n = span(b, |c| c.is_ascii_digit());
    (n >= min).then_some(n.min(max))
}

fn is_timestamp(b: &[u8]) -> bool {
    // [0-9]{4}-[0-9][0-9]?-[0-9][0-9]?
    if b.len() < 8 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let mut i = 5;
    let Some(m) = digits(&b[i..], 1, 2) else {
        return false;
    };
    i += m;
    if b.get(i) != Some(&b'-') {
        return false;
    }
    i += 1;
    let Some(d) = digits(&b[i..], 1, 2) else {
        return false;
    };
    i += d;
    if i == b.len() {
        // The date-only form needs exactly two-digit month and day.
        return m == 2 && d == 2;
    }
    // ([Tt]|[ \t]+)
    match b[i] {
        b'T' | b't' => i += 1,
        b' ' | b'\t' => i += span(&b[i..], |c| c == b' ' || c == b'\t'),
        _ => return false,
    }
    // [0-9][0-9]?:[0-9][0-9]:[0-9][0-9]
    let Some(h) = digits(&b[i..], 1, 2) else {
        return false;
    };
    i += h;
    for _ in 0..2 {
        if b.get(i) != Some(&b':') || digits(&b[i + 1..], 2, 2).is_none() {
            return false;
        }
        i += 3;
    }
    // (\.[0-9]*)?
    if b.get(i) == Some(&b'.') {
        i += 1 + span(&b[i + 1..], |c| c.is_ascii_digit());
    }
    if i == b.len() {
        return true;
    }
    // ([ \t]*(Z|[-+][0-9][0-9]?(:[0-9][0-9])?))?
    i += span(&b[i..], |c| c == b' ' || c == b'\t');
    match b.get(i) {
        Some(b'Z') => i + 1 == b.len(),
        Some(b'-' | b'+') => {
            i += 1;
            let Some(h) = digits(&b[i..], 1, 2) else {
                return false;
            };
            i += h;
            if i == b.len() {
                return true;
            }
            b[i] == b':' && i + 3 == b.len() && digits(&b[i + 1..], 2, 2).is_some()
        }
        _ => false,
    }
}

/// An integer as PyYAML constructs it: within `i64`, or its exact decimal text beyond.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IntValue {
    /// Fits in `i64`.
    Small(i64),
    /// Outside the `i64` range: decimal digits with a leading `-` when negative.
    Big(String),
}

/// Arbitrary-precision magnitude in base 10^9 limbs, least significant first.
struct BigMag(Vec<u32>);

const LIMB: u64 = 1_000_000_000;

impl BigMag {
    fn from_u64(v: u64) -> BigMag {
        let mut limbs = Vec::new();
        let mut v = v;
        while v > 0 {
            limbs.push((v % LIMB) as u32);
            v /= LIMB;
        }
        BigMag(limbs)
    }

    fn mul_add(&mut self, mul: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in &mut self.0 {
            let t = u64::from(*limb) * u64::from(mul) + carry;
            *limb = (t % LIMB) as u32;
            carry = t / LIMB;
        }
        while carry > 0 {
            self.0.push((carry % LIMB) as u32);
            carry /= LIMB;
        }
    }

    fn to_decimal(&self) -> String {
        let mut out = String::new();
        let mut it = self.0.iter().rev();
        match it.next() {
            None => return "0".to_string(),
            Some(top) => out.push_str(&top.to_string()),
        }
        for limb in it {
            out.push_str(&format!("{limb:09}"));
        }
        out
    }
}

/// Accumulates `acc * base + digit` exactly, switching to a big magnitude on overflow.
enum Acc {
    Small(u64),
    Big(BigMag),
}

impl Acc {
    fn push(&mut self, base: u32, digit: u32) {
        match self {
            Acc::Small(v) => match v
                .checked_mul(u64::from(base))
                .and_then(|x| x.checked_add(u64::from(digit)))
            {
                Some(n) => *v = n,
                None => {
                    let mut big = BigMag::from_u64(*v);
                    big.mul_add(base, digit);
                    *self = Acc::Big(big);
                }
            },
            Acc::Big(big) => big.mul_add(base, digit),
        }
    }

    fn finish(self, negative: bool) -> IntValue {
        match self {
            Acc::Small(m) => {
                if negative {
                    if m <= 1u64 << 63 {
                        // `m` is at most 2^63, whose negation is i64::MIN.
                        return IntValue::Small((m as i64).wrapping_neg());
                    }
                } else if let Ok(v) = i64::try_from(m) {
                    return IntValue::Small(v);
                }
                let sign = if negative { "-" } else { "" };
                IntValue::Big(format!("{sign}{m}"))
            }
            Acc::Big(b) => {
                let sign = if negative { "-" } else { "" };
                IntValue::Big(format!("{sign}{}", b.to_decimal()))
            }
        }
    }
}

/// The most digits an integer scalar may have (decimal, hex, octal, binary or the parts of a
/// sexagesimal number together): 4300, Python's default limit for converting a decimal string
/// to an integer (`sys.get_int_max_str_digits()`), so every integer PyYAML reads is read here.
/// Converting a numeral costs time quadratic in its length; without this limit a plain scalar
/// of 10^6 digits takes minutes.
pub const MAX_INT_DIGITS: usize = 4300;

/// The number of digits of an integer numeral (its sign, `_`, `:` and `0x`/`0b` prefix letters
/// not counted).
pub fn int_digits(text: &str) -> usize {
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    let body = body
        .strip_prefix("0x")
        .or_else(|| body.strip_prefix("0b"))
        .unwrap_or(body);
    body.bytes().filter(u8::is_ascii_hexdigit).count()
}

/// Converts integer text the way PyYAML's `construct_yaml_int` does; `None` if it is not an
/// integer under those rules (e.g. `0b_`, or anything `int()` would reject).
///
/// Integers with more than [`MAX_INT_DIGITS`] digits are refused (`None`; the parser reports
/// [`Error::IntegerTooLong`](crate::Error::IntegerTooLong)).
///
/// ```
/// use asdf_yaml::resolve::{construct_int, IntValue};
/// assert_eq!(construct_int("0x1F"), Some(IntValue::Small(31)));
/// assert_eq!(construct_int("-017"), Some(IntValue::Small(-15)));
/// assert_eq!(construct_int("190:20:30"), Some(IntValue::Small(685230)));
/// assert_eq!(construct_int("18446744073709551616"),
///            Some(IntValue::Big("18446744073709551616".into())));
/// ```
pub fn construct_int(text: &str) -> Option<IntValue> {
    if int_digits(text) > MAX_INT_DIGITS {
        return None;
    }
    // Fast path: plain decimal without underscores or a leading zero, short enough for i64.
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if (1..=18).contains(&unsigned.len())
        && !unsigned.starts_with('0')
        && unsigned.bytes().all(|c| c.is_ascii_digit())
    {
        return text.parse().ok().map(IntValue::Small);
    }
    let cleaned: Vec<u8> = text.bytes().filter(|&c| c != b'_').collect();
    let (negative, body) = match cleaned.first() {
        Some(b'-') => (true, &cleaned[1..]),
        Some(b'+') => (false, &cleaned[1..]),
        _ => (false, &cleaned[..]),
    };
    if body.is_empty() {
        return None;
    }
    let mut acc = Acc::Small(0);
    let radix_digits = |acc: &mut Acc, digits: &[u8], radix: u32| -> Option<()> {
        if digits.is_empty() {
            return None;
        }
        for &c in digits {
            acc.push(radix, char::from(c).to_digit(radix)?);
        }
        Some(())
    };
    if body == b"0" {
        return Some(IntValue::Small(0));
    } else if let Some(rest) = body.strip_prefix(b"0b") {
        radix_digits(&mut acc, rest, 2)?;
    } else if let Some(rest) = body.strip_prefix(b"0x") {
        radix_digits(&mut acc, rest, 16)?;
    } else if body[0] == b'0' {
        radix_digits(&mut acc, &body[1..], 8)?;
    } else if body.contains(&b':') {
        // Horner's rule in base 60; every part is a decimal number (PyYAML's `int(part)`).
        for (i, part) in body.split(|&c| c == b':').enumerate() {
            if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
                return None;
            }
            if i == 0 {
                radix_digits(&mut acc, part, 10)?;
            } else {
                let v = std::str::from_utf8(part).ok()?.parse::<u32>().ok()?;
                acc.push(60, v);
            }
        }
    } else {
        radix_digits(&mut acc, body, 10)?;
    }
    Some(acc.finish(negative))
}

/// Converts float text the way PyYAML's `construct_yaml_float` does (`_` removed, case-folded,
/// `.inf`/`.nan`, sexagesimal, else Python's `float()`); `None` when that would fail.
///
/// ```
/// use asdf_yaml::resolve::construct_float;
/// assert_eq!(construct_float("1_000.5"), Some(1000.5));
/// assert_eq!(construct_float("-.INF"), Some(f64::NEG_INFINITY));
/// assert_eq!(construct_float("1:30.5"), Some(90.5));
/// assert!(construct_float(".NaN").unwrap().is_nan());
/// ```
pub fn construct_float(text: &str) -> Option<f64> {
    // Fast path: digits, one dot, an exponent; Rust and Python agree on these (both round
    // correctly, both accept `1.` and `.5`).
    if text
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
        && text.bytes().any(|c| c.is_ascii_digit())
    {
        if let Ok(v) = text.parse::<f64>() {
            return Some(v);
        }
    }
    let lowered: String = text
        .trim()
        .chars()
        .filter(|&c| c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let (sign, body) = match lowered.as_bytes().first() {
        Some(b'-') => (-1.0, &lowered[1..]),
        Some(b'+') => (1.0, &lowered[1..]),
        _ => (1.0, &lowered[..]),
    };
    if body == ".inf" {
        return Some(sign * f64::INFINITY);
    }
    if body == ".nan" {
        return Some(f64::NAN);
    }
    if body.contains(':') {
        // Python: digits = [float(p) for p in parts]; sum from the least significant part.
        let mut parts = Vec::new();
        for p in body.split(':') {
            parts.push(parse_python_float(p)?);
        }
        let mut value = 0.0;
        let mut base = 1.0;
        for d in parts.iter().rev() {
            value += d * base;
            base *= 60.0;
        }
        return Some(sign * value);
    }
    parse_python_float(body).map(|v| sign * v)
}

/// Python's `float()` on an unsigned, lower-case literal (also `inf`, `nan`, `infinity`).
fn parse_python_float(s: &str) -> Option<f64> {
    if s.is_empty() || s.starts_with(['+', '-']) {
        return None;
    }
    let b = s.as_bytes();
    // Rust rejects "1." followed by an exponent and a bare "."; Python accepts "1.", "1.e5", ".5".
    let mut fixed = String::with_capacity(s.len() + 2);
    for (i, &c) in b.iter().enumerate() {
        fixed.push(char::from(c));
        if c == b'.' {
            let before = i > 0 && b[i - 1].is_ascii_digit();
            let after = b.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !before && !after {
                return None;
            }
            if !after {
                fixed.push('0');
            }
        }
    }
    fixed.parse::<f64>().ok()
}

/// Converts `!!bool` text the way PyYAML does (case-insensitive yes/no/true/false/on/off).
pub fn construct_bool(text: &str) -> Option<bool> {
    let is = |word: &str| text.eq_ignore_ascii_case(word);
    if is("yes") || is("true") || is("on") {
        Some(true)
    } else if is("no") || is("false") || is("off") {
        Some(false)
    } else {
        None
    }
}

/// A plain scalar whose text is a plain decimal number, with its value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Number {
    Int(i64),
    Float(f64),
}

/// The powers of ten an `f64` holds exactly.
const EXACT_POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `v` followed by the decimal digits `d` (at most 19 digits in all, so it fits).
fn decimal(v: u64, d: &[u8]) -> u64 {
    d.iter().fold(v, |v, &c| {
        v.wrapping_mul(10).wrapping_add(u64::from(c - b'0'))
    })
}

/// The common numbers of a tree in one pass: `[-+]?[0-9]+` (no leading zero unless it is `0`,
/// at most 18 digits) as an int, `[-+]?[0-9]+\.[0-9]*([eE][-+][0-9]{1,3})?` as a float.
/// Exactly what [`resolve_plain`] and [`construct_int`] / [`construct_float`] make of such
/// text; `None` for any other text, which the caller resolves the general way.
///
/// A float whose digits fit in 53 bits and whose decimal exponent is within ±22 is one
/// exact multiplication or division of two exact `f64`s, so IEEE rounding gives the correctly
/// rounded value that Rust's (and Python's) parser gives; other floats go to that parser.
#[inline]
pub(crate) fn simple_number(text: &str) -> Option<Number> {
    // Most plain scalars are words: they leave here without a call.
    match text.as_bytes().first() {
        Some(b'0'..=b'9' | b'-' | b'+') => number(text),
        _ => None,
    }
}

/// [`simple_number`] past its first byte's check.
fn number(text: &str) -> Option<Number> {
    let b = text.as_bytes();
    let (negative, body) = match *b.first()? {
        b'-' => (true, &b[1..]),
        b'+' => (false, &b[1..]),
        _ => (false, b),
    };
    let int_len = body.iter().take_while(|c| c.is_ascii_digit()).count();
    if int_len == 0 || int_len > 18 {
        return None;
    }
    let (int_part, rest) = body.split_at(int_len);
    let Some((&b'.', frac)) = rest.split_first() else {
        // An int: decimal, not `0`-prefixed octal.
        if !rest.is_empty() || (int_len > 1 && int_part[0] == b'0') {
            return None;
        }
        let m = decimal(0, int_part) as i64;
        return Some(Number::Int(if negative { -m } else { m }));
    };
    let frac_len = frac.iter().take_while(|c| c.is_ascii_digit()).count();
    let exp = match &frac[frac_len..] {
        [] => 0,
        [b'e' | b'E', sign @ (b'-' | b'+'), digits @ ..]
            if (1..=3).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit) =>
        {
            let e = decimal(0, digits) as i64;
            if *sign == b'-' {
                -e
            } else {
                e
            }
        }
        _ => return None,
    };
    let scale = exp - frac_len as i64;
    if int_len + frac_len <= 19 && scale.unsigned_abs() < EXACT_POW10.len() as u64 {
        let m = decimal(decimal(0, int_part), &frac[..frac_len]);
        if m <= 1 << 53 {
            let v = m as f64;
            let p = EXACT_POW10[scale.unsigned_abs() as usize];
            let v = if scale >= 0 { v * p } else { v / p };
            return Some(Number::Float(if negative { -v } else { v }));
        }
    }
    construct_float(text).map(Number::Float)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the general path makes of a plain scalar that is a number.
    fn general(text: &str) -> Option<Number> {
        match resolve_plain(text) {
            Implicit::Int => match construct_int(text)? {
                IntValue::Small(i) => Some(Number::Int(i)),
                IntValue::Big(_) => None,
            },
            Implicit::Float => construct_float(text).map(Number::Float),
            _ => None,
        }
    }

    fn same(a: Option<Number>, b: Option<Number>) -> bool {
        match (a, b) {
            (Some(Number::Float(x)), Some(Number::Float(y))) => x.to_bits() == y.to_bits(),
            (a, b) => a == b,
        }
    }

    #[test]
    fn simple_numbers_are_what_the_general_path_makes_of_them() {
        let cases = [
            "0",
            "-0",
            "+0",
            "7",
            "-12",
            "+12",
            "017",
            "08",
            "999999999999999999",
            "1000000000000000000",
            "0.0",
            "-0.0",
            "1.",
            "-1.",
            "0.1",
            "0.3",
            "4999.5",
            "-7499.25",
            "1.0e+3",
            "1.0E-3",
            "2.5e-300",
            "1.5e+308",
            "1.0e+400",
            "9007199254740993.0",
            "9007199254740992.5",
            "123456789012345678.9",
            "0.1e-22",
            "1.7976931348623157e+308",
            "4.9406564584124654e-324",
            "1.0e+0",
            "1.0e-0",
            "1.0e+1000",
            "1e3",
            "1.0e3",
            "1.0e+",
            "1_0",
            "1.0_1",
            "1:30",
            "1:30.5",
            ".5",
            "+.5",
            "-",
            "+",
            "0x1F",
            "0b1",
            "12a",
            "1.2.3",
            "2001-12-14",
            "123456789.123456789",
            "0.000000000000000000001",
        ];
        for t in cases {
            let fast = simple_number(t);
            if let Some(v) = fast {
                assert!(same(Some(v), general(t)), "{t}: {v:?} vs {:?}", general(t));
            }
        }
        // Every common shape takes the fast path.
        for t in ["0", "-12", "4999.5", "-7499.25", "1.0e+3", "0.1", "1."] {
            assert!(simple_number(t).is_some(), "{t}");
        }
        for t in [
            "017",
            "1e3",
            "1_0",
            "1:30",
            ".5",
            "0x1F",
            "12a",
            "2001-12-14",
        ] {
            assert_eq!(simple_number(t), None, "{t}");
        }
    }

    proptest::proptest! {
        #[test]
        fn simple_numbers_agree_on_any_numeric_text(t in "[-+]?[0-9]{0,22}(\\.[0-9]{0,22})?([eE][-+]?[0-9]{0,4})?[_:x]?") {
            if let Some(v) = simple_number(&t) {
                proptest::prop_assert!(same(Some(v), general(&t)), "{}: {:?} vs {:?}", t, v, general(&t));
            }
        }

        #[test]
        fn simple_floats_round_like_the_parser(m in 0u64..(1 << 54), frac in 0usize..19, e in -30i32..30) {
            let digits = m.to_string();
            let cut = digits.len().saturating_sub(frac);
            let t = format!("{}.{}e{:+}", &digits[..cut.max(1)], &digits[cut.max(1)..], e);
            if let Some(v) = simple_number(&t) {
                proptest::prop_assert!(same(Some(v), general(&t)), "{}: {:?} vs {:?}", t, v, general(&t));
            }
        }
    }

    #[test]
    fn floats_need_a_dot_and_a_signed_exponent() {
        for s in [
            "1.0", "1.", "-1.5", "+1.5", ".5", "1.0e+3", "1.0E-3", "1_0.0_1", "1:30.5",
        ] {
            assert_eq!(resolve_plain(s), Implicit::Float, "{s}");
        }
        for s in [
            "1e3", "1.0e3", "-.5", "+.5", ".", "1.0e+", "1:60.5", "-.nan", "e5",
        ] {
            assert_ne!(resolve_plain(s), Implicit::Float, "{s}");
        }
    }

    #[test]
    fn ints() {
        assert_eq!(construct_int("0"), Some(IntValue::Small(0)));
        assert_eq!(construct_int("-0"), Some(IntValue::Small(0)));
        assert_eq!(construct_int("0b1010"), Some(IntValue::Small(10)));
        assert_eq!(construct_int("1_000"), Some(IntValue::Small(1000)));
        assert_eq!(construct_int("0b_"), None);
        assert_eq!(
            construct_int("-9223372036854775808"),
            Some(IntValue::Small(i64::MIN))
        );
        assert_eq!(
            construct_int("-9223372036854775809"),
            Some(IntValue::Big("-9223372036854775809".into()))
        );
        assert_eq!(
            construct_int("0xFFFFFFFFFFFFFFFFFF"),
            Some(IntValue::Big("4722366482869645213695".into()))
        );
        assert_eq!(
            construct_int("1000000000000000000000000000001"),
            Some(IntValue::Big("1000000000000000000000000000001".into()))
        );
        assert_eq!(resolve_plain("08"), Implicit::Str);
        assert_eq!(resolve_plain("1:60"), Implicit::Str);
        assert_eq!(resolve_plain("0:30"), Implicit::Str);
    }

    #[test]
    fn timestamps() {
        for s in [
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14 21:59:43.10 -5",
            "2001-12-15 2:59:43.10",
            "2026-11-21 07:36:11+00:00",
            "2001-1-1T1:00:00Z",
        ] {
            assert_eq!(resolve_plain(s), Implicit::Timestamp, "{s}");
        }
        for s in ["2001-1-14", "2001-12-14 21:59", "2001-12-14X"] {
            assert_eq!(resolve_plain(s), Implicit::Str, "{s}");
        }
    }
}
