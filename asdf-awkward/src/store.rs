//! Blob stores: the named-binary-blob containers the protocol is layered on.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use array_core::Durability;

use crate::error::{Error, Result};

/// Read access to named blobs (a ZIP archive, a directory, memory, or ASDF blocks).
///
/// Implementations must check a blob's size against `max_bytes` *before* reading or
/// allocating it, and report an oversized blob as [`Error::Limit`].
pub trait BlobStore {
    /// The bytes of blob `name`, or `None` if there is no such blob.
    fn get(&self, name: &str, max_bytes: u64) -> Result<Option<Cow<'_, [u8]>>>;

    /// Every blob name in the store.
    fn names(&self) -> Result<Vec<String>>;

    /// The size in bytes of blob `name`, or `None` if there is no such blob. Must not read the
    /// blob's data.
    fn size(&self, name: &str) -> Result<Option<u64>>;

    /// Fills `out` with the first `out.len()` bytes of blob `name` (the caller has checked the
    /// size with [`size`](Self::size)). This lets the reader fill typed arrays in place, without
    /// an intermediate copy; the default goes through [`get`](Self::get).
    fn read_into(&self, name: &str, out: &mut [u8]) -> Result<()> {
        let bytes = self
            .get(name, u64::MAX)?
            .ok_or_else(|| Error::MissingBlob { name: name.into() })?;
        let src = bytes.get(..out.len()).ok_or_else(|| Error::Blob {
            name: name.into(),
            message: format!(
                "{} bytes requested, the blob has {}",
                out.len(),
                bytes.len()
            ),
        })?;
        out.copy_from_slice(src);
        Ok(())
    }
}

/// Write access to named blobs. The writer calls [`put`](Self::put) once per blob, schema last.
pub trait BlobSink {
    /// Stores `bytes` under `name`.
    fn put(&mut self, name: &str, bytes: &[u8]) -> Result<()>;
}

/// Blobs in memory (a `BTreeMap`); also what tests and the ASDF bridge can use.
///
/// ```
/// use asdf_awkward::{MemoryStore, BlobStore, BlobSink};
/// let mut m = MemoryStore::default();
/// m.put("x.raw", &[1, 2, 3]).unwrap();
/// assert_eq!(m.get("x.raw", 10).unwrap().unwrap().as_ref(), &[1, 2, 3]);
/// assert!(m.get("x.raw", 2).is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryStore {
    /// The blobs by name.
    pub blobs: BTreeMap<String, Vec<u8>>,
}

impl BlobStore for MemoryStore {
    fn get(&self, name: &str, max_bytes: u64) -> Result<Option<Cow<'_, [u8]>>> {
        match self.blobs.get(name) {
            None => Ok(None),
            Some(b) => {
                check_size(name, b.len() as u64, max_bytes)?;
                Ok(Some(Cow::Borrowed(b)))
            }
        }
    }

    fn names(&self) -> Result<Vec<String>> {
        Ok(self.blobs.keys().cloned().collect())
    }

    fn size(&self, name: &str) -> Result<Option<u64>> {
        Ok(self.blobs.get(name).map(|b| b.len() as u64))
    }
}

impl BlobSink for MemoryStore {
    fn put(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        self.blobs.insert(name.to_string(), bytes.to_vec());
        Ok(())
    }
}

pub(crate) fn check_size(name: &str, size: u64, max: u64) -> Result<()> {
    if size > max {
        return Err(Error::Limit {
            location: format!("blob {name:?}"),
            what: "blob size in bytes",
            value: size,
            limit: max,
        });
    }
    Ok(())
}

/// Checks a blob name for use as a relative path: no absolute paths, no `..` or `.` components,
/// no empty components, no backslashes, NULs or control characters.
pub fn check_blob_name(name: &str) -> Result<()> {
    let bad = |reason: &str| {
        Err(Error::BadName {
            name: name.to_string(),
            reason: reason.to_string(),
        })
    };
    if name.is_empty() {
        return bad("empty name");
    }
    if name.starts_with('/') {
        return bad("absolute path");
    }
    if name.bytes().any(|b| b == b'\\' || b == 0 || b < 0x20) {
        return bad("backslash, NUL or control character");
    }
    for comp in name.split('/') {
        if comp.is_empty() || comp == "." || comp == ".." {
            return bad("empty, '.' or '..' path component");
        }
    }
    if name.len() > 4096 {
        return bad("longer than 4096 bytes");
    }
    Ok(())
}

/// Blobs as files in a directory: blob `evt-1.raw` is the file `<dir>/evt-1.raw`. Names are
/// sanitized (no traversal outside the directory); writes go to a temporary file in the same
/// folder, are synced, then renamed over the target.
///
/// ```
/// use asdf_awkward::{DirStore, BlobStore, BlobSink};
/// let dir = std::env::temp_dir().join(format!("awk-doc-{}", std::process::id()));
/// let mut d = DirStore::create(&dir).unwrap();
/// d.put("a.raw", &[7]).unwrap();
/// assert_eq!(d.get("a.raw", 1).unwrap().unwrap().as_ref(), &[7]);
/// assert!(d.get("../etc/passwd", 100).is_err());
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct DirStore {
    root: PathBuf,
}

impl DirStore {
    /// Opens an existing directory.
    pub fn open(root: impl AsRef<Path>) -> Result<DirStore> {
        let root = root.as_ref().to_path_buf();
        if !root.is_dir() {
            return Err(Error::io(
                root.display(),
                std::io::Error::new(std::io::ErrorKind::NotFound, "not a directory"),
            ));
        }
        Ok(DirStore { root })
    }

