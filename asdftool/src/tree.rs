//! Walking and rebuilding ASDF trees: JSON Pointers, array replacement keeping anchors, JSON.

use std::collections::HashMap;
use std::sync::Arc;

use asdf::yaml::{Mapping, Node, Value};

use crate::error::{CliError, Result};

/// Deepest nesting the tool walks (the YAML parser has its own, lower, limit).
pub const MAX_DEPTH: usize = 2_000;

/// Escapes one JSON Pointer token (`~` → `~0`, `/` → `~1`): the YAML layer's rule, re-exported.
///
/// ```
/// assert_eq!(asdftool::tree::escape("a/b~c"), "a~1b~0c");
/// ```
pub use asdf::yaml::pointer::escape;

/// The text of a mapping key as it appears in a JSON Pointer and in listings.
pub fn key_text(key: &Node) -> String {
    match key.value() {
        Value::Str(s) => s.to_string(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(s) => s.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Null => "null".into(),
        _ => "<complex key>".into(),
    }
}

/// Rebuilds `root`, replacing every array node (ndarray or chunked ndarray) by what `f` returns
/// for it (given its JSON Pointer). Tags, key order and anchors/aliases are kept: a shared
/// subtree is rebuilt once and shared again.
pub fn map_arrays(root: &Node, f: &mut dyn FnMut(&str, &Node) -> Result<Node>) -> Result<Node> {
    let mut memo = HashMap::new();
    let mut path = String::new();
    walk(root, &mut path, f, &mut memo, 0)
}

fn walk(
    node: &Node,
    path: &mut String,
    f: &mut dyn FnMut(&str, &Node) -> Result<Node>,
    memo: &mut HashMap<*const Node, Node>,
    depth: usize,
) -> Result<Node> {
    if depth > MAX_DEPTH {
        return Err(CliError::Invalid(format!(
            "the tree is nested more than {MAX_DEPTH} levels deep at {path:?}"
        )));
    }
    if let Some(arc) = node.shared() {
        let key = Arc::as_ptr(arc);
        if let Some(done) = memo.get(&key) {
            return Ok(done.clone());
        }
        let inner = walk(arc, path, f, memo, depth + 1)?;
        let shared = inner.into_shared();
        memo.insert(key, shared.clone());
        return Ok(shared);
    }
    if asdf::array_kind(node).is_some() {
        return f(path, node);
    }
    let len = path.len();
    let rebuilt = match node.value() {
        Value::Map(m) => {
            let mut out = Mapping::new();
            for (k, v) in m.iter() {
                asdf::yaml::pointer::push_token(path, &key_text(k));
                let nv = walk(v, path, f, memo, depth + 1)?;
                path.truncate(len);
                out.insert(k.clone(), nv);
            }
            Node::from(out)
        }
        Value::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, v) in items.iter().enumerate() {
                path.push_str(&format!("/{i}"));
                out.push(walk(v, path, f, memo, depth + 1)?);
                path.truncate(len);
            }
            Node::from(out)
        }
        _ => return Ok(node.clone()),
    };
    Ok(match node.tag() {
        Some(t) => rebuilt.with_tag(t),
        None => rebuilt,
    })
}

