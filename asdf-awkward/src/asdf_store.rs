//! Awkward arrays inside ASDF files (feature `asdf`), which no other implementation offers.
//!
//! An array is one node tagged [`AWKWARD0_TAG`] with two keys:
//!
//! * `schema`: the awkward0 persistence schema (the JSON document an `.awkd` file keeps in its
//!   `.json` member), as a YAML mapping;
//! * `blobs`: a mapping from each blob name the schema `read`s to a `uint8` `core/ndarray`
//!   holding the blob's bytes in an ASDF block.
//!
//! An awkward 2 array ([`to_asdf_awkward2`]) is one node tagged [`AWKWARD2_TAG`] with `form`,
//! `length` and `buffers` (each a typed 1-D `core/ndarray`), which Python reads with
//! `ak.from_buffers(node["form"], node["length"], node["buffers"])`. [`from_asdf`] reads both
//! tags; an awkward 2 node's buffers are read only when its form needs them.
//!
//! Blobs are compressed by the ASDF block codecs (any of them, per
//! [`StoreOptions::compression`](asdf::StoreOptions)), not by awkward0's own zlib policy, so
//! Python asdf and any ASDF reader can get at the raw buffers; awkward0 itself can rebuild the
//! array from them with `awkward0.persist.deserialize` over a dict of the blobs.
//!
//! ```
//! use asdf_awkward::{from_asdf, to_asdf, Layout, ReadOptions};
//! let a = Layout::from_json(&serde_json::json!([[1, 2], [], [3]])).unwrap();
//! let mut w = asdf::AsdfWriter::new();
//! let node = to_asdf(&a, &mut w, &asdf::StoreOptions::compressed("zstd").unwrap()).unwrap();
//! let bytes = w.to_bytes(asdf::yaml::Node::mapping([("events", node)]), &Default::default()).unwrap();
//! let f = asdf::AsdfFile::from_bytes(bytes, &Default::default()).unwrap();
//! let back = from_asdf(&f, "/events", &ReadOptions::default()).unwrap();
//! assert_eq!(back.to_json().unwrap(), serde_json::json!([[1, 2], [], [3]]));
//! ```

use asdf::yaml::{Mapping, Node, Value};
use asdf::{AsdfFile, AsdfWriter, StoreOptions};
use serde_json::{Map, Number, Value as Json};

use std::borrow::Cow;

use crate::awkward2::to_awkward2;
use crate::error::{Error, Result};
use crate::from_buffers::{from_buffers, FromBuffersOptions};
use crate::read::{read_schema, ReadOptions};
use crate::store::BlobStore;
use crate::store::MemoryStore;
use crate::write::{serialize, CompressionPolicy, WriteOptions};
use crate::Layout;

/// The tag of an awkward0 array stored in an ASDF tree (defined by this project).
pub const AWKWARD0_TAG: &str = "tag:asdf-rust.dev,2026:awkward/awkward0-1.0.0";

/// The tag of an awkward 2 array (form, length, buffers) stored in an ASDF tree (defined by this
/// project, next to [`AWKWARD0_TAG`]).
pub const AWKWARD2_TAG: &str = "tag:asdf-rust.dev,2026:awkward/awkward2-1.0.0";

/// Whether a node's tag is one of this crate's awkward array tags (awkward0 or awkward 2): the
/// nodes [`from_asdf`] reads.
pub fn is_awkward_tag(tag: Option<&str>) -> bool {
    matches!(tag, Some(AWKWARD0_TAG) | Some(AWKWARD2_TAG))
}

fn err(pointer: &str, message: impl Into<String>) -> Error {
    Error::Asdf {
        pointer: pointer.to_string(),
        message: message.into(),
    }
}

/// Stores `layout` through `writer` (its blobs become blocks with `store`'s options) and
/// returns the tagged node to place in the tree.
pub fn to_asdf(layout: &Layout, writer: &mut AsdfWriter, store: &StoreOptions) -> Result<Node> {
    let opts = WriteOptions {
        compression: CompressionPolicy::none(),
        ..WriteOptions::default()
    };
    let mut blobs = MemoryStore::default();
    let schema = serialize(layout, &mut blobs, "", &opts)?;
    let mut nodes = Mapping::new();
    for (name, bytes) in std::mem::take(&mut blobs.blobs) {
        let array = ndarray::Array1::from(bytes);
        let node = writer
            .add(&array, store)
            .map_err(|e| err("(new)", e.to_string()))?;
        nodes.insert(name, node);
    }
    Ok(Node::mapping([
        ("schema", json_to_node(&schema)),
        ("blobs", Node::from(nodes)),
    ])
    .with_tag(AWKWARD0_TAG))
}

