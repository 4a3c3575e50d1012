//! `$ref` resolution (JSON Reference with JSON Pointer fragments).

use std::collections::HashMap;
use std::sync::Arc;

use thin_vec::ThinVec;

use crate::error::{Error, Result};
use crate::node::{Mapping, Node, Value};
use crate::parse::Limits;
use crate::pointer::{self, escape};

/// Supplies external documents named by `$ref` URIs (the part before `#`).
///
/// Each URI found in a document is first [`join`](RefResolver::join)ed with the identity of
/// the document it was found in, so that a relative reference inside a referenced document is
/// resolved against *that* document, never against the process's working directory; the
/// joined identity is what [`load`](RefResolver::load) receives, what later references from
/// the loaded document are joined with, and what documents are cached and cycles detected by.
pub trait RefResolver {
    /// The identity (an absolute URI or path) of the document `uri` names when it is found in
    /// the document `base`: `None` for the tree being resolved, otherwise an identity this
    /// method returned before. An error refuses the reference (a policy on which documents may
    /// be read belongs here).
    ///
    /// The default joins a relative `uri` onto the directory part of `base` (the text up to its
    /// last `/`) and keeps absolute ones (`/...` or with a scheme) as they are.
    fn join(
        &mut self,
        uri: &str,
        base: Option<&str>,
    ) -> std::result::Result<String, Box<dyn std::error::Error + Send + Sync>> {
        Ok(join_uri(uri, base))
    }

    /// Returns the tree of the document at `uri`, an identity returned by
    /// [`join`](RefResolver::join) (`base` is the identity of the referring document).
    fn load(
        &mut self,
        uri: &str,
        base: Option<&str>,
    ) -> std::result::Result<Node, Box<dyn std::error::Error + Send + Sync>>;
}

/// `uri` relative to the document `base` (see [`RefResolver::join`]): `uri` itself when it is
/// absolute (starts with `/` or has a scheme such as `file:`) or when there is no base, else
/// the directory part of `base` (through its last `/`) followed by `uri`.
///
/// ```
/// use asdf_yaml::join_uri;
/// assert_eq!(join_uri("b.asdf", Some("/data/sub/a.asdf")), "/data/sub/b.asdf");
/// assert_eq!(join_uri("b.asdf", Some("a.asdf")), "b.asdf");
/// assert_eq!(join_uri("/x/b.asdf", Some("/data/a.asdf")), "/x/b.asdf");
/// assert_eq!(join_uri("b.asdf", None), "b.asdf");
/// ```
pub fn join_uri(uri: &str, base: Option<&str>) -> String {
    let has_scheme = uri
        .split_once(':')
        .is_some_and(|(s, _)| !s.is_empty() && !s.contains('/') && !s.contains('#'));
    match base {
        Some(base) if !uri.starts_with('/') && !has_scheme => match base.rfind('/') {
            Some(i) => format!("{}{uri}", &base[..=i]),
            None => uri.to_string(),
        },
        _ => uri.to_string(),
    }
}

/// A resolver that refuses every external document (internal `#/...` references still work).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoExternal;

impl RefResolver for NoExternal {
    fn load(
        &mut self,
        uri: &str,
        _base: Option<&str>,
    ) -> std::result::Result<Node, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("external references are not enabled (asked for {uri:?})").into())
    }
}

impl<F> RefResolver for F
where
    F: FnMut(
        &str,
        Option<&str>,
    ) -> std::result::Result<Node, Box<dyn std::error::Error + Send + Sync>>,
{
    fn load(
        &mut self,
        uri: &str,
        base: Option<&str>,
    ) -> std::result::Result<Node, Box<dyn std::error::Error + Send + Sync>> {
        self(uri, base)
    }
}

/// The `$ref` value if `node` is a reference: a mapping with a string `$ref` entry (other keys
/// are ignored, as Python asdf does).
pub fn reference_target(node: &Node) -> Option<&str> {
    node.as_map()?.get("$ref")?.as_str()
}

