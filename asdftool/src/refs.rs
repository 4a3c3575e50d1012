//! Resolving `$ref` references against local files.

use std::path::{Path, PathBuf};

use asdf::yaml::{resolve_references, Limits, Node, RefResolver};

use crate::error::{CliError, Result};

/// Loads the trees of local ASDF/YAML files named by `$ref` URIs, relative to the referring file.
pub struct LocalFiles {
    base: Option<PathBuf>,
}

impl LocalFiles {
    /// A resolver for references found in the file at `path`.
    pub fn new(path: Option<&Path>) -> LocalFiles {
        LocalFiles {
            base: path.map(Path::to_path_buf),
        }
    }

    fn locate(&self, uri: &str, base: Option<&str>) -> std::result::Result<PathBuf, String> {
        let part = uri
            .strip_prefix("file://")
            .or_else(|| uri.strip_prefix("file:"))
            .unwrap_or(uri);
        if part.contains("://") {
            return Err(format!("{uri:?}: only local files can be referenced"));
        }
        let p = PathBuf::from(part);
        if p.is_absolute() {
            return Ok(p);
        }
        let base = match base {
            Some(b) => Some(PathBuf::from(b)),
            None => self.base.clone(),
        };
        let dir = base
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        Ok(dir.join(p))
    }
}

impl RefResolver for LocalFiles {
    fn load(
        &mut self,
        uri: &str,
        base: Option<&str>,
    ) -> std::result::Result<Node, Box<dyn std::error::Error + Send + Sync>> {
        let path = self.locate(uri, base)?;
        let f = asdf::AsdfFile::open(&path).map_err(|e| e.to_string())?;
        Ok(f.tree().clone())
    }
}

/// `root` with every `$ref` replaced by its target (internal or in a local file).
pub fn resolve(root: &Node, path: Option<&Path>) -> Result<Node> {
    resolve_references(root, &mut LocalFiles::new(path), &Limits::default())
        .map_err(|e| CliError::Invalid(format!("resolving references: {e}")))
}

/// Whether the tree contains any `$ref`.
pub fn has_refs(root: &Node) -> bool {
    let mut found = false;
    crate::tree::visit(root, &mut |_, key, _| {
        if key == Some("$ref") {
            found = true;
        }
        !found
    });
    found
}
