//! Opening inputs: ASDF files, and single-array files (`.ra`, `.npy`) as arrays.

use std::path::Path;

use asdf::ndarray::{AnyArray, ByteOrder, Datatype};
use asdf::AsdfFile;
use rawarray::asdf::{AsdfArrayType, AsdfDatatype, BoolCode};
use rawarray::RawArray;

use crate::error::{CliError, Result};
use crate::sniff::{sniff_path, Format};

/// Checks that `path` is a regular file that can be opened for reading (so that a missing file
/// is an I/O error, exit status 2, not an invalid file; a FIFO, device, socket or directory is
/// refused without blocking).
pub fn check_readable(path: &Path) -> Result<()> {
    asdf::block::open_regular(path).map_err(|e| CliError::io(path, e))?;
    Ok(())
}

/// How much of an input the verbs trust: the limits and external-file policy ASDF files are
/// opened with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// [`asdf::OpenOptions::untrusted`]: results near 1 GiB, the whole file near 4 GiB, external
    /// files only in the file's directory or below.
    Untrusted,
    /// The data-sized limits of [`asdf::OpenOptions::default`], but external files only in the
    /// file's directory or below (where exploded arrays are written).
    Data,
    /// [`asdf::OpenOptions::default`]: data-sized limits, external files anywhere.
    Trusted,
}

impl Trust {
    /// The open options of this level of trust.
    pub fn options(self) -> asdf::OpenOptions {
        match self {
            Trust::Untrusted => asdf::OpenOptions::untrusted(),
            Trust::Data => asdf::OpenOptions {
                external_files: asdf::ExternalFiles::SameDirAndBelow,
                ..asdf::OpenOptions::default()
            },
            Trust::Trusted => asdf::OpenOptions::default(),
        }
    }
}

static OPTIONS: std::sync::OnceLock<(Trust, asdf::OpenOptions)> = std::sync::OnceLock::new();

/// Sets the trust of every verb and the options ASDF files are opened with (once, by the
/// `asdftool` binary, from `--trusted`/`--untrusted` and the verb). Returns `false` if they
/// were already set.
pub fn set_open_options(trust: Trust, options: asdf::OpenOptions) -> bool {
    OPTIONS.set((trust, options)).is_ok()
}

/// The options every verb opens ASDF files with: those set by [`set_open_options`], else
/// [`Trust::Data`]'s.
pub fn open_options() -> asdf::OpenOptions {
    OPTIONS
        .get()
        .map(|(_, o)| o.clone())
        .unwrap_or_else(|| Trust::Data.options())
}

/// The options every verb reads awkward arrays with (`.awkd` files and awkward arrays in ASDF
/// files): [`asdf_awkward::ReadOptions::untrusted`] under [`Trust::Untrusted`], else the
/// defaults.
pub fn awkward_options() -> asdf_awkward::ReadOptions {
    match OPTIONS.get() {
        Some((Trust::Untrusted, _)) => asdf_awkward::ReadOptions::untrusted(),
        _ => asdf_awkward::ReadOptions::default(),
    }
}

/// [`awkward_options`]' limits for awkward 2 buffers (`.npz`, directories, ASDF nodes).
pub fn buffers_options() -> asdf_awkward::FromBuffersOptions {
    asdf_awkward::FromBuffersOptions {
        limits: awkward_options().limits,
        ..Default::default()
    }
}

static IGNORE_CHECKSUMS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets whether blocks whose checksum does not match are read anyway (`--ignore-checksums`):
/// [`open_asdf`] then warns about each such block, and the open options (set with
/// [`set_open_options`]) skip verification.
pub fn set_ignore_checksums(ignore: bool) {
    IGNORE_CHECKSUMS.store(ignore, std::sync::atomic::Ordering::Relaxed);
}

