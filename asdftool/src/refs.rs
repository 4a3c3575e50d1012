//! Resolving `$ref` references against local files.

use std::path::{Path, PathBuf};

use asdf::yaml::{resolve_references, Limits, Node, RefResolver};
use asdf::OpenOptions;

use crate::error::{CliError, Result};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Loads the trees of local ASDF files named by `$ref` URIs. Each relative URI is resolved
/// against the file that contains it (never the working directory), and every file must be
/// allowed by the external-file policy of the options, with the directory of the file that was
/// opened as the allowed one ([`asdf::locate`]).
pub struct LocalFiles {
    /// The file whose tree is resolved, made absolute.
    root: Option<PathBuf>,
    options: OpenOptions,
    /// Files loaded so far (each once), against `OpenOptions::max_external_files`.
    loaded: usize,
}

impl LocalFiles {
    /// A resolver for references found in the file at `path`, opening files with `options`.
    pub fn new(path: Option<&Path>, options: &OpenOptions) -> LocalFiles {
        LocalFiles {
            root: path.map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())),
            options: options.clone(),
            loaded: 0,
        }
    }
}

impl RefResolver for LocalFiles {
    fn join(&mut self, uri: &str, base: Option<&str>) -> std::result::Result<String, BoxError> {
        let root = self
            .root
            .as_deref()
            .ok_or("the tree was not read from a file, so references have no base")?;
        // `base` is an identity this method returned: an absolute path.
        let referrer = base.map(Path::new).unwrap_or(root);
        let path = asdf::locate(uri, referrer, root, self.options.external_files)?;
        // One identity per file, however it is spelled (`./`, `..`, links): documents are
        // cached and cycles found by it.
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        path.to_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{}: the path is not UTF-8", path.display()).into())
    }

    fn load(&mut self, uri: &str, _base: Option<&str>) -> std::result::Result<Node, BoxError> {
        // The resolver loads each identity once.
        self.loaded += 1;
        if self.loaded > self.options.max_external_files {
            return Err(format!(
                "the references name more than {} files (OpenOptions::max_external_files)",
                self.options.max_external_files
            )
            .into());
        }
        let f = asdf::open_located(uri, Path::new(uri), &self.options)?;
        Ok(f.tree().clone())
    }
}

/// `root` (the tree of the file at `path`, opened with `options`) with every `$ref` replaced by
/// its target (internal or in a local file).
pub fn resolve(root: &Node, path: Option<&Path>, options: &OpenOptions) -> Result<Node> {
    let limits: Limits = options.yaml.limits;
    resolve_references(root, &mut LocalFiles::new(path, options), &limits)
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
