//! Removing this process's temporary files when it is interrupted.
//!
//! Every writer of the workspace writes a temporary file next to its output (named after the
//! process id: see [`is_temp_of`]) and renames it into place; killed by SIGINT or SIGTERM half-way, a
//! process would leave that file (hundreds of MB for a large `defragment`) behind. The verbs
//! that write files call [`remove_temp_files_on_signal`] before starting any thread.

use std::path::{Path, PathBuf};

/// Whether `name` is a temporary file of the process `pid`: every writer of the workspace goes
/// through `array_core::AtomicFile`, whose temporaries are `.<name>.<pid>.<16 hex digits>.tmp`.
///
/// ```
/// use asdftool::signals::is_temp_of;
/// assert!(is_temp_of(".data.asdf.4242.0123456789abcdef.tmp", 4242));
/// assert!(!is_temp_of(".data.asdf.4243.0123456789abcdef.tmp", 4242));
/// assert!(!is_temp_of("data.asdf", 4242));
/// ```
pub fn is_temp_of(name: &str, pid: u32) -> bool {
    array_core::AtomicFile::is_temp_of(name, pid)
}

/// Removes the temporary files of this process from `dirs`.
pub fn remove_temp_files(dirs: &[PathBuf]) {
    let pid = std::process::id();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in entries.flatten() {
            if is_temp_of(&e.file_name().to_string_lossy(), pid) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// The directory a path is written in (`.` for a bare file name).
pub fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// From now on, SIGINT, SIGTERM and SIGHUP make the process remove its temporary files from
/// `dirs` and exit with status 128 + the signal's number (as a shell reports a killed
/// command).
///
/// The signals are blocked in the calling thread, and so in every thread started after it
/// (call it before any), and received by a thread of their own with `sigwait`, so the removal
/// runs as ordinary code, not in a signal handler. Not for verbs that run other programs (the
/// blocked mask would be inherited by them).
#[cfg(unix)]
pub fn remove_temp_files_on_signal(dirs: Vec<PathBuf>) -> std::io::Result<()> {
    // SAFETY: `sigemptyset`/`sigaddset` initialise the set on the stack before use;
    // `pthread_sigmask` only changes this thread's mask; `sigwait` reads the same set, which
    // the waiting thread owns.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        if rc != 0 {
            return Err(std::io::Error::from_raw_os_error(rc));
        }
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || loop {
                let mut sig: libc::c_int = 0;
                if libc::sigwait(&set, &mut sig) == 0 {
                    remove_temp_files(&dirs);
                    std::process::exit(128 + sig);
                }
            })?;
    }
    Ok(())
}