/// Opens an ASDF file (memory-mapped) with [`open_options`]. Under `--ignore-checksums`, each
/// block whose checksum does not match is named on standard error.
pub fn open_asdf(path: &Path) -> Result<AsdfFile> {
    let file = open_asdf_with(path, &open_options())?;
    if IGNORE_CHECKSUMS.load(std::sync::atomic::Ordering::Relaxed) {
        let policy = asdf::block::ChecksumPolicy::AcceptLegacy;
        for (i, checked) in file.blocks().verify_all(policy).into_iter().enumerate() {
            if let Err(e) = checked {
                eprintln!(
                    "asdftool: {}: block {i}: {e} (ignored: --ignore-checksums)",
                    path.display()
                );
            }
        }
    }
    Ok(file)
}

/// Opens an ASDF file (memory-mapped) with `options`.
fn open_asdf_with(path: &Path, options: &asdf::OpenOptions) -> Result<AsdfFile> {
    check_readable(path)?;
    AsdfFile::open_with(path, options).map_err(|e| CliError::Invalid(e.to_string()))
}

/// Calls `f` with the tree of the ASDF file at `path` (a file, or a URL with the `remote`
/// feature): for the verbs that read only the tree.
pub fn with_tree<R>(path: &Path, f: impl FnOnce(&asdf::yaml::Node) -> R) -> Result<R> {
    #[cfg(feature = "remote")]
    if let Some(url) = url_of(path) {
        return Ok(f(open_remote(url)?.tree()));
    }
    let file = open_asdf(path)?;
    let r = f(file.tree());
    release(file);
    Ok(r)
}

/// The tree `validate` checks: the file opened as every other verb opens it (so a file they
/// reject — empty, text, not ASDF, blocks that cannot be located — is an error, not "valid"),
/// without the open-time tree check, whose violations `validate` lists itself. A file with
/// blocks and no tree has an empty tree.
pub fn tree_for_validation(path: &Path) -> Result<asdf::yaml::Node> {
    let options = asdf::OpenOptions {
        validate: false,
        ignore_unrecognized_tags: true,
        ..open_options()
    };
    #[cfg(feature = "remote")]
    if let Some(url) = url_of(path) {
        return Ok(open_remote_with(url, options)?.into_tree());
    }
    check_readable(path)?;
    let mut file =
        AsdfFile::open_with(path, &options).map_err(|e| CliError::Invalid(e.to_string()))?;
    let tree = std::mem::take(file.tree_mut());
    release(file);
    Ok(tree)
}

static LEAK_AT_EXIT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Tells [`release`] that the process ends after this verb (the binary sets it; a library user
/// does not): big trees and open files are then left to the operating system.
pub fn leak_at_exit() {
    LEAK_AT_EXIT.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Drops `value` (an open file, a tree), or, when the process is about to exit
/// ([`leak_at_exit`]), forgets it: freeing a tree of millions of nodes one allocation at a time
/// took as long as parsing it, for memory the operating system reclaims at once at exit.
pub fn release<T>(value: T) {
    if LEAK_AT_EXIT.load(std::sync::atomic::Ordering::Relaxed) {
        std::mem::forget(value);
    }
}

/// Reads the file at `path` as bytes.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    check_readable(path)?;
    std::fs::read(path).map_err(|e| CliError::io(path, e))
}

/// An opened input of any format.
pub enum Input {
    /// An ASDF file.
    Asdf(Box<AsdfFile>),
    /// A single array (from `.ra` or `.npy`) and the byte order its file stores it in.
    Array(AnyArray, ByteOrder),
    /// A file of awkward arrays (`.awkd`, awkward 2 `.npz` or buffers directory, Parquet),
    /// read by [`crate::awk::read_arrays`] in the format [`open_any`] names.
    Awkward,
    /// A FITS file with an ASDF tree (JWST products).
    Fits(Box<asdf::fits::FitsAsdf>),
}

/// Opens `path`, sniffing its format.
pub fn open_any(path: &Path) -> Result<(Format, Input)> {
    open_any_as(path, Checksums::AsSet)
}

/// Whether [`open_any_as`] verifies the checksums of ASDF blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checksums {
    /// As the command line set them (verified unless `--ignore-checksums`).
    AsSet,
    /// Not verified: for verbs that compare the bytes themselves (`diff`), as Python asdf
    /// reads; `verify` is the verb that checks them.
    Unverified,
}

