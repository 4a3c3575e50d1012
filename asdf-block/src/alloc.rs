//! Buffers for decoded data: large ones are backed by transparent huge pages.
//!
//! Filling a fresh buffer of hundreds of MiB is dominated by page faults; asking Linux for
//! transparent huge pages (as NumPy does for arrays of 4 MiB and more) takes 512× fewer faults
//! and roughly halves the time of decoding or copying into it.

/// A zero-filled buffer of `n` bytes (zeroed lazily by the OS, then advised as huge pages).
pub fn zeroed(n: usize) -> Vec<u8> {
    let v = vec![0u8; n];
    advise_huge_pages(&v);
    v
}

/// Advises the kernel to back the whole allocation of `v` (its capacity, used or not) with
/// transparent huge pages. Call it right after allocating, before the memory is written. Purely
/// advisory: it never changes the contents, and does nothing for small buffers or other systems.
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
    #[test]
    fn zeroed_buffers_are_zero_and_advice_is_harmless() {
        let v = super::zeroed(8 << 20);
        assert_eq!(v.len(), 8 << 20);
        assert!(v.iter().step_by(4093).all(|&b| b == 0));
        let mut w: Vec<u64> = Vec::with_capacity(1 << 20);
        super::advise_huge_pages(&w);
        w.extend(0..1 << 20);
        assert_eq!(w[12345], 12345);
        super::advise_huge_pages(&Vec::<u8>::new());
    }
}
