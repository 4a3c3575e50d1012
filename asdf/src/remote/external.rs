//! What a remote file names outside itself (exploded arrays' files, zarr stores): where it is,
//! as the policy on external files allows.

use crate::error::{AsdfError, Result};
use crate::ExternalFiles;

pub(crate) fn refused(uri: &str, reason: impl Into<String>) -> AsdfError {
    AsdfError::External {
        uri: uri.to_string(),
        reason: reason.into(),
    }
}

/// The URL of the external file or zarr store at `location` (as the tree names it) for the
/// file at `file_url`, as `policy` allows: a URL as it is, a relative path against the file's
/// URL. A local path is refused (what a remote file names is remote too); under
/// [`ExternalFiles::SameDirAndBelow`] it must be in the file's directory or below.
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
    let joined =
        match (asdf_ndarray::is_remote_store(location), local) {
            (true, _) => url::Url::parse(location).map_err(bad_url)?,
            (false, true) => return Err(refused(
                location,
                "a local path: the external files and stores of a remote file must be remote too",
            )),
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
