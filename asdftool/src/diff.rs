//! `diff`: compare two files by content; arrays by value whatever their storage.

use std::path::Path;

use asdf::ndarray::NdArrayMeta;
use std::collections::HashMap;

use asdf::yaml::{Mapping, Node, Value};
use asdf::{AnyArray, ArrayKind, AsdfFile};

use crate::error::Result;
use crate::input::{self, Input};
use crate::tree::{escape, key_text, scalar_text, short_tag, MAX_DEPTH};

/// Options of `diff`.
#[derive(Clone, Debug, Default)]
pub struct DiffOptions {
    /// Compare `asdf_library` and `history` too.
    pub include_metadata: bool,
    /// The array of an ASDF side compared with a single-array file.
    pub pointer: Option<String>,
}

/// Compares the files at `a` and `b`; returns the differences (empty when equal). Block
/// checksums are not verified: the content itself is compared.
pub fn diff(a: &Path, b: &Path, opts: &DiffOptions) -> Result<Vec<String>> {
    let (la, lb) = (input::localize(a)?, input::localize(b)?);
    let (a, b) = (la.path(), lb.path());
    // The bytes are compared themselves: checksums are not verified (`verify` checks them).
    let (_, ia) = input::open_any_as(a, input::Checksums::Unverified)?;
    let (_, ib) = input::open_any_as(b, input::Checksums::Unverified)?;
    let mut out = Vec::new();
    match (&ia, &ib) {
        (Input::Asdf(fa), Input::Asdf(fb)) => {
            let ta = crate::refs::resolve(fa.tree(), Some(a), fa.open_options())
                .unwrap_or_else(|_| fa.tree().clone());
            let tb = crate::refs::resolve(fb.tree(), Some(b), fb.open_options())
                .unwrap_or_else(|_| fb.tree().clone());
            let mut d = Differ {
                fa,
                fb,
                out: &mut out,
                opts,
            };
            d.node(&ta, &tb, &mut String::new(), 0);
            input::release((ta, tb));
        }
        (Input::Array(x, _), Input::Array(y, _)) => {
            compare_arrays("", Ok(x.clone()), Ok(y.clone()), &mut out)
        }
        (Input::Asdf(f), Input::Array(y, _)) => {
            let p = input::pick_array(f, opts.pointer.as_deref())?;
            compare_arrays(
                &p,
                input::asdf_array(f, &p).map_err(|e| e.to_string()),
                Ok(y.clone()),
                &mut out,
            );
        }
        (Input::Array(x, _), Input::Asdf(f)) => {
            let p = input::pick_array(f, opts.pointer.as_deref())?;
            compare_arrays(
                &p,
                Ok(x.clone()),
                input::asdf_array(f, &p).map_err(|e| e.to_string()),
                &mut out,
            );
        }
        _ => {
            let (ja, jb) = (crate::awk::to_json_any(a)?, crate::awk::to_json_any(b)?);
            if ja != jb {
                out.push("the awkward arrays differ".into());
            }
        }
    }
    input::release((ia, ib));
    Ok(out)
}

fn describe(a: &AnyArray) -> String {
    format!("shape {:?} {}", a.shape(), a.datatype())
}

fn compare_arrays(
    path: &str,
    a: std::result::Result<AnyArray, String>,
    b: std::result::Result<AnyArray, String>,
    out: &mut Vec<String>,
) {
    let p = if path.is_empty() { "/" } else { path };
    match (a, b) {
        (Ok(x), Ok(y)) => {
            if x.shape() != y.shape()
                || x.datatype().without_byteorders() != y.datatype().without_byteorders()
            {
                out.push(format!(
                    "{p}: arrays differ: {} != {}",
                    describe(&x),
                    describe(&y)
                ));
            } else if !x.equals_nan_aware(&y) {
                out.push(format!("{p}: array values differ ({})", describe(&x)));
            }
        }
        (Err(e), _) => out.push(format!("{p}: cannot read the first array: {e}")),
        (_, Err(e)) => out.push(format!("{p}: cannot read the second array: {e}")),
    }
}

