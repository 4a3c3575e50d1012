//! Filling a large buffer from a file with every core.

use std::fs::File;
use std::io;

/// Reads below this many bytes go through one `read` call sequence on the calling thread.
const PARALLEL_MIN: usize = 16 << 20;

/// Fills `out` with the bytes of `file` from `offset` on (an error if the file ends first).
///
/// Reading a large buffer from the page cache costs two things per byte, both in the kernel
/// and both on the calling thread: copying out of the cache and, for freshly allocated memory,
/// zeroing the pages as they are first touched. Buffers of 16 MiB and more are therefore read as
/// contiguous pieces (whole 2 MiB huge pages where possible), one per available core, each with
/// positioned reads on a scoped thread, so both costs spread over the machine. Smaller buffers,
/// and platforms without positioned reads, read on the calling thread.
///
/// ```
/// use std::io::Write;
/// let mut f = tempfile::tempfile().unwrap();
/// f.write_all(b"header:payload").unwrap();
/// let mut out = [0u8; 7];
/// array_core::read_exact_at_parallel(&f, 7, &mut out).unwrap();
/// assert_eq!(&out, b"payload");
/// ```
pub fn read_exact_at_parallel(file: &File, offset: u64, out: &mut [u8]) -> io::Result<()> {
    if out.len() < PARALLEL_MIN {
        return read_exact_at(file, offset, out);
    }
    // Only now: `available_parallelism` reads the process's CPU set and cgroup quota.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    if threads < 2 {
        return read_exact_at(file, offset, out);
    }
    const HUGE: usize = 2 << 20;
    let piece = out.len().div_ceil(threads).div_ceil(HUGE) * HUGE;
    std::thread::scope(|s| {
        let mut pieces = out.chunks_mut(piece).enumerate();
        // The calling thread reads the first piece itself.
        let first = pieces.next();
        let handles: Vec<_> = pieces
            .map(|(i, chunk)| {
                let at = offset.saturating_add((i * piece) as u64);
                s.spawn(move || read_exact_at(file, at, chunk))
            })
            .collect();
        let mine = first.map_or(Ok(()), |(_, chunk)| read_exact_at(file, offset, chunk));
        handles.into_iter().fold(mine, |done, h| {
            let theirs = h
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("a reading thread panicked")));
            done.and(theirs)
        })
    })
}

#[cfg(unix)]
fn read_exact_at(file: &File, offset: u64, out: &mut [u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, out, offset)
}

#[cfg(not(unix))]
fn read_exact_at(file: &File, offset: u64, out: &mut [u8]) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(bytes: &[u8]) -> File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        f
    }

    #[test]
    fn large_reads_land_every_byte_in_place() {
        // 37 MiB + 3 bytes read from offset 5: several pieces, the last one short.
        let data: Vec<u8> = (0..(37usize << 20) + 8)
            .map(|i| (i % 251) as u8 ^ (i >> 20) as u8)
            .collect();
        let f = file_of(&data);
        let mut out = vec![0u8; data.len() - 5];
        read_exact_at_parallel(&f, 5, &mut out).unwrap();
        assert!(out == data[5..], "the pieces were not put back in order");
    }

    #[test]
    fn a_file_shorter_than_the_buffer_is_an_error() {
        let f = file_of(&vec![7u8; 20 << 20]);
        let mut out = vec![0u8; 24 << 20];
        let err = read_exact_at_parallel(&f, 0, &mut out).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        let mut small = [0u8; 8];
        let err = read_exact_at_parallel(&file_of(b"abc"), 0, &mut small).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
