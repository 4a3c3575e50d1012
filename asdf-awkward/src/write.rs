//! The writer: schemas in awkward0 0.15.5's exact shape, blobs through a [`BlobSink`].

use std::collections::HashMap;

use serde_json::{json, Map, Value as Json};

use crate::dtype::{DType, Kind, Primitive};
use crate::error::{Error, Result};
use crate::layout::{call, Awkward0Writer, Layout, Node};
use crate::numpy::NumpyArray;
use crate::store::BlobSink;
use crate::whitelist::fnmatch;

/// Which generation of the format to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// awkward0 0.15.x: top-level `"awkward0"` key and `["awkward0", ...]` specs (readable by
    /// awkward0 ≥ 0.15.3).
    #[default]
    Awkward0,
    /// awkward 0.8–0.14: `"awkward"` key and `["awkward", ...]` specs (readable by awkward
    /// 0.10–0.14 and by awkward0 ≥ 0.15.3).
    Legacy,
}

/// A compression codec awkward0 can decompress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// `zlib.compress` / `["zlib", "decompress"]` (the only one awkward0 applies by default).
    Zlib,
    /// `lzma.compress` (xz container) / `["lzma", "decompress"]`.
    Lzma,
    /// python-lz4 `lz4.block.compress` (4-byte size prefix) / `["lz4.block", "decompress"]`.
    Lz4Block,
}

impl Codec {
    fn spec(self) -> Json {
        match self {
            Codec::Zlib => json!(["zlib", "decompress"]),
            Codec::Lzma => json!(["lzma", "decompress"]),
            Codec::Lz4Block => json!(["lz4.block", "decompress"]),
        }
    }

    fn compress(self, data: &[u8]) -> Result<Vec<u8>> {
        // Python's zlib and lzma defaults: level 6.
        let level6 = array_codecs::EncodeOptions {
            level: Some(6),
            ..Default::default()
        };
        let codec_err = |e: array_codecs::CodecError| {
            Error::io("compression", std::io::Error::other(e.message))
        };
        match self {
            Codec::Zlib => {
                array_codecs::Codec::encode(&array_codecs::Zlib, data, &level6).map_err(codec_err)
            }
            Codec::Lzma => {
                array_codecs::Codec::encode(&array_codecs::Xz, data, &level6).map_err(codec_err)
            }
            Codec::Lz4Block => {
                let n = u32::try_from(data.len()).map_err(|_| Error::Unsupported {
                    location: "compression".into(),
                    what: "lz4.block blobs are limited to 4 GiB by their size prefix".into(),
                })?;
                let mut out = n.to_le_bytes().to_vec();
                out.extend_from_slice(&array_codecs::lz4::encode_block(data));
                Ok(out)
            }
        }
    }
}

/// One rule of a compression policy (awkward0's `{"minsize", "types", "contexts", "pair"}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressionRule {
    /// Minimum blob size in bytes.
    pub min_size: usize,
    /// Element kinds the rule applies to.
    pub kinds: Vec<Kind>,
    /// fnmatch patterns for the context (`"JaggedArray.counts"`, `"*"`, ...).
    pub contexts: Vec<String>,
    /// The codec.
    pub codec: Codec,
}

/// Which numpy blobs are compressed: the first matching rule wins.
///
/// ```
/// use asdf_awkward::CompressionPolicy;
/// let p = CompressionPolicy::default();
/// assert_eq!(p.rules[0].min_size, 8192);
/// assert!(CompressionPolicy::none().rules.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressionPolicy {
    /// Rules, tried in order.
    pub rules: Vec<CompressionRule>,
}

impl Default for CompressionPolicy {
    /// awkward0's default: zlib for bool and integer blobs of at least 8192 bytes.
    fn default() -> Self {
        CompressionPolicy {
            rules: vec![CompressionRule {
                min_size: 8192,
                kinds: vec![Kind::Bool, Kind::Int, Kind::UInt],
                contexts: vec!["*".into()],
                codec: Codec::Zlib,
            }],
        }
    }
}