/// Returns a copy of `root` with every `$ref` mapping replaced by (a resolved copy of) its target;
/// `root` itself keeps its references.
///
/// Internal references (`#/a/b`, forward ones too) are looked up in `root`; others go to
/// `resolver` (each URI loaded once). Cycles, dangling pointers and runaway expansion are errors.
/// Shared subtrees stay shared in the copy.
///
/// ```
/// use asdf_yaml::{parse_str, resolve_references, Limits, NoExternal, Node, Error};
/// let tree = parse_str("a: {$ref: '#/defs/x'}\ndefs: {x: [1, 2]}").unwrap();
/// let resolved = resolve_references(&tree, &mut NoExternal, &Limits::default()).unwrap();
/// assert_eq!(resolved.pointer("/a/1").and_then(Node::as_i64), Some(2));
/// assert!(tree.pointer("/a/$ref").is_some()); // the original is unchanged
///
/// let cyclic = parse_str("a: {$ref: '#/b'}\nb: {$ref: '#/a'}").unwrap();
/// assert!(matches!(resolve_references(&cyclic, &mut NoExternal, &Limits::default()),
///                  Err(Error::ReferenceCycle { .. })));
/// ```
pub fn resolve_references(
    root: &Node,
    resolver: &mut dyn RefResolver,
    limits: &Limits,
) -> Result<Node> {
    let main = Doc {
        id: String::new(),
        uri: None,
        root: Arc::new(root.clone()),
    };
    let mut r = Resolver {
        resolver,
        docs: HashMap::new(),
        chain: Vec::new(),
        memo: HashMap::new(),
        targets: HashMap::new(),
        nodes: 0,
        limits: *limits,
    };
    let mut path = String::new();
    r.node(root, &main, &mut path, 0)
}

#[derive(Clone)]
struct Doc {
    /// Identity used in cycle detection and caching.
    id: String,
    /// The URI the resolver was given for it (None for the main tree).
    uri: Option<String>,
    root: Arc<Node>,
}

struct Resolver<'a> {
    resolver: &'a mut dyn RefResolver,
    docs: HashMap<String, Doc>,
    chain: Vec<String>,
    memo: HashMap<*const Node, Node>,
    /// Resolved reference targets by `doc#pointer`, with their node counts (charged again on
    /// every reuse, so repeated references cannot grow the copy unboundedly).
    targets: HashMap<String, (Node, u64)>,
    nodes: u64,
    limits: Limits,
}

fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

impl Resolver<'_> {
    fn count(&mut self) -> Result<()> {
        self.charge(1)
    }

    fn charge(&mut self, n: u64) -> Result<()> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > self.limits.max_alias_nodes.max(1) {
            return Err(Error::ResolveLimit {
                what: "nodes",
                limit: self.limits.max_alias_nodes,
            });
        }
        Ok(())
    }

    fn document(&mut self, uri: &str, from: &Doc) -> Result<Doc> {
        let external = |source| Error::External {
            uri: uri.to_string(),
            source,
        };
        // Joined with the referring document's identity: relative references inside a
        // referenced document are relative to it, and one document has one identity.
        let id = self
            .resolver
            .join(uri, from.uri.as_deref())
            .map_err(external)?;
        if let Some(d) = self.docs.get(&id) {
            return Ok(d.clone());
        }
        let tree = self
            .resolver
            .load(&id, from.uri.as_deref())
            .map_err(external)?;
        let doc = Doc {
            id: id.clone(),
            uri: Some(id.clone()),
            root: Arc::new(tree),
        };
        self.docs.insert(id, doc.clone());
        Ok(doc)
    }

    fn node(&mut self, node: &Node, doc: &Doc, path: &mut String, depth: usize) -> Result<Node> {
        if depth > self.limits.max_depth {
            return Err(Error::ResolveLimit {
                what: "levels",
                limit: self.limits.max_depth as u64,
            });
        }
        if let Some(reference) = reference_target(node) {
            return self.follow(reference, doc, path, depth);
        }
        if let Value::Shared(arc) = node.raw_value() {
            let ptr = Arc::as_ptr(arc);
            if let Some(done) = self.memo.get(&ptr) {
                return Ok(done.clone());
            }
            let inner = self.node(arc, doc, path, depth + 1)?;
            let shared = inner.into_shared();
            self.memo.insert(ptr, shared.clone());
            return Ok(shared);
        }
        self.count()?;
        let value = match node.value() {
            Value::Seq(items) => {
                let mut out = ThinVec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("/{i}"));
                    out.push(self.node(item, doc, path, depth + 1)?);
                    path.truncate(len);
                }
                Value::Seq(out)
            }
            Value::Map(m) => {
                let mut out = Mapping::new();
                for (k, v) in m.iter() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&escape(k.as_str().unwrap_or("?")));
                    let resolved = self.node(v, doc, path, depth + 1)?;
                    path.truncate(len);
                    out.push_unchecked(k.clone(), resolved);
                }
                Value::Map(out)
            }
            other => other.clone(),
        };
        let out = Node::new(value);
        Ok(match node.tag() {
            Some(t) => out.with_tag(t),
            None => out,
        })
    }

    /// Follows a reference, and the references its target is, iteratively (a chain of `$ref`s
    /// costs no stack), then resolves the final target.
    fn follow(
        &mut self,
        reference: &str,
        doc: &Doc,
        path: &mut String,
        depth: usize,
    ) -> Result<Node> {
        let start = self.chain.len();
        let out = self.follow_chain(reference, doc, path, depth);
        self.chain.truncate(start);
        out
    }

    /// Follows the chain of references starting at `reference` without recursion; the recursive
    /// call that resolves the final target keeps only a small frame (the work is in `step`).
    fn follow_chain(
        &mut self,
        reference: &str,
        doc: &Doc,
        path: &mut String,
        depth: usize,
    ) -> Result<Node> {
        let mut state = Chain {
            reference: reference.to_string(),
            doc: doc.clone(),
            keys: Vec::new(),
        };
        loop {
            match self.step(&mut state, path)? {
                Step::Done(node) => return Ok(node),
                Step::Next => continue,
                Step::Final(target_doc, pointer_text) => {
                    let before = self.nodes;
                    let node = match pointer::lookup_detailed(&target_doc.root, &pointer_text)? {
                        Ok(target) => self.node(target, &target_doc, path, depth + 2)?,
                        Err(_) => unreachable_lookup()?,
                    };
                    let size = self.nodes - before;
                    for k in state.keys {
                        self.targets.insert(k, (node.clone(), size));
                    }
                    return Ok(node);
                }
            }
        }
    }

    /// One hop of a reference chain.
    #[inline(never)]
    fn step(&mut self, state: &mut Chain, path: &str) -> Result<Step> {
        let (uri, fragment) = state
            .reference
            .split_once('#')
            .unwrap_or((&state.reference, ""));
        let target_doc = if uri.is_empty() {
            state.doc.clone()
        } else {
            let uri = uri.to_string();
            self.document(&uri, &state.doc.clone())?
        };
        let pointer_text = percent_decode(fragment);
        let key = format!("{}#{}", target_doc.id, pointer_text);
        if let Some((node, size)) = self.targets.get(&key) {
            let (node, size) = (node.clone(), *size);
            self.charge(size)?;
            for k in state.keys.drain(..) {
                self.targets.insert(k, (node.clone(), size));
            }
            return Ok(Step::Done(node));
        }
        if let Some(pos) = self.chain.iter().position(|k| *k == key) {
            let mut chain: Vec<String> = self.chain[pos..].to_vec();
            chain.push(key);
            return Err(Error::ReferenceCycle { chain });
        }
        let next = match pointer::lookup_detailed(&target_doc.root, &pointer_text)? {
            Ok(target) => reference_target(target).map(str::to_string),
            Err(miss) => {
                return Err(Error::DanglingReference {
                    reference: state.reference.clone(),
                    path: if path.is_empty() {
                        "/".to_string()
                    } else {
                        path.to_string()
                    },
                    message: format!("{} (resolved up to {})", miss.message, miss.at),
                })
            }
        };
        self.chain.push(key.clone());
        state.keys.push(key);
        match next {
            Some(next) => {
                state.reference = next;
                state.doc = target_doc;
                Ok(Step::Next)
            }
            None => Ok(Step::Final(target_doc, pointer_text)),
        }
    }
}

