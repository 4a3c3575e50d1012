//! How to reach a remote object: credentials, endpoint, timeouts, retries and read sizes.

use std::sync::Arc;
use std::time::Duration;

use object_store::path::Path as ObjectPath;
use object_store::{BackoffConfig, ObjectStore, RetryConfig};

use crate::error::{AsdfError, Result};
use crate::file::OpenOptions;

/// Options of [`RemoteFile::open`](super::RemoteFile::open).
///
/// Credentials and endpoints come first from the usual environment variables (`AWS_*` for
/// `s3://`, `GOOGLE_*` for `gs://`, `AZURE_*` for `az://`), then from these fields, then from
/// [`config`](Self::config) (any key the `object_store` builders accept, such as
/// `aws_access_key_id` or `azure_storage_account_name`).
///
/// ```
/// use std::time::Duration;
/// let o = asdf::remote::RemoteOptions {
///     endpoint: Some("http://127.0.0.1:9000".into()),
///     anonymous: true,
///     timeout: Duration::from_secs(5),
///     ..Default::default()
/// };
/// assert_eq!(o.retries, 3);
/// ```
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// How the file is read once its bytes arrive: limits, checksums, validation.
    pub open: OpenOptions,
    /// An S3-compatible or Azure endpoint (`http://127.0.0.1:9000`, a MinIO or Ceph gateway).
    pub endpoint: Option<String>,
    /// The S3 region.
    pub region: Option<String>,
    /// Send unsigned requests: public buckets, which refuse signed requests from accounts
    /// without access and need no credentials.
    pub anonymous: bool,
    /// Time allowed for one request, from sending it to the end of its body.
    pub timeout: Duration,
    /// Time allowed to establish a connection.
    pub connect_timeout: Duration,
    /// Retries of a failed request (server errors, timeouts, dropped connections), with
    /// exponential back-off; 0 never retries.
    pub retries: usize,
    /// The first read: the header, the tree and usually the first block header come in one
    /// request of this many bytes (grown when the tree is longer), the block index in another.
    pub first_read: u64,
    /// The size of one request: larger reads are split into requests of this size, sent
    /// concurrently — or of up to 8× this size when that lets them all be in flight at once
    /// (each request costs a round trip), or when a smaller piece would arrive in less time
    /// than it takes to ask for it (the bytes one round trip transfers, measured as for
    /// [`coalesce_gap`](Self::coalesce_gap)); no request is larger than 8 × `max_range`.
    pub max_range: u64,
    /// Ranges closer than this are fetched in one request (the bytes between them are read and
    /// dropped): fewer round trips for a few more bytes. The least gap: each file widens it to
    /// what one round trip costs, the time its opening requests took × [`bandwidth`](Self::bandwidth)
    /// (as Arrow sizes the holes of its read cache), up to
    /// [`max_coalesce_gap`](Self::max_coalesce_gap).
    pub coalesce_gap: u64,
    /// The largest gap a file's measured round trip widens [`coalesce_gap`](Self::coalesce_gap)
    /// to.
    pub max_coalesce_gap: u64,
    /// Bytes per second one request is assumed to transfer, to turn a round trip into bytes.
    pub bandwidth: u64,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// The longest tree read: a file whose tree is longer is refused before reading it.
    pub max_tree_bytes: u64,
    /// Further builder settings as `(key, value)` pairs, e.g. `("aws_access_key_id", "...")`.
    pub config: Vec<(String, String)>,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            open: OpenOptions::default(),
            endpoint: None,
            region: None,
            anonymous: false,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            retries: 3,
            first_read: 64 << 10,
            max_range: 8 << 20,
            coalesce_gap: 16 << 10,
            max_coalesce_gap: 8 << 20,
            bandwidth: 100_000_000,
            concurrency: 8,
            max_tree_bytes: 1 << 30,
            config: Vec::new(),
        }
    }
}

impl RemoteOptions {
    /// The preset for files from untrusted sources ([`OpenOptions::untrusted`]).
    pub fn untrusted() -> Self {
        RemoteOptions {
            open: OpenOptions::untrusted(),
            max_tree_bytes: 256 << 20,
            ..RemoteOptions::default()
        }
    }

    /// Client settings as builder keys, applied over those of the environment (which a whole
    /// `ClientOptions` would replace): timeouts, and plain HTTP when the URL or endpoint uses it.
    fn client_keys(&self, url: &url::Url) -> Vec<(String, String)> {
        let mut keys = vec![
            (
                "timeout".to_string(),
                format!("{}ms", self.timeout.as_millis()),
            ),
            (
                "connect_timeout".to_string(),
                format!("{}ms", self.connect_timeout.as_millis()),
            ),
        ];
        let http = url.scheme() == "http"
            || self
                .endpoint
                .as_deref()
                .is_some_and(|e| e.starts_with("http://"));
        if http {
            keys.push(("allow_http".to_string(), "true".to_string()));
        }
        keys
    }

