//! The YAML-schema `tag` keyword and the ASDF keywords `ndim`, `max_ndim`, `datatype`
//! (`exact_datatype` is read by `datatype`). `propertyOrder`, `flowStyle`, `style` and
//! `examples` are writer hints: draft 4 ignores unknown keywords, as Python asdf's validation
//! does for these.

use asdf_ndarray::{Datatype, ScalarType};
use asdf_yaml::Node;
use jsonschema::paths::Location;
use jsonschema::{Keyword, ValidationError};
use serde_json::{Map, Value as J};

use super::tree::{NodeRef, YamlTree};
use crate::builtin::nesting;

type Boxed = Box<dyn for<'i> Keyword<'i, YamlTree>>;

/// Whether `uri` matches `pattern`, where `*` matches any run of characters but `/` and `**`
/// any run of characters (Python asdf's `uri_match`).
///
/// ```
/// use asdf_schema::uri_match;
/// assert!(uri_match("tag:stsci.edu:asdf/core/ndarray-1.*", "tag:stsci.edu:asdf/core/ndarray-1.1.0"));
/// assert!(!uri_match("tag:stsci.edu:asdf/*", "tag:stsci.edu:asdf/core/ndarray-1.1.0"));
/// assert!(uri_match("tag:stsci.edu:asdf/**", "tag:stsci.edu:asdf/core/ndarray-1.1.0"));
/// ```
pub fn uri_match(pattern: &str, uri: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == uri;
    }
    glob(pattern.as_bytes(), uri.as_bytes())
}

/// Iterative glob match (`*` not across `/`, `**` across anything), linear-ish backtracking.
fn glob(p: &[u8], s: &[u8]) -> bool {
    // Dynamic programming over (pattern index, string index): O(len(p) * len(s)), no recursion.
    let (n, m) = (p.len(), s.len());
    let mut cur = vec![false; m + 1];
    cur[0] = true;
    let mut i = 0;
    while i < n {
        let mut next = vec![false; m + 1];
        if p[i] == b'*' {
            let double = i + 1 < n && p[i + 1] == b'*';
            // From any reachable j, consume characters (not '/' for a single '*').
            let mut reach = false;
            for j in 0..=m {
                if cur[j] {
                    reach = true;
                }
                next[j] = reach;
                if j < m && !double && s[j] == b'/' {
                    reach = false;
                }
            }
            i += if double { 2 } else { 1 };
        } else {
            for j in 0..m {
                if cur[j] && s[j] == p[i] {
                    next[j + 1] = true;
                }
            }
            i += 1;
        }
        cur = next;
    }
    cur[m]
}

struct TagKw(String);

impl<'i> Keyword<'i, YamlTree> for TagKw {
    fn validate(&self, instance: NodeRef<'i>) -> Result<(), ValidationError<'i>> {
        match instance.node().tag() {
            Some(t) if uri_match(&self.0, t) => Ok(()),
            Some(t) => Err(ValidationError::custom(format!(
                "mismatched tags, wanted '{}', got '{t}'",
                self.0
            ))),
            None => Err(ValidationError::custom(format!(
                "mismatched tags, wanted '{}', got an untagged {}",
                self.0,
                instance.node().kind()
            ))),
        }
    }
    fn is_valid(&self, instance: NodeRef<'i>) -> bool {
        instance.node().tag().is_some_and(|t| uri_match(&self.0, t))
    }
}

fn bad_value<'a>(schema: &'a J, what: &str) -> ValidationError<'a> {
    ValidationError::custom(format!("invalid value {schema} for the {what} keyword"))
}

pub(crate) fn tag_factory<'a>(
    _parent: &'a Map<String, J>,
    schema: &'a J,
    _path: Location,
) -> Result<Boxed, ValidationError<'a>> {
    match schema.as_str() {
        Some(s) => Ok(Box::new(TagKw(s.to_string()))),
        None => Err(bad_value(schema, "tag")),
    }
}

/// The dimension count of an ndarray-like instance (Python's `_get_ndim`).
fn ndim_of(n: &Node) -> Option<usize> {
    if n.as_seq().is_some() {
        return Some(nesting(n));
    }
    let m = n.as_map()?;
    if let Some(s) = m.get("shape") {
        return Some(s.len());
    }
    m.get("data").map(nesting)
}

struct NdimKw {
    ndim: u64,
    max: bool,
}