impl CompressionPolicy {
    /// No compression (awkward0's `compression=False`).
    pub fn none() -> Self {
        CompressionPolicy { rules: vec![] }
    }

    /// Compress every blob with `codec` (awkward0's `compression=True` for zlib).
    pub fn all(codec: Codec) -> Self {
        CompressionPolicy {
            rules: vec![CompressionRule {
                min_size: 0,
                kinds: vec![
                    Kind::Bool,
                    Kind::Int,
                    Kind::UInt,
                    Kind::Float,
                    Kind::Complex,
                ],
                contexts: vec!["*".into()],
                codec,
            }],
        }
    }

    fn choose(&self, nbytes: usize, kind: Kind, context: &str) -> Option<Codec> {
        self.rules
            .iter()
            .find(|r| {
                nbytes >= r.min_size
                    && r.kinds.contains(&kind)
                    && r.contexts
                        .iter()
                        .any(|p| fnmatch(p.as_bytes(), context.as_bytes()))
            })
            .map(|r| r.codec)
    }
}

/// Options for writing.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// Format generation.
    pub dialect: Dialect,
    /// Value of the `"awkward0"`/`"awkward"` signature field (informational).
    pub version: String,
    /// Separator between the array name and blob ids (`"-"`).
    pub delimiter: String,
    /// Suffix of blob names (`".raw"` in `.awkd` files).
    pub suffix: String,
    /// Suffix of the schema blob (`".json"`).
    pub schema_suffix: String,
    /// Compression policy.
    pub compression: CompressionPolicy,
    /// Reproduce CPython's object-identity sharing of small integers (−5…256), `None`, booleans
    /// and strings (`{"ref": k}` to an earlier `{"json": 3, "id": k}`), so schemas are
    /// byte-identical to awkward0's. Readers accept either form.
    pub emulate_identity: bool,
    /// Whether a saved file waits for the disk ([`array_core::Durability`]; synced by default).
    pub durability: array_core::Durability,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            dialect: Dialect::Awkward0,
            version: "0.15.5".into(),
            delimiter: "-".into(),
            suffix: ".raw".into(),
            schema_suffix: ".json".into(),
            compression: CompressionPolicy::default(),
            emulate_identity: true,
            durability: array_core::Durability::Synced,
        }
    }
}

impl WriteOptions {
    /// The legacy (`"awkward": "0.14.0"`) dialect with otherwise default options.
    pub fn legacy() -> Self {
        WriteOptions {
            dialect: Dialect::Legacy,
            version: "0.14.0".into(),
            ..WriteOptions::default()
        }
    }
}

/// Writes `layout` as array `name`: blobs `name + delimiter + id + suffix` (just `id + suffix`
/// for the anonymous name `""`), then the schema blob `name + schema_suffix`. Returns the schema.
///
/// ```
/// use asdf_awkward::{write_array, Layout, MemoryStore, WriteOptions};
/// let a = Layout::from_json(&serde_json::json!([[1.5], []])).unwrap();
/// let mut store = MemoryStore::default();
/// write_array(&a, &mut store, "", &WriteOptions::default()).unwrap();
/// let names: Vec<_> = store.blobs.keys().cloned().collect();
/// assert_eq!(names, vec![".json", "1.raw", "3.raw"]);
/// ```
pub fn write_array(
    layout: &Layout,
    sink: &mut dyn BlobSink,
    name: &str,
    opts: &WriteOptions,
) -> Result<Json> {
    let doc = serialize(layout, sink, name, opts)?;
    let text = to_python_json(&doc);
    sink.put(&format!("{name}{}", opts.schema_suffix), text.as_bytes())?;
    Ok(doc)
}

