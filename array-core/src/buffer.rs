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

#[cfg(test)]
mod tests {
    use super::*;

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
