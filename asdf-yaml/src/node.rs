//! The node model: a tagged YAML 1.1 tree with shared (anchored) subtrees.

use std::fmt;
use std::sync::Arc;

use thin_vec::ThinVec;

use crate::entries;
use crate::key_index::{KeyIndex, LazyIndex};
use crate::text::{Str, Tag};

/// One node of the tree: an optional tag and a [`Value`].
///
/// Tags are full URIs (`tag:stsci.edu:asdf/core/ndarray-1.1.0`); shorthand handles are expanded
/// when parsing and re-applied when emitting. A node whose value is [`Value::Shared`] is an
/// anchored subtree that may appear at several places of the tree: its tag is the tag of the
/// shared node, and the accessors look through the sharing transparently.
///
/// ```
/// use asdf_yaml::{Node, Value};
/// let n = Node::mapping([("shape", Node::sequence([2i64, 3].map(Node::from)))])
///     .with_tag("tag:stsci.edu:asdf/core/ndarray-1.1.0");
/// assert_eq!(n.pointer("/shape/1").and_then(Node::as_i64), Some(3));
/// assert_eq!(n.tag(), Some("tag:stsci.edu:asdf/core/ndarray-1.1.0"));
/// assert!(matches!(n.get("shape").map(Node::value), Some(Value::Seq(_))));
/// ```
#[derive(Clone, Default)]
pub struct Node(Repr);

/// A node as stored: most nodes carry no tag and are their value alone; a tagged node boxes its
/// tag with its value.
#[derive(Clone)]
enum Repr {
    Plain(Value),
    Tagged(Box<Tagged>),
}

#[derive(Clone)]
struct Tagged {
    /// Shared: the parser stores each distinct tag once, however many nodes carry it.
    tag: Tag,
    value: Value,
}

impl Default for Repr {
    fn default() -> Repr {
        Repr::Plain(Value::Null)
    }
}

// A tree is mostly nodes: a node is two words, its value. A `Str` is the one two-word payload,
// and the last byte of a `Str` has values no `Str` takes, which hold the value's variant and
// whether the node is a tagged one (a one-word box); every other payload is one word (rare ones
// are boxed for that).
#[cfg(target_pointer_width = "64")]
const _: () = assert!(
    std::mem::size_of::<Node>() == 16
        && std::mem::size_of::<Value>() == 16
        && std::mem::size_of::<Mapping>() == 8
);

/// The value of a [`Node`].
#[derive(Clone, Default)]
pub enum Value {
    /// `null`, `~` or empty.
    #[default]
    Null,
    /// A YAML 1.1 bool (`true`, `yes`, `on`, ...).
    Bool(bool),
    /// An integer within the `i64` range.
    Int(i64),
    /// An integer beyond `i64` (also the upper half of the `u64` range): its exact decimal digits,
    /// with a leading `-` when negative, for the `core/integer` layer to take. Boxed: big
    /// integers are rare, and a `Value` has room for one two-word payload only, the `Str`.
    BigInt(Box<Str>),
    /// A float (`1.5`, `1.0e+20`, `.inf`, `.nan`).
    Float(f64),
    /// A string (also the text of unknown-tagged scalars and of timestamps).
    Str(Str),
    /// A sequence (a [`ThinVec`]: one word, its length and capacity sit with the items).
    Seq(ThinVec<Node>),
    /// A mapping, in insertion order (one word: it needs no box of its own).
    Map(Mapping),
    /// A nested sequence of scalars held compactly by whoever built it (an inline array's numbers),
    /// written by the emitter as the equivalent [`Value::Seq`]s without a node per item. The
    /// parser never produces one. [`Node::as_seq`] and [`Node::index`] see nothing in it (they
    /// return references to nodes it does not hold); [`Node::len`] and [`Node::kind`] describe the
    /// sequence, equality compares its items, and [`Node::unpacked`] gives the nodes.
    Packed(Packed),
    /// A subtree shared by several places of the tree (a YAML anchor and its aliases). Cloning the
    /// `Arc` keeps it shared; the emitter writes `&idNNN` at the first place and `*idNNN` at the
    /// others.
    Shared(Arc<Node>),
}

/// An insertion-ordered mapping. Keys are nodes (normally strings; ints, bools and other scalars
/// are allowed).
///
/// One word: the entries sit behind one pointer with their length, their capacity and the key
/// index, so a mapping fits inside its [`Value`] and costs one allocation.
#[derive(Clone, Default)]
pub struct Mapping {
    /// The entries, and with them the position of the first entry with each string key, built
    /// on the first lookup in a mapping of at least [`INDEX_MIN`] entries (so lookups in
    /// 10 000-key trees are not quadratic), kept up to date by appends and dropped by removals.
    entries: Entries,
}

/// A mapping's entries, with its key index.
pub(crate) type Entries = entries::Entries<(Node, Node)>;