/// Visits every node with its JSON Pointer and key (pre-order); `visit` returns whether to
/// descend into the node. Shared subtrees are visited at each place they appear.
pub fn visit(root: &Node, visit: &mut dyn FnMut(&str, Option<&str>, &Node) -> bool) {
    fn go(
        node: &Node,
        key: Option<&str>,
        path: &mut String,
        f: &mut dyn FnMut(&str, Option<&str>, &Node) -> bool,
        depth: usize,
    ) {
        if depth > MAX_DEPTH || !f(path, key, node) {
            return;
        }
        let len = path.len();
        match node.value() {
            Value::Map(m) => {
                for (k, v) in m.iter() {
                    let kt = key_text(k);
                    asdf::yaml::pointer::push_token(path, &kt);
                    go(v, Some(&kt), path, f, depth + 1);
                    path.truncate(len);
                }
            }
            Value::Seq(items) => {
                for (i, v) in items.iter().enumerate() {
                    let kt = i.to_string();
                    path.push('/');
                    path.push_str(&kt);
                    go(v, Some(&kt), path, f, depth + 1);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }
    go(root, None, &mut String::new(), visit, 0);
}

/// A scalar's text as shown in listings (`None` for collections).
pub fn scalar_text(node: &Node) -> Option<String> {
    Some(match node.value() {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(s) => s.to_string(),
        Value::Float(f) => format_float(*f),
        Value::Str(s) => s.to_string(),
        _ => return None,
    })
}

fn format_float(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else {
        format!("{f:?}")
    }
}

/// A short name of a node's tag (`core/ndarray-1.1.0` for standard tags), or its YAML kind.
pub fn type_name(node: &Node) -> String {
    match node.tag() {
        Some(t) => short_tag(t).to_string(),
        None => match node.value() {
            Value::Map(_) => "dict".into(),
            Value::Seq(_) => "list".into(),
            _ => node.kind().to_string(),
        },
    }
}

/// A tag without the `tag:stsci.edu:asdf/` prefix.
pub fn short_tag(tag: &str) -> &str {
    tag.strip_prefix("tag:stsci.edu:asdf/").unwrap_or(tag)
}

/// The tree as JSON: mappings become objects (keys as text), tags are dropped, NaN and
/// infinities become strings.
pub fn to_json(node: &Node, depth: usize) -> serde_json::Value {
    use serde_json::Value as J;
    if depth > MAX_DEPTH {
        return J::Null;
    }
    match node.value() {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::BigInt(s) => J::String(s.to_string()),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(J::Number)
            .unwrap_or_else(|| J::String(format_float(*f))),
        Value::Str(s) => J::String(s.to_string()),
        Value::Seq(items) => J::Array(items.iter().map(|n| to_json(n, depth + 1)).collect()),
        Value::Packed(_) => to_json(&node.unpacked(), depth),
        Value::Map(m) => J::Object(
            m.iter()
                .map(|(k, v)| (key_text(k), to_json(v, depth + 1)))
                .collect(),
        ),
        Value::Shared(inner) => to_json(inner, depth + 1),
    }
}

/// [`to_json`] as a [`serde::Serialize`] value written while the tree is walked, so a tree of
/// millions of nodes is never copied into a `serde_json::Value` first (`info --json` held
/// several times the tree in values).
pub struct JsonTree<'a>(pub &'a Node, pub usize);

impl serde::Serialize for JsonTree<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        let JsonTree(node, depth) = *self;
        if depth > MAX_DEPTH {
            return s.serialize_unit();
        }
        match node.value() {
            Value::Seq(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for n in items.iter() {
                    seq.serialize_element(&JsonTree(n, depth + 1))?;
                }
                seq.end()
            }
            Value::Map(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m.iter() {
                    map.serialize_entry(&key_text(k), &JsonTree(v, depth + 1))?;
                }
                map.end()
            }
            Value::Shared(inner) => JsonTree(inner, depth + 1).serialize(s),
            _ => to_json(node, depth).serialize(s),
        }
    }
}

/// `text` safe to print on a terminal: control characters other than newline and tab (ESC,
/// which starts the sequences that retitle or clear a terminal, C1 controls, DEL) and the
/// bidirectional overrides that reorder what is shown become `\uXXXX` escapes. The escape is
/// JSON's, so JSON output stays valid JSON with the same values.
///
/// ```
/// use asdftool::tree::printable;
/// assert_eq!(printable("title\u{1b}]0;pwned\u{7}\n"), "title\\u001b]0;pwned\\u0007\n");
/// assert_eq!(printable("a\u{202e}b\tc"), "a\\u202eb\tc");
/// assert!(matches!(printable("plain é"), std::borrow::Cow::Borrowed(_)));
/// ```
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    fn unsafe_char(c: char) -> bool {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_arrays_keeps_anchors_and_tags() {
        let tree = asdf::yaml::parse_str(
            "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
             a: &x !core/ndarray-1.1.0 {data: [1, 2], datatype: int64, shape: [2]}\n\
             b: *x\nc: !core/software-1.0.0 {name: n, version: '1'}\n...\n",
        )
        .unwrap();
        let mut seen = Vec::new();
        let out = map_arrays(&tree, &mut |p, _| {
            seen.push(p.to_string());
            Ok(Node::from("replaced"))
        })
        .unwrap();
        assert_eq!(seen, ["/a"], "a shared array is converted once");
        assert!(out.get("b").unwrap().is_shared());
        assert_eq!(out.pointer("/b").unwrap().as_str(), Some("replaced"));
        assert_eq!(
            out.get("c").unwrap().tag(),
            Some("tag:stsci.edu:asdf/core/software-1.0.0")
        );
        assert_eq!(out.tag(), tree.tag());
    }

    #[test]
    fn json_of_special_floats() {
        let n = asdf::yaml::parse_str("{a: .nan, b: -.inf, c: 1.5}").unwrap();
        let j = to_json(&n, 0);
        assert_eq!(j["a"], "nan");
        assert_eq!(j["b"], "-inf");
        assert_eq!(j["c"], 1.5);
    }
}
