//! JSON Pointer (RFC 6901) over [`Node`] trees.

use crate::error::{Error, Result};
use crate::node::{Mapping, Node, Value};

/// JSON Pointer lookups as methods of [`Node`] (defined beside the pointer grammar they use).
impl Node {
    /// Looks up a JSON Pointer (RFC 6901: `/a/0`, `~1` for `/`, `~0` for `~`; `""` is the node
    /// itself). Mapping segments match string keys (and integer keys as a fallback); sequence
    /// segments are decimal indices.
    ///
    /// ```
    /// use asdf_yaml::Node;
    /// let n = asdf_yaml::parse_str("a/b: {c~d: [10, 20]}").unwrap();
    /// assert_eq!(n.pointer("/a~1b/c~0d/1").and_then(Node::as_i64), Some(20));
    /// assert!(n.pointer("/missing").is_none());
    /// ```
    pub fn pointer(&self, pointer: &str) -> Option<&Node> {
        lookup(self, pointer).ok()
    }

    /// Mutable JSON Pointer lookup (copy on write through shared subtrees on the way).
    pub fn pointer_mut(&mut self, pointer: &str) -> Option<&mut Node> {
        let tokens = tokens(pointer).ok()?;
        let mut node = self;
        for tok in tokens {
            node = match node.value_mut() {
                Value::Map(m) => {
                    let idx = map_index(m, &tok)?;
                    m.value_at_mut(idx)?
                }
                Value::Seq(s) => s.get_mut(seq_index(&tok)?)?,
                _ => return None,
            };
        }
        Some(node)
    }
}

/// Splits a pointer into unescaped reference tokens (`~1` -> `/`, then `~0` -> `~`).
///
/// ```
/// assert_eq!(asdf_yaml::pointer::tokens("/a~1b/~01").unwrap(), vec!["a/b", "~1"]);
/// assert!(asdf_yaml::pointer::tokens("a").is_err());
/// ```
pub fn tokens(pointer: &str) -> Result<Vec<String>> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(Error::InvalidPointer {
            pointer: pointer.to_string(),
            message: "a non-empty pointer must start with '/'",
        });
    };
    rest.split('/')
        .map(|t| unescape(t).ok_or_else(|| bad_escape(pointer)))
        .collect()
}

fn bad_escape(pointer: &str) -> Error {
    Error::InvalidPointer {
        pointer: pointer.to_string(),
        message: "'~' must be followed by '0' or '1'",
    }
}

