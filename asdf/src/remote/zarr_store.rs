//! The chunk files of asdf-zarr arrays kept in an external zarr store on the network: a
//! directory store beside a remote file (its location resolved against the file's URL), or an
//! `FSStore` on an object store or web server (`s3://`, `gs://`, `az://`, `http(s)://`) named by
//! a remote or a local file. Each file is one object, fetched whole, concurrently; a missing
//! object is a chunk never written (zarr's fill value).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use futures::StreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, ObjectStore};

use super::object::RemoteObject;
use super::options::{store_for, RemoteOptions};
use crate::error::{AsdfError, Result};
use crate::{ExternalFiles, OpenOptions};

fn refused(uri: &str, reason: impl Into<String>) -> AsdfError {
    AsdfError::External {
        uri: uri.to_string(),
        reason: reason.into(),
    }
}

/// The URL of the zarr store at `location` (as an asdf-zarr node names it) for the file at
/// `file_url`, as `policy` allows: a URL as it is, a relative directory against the file's URL.
/// A local path is refused (a remote file's stores are remote too); under
/// [`ExternalFiles::SameDirAndBelow`] the store must be in the file's directory or below.
pub(crate) fn resolve(file_url: &str, location: &str, policy: ExternalFiles) -> Result<String> {
    let bad_url = |e: url::ParseError| refused(location, format!("not a URL: {e}"));
    if policy == ExternalFiles::None {
        return Err(refused(
            location,
            "external files are not read (OpenOptions::external_files)",
        ));
    }
    let base = url::Url::parse(file_url).map_err(bad_url)?;
    let local = location.starts_with('/')
        || location.starts_with("file:")
        || location.contains('\\')
        || location.get(1..2) == Some(":");
    let joined = match (asdf_ndarray::is_remote_store(location), local) {
        (true, _) => url::Url::parse(location).map_err(bad_url)?,
        (false, true) => {
            return Err(refused(
                location,
                "a local path: the zarr stores of a remote file must be remote too",
            ))
        }
        (false, false) => base.join(location).map_err(bad_url)?,
    };
    if policy == ExternalFiles::SameDirAndBelow {
        let dir = base.join(".").map_err(bad_url)?;
        let inside = joined.scheme() == dir.scheme()
            && joined.host_str() == dir.host_str()
            && joined.port() == dir.port()
            && joined.path().starts_with(dir.path())
            && !location.split(['/', '\\']).any(|s| s == "..");
        if !inside {
            return Err(refused(
                location,
                format!(
                    "outside the directory of {file_url} (OpenOptions::external_files: \
                     SameDirAndBelow)"
                ),
            ));
        }
    }
    Ok(joined.as_str().trim_end_matches('/').to_string())
}

/// A zarr store on the network: its client and its directory.
pub(crate) struct ZarrObjects {
    store: Arc<dyn ObjectStore>,
    url: String,
    dir: String,
    ceiling: u64,
    concurrency: usize,
}

impl ZarrObjects {
    /// The store whose directory is at `url`, read with `options` (credentials, endpoint,
    /// retries, concurrency; no file larger than the block ceiling of `options.open`).
    pub(crate) fn new(url: &str, options: &RemoteOptions) -> Result<ZarrObjects> {
        let (store, dir) = store_for(url, options)?;
        Ok(ZarrObjects {
            store,
            url: url.trim_end_matches('/').to_string(),
            dir: dir.to_string(),
            ceiling: options.open.blocks.limits.max_decoded_block_size,
            concurrency: options.concurrency.max(1),
        })
    }

    /// The files `keys` (chunk keys, `.zarray`), each whole or `None` when the store has no
    /// such file, fetched concurrently; `count` (a remote file) adds the requests, found or
    /// not, to its traffic.
    pub(crate) async fn fetch(
        &self,
        keys: &[String],
        count: Option<&RemoteObject>,
    ) -> Result<HashMap<String, Option<Bytes>>> {
        let fetches = keys.iter().map(|k| async move {
            let got = self.fetch_one(k).await?;
            if let Some(object) = count {
                object.count(got.as_ref().map_or(0, |b| b.len() as u64));
            }
            Ok::<_, AsdfError>((k.clone(), got))
        });
        let got: Vec<Result<_>> = futures::stream::iter(fetches)
            .buffer_unordered(self.concurrency)
            .collect()
            .await;
        got.into_iter().collect()
    }

