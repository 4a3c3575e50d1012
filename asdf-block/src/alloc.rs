//! Buffers for decoded data: large ones are backed by transparent huge pages.
//!
//! Filling a fresh buffer of hundreds of MiB is dominated by page faults; asking Linux for
//! transparent huge pages (as NumPy does for arrays of 4 MiB and more) takes 512× fewer faults
//! and roughly halves the time of decoding or copying into it. The advice itself lives in the
//! workspace's vocabulary crate, [`array_core`].

pub use array_core::advise_huge_pages;

/// A zero-filled buffer of `n` bytes (zeroed lazily by the OS, then advised as huge pages).
pub fn zeroed(n: usize) -> Vec<u8> {
    let v = vec![0u8; n];
    advise_huge_pages(&v);
    v
}
