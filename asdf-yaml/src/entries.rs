//! The entries of a [`Mapping`](crate::Mapping): one pointer to a single allocation that holds
//! the length, the capacity, the lazily built key index and the `(key, value)` pairs.
//!
//! A `Vec` of entries plus a [`LazyIndex`] would be four words; a mapping has to be one word so
//! that a [`Value`](crate::Value), and with it a [`Node`](crate::Node), is two. An empty mapping
//! allocates nothing. This module, `text.rs` and `key_index.rs` are the crate's only modules with
//! `unsafe` code; each block has its `SAFETY:` argument and the tests at the end exercise them
//! (also under Miri).
#![allow(unsafe_code)]

use std::alloc::{self, Layout};
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use crate::key_index::LazyIndex;

/// What the allocation starts with; the entries follow it.
#[repr(C)]
struct Header {
    len: u32,
    cap: u32,
    index: LazyIndex,
}

/// A growable array of entries (a mapping's `(key, value)` pairs) with its [`LazyIndex`], one
/// word wide.
pub(crate) struct Entries<Entry>(Option<NonNull<Header>>, PhantomData<Entry>);

impl<Entry> Default for Entries<Entry> {
    fn default() -> Self {
        Entries(None, PhantomData)
    }
}

// SAFETY: `Entries` owns its header and entries exactly as a `Vec` owns its items, so it is
// `Send` when they are; the index is only set through its atomic pointer.
unsafe impl<Entry: Send> Send for Entries<Entry> {}
// SAFETY: as for `Send`; `&Entries` gives shared access only.
unsafe impl<Entry: Sync> Sync for Entries<Entry> {}

/// Like `Vec`, running out of address space (or of the `u32` count) is a panic, not an error:
/// the parser refuses a larger mapping, merges included, before (`Error::MappingTooLarge`).
fn capacity_overflow() -> ! {
    panic!("mapping capacity overflow")
}

impl<Entry> Entries<Entry> {
    /// The most entries (the count is kept in 32 bits).
    pub(crate) const MAX_LEN: usize = u32::MAX as usize;

    /// Where the first entry starts in an allocation: right after the header, rounded up to the
    /// entries' alignment.
    const DATA_OFFSET: usize =
        std::mem::size_of::<Header>().next_multiple_of(std::mem::align_of::<Entry>());

    /// The layout of an allocation for `cap` entries.
    fn layout(cap: usize) -> Layout {
        let bytes = std::mem::size_of::<Entry>()
            .checked_mul(cap)
            .and_then(|n| n.checked_add(Self::DATA_OFFSET))
            .unwrap_or_else(|| capacity_overflow());
        let align = std::mem::align_of::<Header>().max(std::mem::align_of::<Entry>());
        Layout::from_size_align(bytes, align).unwrap_or_else(|_| capacity_overflow())
    }

    /// Room for `cap` entries (no allocation for 0).
    pub(crate) fn with_capacity(cap: usize) -> Self {
        if cap == 0 {
            return Self::default();
        }
        let cap32 = u32::try_from(cap).unwrap_or_else(|_| capacity_overflow());
        let layout = Self::layout(cap);
        // SAFETY: the layout has a non-zero size (it holds the header).
        let raw = unsafe { alloc::alloc(layout) }.cast::<Header>();
        let Some(header) = NonNull::new(raw) else {
            alloc::handle_alloc_error(layout)
        };
        // SAFETY: `raw` is a fresh allocation with room and alignment for a `Header`.
        unsafe {
            header.as_ptr().write(Header {
                len: 0,
                cap: cap32,
                index: LazyIndex::default(),
            })
        };
        Entries(Some(header), PhantomData)
    }

    fn header(&self) -> Option<&Header> {
        // SAFETY: a present pointer is a live allocation with an initialised header, owned by
        // `self` and borrowed with it.
        self.0.map(|h| unsafe { &*h.as_ptr() })
    }

    fn header_mut(&mut self) -> Option<&mut Header> {
        // SAFETY: as in `header`; `&mut self` makes the borrow unique.
        self.0.map(|h| unsafe { &mut *h.as_ptr() })
    }

    /// Pointer to the first entry slot of an allocation.
    fn data(header: NonNull<Header>) -> *mut Entry {
        // SAFETY: every allocation has room for the header and its padding, so `DATA_OFFSET` is
        // within it or one past its end (for capacity 0, which is never allocated).
        unsafe {
            header
                .as_ptr()
                .cast::<u8>()
                .add(Self::DATA_OFFSET)
                .cast::<Entry>()
        }
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.header().map_or(0, |h| h.len as usize)
    }

    fn cap(&self) -> usize {
        self.header().map_or(0, |h| h.cap as usize)
    }

    /// The key index, when the mapping has an allocation (an empty one has none to index).
    pub(crate) fn index(&self) -> Option<&LazyIndex> {
        self.header().map(|h| &h.index)
    }

    /// Mutable access to the key index.
    pub(crate) fn index_mut(&mut self) -> Option<&mut LazyIndex> {
        self.header_mut().map(|h| &mut h.index)
    }