    /// The file `key` of the store, or `None` when there is none.
    async fn fetch_one(&self, key: &str) -> Result<Option<Bytes>> {
        let uri = format!("{}/{key}", self.url);
        let fail = |reason: String| AsdfError::Remote {
            url: uri.clone(),
            range: None,
            reason,
        };
        let path = match self.dir.is_empty() {
            true => ObjectPath::from(key),
            false => ObjectPath::from(format!("{}/{key}", self.dir)),
        };
        let got = match self.store.get_opts(&path, GetOptions::default()).await {
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(fail(e.to_string())),
            Ok(got) => got,
        };
        let too_big = |len: u64| {
            fail(format!(
                "{len} bytes exceed the ceiling of {} bytes per block \
                 (OpenOptions::blocks.limits.max_decoded_block_size)",
                self.ceiling
            ))
        };
        if got.meta.size > self.ceiling {
            return Err(too_big(got.meta.size));
        }
        let bytes = got.bytes().await.map_err(|e| fail(e.to_string()))?;
        if bytes.len() as u64 > self.ceiling {
            return Err(too_big(bytes.len() as u64));
        }
        Ok(Some(bytes))
    }
}

/// The file `key` of the zarr store at the URL `location`, named by a local file opened with
/// `open`: fetched on a runtime shared by such reads, with credentials, endpoint and region from
/// the environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`). Only [`ExternalFiles::Any`] reaches a store
/// on the network.
pub(crate) fn fetch_for_local(
    location: &str,
    key: &str,
    open: &OpenOptions,
) -> Result<Option<Vec<u8>>> {
    if open.external_files != ExternalFiles::Any {
        return Err(refused(
            &format!("{location}/{key}"),
            "a zarr store on the network is outside the file's directory \
             (OpenOptions::external_files)",
        ));
    }
    super::exec::no_runtime_inside(location)?;
    let options = RemoteOptions {
        open: open.clone(),
        ..RemoteOptions::default()
    };
    let objects = ZarrObjects::new(location, &options)?;
    let got = shared_runtime()?.block_on(objects.fetch_one(key))?;
    Ok(got.map(|b| b.to_vec()))
}

/// The runtime the local files' network reads run on, started on first use.
fn shared_runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> =
        OnceLock::new();
    let rt = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("asdf-zarr-store")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    });
    rt.as_ref().map_err(|e| {
        AsdfError::io(
            "starting the runtime for zarr stores on the network",
            std::io::Error::other(e.clone()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_resolve_against_the_file_url_under_the_policy() {
        let file = "s3://bucket/data/run1/file.asdf";
        let any = ExternalFiles::Any;
        let same = ExternalFiles::SameDirAndBelow;
        assert_eq!(
            resolve(file, "store.zarr", any).unwrap(),
            "s3://bucket/data/run1/store.zarr"
        );
        assert_eq!(
            resolve(file, "sub/store.zarr/", same).unwrap(),
            "s3://bucket/data/run1/sub/store.zarr"
        );
        assert_eq!(
            resolve(file, "../other.zarr", any).unwrap(),
            "s3://bucket/data/other.zarr"
        );
        assert_eq!(
            resolve("https://h:8080/a/f.asdf", "z.zarr", same).unwrap(),
            "https://h:8080/a/z.zarr"
        );
        assert_eq!(
            resolve(file, "s3://elsewhere/z.zarr", any).unwrap(),
            "s3://elsewhere/z.zarr"
        );
        for (location, policy) in [
            ("../other.zarr", same),
            ("sub/../../x.zarr", same),
            ("s3://elsewhere/z.zarr", same),
            ("s3://bucket/data/run1x/z.zarr", same),
            ("/home/me/store.zarr", any),
            ("file:///home/me/store.zarr", any),
            ("C:\\data\\store.zarr", any),
            ("store.zarr", ExternalFiles::None),
        ] {
            let e = resolve(file, location, policy).unwrap_err().to_string();
            assert!(e.contains(&format!("{location:?}")), "{location}: {e}");
        }
    }
}