/// Like [`write_array`] but does not store the schema: only the data blobs go to `sink`, and
/// the schema document is returned (for containers that keep it elsewhere, e.g. in an ASDF
/// tree). Read it back with [`read_schema`](crate::read_schema).
///
/// ```
/// use asdf_awkward::{serialize, read_schema, Layout, MemoryStore, ReadOptions, WriteOptions};
/// let a = Layout::from_json(&serde_json::json!(["x", "yz"])).unwrap();
/// let mut blobs = MemoryStore::default();
/// let schema = serialize(&a, &mut blobs, "s", &WriteOptions::default()).unwrap();
/// assert_eq!(schema["prefix"], "s-");
/// assert!(!blobs.blobs.contains_key("s.json"));
/// let back = read_schema(&schema, &blobs, &ReadOptions::default()).unwrap();
/// assert_eq!(back.to_json().unwrap(), serde_json::json!(["x", "yz"]));
/// ```
pub fn serialize(
    layout: &Layout,
    sink: &mut dyn BlobSink,
    name: &str,
    opts: &WriteOptions,
) -> Result<Json> {
    layout.validate()?;
    let prefix = if name.is_empty() {
        String::new()
    } else {
        format!("{name}{}", opts.delimiter)
    };
    let mut s = Serializer {
        sink,
        opts,
        prefix: &prefix,
        next_id: 0,
        seen: HashMap::new(),
        scalars: HashMap::new(),
        lowered: Vec::new(),
    };
    let root = s.node(layout, "", 0)?;
    let mut top = Map::new();
    let sig = match opts.dialect {
        Dialect::Awkward0 => "awkward0",
        Dialect::Legacy => "awkward",
    };
    top.insert(sig.into(), Json::String(opts.version.clone()));
    top.insert("schema".into(), root);
    if !prefix.is_empty() {
        top.insert("prefix".into(), Json::String(prefix.clone()));
    }
    Ok(Json::Object(top))
}

/// Formats JSON as Python's `json.dumps` does by default: `", "` and `": "` separators and
/// `\uXXXX` escapes for everything outside ASCII.
///
/// ```
/// let j = serde_json::json!({"a": [1, "é"]});
/// assert_eq!(asdf_awkward::to_python_json(&j), r#"{"a": [1, "\u00e9"]}"#);
/// ```
pub fn to_python_json(v: &Json) -> String {
    let mut out = String::new();
    fmt_json(v, &mut out);
    out
}

fn fmt_json(v: &Json, out: &mut String) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => out.push_str(&n.to_string()),
        Json::String(s) => fmt_str(s, out),
        Json::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                fmt_json(x, out);
            }
            out.push(']');
        }
        Json::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                fmt_str(k, out);
                out.push_str(": ");
                fmt_json(x, out);
            }
            out.push('}');
        }
    }
}

fn fmt_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[derive(Hash, PartialEq, Eq)]
enum ScalarKey {
    Int(i64),
    Null,
    Bool(bool),
    Str(String),
}

struct Serializer<'s> {
    sink: &'s mut dyn BlobSink,
    opts: &'s WriteOptions,
    prefix: &'s str,
    next_id: u64,
    seen: HashMap<*const Layout, u64>,
    scalars: HashMap<ScalarKey, u64>,
    /// awkward0 stand-ins for awkward 2 nodes, kept alive while `seen` may hold their addresses.
    lowered: Vec<Node>,
}

impl Serializer<'_> {
    fn new_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Node `l`: a ref when it was written before, its stand-in when awkward0 lacks its class,
    /// else the call its class writes (children first), with a fresh id.
    fn node(&mut self, l: &Layout, ctx: &str, depth: usize) -> Result<Json> {
        if depth > crate::layout::MAX_NESTING {
            return Err(Error::invalid(
                l.class_name(),
                "array",
                "nesting too deep to write",
            ));
        }
        if let Some(n) = l.class().awkward0_stand_in()? {
            self.lowered.push(n.clone());
            return self.node(&n, ctx, depth + 1);
        }
        let key = l as *const Layout;
        if let Some(id) = self.seen.get(&key) {
            return Ok(json!({ "ref": id }));
        }
        let id = self.new_id();
        self.seen.insert(key, id);
        let mut m = l.class().write_awkward0(self, ctx, id, depth)?;
        m.insert("id".into(), json!(id));
        Ok(Json::Object(m))
    }
}

