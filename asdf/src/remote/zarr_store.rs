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

use super::external::refused;
use super::object::RemoteObject;
use super::options::{store_for, RemoteOptions};
use crate::error::{AsdfError, Result};
use crate::{ExternalFiles, OpenOptions};

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