    /// The entries in order.
    pub(crate) fn as_slice(&self) -> &[Entry] {
        match self.0 {
            None => &[],
            // SAFETY: the first `len` slots are initialised entries owned by `self`.
            Some(h) => unsafe { std::slice::from_raw_parts(Self::data(h), self.len()) },
        }
    }

    /// The entries in order, mutable.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [Entry] {
        let len = self.len();
        match self.0 {
            None => &mut [],
            // SAFETY: as in `as_slice`; `&mut self` makes the borrow unique.
            Some(h) => unsafe { std::slice::from_raw_parts_mut(Self::data(h), len) },
        }
    }

    /// Appends an entry, doubling the capacity when full.
    pub(crate) fn push(&mut self, entry: Entry) {
        let (len, cap) = (self.len(), self.cap());
        if len == cap {
            let bigger = cap.saturating_mul(2).clamp(4, Self::MAX_LEN);
            if bigger == cap {
                capacity_overflow()
            }
            self.grow(bigger);
        }
        let Some(h) = self.0 else { capacity_overflow() };
        // SAFETY: `grow` left room for at least `len + 1` entries; slot `len` is uninitialised.
        unsafe { Self::data(h).add(len).write(entry) };
        if let Some(header) = self.header_mut() {
            header.len += 1;
        }
    }

    /// Moves the entries into an allocation for `cap` entries (`cap` >= `len`).
    fn grow(&mut self, cap: usize) {
        let mut bigger = Self::with_capacity(cap);
        let len = self.len();
        if let (Some(old), Some(new)) = (self.0, bigger.0) {
            // SAFETY: both allocations hold at least `len` slots and do not overlap; the old
            // slots are given up (its length set to 0) so they are not dropped twice.
            unsafe {
                ptr::copy_nonoverlapping(Self::data(old), Self::data(new), len);
            }
            if let (Some(from), Some(to)) = (self.header_mut(), bigger.header_mut()) {
                from.len = 0;
                to.len = len as u32;
                std::mem::swap(&mut from.index, &mut to.index);
            }
        }
        std::mem::swap(self, &mut bigger);
    }

    /// Removes and returns entry `i`, shifting the later ones down.
    pub(crate) fn remove(&mut self, i: usize) -> Option<Entry> {
        let len = self.len();
        let h = self.0.filter(|_| i < len)?;
        let data = Self::data(h);
        // SAFETY: `i < len`, so slot `i` holds an entry, read out once; the `len - i - 1` later
        // entries move down one slot within the allocation, and the length drops by one.
        let entry = unsafe {
            let entry = data.add(i).read();
            ptr::copy(data.add(i + 1), data.add(i), len - i - 1);
            entry
        };
        if let Some(header) = self.header_mut() {
            header.len -= 1;
        }
        Some(entry)
    }

    /// The entries as a `Vec`, moved out (the allocation is freed).
    pub(crate) fn into_vec(mut self) -> Vec<Entry> {
        let len = self.len();
        let mut out = Vec::with_capacity(len);
        if let Some(h) = self.0 {
            // SAFETY: the first `len` slots are initialised; they move into `out`, whose
            // capacity is `len`, and this `Entries` gives them up (length 0) before it drops.
            unsafe {
                ptr::copy_nonoverlapping(Self::data(h), out.as_mut_ptr(), len);
                out.set_len(len);
            }
            if let Some(header) = self.header_mut() {
                header.len = 0;
            }
        }
        out
    }
}

impl<Entry> Drop for Entries<Entry> {
    fn drop(&mut self) {
        let Some(h) = self.0 else { return };
        /// Frees the header and the allocation, also when dropping an entry panics.
        struct Free<Entry>(NonNull<Header>, usize, PhantomData<Entry>);
        impl<Entry> Drop for Free<Entry> {
            fn drop(&mut self) {
                // SAFETY: the header is initialised and owned and dropped once here; then the
                // allocation made by `with_capacity` for `self.1` entries is freed.
                unsafe {
                    ptr::drop_in_place(self.0.as_ptr());
                    alloc::dealloc(
                        self.0.as_ptr().cast::<u8>(),
                        Entries::<Entry>::layout(self.1),
                    );
                }
            }
        }
        let _free = Free::<Entry>(h, self.cap(), PhantomData);
        // SAFETY: the entries are initialised and owned, and dropped once.
        unsafe { ptr::drop_in_place(self.as_mut_slice()) };
    }
}

impl<Entry> std::ops::Deref for Entries<Entry> {
    type Target = [Entry];
    fn deref(&self) -> &[Entry] {
        self.as_slice()
    }
}

impl<Entry> std::ops::DerefMut for Entries<Entry> {
    fn deref_mut(&mut self) -> &mut [Entry] {
        self.as_mut_slice()
    }
}

/// A clone starts without a key index, like [`LazyIndex`]'s.
impl<Entry: Clone> Clone for Entries<Entry> {
    fn clone(&self) -> Self {
        self.as_slice().iter().cloned().collect()
    }
}