/// [`open_any`], with ASDF blocks' checksums verified or not.
pub fn open_any_as(path: &Path, checksums: Checksums) -> Result<(Format, Input)> {
    let fmt = sniff_path(path)?;
    let input = match fmt {
        Format::Asdf if checksums == Checksums::Unverified => {
            let mut options = open_options();
            options.blocks.checksums = asdf::block::ChecksumPolicy::Skip;
            Input::Asdf(Box::new(open_asdf_with(path, &options)?))
        }
        Format::Asdf => Input::Asdf(Box::new(open_asdf(path)?)),
        Format::RawArray => {
            let ra = open_ra(path)?;
            let a = ra_to_any(&ra).map_err(|e| in_path(path, e))?;
            Input::Array(a, ra.data_byte_order())
        }
        Format::Npy => {
            let (a, header) = crate::npy::read(&read_bytes(path)?)?;
            Input::Array(a, header.datatype()?.1)
        }
        Format::Awkd | Format::Npz | Format::AwkwardDir | Format::Parquet => Input::Awkward,
        Format::Fits => Input::Fits(Box::new(open_fits(path)?)),
    };
    Ok((fmt, input))
}

/// Opens a FITS file holding an ASDF tree, with the tool's reading limits.
pub fn open_fits(path: &Path) -> Result<asdf::fits::FitsAsdf> {
    check_readable(path)?;
    asdf::fits::FitsAsdf::open(path, &open_options()).map_err(|e| CliError::Invalid(e.to_string()))
}

/// Opens a RawArray file.
pub fn open_ra(path: &Path) -> Result<RawArray> {
    check_readable(path)?;
    RawArray::open(path, &rawarray::ReadOptions::default()).map_err(|e| CliError::invalid(path, e))
}

/// Reads a RawArray file as an array (dims reversed into a row-major shape).
pub fn read_ra(path: &Path) -> Result<AnyArray> {
    let ra = open_ra(path)?;
    ra_to_any(&ra).map_err(|e| in_path(path, e))
}

/// An invalid-file error about `path` names it.
fn in_path(path: &Path, e: CliError) -> CliError {
    match e {
        CliError::Invalid(m) => CliError::invalid(path, m),
        other => other,
    }
}

/// The array of a RawArray file; kinds ASDF lacks become `uint8` bytes with an extra axis.
pub fn ra_to_any(ra: &RawArray) -> Result<AnyArray> {
    let m = rawarray::asdf::kind_to_asdf(ra.kind(), ra.data_byte_order(), ra.dims(), None)
        .map_err(|e| CliError::Unsupported(e.to_string()))?;
    let dt_node = asdf::yaml::parse_str(&m.array.datatype.to_string())
        .map_err(|e| CliError::Unsupported(e.to_string()))?;
    let dt = Datatype::from_node(&dt_node).map_err(|e| CliError::Unsupported(e.to_string()))?;
    let shape = m
        .array
        .shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(|_| CliError::Invalid("dims do not fit this machine".into()))?;
    crate::npy::decode(ra.data_bytes(), &shape, &dt, ra.data_byte_order(), false)
}

