//! awkward 2 buffers in files: a directory of named buffers, or a NumPy `.npz`.
//!
//! awkward 2 defines `ak.to_buffers`/`ak.from_buffers` but no file format; these are this crate's
//! two conventions, each one line of Python away from `ak.from_buffers`.
//!
//! * **Directory**: one file per buffer, named by its key (`node0-offsets`), holding its raw
//!   little-endian bytes, plus [`METADATA_NAME`] (`awkward.json`):
//!   `{"form": <form.to_dict()>, "length": N}`, written last.
//!   ```python
//!   meta = json.load(open(d / "awkward.json"))
//!   ak.from_buffers(meta["form"], meta["length"], {k: (d / k).read_bytes() for k in keys})
//!   ```
//! * **`.npz`**: exactly what `np.savez(path, form=form.to_json(), length=length, **buffers)`
//!   writes: `form.npy` (a 0-d unicode array of the form's JSON), `length.npy` (a 0-d integer)
//!   and one `<key>.npy` per buffer (written as 1-D `uint8`; any little-endian dtype is read).
//!   ```python
//!   f = np.load(path)
//!   ak.from_buffers(str(f["form"]), int(f["length"]), {k: f[k] for k in f.files})
//!   ```

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use array_core::Durability;
use serde_json::{json, Value as Json};

use crate::awkd::AwkdFile;
use crate::awkward2::export;
use crate::error::{Error, Result};
use crate::from_buffers::{from_buffers, FromBuffersOptions};
use crate::layout::Layout;
use crate::store::{BlobStore, DirStore};

/// The metadata file of a buffers directory.
pub const METADATA_NAME: &str = "awkward.json";

/// Writes `layout` as awkward 2 buffers into directory `dir` (created if needed). The files are
/// written crash-safely as one batch ([`array_core::AtomicBatch`]): a layout awkward 2 cannot
/// hold fails before any file is replaced, and each file is its old content or its new one.
///
/// ```
/// use asdf_awkward::{read_awkward2_dir, write_awkward2_dir, FromBuffersOptions, Layout};
/// let dir = std::env::temp_dir().join(format!("awk2-doc-{}", std::process::id()));
/// let a = Layout::from_json(&serde_json::json!([{"x": 1, "y": "a"}, {"x": 2, "y": "bc"}])).unwrap();
/// write_awkward2_dir(&a, &dir).unwrap();
/// let back = read_awkward2_dir(&dir, &FromBuffersOptions::default()).unwrap();
/// assert_eq!(back.to_json().unwrap(), a.to_json().unwrap());
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn write_awkward2_dir(layout: &Layout, dir: impl AsRef<Path>) -> Result<()> {
    write_awkward2_dir_with(layout, dir, Durability::Synced)
}

/// [`write_awkward2_dir`], waiting for the disk or not as `durability` says: relaxed, new files
/// are renamed into place unsynced, as `ak.to_buffers` leaves its own (files replaced are
/// synced either way).
///
/// ```
/// use asdf_awkward::{read_awkward2_dir, write_awkward2_dir_with, Durability, FromBuffersOptions, Layout};
/// let dir = std::env::temp_dir().join(format!("awk2-doc-relaxed-{}", std::process::id()));
/// let a = Layout::from_json(&serde_json::json!([[1.5, 2.5], []])).unwrap();
/// write_awkward2_dir_with(&a, &dir, Durability::Relaxed).unwrap();
/// let back = read_awkward2_dir(&dir, &FromBuffersOptions::default()).unwrap();
/// assert_eq!(back.to_json().unwrap(), a.to_json().unwrap());
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn write_awkward2_dir_with(
    layout: &Layout,
    dir: impl AsRef<Path>,
    durability: Durability,
) -> Result<()> {
    let store = DirStore::create(dir)?;
    let mut batch = array_core::AtomicBatch::with_durability(durability);
    // The buffers go to their files straight from the layout, uncopied where they can.
    let (form, length) = export(layout, &mut |key, bytes| {
        store.stage(&mut batch, key, bytes)
    })?;
    let meta = json!({ "form": form, "length": length });
    store.stage(&mut batch, METADATA_NAME, meta.to_string().as_bytes())?;
    batch
        .commit()
        .map_err(|e| Error::io(store.root().display(), e.into()))
}

