//! External files: which ones a file may make the reader open, where they are, and how their
//! errors are reported.
//!
//! An ASDF file can name other local files: exploded arrays (`source: data0000.asdf`) and
//! `$ref` targets. A file from an untrusted source must not be able to make the reader open
//! `/etc/passwd`, a FIFO that blocks forever, or a sibling directory's data, and an error about
//! such a file must not show its bytes to whoever reads the message. This module is the one
//! place that decides: [`ExternalFiles`] is the policy (in
//! [`OpenOptions::external_files`](crate::OpenOptions::external_files)), [`locate`] resolves a
//! URI against the file that contains it (never the working directory) and applies the policy,
//! and [`open_external`](crate::open_external) opens the result as an ASDF file.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{AsdfError, Result};

/// Which external files (exploded array files, `$ref` targets) an open file may make the
/// reader open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExternalFiles {
    /// None: every external array or reference is an error.
    None,
    /// Only files in the directory of the file that was opened, or below it, after symbolic
    /// links and `..` are resolved (a link inside the directory that points outside is
    /// refused). What [`OpenOptions::untrusted`](crate::OpenOptions::untrusted) uses.
    SameDirAndBelow,
    /// Any local file (the default, as Python asdf): relative, absolute and `file:` URIs.
    #[default]
    Any,
}

/// Called with the path of each external file just before it is opened (after the policy
/// allowed it), for example to tell the user which files a command read.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = seen.clone();
/// let mut options = asdf::OpenOptions::default();
/// options.external_observer = Some(asdf::ExternalObserver::new(move |p| {
///     log.lock().unwrap().push(p.to_path_buf())
/// }));
/// ```
#[derive(Clone)]
pub struct ExternalObserver(Arc<dyn Fn(&Path) + Send + Sync>);

impl ExternalObserver {
    /// Wraps `f`.
    pub fn new(f: impl Fn(&Path) + Send + Sync + 'static) -> Self {
        ExternalObserver(Arc::new(f))
    }

    pub(crate) fn notify(&self, path: &Path) {
        (self.0)(path)
    }
}

impl fmt::Debug for ExternalObserver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ExternalObserver(..)")
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The local path part of `uri` (its fragment dropped): a plain path, or a `file:` URI
/// (`file:///abs`, `file://localhost/abs`, `file:rel`, percent-decoded).
fn path_part(uri: &str) -> std::result::Result<PathBuf, String> {
    let no_fragment = uri.split('#').next().unwrap_or("");
    let text = if let Some(rest) = no_fragment.strip_prefix("file://") {
        let abs = rest.strip_prefix("localhost").unwrap_or(rest);
        if !abs.starts_with('/') {
            return Err("a file: URI naming another host cannot be read".into());
        }
        percent_decode(abs).ok_or("invalid percent-encoding")?
    } else if let Some(rest) = no_fragment.strip_prefix("file:") {
        percent_decode(rest).ok_or("invalid percent-encoding")?
    } else {
        let scheme = no_fragment
            .split_once(':')
            .is_some_and(|(s, _)| s.len() > 1 && !s.contains('/'));
        if scheme {
            return Err("only local files can be read".into());
        }
        no_fragment.to_string()
    };
    if text.is_empty() {
        return Err("the URI names no file".into());
    }
    if text.contains('\0') {
        return Err("the path contains a NUL byte".into());
    }
    Ok(PathBuf::from(text))
}