/// Reads the awkward array stored at `pointer` of `file` (see the module documentation), with
/// the same whitelist and limits as any other awkward0 source.
pub fn from_asdf<B: AsRef<[u8]> + Sync>(
    file: &AsdfFile<B>,
    pointer: &str,
    opts: &ReadOptions,
) -> Result<Layout> {
    let node = file
        .pointer(pointer)
        .ok_or_else(|| err(pointer, "nothing in the tree here"))?;
    match node.tag() {
        Some(AWKWARD0_TAG) => {}
        Some(AWKWARD2_TAG) => {
            let fb = FromBuffersOptions {
                limits: opts.limits.clone(),
                ..FromBuffersOptions::default()
            };
            return from_asdf_awkward2(file, pointer, node, &fb);
        }
        other => {
            return Err(err(
                pointer,
                format!("expected a node tagged {AWKWARD0_TAG} or {AWKWARD2_TAG}, found {other:?}"),
            ))
        }
    }
    let schema = node
        .get("schema")
        .ok_or_else(|| err(pointer, "no `schema`"))
        .and_then(|s| node_to_json(s, &format!("{pointer}/schema"), 0))?;
    let blobs = node
        .get("blobs")
        .and_then(Node::as_map)
        .ok_or_else(|| err(pointer, "no `blobs` mapping"))?;
    let mut store = MemoryStore::default();
    let mut total = 0u64;
    for (k, _) in blobs.iter() {
        let name = k
            .as_str()
            .ok_or_else(|| err(pointer, "blob names must be strings"))?;
        let at = format!(
            "{pointer}/blobs/{}",
            name.replace('~', "~0").replace('/', "~1")
        );
        let bytes = file.array::<u8>(&at).map_err(|e| err(&at, e.to_string()))?;
        total = total.saturating_add(bytes.len() as u64);
        if total > opts.limits.max_total_bytes {
            return Err(err(
                pointer,
                format!(
                    "blobs exceed the {}-byte limit",
                    opts.limits.max_total_bytes
                ),
            ));
        }
        store
            .blobs
            .insert(name.to_string(), bytes.into_raw_vec_and_offset().0);
    }
    read_schema(&schema, &store, opts)
}

/// Stores `layout` as awkward 2 buffers (see [`to_awkward2`]) through `writer` and returns the
/// node tagged [`AWKWARD2_TAG`] to place in the tree: `form` (the form as awkward 2's
/// `form.to_dict()`), `length`, and `buffers`, a mapping from each buffer key to a 1-D
/// `core/ndarray` of the buffer's own type (`int64` offsets, `float32` data, ...; `uint8` where
/// ASDF has no such type, e.g. datetimes), in blocks with `store`'s codec. Python reads it with
/// `ak.from_buffers(node["form"], node["length"], node["buffers"])`.
///
/// ```
/// use asdf_awkward::{from_asdf, to_asdf_awkward2, Layout, ReadOptions};
/// let a = Layout::from_json(&serde_json::json!([{"x": 1.5}, null])).unwrap();
/// let mut w = asdf::AsdfWriter::new();
/// let node = to_asdf_awkward2(&a, &mut w, &asdf::StoreOptions::compressed("zlib").unwrap()).unwrap();
/// let bytes = w.to_bytes(asdf::yaml::Node::mapping([("events", node)]), &Default::default()).unwrap();
/// let f = asdf::AsdfFile::from_bytes(bytes, &Default::default()).unwrap();
/// let back = from_asdf(&f, "/events", &ReadOptions::default()).unwrap();
/// assert_eq!(back.to_json().unwrap(), serde_json::json!([{"x": 1.5}, null]));
/// ```
pub fn to_asdf_awkward2(
    layout: &Layout,
    writer: &mut AsdfWriter,
    store: &StoreOptions,
) -> Result<Node> {
    let b = to_awkward2(layout)?;
    let types = buffer_types(&b.form);
    let mut nodes = Mapping::new();
    for (key, bytes) in &b.buffers {
        let ty = types.get(key.as_str()).copied().unwrap_or("uint8");
        let node = add_typed(writer, bytes, ty, store).map_err(|e| err("(new)", e.to_string()))?;
        nodes.insert(key.clone(), node);
    }
    Ok(Node::mapping([
        ("form", json_to_node(&b.form)),
        ("length", Node::from(b.length as u64)),
        ("buffers", Node::from(nodes)),
    ])
    .with_tag(AWKWARD2_TAG))
}

