//! The ASDF tree seen by `jsonschema` as a JSON document, tags kept (no conversion, no copy).

use std::borrow::Cow;

use asdf_yaml::{Mapping, Node, Value};
use jsonschema::json::{Array, Json, JsonNumber, Node as JsonNode, NodeIdentity, Object};
use jsonschema::JsonType;
use serde_json::Value as J;

/// Marker type: [`asdf_yaml::Node`] trees as `jsonschema` instances.
pub struct YamlTree;

/// A borrowed node of the tree.
#[derive(Clone, Copy)]
pub struct NodeRef<'a>(pub &'a Node);

impl<'a> NodeRef<'a> {
    /// The underlying node (tag included).
    pub fn node(&self) -> &'a Node {
        self.0
    }
}

impl Json for YamlTree {
    type Node<'a> = NodeRef<'a>;
    type PreparedKey = String;
    type StringBuffer = Node;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(buffer: &mut Node, string: &str, f: impl FnOnce(NodeRef<'_>) -> T) -> T {
        *buffer = Node::from(string);
        f(NodeRef(buffer))
    }
}

/// A number of the tree.
#[derive(Clone, Debug)]
pub enum Num<'a> {
    /// Fits in `i64`.
    Int(i64),
    /// Beyond `i64`: decimal digits.
    Big(&'a str),
    /// A float.
    Float(f64),
}

impl JsonNumber for Num<'_> {
    fn as_u64(&self) -> Option<u64> {
        match self {
            Num::Int(i) => u64::try_from(*i).ok(),
            Num::Big(s) => s.parse().ok(),
            Num::Float(_) => None,
        }
    }
    fn as_i64(&self) -> Option<i64> {
        match self {
            Num::Int(i) => Some(*i),
            _ => None,
        }
    }
    fn as_f64(&self) -> Option<f64> {
        Some(match self {
            Num::Int(i) => *i as f64,
            Num::Big(s) => s.parse().unwrap_or(f64::NAN),
            Num::Float(f) => *f,
        })
    }
    fn as_str(&self) -> Cow<'_, str> {
        match self {
            Num::Int(i) => Cow::Owned(i.to_string()),
            Num::Big(s) => Cow::Borrowed(s),
            // Keep a '.' so draft 4 sees a float as written with a fraction.
            Num::Float(f) => Cow::Owned(format!("{f:?}")),
        }
    }
    fn to_number(&self) -> Cow<'_, serde_json::Number> {
        Cow::Owned(number(self))
    }
    fn is_integer(&self) -> bool {
        match self {
            Num::Int(_) | Num::Big(_) => true,
            Num::Float(f) => f.is_finite() && f.fract() == 0.0,
        }
    }
    fn is_written_as_integer(&self) -> bool {
        !matches!(self, Num::Float(_))
    }
}

fn number(n: &Num<'_>) -> serde_json::Number {
    match n {
        Num::Int(i) => serde_json::Number::from(*i),
        Num::Big(s) => s
            .parse::<u64>()
            .map(serde_json::Number::from)
            .ok()
            .or_else(|| s.parse::<f64>().ok().and_then(serde_json::Number::from_f64))
            .unwrap_or_else(|| serde_json::Number::from(0)),
        // JSON has no NaN/inf: they only reach error messages, as 0.
        Num::Float(f) => {
            serde_json::Number::from_f64(*f).unwrap_or_else(|| serde_json::Number::from(0))
        }
    }
}

/// The tree as a `serde_json::Value`: tags dropped, keys as their text, numbers JSON cannot
/// hold (NaN, infinities) as strings, anything nested deeper than 256 levels as null. Schemas
/// are loaded through it, and error messages and `enum` compare with it.
///
/// ```
/// let tree = asdf_yaml::parse_str("a: [1, 2.5, x, null]\nb: !core/thing {c: yes}\n").unwrap();
/// assert_eq!(
///     asdf_schema::to_json(&tree),
///     serde_json::json!({"a": [1, 2.5, "x", null], "b": {"c": true}})
/// );
/// ```
pub fn to_json(n: &Node) -> J {
    to_json_depth(n, 0)
}

fn to_json_depth(n: &Node, depth: usize) -> J {
    if depth > 256 {
        return J::Null;
    }
    match n.value() {
        Value::Null | Value::Shared(_) => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::BigInt(s) => J::Number(number(&Num::Big(s))),
        Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or_else(|| J::String(f.to_string()), J::Number)
        }
        Value::Str(s) => J::String(s.to_string()),
        Value::Seq(items) => J::Array(items.iter().map(|x| to_json_depth(x, depth + 1)).collect()),
        Value::Packed(_) => to_json_depth(&n.unpacked(), depth),
        Value::Map(m) => J::Object(
            m.iter()
                .map(|(k, v)| (key_text(k), to_json_depth(v, depth + 1)))
                .collect(),
        ),
    }
}

