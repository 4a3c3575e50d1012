//! Immutable shared text in the tree: string scalars ([`Str`]) and tags ([`Tag`]).
//!
//! Tags and long strings are reference-counted, so a parse can hand the same text to every node
//! that repeats it (a tag on 10 000 arrays, a long key on every row of a table) and cloning a tree
//! copies pointers, not text; short strings (the keys and names of a catalogue's 200 000 rows) sit
//! inside the `Str` itself, with no allocation at all. They keep a [`Node`](crate::Node) at 32
//! bytes: a `Str` is two words, a `Tag` one.
//!
//! This is the crate's only module with `unsafe` code: the union behind [`Str`], each block with
//! its `SAFETY:` argument, exercised by the tests at the end of the file.
#![allow(unsafe_code)]

use std::borrow::Borrow;
use std::fmt;
use std::hash::BuildHasher;
use std::ops::Deref;
use std::sync::Arc;

/// The text of a string scalar (and of a big integer's digits): an immutable, cheaply cloned
/// `str`.
///
/// Two words wide. Text of up to [`Str::INLINE_CAPACITY`] bytes (most keys, names, units and
/// enums) is held in those two words, with no allocation; longer text is a shared `Arc<str>`,
/// so cloning never copies it.
///
/// It reads like a `&str` (`Deref`, comparisons with `str` and `String`) and converts from and
/// into `String`.
///
/// ```
/// use asdf_yaml::{parse_str, Str, Value};
/// let tree = parse_str("a: hello").unwrap();
/// let Value::Str(s) = tree["a"].value() else { panic!("a string") };
/// assert_eq!(s, "hello");
/// assert_eq!(s.len(), 5);
/// let owned: String = s.to_string();
/// assert_eq!(Str::from(owned), *s);
/// ```
pub struct Str(Repr);

/// A [`Str`]'s two words: the bytes of a short text, or the parts of a shared `Arc<str>`.
///
/// On 64-bit little-endian targets byte 15 is the top byte of `heap.len`, which is zero for
/// every real length (below 2^56), so a set top bit there marks inline text and the bits below
/// it hold the length. Elsewhere every `Str` is on the heap and byte 15 is never read.
#[repr(C)]
union Repr {
    heap: Heap,
    inline: [u8; 16],
}

/// An `Arc<str>` taken apart by `Arc::into_raw`: it owns one strong count.
#[derive(Clone, Copy)]
#[repr(C)]
struct Heap {
    ptr: *const u8,
    len: usize,
}

/// Whether this target keeps short text inline (see [`Repr`]).
const INLINE: bool = cfg!(all(target_endian = "little", target_pointer_width = "64"));
/// The mark on byte 15 of inline text.
const INLINE_MARK: u8 = 0x80;

// SAFETY: a `Str` is either plain bytes or an owned strong count of an `Arc<str>`, which is
// `Send` and `Sync`; no method hands out mutable access to the shared text.
unsafe impl Send for Str {}
// SAFETY: as for `Send`.
unsafe impl Sync for Str {}

impl Str {
    /// The longest text held without an allocation (15 bytes on 64-bit little-endian targets;
    /// 0, every text shared, on others).
    pub const INLINE_CAPACITY: usize = if INLINE { 15 } else { 0 };

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match self.inline_len() {
            // SAFETY: inline text was copied from a `&str` by `Str::from`, so its first `n`
            // bytes are UTF-8.
            Some(n) => unsafe { std::str::from_utf8_unchecked(self.0.inline.get_unchecked(..n)) },
            // SAFETY: the heap parts come from `Arc::into_raw` and the strong count they own
            // keeps the text alive at least as long as `self`.
            None => unsafe { &*self.heap_ptr() },
        }
    }

    /// Whether `self` and `other` are one shared allocation (inline text never is).
    pub fn shares(&self, other: &Str) -> bool {
        self.inline_len().is_none()
            && other.inline_len().is_none()
            && std::ptr::eq(self.heap_ptr(), other.heap_ptr())
    }

    /// The length of inline text; `None` for shared text.
    #[inline]
    fn inline_len(&self) -> Option<usize> {
        if !INLINE {
            return None;
        }
        // SAFETY: every `Repr` has 16 initialised bytes (both variants are 16 bytes of plain
        // data), so reading byte 15 is defined whichever variant was written.
        let last = unsafe { self.0.inline[15] };
        (last & INLINE_MARK != 0).then_some(usize::from(last & !INLINE_MARK))
    }

    /// The `*const str` of shared text (only for a `Str` whose `inline_len` is `None`).
    fn heap_ptr(&self) -> *const str {
        // SAFETY: the caller checked that this is the heap variant.
        let Heap { ptr, len } = unsafe { self.0.heap };
        std::ptr::slice_from_raw_parts(ptr, len) as *const str
    }

    fn shared(text: Arc<str>) -> Str {
        let len = text.len();
        // No allocation reaches 2^56 bytes, so byte 15 (the top byte of `len`) stays clear.
        debug_assert!(len < 1 << 56);
        let ptr = Arc::into_raw(text) as *const u8;
        Str(Repr {
            heap: Heap { ptr, len },
        })
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        if !INLINE || s.len() > Str::INLINE_CAPACITY {
            return Str::shared(Arc::from(s));
        }
        let mut inline = [0u8; 16];
        inline[..s.len()].copy_from_slice(s.as_bytes());
        // At most 15: fits below the mark.
        inline[15] = INLINE_MARK | s.len() as u8;
        Str(Repr { inline })
    }
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        if !INLINE || s.len() > Str::INLINE_CAPACITY {
            return Str::shared(Arc::from(s));
        }
        Str::from(s.as_str())
    }
}

