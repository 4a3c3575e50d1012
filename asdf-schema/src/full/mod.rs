//! Full validation against ASDF YAML schema files (feature `full`).

mod keywords;
mod store;
mod tree;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use asdf_yaml::Node;
use jsonschema::{Draft, Retrieve, Uri, Validator};
use serde_json::Value as J;

pub use keywords::uri_match;
pub use store::{python_resource_dirs, SchemaStore, MAX_SCHEMA_FILE};
pub use tree::{to_json, NodeRef, YamlTree};

use crate::error::{Result, SchemaError};
use crate::Violation;

/// The YAML-schema metaschema id every ASDF schema names in `$schema`.
const YAML_SCHEMA_DRAFT_01: &str = "http://stsci.edu/schemas/yaml-schema/draft-01";

/// Serves the store's schemas to `jsonschema` by id (no network, no files).
struct StoreRetriever(Arc<SchemaStore>);

impl Retrieve for StoreRetriever {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> std::result::Result<J, Box<dyn std::error::Error + Send + Sync>> {
        let u = uri.as_str();
        if let Some(s) = self.0.schema(u) {
            return Ok(s.clone());
        }
        if u.trim_end_matches('#') == YAML_SCHEMA_DRAFT_01 {
            // Without the asdf-standard resources: the metaschema only adds keywords, which
            // draft 4 then ignores when checking schemas.
            return Ok(serde_json::json!({"id": YAML_SCHEMA_DRAFT_01}));
        }
        Err(format!("schema {u} is not in the schema store").into())
    }
}

/// A schema compiled once by [`SchemaValidator::compile_schema`], for any number of trees.
pub struct CompiledSchema(Validator<YamlTree>);

/// Validates trees against the schemas of a [`SchemaStore`]: every tagged node against the
/// schema(s) its tag maps to, and optionally the whole tree against a custom schema. Compiled
/// schemas are cached.
pub struct SchemaValidator {
    store: Arc<SchemaStore>,
    cache: Mutex<HashMap<String, Arc<Validator<YamlTree>>>>,
}