/// The RawArray holding `a` (dims = reversed shape, data bytes unchanged).
pub fn any_to_ra(a: &AnyArray) -> Result<RawArray> {
    let dt = a.datatype();
    let scalar = match &dt {
        Datatype::Scalar(s) => Some(*s),
        _ => None,
    }
    .ok_or_else(|| {
        CliError::Unsupported(format!("{dt} arrays have no RawArray equivalent here"))
    })?;
    let order = ByteOrder::NATIVE;
    let t = AsdfArrayType {
        datatype: AsdfDatatype::Scalar(scalar),
        byteorder: order,
        shape: a.shape().iter().map(|&d| d as u64).collect(),
    };
    let h = rawarray::asdf::asdf_to_header(&t, BoolCode::Julia)
        .map_err(|e| CliError::Unsupported(e.to_string()))?;
    let kind = h.kind().map_err(|e| CliError::Unsupported(e.to_string()))?;
    let bytes = crate::npy::native_bytes(a)?;
    RawArray::from_raw_bytes(kind, order, &h.dims, bytes)
        .map_err(|e| CliError::Unsupported(e.to_string()))
}

/// Reads the array at `pointer` of an ASDF file (with its mask applied: nothing is dropped,
/// the mask is ignored for the values).
pub fn asdf_array(file: &AsdfFile, pointer: &str) -> Result<AnyArray> {
    file.read(pointer)
        .map_err(|e| CliError::Invalid(e.to_string()))
}

/// Which array of an ASDF file a single-array operation uses: `pointer` if given, else `/data`
/// when it is an array, else the only array.
pub fn pick_array(file: &AsdfFile, pointer: Option<&str>) -> Result<String> {
    pick_array_of(file.tree(), pointer)
}

