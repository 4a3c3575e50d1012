//! Built-in checks of the core tags this project reads and writes, hand-written from the rules of
//! their schemas (no schema files needed).

use asdf_ndarray::{Datatype, ScalarType, MAX_NDIM};
use std::fmt::Write;

use asdf_yaml::{pointer::escape, Mapping, Node, Value};

use crate::Violation;

const CORE: &str = "tag:stsci.edu:asdf/core/";

/// Versions of each core tag the built-in checks know.
const KNOWN: &[(&str, &[&str])] = &[
    ("asdf", &["1.0.0", "1.1.0"]),
    ("ndarray", &["1.0.0", "1.1.0", "1.2.0"]),
    ("chunked-ndarray", &["1.0.0"]),
    ("ndarray-chunk", &["1.0.0"]),
    ("integer", &["1.0.0", "1.1.0", "1.2.0"]),
    ("complex", &["1.0.0"]),
    ("software", &["1.0.0"]),
    ("history_entry", &["1.0.0"]),
    ("extension_metadata", &["1.0.0"]),
    ("constant", &["1.0.0"]),
    ("externalarray", &["1.0.0"]),
];

/// Runs the built-in checks on a whole tree and returns every violation, in tree order.
///
/// Every node tagged with one of the core tags below is checked against the rules of its schema;
/// a core tag with a version this crate does not know (`ndarray-1.5.0`) is a `tag` violation.
/// Checked: `core/asdf-1.0.0/1.1.0` (the root), `ndarray-1.0.0/1.1.0` (source/data, shape,
/// datatype, byteorder, offset, strides, mask, plus consistency: strides and shape lengths,
/// inline data against shape, at most 64 dimensions), `chunked-ndarray-1.0.0` and
/// `ndarray-chunk-1.0.0`, `integer-1.0.0/1.1.0`, `complex-1.0.0`, `software-1.0.0`,
/// `history_entry-1.0.0` and `extension_metadata-1.0.0`.
///
/// ```
/// use asdf_schema::check_builtin;
/// let tree = asdf_yaml::parse_str(
///     "%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
///      asdf_library: !core/software-1.0.0 {name: x}\n\
///      a: !core/ndarray-1.1.0 {source: 0, datatype: int33, byteorder: little, shape: [2, 2], strides: [8]}\n").unwrap();
/// let v = check_builtin(&tree);
/// let found: Vec<(&str, &str)> = v.iter().map(|v| (v.pointer.as_str(), v.rule.as_str())).collect();
/// assert_eq!(found, [("/asdf_library", "required"), ("/a/datatype", "datatype"),
///                    ("/a/strides", "strides-length")]);
/// ```
pub fn check_builtin(tree: &Node) -> Vec<Violation> {
    let mut c = Checker { out: Vec::new() };
    c.walk(tree, &mut String::new(), 0);
    c.out
}

/// Deepest nesting the checker descends into (deeper subtrees are reported, not walked).
const MAX_DEPTH: usize = 512;

struct Checker {
    out: Vec<Violation>,
}

/// Splits `tag:stsci.edu:asdf/core/name-1.2.3` into `("name", "1.2.3")`.
fn core_tag(tag: &str) -> Option<(&str, &str)> {
    let rest = tag.strip_prefix(CORE)?;
    let (name, version) = rest.rsplit_once('-')?;
    Some((name, version))
}

fn push_key(ptr: &str, key: &str) -> String {
    format!("{ptr}/{}", escape(key))
}

fn push_index(ptr: &str, i: usize) -> String {
    format!("{ptr}/{i}")
}

fn kind(n: &Node) -> &'static str {
    match n.value() {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Int(_) | Value::BigInt(_) => "integer",
        Value::Float(_) => "number",
        Value::Str(_) => "string",
        Value::Seq(_) | Value::Packed(_) => "array",
        Value::Map(_) => "object",
        Value::Shared(_) => "shared",
    }
}

fn is_int(n: &Node) -> bool {
    matches!(n.value(), Value::Int(_) | Value::BigInt(_))
}

impl Checker {
    fn v(&mut self, ptr: &str, rule: &str, msg: impl Into<String>) {
        self.out.push(Violation::new(ptr, rule, msg));
    }