/// `path` made absolute against the working directory at the time of the call (a later change
/// of directory does not change what it names). `..` is kept: after a symbolic link it does not
/// mean what removing a path component would.
pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Where the external file `uri` is, when found in the file at `referrer`, if `policy` lets a
/// tree opened from the file at `root` read it.
///
/// A relative URI is relative to the directory of `referrer` (the file that contains it), never
/// to the working directory; absolute paths and `file:` URIs are taken as they are; other
/// schemes are refused. With [`ExternalFiles::SameDirAndBelow`] the result, with every symbolic
/// link and `..` resolved, must lie in the directory of `root` (also resolved) or below it, and
/// is returned in that resolved form (so it is the file that was checked that gets opened).
/// Errors quote only the URI (text of the referring file), never the target's bytes.
///
/// ```
/// use asdf::{locate, ExternalFiles};
/// use std::path::Path;
/// let dir = std::env::temp_dir().join(format!("asdf-locate-doc-{}", std::process::id()));
/// std::fs::create_dir_all(dir.join("sub")).unwrap();
/// std::fs::write(dir.join("sub/b.asdf"), b"").unwrap();
/// let main = dir.join("main.asdf");
/// let referrer = dir.join("sub/a.asdf");
/// let found = locate("b.asdf", &referrer, &main, ExternalFiles::SameDirAndBelow).unwrap();
/// assert!(found.ends_with("sub/b.asdf"));
/// assert!(locate("../../etc/passwd", &referrer, &main, ExternalFiles::SameDirAndBelow).is_err());
/// assert!(locate("b.asdf", &referrer, &main, ExternalFiles::None).is_err());
/// assert!(locate("http://example.com/x.asdf", &referrer, &main, ExternalFiles::Any).is_err());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn locate(uri: &str, referrer: &Path, root: &Path, policy: ExternalFiles) -> Result<PathBuf> {
    let refused = |reason: String| AsdfError::External {
        uri: uri.to_string(),
        reason,
    };
    if policy == ExternalFiles::None {
        return Err(refused(
            "external files are not allowed (OpenOptions::external_files is None)".into(),
        ));
    }
    let part = path_part(uri).map_err(refused)?;
    let path = if part.is_absolute() {
        part
    } else {
        match absolute(referrer).parent() {
            Some(dir) => dir.join(part),
            None => return Err(refused("the referring file has no directory".into())),
        }
    };
    if policy == ExternalFiles::Any {
        return Ok(path);
    }
    confine(&path, root, &refused)
}

/// `path` with every link and `..` resolved, when it lies in the directory of `root` (also
/// resolved) or below: what [`ExternalFiles::SameDirAndBelow`] allows. `refused` makes the
/// error.
pub(crate) fn confine(
    path: &Path,
    root: &Path,
    refused: &dyn Fn(String) -> AsdfError,
) -> Result<PathBuf> {
    let root_dir = absolute(root)
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| refused("the opened file has no directory".into()))?;
    let allowed = std::fs::canonicalize(&root_dir).map_err(|e| {
        refused(format!(
            "cannot resolve the directory {}: {e}",
            root_dir.display()
        ))
    })?;
    let target = std::fs::canonicalize(path)
        .map_err(|e| refused(format!("cannot open {}: {e}", path.display())))?;
    if !target.starts_with(&allowed) {
        return Err(refused(format!(
            "{} is outside {}: only files in that directory or below may be read \
             (OpenOptions::external_files)",
            target.display(),
            allowed.display()
        )));
    }
    Ok(target)
}

/// What went wrong with a file, said without quoting any byte of it (for files the user did
/// not name: an external file's first line may be the first line of a password file).
pub fn content_free(e: &AsdfError) -> String {
    match e {
        AsdfError::File { source, .. } => content_free(source),
        AsdfError::Io { .. }
        | AsdfError::MissingEndMarker { .. }
        | AsdfError::DecodedTotalTooLarge { .. } => e.to_string(),
        AsdfError::NotAsdf { .. } => "not an ASDF file (no `#ASDF 1.0.0` first line)".into(),
        AsdfError::UnsupportedFormatVersion(_) => {
            "unsupported ASDF file format version on the `#ASDF` line".into()
        }
        AsdfError::InvalidContent { offset, .. } => format!("invalid content at byte {offset}"),
        AsdfError::Yaml { tree_start, .. } => {
            format!("its YAML tree (at byte {tree_start}) cannot be parsed")
        }
        AsdfError::Block(b) => block_content_free(b),
        AsdfError::External { uri, .. } => format!("external file {uri:?} cannot be used"),
        _ => "the file cannot be used as ASDF".into(),
    }
}

fn block_content_free(e: &asdf_block::BlockError) -> String {
    use asdf_block::BlockError;
    match e {
        BlockError::File { source, .. } => block_content_free(source),
        BlockError::Io { .. } => e.to_string(),
        _ => "a block is invalid or cannot be decoded".into(),
    }
}
