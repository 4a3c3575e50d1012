//! Buffers for decoded data: allocated zeroed and fallibly, large ones backed by huge pages.

use crate::pod::Zeroable;

/// A buffer could not be allocated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// The byte size does not fit the address space.
    #[error("{count} elements of {size} bytes overflow the address space")]
    Overflow {
        /// Elements asked for.
        count: usize,
        /// Bytes per element.
        size: usize,
    },
    /// The allocator refused.
    #[error("cannot allocate {bytes} bytes")]
    OutOfMemory {
        /// Bytes asked for.
        bytes: usize,
    },
}

/// `count` zero values, allocated zeroed (the operating system's zero pages for large buffers,
/// so nothing is written twice) and advised as huge pages before first use. An allocation
/// failure is an error, never an abort.
///
/// ```
/// let v = array_core::zeroed_vec::<f32>(1000).unwrap();
/// assert!(v.iter().all(|&x| x == 0.0));
/// assert!(array_core::zeroed_vec::<u64>(usize::MAX / 4).is_err());
/// ```
pub fn zeroed_vec<T: Zeroable>(count: usize) -> Result<Vec<T>, AllocError> {
    let size = std::mem::size_of::<T>();
    let layout =
        std::alloc::Layout::array::<T>(count).map_err(|_| AllocError::Overflow { count, size })?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout has a non-zero size (checked just above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return Err(AllocError::OutOfMemory {
            bytes: layout.size(),
        });
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of `count` `T`s (so the
    // capacity and alignment match what `Vec` will free), and its elements are all-zero bytes,
    // a valid value of every `Zeroable` type.
    let v = unsafe { Vec::from_raw_parts(ptr, count, count) };
    advise_huge_pages(&v);
    Ok(v)
}

/// Asks Linux to back the whole allocation of `v` (its capacity, used or not) with transparent
/// huge pages, as NumPy does for its arrays: filling 1 GiB then takes 512 page faults instead of
/// 262 144, which roughly halves the time of a read from the page cache. Call it right after
/// allocating, before the memory is written. Purely advisory: it never changes the contents, and
/// does nothing for buffers under 4 MiB or on other systems.
pub fn advise_huge_pages<T>(v: &Vec<T>) {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        const HUGE: usize = 2 << 20;
        let len = v.capacity().saturating_mul(std::mem::size_of::<T>());
        if len < 2 * HUGE {
            return;
        }
        let start = v.as_ptr() as usize;
        let first = start.div_ceil(HUGE) * HUGE;
        let end = (start + len) / HUGE * HUGE;
        if end > first {
            // SAFETY: [first, end) lies inside the live allocation owned by `v` (rounded inwards
            // to whole huge pages). MADV_HUGEPAGE only changes how the kernel backs those pages,
            // never their contents or mapping; its result is ignored.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    let _ = v;
}

/// Buffers below this are filled without help: their first-touch page faults cost little.
const PREFAULT_MIN: usize = 32 << 20;

/// Runs `fill` on `dst` while another core faults in `dst`'s pages ahead of it.
///
/// A single-stream decoder (zstd, zlib, bzip2, xz) writes a fresh buffer on one core, and a
/// quarter of its time goes to the kernel zeroing each page as it is first written. For buffers
/// of 32 MiB and more, on machines with a second core, a scoped helper thread asks Linux to map
/// the pages writable in 8 MiB steps (`MADV_POPULATE_WRITE`, which never changes what the
/// memory holds), so the zeroing runs beside the decoder instead of inside it. The helper stops
/// when `fill` returns; elsewhere, or for small buffers, this is `fill(dst)`.
///
/// ```
/// let mut out = array_core::zeroed_vec::<u8>(40 << 20).unwrap();
/// let n = array_core::fill_prefaulted(&mut out, |dst| {
///     dst.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8);
///     dst.len()
/// });
/// assert_eq!(n, 40 << 20);
/// assert_eq!(out[1000], (1000 % 256) as u8);
/// ```
pub fn fill_prefaulted<R>(dst: &mut [u8], fill: impl FnOnce(&mut [u8]) -> R) -> R {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        // The length first: `available_parallelism` reads the process's CPU set and cgroup
        // quota, too much to ask for every small block.
        let cores = || std::thread::available_parallelism().map_or(1, |n| n.get());
        if dst.len() >= PREFAULT_MIN && cores() >= 2 {
            let range = (dst.as_mut_ptr() as usize, dst.len());
            let stop = std::sync::atomic::AtomicBool::new(false);
            return std::thread::scope(|s| {
                s.spawn(|| populate(range, &stop));
                let out = fill(dst);
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                out
            });
        }
    }
    fill(dst)
}

/// Maps the whole pages of `(start, len)` writable, 8 MiB at a time, until `stop` is set or the
/// kernel declines (older than 5.14, or short of memory: the writer then faults pages in itself).
#[cfg(all(target_os = "linux", not(miri)))]
fn populate((start, len): (usize, usize), stop: &std::sync::atomic::AtomicBool) {
    const PAGE: usize = 4096;
    const STEP: usize = 8 << 20;
    let mut at = start.div_ceil(PAGE) * PAGE;
    let end = (start + len) / PAGE * PAGE;
    while at < end && !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let n = STEP.min(end - at);
        // SAFETY: [at, at + n) lies inside `dst`, which `fill_prefaulted`'s caller lent mutably
        // for the whole scope this thread runs in, so it stays allocated. MADV_POPULATE_WRITE
        // only installs page-table entries as a write fault would; it neither reads nor writes
        // the bytes (pages already present, e.g. just written by `fill`, are left as they are),
        // so it cannot race with `fill`'s writes.
        let r = unsafe { libc::madvise(at as *mut libc::c_void, n, libc::MADV_POPULATE_WRITE) };
        if r != 0 {
            return;
        }
        at += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helper never changes what the buffer holds: bytes written before the call and bytes
    /// `fill` writes while the helper maps pages (from both ends) all survive; untouched bytes
    /// stay zero. An unaligned slice of a larger buffer works the same.
    #[test]
    fn prefaulting_keeps_every_byte() {
        let len = PREFAULT_MIN + (3 << 20) + 123;
        let mut v = zeroed_vec::<u8>(len + 7).unwrap();
        let dst = &mut v[7..];
        let before = len / 3;
        for (i, b) in dst[..before].iter_mut().enumerate() {
            *b = (i % 251) as u8 | 1;
        }
        let written = fill_prefaulted(dst, |d| {
            // From the end backwards, so `fill` and the helper meet in the middle.
            let mut n = 0;
            for i in (len / 2..len).rev().step_by(4093) {
                d[i] = 0xA5;
                n += 1;
            }
            n
        });
        assert!(written > 0);
        let dst = &v[7..];
        for (i, &b) in dst.iter().enumerate() {
            let want = if i < before {
                (i % 251) as u8 | 1
            } else if i >= len / 2 && (len - 1 - i) % 4093 == 0 {
                0xA5
            } else {
                0
            };
            assert_eq!(b, want, "byte {i}");
        }
        // Small buffers take the plain path.
        let mut small = [0u8; 16];
        assert_eq!(fill_prefaulted(&mut small, |d| d.len()), 16);
    }

    #[test]
    fn large_buffers_are_zero_and_advised() {
        // 8 MiB: takes the madvise path.
        let mut v = zeroed_vec::<u64>(1 << 20).unwrap();
        assert!(v.iter().all(|&x| x == 0));
        v[12345] = 7;
        assert_eq!(v.iter().sum::<u64>(), 7);
        let b = zeroed_vec::<bool>(10).unwrap();
        assert!(b.iter().all(|&x| !x));
        assert!(zeroed_vec::<u8>(0).unwrap().is_empty());
        assert!(matches!(
            zeroed_vec::<u32>(usize::MAX),
            Err(AllocError::Overflow { .. })
        ));
    }
}
