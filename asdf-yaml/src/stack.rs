//! How much of the current thread's stack is left: the fast parser recurses once per nesting
//! level, and follows nesting on the caller's thread only while the stack has room for it.
//!
//! On Linux the thread's stack bounds come from `pthread_getattr_np` (once per thread); a
//! local's address stands for the stack pointer. Elsewhere the bounds are unknown and the
//! caller falls back to a fixed number of levels.
//!
//! Like `text.rs`, this module has `unsafe` code: the one call into libc that reads the bounds.
#![allow(unsafe_code)]

/// Stack kept free below the deepest level the fast parser enters: one more level (about 9 KiB
/// unoptimised), the tree builder's and the scalar resolver's calls under it, and a wide margin.
pub(crate) const RED_ZONE: usize = 512 << 10;

/// The most stack counted as usable: a thread reported larger is treated as this large (the
/// deep-parse thread's own size, far more than the deepest nesting needs).
const MAX_USABLE: usize = 64 << 20;

/// The lowest address the stack pointer may reach before less than [`RED_ZONE`] of this
/// thread's stack is left; `None` when the bounds are unknown, or when the stack pointer is not
/// inside them (code running on a stack of its own, as stackful coroutines do). The bounds are
/// read once per thread.
pub(crate) fn floor() -> Option<usize> {
    thread_local! {
        static BOUNDS: std::cell::OnceCell<Option<(usize, usize)>> =
            const { std::cell::OnceCell::new() };
    }
    floor_of(BOUNDS.with(|b| *b.get_or_init(bounds))?, pointer())
}

/// The floor of a stack spanning `low..high` for code whose stack pointer is at `here`.
fn floor_of((low, high): (usize, usize), here: usize) -> Option<usize> {
    if here <= low || here >= high {
        return None;
    }
    let low = low.max(high.saturating_sub(MAX_USABLE));
    Some(low.saturating_add(RED_ZONE))
}

/// An address in the current stack frame: where the stack pointer about is.
#[inline(always)]
pub(crate) fn pointer() -> usize {
    let probe = 0u8;
    std::hint::black_box(&probe) as *const u8 as usize
}

/// The current thread's stack as `(lowest, highest)` address (it grows down from the highest).
#[cfg(target_os = "linux")]
fn bounds() -> Option<(usize, usize)> {
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    // SAFETY: `pthread_getattr_np` initialises `attr` for the calling thread (its own handle from
    // `pthread_self`) when it returns 0, and only then is `attr` read (by
    // `pthread_attr_getstack`, into two locals) and destroyed, once. Nothing is written through
    // the addresses it reports; they are only compared with stack addresses.
    unsafe {
        if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let got = libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size);
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        let low = addr as usize;
        (got == 0 && size > 0).then(|| (low, low.saturating_add(size)))
    }
}

#[cfg(not(target_os = "linux"))]
fn bounds() -> Option<(usize, usize)> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The stack pointer of a thread with `size` bytes of stack, and its floor.
    fn on_thread(size: usize) -> (usize, usize, (usize, usize)) {
        std::thread::Builder::new()
            .stack_size(size)
            .spawn(|| {
                (
                    pointer(),
                    floor().expect("bounds on Linux"),
                    bounds().unwrap(),
                )
            })
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn bounds_hold_the_stack_pointer_and_the_floor_keeps_the_red_zone() {
        for size in [1 << 20, 4 << 20, 128 << 20] {
            let (sp, floor, (low, high)) = on_thread(size);
            assert!(low < sp && sp < high, "{low:#x} < {sp:#x} < {high:#x}");
            // At least the size asked for, less guard and TLS pages (the C library may hand
            // out a larger stack it kept from a finished thread).
            let len = high - low;
            assert!(len + (64 << 10) >= size, "{len} for {size}");
            assert_eq!(floor, low.max(high - MAX_USABLE.min(len)) + RED_ZONE);
            assert!(floor < sp, "a fresh thread has room");
        }
        // The main test thread: its bounds are read once, and the floor stays.
        assert_eq!(floor(), floor());
    }

    #[test]
    fn a_stack_pointer_outside_the_bounds_has_no_floor() {
        const MIB: usize = 1 << 20;
        let bounds = (100 * MIB, 108 * MIB);
        assert_eq!(floor_of(bounds, 107 * MIB), Some(100 * MIB + RED_ZONE));
        // A coroutine's own stack, above or below the thread's.
        assert_eq!(floor_of(bounds, 200 * MIB), None);
        assert_eq!(floor_of(bounds, 50 * MIB), None);
        // A huge stack counts as MAX_USABLE bytes below its top.
        let huge = (MIB, MIB + 2 * MAX_USABLE);
        let floor = floor_of(huge, MIB + 2 * MAX_USABLE - 4096);
        assert_eq!(floor, Some(MIB + MAX_USABLE + RED_ZONE));
    }

    #[test]
    fn the_pointer_falls_as_calls_nest() {
        #[inline(never)]
        fn nested(n: usize) -> usize {
            let here = pointer();
            let below = if n == 0 { here } else { nested(n - 1) };
            std::hint::black_box(below)
        }
        let top = pointer();
        assert!(nested(50) < top);
    }
}
