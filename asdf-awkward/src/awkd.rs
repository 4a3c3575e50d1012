//! `.awkd` files: ZIP archives of blobs, as `awkward0.save` / `awkward0.load` use them.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufReader, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::read::{read_array, ReadOptions};
use crate::store::{check_size, write_atomic, BlobSink, BlobStore};
use crate::write::{write_array, WriteOptions};

/// The archive of an [`AwkdFile`], locked for one entry's read.
type ArchiveGuard<'a> = std::sync::MutexGuard<'a, ZipArchive<Box<dyn ReadSeek>>>;

/// An `.awkd` file opened for reading. Several arrays can live in one file; each is a schema
/// entry `<name>.json` plus blob entries `<name>-<id>.raw` (the anonymous array `""` uses
/// `.json` and `<id>.raw`). Stored and deflated entries are read; sizes are checked against the
/// limits before anything is read.
///
/// ```no_run
/// use asdf_awkward::AwkdFile;
/// let f = AwkdFile::open("events.awkd").unwrap();
/// for name in f.array_names() {
///     let array = f.read(&name).unwrap();
///     println!("{name:?}: {} entries", array.len());
/// }
/// ```
pub struct AwkdFile {
    path: PathBuf,
    archive: Mutex<ZipArchive<Box<dyn ReadSeek>>>,
    entries: Vec<String>,
    options: ReadOptions,
}

/// What an archive is read from: a file, or any `Read + Seek` source (a ranged remote reader).
trait ReadSeek: Read + Seek + Send {}
impl<R: Read + Seek + Send> ReadSeek for R {}

