//! # asdf-schema
//!
//! Validation of ASDF trees ([`asdf_yaml::Node`]), in two levels:
//!
//! 1. **Built-in checks** ([`check_builtin`]), always available and dependency-light: the core
//!    tags this project reads and writes (`core/asdf` root, `ndarray-1.0.0/1.1.0`,
//!    `chunked-ndarray-1.0.0` + `ndarray-chunk-1.0.0`, `integer`, `complex`, `software`,
//!    `history_entry`, `extension_metadata`), hand-written from their schemas' rules plus the
//!    consistency rules a schema cannot express (strides/shape lengths, inline data against
//!    shape, chunk bounds). Every violation carries the JSON Pointer of the node and the rule.
//! 2. **Full validation** (cargo feature `full`, on by default): JSON Schema draft 4 with the
//!    YAML-schema `tag` keyword (with `*`/`**` wildcards) and the ASDF keywords `ndim`,
//!    `max_ndim`, `datatype`/`exact_datatype`, against schema files from a directory, from
//!    `ASDF_SCHEMA_PATH`, or from the `asdf_standard` (and extension packages') resources of a
//!    Python environment; `$ref` between schemas by id (`http://stsci.edu/schemas/...`,
//!    `asdf://...`), tag-to-schema lookup through the manifests, and a custom schema for the
//!    whole tree ([`SchemaValidator`], [`SchemaStore`]).
//!
//! [`validate_file_tree`] runs what `asdftool validate FILE [--schema S] [--schemas DIR]` needs
//! in one call and returns a [`Report`] whose `Display` lists every violation.
//!
//! ```
//! use asdf_schema::{check_builtin, validate_file_tree, ValidateOptions};
//! let tree = asdf_yaml::parse_str(
//!     "%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
//!      a: !core/ndarray-1.1.0 {data: [1, 2], datatype: int64, shape: [3]}\n").unwrap();
//! let report = validate_file_tree(&tree, &ValidateOptions::builtin_only()).unwrap();
//! assert!(!report.is_valid());
//! assert_eq!(report.violations[0].pointer, "/a/data");
//! assert_eq!(report.violations[0].rule, "shape");
//! assert!(check_builtin(&asdf_yaml::parse_str("a: 1").unwrap()).is_empty());
//! ```

#![forbid(unsafe_code)]

mod builtin;
mod error;
#[cfg(feature = "full")]
mod full;
mod report;

use std::path::{Path, PathBuf};

pub use builtin::check_builtin;
pub use error::{Result, SchemaError};
#[cfg(feature = "full")]
pub use full::{
    load_schema_file, python_resource_dirs, to_json, uri_match, CompiledSchema, NodeRef,
    SchemaSources, SchemaStore, SchemaValidator, YamlTree, MAX_SCHEMA_FILE, MAX_VALIDATION_DEPTH,
};
pub use report::{Report, Violation};

use asdf_yaml::Node;

/// Largest YAML tree [`tree_from_asdf_bytes`] accepts by default (256 MiB).
pub const DEFAULT_MAX_TREE_BYTES: usize = 256 << 20;