/// The string key of an entry, shared with the entry.
fn str_key(k: &Node) -> Option<&Str> {
    match k.value() {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

/// Mappings smaller than this are searched linearly (faster than hashing).
const INDEX_MIN: usize = 16;

impl PartialEq for Mapping {
    fn eq(&self, other: &Mapping) -> bool {
        *self.entries == *other.entries
    }
}

impl Mapping {
    /// The most entries a mapping holds (4 294 967 295: the parser refuses a larger mapping
    /// with [`Error::MappingTooLarge`](crate::Error::MappingTooLarge), and inserting beyond it
    /// panics, as growing a `Vec` past its capacity does).
    pub const MAX_LEN: usize = Entries::MAX_LEN;

    /// An empty mapping.
    pub fn new() -> Mapping {
        Mapping::default()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the mapping has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Position of the first entry whose key is the string `key`.
    pub(crate) fn position(&self, key: &str) -> Option<usize> {
        if self.entries.len() < INDEX_MIN {
            return self
                .entries
                .iter()
                .position(|(k, _)| k.as_str() == Some(key));
        }
        let lazy = self.entries.index()?;
        let index = lazy.get_or_init(|| {
            let mut m = KeyIndex::with_capacity_and_hasher(self.entries.len(), Default::default());
            for (i, (k, _)) in self.entries.iter().enumerate() {
                if let Some(s) = str_key(k) {
                    m.entry(s.clone()).or_insert(i);
                }
            }
            m
        });
        index.get(key).copied()
    }

    /// Records a newly appended entry in the index, if the index exists.
    fn indexed_push(&mut self, key: Node, value: Node) {
        let len = self.entries.len();
        let index = self.entries.index_mut().and_then(LazyIndex::get_mut);
        if let (Some(index), Some(s)) = (index, str_key(&key)) {
            index.entry(s.clone()).or_insert(len);
        }
        self.entries.push((key, value));
    }

    /// The value of the entry whose key is the string `key`.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.position(key).map(|i| &self.entries[i].1)
    }

    /// Mutable access to the value of the entry whose key is the string `key`.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        let i = self.position(key)?;
        Some(&mut self.entries[i].1)
    }

    /// The value of the entry whose key equals `key` (any key type).
    pub fn get_node(&self, key: &Node) -> Option<&Node> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Inserts or replaces an entry; a replaced entry keeps its position. Returns the old value.
    pub fn insert(&mut self, key: impl Into<Node>, value: impl Into<Node>) -> Option<Node> {
        let key = key.into();
        let value = value.into();
        // Fast path: the first entry with this string key is usually the equal one.
        let hit = key.as_str().and_then(|s| self.position(s));
        let found = match hit {
            Some(i) if self.entries[i].0 == key => Some(i),
            Some(_) => self.entries.iter().position(|(k, _)| *k == key),
            None if key.as_str().is_some() => None,
            None => self.entries.iter().position(|(k, _)| *k == key),
        };
        if let Some(i) = found {
            return Some(std::mem::replace(&mut self.entries[i].1, value));
        }
        self.indexed_push(key, value);
        None
    }

    /// Appends an entry without looking for an existing equal key (the caller guarantees
    /// uniqueness; used by the parser, which deduplicates itself).
    /// The value of entry `i` (in order), for lookups that found the position themselves.
    pub(crate) fn value_at_mut(&mut self, i: usize) -> Option<&mut Node> {
        self.entries.get_mut(i).map(|(_, v)| v)
    }

    pub(crate) fn push_unchecked(&mut self, key: Node, value: Node) {
        self.indexed_push(key, value);
    }

    /// A mapping of `entries` as they are (the caller guarantees the keys are unique).
    pub(crate) fn from_unique(entries: Entries) -> Mapping {
        Mapping { entries }
    }

    /// Removes the entry whose key is the string `key`, keeping the order of the others.
    pub fn remove(&mut self, key: &str) -> Option<Node> {
        let i = self.position(key)?;
        // Later positions shift: the index is rebuilt on the next lookup.
        if let Some(index) = self.entries.index_mut() {
            index.take();
        }
        self.entries.remove(i).map(|(_, v)| v)
    }

    /// Whether an entry has the string key `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Iterates over `(key, value)` pairs in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&Node, &Node)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// Iterates over `(key, value)` pairs in order, values mutable.
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = (&Node, &mut Node)> {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    /// The value of the entry at position `i`.
    pub(crate) fn value_at(&self, i: usize) -> Option<&Node> {
        self.entries.get(i).map(|(_, v)| v)
    }

    /// The keys in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &Node> {
        self.entries.iter().map(|(k, _)| k)
    }

    /// The values in order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &Node> {
        self.entries.iter().map(|(_, v)| v)
    }
}