impl Clone for Str {
    #[inline]
    fn clone(&self) -> Str {
        match self.inline_len() {
            Some(_) => {
                // SAFETY: `inline_len` found the inline variant.
                let inline = unsafe { self.0.inline };
                Str(Repr { inline })
            }
            None => {
                // SAFETY: the pointer came from `Arc::into_raw` and `self` owns a strong count,
                // so the allocation is alive; the new count is owned by the returned copy.
                unsafe { Arc::increment_strong_count(self.heap_ptr()) };
                // SAFETY: `inline_len` found the heap variant.
                let heap = unsafe { self.0.heap };
                Str(Repr { heap })
            }
        }
    }
}

impl Drop for Str {
    fn drop(&mut self) {
        if self.inline_len().is_none() {
            // SAFETY: the pointer came from `Arc::into_raw` and `self` owns one strong count,
            // given back here exactly once.
            drop(unsafe { Arc::from_raw(self.heap_ptr()) });
        }
    }
}

impl Default for Str {
    fn default() -> Str {
        Str::from("")
    }
}

impl PartialEq for Str {
    fn eq(&self, other: &Str) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Str {}

impl PartialOrd for Str {
    fn partial_cmp(&self, other: &Str) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Str {
    fn cmp(&self, other: &Str) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

/// Hashes as the `str` does, so a `Str`-keyed map can be searched with a `&str`.
impl std::hash::Hash for Str {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl Deref for Str {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Str {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Str> for String {
    fn from(s: Str) -> String {
        s.as_str().to_string()
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Str {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<Str> for str {
    fn eq(&self, other: &Str) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Str> for &str {
    fn eq(&self, other: &Str) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Str> for String {
    fn eq(&self, other: &Str) -> bool {
        *self == other.as_str()
    }
}

/// A tag URI as a node stores it: shared by every node that carries it, and one word wide (the
/// text sits behind one more pointer, read only when a tag is looked at).
///
/// ```
/// use asdf_yaml::{Node, Tag};
/// let tag = Tag::new("tag:example.org:thing-1.0.0");
/// let a = Node::from(1).with_shared_tag(tag.clone());
/// let b = Node::from(2).with_shared_tag(tag.clone());
/// assert_eq!(a.tag(), Some("tag:example.org:thing-1.0.0"));
/// assert_eq!(a.tag(), b.tag());
/// assert!(tag.same(&tag.clone()) && !tag.same(&Tag::new(tag.as_str())));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Tag(Arc<Box<str>>);

impl Tag {
    /// A tag of the full URI `uri`.
    pub fn new(uri: &str) -> Tag {
        Tag(Arc::new(Box::from(uri)))
    }

    /// The full URI.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `self` and `other` are one shared tag (not merely equal text).
    pub fn same(&self, other: &Tag) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Borrow<str> for Tag {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self.0, f)
    }
}

impl From<String> for Tag {
    fn from(s: String) -> Tag {
        Tag(Arc::new(s.into_boxed_str()))
    }
}

/// Strings a parse has seen recently, so that repeated ones (mapping keys above all) are stored
/// once.
///
/// A direct-mapped cache, not a growing table: each string has one slot, picked by a hash seeded
/// per interner, and a newcomer replaces whatever held its slot. The keys of a table's rows and
/// its repeated values hit; unique strings cost one hash and one comparison. Its size is fixed,
/// so a hostile document of unique keys costs no more memory than without it.
pub(crate) struct Interner {
    slots: Box<[Option<Str>]>,
    hasher: foldhash::fast::RandomState,
}

impl Interner {
    /// Number of slots.
    pub(crate) const SLOTS: usize = 1 << 10;
    /// The longest string cached.
    pub(crate) const MAX_LEN: usize = 64;

    pub(crate) fn new() -> Interner {
        Interner {
            slots: vec![None; Self::SLOTS].into_boxed_slice(),
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    /// `text` as a [`Str`]: the cached copy when its slot holds the same text, a new one (cached)
    /// otherwise. Text short enough to sit inside the `Str` is never cached: copying it is
    /// cheaper than looking it up.
    pub(crate) fn get(&mut self, text: &str) -> Str {
        if text.len() > Self::MAX_LEN || text.len() <= Str::INLINE_CAPACITY {
            return Str::from(text);
        }
        let slot = (self.hasher.hash_one(text) as usize) % Self::SLOTS;
        match &mut self.slots[slot] {
            Some(s) if s.as_str() == text => s.clone(),
            entry => entry.insert(Str::from(text)).clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interner_shares_repeats_and_stays_bounded() {
        let mut i = Interner::new();
        let a = i.get("a key longer than the inline text");
        let b = i.get("a key longer than the inline text");
        assert!(a.shares(&b));
        let long = "x".repeat(Interner::MAX_LEN + 1);
        assert!(!i.get(&long).shares(&i.get(&long)));
        for k in 0..10 * Interner::SLOTS {
            assert_eq!(i.get(&format!("k{k}")), format!("k{k}"));
        }
        assert_eq!(i.slots.len(), Interner::SLOTS);
    }

    #[test]
    fn short_text_is_inline_and_long_text_shared() {
        let cap = Str::INLINE_CAPACITY;
        for len in [0, 1, cap.saturating_sub(1), cap, cap + 1, 64, 1000] {
            let text = "é".repeat(len / 2) + &"x".repeat(len % 2);
            let s = Str::from(text.as_str());
            let copy = s.clone();
            assert_eq!((s.as_str(), copy.as_str()), (text.as_str(), text.as_str()));
            assert_eq!(
                s.inline_len().is_some(),
                INLINE && text.len() <= cap,
                "{len}"
            );
            assert_eq!(s.shares(&copy), s.inline_len().is_none(), "{len}");
            assert_eq!(Str::from(text.clone()), s);
        }
        assert_eq!(Str::default(), "");
        assert_eq!(std::mem::size_of::<Str>(), 16);
    }

    #[test]
    fn shared_text_is_counted_and_freed() {
        let text: Arc<str> = Arc::from("a string too long to be held inline");
        let s = Str::shared(text.clone());
        assert_eq!(Arc::strong_count(&text), 2);
        let clones: Vec<Str> = (0..3).map(|_| s.clone()).collect();
        assert_eq!(Arc::strong_count(&text), 5);
        let sent = std::thread::spawn(move || clones.iter().map(|c| c.len()).sum::<usize>());
        assert_eq!(sent.join().ok(), Some(3 * text.len()));
        assert_eq!(Arc::strong_count(&text), 2);
        drop(s);
        assert_eq!(Arc::strong_count(&text), 1);
    }

    #[test]
    fn str_orders_and_hashes_as_its_text() {
        use std::collections::HashSet;
        let short = Str::from("abc");
        let long = Str::from("abc but long enough for the heap");
        assert!(short < long && long.cmp(&short).is_gt());
        let set: HashSet<Str> = [short.clone(), long.clone()].into_iter().collect();
        assert!(set.contains("abc") && set.contains(long.as_str()) && !set.contains("ab"));
    }

    #[test]
    fn str_compares_with_every_string_type() {
        let s = Str::from("abc");
        let owned = String::from("abc");
        assert_eq!(s, "abc");
        assert_eq!("abc", s);
        assert_eq!(s, owned);
        assert_eq!(owned, s);
        assert_eq!(format!("{s} {s:?}"), "abc \"abc\"");
        assert_eq!(String::from(s), "abc");
    }
}