impl SchemaValidator {
    /// A validator over `store`.
    pub fn new(store: SchemaStore) -> Self {
        SchemaValidator {
            store: Arc::new(store),
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The schemas.
    pub fn store(&self) -> &SchemaStore {
        &self.store
    }

    /// Compiles `schema`. A schema that breaks the draft-4 metaschema only with `definitions`
    /// entries that are not schemas (rad 1.2.1's catalogue tables have
    /// `definitions: {$ref: ...}`, a string where a schema belongs), which validation never
    /// reaches, is compiled without them, as Python asdf uses it; one that still cannot be
    /// compiled is an error with the metaschema's complaint.
    fn compile(&self, uri: &str, schema: &J) -> Result<Validator<YamlTree>> {
        let options = jsonschema::options_for::<YamlTree>()
            .with_draft(Draft::Draft4)
            .with_retriever(StoreRetriever(self.store.clone()))
            .should_validate_formats(false)
            .with_keyword("tag", keywords::tag_factory)
            .with_keyword("ndim", keywords::ndim_factory)
            .with_keyword("max_ndim", keywords::max_ndim_factory)
            .with_keyword("datatype", keywords::datatype_factory);
        options.build(schema).or_else(|e| {
            options
                .build(&without_stray_definitions(schema))
                .map_err(|_| SchemaError::InvalidSchema {
                    uri: uri.to_string(),
                    message: e.to_string(),
                })
        })
    }

    /// The compiled validator of the schema with this id.
    fn validator(&self, uri: &str) -> Result<Arc<Validator<YamlTree>>> {
        if let Some(v) = self.cache.lock().ok().and_then(|c| c.get(uri).cloned()) {
            return Ok(v);
        }
        let schema = self
            .store
            .schema(uri)
            .ok_or_else(|| SchemaError::UnknownSchema {
                uri: uri.to_string(),
            })?;
        let v = Arc::new(self.compile(uri, schema)?);
        if let Ok(mut c) = self.cache.lock() {
            c.insert(uri.to_string(), v.clone());
        }
        Ok(v)
    }

    /// Validates `node` (found at `pointer` in its tree) against one schema.
    fn run(&self, v: &Validator<YamlTree>, node: &Node, pointer: &str, out: &mut Vec<Violation>) {
        // `jsonschema` recurses along the tree: refuse trees deep enough to exhaust the stack.
        if deeper_than(node, MAX_VALIDATION_DEPTH) {
            out.push(Violation::new(
                pointer,
                "depth",
                format!("subtree nested deeper than {MAX_VALIDATION_DEPTH} levels; not validated"),
            ));
            return;
        }
        for e in v.iter_errors(NodeRef(node)) {
            let rule = e
                .schema_path()
                .as_str()
                .rsplit('/')
                .find(|s| !s.is_empty() && s.parse::<usize>().is_err())
                .unwrap_or("schema")
                .to_string();
            out.push(Violation::new(
                format!("{pointer}{}", e.instance_path().as_str()),
                rule,
                message_of(&e),
            ));
        }
    }

    /// Validates every tagged node of `tree` against the schema(s) of its tag. Tags with no
    /// schema in the store are skipped (as Python asdf does, which only warns).
    pub fn validate_tags(&self, tree: &Node) -> Result<Vec<Violation>> {
        let mut out = Vec::new();
        self.validate_below(tree, &mut String::new(), 0, &mut out)?;
        Ok(out)
    }

    /// [`validate_tags`](Self::validate_tags) for `n`, whose pointer is `ptr` (extended in place
    /// for children, so a big tree costs no string per node). Untagged scalars in sequences are
    /// not visited (nothing under them can carry a tag).
    fn validate_below(
        &self,
        n: &Node,
        ptr: &mut String,
        depth: usize,
        out: &mut Vec<Violation>,
    ) -> Result<()> {
        if let Some(tag) = n.tag() {
            for uri in self.store.schema_uris_for_tag(tag) {
                // A manifest may name a schema that is not installed: Python asdf warns and
                // skips it; so do we.
                if self.store.schema(&uri).is_none() {
                    continue;
                }
                let v = self.validator(&uri)?;
                self.run(&v, n, ptr, out);
            }
        }
        if depth >= 512 {
            return Ok(());
        }
        let len = ptr.len();
        match n.value() {
            asdf_yaml::Value::Seq(items) => {
                for (i, c) in items.iter().enumerate() {
                    if c.tag().is_some() || c.as_seq().is_some() || c.as_map().is_some() {
                        use std::fmt::Write;
                        let _ = write!(ptr, "/{i}");
                        self.validate_below(c, ptr, depth + 1, out)?;
                        ptr.truncate(len);
                    }
                }
            }
            asdf_yaml::Value::Map(m) => {
                for (k, c) in m.iter() {
                    asdf_yaml::pointer::push_key(ptr, k);
                    self.validate_below(c, ptr, depth + 1, out)?;
                    ptr.truncate(len);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Compiles every schema of the store (a check of the store; compiled schemas are cached).
    /// Returns the ids that fail to compile, with why.
    pub fn compile_all(&self) -> Vec<(String, SchemaError)> {
        let mut ids: Vec<String> = self.store.ids().map(str::to_string).collect();
        ids.sort();
        ids.into_iter()
            .filter_map(|id| self.validator(&id).err().map(|e| (id, e)))
            .collect()
    }

    /// Validates the whole tree against one schema given by its JSON value (compiled for this
    /// call: to use it on many trees, [`compile_schema`](Self::compile_schema) it once).
    pub fn validate_with_schema(
        &self,
        tree: &Node,
        schema: &J,
        name: &str,
    ) -> Result<Vec<Violation>> {
        Ok(self.validate_compiled(tree, &self.compile_schema(schema, name)?))
    }

    /// Compiles a schema given by its JSON value (`name` says where it came from in errors),
    /// its `$ref`s resolved against this validator's store.
    pub fn compile_schema(&self, schema: &J, name: &str) -> Result<CompiledSchema> {
        Ok(CompiledSchema(self.compile(name, schema)?))
    }

    /// Validates the whole tree against a schema compiled by
    /// [`compile_schema`](Self::compile_schema).
    pub fn validate_compiled(&self, tree: &Node, schema: &CompiledSchema) -> Vec<Violation> {
        let mut out = Vec::new();
        self.run(&schema.0, tree, "", &mut out);
        out
    }

    /// Validates the whole tree against the schema with this id.
    pub fn validate_with_schema_uri(&self, tree: &Node, uri: &str) -> Result<Vec<Violation>> {
        let v = self.validator(uri)?;
        let mut out = Vec::new();
        self.run(&v, tree, "", &mut out);
        Ok(out)
    }
}

/// Deepest subtree handed to `jsonschema` (its validation recurses along the tree; ASDF trees
/// are a few levels deep, inline arrays at most 64 dimensions).
pub const MAX_VALIDATION_DEPTH: usize = 128;

/// Whether `n` has a path longer than `limit` nodes (iterative, stops early).
fn deeper_than(n: &Node, limit: usize) -> bool {
    let mut stack: Vec<(&Node, usize)> = vec![(n, 1)];
    while let Some((n, d)) = stack.pop() {
        if d > limit {
            return true;
        }
        match n.value() {
            asdf_yaml::Value::Seq(items) => stack.extend(items.iter().map(|c| (c, d + 1))),
            asdf_yaml::Value::Map(m) => stack.extend(m.values().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    false
}

/// The message of an error (the keyword-specific text without the instance dump for custom
/// keywords).
fn message_of(e: &jsonschema::ValidationError<'_>) -> String {
    let s = e.to_string();
    // Bound the size of a message that quotes a large instance.
    if s.len() > 400 {
        let mut cut = 400;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}...", &s[..cut])
    } else {
        s
    }
}

/// `schema` without the entries of its `definitions` (at any depth) that are not schemas
/// (objects or booleans).
fn without_stray_definitions(schema: &J) -> J {
    match schema {
        J::Object(m) => J::Object(
            m.iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("definitions", J::Object(defs)) => J::Object(
                            defs.iter()
                                .filter(|(_, d)| d.is_object() || d.is_boolean())
                                .map(|(n, d)| (n.clone(), without_stray_definitions(d)))
                                .collect(),
                        ),
                        _ => without_stray_definitions(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        J::Array(items) => J::Array(items.iter().map(without_stray_definitions).collect()),
        other => other.clone(),
    }
}

/// Loads a custom schema from a YAML (or JSON) file: its JSON value.
pub fn load_schema_file(path: &std::path::Path) -> Result<J> {
    let text = store::read_limited(path)?;
    let node = asdf_yaml::parse_str(&text).map_err(|source| SchemaError::Yaml {
        what: path.display().to_string(),
        source,
    })?;
    if node.as_map().is_none() {
        return Err(SchemaError::InvalidSchema {
            uri: path.display().to_string(),
            message: "not a mapping".to_string(),
        });
    }
    Ok(tree::to_json(&node))
}

/// Where to find schemas (see [`SchemaStore`]).
#[derive(Debug, Clone, Default)]
pub struct SchemaSources {
    /// Directories named by the user (read first).
    pub dirs: Vec<PathBuf>,
    /// Read `ASDF_SCHEMA_PATH`.
    pub env: bool,
    /// A Python interpreter whose `asdf_standard` (and extension packages') resources to use;
    /// `None` with `find_python` tries `ASDF_PYTHON`, then `python3` on `PATH`.
    pub python: Option<PathBuf>,
    /// Look for a Python interpreter when `python` is `None`.
    pub find_python: bool,
}

impl SchemaSources {
    /// Builds the store. Errors on unreadable user directories; a missing Python is not an
    /// error (the store is then built from the other sources).
    pub fn load(&self) -> Result<SchemaStore> {
        let mut store = SchemaStore::new();
        for d in &self.dirs {
            store.add_dir(d)?;
        }
        if self.env {
            store.add_env_path()?;
        }
        let python = self.python.clone().or_else(|| {
            if !self.find_python {
                return None;
            }
            std::env::var_os("ASDF_PYTHON")
                .map(PathBuf::from)
                .or_else(|| Some(PathBuf::from("python3")))
        });
        if let Some(py) = python {
            for d in python_resource_dirs(&py).unwrap_or_default() {
                store.add_dir(&d)?;
            }
        }
        Ok(store)
    }
}
