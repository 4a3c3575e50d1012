//! Immutable shared text in the tree: string scalars ([`Str`]) and tags ([`Tag`]).
//!
//! Both are reference-counted, so a parse can hand the same text to every node that repeats it
//! (the keys of a catalogue's 200 000 rows, a tag on 10 000 arrays) and cloning a tree copies
//! pointers, not text. They keep a [`Node`](crate::Node) at 32 bytes: a `Str` is two words, a
//! `Tag` one.

use std::borrow::Borrow;
use std::fmt;
use std::hash::BuildHasher;
use std::ops::Deref;
use std::sync::Arc;

/// The text of a string scalar (and of a big integer's digits): an immutable, cheaply cloned
/// `str`.
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
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Str(Arc<str>);

impl Str {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for Str {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Str {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        Str(Arc::from(s))
    }
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        Str(Arc::from(s))
    }
}

impl From<Str> for String {
    fn from(s: Str) -> String {
        s.0.to_string()
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for Str {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Str> for str {
    fn eq(&self, other: &Str) -> bool {
        *self == *other.0
    }
}

impl PartialEq<Str> for &str {
    fn eq(&self, other: &Str) -> bool {
        **self == *other.0
    }
}

impl PartialEq<Str> for String {
    fn eq(&self, other: &Str) -> bool {
        **self == *other.0
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
    /// otherwise.
    pub(crate) fn get(&mut self, text: &str) -> Str {
        if text.len() > Self::MAX_LEN {
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
        let a = i.get("name");
        let b = i.get("name");
        assert!(Arc::ptr_eq(&a.0, &b.0));
        let long = "x".repeat(Interner::MAX_LEN + 1);
        assert!(!Arc::ptr_eq(&i.get(&long).0, &i.get(&long).0));
        for k in 0..10 * Interner::SLOTS {
            assert_eq!(i.get(&format!("k{k}")), format!("k{k}"));
        }
        assert_eq!(i.slots.len(), Interner::SLOTS);
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
