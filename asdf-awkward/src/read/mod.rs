//! The reader: a non-executing interpreter of awkward0 deserialization expressions.
//!
//! `call` specs are first checked against the [`Whitelist`] with awkward0's rules, then looked up
//! in a fixed table of this crate's own constructors; nothing is ever imported or executed.
//! `python` (pickle), `function`, `awkward0.persist.*` (e.g. `topython`), Parquet and uproot
//! specs (which open paths or URLs), `ObjectArray` and `VirtualArray` are refused.

mod construct;
mod dispatch;
mod expr;
mod leaf;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value as Json;

use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::limits::Limits;
use crate::store::BlobStore;
use crate::whitelist::Whitelist;

use crate::call::{short, Val};
use expr::{Eval, Loc};

/// Options for reading.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Resource ceilings.
    pub limits: Limits,
    /// Which specs may be looked up (awkward0's default list unless changed).
    pub whitelist: Whitelist,
    /// Suffix of schema blobs (`.json` in `.awkd` files).
    pub schema_suffix: String,
    /// Accept `{"python": ...}` expressions that hold a single pickled scalar (`None`, bool,
    /// int, float): awkward0 writes these for `SparseArray` defaults that JSON cannot hold
    /// (NaN, ±inf). They are decoded by a parser that understands only those opcodes; any
    /// other pickle is still refused. Off by default.
    pub decode_pickled_scalars: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            limits: Limits::default(),
            whitelist: Whitelist::default(),
            schema_suffix: ".json".into(),
            decode_pickled_scalars: false,
        }
    }
}

impl ReadOptions {
    /// The default options with [`Limits::untrusted`].
    ///
    /// ```
    /// use asdf_awkward::{Limits, ReadOptions};
    /// assert_eq!(ReadOptions::untrusted().limits, Limits::untrusted());
    /// ```
    pub fn untrusted() -> Self {
        ReadOptions {
            limits: Limits::untrusted(),
            ..ReadOptions::default()
        }
    }
}

/// Reads the array `name` from `store`: its schema is the blob `name + schema_suffix`.
///
/// ```
/// use asdf_awkward::{read_array, write_array, Layout, MemoryStore, ReadOptions, WriteOptions};
/// let a = Layout::from_json(&serde_json::json!([[1, 2], [], [3]])).unwrap();
/// let mut store = MemoryStore::default();
/// write_array(&a, &mut store, "evt", &WriteOptions::default()).unwrap();
/// let back = read_array(&store, "evt", &ReadOptions::default()).unwrap();
/// assert_eq!(back.to_json().unwrap(), serde_json::json!([[1, 2], [], [3]]));
/// ```
pub fn read_array(store: &dyn BlobStore, name: &str, opts: &ReadOptions) -> Result<Layout> {
    let key = format!("{name}{}", opts.schema_suffix);
    let bytes = store
        .get(&key, opts.limits.max_schema_bytes)?
        .ok_or_else(|| Error::NoSuchArray {
            name: name.into(),
            schema: key.clone(),
        })?;
    let doc = parse_schema_bytes(&key, &bytes)?;
    read_schema(&doc, store, opts)
}

/// Parses a schema blob (JSON text) into a JSON value.
pub fn parse_schema_bytes(name: &str, bytes: &[u8]) -> Result<Json> {
    serde_json::from_slice(bytes).map_err(|e| Error::SchemaJson {
        name: name.into(),
        message: e.to_string(),
    })
}

/// Evaluates an already-parsed top-level schema object (`{"awkward0": ..., "schema": ...}`)
/// against `store`.
pub fn read_schema(doc: &Json, store: &dyn BlobStore, opts: &ReadOptions) -> Result<Layout> {
    let top = doc.as_object().ok_or_else(|| Error::Schema {
        location: "top level".into(),
        message: "the schema document must be a JSON object".into(),
    })?;
    if !top.contains_key("awkward0") && !top.contains_key("awkward") {
        return Err(Error::Schema {
            location: "top level".into(),
            message: "not an awkward array schema (missing 'awkward0' or 'awkward' field)".into(),
        });
    }
    let prefix = match top.get("prefix") {
        None => "",
        Some(Json::String(s)) => s.as_str(),
        Some(other) => {
            return Err(Error::Schema {
                location: "prefix".into(),
                message: format!("must be a string, found {}", short(other)),
            })
        }
    };
    let schema = top.get("schema").ok_or_else(|| Error::Schema {
        location: "top level".into(),
        message: "missing 'schema' field".into(),
    })?;
    let mut ev = Eval {
        store,
        prefix,
        opts,
        ids: HashMap::new(),
        done: HashMap::new(),
        in_progress: HashSet::new(),
        count: 0,
        total_bytes: 0,
        hint: None,
        expanded: HashMap::new(),
    };
    let root = Loc::root();
    ev.index_ids(schema)?;
    match ev.eval(schema, &root, 0)? {
        Val::Array(node) => Ok(Arc::try_unwrap(node).unwrap_or_else(|arc| (*arc).clone())),
        other => Err(Error::Schema {
            location: "schema".into(),
            message: format!("evaluates to {}, not an array", other.kind()),
        }),
    }
}