    /// Checks `n` and what is under it; `ptr` is its pointer, extended in place for children
    /// (so a walk over a big tree builds no string per node).
    fn walk(&mut self, n: &Node, ptr: &mut String, depth: usize) {
        if depth > MAX_DEPTH {
            self.v(
                ptr,
                "depth",
                format!("tree nested deeper than {MAX_DEPTH} levels; not checked further"),
            );
            return;
        }
        let mut descend = true;
        if let Some((name, version)) = n.tag().and_then(core_tag) {
            descend = self.check_tagged(n, name, version, ptr);
        }
        if !descend {
            return;
        }
        let len = ptr.len();
        match n.value() {
            Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    let _ = write!(ptr, "/{i}");
                    self.walk(item, ptr, depth + 1);
                    ptr.truncate(len);
                }
            }
            Value::Map(m) => {
                for (k, item) in m.iter() {
                    asdf_yaml::pointer::push_key(ptr, k);
                    self.walk(item, ptr, depth + 1);
                    ptr.truncate(len);
                }
            }
            _ => {}
        }
    }

    /// Checks a core-tagged node; returns whether its children are to be walked.
    fn check_tagged(&mut self, n: &Node, name: &str, version: &str, ptr: &str) -> bool {
        let Some((_, versions)) = KNOWN.iter().find(|(k, _)| *k == name) else {
            return true;
        };
        if !versions.contains(&version) {
            self.v(
                ptr,
                "tag",
                format!(
                    "unknown version {version} of core/{name} (known: {})",
                    versions.join(", ")
                ),
            );
            return true;
        }
        // ndarray-1.2.0 and integer-1.2.0 (the unstable core 1.7.0) only move the datatype
        // definitions into datatype-1.0.0: the rules of 1.1.0.
        let version = if version == "1.2.0" { "1.1.0" } else { version };
        match name {
            "asdf" => self.root(n, version, ptr),
            "ndarray" => {
                self.ndarray(n, version, ptr);
                // Children worth walking: a mask array only (inline data can be huge and holds
                // plain values).
                if let Some(mask) = n.get("mask") {
                    let mut p = push_key(ptr, "mask");
                    self.walk(mask, &mut p, 1);
                }
                return false;
            }
            "chunked-ndarray" => {
                self.chunked(n, ptr);
                return false;
            }
            "ndarray-chunk" => self.chunk(n, ptr, None),
            "integer" => self.integer(n, ptr),
            "complex" => self.complex(n, ptr),
            "software" => self.software(n, ptr),
            "history_entry" => self.history_entry(n, ptr),
            "extension_metadata" => self.extension_metadata(n, ptr),
            _ => {}
        }
        true
    }

    fn expect_map<'n>(
        &mut self,
        n: &'n Node,
        ptr: &str,
        what: &str,
    ) -> Option<&'n asdf_yaml::Mapping> {
        let m = n.as_map();
        if m.is_none() {
            self.v(
                ptr,
                "type",
                format!("{what} must be an object, found {}", kind(n)),
            );
        }
        m
    }

    fn required(&mut self, m: &asdf_yaml::Mapping, ptr: &str, keys: &[&str]) {
        for k in keys {
            if !m.contains_key(k) {
                self.v(ptr, "required", format!("\"{k}\" is a required property"));
            }
        }
    }

    fn string_field(&mut self, m: &asdf_yaml::Mapping, ptr: &str, key: &str) {
        if let Some(x) = m.get(key) {
            if x.as_str().is_none() {
                self.v(
                    &push_key(ptr, key),
                    "type",
                    format!("'{key}' must be a string, found {}", kind(x)),
                );
            }
        }
    }

    /// Checks that an untagged-or-tagged child has the expected core tag when tagged.
    fn child_tag(&mut self, n: &Node, ptr: &str, expected: &str) {
        if let Some(t) = n.tag() {
            let want = format!("{CORE}{expected}");
            if t != want {
                self.v(ptr, "tag", format!("expected tag {want}, found {t}"));
            }
        }
    }

    fn root(&mut self, n: &Node, version: &str, ptr: &str) {
        let Some(m) = self.expect_map(n, ptr, "the root (core/asdf)") else {
            return;
        };
        if let Some(lib) = m.get("asdf_library") {
            let p = push_key(ptr, "asdf_library");
            self.child_tag(lib, &p, "software-1.0.0");
            if lib.tag().is_none() {
                self.software(lib, &p);
            }
        }
        let Some(h) = m.get("history") else { return };
        let hp = push_key(ptr, "history");
        match h.value() {
            Value::Seq(entries) => self.entries(entries, &hp),
            Value::Map(hm) if version == "1.1.0" => {
                if let Some(ext) = hm.get("extensions") {
                    let ep = push_key(&hp, "extensions");
                    match ext.as_seq() {
                        Some(items) => {
                            for (i, e) in items.iter().enumerate() {
                                let p = push_index(&ep, i);
                                self.child_tag(e, &p, "extension_metadata-1.0.0");
                                if e.tag().is_none() {
                                    self.extension_metadata(e, &p);
                                }
                            }
                        }
                        None => self.v(
                            &ep,
                            "type",
                            format!("history extensions must be an array, found {}", kind(ext)),
                        ),
                    }
                }
                if let Some(ent) = hm.get("entries") {
                    let ep = push_key(&hp, "entries");
                    match ent.as_seq() {
                        Some(items) => self.entries(items, &ep),
                        None => self.v(
                            &ep,
                            "type",
                            format!("history entries must be an array, found {}", kind(ent)),
                        ),
                    }
                }
            }
            _ => {
                let want = if version == "1.1.0" {
                    "an array or an object"
                } else {
                    "an array"
                };
                self.v(
                    &hp,
                    "type",
                    format!("history must be {want}, found {}", kind(h)),
                );
            }
        }
    }

    fn entries(&mut self, items: &[Node], ptr: &str) {
        for (i, e) in items.iter().enumerate() {
            let p = push_index(ptr, i);
            self.child_tag(e, &p, "history_entry-1.0.0");
            if e.tag().is_none() {
                self.history_entry(e, &p);
            }
        }
    }

    fn software(&mut self, n: &Node, ptr: &str) {
        let Some(m) = self.expect_map(n, ptr, "software") else {
            return;
        };
        self.required(m, ptr, &["name", "version"]);
        for k in ["name", "version", "author", "homepage"] {
            self.string_field(m, ptr, k);
        }
    }

    fn history_entry(&mut self, n: &Node, ptr: &str) {
        let Some(m) = self.expect_map(n, ptr, "a history entry") else {
            return;
        };
        self.required(m, ptr, &["description"]);
        self.string_field(m, ptr, "description");
        // `time` is a date-time: a string or an (unquoted) YAML timestamp, which parses as a
        // tagged string.
        self.string_field(m, ptr, "time");
        if let Some(s) = m.get("software") {
            let p = push_key(ptr, "software");
            match s.as_seq() {
                Some(items) => {
                    for (i, item) in items.iter().enumerate() {
                        let ip = push_index(&p, i);
                        self.child_tag(item, &ip, "software-1.0.0");
                        if item.tag().is_none() {
                            self.software(item, &ip);
                        }
                    }
                }
                None => {
                    self.child_tag(s, &p, "software-1.0.0");
                    if s.tag().is_none() {
                        self.software(s, &p);
                    }
                }
            }
        }
    }

    fn extension_metadata(&mut self, n: &Node, ptr: &str) {
        let Some(m) = self.expect_map(n, ptr, "extension metadata") else {
            return;
        };
        self.required(m, ptr, &["extension_class"]);
        self.string_field(m, ptr, "extension_class");
        for key in ["package", "software"] {
            if let Some(s) = m.get(key) {
                let p = push_key(ptr, key);
                self.child_tag(s, &p, "software-1.0.0");
                if s.tag().is_none() {
                    self.software(s, &p);
                }
            }
        }
    }

    fn complex(&mut self, n: &Node, ptr: &str) {
        match n.as_str() {
            Some(s) => {
                if let Err(e) = asdf_ndarray::parse_complex(s) {
                    self.v(ptr, "pattern", format!("not a complex number: {e}"));
                }
            }
            None => self.v(
                ptr,
                "type",
                format!("a complex number must be a string, found {}", kind(n)),
            ),
        }
    }

    fn integer(&mut self, n: &Node, ptr: &str) {
        let Some(m) = self.expect_map(n, ptr, "core/integer") else {
            return;
        };
        self.required(m, ptr, &["words", "sign"]);
        if let Some(s) = m.get("sign") {
            if !matches!(s.as_str(), Some("+") | Some("-")) {
                self.v(
                    &push_key(ptr, "sign"),
                    "pattern",
                    "sign must be \"+\" or \"-\"",
                );
            }
        }
        self.string_field(m, ptr, "string");
        if let Some(w) = m.get("words") {
            let p = push_key(ptr, "words");
            match w.tag() {
                Some(t) if t.starts_with(asdf_ndarray::NDARRAY_TAG_PREFIX) => {
                    if let Some(dt) = w.get("datatype") {
                        if dt.as_str() != Some("uint32") {
                            self.v(
                                &push_key(&p, "datatype"),
                                "datatype",
                                "integer words must be uint32",
                            );
                        }
                    }
                    if let Some(shape) = w.get("shape").and_then(Node::as_seq) {
                        if shape.len() != 1 {
                            self.v(
                                &push_key(&p, "shape"),
                                "ndim",
                                format!(
                                    "integer words must be 1-dimensional, found {} dimensions",
                                    shape.len()
                                ),
                            );
                        }
                    }
                }
                _ => self.v(&p, "tag", "integer words must be a core/ndarray"),
            }
        }
    }

    /// Checks an ndarray node; returns its dimension count when known.
    fn ndarray(&mut self, n: &Node, version: &str, ptr: &str) -> Option<usize> {
        let m = match n.value() {
            Value::Seq(_) | Value::Packed(_) => {
                // Inline data as a bare nested list.
                self.inline_data(n, None, ptr);
                return Some(nesting(n));
            }
            Value::Map(m) => m,
            _ => {
                self.v(
                    ptr,
                    "type",
                    format!(
                        "an ndarray must be an object or a nested list, found {}",
                        kind(n)
                    ),
                );
                return None;
            }
        };
        self.source_or_data(m, version, ptr);
        if let Some(dt) = m.get("datatype") {
            self.datatype(dt, version, &push_key(ptr, "datatype"));
        }
        self.ndarray_fields(m, ptr);
        let shape_len = m
            .get("shape")
            .and_then(|s| self.shape(s, &push_key(ptr, "shape")));
        if let Some(st) = m.get("strides") {
            self.strides(st, shape_len, &push_key(ptr, "strides"));
        }
        if let Some(d) = m.get("data") {
            self.ndarray_data(m, d, &push_key(ptr, "data"));
        }
        shape_len
    }

    /// An ndarray's `source` or `data` (exactly one in 1.1.0), and what a `source` requires.
    fn source_or_data(&mut self, m: &Mapping, version: &str, ptr: &str) {
        let has_source = m.contains_key("source");
        let has_data = m.contains_key("data");
        if version == "1.1.0" && has_source == has_data {
            let msg = if has_source {
                "exactly one of 'source' and 'data' is allowed, found both"
            } else {
                "exactly one of 'source' and 'data' is required, found neither"
            };
            self.v(ptr, "oneOf", msg);
        }
        if has_source {
            for k in ["shape", "datatype", "byteorder"] {
                if !m.contains_key(k) {
                    self.v(
                        ptr,
                        "dependencies",
                        format!("'{k}' is required when 'source' is present"),
                    );
                }
            }
        }
        if let Some(s) = m.get("source") {
            if !is_int(s) && s.as_str().is_none() {
                self.v(
                    &push_key(ptr, "source"),
                    "type",
                    format!("source must be a block index or a URI, found {}", kind(s)),
                );
            }
        }
    }

    /// An ndarray's `byteorder`, `offset` and `mask`.
    fn ndarray_fields(&mut self, m: &Mapping, ptr: &str) {
        if let Some(b) = m.get("byteorder") {
            if !matches!(b.as_str(), Some("big") | Some("little")) {
                self.v(
                    &push_key(ptr, "byteorder"),
                    "enum",
                    "byteorder must be \"big\" or \"little\"",
                );
            }
        }
        if let Some(o) = m.get("offset") {
            if o.as_u64().is_none() {
                self.v(
                    &push_key(ptr, "offset"),
                    "minimum",
                    "offset must be an integer >= 0",
                );
            }
        }
        if let Some(mask) = m.get("mask") {
            let ok = matches!(
                mask.value(),
                Value::Int(_) | Value::Float(_) | Value::BigInt(_)
            ) || mask.tag().is_some_and(|t| t.starts_with(CORE));
            if !ok {
                self.v(
                    &push_key(ptr, "mask"),
                    "type",
                    "mask must be a number, a core/complex or a core/ndarray",
                );
            }
        }
    }

    /// An ndarray's `strides` (at `sp`): non-zero integers, one per dimension of the shape.
    fn strides(&mut self, st: &Node, shape_len: Option<usize>, sp: &str) {
        let Some(items) = st.as_seq() else {
            self.v(
                sp,
                "type",
                format!("strides must be an array, found {}", kind(st)),
            );
            return;
        };
        for (i, x) in items.iter().enumerate() {
            if !matches!(x.as_i64(), Some(v) if v != 0) {
                self.v(
                    &push_index(sp, i),
                    "type",
                    "strides must be non-zero integers",
                );
            }
        }
        if let Some(nd) = shape_len {
            if items.len() != nd {
                self.v(
                    sp,
                    "strides-length",
                    format!("{} strides for a shape of {nd} dimensions", items.len()),
                );
            }
        }
    }

    /// An ndarray's inline `data` `d` (at `dp`), checked against the mapping's shape.
    fn ndarray_data(&mut self, m: &Mapping, d: &Node, dp: &str) {
        if d.as_seq().is_none() && !d.is_null() && !matches!(d.value(), Value::Packed(_)) {
            self.v(
                dp,
                "type",
                format!("inline data must be a nested list, found {}", kind(d)),
            );
            return;
        }
        let shape: Option<Vec<u64>> = m
            .get("shape")
            .and_then(Node::as_seq)
            .and_then(|s| s.iter().map(Node::as_u64).collect());
        self.inline_data(d, shape.as_deref(), dp);
    }

    /// Checks a shape; returns its length when it is a list.
    fn shape(&mut self, s: &Node, ptr: &str) -> Option<usize> {
        let Some(items) = s.as_seq() else {
            self.v(
                ptr,
                "type",
                format!("shape must be an array, found {}", kind(s)),
            );
            return None;
        };
        for (i, x) in items.iter().enumerate() {
            let ok = x.as_u64().is_some() || (i == 0 && x.as_str() == Some("*"));
            if !ok {
                self.v(
                    &push_index(ptr, i),
                    "minimum",
                    "shape entries must be integers >= 0 ('*' allowed first only)",
                );
            }
        }
        if items.len() > MAX_NDIM {
            self.v(
                ptr,
                "max_ndim",
                format!(
                    "{} dimensions, more than the limit of {MAX_NDIM}",
                    items.len()
                ),
            );
        }
        Some(items.len())
    }

    fn datatype(&mut self, dt: &Node, version: &str, ptr: &str) {
        match Datatype::from_node(dt) {
            Ok(d) => {
                if let Some(bad) = nonstandard_scalar(&d, version == "1.0.0") {
                    self.v(
                        ptr,
                        "datatype",
                        format!("{} is not an ndarray-{version} datatype", bad.name()),
                    );
                }
            }
            Err(e) => self.v(ptr, "datatype", format!("invalid datatype: {e}")),
        }
    }

    /// Inline data: nested lists whose lengths agree with `shape` when given.
    fn inline_data(&mut self, d: &Node, shape: Option<&[u64]>, ptr: &str) {
        let Some(shape) = shape else { return };
        let mut level: Vec<&Node> = vec![d];
        for (axis, &dim) in shape.iter().enumerate() {
            let mut next = Vec::new();
            for n in &level {
                if let Value::Packed(p) = n.value() {
                    // Items are scalars: the packed shape is the rest of the data's shape.
                    let rest = &shape[axis..];
                    if !p.shape().iter().map(|&d| d as u64).eq(rest.iter().copied()) {
                        let msg = format!(
                            "inline data has shape {:?} from axis {axis} on, the shape says {:?}",
                            p.shape(),
                            rest
                        );
                        self.v(ptr, "shape", msg);
                    }
                    return;
                }
                match n.as_seq() {
                    Some(items) if items.len() as u64 == dim => next.extend(items.iter()),
                    Some(items) => {
                        self.v(
                            ptr,
                            "shape",
                            format!(
                                "inline data has {} entries along axis {axis}, shape says {dim}",
                                items.len()
                            ),
                        );
                        return;
                    }
                    None => {
                        self.v(
                            ptr,
                            "shape",
                            format!(
                                "inline data has fewer dimensions than the shape ({})",
                                shape.len()
                            ),
                        );
                        return;
                    }
                }
            }
            level = next;
        }
    }

    fn chunked(&mut self, n: &Node, ptr: &str) {
        let Some(m) = self.expect_map(n, ptr, "a chunked ndarray") else {
            return;
        };
        self.required(m, ptr, &["shape", "datatype", "chunks"]);
        let shape: Option<Vec<u64>> = m.get("shape").and_then(|s| {
            let p = push_key(ptr, "shape");
            self.shape(s, &p)?;
            s.as_seq()?.iter().map(Node::as_u64).collect()
        });
        if let Some(dt) = m.get("datatype") {
            self.datatype(dt, "1.1.0", &push_key(ptr, "datatype"));
        }
        let Some(chunks) = m.get("chunks") else {
            return;
        };
        let cp = push_key(ptr, "chunks");
        let Some(items) = chunks.as_seq() else {
            self.v(
                &cp,
                "type",
                format!("chunks must be an array, found {}", kind(chunks)),
            );
            return;
        };
        for (i, c) in items.iter().enumerate() {
            let p = push_index(&cp, i);
            match c.tag().and_then(core_tag) {
                Some(("ndarray-chunk", "1.0.0")) => self.chunk(c, &p, shape.as_deref()),
                _ => self.v(
                    &p,
                    "tag",
                    format!(
                        "expected tag {CORE}ndarray-chunk-1.0.0, found {}",
                        c.tag().unwrap_or("none")
                    ),
                ),
            }
        }
    }

    fn chunk(&mut self, n: &Node, ptr: &str, shape: Option<&[u64]>) {
        let Some(m) = self.expect_map(n, ptr, "an ndarray chunk") else {
            return;
        };
        self.required(m, ptr, &["start", "ndarray"]);
        let start: Option<Vec<u64>> = m.get("start").and_then(|s| {
            let p = push_key(ptr, "start");
            let r: Option<Vec<u64>> = s
                .as_seq()
                .and_then(|v| v.iter().map(Node::as_u64).collect());
            if r.is_none() {
                self.v(&p, "type", "start must be an array of integers >= 0");
            }
            r
        });
        let Some(a) = m.get("ndarray") else { return };
        let ap = push_key(ptr, "ndarray");
        let version = match a.tag().and_then(core_tag) {
            Some(("ndarray", "1.2.0")) => "1.1.0",
            Some(("ndarray", v)) if v == "1.0.0" || v == "1.1.0" => v,
            _ => {
                self.v(
                    &ap,
                    "tag",
                    "a chunk's ndarray must be a core/ndarray-1.0.0/1.1.0/1.2.0",
                );
                return;
            }
        };
        self.ndarray(a, version, &ap);
        let cshape: Option<Vec<u64>> = a
            .get("shape")
            .and_then(Node::as_seq)
            .and_then(|s| s.iter().map(Node::as_u64).collect());
        if let (Some(shape), Some(start)) = (shape, &start) {
            if start.len() != shape.len() {
                self.v(
                    &push_key(ptr, "start"),
                    "start-length",
                    format!(
                        "start has {} entries for an array of {} dimensions",
                        start.len(),
                        shape.len()
                    ),
                );
            } else if let Some(cs) = &cshape {
                if cs.len() != shape.len() {
                    self.v(
                        &push_key(&ap, "shape"),
                        "chunk-shape",
                        format!(
                            "chunk has {} dimensions, the array {}",
                            cs.len(),
                            shape.len()
                        ),
                    );
                } else {
                    for (axis, ((&s0, &len), &dim)) in start.iter().zip(cs).zip(shape).enumerate() {
                        if s0.checked_add(len).is_none_or(|end| end > dim) {
                            self.v(ptr, "chunk-bounds", format!("chunk ends past the array along axis {axis} (start {s0} + {len} > {dim})"));
                        }
                    }
                }
            }
        }
    }
}