/// Reads a buffers directory written by [`write_awkward2_dir`] (or by Python, see the module
/// documentation). Buffer names are checked before use (no path leaves the directory).
pub fn read_awkward2_dir(dir: impl AsRef<Path>, opts: &FromBuffersOptions) -> Result<Layout> {
    let store = DirStore::open(dir)?;
    let meta = store
        .get(METADATA_NAME, opts.limits.max_schema_bytes)?
        .ok_or_else(|| Error::MissingBlob {
            name: METADATA_NAME.into(),
        })?;
    let meta: Json = serde_json::from_slice(&meta).map_err(|e| Error::SchemaJson {
        name: METADATA_NAME.into(),
        message: e.to_string(),
    })?;
    let form = meta
        .get("form")
        .ok_or_else(|| crate::from_buffers::form_err(METADATA_NAME, "no \"form\" entry"))?;
    let length = meta
        .get("length")
        .and_then(Json::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            crate::from_buffers::form_err(
                METADATA_NAME,
                "\"length\" must be a non-negative integer",
            )
        })?;
    from_buffers(form, length, &store, opts)
}

/// Writes `layout` as an `.npz` of awkward 2 buffers (ZIP entries stored, written atomically).
pub fn write_awkward2_npz(layout: &Layout, path: impl AsRef<Path>) -> Result<()> {
    write_awkward2_npz_with(layout, path, Durability::Synced)
}

/// [`write_awkward2_npz`], waiting for the disk or not as `durability` says (see
/// [`write_awkward2_dir_with`]).
pub fn write_awkward2_npz_with(
    layout: &Layout,
    path: impl AsRef<Path>,
    durability: Durability,
) -> Result<()> {
    // The archive is a temporary file until it is complete, so a failed export replaces nothing.
    crate::awkd::write_zip(path.as_ref(), durability, |sink| {
        let (form, length) = export(layout, &mut |key, bytes| {
            let header = npy::header("|u1", Some(bytes.len()));
            sink.put_parts(&format!("{key}.npy"), &[&header, bytes])
        })?;
        let form = form.to_string();
        let chars: Vec<u8> = form
            .chars()
            .flat_map(|c| (c as u32).to_le_bytes())
            .collect();
        let header = npy::header(&format!("<U{}", form.chars().count()), None);
        sink.put_parts("form.npy", &[&header, &chars])?;
        let header = npy::header("<i8", None);
        sink.put_parts("length.npy", &[&header, &(length as i64).to_le_bytes()])
    })
}

/// Reads an `.npz` of awkward 2 buffers (see the module documentation).
pub fn read_awkward2_npz(path: impl AsRef<Path>, opts: &FromBuffersOptions) -> Result<Layout> {
    let store = NpzStore(AwkdFile::open(path)?);
    let max = opts.limits.max_schema_bytes;
    let form = store.get("form", max)?.ok_or_else(|| Error::MissingBlob {
        name: "form.npy".into(),
    })?;
    let form = npy::text(form.data(), &form.descr)
        .ok_or_else(|| crate::from_buffers::form_err("form.npy", "not a unicode or bytes array"))?;
    let form = crate::from_buffers::parse_form(&form, &opts.limits)?;
    let length = store.get("length", 64)?.ok_or_else(|| Error::MissingBlob {
        name: "length.npy".into(),
    })?;
    let length = npy::integer(length.data(), &length.descr)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            crate::from_buffers::form_err("length.npy", "not a non-negative integer scalar")
        })?;
    let buffers = NpzBuffers {
        npz: &store,
        max: opts.limits.max_blob_bytes,
    };
    from_buffers(&form, length, &buffers, opts)
}