fn zip_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Zip {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The sizes a ZIP entry's header declares (untrusted until the entry is read).
#[derive(Clone, Copy, Debug)]
pub(crate) struct EntrySize {
    /// Decompressed bytes.
    pub(crate) declared: u64,
    /// Bytes stored in the archive.
    pub(crate) stored: u64,
}

impl AwkdFile {
    /// The locked archive and the index of entry `name` in it (`None` when there is no such
    /// entry).
    fn locate(&self, name: &str) -> Result<Option<(ArchiveGuard<'_>, usize)>> {
        let ar = self
            .archive
            .lock()
            .map_err(|_| zip_err(&self.path, "archive lock poisoned"))?;
        Ok(ar.index_for_name(name).map(|ix| (ar, ix)))
    }

    /// Runs `f` on entry `name`'s decompressed bytes and its declared (decompressed, stored)
    /// sizes (`None` when there is no such entry); stored and deflated entries only.
    pub(crate) fn with_entry<T>(
        &self,
        name: &str,
        f: impl FnOnce(&mut dyn Read, EntrySize) -> Result<T>,
    ) -> Result<Option<T>> {
        let Some((mut ar, ix)) = self.locate(name)? else {
            return Ok(None);
        };
        let mut entry = ar.by_index(ix).map_err(|e| zip_err(&self.path, e))?;
        if !matches!(
            entry.compression(),
            CompressionMethod::Stored | CompressionMethod::Deflated
        ) {
            return Err(Error::Unsupported {
                location: format!("{} entry {name:?}", self.path.display()),
                what: format!(
                    "ZIP compression method {:?} (only stored and deflated)",
                    entry.compression()
                ),
            });
        }
        let size = EntrySize {
            declared: entry.size(),
            stored: entry.compressed_size(),
        };
        f(&mut entry, size).map(Some)
    }

    /// Fills `out` from the rest of an entry of `declared` bytes (`left` of them unread); when
    /// `out` takes all of them, reads to the end so that the ZIP layer verifies the CRC-32.
    pub(crate) fn fill(
        &self,
        f: &mut dyn Read,
        name: &str,
        left: u64,
        out: &mut [u8],
    ) -> Result<()> {
        f.read_exact(out)
            .map_err(|e| zip_err(&self.path, format!("entry {name:?}: {e}")))?;
        if out.len() as u64 == left {
            let mut probe = [0u8; 1];
            let extra = f
                .read(&mut probe)
                .map_err(|e| zip_err(&self.path, format!("entry {name:?}: {e}")))?;
            if extra != 0 {
                return Err(Error::Blob {
                    name: name.into(),
                    message: "ZIP entry holds more bytes than its header declares".into(),
                });
            }
        }
        Ok(())
    }

    /// Opens `path` with default [`ReadOptions`].
    pub fn open(path: impl AsRef<Path>) -> Result<AwkdFile> {
        Self::open_with(path, ReadOptions::default())
    }

    /// Opens `path` with explicit options (limits, whitelist, schema suffix).
    pub fn open_with(path: impl AsRef<Path>, options: ReadOptions) -> Result<AwkdFile> {
        let path = path.as_ref().to_path_buf();
        let f = File::open(&path).map_err(|e| Error::io(path.display(), e))?;
        Self::from_reader(BufReader::new(f), path, options)
    }

    /// Reads an archive from any `Read + Seek` source (a ranged remote reader, a buffer...);
    /// `name` stands for its path in errors. Only the central directory and the entries read
    /// are asked of `reader`.
    pub fn from_reader(
        reader: impl Read + Seek + Send + 'static,
        name: impl Into<PathBuf>,
        options: ReadOptions,
    ) -> Result<AwkdFile> {
        let path = name.into();
        let reader: Box<dyn ReadSeek> = Box::new(reader);
        let mut archive = ZipArchive::new(reader).map_err(|e| zip_err(&path, e))?;
        check_members(&mut archive, &path)?;
        let entries = archive.file_names().map(|s| s.to_string()).collect();
        Ok(AwkdFile {
            path,
            archive: Mutex::new(archive),
            entries,
            options,
        })
    }

    /// Every entry name, in archive order.
    pub fn entry_names(&self) -> &[String] {
        &self.entries
    }

    /// Names of the arrays: entries ending in the schema suffix, minus it (sorted).
    pub fn array_names(&self) -> Vec<String> {
        let sfx = &self.options.schema_suffix;
        let set: BTreeSet<String> = self
            .entries
            .iter()
            .filter_map(|e| e.strip_suffix(sfx.as_str()).map(|s| s.to_string()))
            .collect();
        set.into_iter().collect()
    }

    /// Reads array `name`.
    pub fn read(&self, name: &str) -> Result<Layout> {
        read_array(self, name, &self.options)
    }

    /// The options in use.
    pub fn options(&self) -> &ReadOptions {
        &self.options
    }
}

impl BlobStore for AwkdFile {
    fn get(&self, name: &str, max_bytes: u64) -> Result<Option<Cow<'_, [u8]>>> {
        self.with_entry(name, |f, size| {
            let declared = size.declared;
            check_size(name, declared, max_bytes)?;
            let first = declared
                .min(array_core::bounds::deflate_max_decoded(size.stored))
                .min(max_bytes) as usize;
            let mut out = Vec::new();
            // Fallible (as `read_to_end`'s growth): a failed allocation is an error, not an abort.
            out.try_reserve_exact(first).map_err(|_| {
                zip_err(
                    &self.path,
                    format!("entry {name:?}: cannot allocate {first} bytes"),
                )
            })?;
            f.take(declared.saturating_add(1))
                .read_to_end(&mut out)
                .map_err(|e| zip_err(&self.path, format!("entry {name:?}: {e}")))?;
            if out.len() as u64 != declared {
                return Err(Error::Blob {
                    name: name.into(),
                    message: format!(
                        "ZIP entry holds {} bytes, its header declares {declared}",
                        out.len()
                    ),
                });
            }
            Ok(Cow::Owned(out))
        })
    }

    fn names(&self) -> Result<Vec<String>> {
        Ok(self.entries.clone())
    }

    fn size(&self, name: &str) -> Result<Option<u64>> {
        let Some((mut ar, ix)) = self.locate(name)? else {
            return Ok(None);
        };
        let f = ar.by_index_raw(ix).map_err(|e| zip_err(&self.path, e))?;
        Ok(Some(f.size()))
    }

    fn read_into(&self, name: &str, out: &mut [u8]) -> Result<()> {
        self.with_entry(name, |f, size| self.fill(f, name, size.declared, out))?
            .ok_or_else(|| Error::MissingBlob { name: name.into() })
    }
}

