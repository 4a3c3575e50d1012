//! Immutable shared text in the tree: string scalars ([`Str`]) and tags ([`Tag`]).
//!
//! Tags and long strings are reference-counted, so a parse can hand the same text to every node
//! that repeats it (a tag on 10 000 arrays, a long key on every row of a table) and cloning a tree
//! copies pointers, not text; short strings (the keys and names of a catalogue's 200 000 rows) sit
//! inside the `Str` itself, with no allocation at all. They keep a [`Node`](crate::Node) at 16
//! bytes: a `Str` is two words, whose last byte also holds the variant of the `Value` around it
//! and whether the node is a tagged one.
//!
//! Like `entries.rs` and `key_index.rs`, this module has `unsafe` code: the representation of
//! [`Str`], each block with its `SAFETY:` argument, exercised by the tests at the end of the file
//! (also under Miri).
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
#[repr(C)]
pub struct Str {
    /// Bytes 0–7: the pointer of shared text, or the first 8 bytes of inline text.
    head: Head,
    /// Bytes 8–14: the length of shared text (little-endian), or the rest of inline text.
    tail: [u8; 7],
    /// Byte 15: which of the two, and the length of inline text.
    mark: Mark,
}

/// The first word of a [`Str`]: a pointer (kept as a pointer, so it keeps its provenance) or
/// plain bytes.
#[derive(Clone, Copy)]
#[repr(C)]
union Head {
    ptr: *const u8,
    bytes: [u8; 8],
}

/// The last byte of a [`Str`]. Being an enum whose values end at 0x8F, it leaves the byte
/// values 0x90 to 0xFF, which no `Str` takes, in which [`Value`](crate::Value) keeps its variant (and a
/// [`Node`](crate::Node) whether it is tagged): so a `Value` and a `Node` are no wider than a
/// `Str`.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Mark {
    Shared = 0,
    Inline0 = 0x80,
    Inline1,
    Inline2,
    Inline3,
    Inline4,
    Inline5,
    Inline6,
    Inline7,
    Inline8,
    Inline9,
    Inline10,
    Inline11,
    Inline12,
    Inline13,
    Inline14,
    Inline15,
}

/// The mark of inline text of each length.
const INLINE_MARKS: [Mark; 16] = [
    Mark::Inline0,
    Mark::Inline1,
    Mark::Inline2,
    Mark::Inline3,
    Mark::Inline4,
    Mark::Inline5,
    Mark::Inline6,
    Mark::Inline7,
    Mark::Inline8,
    Mark::Inline9,
    Mark::Inline10,
    Mark::Inline11,
    Mark::Inline12,
    Mark::Inline13,
    Mark::Inline14,
    Mark::Inline15,
];

// SAFETY: a `Str` is either plain bytes or an owned strong count of an `Arc<str>`, which is
// `Send` and `Sync`; no method hands out mutable access to the shared text.
unsafe impl Send for Str {}
// SAFETY: as for `Send`.
unsafe impl Sync for Str {}