/// The state of a reference chain being followed.
struct Chain {
    reference: String,
    doc: Doc,
    keys: Vec<String>,
}

enum Step {
    /// The target was resolved before.
    Done(Node),
    /// The target is itself a reference; `Chain` was advanced.
    Next,
    /// The target (in this document, at this pointer) is to be resolved.
    Final(Doc, String),
}

/// `step` already looked the pointer up successfully in the same immutable document.
#[cold]
fn unreachable_lookup() -> Result<Node> {
    Err(Error::ResolveLimit {
        what: "lookups (internal inconsistency)",
        limit: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_str;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("/a%20b/%7E"), "/a b/~");
        assert_eq!(percent_decode("/%zz"), "/%zz");
        assert_eq!(percent_decode("/%2"), "/%2");
    }

    #[test]
    fn external_and_dangling() {
        let tree = parse_str("x: {$ref: 'other.asdf#/data'}\ny: {$ref: '#/nope/0'}").unwrap();
        let mut calls = 0;
        let mut res = |uri: &str, base: Option<&str>| {
            calls += 1;
            assert_eq!((uri, base), ("other.asdf", None));
            Ok(parse_str("data: [1, {$ref: '#/more'}]\nmore: deep").unwrap())
        };
        let err = resolve_references(&tree, &mut res, &Limits::default()).unwrap_err();
        assert!(
            matches!(err, Error::DanglingReference { ref path, .. } if path == "/y"),
            "{err}"
        );
        let tree =
            parse_str("x: {$ref: 'other.asdf#/data'}\nz: {$ref: 'other.asdf#/more'}").unwrap();
        let out = resolve_references(&tree, &mut res, &Limits::default()).unwrap();
        assert_eq!(out.pointer("/x/1").and_then(Node::as_str), Some("deep"));
        assert_eq!(out.get("z").and_then(Node::as_str), Some("deep"));
        assert_eq!(calls, 2); // once per resolve call: cached within a call
    }

    #[test]
    fn nested_references_are_relative_to_their_document() {
        // main -> sub/a.asdf -> b.asdf (next to a.asdf) -> c.asdf (next to b.asdf).
        let tree = parse_str("x: {$ref: 'sub/a.asdf#/v'}").unwrap();
        let mut loads = Vec::new();
        let mut res = |uri: &str, base: Option<&str>| {
            loads.push((uri.to_string(), base.map(str::to_string)));
            Ok(match uri {
                "sub/a.asdf" => parse_str("v: {$ref: 'b.asdf#/w'}").unwrap(),
                "sub/b.asdf" => parse_str("w: [{$ref: 'c.asdf#/z'}]").unwrap(),
                "sub/c.asdf" => parse_str("z: found").unwrap(),
                other => parse_str(&format!("w: [wrong {other}]")).unwrap(),
            })
        };
        let out = resolve_references(&tree, &mut res, &Limits::default()).unwrap();
        assert_eq!(out.pointer("/x/0").and_then(Node::as_str), Some("found"));
        assert_eq!(
            loads,
            [
                ("sub/a.asdf".to_string(), None),
                ("sub/b.asdf".to_string(), Some("sub/a.asdf".to_string())),
                ("sub/c.asdf".to_string(), Some("sub/b.asdf".to_string())),
            ]
        );
    }

    #[test]
    fn a_cycle_across_documents_is_found_by_identity() {
        // a.asdf and ./a.asdf are one document once joined by a resolver that normalises.
        struct Norm;
        impl RefResolver for Norm {
            fn join(
                &mut self,
                uri: &str,
                _base: Option<&str>,
            ) -> std::result::Result<String, Box<dyn std::error::Error + Send + Sync>> {
                Ok(uri.trim_start_matches("./").to_string())
            }
            fn load(
                &mut self,
                uri: &str,
                _base: Option<&str>,
            ) -> std::result::Result<Node, Box<dyn std::error::Error + Send + Sync>> {
                assert_eq!(uri, "a.asdf");
                Ok(parse_str("p: {$ref: './a.asdf#/p'}").unwrap())
            }
        }
        let tree = parse_str("x: {$ref: 'a.asdf#/p'}").unwrap();
        assert!(matches!(
            resolve_references(&tree, &mut Norm, &Limits::default()),
            Err(Error::ReferenceCycle { .. })
        ));
    }

    #[test]
    fn self_reference_is_a_cycle() {
        let tree = parse_str("a: {$ref: '#'}").unwrap();
        assert!(matches!(
            resolve_references(&tree, &mut NoExternal, &Limits::default()),
            Err(Error::ReferenceCycle { .. })
        ));
        let tree = parse_str("a: {$ref: 'x.asdf'}").unwrap();
        assert!(matches!(
            resolve_references(&tree, &mut NoExternal, &Limits::default()),
            Err(Error::External { .. })
        ));
    }

    #[test]
    fn long_reference_chains_are_bounded() {
        // A plain chain is followed iteratively, however long.
        let mut text = String::new();
        for i in 0..5000 {
            text.push_str(&format!("k{i}: {{$ref: '#/k{}'}}\n", i + 1));
        }
        text.push_str("k5000: end\n");
        let tree = parse_str(&text).unwrap();
        let out = resolve_references(&tree, &mut NoExternal, &Limits::default()).unwrap();
        assert_eq!(out["k0"].as_str(), Some("end"));
        // References nested in what they point at build depth: bounded, no stack overflow.
        let mut text = String::new();
        for i in 0..5000 {
            text.push_str(&format!("k{i}: [{{$ref: '#/k{}'}}]\n", i + 1));
        }
        text.push_str("k5000: end\n");
        let tree = parse_str(&text).unwrap();
        assert!(matches!(
            resolve_references(&tree, &mut NoExternal, &Limits::default()),
            Err(Error::ResolveLimit { what: "levels", .. })
        ));
        let short: String = (0..100)
            .map(|i| format!("k{i}: {{$ref: '#/k{}'}}\n", i + 1))
            .collect::<String>()
            + "k100: end\n";
        let out = resolve_references(
            &parse_str(&short).unwrap(),
            &mut NoExternal,
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(out["k0"].as_str(), Some("end"));
    }

    #[test]
    fn expansion_is_bounded() {
        // Each level doubles the size: 2^40 nodes if expanded.
        let mut text = String::from("l0: [1, 2]\n");
        for i in 1..40 {
            text.push_str(&format!(
                "l{i}: [{{$ref: '#/l{p}'}}, {{$ref: '#/l{p}'}}]\n",
                p = i - 1
            ));
        }
        let tree = parse_str(&text).unwrap();
        assert!(matches!(
            resolve_references(&tree, &mut NoExternal, &Limits::default()),
            Err(Error::ResolveLimit { .. })
        ));
    }
}