struct Differ<'a> {
    fa: &'a AsdfFile,
    fb: &'a AsdfFile,
    out: &'a mut Vec<String>,
    opts: &'a DiffOptions,
}

fn read_with_mask(
    f: &AsdfFile,
    node: &Node,
) -> std::result::Result<(AnyArray, Option<ndarray::ArrayD<bool>>), String> {
    match asdf::array_kind(node) {
        Some(ArrayKind::Chunked) => asdf::ndarray::ChunkedArray::from_node(node)
            .and_then(|c| c.read_with(f, &f.open_options().arrays))
            .map(|a| (a, None))
            .map_err(|e| e.to_string()),
        _ => NdArrayMeta::from_node(node)
            .and_then(|m| m.read_masked_with(f, &f.open_options().arrays))
            .map_err(|e| e.to_string()),
    }
}

/// Whether two unmasked ndarrays in uncompressed blocks are shown equal by their bytes alone,
/// compared where they lie. Anything else is compared by value (a compressed block is not
/// decoded here only to be decoded again when its values must be compared).
fn same_bytes(fa: &AsdfFile, a: &Node, fb: &AsdfFile, b: &Node) -> bool {
    let plain = |f: &AsdfFile, n: &Node| {
        if asdf::array_kind(n) != Some(ArrayKind::NdArray) || n.get("mask").is_some() {
            return None;
        }
        let meta = NdArrayMeta::from_node(n).ok()?;
        match meta.source {
            Some(asdf::ndarray::Source::Block(s)) if !f.block_is_compressed(s) => Some(meta),
            _ => None,
        }
    };
    match (plain(fa, a), plain(fb, b)) {
        (Some(x), Some(y)) => x
            .same_bytes_with(fa, &y, fb, &fa.open_options().arrays)
            .unwrap_or(false),
        _ => false,
    }
}

fn short(node: &Node) -> String {
    match scalar_text(node) {
        Some(s) => {
            let s: String = s.chars().take(80).collect();
            format!("{s:?}")
        }
        None => format!("<{}>", node.kind()),
    }
}