struct NpzStore(AwkdFile);

impl NpzStore {
    fn get(&self, key: &str, max: u64) -> Result<Option<npy::Entry>> {
        let name = format!("{key}.npy");
        // The npy header adds at most a few hundred bytes to the data.
        let Some(bytes) = self.0.get(&name, max.saturating_add(1 << 16))? else {
            return Ok(None);
        };
        npy::parse(bytes.into_owned(), &name).map(Some)
    }
}

/// The buffers of an `.npz`, by key (the entry name without `.npy`), as raw little-endian bytes.
/// Typed buffers are streamed from the archive straight into the caller's memory: only their
/// header is read to learn their size.
struct NpzBuffers<'a> {
    npz: &'a NpzStore,
    /// Largest entry read (`Limits::max_blob_bytes`), also where the caller gives no bound.
    max: u64,
}

/// The most header bytes an entry may have (numpy writes under 200).
const MAX_NPY_HEADER: usize = 1 << 20;

impl NpzBuffers<'_> {
    fn load(&self, name: &str, max_bytes: u64) -> Result<Option<npy::Entry>> {
        let max_bytes = max_bytes.min(self.max);
        let Some(e) = self.npz.get(name, max_bytes)? else {
            return Ok(None);
        };
        check_descr(name, &e.descr)?;
        crate::store::check_size(name, e.data().len() as u64, max_bytes)?;
        Ok(Some(e))
    }

    /// Entry `name`'s header, read from the start of its stream `f` (`len` bytes declared), and
    /// checked against the entry's size and this store's limit.
    fn header(&self, f: &mut dyn Read, name: &str, len: u64) -> Result<npy::Header> {
        let entry = format!("{name}.npy");
        let mut head = vec![0u8; npy::PREFIX];
        f.read_exact(&mut head)
            .map_err(|e| npy_err(&entry, format!("header: {e}")))?;
        if head.get(6).is_some_and(|&v| v > 1) {
            head.resize(12, 0);
            f.read_exact(&mut head[npy::PREFIX..])
                .map_err(|e| npy_err(&entry, format!("header: {e}")))?;
        }
        let total = npy::header_len(&head, &entry)?;
        if total < head.len() || total > MAX_NPY_HEADER || total as u64 > len {
            return Err(npy_err(&entry, format!("a header of {total} bytes")));
        }
        let have = head.len();
        head.resize(total, 0);
        f.read_exact(&mut head[have..])
            .map_err(|e| npy_err(&entry, format!("header: {e}")))?;
        let h = npy::parse_header(&head, &entry)?;
        npy::check_len(&h, len, &entry)?;
        check_descr(name, &h.descr)?;
        crate::store::check_size(name, h.data_len, self.max)?;
        Ok(h)
    }
}

fn npy_err(name: &str, message: String) -> Error {
    Error::Blob {
        name: name.into(),
        message: format!("invalid .npy: {message}"),
    }
}

/// Buffers are little-endian: a big-endian multi-byte entry is refused.
fn check_descr(name: &str, descr: &str) -> Result<()> {
    if descr.starts_with('>') && npy::itemsize(descr).is_some_and(|s| s > 1) {
        return Err(Error::Unsupported {
            location: format!("{name}.npy"),
            what: format!("big-endian buffer {descr:?}"),
        });
    }
    Ok(())
}

