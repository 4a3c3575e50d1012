//! Schema sources: YAML schema files and extension manifests, indexed by id and by tag.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use asdf_yaml::Node;
use serde_json::Value as J;

use super::tree::to_json;
use crate::error::{Result, SchemaError};

/// Largest schema or manifest file read (schemas are a few kB; the largest standard one is
/// under 100 kB).
pub const MAX_SCHEMA_FILE: u64 = 8 << 20;
/// Deepest directory level searched for schema files.
const MAX_DIR_DEPTH: usize = 16;
/// Most files read from one directory tree.
const MAX_FILES: usize = 100_000;

/// Schemas by id and the tag-to-schema map of the manifests.
///
/// Files are read eagerly from directories: every `*.yaml`/`*.yml` file with an `id` is a
/// schema; every file with `tags:` and `extension_uri` (or an `id` under `/manifests/`) is a
/// manifest whose `tag_uri` → `schema_uri`/`schema_uris` entries give the schemas of tags.
///
/// ```
/// use asdf_schema::SchemaStore;
/// let mut store = SchemaStore::new();
/// store.add_schema_text("id: http://example.org/schemas/thing-1.0.0\ntype: object\nrequired: [a]\n", "inline").unwrap();
/// store.add_tag("tag:example.org:thing-1.0.0", "http://example.org/schemas/thing-1.0.0");
/// assert_eq!(store.schema_uris_for_tag("tag:example.org:thing-1.0.0"),
///            vec!["http://example.org/schemas/thing-1.0.0".to_string()]);
/// assert!(store.schema("http://example.org/schemas/thing-1.0.0").is_some());
/// ```
#[derive(Debug, Clone, Default)]
pub struct SchemaStore {
    schemas: HashMap<String, J>,
    tags: HashMap<String, Vec<String>>,
    dirs: Vec<PathBuf>,
}

/// Schema ids are compared without a trailing `#` and without a `.yaml` suffix.
fn normalize(uri: &str) -> &str {
    let uri = uri.strip_suffix('#').unwrap_or(uri);
    uri.strip_suffix(".yaml").unwrap_or(uri)
}

impl SchemaStore {
    /// An empty store.
    pub fn new() -> Self {
        SchemaStore::default()
    }

    /// Number of schemas known.
    pub fn len(&self) -> usize {
        self.schemas.len()
    }

    /// Whether no schema is known.
    pub fn is_empty(&self) -> bool {
        self.schemas.is_empty()
    }

