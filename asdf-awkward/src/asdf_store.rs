//! Awkward arrays inside ASDF files (feature `asdf`), which no other implementation offers.
//!
//! An array is one node tagged [`AWKWARD0_TAG`] with two keys:
//!
//! * `schema`: the awkward0 persistence schema (the JSON document an `.awkd` file keeps in its
//!   `.json` member), as a YAML mapping;
//! * `blobs`: a mapping from each blob name the schema `read`s to a `uint8` `core/ndarray`
//!   holding the blob's bytes in an ASDF block.
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

use crate::error::{Error, Result};
use crate::read::{read_schema, ReadOptions};
use crate::store::MemoryStore;
use crate::write::{serialize, CompressionPolicy, WriteOptions};
use crate::Layout;

/// The tag of an awkward0 array stored in an ASDF tree (defined by this project).
pub const AWKWARD0_TAG: &str = "tag:asdf-rust.dev,2026:awkward/awkward0-1.0.0";

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
    if node.tag() != Some(AWKWARD0_TAG) {
        return Err(err(
            pointer,
            format!(
                "expected a node tagged {AWKWARD0_TAG}, found {:?}",
                node.tag()
            ),
        ));
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
        Value::Str(s) => Json::String(s.clone()),
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
