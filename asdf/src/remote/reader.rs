//! Any object at a URL as a `Read + Seek` source: what formats read from a stream (RawArray,
//! `.awkd` zip archives) and whole-file operations use, with the same bounded, retried,
//! ETag-pinned and counted ranged reads as [`RemoteFile`](super::RemoteFile).

use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;

use bytes::Bytes;

use super::exec::Exec;
use super::object::{RemoteObject, Traffic};
use super::options::RemoteOptions;
use crate::error::{AsdfError, Result};

/// Least bytes one request reads ahead for small reads (zip headers, a RawArray header).
const READ_AHEAD: u64 = 256 << 10;

/// An object at a URL read as a `Read + Seek` stream (feature `remote`).
///
/// Opening reads its first and last [`first_read`](RemoteOptions::first_read) bytes (two
/// concurrent requests), which later reads take from without asking again. A read past them
/// fetches what it asks for (at least 256 KiB ahead), in concurrent requests of bounded size
/// when it is large. Errors name the URL and range, as `io::Error`s wrapping an
/// [`AsdfError::Remote`].
///
/// ```no_run
/// use std::io::Read;
/// let mut r = asdf::remote::RemoteReader::open("https://example.org/a.ra", &Default::default())?;
/// let mut magic = [0u8; 8];
/// r.read_exact(&mut magic)?;
/// println!("{} bytes, {:?}", r.size(), r.traffic());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RemoteReader {
    object: RemoteObject,
    /// The bytes opening read, and the last window fetched.
    held: Vec<(u64, Bytes)>,
    pos: u64,
    /// Last field: the runtime stops after everything that uses it.
    exec: Exec,
}

impl std::fmt::Debug for RemoteReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteReader")
            .field("object", &self.object)
            .field("pos", &self.pos)
            .finish_non_exhaustive()
    }
}

impl RemoteReader {
    /// Opens the object at `url` (blocking), positioned at its start.
    pub fn open(url: &str, options: &RemoteOptions) -> Result<RemoteReader> {
        let (exec, handle) = Exec::own(url)?;
        let (object, ends) = handle.block_on(RemoteObject::open(url, options))?;
        let tail_start = object.size() - ends.tail.len() as u64;
        Ok(RemoteReader {
            held: vec![(0, ends.head), (tail_start, ends.tail)],
            object,
            pos: 0,
            exec,
        })
    }

    /// The URL.
    pub fn url(&self) -> &str {
        self.object.url()
    }

    /// The object's size in bytes.
    pub fn size(&self) -> u64 {
        self.object.size()
    }

    /// Requests and bytes so far.
    pub fn traffic(&self) -> Traffic {
        self.object.traffic()
    }

    /// The bytes of `range` (clipped to the object): taken from what is held, the rest read in
    /// concurrent requests.
    pub fn read_range(&self, range: Range<u64>) -> Result<Bytes> {
        let handle = self.exec.blocking_handle(self.url())?;
        let mut got = handle.block_on(self.object.fetch_using(&[range], &self.held))?;
        Ok(got.pop().unwrap_or_default())
    }

    /// Copies the whole object to `out`, a round of concurrent requests at a time (memory stays
    /// one round: [`concurrency`](RemoteOptions::concurrency) ×
    /// [`max_range`](RemoteOptions::max_range)); returns the bytes copied.
    pub fn copy_to(&self, out: &mut impl io::Write) -> Result<u64> {
        let round = self.object.round().max(1);
        let mut at = 0;
        while at < self.size() {
            let end = at.saturating_add(round).min(self.size());
            let bytes = self.read_range(at..end)?;
            if bytes.len() as u64 != end - at {
                return Err(self.object.error(Some(at..end), "short read"));
            }
            out.write_all(&bytes)
                .map_err(|e| AsdfError::io("writing the copy of a remote object", e))?;
            at = end;
        }
        Ok(at)
    }

    /// The held bytes from `pos` on, when a held piece covers `pos`.
    fn held_at(&self, pos: u64) -> Option<&[u8]> {
        self.held.iter().find_map(|(start, b)| {
            let at = usize::try_from(pos.checked_sub(*start)?).ok()?;
            (at < b.len()).then(|| &b[at..])
        })
    }
}

impl Read for RemoteReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() || self.pos >= self.size() {
            return Ok(0);
        }
        if let Some(held) = self.held_at(self.pos) {
            let n = held.len().min(buf.len());
            buf[..n].copy_from_slice(&held[..n]);
            self.pos += n as u64;
            return Ok(n);
        }
        let want = (buf.len() as u64).max(READ_AHEAD);
        let end = self.pos.saturating_add(want).min(self.size());
        let bytes = self.read_range(self.pos..end).map_err(io::Error::other)?;
        if bytes.is_empty() {
            return Err(io::Error::other(
                self.object
                    .error(Some(self.pos..end), "the server returned no bytes"),
            ));
        }
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
        // Kept as the window for the next small reads (the opening pieces stay).
        self.held.truncate(2);
        if bytes.len() > n {
            self.held.push((self.pos, bytes));
        }
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for RemoteReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let size = self.size() as i128;
        let target = match to {
            SeekFrom::Start(p) => p as i128,
            SeekFrom::End(d) => size + d as i128,
            SeekFrom::Current(d) => self.pos as i128 + d as i128,
        };
        if target < 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                AsdfError::Remote {
                    url: self.url().to_string(),
                    range: None,
                    reason: format!("seek to byte {target}, before the start"),
                },
            ));
        }
        self.pos = u64::try_from(target).unwrap_or(u64::MAX);
        Ok(self.pos)
    }
}