/// The numpy type name of every buffer a form (as exported by this crate) names.
fn buffer_types(form: &Json) -> std::collections::HashMap<String, &'static str> {
    fn index(t: &Json) -> &'static str {
        match t.as_str() {
            Some("i8") => "int8",
            Some("u8") => "uint8",
            Some("i32") => "int32",
            Some("u32") => "uint32",
            _ => "int64",
        }
    }
    fn walk(f: &Json, out: &mut std::collections::HashMap<String, &'static str>, depth: usize) {
        let Some(key) = f.get("form_key").and_then(Json::as_str) else {
            return;
        };
        if depth > crate::layout::MAX_NESTING {
            return;
        }
        for attr in ["offsets", "starts", "stops", "index", "tags", "mask"] {
            if let Some(t) = f.get(attr) {
                out.insert(format!("{key}-{attr}"), index(t));
            }
        }
        if let Some(p) = f.get("primitive").and_then(Json::as_str) {
            let ty = match p {
                "bool" => "bool",
                "int8" => "int8",
                "uint8" => "uint8",
                "int16" => "int16",
                "uint16" => "uint16",
                "int32" => "int32",
                "uint32" => "uint32",
                "int64" => "int64",
                "uint64" => "uint64",
                "float32" => "float32",
                "float64" => "float64",
                _ => "uint8",
            };
            out.insert(format!("{key}-data"), ty);
        }
        if let Some(c) = f.get("content") {
            walk(c, out, depth + 1);
        }
        if let Some(Json::Array(cs)) = f.get("contents") {
            for c in cs {
                walk(c, out, depth + 1);
            }
        }
    }
    let mut out = std::collections::HashMap::new();
    walk(form, &mut out, 0);
    out
}

/// Adds little-endian `bytes` as a 1-D array of numpy type `ty`.
fn add_typed(
    w: &mut AsdfWriter,
    bytes: &[u8],
    ty: &str,
    store: &StoreOptions,
) -> asdf::Result<Node> {
    macro_rules! typed {
        ($t:ty, $n:literal) => {{
            let v: Vec<$t> = bytes
                .chunks_exact($n)
                .map(|c| {
                    let mut a = [0u8; $n];
                    a.copy_from_slice(c);
                    <$t>::from_le_bytes(a)
                })
                .collect();
            w.add(&ndarray::Array1::from(v), store)
        }};
    }
    match ty {
        "bool" => w.add(
            &ndarray::Array1::from(bytes.iter().map(|&b| b != 0).collect::<Vec<bool>>()),
            store,
        ),
        "int8" => typed!(i8, 1),
        "int16" => typed!(i16, 2),
        "uint16" => typed!(u16, 2),
        "int32" => typed!(i32, 4),
        "uint32" => typed!(u32, 4),
        "int64" => typed!(i64, 8),
        "uint64" => typed!(u64, 8),
        "float32" => typed!(f32, 4),
        "float64" => typed!(f64, 8),
        _ => w.add(&ndarray::Array1::from(bytes.to_vec()), store),
    }
}

/// Reads the awkward 2 node at `pointer`: buffers are read only when the form needs them.
fn from_asdf_awkward2<B: AsRef<[u8]> + Sync>(
    file: &AsdfFile<B>,
    pointer: &str,
    node: &Node,
    opts: &FromBuffersOptions,
) -> Result<Layout> {
    let form = node
        .get("form")
        .ok_or_else(|| err(pointer, "no `form`"))
        .and_then(|s| node_to_json(s, &format!("{pointer}/form"), 0))?;
    let length = node
        .get("length")
        .ok_or_else(|| err(pointer, "no `length`"))
        .and_then(|n| node_to_json(n, &format!("{pointer}/length"), 0))?
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| err(pointer, "`length` must be a non-negative integer"))?;
    if node.get("buffers").and_then(Node::as_map).is_none() {
        return Err(err(pointer, "no `buffers` mapping"));
    }
    let store = AsdfBuffers {
        file,
        pointer: format!("{pointer}/buffers"),
        node,
    };
    from_buffers(&form, length, &store, opts)
}

