//! The key index of a large [`Mapping`](crate::Mapping), built on its first lookup.
//!
//! The index sits in the header of the mapping's entries (`entries.rs`), so a mapping is one
//! word. It is one atomic pointer, set at most once through `&self` (lookups take `&self`), read
//! freely, and changed or dropped through `&mut self`. This, `entries.rs` and `text.rs` are the
//! crate's only modules with `unsafe` code; each block has its `SAFETY:` argument and the tests at
//! the end exercise them (also under Miri).
#![allow(unsafe_code)]

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::text::Str;

/// Position of the first entry with each string key (keys share the entries' text).
pub(crate) type KeyIndex = std::collections::HashMap<Str, usize, foldhash::fast::RandomState>;

/// A [`KeyIndex`] built on demand: null until the first lookup, then an owned `Box<KeyIndex>`.
#[derive(Default)]
pub(crate) struct LazyIndex(AtomicPtr<KeyIndex>);

impl LazyIndex {
    /// The index, built by `build` if there is none yet. When two threads race, one index wins
    /// and the other is dropped; both callers see the winner.
    pub(crate) fn get_or_init(&self, build: impl FnOnce() -> KeyIndex) -> &KeyIndex {
        let current = self.0.load(Ordering::Acquire);
        if !current.is_null() {
            // SAFETY: a non-null pointer was stored by a successful `compare_exchange` below from
            // `Box::into_raw`, and is only freed through `&mut self` (`take`, `drop`), which
            // cannot overlap this `&self` borrow.
            return unsafe { &*current };
        }
        let fresh = Box::into_raw(Box::new(build()));
        match (self.0).compare_exchange(ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire)
        {
            // SAFETY: `fresh` is now owned by `self` (see above).
            Ok(_) => unsafe { &*fresh },
            Err(winner) => {
                // SAFETY: `fresh` came from `Box::into_raw` above and was never shared.
                drop(unsafe { Box::from_raw(fresh) });
                // SAFETY: as for `current`: the winner is an owned, live box.
                unsafe { &*winner }
            }
        }
    }

    /// The index, if built, for an update in place.
    pub(crate) fn get_mut(&mut self) -> Option<&mut KeyIndex> {
        let p = *self.0.get_mut();
        // SAFETY: non-null means an owned box (see `get_or_init`); `&mut self` makes this the
        // only reference to it.
        (!p.is_null()).then(|| unsafe { &mut *p })
    }

    /// Drops the index (it is rebuilt on the next lookup).
    pub(crate) fn take(&mut self) {
        let p = std::mem::replace(self.0.get_mut(), ptr::null_mut());
        if !p.is_null() {
            // SAFETY: an owned box (see `get_or_init`), no longer reachable from `self`.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

impl Drop for LazyIndex {
    fn drop(&mut self) {
        self.take();
    }
}

/// A clone starts without an index: it is rebuilt on the clone's first lookup.
impl Clone for LazyIndex {
    fn clone(&self) -> LazyIndex {
        LazyIndex::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(keys: &[&str]) -> KeyIndex {
        keys.iter()
            .enumerate()
            .map(|(i, k)| (Str::from(*k), i))
            .collect()
    }

    #[test]
    fn built_once_updated_and_dropped() {
        let mut lazy = LazyIndex::default();
        assert!(lazy.get_mut().is_none());
        let first = lazy.get_or_init(|| index_of(&["a", "b"])) as *const KeyIndex;
        let again = lazy.get_or_init(|| unreachable!("built twice")) as *const KeyIndex;
        assert_eq!(first, again);
        lazy.get_mut()
            .map(|i| i.insert(Str::from("a key long enough for the heap"), 2));
        assert_eq!(lazy.get_or_init(KeyIndex::default).len(), 3);
        assert!(lazy.clone().get_mut().is_none());
        lazy.take();
        assert!(lazy.get_mut().is_none());
        assert_eq!(lazy.get_or_init(|| index_of(&["c"])).get("c"), Some(&0));
    }

    #[test]
    fn racing_builders_agree_on_one_index() {
        let lazy = LazyIndex::default();
        let seen: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let lazy = &lazy;
                    s.spawn(move || {
                        lazy.get_or_init(|| index_of(&["x"])) as *const KeyIndex as usize
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        assert_eq!(seen.len(), 4);
        assert!(seen.iter().all(|&p| p == seen[0]));
    }
}