impl<'a> JsonNode<'a, YamlTree> for NodeRef<'a> {
    type Object = MapRef<'a>;
    type Array = SeqRef<'a>;
    type Number = Num<'a>;

    fn as_object(&self) -> Option<MapRef<'a>> {
        match self.0.value() {
            Value::Map(m) => Some(MapRef(m)),
            _ => None,
        }
    }
    fn as_array(&self) -> Option<SeqRef<'a>> {
        match self.0.value() {
            Value::Seq(s) => Some(SeqRef(s)),
            _ => None,
        }
    }
    fn as_string(&self) -> Option<Cow<'a, str>> {
        match self.0.value() {
            Value::Str(s) => Some(Cow::Borrowed(s.as_str())),
            _ => None,
        }
    }
    fn as_number(&self) -> Option<Num<'a>> {
        match self.0.value() {
            Value::Int(i) => Some(Num::Int(*i)),
            Value::BigInt(s) => Some(Num::Big(s.as_str())),
            Value::Float(f) => Some(Num::Float(*f)),
            _ => None,
        }
    }
    fn as_boolean(&self) -> Option<bool> {
        match self.0.value() {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn is_null(&self) -> bool {
        matches!(self.0.value(), Value::Null)
    }
    fn json_type(&self) -> JsonType {
        match self.0.value() {
            Value::Null | Value::Shared(_) => JsonType::Null,
            Value::Bool(_) => JsonType::Boolean,
            Value::Int(_) | Value::BigInt(_) | Value::Float(_) => JsonType::Number,
            Value::Str(_) => JsonType::String,
            // A packed sequence (only in trees built for writing) is an array whose items this
            // view does not lend out: `as_array` has none to borrow.
            Value::Seq(_) | Value::Packed(_) => JsonType::Array,
            Value::Map(_) => JsonType::Object,
        }
    }
    fn to_value(&self) -> Cow<'a, J> {
        Cow::Owned(to_json(self.0))
    }
    fn identity(&self) -> Option<NodeIdentity> {
        // The tree is finite and acyclic (aliases are shared subtrees, not cycles).
        None
    }
}

/// A borrowed mapping.
#[derive(Clone, Copy)]
pub struct MapRef<'a>(&'a Mapping);

/// A borrowed sequence.
#[derive(Clone, Copy)]
pub struct SeqRef<'a>(&'a [Node]);

/// Iterator over the members of a mapping.
pub struct Members<'a>(Box<dyn Iterator<Item = (&'a Node, &'a Node)> + 'a>);

impl<'a> Iterator for Members<'a> {
    type Item = (Cow<'a, str>, NodeRef<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        let (k, v) = self.0.next()?;
        let name = match k.value() {
            Value::Str(s) => Cow::Borrowed(s.as_str()),
            _ => Cow::Owned(key_text(k)),
        };
        Some((name, NodeRef(v)))
    }
}

impl<'a> Object<'a, YamlTree> for MapRef<'a> {
    type Node = NodeRef<'a>;
    type MemberName = Cow<'a, str>;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        self.0.len()
    }
    fn get(&self, key: &String) -> Option<NodeRef<'a>> {
        self.0.get(key).map(NodeRef)
    }
    fn members(&self) -> Members<'a> {
        Members(Box::new(self.0.iter()))
    }
}

/// Iterator over the items of a sequence.
pub struct Items<'a>(std::slice::Iter<'a, Node>);

impl<'a> Iterator for Items<'a> {
    type Item = NodeRef<'a>;
    fn next(&mut self) -> Option<NodeRef<'a>> {
        self.0.next().map(NodeRef)
    }
}

impl<'a> Array<'a, YamlTree> for SeqRef<'a> {
    type Node = NodeRef<'a>;
    type ElementsIter = Items<'a>;

    fn len(&self) -> usize {
        self.0.len()
    }
    fn elements(&self) -> Items<'a> {
        Items(self.0.iter())
    }
}

/// The text of a mapping key (non-string keys as their YAML text).
fn key_text(k: &Node) -> String {
    match k.value() {
        Value::Str(s) => s.to_string(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(s) => s.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Null => "null".to_string(),
        _ => format!("{k:?}"),
    }
}