impl BlobStore for NpzBuffers<'_> {
    fn get(&self, name: &str, max_bytes: u64) -> Result<Option<Cow<'_, [u8]>>> {
        Ok(self
            .load(name, max_bytes)?
            .map(|e| Cow::Owned(e.into_data())))
    }

    fn names(&self) -> Result<Vec<String>> {
        Ok(self
            .npz
            .0
            .names()?
            .into_iter()
            .filter_map(|n| n.strip_suffix(".npy").map(str::to_string))
            .collect())
    }

    fn size(&self, name: &str) -> Result<Option<u64>> {
        let entry = format!("{name}.npy");
        let h = self
            .npz
            .0
            .with_entry(&entry, |f, size| self.header(f, name, size.declared))?;
        Ok(h.map(|h| h.data_len))
    }

    fn read_into(&self, name: &str, out: &mut [u8]) -> Result<()> {
        let entry = format!("{name}.npy");
        self.npz
            .0
            .with_entry(&entry, |f, size| {
                let h = self.header(f, name, size.declared)?;
                if out.len() as u64 > h.data_len {
                    return Err(Error::Blob {
                        name: name.into(),
                        message: format!(
                            "{} bytes requested, the buffer has {}",
                            out.len(),
                            h.data_len
                        ),
                    });
                }
                self.npz.0.fill(f, &entry, h.data_len, out)
            })?
            .ok_or_else(|| Error::MissingBlob { name: name.into() })
    }
}

/// The small part of the `.npy` format these files use: 0-d and 1-D C-order arrays.
mod npy {
    use crate::error::{Error, Result};

    const MAGIC: &[u8] = b"\x93NUMPY";

    /// A parsed entry: its `descr` and data bytes (header removed).
    pub(super) struct Entry {
        pub descr: String,
        /// The whole entry; the data starts at `start` (not moved down, to save a copy).
        pub bytes: Vec<u8>,
        pub start: usize,
    }

    impl Entry {
        pub(super) fn data(&self) -> &[u8] {
            &self.bytes[self.start..]
        }

        pub(super) fn into_data(mut self) -> Vec<u8> {
            self.bytes.drain(..self.start);
            self.bytes
        }
    }

    fn bad(name: &str, what: impl Into<String>) -> Error {
        Error::Blob {
            name: name.into(),
            message: format!("invalid .npy: {}", what.into()),
        }
    }