impl NdimKw {
    fn check(&self, n: &Node) -> Result<(), String> {
        let got = ndim_of(n);
        let ok = match got {
            Some(g) => {
                if self.max {
                    g as u64 <= self.ndim
                } else {
                    g as u64 == self.ndim
                }
            }
            None => false,
        };
        if ok {
            return Ok(());
        }
        let got = got.map_or_else(|| "not an array".to_string(), |g| g.to_string());
        Err(if self.max {
            format!(
                "Wrong number of dimensions: Expected max of {}, got {got}",
                self.ndim
            )
        } else {
            format!(
                "Wrong number of dimensions: Expected {}, got {got}",
                self.ndim
            )
        })
    }
}

impl<'i> Keyword<'i, YamlTree> for NdimKw {
    fn validate(&self, instance: NodeRef<'i>) -> Result<(), ValidationError<'i>> {
        self.check(instance.node()).map_err(ValidationError::custom)
    }
    fn is_valid(&self, instance: NodeRef<'i>) -> bool {
        self.check(instance.node()).is_ok()
    }
}

pub(crate) fn ndim_factory<'a>(
    _parent: &'a Map<String, J>,
    schema: &'a J,
    _path: Location,
) -> Result<Boxed, ValidationError<'a>> {
    let ndim = schema.as_u64().ok_or_else(|| bad_value(schema, "ndim"))?;
    Ok(Box::new(NdimKw { ndim, max: false }))
}

pub(crate) fn max_ndim_factory<'a>(
    _parent: &'a Map<String, J>,
    schema: &'a J,
    _path: Location,
) -> Result<Boxed, ValidationError<'a>> {
    let ndim = schema
        .as_u64()
        .ok_or_else(|| bad_value(schema, "max_ndim"))?;
    Ok(Box::new(NdimKw { ndim, max: true }))
}

/// A JSON value as a tree node (for parsing a schema's datatype).
fn json_to_node(v: &J) -> Node {
    match v {
        J::Null => Node::null(),
        J::Bool(b) => Node::from(*b),
        J::Number(n) => n
            .as_i64()
            .map(Node::from)
            .or_else(|| n.as_u64().map(Node::from))
            .unwrap_or_else(|| Node::from(n.as_f64().unwrap_or(f64::NAN))),
        J::String(s) => Node::from(s.as_str()),
        J::Array(items) => Node::sequence(items.iter().map(json_to_node)),
        J::Object(m) => Node::mapping(m.iter().map(|(k, v)| (k.as_str(), json_to_node(v)))),
    }
}

struct DatatypeKw {
    expected: Datatype,
    text: String,
    exact: bool,
}

/// Kind, size (bytes or characters) of a scalar for NumPy's "safe" casting rules.
fn class(s: ScalarType) -> (u8, usize) {
    use ScalarType::*;
    match s {
        Bool8 => (0, 1),
        UInt8 | UInt16 | UInt32 | UInt64 | UInt128 => (1, s.size()),
        Int8 | Int16 | Int32 | Int64 | Int128 => (2, s.size()),
        Float16 | Float32 | Float64 => (3, s.size()),
        Complex32 | Complex64 | Complex128 => (4, s.size()),
    }
}

/// NumPy's `can_cast(from, to, "safe")` for the scalar types.
fn can_cast_scalar(from: ScalarType, to: ScalarType) -> bool {
    let ((fk, fs), (tk, ts)) = (class(from), class(to));
    match (fk, tk) {
        _ if from == to => true,
        (0, _) => true,
        (_, 0) => false,
        (1, 1) | (2, 2) | (3, 3) | (4, 4) => ts >= fs,
        (1, 2) => ts > fs,
        (2, 1) => false,
        // Integers to floats: the float's mantissa must hold the integer (int64 -> float64 is
        // "safe" in NumPy, as is uint64 -> float64).
        (1 | 2, 3) => match fs {
            1 => ts >= 2,
            2 => ts >= 4,
            _ => ts >= 8,
        },
        (1 | 2, 4) => match fs {
            1 => ts >= 4,
            2 => ts >= 8,
            _ => ts >= 16,
        },
        (3, 4) => ts >= 2 * fs,
        _ => false,
    }
}

