//! Reading ASDF files where they are stored (feature `remote`): `s3://`, `gs://`, `az://`,
//! `http(s)://` and `file://` URLs through the `object_store` crate, by byte ranges.
//!
//! [`RemoteFile`] reads the header, tree and block headers in as few requests as it can (two
//! for most files), then only the blocks an array needs, and for
//! [`read_region`](RemoteFile::read_region) only the chunks or byte runs a region covers.
//! Requests are bounded in size ([`RemoteOptions::max_range`]), neighbouring ranges coalesced,
//! up to [`RemoteOptions::concurrency`] in flight, retried a bounded number of times, and
//! pinned to the object's ETag: a file replaced while it is read is an error, never a mix of
//! two versions. Every error names the URL and the byte range.
//!
//! What a remote file names outside itself is read over the network too, resolved against its
//! URL within [`OpenOptions::external_files`](crate::OpenOptions::external_files): exploded
//! arrays' files (each opened as a remote file of its own), and the chunks of asdf-zarr arrays
//! in an external zarr store (a directory store beside the file, or an `FSStore` on an object
//! store; each chunk file a read touches is fetched whole). A local file's `FSStore` on S3, GCS,
//! Azure or HTTP is read the same way.
//!
//! The API blocks (each file runs a small runtime of its own); from async code, use
//! [`RemoteFile::open_async`] and the `_async` methods on the caller's tokio runtime.

mod blocks;
mod exec;
mod external;
mod file;
mod object;
mod options;
mod reader;
mod region;
mod source;
pub(crate) mod zarr_store;

pub use file::RemoteFile;
pub use object::Traffic;
pub use options::RemoteOptions;
pub use reader::RemoteReader;

impl crate::AsdfFile {
    /// Opens the ASDF file at `url` (`s3://bucket/key`, `gs://`, `az://`, `https://`,
    /// `file://`) with default [`RemoteOptions`]: credentials and endpoints from the usual
    /// environment variables. See [`RemoteFile`].
    pub fn open_url(url: &str) -> crate::Result<RemoteFile> {
        RemoteFile::open(url, &RemoteOptions::default())
    }

    /// [`open_url`](Self::open_url) with explicit options (endpoint, region, anonymous access,
    /// timeouts, retries, limits).
    pub fn open_url_with(url: &str, options: &RemoteOptions) -> crate::Result<RemoteFile> {
        RemoteFile::open(url, options)
    }
}