/// Builds a mapping; a later duplicate key replaces the earlier value (which keeps its position).
/// Linear in the number of entries (large inputs are deduplicated through a hash table).
impl<K: Into<Node>, V: Into<Node>> FromIterator<(K, V)> for Mapping {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Mapping {
        let entries: Vec<(Node, Node)> = iter
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let mut m = Mapping::new();
        if entries.len() <= 32 {
            for (k, v) in entries {
                m.insert(k, v);
            }
            return m;
        }
        // Strict key identity (the same as `==` on keys, NaN == NaN, -0.0 != 0.0), by text.
        let mut index: std::collections::HashMap<String, usize> =
            std::collections::HashMap::with_capacity(entries.len());
        for (k, v) in entries {
            let id = format!("{:?}|{:?}", k.tag(), k.value());
            match index.get(&id) {
                Some(&i) => m.entries[i].1 = v,
                None => {
                    index.insert(id, m.entries.len());
                    m.entries.push((k, v));
                }
            }
        }
        m
    }
}

impl IntoIterator for Mapping {
    type Item = (Node, Node);
    type IntoIter = std::vec::IntoIter<(Node, Node)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_vec().into_iter()
    }
}

impl Node {
    /// A node with the given value and no tag.
    pub fn new(value: Value) -> Node {
        Node(Repr::Plain(value))
    }

    /// The value as stored on this node ([`Value::Shared`] included).
    #[inline]
    fn stored(&self) -> &Value {
        match &self.0 {
            Repr::Plain(v) => v,
            Repr::Tagged(t) => &t.value,
        }
    }

    #[inline]
    fn stored_mut(&mut self) -> &mut Value {
        match &mut self.0 {
            Repr::Plain(v) => v,
            Repr::Tagged(t) => &mut t.value,
        }
    }

    /// The tag as stored on this node.
    #[inline]
    fn own_tag(&self) -> Option<&Tag> {
        match &self.0 {
            Repr::Plain(_) => None,
            Repr::Tagged(t) => Some(&t.tag),
        }
    }

    /// Sets the tag stored on this node, boxing or unboxing the value as needed.
    fn set_own_tag(&mut self, tag: Option<Tag>) {
        let tag = match (&mut self.0, tag) {
            (Repr::Tagged(t), Some(tag)) => {
                t.tag = tag;
                return;
            }
            (_, tag) => tag,
        };
        let value = std::mem::take(self.stored_mut());
        self.0 = match tag {
            Some(tag) => Repr::Tagged(Box::new(Tagged { tag, value })),
            None => Repr::Plain(value),
        };
    }

    /// The stored tag and value, taken apart.
    fn into_stored(self) -> (Option<Tag>, Value) {
        match self.0 {
            Repr::Plain(v) => (None, v),
            Repr::Tagged(t) => (Some(t.tag), t.value),
        }
    }

    /// The null node.
    pub fn null() -> Node {
        Node::new(Value::Null)
    }