    /// Every builder key to apply: the client keys, `skip_signature` when anonymous (for stores
    /// that sign; otherwise the environment decides, e.g. `AWS_SKIP_SIGNATURE`), then
    /// [`config`](Self::config).
    fn keys(&self, url: &url::Url, signs: bool) -> Vec<(String, String)> {
        let mut keys = self.client_keys(url);
        if self.anonymous && signs {
            keys.push(("skip_signature".to_string(), "true".to_string()));
        }
        keys.extend(self.config.iter().cloned());
        keys
    }

    fn retry(&self) -> RetryConfig {
        RetryConfig {
            backoff: BackoffConfig {
                init_backoff: Duration::from_millis(50),
                max_backoff: Duration::from_secs(5),
                base: 2.0,
            },
            max_retries: self.retries,
            retry_timeout: self.timeout.saturating_mul(self.retries as u32 + 1),
        }
    }
}

fn bad_url(url: &str, reason: impl std::fmt::Display) -> AsdfError {
    AsdfError::Remote {
        url: url.to_string(),
        range: None,
        reason: reason.to_string(),
    }
}

/// The store behind `url` and the object's path in it.
pub(crate) fn store_for(
    url: &str,
    options: &RemoteOptions,
) -> Result<(Arc<dyn ObjectStore>, ObjectPath)> {
    let parsed = url::Url::parse(url).map_err(|e| bad_url(url, format!("not a URL: {e}")))?;
    let path = ObjectPath::from_url_path(parsed.path())
        .map_err(|e| bad_url(url, format!("invalid object path: {e}")))?;
    let built: std::result::Result<Arc<dyn ObjectStore>, object_store::Error> = match parsed
        .scheme()
    {
        "s3" | "s3a" => s3(url, &parsed, options).map(|s| Arc::new(s) as _),
        "gs" => gcs(url, &parsed, options).map(|s| Arc::new(s) as _),
        "az" | "azure" | "abfs" | "abfss" => azure(url, &parsed, options).map(|s| Arc::new(s) as _),
        "http" | "https" => http(&parsed, options).map(|s| Arc::new(s) as _),
        "file" => {
            return Ok((Arc::new(object_store::local::LocalFileSystem::new()), path));
        }
        other => {
            return Err(bad_url(
                url,
                format!("unsupported scheme {other:?} (s3, gs, az, http, https, file)"),
            ))
        }
    };
    let store = built.map_err(|e| bad_url(url, e))?;
    Ok((store, path))
}

/// Applies `keys` with `set` (parsed as a builder's key type).
fn with_keys<B, K: std::str::FromStr<Err = object_store::Error>>(
    mut builder: B,
    keys: Vec<(String, String)>,
    set: impl Fn(B, K, &str) -> B,
) -> std::result::Result<B, object_store::Error> {
    for (k, v) in &keys {
        builder = set(builder, k.parse::<K>()?, v);
    }
    Ok(builder)
}

fn s3(
    url: &str,
    parsed: &url::Url,
    o: &RemoteOptions,
) -> std::result::Result<object_store::aws::AmazonS3, object_store::Error> {
    use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
    let mut b = AmazonS3Builder::from_env()
        .with_url(url)
        .with_retry(o.retry());
    if let Some(e) = &o.endpoint {
        b = b.with_endpoint(e);
    }
    if let Some(r) = &o.region {
        b = b.with_region(r);
    }
    with_keys(b, o.keys(parsed, true), |b, k: AmazonS3ConfigKey, v| {
        b.with_config(k, v)
    })?
    .build()
}

fn gcs(
    url: &str,
    parsed: &url::Url,
    o: &RemoteOptions,
) -> std::result::Result<object_store::gcp::GoogleCloudStorage, object_store::Error> {
    use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
    let b = GoogleCloudStorageBuilder::from_env()
        .with_url(url)
        .with_retry(o.retry());
    with_keys(b, o.keys(parsed, true), |b, k: GoogleConfigKey, v| {
        b.with_config(k, v)
    })?
    .build()
}

fn azure(
    url: &str,
    parsed: &url::Url,
    o: &RemoteOptions,
) -> std::result::Result<object_store::azure::MicrosoftAzure, object_store::Error> {
    use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
    let mut b = MicrosoftAzureBuilder::from_env()
        .with_url(url)
        .with_retry(o.retry());
    if let Some(e) = &o.endpoint {
        b = b.with_endpoint(e.clone());
    }
    with_keys(b, o.keys(parsed, true), |b, k: AzureConfigKey, v| {
        b.with_config(k, v)
    })?
    .build()
}

fn http(
    parsed: &url::Url,
    o: &RemoteOptions,
) -> std::result::Result<object_store::http::HttpStore, object_store::Error> {
    use object_store::ClientConfigKey;
    let origin = parsed.origin().ascii_serialization();
    let b = object_store::http::HttpBuilder::new()
        .with_url(origin)
        .with_retry(o.retry());
    with_keys(b, o.keys(parsed, false), |b, k: ClientConfigKey, v| {
        b.with_config(k, v)
    })?
    .build()
}