/// Checks every member of an archive before any is read: its declared size is one its stored
/// bytes can produce (equal for stored members, at most deflate's 1032:1 for deflated ones), so
/// no buffer is sized by a lying header; and no two members' stored bytes overlap (the
/// "overlapping files" ZIP bomb: thousands of entries sharing one compressed stream, each
/// decoded on its own).
fn check_members<R: std::io::Read + std::io::Seek>(
    ar: &mut ZipArchive<R>,
    path: &Path,
) -> Result<()> {
    let mut spans: Vec<(u64, u64, usize)> = Vec::new();
    spans
        .try_reserve_exact(ar.len())
        .map_err(|_| zip_err(path, "too many entries"))?;
    for i in 0..ar.len() {
        let f = ar.by_index_raw(i).map_err(|e| zip_err(path, e))?;
        let (size, stored) = (f.size(), f.compressed_size());
        let plausible = match f.compression() {
            CompressionMethod::Stored => size == stored,
            CompressionMethod::Deflated => size <= array_core::bounds::deflate_max_decoded(stored),
            // Refused when read (only stored and deflated members are supported).
            _ => true,
        };
        if !plausible {
            return Err(zip_err(
                path,
                format!(
                    "entry {:?} declares {size} bytes, more than its {stored} stored bytes                      can hold ({:?})",
                    f.name(),
                    f.compression()
                ),
            ));
        }
        let start = f.header_start();
        let end = f.data_start().unwrap_or(start).saturating_add(stored);
        spans.push((start, end, i));
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            let name = |i: usize| ar.name_for_index(i).unwrap_or("?").to_string();
            return Err(zip_err(
                path,
                format!(
                    "entries {:?} and {:?} overlap (bytes {}..{} and {}..): an archive whose \
                     entries share data is refused",
                    name(w[0].2),
                    name(w[1].2),
                    w[0].0,
                    w[0].1,
                    w[1].0
                ),
            ));
        }
    }
    Ok(())
}

/// How [`save_awkd`] treats an existing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveMode {
    /// Replace any existing file (awkward0 `mode="w"`).
    Create,
    /// Keep the existing arrays and add new ones (awkward0 `mode="a"`, its default); fails if a
    /// new name conflicts with what is stored.
    Append,
}

/// ZIP entries being written (stored, zip64 when large).
pub(crate) struct ZipSink<'w> {
    zip: &'w mut ZipWriter<array_core::WritebackFile>,
    path: &'w Path,
}

impl ZipSink<'_> {
    /// Stores one entry made of `parts` written one after another (no concatenated copy).
    pub(crate) fn put_parts(&mut self, name: &str, parts: &[&[u8]]) -> Result<()> {
        let len: u64 = parts.iter().map(|p| p.len() as u64).sum();
        let opts = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .large_file(len >= u32::MAX as u64);
        self.zip
            .start_file(name, opts)
            .map_err(|e| zip_err(self.path, e))?;
        for p in parts {
            self.zip
                .write_all(p)
                .map_err(|e| Error::io(self.path.display(), e))?;
        }
        Ok(())
    }
}

impl BlobSink for ZipSink<'_> {
    fn put(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        self.put_parts(name, &[bytes])
    }
}