impl Str {
    /// The longest text held without an allocation.
    pub const INLINE_CAPACITY: usize = 15;

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match self.inline_len() {
            // SAFETY: `Str` is `repr(C)` with `head` (8 bytes) at 0 and `tail` at 8, so its
            // first 15 bytes are contiguous and initialised; inline text was copied there from
            // a `&str` by `Str::from`, so its first `n` bytes are UTF-8.
            Some(n) => unsafe {
                let bytes = std::slice::from_raw_parts((self as *const Str).cast::<u8>(), n);
                std::str::from_utf8_unchecked(bytes)
            },
            // SAFETY: the shared parts come from `Arc::into_raw` and the strong count they own
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

    /// The two words of inline text (only for a `Str` whose `inline_len` is `Some`).
    #[inline]
    fn inline_words(&self) -> [u64; 2] {
        // SAFETY: `Str` is `repr(C)`, 16 bytes aligned like a pointer, so it can be read as two
        // words; inline text's 16 bytes are all initialised (`Str::from` writes them whole).
        let [lo, hi] = unsafe { *(self as *const Str).cast::<[u64; 2]>() };
        [u64::from_le(lo), u64::from_le(hi)]
    }

    /// The length of inline text; `None` for shared text.
    #[inline]
    fn inline_len(&self) -> Option<usize> {
        match self.mark {
            Mark::Shared => None,
            m => Some(usize::from(m as u8 & 0x7f)),
        }
    }

    /// The `*const str` of shared text (only for a `Str` whose `inline_len` is `None`).
    fn heap_ptr(&self) -> *const str {
        // SAFETY: the caller checked that this is shared text, whose `head` holds the pointer.
        let ptr = unsafe { self.head.ptr };
        let mut len = [0u8; 8];
        len[..7].copy_from_slice(&self.tail);
        std::ptr::slice_from_raw_parts(ptr, u64::from_le_bytes(len) as usize) as *const str
    }

    /// Long text, copied into a new shared allocation.
    #[inline(never)]
    fn copied(text: &str) -> Str {
        Str::shared(Arc::from(text))
    }

    fn shared(text: Arc<str>) -> Str {
        let len = (text.len() as u64).to_le_bytes();
        // No allocation reaches 2^56 bytes, so the length fits the seven bytes of `tail`.
        debug_assert_eq!(len[7], 0);
        let mut tail = [0u8; 7];
        tail.copy_from_slice(&len[..7]);
        let ptr = Arc::into_raw(text) as *const u8;
        Str {
            head: Head { ptr },
            tail,
            mark: Mark::Shared,
        }
    }
}

impl From<&str> for Str {
    /// Inlined, with long text copied out of line: a `Str` returned from a call is reloaded
    /// whole from the two words it was stored as, a load the processor cannot forward.
    #[inline(always)]
    fn from(s: &str) -> Str {
        let Some(&mark) = INLINE_MARKS.get(s.len()) else {
            return Str::copied(s);
        };
        let [lo, hi] = inline_words(s.as_bytes(), mark);
        // SAFETY: `Str` is `repr(C)`, 16 bytes with the alignment of a pointer (its `head`);
        // in memory order (the words are stored little-endian) the array holds the text
        // zero-padded to 15 bytes and then a valid `Mark`, exactly the inline representation
        // `as_str` reads.
        unsafe { std::mem::transmute::<[u64; 2], Str>([lo.to_le(), hi.to_le()]) }
    }
}

/// The two words of inline text (at most 15 bytes): the text zero-padded to 15 bytes, then
/// `mark` in the top byte. Built in registers from at most two overlapping loads, so the
/// `Str` is stored as two whole words: every key and short value of a tree comes through here,
/// and a `Str` stored byte by byte stalls the load that moves it next.
#[inline(always)]
fn inline_words(src: &[u8], mark: Mark) -> [u64; 2] {
    let n = src.len();
    let le8 = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
    let le4 = |b: &[u8]| u64::from(u32::from_le_bytes(b.try_into().unwrap_or_default()));
    let (lo, hi) = if n >= 8 {
        // The last eight bytes hold bytes `n - 8..n`; bytes `8..n` are their top `n - 8`.
        let last = le8(&src[n - 8..]);
        (
            le8(&src[..8]),
            last.checked_shr(8 * (16 - n) as u32).unwrap_or(0),
        )
    } else if n >= 4 {
        // Two overlapping loads; the bytes both hold are the same.
        (le4(&src[..4]) | le4(&src[n - 4..]) << (8 * (n - 4)), 0)
    } else {
        let w = src
            .iter()
            .enumerate()
            .fold(0, |w, (i, &c)| w | u64::from(c) << (8 * i));
        (w, 0)
    };
    [lo, hi | u64::from(mark as u8) << 56]
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        if s.len() > Str::INLINE_CAPACITY {
            return Str::shared(Arc::from(s));
        }
        Str::from(s.as_str())
    }
}

impl Clone for Str {
    #[inline]
    fn clone(&self) -> Str {
        if self.inline_len().is_none() {
            // SAFETY: the pointer came from `Arc::into_raw` and `self` owns a strong count, so
            // the allocation is alive; the new count is owned by the returned copy.
            unsafe { Arc::increment_strong_count(self.heap_ptr()) };
        }
        Str {
            head: self.head,
            tail: self.tail,
            mark: self.mark,
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
    #[inline]
    fn eq(&self, other: &Str) -> bool {
        // Inline text is zero-padded and its mark holds its length: equal text, equal words.
        if self.mark != Mark::Shared && other.mark != Mark::Shared {
            return self.inline_words() == other.inline_words();
        }
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
    #[inline]
    pub(crate) fn get(&mut self, text: &str) -> Str {
        if text.len() > Self::MAX_LEN || text.len() <= Str::INLINE_CAPACITY {
            return Str::from(text);
        }
        self.cached(text)
    }

    fn cached(&mut self, text: &str) -> Str {
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
    fn equality_is_the_texts_for_every_length_and_representation() {
        let text = "abcdefghijklmnopqrstuvwxyz";
        for len in 0..=Str::INLINE_CAPACITY + 2 {
            let a = Str::from(&text[..len]);
            // The same text held as shared text (as a long string would be) is equal too.
            let shared = Str::shared(Arc::from(&text[..len]));
            assert_eq!(a, shared);
            assert_eq!(shared, a);
            for other in 0..=Str::INLINE_CAPACITY + 2 {
                let b = Str::from(&text[..other]);
                assert_eq!(a == b, len == other, "{len} {other}");
            }
            // One byte changed anywhere makes it differ.
            for at in 0..len {
                let mut changed = text[..len].to_string().into_bytes();
                changed[at] = b'_';
                let changed = String::from_utf8(changed).unwrap_or_default();
                assert_ne!(a, Str::from(changed.as_str()), "{len} {at}");
            }
        }
    }

    #[test]
    fn every_inline_length_keeps_its_bytes() {
        let text = "abcdefghijklmnopqrstuvwxyz";
        for len in 0..=Str::INLINE_CAPACITY + 1 {
            let s = Str::from(&text[..len]);
            assert_eq!(s.as_str(), &text[..len]);
            assert_eq!(s, Str::from(text[..len].to_string()));
        }
    }

    #[test]
    fn short_text_is_inline_and_long_text_shared() {
        let cap = Str::INLINE_CAPACITY;
        for len in [0, 1, cap.saturating_sub(1), cap, cap + 1, 64, 1000] {
            let text = "é".repeat(len / 2) + &"x".repeat(len % 2);
            let s = Str::from(text.as_str());
            let copy = s.clone();
            assert_eq!((s.as_str(), copy.as_str()), (text.as_str(), text.as_str()));
            assert_eq!(s.inline_len().is_some(), text.len() <= cap, "{len}");
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