    /// A version 1.0 header for `descr` with shape `(n,)` (`Some(n)`) or `()` (`None`), padded
    /// to a multiple of 64 bytes as numpy writes it.
    pub(super) fn header(descr: &str, n: Option<usize>) -> Vec<u8> {
        let shape = match n {
            Some(n) => format!("({n},)"),
            None => "()".into(),
        };
        let mut dict =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        let total = MAGIC.len() + 2 + 2 + dict.len() + 1;
        dict.push_str(&" ".repeat((64 - total % 64) % 64));
        dict.push('\n');
        let mut out = Vec::with_capacity(10 + dict.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        out.extend_from_slice(dict.as_bytes());
        out
    }

    fn field<'t>(dict: &'t str, key: &str) -> Option<&'t str> {
        let at = dict.find(&format!("'{key}':"))? + key.len() + 3;
        Some(dict[at..].trim_start())
    }

    /// Item size of a simple `descr` (`<i8` → 8, `<U5` → 20, `<M8[ns]` → 8).
    pub(super) fn itemsize(descr: &str) -> Option<usize> {
        let kind = descr.chars().nth(1)?;
        // Datetimes carry their unit after the size: `<M8[ns]`.
        let n: usize = descr.get(2..)?.split('[').next()?.parse().ok()?;
        Some(if kind == 'U' { n.checked_mul(4)? } else { n })
    }

    /// What an entry's header says: its `descr`, where the data starts and how many data bytes
    /// it declares.
    pub(super) struct Header {
        pub descr: String,
        pub start: usize,
        pub data_len: u64,
    }

    /// The shortest header prefix [`header_len`] reads (versions 2 and 3 need 12 bytes).
    pub(super) const PREFIX: usize = 10;

    /// The whole header length from its first bytes: magic, version and the length field.
    pub(super) fn header_len(prefix: &[u8], name: &str) -> Result<usize> {
        if prefix.len() < PREFIX || &prefix[..6] != MAGIC {
            return Err(bad(name, "no NUMPY magic"));
        }
        match prefix[6] {
            1 => Ok(10 + u16::from_le_bytes([prefix[8], prefix[9]]) as usize),
            2 | 3 if prefix.len() >= 12 => {
                let n = u32::from_le_bytes([prefix[8], prefix[9], prefix[10], prefix[11]]);
                Ok(12usize.saturating_add(n as usize))
            }
            2 | 3 => Ok(12),
            v => Err(bad(name, format!("format version {v}"))),
        }
    }

    /// Parses a complete header (`bytes` holds at least all of it).
    pub(super) fn parse_header(bytes: &[u8], name: &str) -> Result<Header> {
        let end = header_len(bytes, name)?;
        let start = if bytes.get(6) == Some(&1) { 10 } else { 12 };
        if end > bytes.len() || start > end {
            return Err(bad(name, "header longer than the entry"));
        }
        let dict =
            std::str::from_utf8(&bytes[start..end]).map_err(|_| bad(name, "header is not text"))?;
        let descr = field(dict, "descr")
            .and_then(|v| v.strip_prefix('\''))
            .and_then(|v| v.split('\'').next())
            .ok_or_else(|| bad(name, "no descr"))?
            .to_string();
        if field(dict, "fortran_order").is_some_and(|v| v.starts_with("True")) {
            return Err(bad(name, "Fortran order"));
        }
        let shape = field(dict, "shape")
            .and_then(|v| v.strip_prefix('('))
            .and_then(|v| v.split(')').next())
            .ok_or_else(|| bad(name, "no shape"))?;
        let mut count: u64 = 1;
        for d in shape.split(',').map(str::trim).filter(|d| !d.is_empty()) {
            let d: u64 = d.parse().map_err(|_| bad(name, "bad shape"))?;
            count = count
                .checked_mul(d)
                .ok_or_else(|| bad(name, "shape overflows"))?;
        }
        let item = itemsize(&descr).ok_or_else(|| bad(name, format!("descr {descr:?}")))?;
        let data_len = count
            .checked_mul(item as u64)
            .ok_or_else(|| bad(name, "size overflows"))?;
        Ok(Header {
            descr,
            start: end,
            data_len,
        })
    }

    /// Checks that an entry of `entry_len` bytes holds exactly the data its header declares.
    pub(super) fn check_len(h: &Header, entry_len: u64, name: &str) -> Result<()> {
        let have = entry_len.saturating_sub(h.start as u64);
        if have != h.data_len {
            return Err(bad(
                name,
                format!("{have} data bytes, the header declares {}", h.data_len),
            ));
        }
        Ok(())
    }

    /// Splits an entry into header fields and data, checking the declared size against the bytes
    /// present (the data is the tail of `bytes`, so nothing is allocated from the header).
    pub(super) fn parse(bytes: Vec<u8>, name: &str) -> Result<Entry> {
        let h = parse_header(&bytes, name)?;
        check_len(&h, bytes.len() as u64, name)?;
        Ok(Entry {
            descr: h.descr,
            bytes,
            start: h.start,
        })
    }

    /// The text of a 0-d `<U` (UCS-4) or `|S` array, trailing NULs removed.
    pub(super) fn text(data: &[u8], descr: &str) -> Option<String> {
        let s = if descr.starts_with("<U") || descr.starts_with("=U") {
            data.chunks_exact(4)
                .map(|c| char::from_u32(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect::<Option<String>>()?
        } else if descr.starts_with("|S") {
            String::from_utf8(data.to_vec()).ok()?
        } else {
            return None;
        };
        Some(s.trim_end_matches('\0').to_string())
    }

    /// A 0-d little-endian integer.
    pub(super) fn integer(data: &[u8], descr: &str) -> Option<i64> {
        Some(match descr {
            "<i8" | "=i8" => i64::from_le_bytes(data.try_into().ok()?),
            "<u8" | "=u8" => i64::try_from(u64::from_le_bytes(data.try_into().ok()?)).ok()?,
            "<i4" | "=i4" => i32::from_le_bytes(data.try_into().ok()?) as i64,
            "<u4" | "=u4" => u32::from_le_bytes(data.try_into().ok()?) as i64,
            _ => return None,
        })
    }
}