/// [`pick_array`] in a tree.
pub fn pick_array_of(tree: &asdf::yaml::Node, pointer: Option<&str>) -> Result<String> {
    let arrays = asdf::find_arrays(tree);
    if let Some(p) = pointer {
        return if arrays.iter().any(|(q, _)| q == p) {
            Ok(p.to_string())
        } else if tree.pointer(p).is_some() {
            Err(CliError::Usage(format!(
                "the node at {p:?} is not an array"
            )))
        } else {
            Err(CliError::Usage(format!("nothing in the tree at {p:?}")))
        };
    }
    if arrays.iter().any(|(q, _)| q == "/data") {
        return Ok("/data".into());
    }
    match arrays.as_slice() {
        [(only, _)] => Ok(only.clone()),
        [] => Err(CliError::Usage("the file has no arrays".into())),
        many => Err(CliError::Usage(format!(
            "the file has {} arrays and none at /data: choose one with --pointer ({})",
            many.len(),
            many.iter()
                .take(8)
                .map(|(p, _)| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The URL `path` spells, when it is one (`s3://`, `gs://`, `az://`, `http(s)://`, `file://`):
/// what the verbs that read remote files open with [`open_remote`].
pub fn url_of(path: &Path) -> Option<&str> {
    let s = path.to_str()?;
    let (scheme, rest) = s.split_once("://")?;
    let known = [
        "s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "http", "https", "file",
    ];
    (known.contains(&scheme) && !rest.is_empty()).then_some(s)
}

/// An input as a local path: the path itself, or for a URL (feature `remote`) a copy fetched
/// into a private temporary directory, removed with it when this is dropped.
#[derive(Debug)]
pub struct Localized {
    path: std::path::PathBuf,
    temp_dir: Option<std::path::PathBuf>,
}

impl Localized {
    /// The local path to read.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Localized {
    fn drop(&mut self) {
        if let Some(dir) = &self.temp_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// `path` as a local file for the verbs that read all of it (`diff`, `convert`, `to-yaml`,
/// `defragment`, ...): a URL is copied (in rounds of concurrent ranged requests) into a fresh
/// directory of its own, so relative external files a remote file names resolve to nothing
/// local. The copy keeps the URL's file name (its extension tells historical RawArray files).
pub fn localize(path: &Path) -> Result<Localized> {
    #[cfg(feature = "remote")]
    if let Some(url) = url_of(path) {
        return fetch_copy(url);
    }
    Ok(Localized {
        path: path.to_path_buf(),
        temp_dir: None,
    })
}

#[cfg(feature = "remote")]
fn fetch_copy(url: &str) -> Result<Localized> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "asdftool-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir(&dir).map_err(|e| CliError::io(&dir, e))?;
    let name = url
        .rsplit('/')
        .next()
        .filter(|n| !n.is_empty() && *n != "." && *n != "..")
        .unwrap_or("object");
    let local = Localized {
        path: dir.join(name),
        temp_dir: Some(dir),
    };
    let options = asdf::remote::RemoteOptions::default();
    let reader = asdf::remote::RemoteReader::open(url, &options)
        .map_err(|e| CliError::Invalid(e.to_string()))?;
    let mut file = std::fs::File::create(&local.path).map_err(|e| CliError::io(&local.path, e))?;
    reader
        .copy_to(&mut std::io::BufWriter::new(&mut file))
        .map_err(|e| CliError::Invalid(e.to_string()))?;
    Ok(local)
}

/// Whether the object at `url` starts as an ASDF file does (its first bytes are read).
#[cfg(feature = "remote")]
pub fn remote_is_asdf(url: &str) -> Result<bool> {
    let options = asdf::remote::RemoteOptions {
        first_read: 64,
        ..asdf::remote::RemoteOptions::default()
    };
    let reader = asdf::remote::RemoteReader::open(url, &options)
        .map_err(|e| CliError::Invalid(e.to_string()))?;
    let head = reader
        .read_range(0..16)
        .map_err(|e| CliError::Invalid(e.to_string()))?;
    Ok(crate::sniff::sniff_bytes(&head) == Some(Format::Asdf))
}

/// Opens the ASDF file at `url` with this command line's limits; credentials, endpoint and
/// region come from the environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`; `AWS_SKIP_SIGNATURE=true`
/// for public buckets).
#[cfg(feature = "remote")]
pub fn open_remote(url: &str) -> Result<asdf::remote::RemoteFile> {
    open_remote_with(url, open_options())
}

/// [`open_remote`] with other open options.
#[cfg(feature = "remote")]
pub fn open_remote_with(url: &str, open: asdf::OpenOptions) -> Result<asdf::remote::RemoteFile> {
    let options = asdf::remote::RemoteOptions {
        open,
        ..asdf::remote::RemoteOptions::default()
    };
    asdf::remote::RemoteFile::open(url, &options).map_err(|e| CliError::Invalid(e.to_string()))
}

#[cfg(test)]
mod release_tests {
    #[test]
    fn urls_are_told_from_paths() {
        use std::path::Path;
        assert_eq!(
            super::url_of(Path::new("s3://b/k.asdf")),
            Some("s3://b/k.asdf")
        );
        assert!(super::url_of(Path::new("https://h/x.asdf")).is_some());
        assert!(super::url_of(Path::new("data/x.asdf")).is_none());
        assert!(super::url_of(Path::new("ftp://h/x.asdf")).is_none());
        assert!(super::url_of(Path::new("s3://")).is_none());
    }

    /// A library user (no `leak_at_exit`) gets ordinary drops; the binary sets the flag, and
    /// then nothing is dropped (checked in a child process: the flag is process-wide).
    #[test]
    fn release_drops_unless_the_process_is_exiting() {
        let rc = std::rc::Rc::new(());
        if std::env::var_os("ASDFTOOL_TEST_LEAK").is_none() {
            super::release(rc.clone());
            assert_eq!(std::rc::Rc::strong_count(&rc), 1);
            let exe = std::env::current_exe().unwrap();
            let ok = std::process::Command::new(exe)
                .args([
                    "--exact",
                    "input::release_tests::release_drops_unless_the_process_is_exiting",
                ])
                .env("ASDFTOOL_TEST_LEAK", "1")
                .status()
                .unwrap()
                .success();
            assert!(ok, "the leaking run failed");
        } else {
            super::leak_at_exit();
            super::release(rc.clone());
            assert_eq!(std::rc::Rc::strong_count(&rc), 2);
        }
    }
}