/// A scalar of the datatype that the standard does not allow (ASDF.jl's 128-bit types, or
/// `float16` in ndarray-1.0.0).
fn nonstandard_scalar(d: &Datatype, v1_0: bool) -> Option<ScalarType> {
    match d {
        Datatype::Scalar(s) => {
            if !s.is_standard() || (v1_0 && *s == ScalarType::Float16) {
                Some(*s)
            } else {
                None
            }
        }
        Datatype::Record(fields) => fields
            .iter()
            .find_map(|f| nonstandard_scalar(&f.datatype, v1_0)),
        _ => None,
    }
}

/// Depth of nested lists along the first elements.
pub(crate) fn nesting(n: &Node) -> usize {
    let mut depth = 0;
    let mut cur = n;
    loop {
        if let Value::Packed(p) = cur.value() {
            return depth + p.shape().len();
        }
        let Some(items) = cur.as_seq() else { break };
        depth += 1;
        match items.first() {
            Some(first) => cur = first,
            None => break,
        }
    }
    depth
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n";

    fn found(body: &str) -> Vec<(String, String)> {
        let tree = asdf_yaml::parse_str(&format!("{HEAD}{body}")).unwrap();
        check_builtin(&tree)
            .into_iter()
            .map(|v| (v.pointer, v.rule))
            .collect()
    }

    fn one(body: &str, pointer: &str, rule: &str) {
        assert_eq!(
            found(body),
            vec![(pointer.to_string(), rule.to_string())],
            "{body}"
        );
    }

    #[test]
    fn valid_trees_pass() {
        for body in [
            "asdf_library: !core/software-1.0.0 {name: asdf, version: 6.0.0, homepage: 'http://x'}\n",
            "history: {extensions: [!core/extension_metadata-1.0.0 {extension_class: a.B, software: !core/software-1.0.0 {name: a, version: '1'}}],\n  entries: [!core/history_entry-1.0.0 {description: d, time: 2026-01-01 00:00:00}]}\n",
            "history: [!core/history_entry-1.0.0 {description: d, software: [{name: a, version: '1'}]}]\n",
            "a: !core/ndarray-1.1.0 {source: 0, datatype: int64, byteorder: little, shape: ['*', 2], strides: [16, 8], offset: 8}\n",
            "a: !core/ndarray-1.1.0 {data: [[1, 2], [3, 4]], datatype: float64, shape: [2, 2], mask: .nan}\n",
            "a: !core/ndarray-1.0.0 [[1, 2], [3, 4]]\n",
            "a: !core/ndarray-1.1.0 {data: ['ab', 'c'], datatype: [ucs4, 2], shape: [2]}\n",
            "a: !core/ndarray-1.1.0 {source: 0, datatype: [{name: x, datatype: float16}], byteorder: big, shape: [1]}\n",
            "i: !core/integer-1.1.0 {sign: '-', string: '12', words: !core/ndarray-1.1.0 {data: [12], datatype: uint32, shape: [1]}}\n",
            "c: !core/complex-1.0.0 (1+2j)\n",
            "c: [!core/complex-1.0.0 1e3-2.5i, !core/complex-1.0.0 nan]\n",
            "ch: !core/chunked-ndarray-1.0.0 {shape: [4], datatype: int32, chunks: [!core/ndarray-chunk-1.0.0 {start: [0], ndarray: !core/ndarray-1.1.0 {source: 0, datatype: int32, byteorder: little, shape: [2]}}, !core/ndarray-chunk-1.0.0 {start: [2], ndarray: !core/ndarray-1.1.0 {source: 1, datatype: int32, byteorder: little, shape: [2]}}]}\n",
            "x: !<tag:example.org:other-9.0.0> {anything: 1}\n",
            "y: !core/constant-1.0.0 3\n",
        ] {
            assert_eq!(found(body), vec![], "{body}");
        }
    }

    #[test]
    fn each_rule_is_reported_at_its_node() {
        one(
            "asdf_library: !core/software-1.0.0 {name: x}\n",
            "/asdf_library",
            "required",
        );
        one(
            "asdf_library: {name: x, version: 1}\n",
            "/asdf_library/version",
            "type",
        );
        one(
            "asdf_library: !core/history_entry-1.0.0 {description: x}\n",
            "/asdf_library",
            "tag",
        );
        one(
            "b: !core/software-9.9.9 {name: x, version: '1'}\n",
            "/b",
            "tag",
        );
        one("history: 3\n", "/history", "type");
        one(
            "history: {entries: [{time: '1'}]}\n",
            "/history/entries/0",
            "required",
        );
        one(
            "history: {extensions: [{package: {name: p, version: '1'}}]}\n",
            "/history/extensions/0",
            "required",
        );
        one(
            "a: !core/ndarray-1.1.0 {data: [1, 2], datatype: int33, shape: [2]}\n",
            "/a/datatype",
            "datatype",
        );
        one(
            "a: !core/ndarray-1.0.0 {data: [1, 2], datatype: float16, shape: [2]}\n",
            "/a/datatype",
            "datatype",
        );
        one(
            "a: !core/ndarray-1.1.0 {data: [1, 2], datatype: int128, shape: [2]}\n",
            "/a/datatype",
            "datatype",
        );
        one("a: !core/ndarray-1.1.0 {source: 0, datatype: int8, byteorder: big, shape: [2, 2], strides: [1]}\n", "/a/strides", "strides-length");
        one("a: !core/ndarray-1.1.0 {source: 0, datatype: int8, byteorder: big, shape: [2], strides: [0]}\n", "/a/strides/0", "type");
        one(
            "a: !core/ndarray-1.1.0 {source: 0, datatype: int8, byteorder: big, shape: [2, '*']}\n",
            "/a/shape/1",
            "minimum",
        );
        one(
            "a: !core/ndarray-1.1.0 {source: 0, datatype: int8, byteorder: big, shape: [-1]}\n",
            "/a/shape/0",
            "minimum",
        );
        one(
            "a: !core/ndarray-1.1.0 {source: 0, datatype: int8, byteorder: middle, shape: [1]}\n",
            "/a/byteorder",
            "enum",
        );
        one("a: !core/ndarray-1.1.0 {source: 0, datatype: int8, byteorder: big, shape: [1], offset: -8}\n", "/a/offset", "minimum");
        one(
            "a: !core/ndarray-1.1.0 {source: 0, datatype: int8, shape: [1]}\n",
            "/a",
            "dependencies",
        );
        one("a: !core/ndarray-1.1.0 {source: 0, data: [1], datatype: int8, byteorder: big, shape: [1]}\n", "/a", "oneOf");
        one(
            "a: !core/ndarray-1.1.0 {datatype: int8, shape: [1]}\n",
            "/a",
            "oneOf",
        );
        one(
            "a: !core/ndarray-1.1.0 {source: [1], datatype: int8, byteorder: big, shape: [1]}\n",
            "/a/source",
            "type",
        );
        one(
            "a: !core/ndarray-1.1.0 {data: [[1, 2], [3]], datatype: int8, shape: [2, 2]}\n",
            "/a/data",
            "shape",
        );
        one(
            "a: !core/ndarray-1.1.0 {data: [1, 2], datatype: int8, shape: [2, 1]}\n",
            "/a/data",
            "shape",
        );
        one("a: !core/ndarray-1.1.0 'text'\n", "/a", "type");
        one(
            "a: !core/ndarray-1.1.0 {data: [1], datatype: int8, shape: [1], mask: abc}\n",
            "/a/mask",
            "type",
        );
        one("a: !core/ndarray-1.1.0 {data: [1], datatype: int8, shape: [1], mask: !core/ndarray-1.1.0 {data: [true], datatype: bool9, shape: [1]}}\n", "/a/mask/datatype", "datatype");
        one("i: !core/integer-1.1.0 {sign: '*', words: !core/ndarray-1.1.0 {data: [1], datatype: uint32, shape: [1]}}\n", "/i/sign", "pattern");
        one(
            "i: !core/integer-1.0.0 {sign: '+', words: [1]}\n",
            "/i/words",
            "tag",
        );
        one("i: !core/integer-1.1.0 {sign: '+', words: !core/ndarray-1.1.0 {data: [1], datatype: uint8, shape: [1]}}\n", "/i/words/datatype", "datatype");
        one("i: !core/integer-1.1.0 {sign: '+', words: !core/ndarray-1.1.0 {data: [[1]], datatype: uint32, shape: [1, 1]}}\n", "/i/words/shape", "ndim");
        one("i: !core/integer-1.1.0 {words: !core/ndarray-1.1.0 {data: [1], datatype: uint32, shape: [1]}}\n", "/i", "required");
        one("c: !core/complex-1.0.0 1+2k\n", "/c", "pattern");
        one("c: !core/complex-1.0.0 [1, 2]\n", "/c", "type");
        one(
            "h: !core/history_entry-1.0.0 {description: d, software: !core/other-1.0.0 {}}\n",
            "/h/software",
            "tag",
        );
        one(
            "e: !core/extension_metadata-1.0.0 {extension_class: 3}\n",
            "/e/extension_class",
            "type",
        );
        one("ch: !core/chunked-ndarray-1.0.0 {shape: [4], datatype: int32, chunks: [{start: [0], ndarray: {}}]}\n", "/ch/chunks/0", "tag");
        one("ch: !core/chunked-ndarray-1.0.0 {shape: [4], datatype: int32, chunks: [!core/ndarray-chunk-1.0.0 {start: [3], ndarray: !core/ndarray-1.1.0 {source: 0, datatype: int32, byteorder: little, shape: [2]}}]}\n", "/ch/chunks/0", "chunk-bounds");
        one("ch: !core/chunked-ndarray-1.0.0 {shape: [4], datatype: int32, chunks: [!core/ndarray-chunk-1.0.0 {start: [0, 0], ndarray: !core/ndarray-1.1.0 {source: 0, datatype: int32, byteorder: little, shape: [2]}}]}\n", "/ch/chunks/0/start", "start-length");
        one(
            "ch: !core/chunked-ndarray-1.0.0 {shape: [4], datatype: int32}\n",
            "/ch",
            "required",
        );
    }

    #[test]
    fn root_and_pointer_escaping() {
        let tree = asdf_yaml::parse_str("--- !<tag:stsci.edu:asdf/core/asdf-1.1.0> [1]\n").unwrap();
        let v = check_builtin(&tree);
        assert_eq!((v[0].pointer.as_str(), v[0].rule.as_str()), ("", "type"));
        let v = found("a/b~c: !core/software-1.0.0 {version: '1'}\n");
        assert_eq!(v, vec![("/a~1b~0c".to_string(), "required".to_string())]);
        let v = found("list: [0, !core/complex-1.0.0 zz]\n");
        assert_eq!(v, vec![("/list/1".to_string(), "pattern".to_string())]);
    }

    #[test]
    fn too_many_dimensions_and_deep_trees() {
        let shape = vec!["1"; MAX_NDIM + 1].join(", ");
        one(
            &format!("a: !core/ndarray-1.1.0 {{source: 0, datatype: int8, byteorder: big, shape: [{shape}]}}\n"),
            "/a/shape",
            "max_ndim",
        );
        let mut deep = Node::from(1);
        for _ in 0..(MAX_DEPTH + 10) {
            deep = Node::sequence([deep]);
        }
        let v = check_builtin(&deep);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].rule, "depth");
    }
}