    /// Opens a directory, creating it (and parents) if needed.
    pub fn create(root: impl AsRef<Path>) -> Result<DirStore> {
        let root = root.as_ref().to_path_buf();
        fs::create_dir_all(&root).map_err(|e| Error::io(root.display(), e))?;
        Ok(DirStore { root })
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path_of(&self, name: &str) -> Result<PathBuf> {
        check_blob_name(name)?;
        Ok(self.root.join(name))
    }

    /// The path blob `name` is written to, its folder created.
    fn target(&self, name: &str) -> Result<PathBuf> {
        let path = self.path_of(name)?;
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::io(parent.display(), e))?;
        }
        Ok(path)
    }

    /// Writes blob `name` into a temporary file of `batch`: nothing is replaced until the batch
    /// commits (one filesystem sync for all its files), and nothing is left if it is dropped.
    pub(crate) fn stage(
        &self,
        batch: &mut array_core::AtomicBatch,
        name: &str,
        bytes: &[u8],
    ) -> Result<()> {
        let path = self.target(name)?;
        let io_err = |e: std::io::Error| Error::io(path.display(), e);
        let mut f = array_core::AtomicFile::create_replacing(&path)
            .map_err(|e| io_err(e.into()))?
            .with_durability(batch.durability());
        f.write_all(bytes).map_err(io_err)?;
        batch.add(f).map_err(|e| io_err(e.into()))
    }
}

impl BlobStore for DirStore {
    fn get(&self, name: &str, max_bytes: u64) -> Result<Option<Cow<'_, [u8]>>> {
        let path = self.path_of(name)?;
        let meta = match fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path.display(), e)),
        };
        if !meta.is_file() {
            return Err(Error::BadName {
                name: name.into(),
                reason: "not a regular file (symlinks are not followed)".into(),
            });
        }
        check_size(name, meta.len(), max_bytes)?;
        // The file's own size (within the limit) sizes the buffer; a file that shrinks meanwhile
        // is an error, one that grows is read up to the size seen.
        let too_big = |e: String| Error::io(path.display(), std::io::Error::other(e));
        let len = usize::try_from(meta.len()).map_err(|e| too_big(e.to_string()))?;
        let mut bytes = array_core::zeroed_vec::<u8>(len).map_err(|e| too_big(e.to_string()))?;
        self.read_into(name, &mut bytes)?;
        Ok(Some(Cow::Owned(bytes)))
    }

    fn names(&self) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let mut stack = vec![(self.root.clone(), String::new())];
        while let Some((dir, prefix)) = stack.pop() {
            let rd = fs::read_dir(&dir).map_err(|e| Error::io(dir.display(), e))?;
            for entry in rd {
                let entry = entry.map_err(|e| Error::io(dir.display(), e))?;
                let Ok(fname) = entry.file_name().into_string() else {
                    continue;
                };
                // Temporary files of an unfinished atomic write (`.<name>.<pid>.<hex>.tmp`).
                if fname.starts_with('.') && fname.ends_with(".tmp") {
                    continue;
                }
                let ft = entry.file_type().map_err(|e| Error::io(dir.display(), e))?;
                let full = format!("{prefix}{fname}");
                if ft.is_dir() && out.len() < 10_000_000 {
                    stack.push((entry.path(), format!("{full}/")));
                } else if ft.is_file() {
                    out.push(full);
                }
            }
        }
        out.sort();
        Ok(out)
    }

    fn size(&self, name: &str) -> Result<Option<u64>> {
        let path = self.path_of(name)?;
        match fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() => Ok(Some(m.len())),
            Ok(_) => Err(Error::BadName {
                name: name.into(),
                reason: "not a regular file (symlinks are not followed)".into(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(path.display(), e)),
        }
    }

    /// Large buffers are read by every core (copying out of the page cache and first touching
    /// fresh pages is most of a load).
    fn read_into(&self, name: &str, out: &mut [u8]) -> Result<()> {
        let path = self.path_of(name)?;
        let f = fs::File::open(&path).map_err(|e| Error::io(path.display(), e))?;
        array_core::read_exact_at_parallel(&f, 0, out).map_err(|e| Error::io(path.display(), e))
    }
}

impl BlobSink for DirStore {
    fn put(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        write_atomic(&self.target(name)?, false, Durability::Synced, |f| {
            f.write_all(bytes)
        })
    }
}

/// Writes `path` through the workspace's crash-safe writer ([`array_core::AtomicFile`]): a
/// temporary file in the same directory, written, synced, then renamed over `path`. With
/// `follow_link`, a symlink at `path` keeps pointing at the file it names (which is replaced);
/// without it, the link itself is replaced (for paths built from untrusted blob names).
/// `durability` says whether a new file waits for the disk.
pub(crate) fn write_atomic(
    path: &Path,
    follow_link: bool,
    durability: Durability,
    body: impl FnOnce(&mut array_core::WritebackFile) -> std::io::Result<()>,
) -> Result<()> {
    let io_err = |e: std::io::Error| Error::io(path.display(), e);
    let mut file = if follow_link {
        array_core::AtomicFile::create(path)
    } else {
        array_core::AtomicFile::create_replacing(path)
    }
    .map_err(|e| io_err(e.into()))?
    .with_durability(durability);
    // The body writes past the atomic file's buffer, straight to the file (ZIP writers need
    // `Seek`); the buffer stays empty, so committing flushes nothing stale.
    body(file.writer_mut().get_mut()).map_err(io_err)?;
    file.commit().map(drop).map_err(|e| io_err(e.into()))
}