    /// The ids of all schemas.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.schemas.keys().map(String::as_str)
    }

    /// Directories read so far.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The schema with this id (as JSON).
    pub fn schema(&self, uri: &str) -> Option<&J> {
        self.schemas.get(normalize(uri))
    }

    /// Registers a schema under `uri` (its `id` is not consulted).
    pub fn add_schema(&mut self, uri: &str, schema: J) {
        self.schemas.insert(normalize(uri).to_string(), schema);
    }

    /// Maps a tag to a schema URI.
    pub fn add_tag(&mut self, tag: &str, schema_uri: &str) {
        let list = self.tags.entry(tag.to_string()).or_default();
        if !list.iter().any(|s| s == schema_uri) {
            list.push(schema_uri.to_string());
        }
    }

    /// Parses YAML text holding a schema (registered by its `id`) or a manifest.
    pub fn add_schema_text(&mut self, text: &str, what: &str) -> Result<()> {
        let node = asdf_yaml::parse_str(text).map_err(|source| SchemaError::Yaml {
            what: what.to_string(),
            source,
        })?;
        self.add_document(&node, what)
    }

    /// Adds a parsed schema or manifest document.
    pub fn add_document(&mut self, node: &Node, what: &str) -> Result<()> {
        if node.as_map().is_none() {
            return Err(SchemaError::InvalidSchema {
                uri: what.to_string(),
                message: "not a mapping".to_string(),
            });
        }
        let id = node.get("id").and_then(Node::as_str);
        let is_manifest = node.get("tags").and_then(Node::as_seq).is_some()
            && (node.get("extension_uri").is_some()
                || id.is_some_and(|i| i.contains("/manifests/")));
        if is_manifest {
            for t in node.get("tags").and_then(Node::as_seq).unwrap_or(&[]) {
                let Some(tag) = t.get("tag_uri").and_then(Node::as_str) else {
                    continue;
                };
                if let Some(s) = t.get("schema_uri").and_then(Node::as_str) {
                    self.add_tag(tag, s);
                }
                for s in t.get("schema_uris").and_then(Node::as_seq).unwrap_or(&[]) {
                    if let Some(s) = s.as_str() {
                        self.add_tag(tag, s);
                    }
                }
            }
            return Ok(());
        }
        match id {
            Some(id) => {
                self.add_schema(id, to_json(node));
                Ok(())
            }
            None => Err(SchemaError::InvalidSchema {
                uri: what.to_string(),
                message: "a schema file needs an `id`".to_string(),
            }),
        }
    }

    /// Reads every schema and manifest file under `dir` (recursively). Files that are not
    /// schemas (no `id`, not YAML) are skipped; unreadable directories are errors.
    pub fn add_dir(&mut self, dir: &Path) -> Result<usize> {
        let mut count = 0;
        let mut stack = vec![(dir.to_path_buf(), 0usize)];
        let mut seen = 0usize;
        while let Some((d, depth)) = stack.pop() {
            let rd = std::fs::read_dir(&d).map_err(|source| SchemaError::Io {
                path: d.clone(),
                source,
            })?;
            let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
            entries.sort();
            for p in entries {
                seen += 1;
                if seen > MAX_FILES {
                    return Ok(count);
                }
                if p.is_dir() {
                    if depth < MAX_DIR_DEPTH {
                        stack.push((p, depth + 1));
                    }
                    continue;
                }
                let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
                if ext != "yaml" && ext != "yml" {
                    continue;
                }
                let text = read_limited(&p)?;
                // Skip files that do not parse or are not schemas: a schema directory may hold
                // other YAML (examples, configuration).
                if let Ok(node) = asdf_yaml::parse_str(&text) {
                    if self.add_document(&node, &p.display().to_string()).is_ok() {
                        count += 1;
                    }
                }
            }
        }
        self.dirs.push(dir.to_path_buf());
        Ok(count)
    }

    /// Reads the directories listed in `ASDF_SCHEMA_PATH` (separated like `PATH`).
    pub fn add_env_path(&mut self) -> Result<usize> {
        let Some(v) = std::env::var_os("ASDF_SCHEMA_PATH") else {
            return Ok(0);
        };
        let mut n = 0;
        for d in std::env::split_paths(&v) {
            if !d.as_os_str().is_empty() {
                n += self.add_dir(&d)?;
            }
        }
        Ok(n)
    }

    /// Schema URIs for a tag: from the manifests, else by the naming convention
    /// (`tag:stsci.edu:asdf/X` → `http://stsci.edu/schemas/asdf/X`,
    /// `asdf://org/proj/tags/X` → `asdf://org/proj/schemas/X`) when such a schema is known.
    pub fn schema_uris_for_tag(&self, tag: &str) -> Vec<String> {
        if let Some(list) = self.tags.get(tag) {
            return list.clone();
        }
        let guess = if let Some(rest) = tag.strip_prefix("tag:stsci.edu:asdf/") {
            Some(format!("http://stsci.edu/schemas/asdf/{rest}"))
        } else if tag.starts_with("asdf://") {
            tag.rsplit_once("/tags/")
                .map(|(a, b)| format!("{a}/schemas/{b}"))
        } else {
            None
        };
        guess
            .filter(|g| self.schema(g).is_some())
            .into_iter()
            .collect()
    }

    /// Whether any manifest maps this tag.
    pub fn knows_tag(&self, tag: &str) -> bool {
        self.tags.contains_key(tag)
    }

    /// The `propertyOrder` of a tag's schema (a writer hint).
    pub fn property_order(&self, tag: &str) -> Option<Vec<String>> {
        let uri = self.schema_uris_for_tag(tag).into_iter().next()?;
        let order = self.schema(&uri)?.get("propertyOrder")?.as_array()?;
        Some(
            order
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
        )
    }
}

/// Reads a text file of at most [`MAX_SCHEMA_FILE`] bytes.
pub(crate) fn read_limited(p: &Path) -> Result<String> {
    let meta = std::fs::metadata(p).map_err(|source| SchemaError::Io {
        path: p.to_path_buf(),
        source,
    })?;
    if meta.len() > MAX_SCHEMA_FILE {
        return Err(SchemaError::TooLarge {
            path: p.to_path_buf(),
            size: meta.len(),
            limit: MAX_SCHEMA_FILE,
        });
    }
    let bytes = std::fs::read(p).map_err(|source| SchemaError::Io {
        path: p.to_path_buf(),
        source,
    })?;
    String::from_utf8(bytes).map_err(|e| SchemaError::NotUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })
}

/// Resource directories of the Python environment of `python`: `asdf_standard`'s `resources`
/// and the `resources` folders of packages registering `asdf.resource_mappings` entry points.
/// `None` when the interpreter cannot run or has no `asdf_standard`.
pub fn python_resource_dirs(python: &Path) -> Option<Vec<PathBuf>> {
    const SCRIPT: &str = r#"
import os, importlib, importlib.util
out = []
spec = importlib.util.find_spec("asdf_standard")
if spec and spec.origin:
    out.append(os.path.join(os.path.dirname(spec.origin), "resources"))
try:
    from importlib.metadata import entry_points
    eps = entry_points()
    eps = eps.select(group="asdf.resource_mappings") if hasattr(eps, "select") else eps.get("asdf.resource_mappings", [])
    for ep in eps:
        top = ep.value.split(":")[0].split(".")[0]
        s = importlib.util.find_spec(top)
        if s and s.origin:
            for base, dirs, files in os.walk(os.path.dirname(s.origin)):
                if os.path.basename(base) == "resources":
                    out.append(base)
                    dirs[:] = []
except Exception:
    pass
seen = set()
for d in out:
    if os.path.isdir(d) and d not in seen:
        seen.add(d)
        print(d)
"#;
    let output = std::process::Command::new(python)
        .arg("-c")
        .arg(SCRIPT)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let dirs: Vec<PathBuf> = text
        .lines()
        .filter(|l| !l.is_empty())
        .map(PathBuf::from)
        .collect();
    if dirs.is_empty() {
        None
    } else {
        Some(dirs)
    }
}