impl Differ<'_> {
    fn push(&mut self, path: &str, msg: String) {
        let p = if path.is_empty() { "/" } else { path };
        self.out.push(format!("{p}: {msg}"));
    }

    fn node(&mut self, a: &Node, b: &Node, path: &mut String, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        if asdf::array_kind(a).is_some() || asdf::array_kind(b).is_some() {
            self.arrays(a, b, path);
            return;
        }
        // The root tag follows the ASDF Standard version: metadata.
        if a.tag() != b.tag() && (depth > 0 || self.opts.include_metadata) {
            self.push(
                path,
                format!(
                    "tags differ: {} != {}",
                    a.tag().map_or("(none)", short_tag),
                    b.tag().map_or("(none)", short_tag)
                ),
            );
        }
        match (a.value(), b.value()) {
            (Value::Map(ma), Value::Map(mb)) => self.mappings(ma, mb, path, depth),
            (Value::Seq(sa), Value::Seq(sb)) => {
                if sa.len() != sb.len() {
                    self.push(
                        path,
                        format!("lists differ in length: {} != {}", sa.len(), sb.len()),
                    );
                }
                let len = path.len();
                for (i, (x, y)) in sa.iter().zip(sb.iter()).enumerate() {
                    path.push_str(&format!("/{i}"));
                    self.node(x, y, path, depth + 1);
                    path.truncate(len);
                }
            }
            (Value::Float(x), Value::Float(y)) => {
                if !(x == y || (x.is_nan() && y.is_nan())) {
                    self.push(path, format!("{} != {}", short(a), short(b)));
                }
            }
            (x, y) => {
                let same = match (x, y) {
                    (Value::Map(_) | Value::Seq(_), _) | (_, Value::Map(_) | Value::Seq(_)) => {
                        false
                    }
                    _ => Node::new(x.clone()) == Node::new(y.clone()),
                };
                if !same {
                    self.push(path, format!("{} != {}", short(a), short(b)));
                }
            }
        }
    }

    /// Two nodes of which at least one is an array: compared by bytes where that shows them
    /// equal, else by values (masked elements left out when either side has a mask).
    fn arrays(&mut self, a: &Node, b: &Node, path: &str) {
        if asdf::array_kind(a).is_none() || asdf::array_kind(b).is_none() {
            let msg = format!(
                "an array on one side only ({} vs {})",
                kind_of(a),
                kind_of(b)
            );
            self.push(path, msg);
            return;
        }
        if same_bytes(self.fa, a, self.fb, b) {
            return;
        }
        let (ra, rb) = (read_with_mask(self.fa, a), read_with_mask(self.fb, b));
        let (ma, mb) = (
            ra.as_ref().ok().and_then(|r| r.1.clone()),
            rb.as_ref().ok().and_then(|r| r.1.clone()),
        );
        let any =
            |m: &Option<ndarray::ArrayD<bool>>| m.as_ref().is_some_and(|m| m.iter().any(|&x| x));
        if !(any(&ma) || any(&mb)) {
            compare_arrays(path, ra.map(|r| r.0), rb.map(|r| r.0), self.out);
            return;
        }
        match (ra, rb) {
            (Ok((x, _)), Ok((y, _))) => {
                if x.shape() != y.shape()
                    || x.datatype().without_byteorders() != y.datatype().without_byteorders()
                {
                    let msg = format!("arrays differ: {} != {}", describe(&x), describe(&y));
                    self.push(path, msg);
                } else if ma != mb {
                    self.push(path, "masks differ".into());
                } else if !x.equals_nan_aware_where(&y, ma.as_ref()) {
                    let msg = format!("unmasked array values differ ({})", describe(&x));
                    self.push(path, msg);
                }
            }
            (a, b) => compare_arrays(path, a.map(|r| r.0), b.map(|r| r.0), self.out),
        }
    }

    /// Two mappings, key by key through an index (`asdf_library` and `history` of the root
    /// skipped unless metadata is compared).
    fn mappings(&mut self, ma: &Mapping, mb: &Mapping, path: &mut String, depth: usize) {
        let skipped = |kt: &str| {
            depth == 0 && !self.opts.include_metadata && (kt == "asdf_library" || kt == "history")
        };
        let (ia, ib) = (KeyIndex::new(ma), KeyIndex::new(mb));
        let len = path.len();
        for (k, va) in ma.iter() {
            let kt = key_text(k);
            if skipped(&kt) {
                continue;
            }
            path.push('/');
            path.push_str(&escape(&kt));
            match ib.get(mb, k) {
                Some(vb) => self.node(va, vb, path, depth + 1),
                None => {
                    let p = path.clone();
                    self.push(&p, "only in the first file".into());
                }
            }
            path.truncate(len);
        }
        for (k, _) in mb.iter() {
            let kt = key_text(k);
            if !skipped(&kt) && ia.get(ma, k).is_none() {
                let p = format!("{path}/{}", escape(&kt));
                self.push(&p, "only in the second file".into());
            }
        }
    }
}

/// The keys of a large mapping by their text, so comparing two mappings of n keys costs O(n)
/// lookups instead of n linear scans (100 000 keys took 90 s). Small mappings are scanned.
struct KeyIndex<'n>(Option<HashMap<String, Vec<(&'n Node, &'n Node)>>>);

impl<'n> KeyIndex<'n> {
    const SMALL: usize = 16;

    fn new(m: &'n Mapping) -> Self {
        if m.len() <= Self::SMALL {
            return KeyIndex(None);
        }
        let mut index: HashMap<String, Vec<(&Node, &Node)>> = HashMap::with_capacity(m.len());
        for (k, v) in m.iter() {
            index.entry(key_text(k)).or_default().push((k, v));
        }
        KeyIndex(Some(index))
    }

    /// The value of key `k` in `m` (the mapping this index was built from).
    fn get(&self, m: &'n Mapping, k: &Node) -> Option<&'n Node> {
        match &self.0 {
            None => m.get_node(k),
            Some(index) => index
                .get(&key_text(k))?
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| *v),
        }
    }
}

fn kind_of(n: &Node) -> String {
    match n.tag() {
        Some(t) => short_tag(t).to_string(),
        None => n.kind().to_string(),
    }
}