/// Allocates for the iterator's lower size bound once, and grows only if it yields more.
impl<Entry> FromIterator<Entry> for Entries<Entry> {
    fn from_iter<I: IntoIterator<Item = Entry>>(iter: I) -> Self {
        let mut iter = iter.into_iter();
        let mut out = Self::with_capacity(iter.size_hint().0);
        if let Some(h) = out.0 {
            let (data, cap) = (Self::data(h), out.cap());
            let mut len = 0;
            while len < cap {
                let Some(e) = iter.next() else { break };
                // SAFETY: slot `len` (below the capacity) is uninitialised and owned; the
                // header's count follows each write, so a panicking iterator leaves it exact.
                unsafe {
                    data.add(len).write(e);
                    (*h.as_ptr()).len = len as u32 + 1;
                }
                len += 1;
            }
        }
        for e in iter {
            out.push(e);
        }
        out
    }
}

impl<Entry> Extend<Entry> for Entries<Entry> {
    fn extend<I: IntoIterator<Item = Entry>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        let want = self.len().saturating_add(iter.size_hint().0);
        if want > self.cap() {
            // At least doubling, as `push` does: a mapping extended many times (a merge of many
            // mappings) is copied a logarithmic number of times, not once per extension.
            let doubled = self.cap().saturating_mul(2);
            self.grow(want.max(doubled).clamp(4, Self::MAX_LEN.max(want)));
        }
        for e in iter {
            self.push(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key_index::KeyIndex;
    use crate::text::Str;

    type Entry = (Str, i64);

    fn entry(i: usize) -> Entry {
        // Long text, so the entries own heap allocations that Miri tracks.
        (
            Str::from(format!("a key long enough for the heap {i}")),
            i as i64,
        )
    }

    fn values(e: &Entries<Entry>) -> Vec<i64> {
        e.as_slice().iter().map(|(_, v)| *v).collect()
    }

    #[test]
    fn pushes_grow_removes_shift_and_everything_is_freed() {
        let mut e = Entries::<Entry>::default();
        assert_eq!((e.len(), e.as_slice().len()), (0, 0));
        assert!(e.index().is_none() && e.remove(0).is_none());
        for i in 0..37 {
            e.push(entry(i));
        }
        assert_eq!(e.len(), 37);
        assert_eq!(values(&e), (0..37).collect::<Vec<_>>());
        assert_eq!(e.remove(0).map(|(_, v)| v), Some(0));
        assert_eq!(e.remove(35).map(|(_, v)| v), Some(36));
        assert!(e.remove(35).is_none());
        assert_eq!(values(&e), (1..36).collect::<Vec<_>>());
        e.as_mut_slice()[0].1 = -1;
        assert_eq!(values(&e.clone())[..2], [-1, 2]);
        let v = e.into_vec();
        assert_eq!(v.len(), 35);
    }

    #[test]
    fn collect_sizes_exactly_extend_doubles_and_both_keep_the_index() {
        let mut e: Entries<Entry> = (0..5).map(entry).collect();
        assert_eq!(e.cap(), 5);
        let index = e
            .index()
            .map(|i| i.get_or_init(KeyIndex::default) as *const KeyIndex);
        e.extend((5..9).map(entry));
        assert_eq!((e.len(), e.cap()), (9, 10));
        // Growing moved the index along with the entries.
        let moved = e
            .index()
            .map(|i| i.get_or_init(|| unreachable!()) as *const KeyIndex);
        assert_eq!(index, moved);
        if let Some(i) = e.index_mut().and_then(LazyIndex::get_mut) {
            i.insert(Str::from("k"), 0);
        }
        let mut copy = e.clone();
        assert!(copy.index_mut().and_then(LazyIndex::get_mut).is_none());
        assert_eq!(values(&e), (0..9).collect::<Vec<_>>());
        let empty: Entries<Entry> = std::iter::empty().collect();
        assert!(empty.0.is_none());
    }

    #[test]
    fn repeated_extends_grow_geometrically() {
        let mut e = Entries::<Entry>::default();
        for i in 0..1000 {
            e.extend([entry(i)]);
        }
        // Capacities 4, 8, ..., 1024: each extension did not copy everything again.
        assert_eq!((e.len(), e.cap()), (1000, 1024));
        assert_eq!(values(&e), (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn a_panicking_entry_drop_still_frees_the_rest() {
        struct Bomb(bool);
        impl Drop for Bomb {
            fn drop(&mut self) {
                if self.0 {
                    panic!("an entry's drop panics");
                }
            }
        }
        let e: Entries<(Bomb, Str)> = (0..6).map(|i| (Bomb(i == 2), entry(i).0)).collect();
        let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(e)));
        // The panic comes through; the entries after the bomb, the header and the allocation
        // are freed all the same (Miri checks for leaks).
        assert!(dropped.is_err());
    }

    #[test]
    fn entries_cross_threads() {
        let e: Entries<Entry> = (0..20).map(entry).collect();
        let sum = std::thread::spawn(move || values(&e).iter().sum::<i64>()).join();
        assert_eq!(sum.ok(), Some(190));
    }
}
