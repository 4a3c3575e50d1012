//! Random access to the bytes of a file: borrowed slices (memory maps, buffers) or any
//! `Read + Seek`.

use std::borrow::Cow;
use std::io::{self, Read, Seek, SeekFrom};

/// Random-access bytes the layout scanner reads from.
pub trait Source {
    /// Total length in bytes.
    fn len(&self) -> u64;

    /// Whether the source is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Up to `len` bytes starting at `offset` (fewer only at the end of the source).
    fn get(&mut self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>>;

    /// How many bytes a forward search should read at once.
    fn window(&self) -> usize;
}

impl Source for &[u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn get(&mut self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(<[u8]>::len(self));
        let end = start.saturating_add(len).min(<[u8]>::len(self));
        Ok(Cow::Borrowed(&self[start..end]))
    }
    fn window(&self) -> usize {
        usize::MAX
    }
}

/// A [`Source`] over any `Read + Seek` (files, cursors, network streams with seeking).
#[derive(Debug)]
pub struct SeekSource<R> {
    inner: R,
    len: u64,
}

impl<R: Read + Seek> SeekSource<R> {
    /// Wraps `inner`, measuring its length by seeking to the end.
    pub fn new(mut inner: R) -> io::Result<Self> {
        let len = inner.seek(SeekFrom::End(0))?;
        Ok(SeekSource { inner, len })
    }

    /// The wrapped reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Reads exactly `buf.len()` bytes at `offset`.
    pub fn read_exact_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.seek(SeekFrom::Start(offset))?;
        self.inner.read_exact(buf)
    }
}

impl<R: Read + Seek> Source for SeekSource<R> {
    fn len(&self) -> u64 {
        self.len
    }
    fn get(&mut self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        let avail = self.len.saturating_sub(offset);
        let n = (len as u64).min(avail) as usize;
        let mut buf = Vec::new();
        buf.try_reserve_exact(n).map_err(|_| {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("cannot allocate {n} bytes"),
            )
        })?;
        buf.resize(n, 0);
        if n > 0 {
            self.read_exact_at(offset, &mut buf)?;
        }
        Ok(Cow::Owned(buf))
    }
    fn window(&self) -> usize {
        1 << 20
    }
}
