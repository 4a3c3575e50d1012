//! Format detection by magic bytes (inputs) and by extension (outputs).

use std::io::Read;
use std::path::Path;

use crate::error::{CliError, Result};

/// The file formats the tool understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// ASDF (`#ASDF`).
    Asdf,
    /// RawArray (`rawarray` magic, or a historical header).
    RawArray,
    /// NumPy `.npy` (`\x93NUMPY`).
    Npy,
    /// Awkward Array 0.x `.awkd` (a ZIP archive).
    Awkd,
    /// FITS with an ASDF tree in an `ASDF` extension (JWST products); read only.
    Fits,
    /// awkward 2 buffers in a NumPy `.npz` (`form`, `length`, one entry per buffer): a ZIP
    /// archive named `*.npz`.
    Npz,
    /// awkward 2 buffers in a directory: `awkward.json` (form and length), one file per buffer.
    AwkwardDir,
    /// Apache Parquet (`PAR1`), through awkward 2's Arrow mapping.
    Parquet,
}

impl Format {
    /// The format's usual name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Asdf => "asdf",
            Format::RawArray => "rawarray",
            Format::Npy => "npy",
            Format::Awkd => "awkd",
            Format::Fits => "fits",
            Format::Npz => "npz",
            Format::AwkwardDir => "awkward 2 buffers directory",
            Format::Parquet => "parquet",
        }
    }

    /// Whether the format holds awkward arrays (jagged, records, options, strings...):
    /// `.awkd`, awkward 2 buffers (`.npz` or a directory) and Parquet.
    pub fn is_awkward(self) -> bool {
        matches!(
            self,
            Format::Awkd | Format::Npz | Format::AwkwardDir | Format::Parquet
        )
    }
}

/// The format of `head`, the first bytes of a file.
///
/// ```
/// use asdftool::sniff::{sniff_bytes, Format};
/// assert_eq!(sniff_bytes(b"#ASDF 1.0.0\n"), Some(Format::Asdf));
/// assert_eq!(sniff_bytes(b"\x93NUMPY\x01\x00"), Some(Format::Npy));
/// assert_eq!(sniff_bytes(b"rawarray\0\0"), Some(Format::RawArray));
/// assert_eq!(sniff_bytes(b"PK\x03\x04"), Some(Format::Awkd));
/// assert_eq!(sniff_bytes(b"SIMPLE  =                    T"), Some(Format::Fits));
/// assert_eq!(sniff_bytes(b"PAR1\x15\x04"), Some(Format::Parquet));
/// assert_eq!(sniff_bytes(b"hello"), None);
/// ```
pub fn sniff_bytes(head: &[u8]) -> Option<Format> {
    if head.starts_with(b"#ASDF") {
        Some(Format::Asdf)
    } else if head.starts_with(b"\x93NUMPY") {
        Some(Format::Npy)
    } else if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        Some(Format::Awkd)
    } else if head.starts_with(b"PAR1") {
        Some(Format::Parquet)
    } else if asdf::fits::is_fits(head) {
        Some(Format::Fits)
    } else if head.starts_with(&rawarray::MAGIC_BYTES) {
        Some(Format::RawArray)
    } else {
        None
    }
}

/// The format of the file at `path`, by its magic bytes; RawArray files of the historical
/// variants without magic are recognised by their `.ra` extension, awkward 2 `.npz` archives
/// (ZIP, as `.awkd` files are) by theirs, and a directory holding `awkward.json` is awkward 2
/// buffers.
pub fn sniff_path(path: &Path) -> Result<Format> {
    if path.is_dir() {
        if path.join(asdf_awkward::METADATA_NAME).is_file() {
            return Ok(Format::AwkwardDir);
        }
        return Err(CliError::invalid(
            path,
            format!(
                "a directory without {}: not awkward 2 buffers",
                asdf_awkward::METADATA_NAME
            ),
        ));
    }
    let mut f = asdf::block::open_regular(path).map_err(|e| CliError::io(path, e))?;
    let mut head = [0u8; 16];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(CliError::io(path, e)),
        }
    }
    match sniff_bytes(&head[..n]) {
        Some(Format::Awkd) if by_extension(path) == Some(Format::Npz) => return Ok(Format::Npz),
        Some(fmt) => return Ok(fmt),
        None => {}
    }
    match by_extension(path) {
        Some(Format::RawArray) => Ok(Format::RawArray),
        _ => Err(CliError::invalid(
            path,
            format!(
                "unknown format: the file starts with {:?}, which is none of `#ASDF`, `rawarray`, \
                 `\\x93NUMPY`, `PAR1` or a ZIP archive",
                String::from_utf8_lossy(&head[..n])
            ),
        )),
    }
}

/// The format an output path asks for, by its extension.
///
/// ```
/// use asdftool::sniff::{by_extension, Format};
/// assert_eq!(by_extension("out.ASDF".as_ref()), Some(Format::Asdf));
/// assert_eq!(by_extension("x.ra".as_ref()), Some(Format::RawArray));
/// assert_eq!(by_extension("events.parquet".as_ref()), Some(Format::Parquet));
/// assert_eq!(by_extension("x.txt".as_ref()), None);
/// ```
pub fn by_extension(path: &Path) -> Option<Format> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "asdf" | "yaml" => Some(Format::Asdf),
        "ra" => Some(Format::RawArray),
        "npy" => Some(Format::Npy),
        "awkd" => Some(Format::Awkd),
        "npz" => Some(Format::Npz),
        "parquet" => Some(Format::Parquet),
        _ => None,
    }
}