    /// A mapping node from `(key, value)` pairs (a later duplicate key replaces the earlier value).
    ///
    /// ```
    /// use asdf_yaml::Node;
    /// let n = Node::mapping([("a", Node::from(1)), ("b", Node::from("x"))]);
    /// assert_eq!(n.get("b").and_then(Node::as_str), Some("x"));
    /// ```
    pub fn mapping<K: Into<Node>, V: Into<Node>>(
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Node {
        Node::new(Value::Map(entries.into_iter().collect()))
    }

    /// A sequence node.
    pub fn sequence<T: Into<Node>>(items: impl IntoIterator<Item = T>) -> Node {
        Node::new(Value::Seq(items.into_iter().map(Into::into).collect()))
    }

    /// A packed nested sequence ([`Value::Packed`]) of `items`. Its shape needs at least one
    /// level: the emitter refuses one without.
    pub fn packed(items: impl crate::PackedItems + 'static) -> Node {
        Node::new(Value::Packed(Packed::new(Arc::new(items))))
    }

    /// This node with every [`Value::Packed`] in it replaced by the nested sequence nodes it
    /// stands for (a plain clone when there is none; shared subtrees are kept as they are).
    pub fn unpacked(&self) -> Node {
        let value = match self.stored() {
            Value::Packed(p) => to_nodes(&**p).into_stored().1,
            Value::Seq(items) => Value::Seq(items.iter().map(Node::unpacked).collect()),
            Value::Map(m) => Value::Map(m.iter().map(|(k, v)| (k.clone(), v.unpacked())).collect()),
            _ => return self.clone(),
        };
        let mut node = Node::new(value);
        node.set_own_tag(self.own_tag().cloned());
        node
    }

    /// An integer node from its decimal text, as [`Value::Int`] when it fits in `i64`, else
    /// [`Value::BigInt`]. `None` if the text is not an optionally signed run of decimal digits.
    pub fn integer_from_decimal(text: &str) -> Option<Node> {
        let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
        if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        // Leading zeros would be read as octal by the YAML 1.1 constructor: strip them.
        let trimmed = digits.trim_start_matches('0');
        let canonical = if trimmed.is_empty() { "0" } else { trimmed };
        let signed = if text.starts_with('-') {
            format!("-{canonical}")
        } else {
            canonical.to_string()
        };
        Some(match crate::resolve::construct_int(&signed)? {
            crate::resolve::IntValue::Small(v) => Node::from(v),
            crate::resolve::IntValue::Big(s) => Node::new(Value::BigInt(Box::new(Str::from(s)))),
        })
    }

    /// Wraps this node so it can be shared: clones of the result share one subtree and are
    /// emitted as an anchor and aliases.
    ///
    /// ```
    /// use asdf_yaml::{Node, emit_to_string};
    /// let shared = Node::mapping([("abc", 123)]).into_shared();
    /// let tree = Node::mapping([("a", shared.clone()), ("b", shared)]);
    /// let text = emit_to_string(&tree).unwrap();
    /// assert!(text.contains("a: &id001\n") && text.contains("b: *id001\n"));
    /// ```
    pub fn into_shared(self) -> Node {
        match self.stored() {
            Value::Shared(_) => self,
            _ => Node::new(Value::Shared(Arc::new(self))),
        }
    }

    /// Returns the same node with `tag` set (a full tag URI).
    pub fn with_tag(mut self, tag: impl Into<String>) -> Node {
        self.set_tag(Some(tag.into()));
        self
    }

    /// [`with_tag`](Self::with_tag) with a tag shared with other nodes (no copy of its text).
    ///
    /// ```
    /// use asdf_yaml::{Node, Tag};
    /// let tag = Tag::new("tag:example.org:thing-1.0.0");
    /// let a = Node::from(1).with_shared_tag(tag.clone());
    /// let b = Node::from(2).with_shared_tag(tag.clone());
    /// assert_eq!(a.tag(), b.tag());
    /// assert!(a.shared_tag().is_some_and(|t| t.same(&tag)));
    /// ```
    pub fn with_shared_tag(mut self, tag: Tag) -> Node {
        self.unshare_in_place();
        self.set_own_tag(Some(tag));
        self
    }

    /// The node's tag (the tag of the shared subtree for a shared node).
    pub fn tag(&self) -> Option<&str> {
        self.shared_tag().map(Tag::as_str)
    }

    /// The node's tag as stored, to put on other nodes without copying its text.
    pub fn shared_tag(&self) -> Option<&Tag> {
        match self.stored() {
            Value::Shared(inner) => inner.shared_tag(),
            _ => self.own_tag(),
        }
    }

    /// Sets or clears the tag. On a shared node this makes the node its own copy first (copy on
    /// write), so the other places sharing the subtree keep their tag.
    pub fn set_tag(&mut self, tag: Option<String>) {
        self.unshare_in_place();
        self.set_own_tag(tag.map(Tag::from));
    }

    /// The value, looking through sharing (never [`Value::Shared`] unless a shared node wraps
    /// another shared node, which the parser never produces).
    #[inline]
    pub fn value(&self) -> &Value {
        match self.stored() {
            Value::Shared(inner) => inner.value(),
            v => v,
        }
    }

    /// Mutable access to the value. On a shared node the subtree is copied first (copy on write)
    /// unless this is the only reference left, so other places are not changed.
    pub fn value_mut(&mut self) -> &mut Value {
        self.unshare_in_place();
        self.stored_mut()
    }

    /// The value as stored, [`Value::Shared`] included.
    pub fn raw_value(&self) -> &Value {
        self.stored()
    }

    /// The tag as stored on this node (None for a shared node, whose tag is on the shared inner
    /// node).
    pub fn raw_tag(&self) -> Option<&str> {
        self.own_tag().map(Tag::as_str)
    }

    /// Whether two trees are the same in every respect a parser decides: tags as stored, values
    /// (floats by their bits, so NaN matches NaN and `0.0` does not match `-0.0`), and which
    /// nodes are shared — where `==` compares only the values the trees stand for.
    ///
    /// ```
    /// use asdf_yaml::parse_str;
    /// let shared = parse_str("a: &x [1]\nb: *x\n").unwrap();
    /// let copied = parse_str("a: [1]\nb: [1]\n").unwrap();
    /// assert!(shared == copied);
    /// assert!(!shared.identical(&copied));
    /// assert!(shared.identical(&parse_str("a: &y [1]\nb: *y\n").unwrap()));
    /// assert!(parse_str("x: .nan").unwrap().identical(&parse_str("x: .NaN").unwrap()));
    /// ```
    pub fn identical(&self, other: &Node) -> bool {
        let mut pairs = std::collections::HashMap::new();
        let mut seen = std::collections::HashSet::new();
        identical(self, other, &mut pairs, &mut seen)
    }

    /// Whether this node is a shared (anchored) subtree.
    pub fn is_shared(&self) -> bool {
        matches!(self.stored(), Value::Shared(_))
    }

    /// The shared subtree, if this node is one.
    pub fn shared(&self) -> Option<&Arc<Node>> {
        match self.stored() {
            Value::Shared(a) => Some(a),
            _ => None,
        }
    }

    fn unshare_in_place(&mut self) {
        if let Value::Shared(arc) = self.stored_mut() {
            let inner = std::mem::take(Arc::make_mut(arc));
            *self = inner;
        }
    }

    /// Consumes the node and splits it into its tag and value, unsharing if needed.
    pub fn into_parts(mut self) -> (Option<String>, Value) {
        self.unshare_in_place();
        let (tag, value) = self.into_stored();
        (tag.map(|t| t.as_str().to_string()), value)
    }

    /// Whether the value is null.
    pub fn is_null(&self) -> bool {
        matches!(self.value(), Value::Null)
    }

    /// The bool value.
    pub fn as_bool(&self) -> Option<bool> {
        match self.value() {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The integer value if it fits in `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self.value() {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The integer value if it fits in `u64` (also big integers up to `u64::MAX`).
    pub fn as_u64(&self) -> Option<u64> {
        match self.value() {
            Value::Int(i) => u64::try_from(*i).ok(),
            Value::BigInt(s) => s.parse().ok(),
            _ => None,
        }
    }

    /// The decimal text of an integer of any size (`Int` or `BigInt`).
    pub fn as_integer_text(&self) -> Option<String> {
        match self.value() {
            Value::Int(i) => Some(i.to_string()),
            Value::BigInt(s) => Some(s.to_string()),
            _ => None,
        }
    }

    /// The value as `f64`: floats, and integers converted (rounded for big ones).
    pub fn as_f64(&self) -> Option<f64> {
        match self.value() {
            Value::Float(f) => Some(*f),
            Value::Int(i) => Some(*i as f64),
            Value::BigInt(s) => s.parse().ok(),
            _ => None,
        }
    }

    /// The string value (also the text of unknown-tagged scalars and timestamps).
    pub fn as_str(&self) -> Option<&str> {
        match self.value() {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The items of a sequence.
    pub fn as_seq(&self) -> Option<&[Node]> {
        match self.value() {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// The items of a sequence, mutable (copy on write through sharing).
    pub fn as_seq_mut(&mut self) -> Option<&mut ThinVec<Node>> {
        match self.value_mut() {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// The mapping.
    pub fn as_map(&self) -> Option<&Mapping> {
        match self.value() {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The mapping, mutable (copy on write through sharing).
    pub fn as_map_mut(&mut self) -> Option<&mut Mapping> {
        match self.value_mut() {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The value at string key `key` of a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?.get(key)
    }

    /// Mutable access to the value at string key `key` of a mapping.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.as_map_mut()?.get_mut(key)
    }

    /// Item `i` of a sequence.
    pub fn index(&self, i: usize) -> Option<&Node> {
        self.as_seq()?.get(i)
    }

    /// Mutable access to item `i` of a sequence.
    pub fn index_mut(&mut self, i: usize) -> Option<&mut Node> {
        self.as_seq_mut()?.get_mut(i)
    }

    /// Number of children (sequence items or mapping entries); 0 for scalars.
    pub fn len(&self) -> usize {
        match self.value() {
            Value::Seq(s) => s.len(),
            Value::Map(m) => m.len(),
            Value::Packed(p) => p.shape().first().copied().unwrap_or(0),
            _ => 0,
        }
    }

    /// Whether [`len`](Node::len) is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates over the children: sequence items, or mapping values; nothing for scalars.
    pub fn children(&self) -> Box<dyn Iterator<Item = &Node> + '_> {
        match self.value() {
            Value::Seq(s) => Box::new(s.iter()),
            Value::Map(m) => Box::new(m.values()),
            _ => Box::new(std::iter::empty()),
        }
    }

    /// A short name of the value's kind (`null`, `bool`, `int`, `float`, `str`, `sequence`,
    /// `mapping`), for messages.
    pub fn kind(&self) -> &'static str {
        match self.value() {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Seq(_) | Value::Packed(_) => "sequence",
            Value::Map(_) => "mapping",
            Value::Shared(inner) => inner.kind(),
        }
    }
}

/// Equality of trees: same tags and values, looking through sharing. Floats compare bit-exactly
/// except that all NaNs are equal (so `-0.0 != 0.0` but `.nan == .nan`), which is what a round
/// trip must preserve.
impl PartialEq for Node {
    fn eq(&self, other: &Node) -> bool {
        if let (Value::Shared(a), Value::Shared(b)) = (self.stored(), other.stored()) {
            if Arc::ptr_eq(a, b) {
                return true;
            }
        }
        self.tag() == other.tag() && self.value() == other.value()
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Shared(a), b) => a.value() == b,
            (a, Value::Shared(b)) => a == b.value(),
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::BigInt(a), Value::BigInt(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => {
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
            }
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Seq(a), Value::Seq(b)) => a == b,
            (Value::Map(a), Value::Map(b)) => a == b,
            (Value::Packed(a), b) => equals(&**a, b),
            (a, Value::Packed(b)) => equals(&**b, a),
            _ => false,
        }
    }
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(t) = self.own_tag() {
            write!(f, "!<{}> ", t.as_str())?;
        }
        fmt::Debug::fmt(self.stored(), f)
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::BigInt(s) => write!(f, "{s}n"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Seq(s) => f.debug_list().entries(s).finish(),
            Value::Map(m) => f.debug_map().entries(m.iter()).finish(),
            Value::Shared(inner) => write!(f, "&{inner:?}"),
            Value::Packed(p) => debug(&**p, f),
        }
    }
}

impl fmt::Debug for Mapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

static NULL_NODE: Node = Node(Repr::Plain(Value::Null));

/// `node["key"]`: the value at a string key of a mapping, or a null node when there is none (like
/// `serde_json`; use [`Node::get`] to tell "missing" from "null").
///
/// ```
/// let n = asdf_yaml::parse_str("a: {b: [1, 2]}").unwrap();
/// assert_eq!(n["a"]["b"][1].as_i64(), Some(2));
/// assert!(n["nope"][7].is_null());
/// ```
impl std::ops::Index<&str> for Node {
    type Output = Node;
    fn index(&self, key: &str) -> &Node {
        self.get(key).unwrap_or(&NULL_NODE)
    }
}

/// `node[i]`: item `i` of a sequence, or a null node when there is none.
impl std::ops::Index<usize> for Node {
    type Output = Node;
    fn index(&self, i: usize) -> &Node {
        Node::index(self, i).unwrap_or(&NULL_NODE)
    }
}

impl From<Value> for Node {
    fn from(v: Value) -> Node {
        Node::new(v)
    }
}

impl From<bool> for Node {
    fn from(v: bool) -> Node {
        Node::new(Value::Bool(v))
    }
}

macro_rules! from_small_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Node {
            fn from(v: $t) -> Node {
                Node::new(Value::Int(i64::from(v)))
            }
        }
    )*};
}
from_small_int!(i8, i16, i32, i64, u8, u16, u32);

impl From<u64> for Node {
    fn from(v: u64) -> Node {
        match i64::try_from(v) {
            Ok(i) => Node::new(Value::Int(i)),
            Err(_) => Node::new(Value::BigInt(Box::new(Str::from(v.to_string())))),
        }
    }
}

impl From<usize> for Node {
    fn from(v: usize) -> Node {
        Node::from(v as u64)
    }
}

impl From<isize> for Node {
    fn from(v: isize) -> Node {
        Node::from(v as i64)
    }
}

impl From<i128> for Node {
    fn from(v: i128) -> Node {
        match i64::try_from(v) {
            Ok(i) => Node::new(Value::Int(i)),
            Err(_) => Node::new(Value::BigInt(Box::new(Str::from(v.to_string())))),
        }
    }
}

impl From<f64> for Node {
    fn from(v: f64) -> Node {
        Node::new(Value::Float(v))
    }
}

impl From<f32> for Node {
    fn from(v: f32) -> Node {
        Node::new(Value::Float(f64::from(v)))
    }
}

impl From<&str> for Node {
    fn from(v: &str) -> Node {
        Node::new(Value::Str(Str::from(v)))
    }
}

impl From<String> for Node {
    fn from(v: String) -> Node {
        Node::new(Value::Str(Str::from(v)))
    }
}

impl From<Str> for Node {
    fn from(v: Str) -> Node {
        Node::new(Value::Str(v))
    }
}

impl From<Vec<Node>> for Node {
    fn from(v: Vec<Node>) -> Node {
        Node::new(Value::Seq(v.into()))
    }
}

impl From<Mapping> for Node {
    fn from(v: Mapping) -> Node {
        Node::new(Value::Map(v))
    }
}

impl<T: Into<Node>> From<Option<T>> for Node {
    fn from(v: Option<T>) -> Node {
        v.map_or_else(Node::null, Into::into)
    }
}

/// [`Node::identical`]: `pairs` maps each shared node of one tree to its partner in the other,
/// `seen` holds the partners already taken, so the sharing must match one to one.
fn identical(
    a: &Node,
    b: &Node,
    pairs: &mut std::collections::HashMap<*const Node, *const Node>,
    seen: &mut std::collections::HashSet<*const Node>,
) -> bool {
    if a.raw_tag() != b.raw_tag() {
        return false;
    }
    match (a.raw_value(), b.raw_value()) {
        (Value::Shared(x), Value::Shared(y)) => {
            let (px, py) = (Arc::as_ptr(x), Arc::as_ptr(y));
            match pairs.get(&px) {
                Some(&q) => q == py,
                None if seen.contains(&py) => false,
                None => {
                    pairs.insert(px, py);
                    seen.insert(py);
                    identical(x, y, pairs, seen)
                }
            }
        }
        (Value::Float(x), Value::Float(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (Value::Seq(x), Value::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| identical(x, y, pairs, seen))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter().zip(y.iter()).all(|((kx, vx), (ky, vy))| {
                    identical(kx, ky, pairs, seen) && identical(vx, vy, pairs, seen)
                })
        }
        (Value::Shared(_), _) | (_, Value::Shared(_)) => false,
        (x, y) => x == y,
    }
}

// Packed sequences: the scalars of a nested sequence held compactly by whoever built them.
// They are part of the value model (a `Value` variant), so they live beside it.
//
// An inline array of a million numbers as ordinary nodes costs a `Node` per number (16 bytes
// each, 2× an 8-byte float, 16× a byte). A writer that already holds the numbers in a typed
// buffer puts one `Value::Packed` in the tree instead; the emitter writes it exactly as it
// writes the equivalent nested sequences of scalar nodes, one item at a time, so no node per item
// ever exists at once. The parser never produces one: a parsed tree holds `Value::Seq`s.

/// The items of a packed nested sequence ([`Value::Packed`]): `shape[0]` sequences of
/// `shape[1]` sequences … of `shape[last]` scalars, in row-major order.
///
/// ```
/// use asdf_yaml::{emit_to_string, parse_str, Node, PackedItems};
/// struct Squares(Vec<usize>);
/// impl PackedItems for Squares {
///     fn shape(&self) -> &[usize] { &self.0 }
///     fn item(&self, index: usize) -> Node { Node::from(index * index) }
/// }
/// let tree = Node::mapping([("data", Node::packed(Squares(vec![2, 3])))]);
/// let text = emit_to_string(&tree).unwrap();
/// assert!(text.contains("data:\n  - [0, 1, 4]\n  - [9, 16, 25]\n"));
/// // Equal to the nodes it stands for, and to what parsing its text gives.
/// let parsed = parse_str(&text).unwrap();
/// assert_eq!(parsed, tree);
/// assert_eq!(parsed["data"][1][2].as_i64(), Some(25));
/// ```
pub trait PackedItems: Send + Sync {
    /// The length of each nesting level; at least one level. The product of the lengths is the
    /// number of items.
    fn shape(&self) -> &[usize];
    /// Item `index` (row-major, below the product of [`shape`](Self::shape)) as a scalar node
    /// (an untagged or tagged scalar, never a sequence or mapping).
    fn item(&self, index: usize) -> Node;
}

/// A packed sequence as stored in a [`Value::Packed`]: a shared [`PackedItems`], one word wide
/// (the `Arc` of the trait object is boxed: packed sequences are few and large, nodes many).
#[derive(Clone)]
pub struct Packed(Box<Arc<dyn PackedItems>>);

impl Packed {
    /// Wraps shared packed items ([`Node::packed`] does this for items it owns).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use asdf_yaml::{Node, Packed, PackedItems, Value};
    /// struct Ones(Vec<usize>);
    /// impl PackedItems for Ones {
    ///     fn shape(&self) -> &[usize] { &self.0 }
    ///     fn item(&self, _: usize) -> Node { Node::from(1) }
    /// }
    /// let items: Arc<dyn PackedItems> = Arc::new(Ones(vec![2]));
    /// let node = Node::new(Value::Packed(Packed::new(items.clone())));
    /// assert_eq!(node, Node::sequence([1, 1]));
    /// assert_eq!(Arc::strong_count(&items), 2);
    /// ```
    pub fn new(items: Arc<dyn PackedItems>) -> Packed {
        Packed(Box::new(items))
    }
}

impl std::ops::Deref for Packed {
    type Target = dyn PackedItems;
    fn deref(&self) -> &(dyn PackedItems + 'static) {
        &**self.0
    }
}

/// The number of items of `p` (the product of its shape, saturating).
pub(crate) fn count(p: &dyn PackedItems) -> usize {
    p.shape()
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .unwrap_or(usize::MAX)
}

/// `p` as ordinary nested sequence nodes (one node per item: for small packed sequences, or a
/// caller that must hold items as nodes).
pub(crate) fn to_nodes(p: &dyn PackedItems) -> Node {
    fn level(p: &dyn PackedItems, dims: &[usize], base: usize) -> Node {
        match dims {
            [] => p.item(base),
            [n, rest @ ..] => {
                let stride: usize = rest.iter().product();
                Node::new(Value::Seq(
                    (0..*n).map(|i| level(p, rest, base + i * stride)).collect(),
                ))
            }
        }
    }
    level(p, p.shape(), 0)
}

/// Whether the packed sequence `p` equals `other` (a packed sequence or nested sequence nodes),
/// item by item under the tree's equality, without building nodes for `other`'s side.
pub(crate) fn equals(p: &dyn PackedItems, other: &Value) -> bool {
    fn block(p: &dyn PackedItems, dims: &[usize], base: usize, other: &Value) -> bool {
        let Some((n, rest)) = dims.split_first() else {
            return false;
        };
        let stride: usize = rest.iter().product();
        match other {
            Value::Seq(items) => {
                items.len() == *n
                    && items.iter().enumerate().all(|(i, o)| {
                        let at = base + i * stride;
                        match rest {
                            [] => p.item(at) == *o,
                            _ => o.tag().is_none() && block(p, rest, at, o.value()),
                        }
                    })
            }
            Value::Packed(q) => {
                q.shape() == dims && (0..count(&**q)).all(|i| p.item(base + i) == q.item(i))
            }
            _ => false,
        }
    }
    block(p, p.shape(), 0, other)
}

/// Debug output of `p`: the nested lists it stands for.
pub(crate) fn debug(p: &dyn PackedItems, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    fmt::Debug::fmt(&to_nodes(p), f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_copy_on_write() {
        let shared = Node::mapping([("x", 1)]).into_shared();
        let mut tree = Node::mapping([("a", shared.clone()), ("b", shared)]);
        tree.get_mut("a")
            .and_then(|n| n.as_map_mut())
            .map(|m| m.insert("x", 2));
        assert_eq!(tree.pointer("/a/x").and_then(Node::as_i64), Some(2));
        assert_eq!(tree.pointer("/b/x").and_then(Node::as_i64), Some(1));
        assert!(tree.get("b").is_some_and(Node::is_shared));
    }

    #[test]
    fn integers() {
        assert_eq!(Node::from(u64::MAX).as_u64(), Some(u64::MAX));
        assert_eq!(
            Node::integer_from_decimal("-0099").and_then(|n| n.as_i64()),
            Some(-99)
        );
        assert_eq!(
            Node::integer_from_decimal("99999999999999999999").map(|n| n.kind()),
            Some("int")
        );
        assert!(Node::integer_from_decimal("1x").is_none());
    }

    #[test]
    fn large_mappings_deduplicate_like_insert() {
        let n = 1000;
        let m: Mapping = (0..n)
            .map(|i| (format!("k{}", i % 600), Node::from(i)))
            .chain([(String::from("k0"), Node::from(-1))])
            .collect();
        assert_eq!(m.len(), 600);
        assert_eq!(m.get("k0").and_then(Node::as_i64), Some(-1));
        assert_eq!(m.get("k5").and_then(Node::as_i64), Some(605));
        assert_eq!(m.keys().nth(1).and_then(Node::as_str), Some("k1"));
        let nan: Mapping = (0..40)
            .map(|i| {
                (
                    Node::from(if i % 2 == 0 { f64::NAN } else { -0.0 }),
                    Node::from(i),
                )
            })
            .collect();
        assert_eq!(nan.len(), 2);
    }

    #[test]
    fn trees_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Node>();
        check::<Mapping>();
    }

    #[test]
    fn float_equality_rules() {
        assert_eq!(Node::from(f64::NAN), Node::from(f64::NAN));
        assert_ne!(Node::from(0.0), Node::from(-0.0));
        assert_ne!(Node::from(1), Node::from(1.0));
    }

    #[test]
    fn tags_box_and_unbox_the_value() {
        let mut n = Node::from("a value");
        assert!(n.tag().is_none() && matches!(n.0, Repr::Plain(_)));
        n.set_tag(Some("tag:example.org:a-1.0.0".into()));
        assert!(matches!(n.0, Repr::Tagged(_)));
        assert_eq!(
            (n.tag(), n.as_str()),
            (Some("tag:example.org:a-1.0.0"), Some("a value"))
        );
        n.set_tag(Some("tag:example.org:b-1.0.0".into()));
        *n.value_mut() = Value::Int(7);
        assert_eq!(
            (n.tag(), n.as_i64()),
            (Some("tag:example.org:b-1.0.0"), Some(7))
        );
        let copy = n.clone();
        n.set_tag(None);
        assert!(n.tag().is_none() && matches!(n.0, Repr::Plain(_)) && n.as_i64() == Some(7));
        n.set_tag(None);
        assert_eq!(n, Node::from(7));
        assert_eq!(copy.tag(), Some("tag:example.org:b-1.0.0"));
        assert_eq!(format!("{copy:?}"), "!<tag:example.org:b-1.0.0> 7");
        let (tag, value) = copy.into_parts();
        assert_eq!(tag.as_deref(), Some("tag:example.org:b-1.0.0"));
        assert!(matches!(value, Value::Int(7)));
    }
}
