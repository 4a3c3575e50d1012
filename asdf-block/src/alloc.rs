//! Buffers for decoded data: large ones are backed by transparent huge pages.
//!
//! Filling a fresh buffer of hundreds of MiB is dominated by page faults; asking Linux for
//! transparent huge pages (as NumPy does for arrays of 4 MiB and more) takes 512× fewer faults
//! and roughly halves the time of decoding or copying into it. The advice itself lives in the
//! workspace's vocabulary crate, [`array_core`].

pub use array_core::advise_huge_pages;

/// A zero-filled buffer of `n` bytes (zeroed lazily by the OS, then advised as huge pages), or
/// an error when the allocation fails: a block that legitimately decodes to gigabytes on a
/// machine (or under an address-space limit) without them is an error naming the block, never
/// an abort.
///
/// ```
/// assert_eq!(asdf_block::alloc::zeroed(10).unwrap(), [0; 10]);
/// assert!(asdf_block::alloc::zeroed(usize::MAX / 2).is_err());
/// ```
pub fn zeroed(n: usize) -> Result<Vec<u8>, array_core::AllocError> {
    array_core::zeroed_vec(n)
}