fn unescape(token: &str) -> Option<String> {
    if !token.contains('~') {
        return Some(token.to_string());
    }
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// Escapes one reference token (`~` -> `~0`, `/` -> `~1`).
pub fn escape(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    push_escaped(&mut out, token);
    out
}

/// Appends `/` and the escaped `token` to the pointer `path`, without allocating when `path`
/// has room (the walkers of large trees build every node's pointer this way).
///
/// ```
/// let mut path = String::from("/a");
/// asdf_yaml::pointer::push_token(&mut path, "b/c~d");
/// assert_eq!(path, "/a/b~1c~0d");
/// assert_eq!(asdf_yaml::pointer::escape("x/y"), "x~1y");
/// ```
pub fn push_token(path: &mut String, token: &str) {
    path.push('/');
    push_escaped(path, token);
}

/// Appends `/` and the token of the mapping key `key`: a string key as itself (escaped), any
/// other scalar as its text (`1`, `true`, `null`, `1.5`), a collection as its debug form.
///
/// ```
/// use asdf_yaml::{pointer::push_key, Node};
/// let mut path = String::new();
/// push_key(&mut path, &Node::from("a/b"));
/// push_key(&mut path, &Node::from(3i64));
/// assert_eq!(path, "/a~1b/3");
/// ```
pub fn push_key(path: &mut String, key: &Node) {
    use std::fmt::Write;
    match key.value() {
        Value::Str(s) => push_token(path, s),
        Value::BigInt(s) => push_token(path, s),
        Value::Int(i) => {
            let _ = write!(path, "/{i}");
        }
        Value::Bool(b) => {
            let _ = write!(path, "/{b}");
        }
        Value::Null => path.push_str("/null"),
        Value::Float(f) => push_token(path, &f.to_string()),
        _ => push_token(path, &format!("{key:?}")),
    }
}

fn push_escaped(out: &mut String, token: &str) {
    if !token.contains(['~', '/']) {
        out.push_str(token);
        return;
    }
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

/// Index of the entry a token selects: the string key equal to the token, else an integer key
/// with that decimal value.
pub(crate) fn map_index(m: &Mapping, token: &str) -> Option<usize> {
    if let Some(i) = m.position(token) {
        return Some(i);
    }
    let as_int: i64 = token.parse().ok()?;
    m.keys().position(|k| k.as_i64() == Some(as_int))
}

/// A sequence index token: decimal digits, no leading zeros (RFC 6901).
pub(crate) fn seq_index(token: &str) -> Option<usize> {
    if token.is_empty()
        || !token.bytes().all(|c| c.is_ascii_digit())
        || (token.len() > 1 && token.starts_with('0'))
    {
        return None;
    }
    token.parse().ok()
}

/// Why a lookup failed: the prefix of the pointer that resolved and a message.
pub(crate) struct Miss {
    pub at: String,
    pub message: String,
}

/// Looks up `pointer` in `root`; on failure says which segment failed.
pub(crate) fn lookup_detailed<'a>(
    root: &'a Node,
    pointer: &str,
) -> Result<std::result::Result<&'a Node, Miss>> {
    let toks = tokens(pointer)?;
    let mut node = root;
    let mut at = String::new();
    for tok in toks {
        let next = match node.value() {
            Value::Map(m) => map_index(m, &tok).and_then(|i| m.value_at(i)),
            Value::Seq(s) => seq_index(&tok).and_then(|i| s.get(i)),
            _ => None,
        };
        match next {
            Some(n) => {
                node = n;
                at.push('/');
                at.push_str(&escape(&tok));
            }
            None => {
                let message = match node.value() {
                    Value::Map(_) => format!("no key {tok:?}"),
                    Value::Seq(s) => format!("no index {tok:?} (length {})", s.len()),
                    _ => format!("cannot descend into a {} with {tok:?}", node.kind()),
                };
                return Ok(Err(Miss {
                    at: if at.is_empty() { "/".into() } else { at },
                    message,
                }));
            }
        }
    }
    Ok(Ok(node))
}

/// Looks up `pointer` in `root`.
pub(crate) fn lookup<'a>(root: &'a Node, pointer: &str) -> Result<&'a Node> {
    match lookup_detailed(root, pointer)? {
        Ok(n) => Ok(n),
        Err(miss) => Err(Error::DanglingReference {
            reference: pointer.to_string(),
            path: miss.at,
            message: miss.message,
        }),
    }
}

#[cfg(test)]
mod tests {
    use crate::node::{Mapping, Node};

    /// Large mappings are searched through their key index: string keys first, then integer
    /// keys by value, in both the shared and the mutable lookup.
    #[test]
    fn large_mappings_resolve_string_then_integer_keys() {
        let mut m: Mapping = (0..5_000)
            .map(|i| (Node::from(format!("k{i}")), Node::from(i as i64)))
            .collect();
        m.insert(Node::from(77i64), Node::from("int key"));
        m.insert(Node::from("77"), Node::from("string key"));
        m.insert(Node::from(78i64), Node::from("only int"));
        let mut root = Node::mapping([("m", Node::from(m))]);
        assert_eq!(root.pointer("/m/k4321").and_then(Node::as_i64), Some(4321));
        assert_eq!(
            root.pointer("/m/77").and_then(Node::as_str),
            Some("string key")
        );
        assert_eq!(
            root.pointer("/m/78").and_then(Node::as_str),
            Some("only int")
        );
        assert!(root.pointer("/m/k5000").is_none());
        *root.pointer_mut("/m/k12").unwrap() = Node::from("changed");
        assert_eq!(
            root.pointer("/m/k12").and_then(Node::as_str),
            Some("changed")
        );
        assert_eq!(root.pointer("/m/k13").and_then(Node::as_i64), Some(13));
    }
}