fn can_cast(from: &Datatype, to: &Datatype) -> Result<(), String> {
    match (from, to) {
        (Datatype::Scalar(a), Datatype::Scalar(b)) => {
            if can_cast_scalar(*a, *b) {
                Ok(())
            } else {
                Err(format!(
                    "Can not safely cast from '{}' to '{}'",
                    a.name(),
                    b.name()
                ))
            }
        }
        (Datatype::Ascii(a), Datatype::Ascii(b))
        | (Datatype::Ascii(a), Datatype::Ucs4(b))
        | (Datatype::Ucs4(a), Datatype::Ucs4(b)) => {
            if b >= a {
                Ok(())
            } else {
                Err(format!(
                    "Can not safely cast a string of {a} characters to one of {b}"
                ))
            }
        }
        (Datatype::Scalar(_), Datatype::Record(_))
        | (Datatype::Ascii(_) | Datatype::Ucs4(_), Datatype::Record(_)) => {
            Err("Expected a structured datatype".to_string())
        }
        (Datatype::Record(_), Datatype::Scalar(_) | Datatype::Ascii(_) | Datatype::Ucs4(_)) => {
            Err("Expected a scalar datatype, got a structured one".to_string())
        }
        (Datatype::Record(a), Datatype::Record(b)) => {
            if a.len() != b.len() {
                return Err(format!(
                    "Mismatch in number of columns: Expected {}, got {}",
                    b.len(),
                    a.len()
                ));
            }
            for (fa, fb) in a.iter().zip(b) {
                can_cast(&fa.datatype, &fb.datatype)?;
            }
            Ok(())
        }
        (Datatype::Scalar(s), Datatype::Ascii(_) | Datatype::Ucs4(_))
            if *s != ScalarType::Bool8 =>
        {
            Err(format!(
                "Can not safely cast from '{}' to a string",
                s.name()
            ))
        }
        _ => Err("Can not safely cast between these datatypes".to_string()),
    }
}

impl DatatypeKw {
    fn check(&self, n: &Node) -> Result<(), String> {
        let actual = if n.as_seq().is_some() {
            asdf_ndarray::infer_datatype(n)
        } else if let Some(m) = n.as_map() {
            if let Some(dt) = m.get("datatype") {
                Datatype::from_node(dt).map_err(|e| format!("invalid datatype: {e}"))?
            } else if let Some(d) = m.get("data") {
                asdf_ndarray::infer_datatype(d)
            } else {
                return Err("Not an array".to_string());
            }
        } else {
            return Err("Not an array".to_string());
        };
        if actual.without_byteorders() == self.expected.without_byteorders() {
            return Ok(());
        }
        if self.exact {
            return Err(format!(
                "Expected datatype '{}', got '{}'",
                self.text,
                datatype_text(&actual)
            ));
        }
        can_cast(&actual, &self.expected)
    }
}

fn datatype_text(d: &Datatype) -> String {
    match d {
        Datatype::Scalar(s) => s.name().to_string(),
        Datatype::Ascii(n) => format!("['ascii', {n}]"),
        Datatype::Ucs4(n) => format!("['ucs4', {n}]"),
        Datatype::Record(f) => format!("a record of {} fields", f.len()),
    }
}

impl<'i> Keyword<'i, YamlTree> for DatatypeKw {
    fn validate(&self, instance: NodeRef<'i>) -> Result<(), ValidationError<'i>> {
        self.check(instance.node()).map_err(ValidationError::custom)
    }
    fn is_valid(&self, instance: NodeRef<'i>) -> bool {
        self.check(instance.node()).is_ok()
    }
}

pub(crate) fn datatype_factory<'a>(
    parent: &'a Map<String, J>,
    schema: &'a J,
    _path: Location,
) -> Result<Boxed, ValidationError<'a>> {
    let expected =
        Datatype::from_node(&json_to_node(schema)).map_err(|_| bad_value(schema, "datatype"))?;
    let exact = parent
        .get("exact_datatype")
        .and_then(J::as_bool)
        .unwrap_or(false);
    Ok(Box::new(DatatypeKw {
        expected,
        text: schema.to_string(),
        exact,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(uri_match("a*c", "abbc"));
        assert!(!uri_match("a*c", "ab/c"));
        assert!(uri_match("a**c", "ab/c"));
        assert!(uri_match("*", ""));
        assert!(!uri_match("a*", "b"));
        assert!(uri_match("tag:x/*-1.*", "tag:x/foo-1.2.0"));
        assert!(!uri_match("tag:x/*-1.*", "tag:x/foo-2.0.0"));
    }

    #[test]
    fn safe_casts_follow_numpy() {
        use ScalarType::*;
        assert!(can_cast_scalar(Int8, Float16));
        assert!(can_cast_scalar(Int64, Float64));
        assert!(!can_cast_scalar(Int32, Float32));
        assert!(can_cast_scalar(Int16, Float32));
        assert!(can_cast_scalar(UInt8, Int16));
        assert!(!can_cast_scalar(UInt8, Int8));
        assert!(!can_cast_scalar(Int8, UInt64));
        assert!(!can_cast_scalar(Float64, Float32));
        assert!(can_cast_scalar(Float32, Complex64));
        assert!(!can_cast_scalar(Float64, Complex64));
        assert!(can_cast_scalar(Bool8, Int8));
        assert!(!can_cast_scalar(Int8, Bool8));
    }
}
