//! Where the async work of a remote read runs: a small runtime of its own behind the blocking
//! API, or the caller's behind the async one.

use crate::error::{AsdfError, Result};

/// A runtime owned by one remote object (the blocking API), or a handle to the caller's (the
/// async API).
pub(crate) enum Exec {
    Own(Option<tokio::runtime::Runtime>),
    Shared(tokio::runtime::Handle),
}

impl Exec {
    /// A runtime of its own, for the blocking API on `url` (refused inside a runtime, where
    /// blocking on it would stall the caller's).
    pub(crate) fn own(url: &str) -> Result<(Exec, tokio::runtime::Handle)> {
        no_runtime_inside(url)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("asdf-remote")
            .enable_all()
            .build()
            .map_err(|e| AsdfError::io("starting the runtime for remote reads", e))?;
        let handle = rt.handle().clone();
        Ok((Exec::Own(Some(rt)), handle))
    }

    /// The handle to block on, checked to be called from outside any runtime.
    pub(crate) fn blocking_handle(&self, url: &str) -> Result<tokio::runtime::Handle> {
        no_runtime_inside(url)?;
        let handle = match self {
            Exec::Own(rt) => rt.as_ref().map(|r| r.handle().clone()),
            Exec::Shared(h) => Some(h.clone()),
        };
        handle.ok_or_else(|| AsdfError::Remote {
            url: url.to_string(),
            range: None,
            reason: "the file's runtime has stopped".into(),
        })
    }
}

impl Drop for Exec {
    fn drop(&mut self) {
        // A runtime dropped inside another one would panic; this never blocks.
        if let Exec::Own(rt) = self {
            if let Some(rt) = rt.take() {
                rt.shutdown_background();
            }
        }
    }
}

pub(crate) fn no_runtime_inside(url: &str) -> Result<()> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(AsdfError::Remote {
            url: url.to_string(),
            range: None,
            reason: "the blocking API was called inside an async runtime: use the `_async` \
                     methods there (or call it from `spawn_blocking`)"
                .into(),
        });
    }
    Ok(())
}