/// Extracts and parses the YAML tree of an ASDF file: the text up to and including the first
/// `...` line (the `#ASDF` header lines parse as YAML comments). A file with no `...` line is
/// parsed whole (a pure YAML file). Binary blocks after the tree are not looked at.
///
/// ```
/// let bytes = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
///               --- !core/asdf-1.1.0\nx: 1\n...\n\xd3BLK\x00\xff";
/// let tree = asdf_schema::tree_from_asdf_bytes(bytes, 1 << 20).unwrap();
/// assert_eq!(tree.get("x").and_then(asdf_yaml::Node::as_i64), Some(1));
/// assert_eq!(tree.tag(), Some("tag:stsci.edu:asdf/core/asdf-1.1.0"));
/// ```
pub fn tree_from_asdf_bytes(bytes: &[u8], max_tree_bytes: usize) -> Result<Node> {
    let end = find_document_end(bytes).unwrap_or(bytes.len());
    if end > max_tree_bytes {
        return Err(SchemaError::TooLarge {
            path: PathBuf::from("<tree>"),
            size: end as u64,
            limit: max_tree_bytes as u64,
        });
    }
    let text = std::str::from_utf8(&bytes[..end]).map_err(|e| SchemaError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    asdf_yaml::parse_str(text).map_err(|source| SchemaError::Yaml {
        what: "the ASDF tree".to_string(),
        source,
    })
}

/// Reads the YAML tree of an ASDF file without reading its blocks: lines up to and including
/// the first `...` line, at most `max_tree_bytes` of them.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("asdf-schema-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("a.asdf");
/// std::fs::write(&path, "#ASDF 1.0.0\n%YAML 1.1\n---\nx: [1, 2]\n...\n\u{d3}BLK").unwrap();
/// let tree = asdf_schema::read_tree(&path, 1 << 20).unwrap();
/// assert_eq!(tree.pointer("/x/1").and_then(asdf_yaml::Node::as_i64), Some(2));
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn read_tree(path: &Path, max_tree_bytes: usize) -> Result<Node> {
    use std::io::{BufRead, Read};
    let io = |source| SchemaError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    loop {
        let start = buf.len();
        // A line longer than the ceiling stops at the ceiling (`take`), never grows past it.
        let room = (max_tree_bytes + 1).saturating_sub(start) as u64;
        let n = (&mut reader)
            .take(room)
            .read_until(b'\n', &mut buf)
            .map_err(io)?;
        if buf.len() > max_tree_bytes {
            return Err(SchemaError::TooLarge {
                path: path.to_path_buf(),
                size: buf.len() as u64,
                limit: max_tree_bytes as u64,
            });
        }
        let line = &buf[start..];
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if n == 0 || line == b"..." {
            break;
        }
    }
    tree_from_asdf_bytes(&buf, max_tree_bytes)
}

/// Reads the tree of the ASDF file at `path` ([`read_tree`], with
/// [`DEFAULT_MAX_TREE_BYTES`]) and validates it ([`validate_file_tree`]): the whole of
/// `asdftool validate FILE [--schema S] [--schemas DIR]`.
pub fn validate_file(path: &Path, opts: &ValidateOptions) -> Result<Report> {
    let tree = read_tree(path, DEFAULT_MAX_TREE_BYTES)?;
    validate_file_tree(&tree, opts)
}

/// Offset just past the first `...` line (with its line break), if any.
fn find_document_end(bytes: &[u8]) -> Option<usize> {
    let mut start = 0;
    while start < bytes.len() {
        let nl = bytes[start..].iter().position(|&b| b == b'\n');
        let line_end = nl.map_or(bytes.len(), |i| start + i);
        let line = &bytes[start..line_end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line == b"..." {
            return Some((line_end + 1).min(bytes.len()));
        }
        match nl {
            Some(_) => start = line_end + 1,
            None => break,
        }
    }
    None
}

/// What [`validate_file_tree`] runs.
#[derive(Debug, Clone)]
pub struct ValidateOptions {
    /// Run the built-in checks of the core tags.
    pub builtin: bool,
    /// Validate tagged nodes against the schemas of their tags (feature `full`).
    pub tag_schemas: bool,
    /// A custom schema file for the whole tree (`--schema`; feature `full`).
    pub custom_schema: Option<PathBuf>,
    /// Schema directories (`--schemas`; feature `full`).
    pub schema_dirs: Vec<PathBuf>,
    /// Also read `ASDF_SCHEMA_PATH` (feature `full`).
    pub use_env_path: bool,
    /// Python interpreter whose `asdf_standard` resources to use (feature `full`); when `None`
    /// and `find_python` is set, `ASDF_PYTHON` or `python3` is tried.
    pub python: Option<PathBuf>,
    /// Look for a Python interpreter when `python` is `None`.
    pub find_python: bool,
}

impl Default for ValidateOptions {
    /// Everything available: built-in checks, tag schemas from the user's directories,
    /// `ASDF_SCHEMA_PATH` and a Python environment if one is found.
    fn default() -> Self {
        ValidateOptions {
            builtin: true,
            tag_schemas: cfg!(feature = "full"),
            custom_schema: None,
            schema_dirs: Vec::new(),
            use_env_path: true,
            python: None,
            find_python: true,
        }
    }
}

impl ValidateOptions {
    /// Only the built-in checks (no schema files, no Python).
    pub fn builtin_only() -> Self {
        ValidateOptions {
            builtin: true,
            tag_schemas: false,
            custom_schema: None,
            schema_dirs: Vec::new(),
            use_env_path: false,
            python: None,
            find_python: false,
        }
    }
}

/// What [`validate_tree_detailed`] ran, and what it found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validation {
    /// Every violation found.
    pub report: Report,
    /// How many schemas tagged nodes could be checked against (0: none were found, so only
    /// the built-in checks — and a custom schema, if given — ran).
    pub schemas: usize,
}

impl Validation {
    /// Whether only the built-in checks of the core tags ran (no tag schema was found and no
    /// custom schema was given).
    pub fn builtin_only(&self, opts: &ValidateOptions) -> bool {
        self.schemas == 0 && opts.custom_schema.is_none()
    }
}

/// Validates a tree as `asdftool validate` does: built-in checks, then every tagged node against
/// its tag's schema, then the custom schema; returns every violation (duplicates removed).
///
/// Errors only when validation cannot run (unreadable schema directory or custom schema, a
/// schema that does not compile). Without the `full` feature, schema options are ignored.
/// To validate many trees, build one [`Validator`]: this loads the schemas on every call.
pub fn validate_file_tree(tree: &Node, opts: &ValidateOptions) -> Result<Report> {
    validate_tree_detailed(tree, opts).map(|v| v.report)
}

/// [`validate_file_tree`], also saying how many schemas were available, so a caller can tell
/// "valid" from "valid as far as the built-in checks go".
///
/// ```
/// let tree = asdf_yaml::parse_str("{a: 1}").unwrap();
/// let opts = asdf_schema::ValidateOptions::builtin_only();
/// let v = asdf_schema::validate_tree_detailed(&tree, &opts).unwrap();
/// assert!(v.report.is_valid() && v.builtin_only(&opts));
/// ```
pub fn validate_tree_detailed(tree: &Node, opts: &ValidateOptions) -> Result<Validation> {
    Validator::new(opts)?.validate(tree)
}

/// What [`ValidateOptions`] ask for, set up once and run over any number of trees: the schema
/// sources are read (and a Python environment asked for its resources) once, the custom schema
/// loaded once, and each schema compiled on first use and kept for the next tree.
///
/// ```
/// use asdf_schema::{ValidateOptions, Validator};
/// let v = Validator::new(&ValidateOptions::builtin_only()).unwrap();
/// for text in ["{a: 1}", "a: !core/ndarray-1.1.0 {data: [1], datatype: int8, shape: [2]}"] {
///     let tree = asdf_yaml::parse_str(&format!("%TAG ! tag:stsci.edu:asdf/\n---\n{text}\n"))
///         .unwrap();
///     let found = v.validate(&tree).unwrap();
///     assert_eq!(found.report.is_valid(), text == "{a: 1}");
/// }
/// ```
pub struct Validator {
    builtin: bool,
    #[cfg(feature = "full")]
    schemas: Option<SchemaValidator>,
    #[cfg(feature = "full")]
    tag_schemas: bool,
    /// The custom schema, compiled once.
    #[cfg(feature = "full")]
    custom: Option<CompiledSchema>,
}

impl Validator {
    /// Loads what `opts` name. Errors when a schema directory or the custom schema cannot be
    /// read; without the `full` feature, schema options are ignored.
    pub fn new(opts: &ValidateOptions) -> Result<Self> {
        #[cfg(feature = "full")]
        {
            let wants_schemas = opts.tag_schemas || opts.custom_schema.is_some();
            let schemas = if wants_schemas {
                let sources = SchemaSources {
                    dirs: opts.schema_dirs.clone(),
                    env: opts.use_env_path,
                    python: opts.python.clone(),
                    find_python: opts.find_python,
                };
                Some(SchemaValidator::new(sources.load()?))
            } else {
                None
            };
            let custom = match (&opts.custom_schema, &schemas) {
                (Some(path), Some(v)) => {
                    let schema = load_schema_file(path)?;
                    Some(v.compile_schema(&schema, &path.display().to_string())?)
                }
                _ => None,
            };
            Ok(Validator {
                builtin: opts.builtin,
                schemas,
                tag_schemas: opts.tag_schemas,
                custom,
            })
        }
        #[cfg(not(feature = "full"))]
        Ok(Validator {
            builtin: opts.builtin,
        })
    }

    /// Every violation in `tree` (duplicates removed). Errors only when a schema the tree
    /// needs does not compile.
    pub fn validate(&self, tree: &Node) -> Result<Validation> {
        let mut violations = Vec::new();
        #[allow(unused_mut)]
        let mut schemas = 0;
        if self.builtin {
            violations.extend(check_builtin(tree));
        }
        #[cfg(feature = "full")]
        if let Some(validator) = &self.schemas {
            if self.tag_schemas {
                schemas = validator.store().len();
                violations.extend(validator.validate_tags(tree)?);
            }
            if let Some(schema) = &self.custom {
                violations.extend(validator.validate_compiled(tree, schema));
            }
        }
        let mut seen = std::collections::HashSet::new();
        violations.retain(|v| seen.insert((v.pointer.clone(), v.rule.clone(), v.message.clone())));
        Ok(Validation {
            report: Report::new(violations),
            schemas,
        })
    }
}