impl Awkward0Writer for Serializer<'_> {
    fn spec(&self, parts: &[&str]) -> Json {
        let first = match self.opts.dialect {
            Dialect::Awkward0 => "awkward0",
            Dialect::Legacy => "awkward",
        };
        let mut v = vec![Json::String(first.into())];
        v.extend(parts.iter().map(|p| Json::String(p.to_string())));
        Json::Array(v)
    }

    /// A JSON scalar that goes through awkward0's serializer (gets an id, or a ref). A
    /// `{"python": ...}` object is passed through with an id.
    fn scalar(&mut self, v: Json) -> Json {
        if v.get("python").is_some() {
            let id = self.new_id();
            let mut m = v.as_object().cloned().unwrap_or_default();
            m.insert("id".into(), json!(id));
            return Json::Object(m);
        }
        let key = if self.opts.emulate_identity {
            match &v {
                Json::Null => Some(ScalarKey::Null),
                Json::Bool(b) => Some(ScalarKey::Bool(*b)),
                Json::Number(n) => n
                    .as_i64()
                    .filter(|i| (-5..=256).contains(i))
                    .map(ScalarKey::Int),
                Json::String(s) => Some(ScalarKey::Str(s.clone())),
                _ => None,
            }
        } else {
            None
        };
        if let Some(k) = &key {
            if let Some(id) = self.scalars.get(k) {
                return json!({ "ref": id });
            }
        }
        let id = self.new_id();
        if let Some(k) = key {
            self.scalars.insert(k, id);
        }
        json!({ "json": v, "id": id })
    }

    /// A numpy leaf that is a fresh object (an index array, a counts array, ...).
    fn leaf(&mut self, dtype: &DType, count: usize, bytes: &[u8], ctx: &str) -> Result<Json> {
        let id = self.new_id();
        let mut m = self.leaf_body(dtype, count, bytes, ctx, id)?;
        m.insert("id".into(), json!(id));
        Ok(Json::Object(m))
    }

    fn leaf_body(
        &mut self,
        dtype: &DType,
        count: usize,
        bytes: &[u8],
        ctx: &str,
        id: u64,
    ) -> Result<Map<String, Json>> {
        let key = format!("{id}{}", self.opts.suffix);
        let full = format!("{}{key}", self.prefix);
        let read = json!({ "read": key });
        let buf = match self
            .opts
            .compression
            .choose(bytes.len(), dtype.primitive.kind(), ctx)
        {
            Some(codec) => {
                let packed = codec.compress(bytes)?;
                self.sink.put(&full, &packed)?;
                Json::Object(call(codec.spec(), vec![read]))
            }
            None => {
                self.sink.put(&full, bytes)?;
                read
            }
        };
        let count = self.scalar(json!(count));
        let leaf_spec = match self.opts.dialect {
            Dialect::Awkward0 => json!(["awkward0", "numpy", "frombuffer"]),
            Dialect::Legacy => json!(["awkward", "numpy", "frombuffer"]),
        };
        Ok(call(
            leaf_spec,
            vec![buf, json!({ "dtype": dtype.to_json() }), count],
        ))
    }

    fn index(&mut self, v: &[i64], ctx: &str) -> Result<Json> {
        let bytes = crate::numpy::i64_le_bytes(v);
        self.leaf(&DType::scalar(Primitive::I64), v.len(), &bytes, ctx)
    }

    fn numpy(&mut self, a: &NumpyArray, ctx: &str) -> Result<Json> {
        let bytes = a.data().as_le_bytes();
        self.leaf(a.dtype(), a.len(), &bytes, ctx)
    }

    fn child(&mut self, n: &Node, ctx: &str, depth: usize) -> Result<Json> {
        self.node(n.as_ref(), ctx, depth + 1)
    }
}