/// Writes a new ZIP archive at `path` (atomically: temporary file, fsync unless `durability`
/// is relaxed, rename) whose entries, all stored, are what `entries` puts into the sink.
pub(crate) fn write_zip(
    path: &Path,
    durability: array_core::Durability,
    entries: impl FnOnce(&mut ZipSink<'_>) -> Result<()>,
) -> Result<()> {
    let mut failure: Option<Error> = None;
    write_atomic(path, true, durability, |file| {
        let mut zip = ZipWriter::new(file.try_clone()?);
        let mut sink = ZipSink {
            zip: &mut zip,
            path,
        };
        if let Err(e) = entries(&mut sink) {
            failure = Some(e);
            return Err(std::io::Error::other("ZIP entries could not be written"));
        }
        zip.finish().map_err(std::io::Error::other)?;
        Ok(())
    })
    .map_err(|e| failure.take().unwrap_or(e))
}

/// Checks awkward0's name-conflict rules before anything is written: no new name may be a
/// prefix of another new name, and no existing entry may start with a new name.
pub fn check_names(new: &[&str], existing: &[String]) -> Result<()> {
    for (i, a) in new.iter().enumerate() {
        for (j, b) in new.iter().enumerate() {
            if i != j && b.starts_with(a) {
                return Err(Error::BadName {
                    name: a.to_string(),
                    reason: format!("it is a prefix of another new array name {b:?}, so their blobs would collide"),
                });
            }
        }
        let clash: Vec<&String> = existing
            .iter()
            .filter(|e| e.starts_with(a))
            .take(5)
            .collect();
        if !clash.is_empty() {
            return Err(Error::BadName {
                name: a.to_string(),
                reason: format!("the file already has entries starting with it: {clash:?}"),
            });
        }
    }
    Ok(())
}

/// Saves arrays into an `.awkd` file, each under its name, with entries stored (not deflated).
/// The file is written to a temporary file in the same directory, synced and renamed, so an
/// existing file is never left half-written; in [`SaveMode::Append`] its entries are copied
/// over unchanged.
///
/// ```
/// use asdf_awkward::{save_awkd, AwkdFile, Layout, SaveMode, WriteOptions};
/// let dir = std::env::temp_dir().join(format!("awkd-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("two.awkd");
/// let a = Layout::from_json(&serde_json::json!([1, 2, 3])).unwrap();
/// let b = Layout::from_json(&serde_json::json!([["x"], []])).unwrap();
/// save_awkd(&path, &[("a", &a)], SaveMode::Create, &WriteOptions::default()).unwrap();
/// save_awkd(&path, &[("b", &b)], SaveMode::Append, &WriteOptions::default()).unwrap();
/// let f = AwkdFile::open(&path).unwrap();
/// assert_eq!(f.array_names(), vec!["a", "b"]);
/// assert_eq!(f.read("b").unwrap().to_json().unwrap(), serde_json::json!([["x"], []]));
/// // "a" is a prefix of the stored "a-1.raw": refused before anything is written.
/// assert!(save_awkd(&path, &[("a", &a)], SaveMode::Append, &WriteOptions::default()).is_err());
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn save_awkd(
    path: impl AsRef<Path>,
    arrays: &[(&str, &Layout)],
    mode: SaveMode,
    opts: &WriteOptions,
) -> Result<()> {
    let path = path.as_ref();
    let existing: Option<ZipArchive<BufReader<File>>> = match mode {
        SaveMode::Append if path.exists() => {
            let f = File::open(path).map_err(|e| Error::io(path.display(), e))?;
            Some(ZipArchive::new(BufReader::new(f)).map_err(|e| zip_err(path, e))?)
        }
        _ => None,
    };
    let existing_names: Vec<String> = existing
        .as_ref()
        .map(|a| a.file_names().map(|s| s.to_string()).collect())
        .unwrap_or_default();
    let new: Vec<&str> = arrays.iter().map(|(n, _)| *n).collect();
    check_names(&new, &existing_names)?;
    for (_, a) in arrays {
        a.validate()?;
    }
    let mut existing = existing;
    let mut failure: Option<Error> = None;
    write_atomic(path, true, opts.durability, |file| {
        let handle = file.try_clone()?;
        let mut zip = ZipWriter::new(handle);
        let mut run = || -> Result<()> {
            if let Some(ar) = existing.as_mut() {
                for i in 0..ar.len() {
                    let entry = ar.by_index_raw(i).map_err(|e| zip_err(path, e))?;
                    zip.raw_copy_file(entry).map_err(|e| zip_err(path, e))?;
                }
            }
            let mut sink = ZipSink {
                zip: &mut zip,
                path,
            };
            for (name, layout) in arrays {
                write_array(layout, &mut sink, name, opts)?;
            }
            Ok(())
        };
        if let Err(e) = run() {
            failure = Some(e);
            return Err(std::io::Error::other("array write failed"));
        }
        zip.finish().map_err(std::io::Error::other)?;
        Ok(())
    })
    .map_err(|e| failure.take().unwrap_or(e))
}