/// The `buffers` mapping of an awkward 2 node, read on demand.
struct AsdfBuffers<'f, B: AsRef<[u8]> + Sync> {
    file: &'f AsdfFile<B>,
    pointer: String,
    node: &'f Node,
}

impl<B: AsRef<[u8]> + Sync> AsdfBuffers<'_, B> {
    fn at(&self, name: &str) -> Option<String> {
        let map = self.node.get("buffers").and_then(Node::as_map)?;
        map.iter().any(|(k, _)| k.as_str() == Some(name)).then(|| {
            format!(
                "{}/{}",
                self.pointer,
                name.replace('~', "~0").replace('/', "~1")
            )
        })
    }
}

impl<B: AsRef<[u8]> + Sync> BlobStore for AsdfBuffers<'_, B> {
    fn get(&self, name: &str, max_bytes: u64) -> Result<Option<Cow<'_, [u8]>>> {
        let Some(at) = self.at(name) else {
            return Ok(None);
        };
        let meta = self.file.meta(&at).map_err(|e| err(&at, e.to_string()))?;
        // Checked before decoding: the declared size, not the block, decides the allocation.
        let item = meta.datatype.as_ref().and_then(|d| d.size().ok());
        let declared = match (item, meta.shape.as_ref()) {
            (Some(item), Some(shape)) => shape
                .iter()
                .try_fold(item as u64, |acc, &d| acc.checked_mul(d as u64)),
            _ => None,
        };
        match declared {
            Some(n) => crate::store::check_size(name, n, max_bytes)?,
            None => {
                return Err(err(
                    &at,
                    "a buffer needs a datatype and a shape that fit 64 bits",
                ))
            }
        }
        let a = self.file.read(&at).map_err(|e| err(&at, e.to_string()))?;
        let bytes = a
            .to_bytes(asdf::ndarray::ByteOrder::Little)
            .map_err(|e| err(&at, e.to_string()))?;
        Ok(Some(Cow::Owned(bytes)))
    }

    fn names(&self) -> Result<Vec<String>> {
        let map = self.node.get("buffers").and_then(Node::as_map);
        Ok(map
            .map(|m| {
                m.iter()
                    .filter_map(|(k, _)| k.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default())
    }

    fn size(&self, name: &str) -> Result<Option<u64>> {
        Ok(self.get(name, u64::MAX)?.map(|b| b.len() as u64))
    }
}

/// A JSON value as a YAML node.
fn json_to_node(j: &Json) -> Node {
    match j {
        Json::Null => Node::null(),
        Json::Bool(b) => Node::from(*b),
        Json::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Node::from(i),
            (None, Some(u), _) => Node::from(u),
            (_, _, Some(f)) => Node::from(f),
            _ => Node::null(),
        },
        Json::String(s) => Node::from(s.as_str()),
        Json::Array(items) => Node::sequence(items.iter().map(json_to_node)),
        Json::Object(m) => Node::from(
            m.iter()
                .map(|(k, v)| (Node::from(k.as_str()), json_to_node(v)))
                .collect::<Mapping>(),
        ),
    }
}

/// A YAML node as JSON (the schema is plain JSON data: no tags, string keys, finite numbers).
fn node_to_json(n: &Node, at: &str, depth: usize) -> Result<Json> {
    if depth > 1000 {
        return Err(err(at, "schema nested too deeply"));
    }
    Ok(match n.value() {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::BigInt(s) => Json::Number(
            s.parse::<u64>()
                .map(Number::from)
                .map_err(|_| err(at, format!("integer {s} is out of range")))?,
        ),
        Value::Float(f) => {
            Json::Number(Number::from_f64(*f).ok_or_else(|| err(at, "a non-finite number"))?)
        }
        Value::Str(s) => Json::String(s.to_string()),
        Value::Packed(_) => return node_to_json(&n.unpacked(), at, depth),
        Value::Seq(items) => Json::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, c)| node_to_json(c, &format!("{at}/{i}"), depth + 1))
                .collect::<Result<_>>()?,
        ),
        Value::Map(m) => {
            let mut out = Map::new();
            for (k, v) in m.iter() {
                let key = k
                    .as_str()
                    .ok_or_else(|| err(at, "schema keys must be strings"))?;
                out.insert(
                    key.to_string(),
                    node_to_json(v, &format!("{at}/{key}"), depth + 1)?,
                );
            }
            Json::Object(out)
        }
        Value::Shared(inner) => node_to_json(inner, at, depth + 1)?,
    })
}
