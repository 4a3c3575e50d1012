//! A writer that counts the bytes it passes on: where a format needs to know how much it wrote
//! (a header's length, a payload checked against its declared size) without buffering it.

use std::io::{self, Write};

/// Passes writes on to `inner` and counts the bytes `inner` accepted.
///
/// ```
/// use std::io::Write;
/// let mut w = array_core::CountingWriter::new(Vec::new());
/// w.write_all(b"#ASDF 1.0.0\n").unwrap();
/// assert_eq!(w.written(), 12);
/// assert_eq!(w.into_inner(), b"#ASDF 1.0.0\n");
/// ```
#[derive(Debug)]
pub struct CountingWriter<W> {
    inner: W,
    written: u64,
}

impl<W> CountingWriter<W> {
    /// Counts what is written to `inner`, from 0.
    pub fn new(inner: W) -> Self {
        CountingWriter { inner, written: 0 }
    }

    /// The bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The writer passed to [`new`](Self::new).
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
