//! Custom tags: Rust types stored in the tree under a tag, and which tags a reader knows.

use std::sync::Arc;

use asdf_yaml::{Node, Value};

use crate::error::{AsdfError, Result};

/// A Rust type stored in the tree as a tagged node — what Python asdf calls a converter.
///
/// ```
/// use asdf::{AsdfError, TaggedType};
/// use asdf::yaml::Node;
/// #[derive(Debug, PartialEq)]
/// struct Point { x: f64, y: f64 }
/// impl TaggedType for Point {
///     const TAG: &'static str = "asdf://example.org/tags/point-1.1.0";
///     fn to_node(&self) -> Result<Node, AsdfError> {
///         Ok(Node::mapping([("x", Node::from(self.x)), ("y", Node::from(self.y))]))
///     }
///     fn from_node(node: &Node) -> Result<Self, AsdfError> {
///         let f = |k: &str| node.get(k).and_then(Node::as_f64)
///             .ok_or_else(|| AsdfError::InvalidTree(format!("point needs a number `{k}`")));
///         Ok(Point { x: f("x")?, y: f("y")? })
///     }
/// }
/// let tree = Node::mapping([("p", asdf::to_tagged(&Point { x: 1.0, y: 2.0 }).unwrap())]);
/// let bytes = asdf::AsdfWriter::new().to_bytes(tree, &Default::default()).unwrap();
/// let f = asdf::AsdfFile::from_bytes(bytes, &Default::default()).unwrap();
/// assert_eq!(f.value::<Point>("/p").unwrap(), Point { x: 1.0, y: 2.0 });
/// ```
pub trait TaggedType: Sized {
    /// The tag this type writes, with its version (`...name-1.1.0`).
    const TAG: &'static str;
    /// The node's content (without the tag, which [`to_tagged`] adds).
    fn to_node(&self) -> Result<Node>;
    /// The value from a node carrying `TAG` (or another version of it).
    fn from_node(node: &Node) -> Result<Self>;
}

/// The node of `value`, tagged with `T::TAG`.
pub fn to_tagged<T: TaggedType>(value: &T) -> Result<Node> {
    Ok(value.to_node()?.with_tag(T::TAG))
}

/// `(name, version)` of a tag URI: the version follows the last `-`.
pub fn split_tag(tag: &str) -> (&str, Option<&str>) {
    match tag.rsplit_once('-') {
        Some((name, v)) if v.starts_with(|c: char| c.is_ascii_digit()) => (name, Some(v)),
        _ => (tag, None),
    }
}

/// Converts `node` to `T` with Python asdf's version rules: the exact tag converts; another
/// version of the same tag is attempted with a warning; any other tag is an error.
pub(crate) fn convert<T: TaggedType>(node: &Node, pointer: &str) -> Result<T> {
    let tag = node.tag().unwrap_or("");
    if tag == T::TAG {
        return T::from_node(node);
    }
    let (want, _) = split_tag(T::TAG);
    let (have, version) = split_tag(tag);
    if have == want && version.is_some() {
        log::warn!(
            "{pointer}: converting {tag} with the converter for {}",
            T::TAG
        );
        return T::from_node(node).map_err(|e| {
            AsdfError::InvalidTree(format!(
                "{pointer}: {tag} could not be converted as {}: {e}",
                T::TAG
            ))
        });
    }
    Err(AsdfError::InvalidTree(format!(
        "{pointer}: expected a node tagged {}, found {}",
        T::TAG,
        if tag.is_empty() { "no tag" } else { tag }
    )))
}

/// The core tags of ASDF Standards 1.0.0 to 1.6.0 this library reads, plus ASDF.jl's chunked
/// arrays.
const CORE: &[&str] = &[
    "asdf-1.0.0",
    "asdf-1.1.0",
    "software-1.0.0",
    "history_entry-1.0.0",
    "extension_metadata-1.0.0",
    "ndarray-1.0.0",
    "ndarray-1.1.0",
    "ndarray-1.2.0",
    "chunked-ndarray-1.0.0",
    "ndarray-chunk-1.0.0",
    "integer-1.0.0",
    "integer-1.1.0",
    "integer-1.2.0",
    "complex-1.0.0",
    "constant-1.0.0",
    "externalarray-1.0.0",
    "subclass_metadata-1.0.0",
];

/// The tags a reader recognises: the core ones, YAML's own, and those registered here.
/// Unknown tags are never an error: their nodes stay as tagged raw nodes and are written back
/// unchanged; opening a file only warns about them (see
/// [`OpenOptions::ignore_unrecognized_tags`](crate::OpenOptions::ignore_unrecognized_tags)).
/// Share one registry between files through the `Arc` in [`OpenOptions`](crate::OpenOptions).
#[derive(Clone, Debug, Default)]
pub struct Extensions {
    tags: Vec<String>,
}

impl Extensions {
    /// A registry with only the built-in tags.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers the tag of `T`.
    pub fn register<T: TaggedType>(&mut self) -> &mut Self {
        self.register_tag(T::TAG)
    }

    /// Registers a tag URI (with version).
    pub fn register_tag(&mut self, tag: &str) -> &mut Self {
        if !self.tags.iter().any(|t| t == tag) {
            self.tags.push(tag.to_string());
        }
        self
    }

    /// Whether `tag` is known: built-in, YAML's (`tag:yaml.org,2002:`), or registered.
    pub fn knows(&self, tag: &str) -> bool {
        tag.starts_with("tag:yaml.org,2002:")
            || tag
                .strip_prefix("tag:stsci.edu:asdf/core/")
                .is_some_and(|t| CORE.contains(&t))
            || self.tags.iter().any(|t| t == tag)
    }

    /// A shareable handle.
    pub fn shared(self) -> Arc<Extensions> {
        Arc::new(self)
    }

    /// Warnings for every unrecognised tag in `tree` (once per tag, with its first pointer).
    pub(crate) fn unknown_tags(&self, tree: &Node) -> Vec<String> {
        let mut seen: Vec<(String, String)> = Vec::new();
        let mut path: Vec<Step<'_>> = Vec::new();
        walk(
            tree,
            &mut path,
            &mut |tag, path| {
                if !self.knows(tag) && !seen.iter().any(|(t, _)| t == tag) {
                    seen.push((tag.to_string(), pointer(path)));
                }
            },
            0,
        );
        seen.into_iter()
            .map(|(tag, path)| {
                let at = if path.is_empty() {
                    "the root"
                } else {
                    path.as_str()
                };
                format!("tag {tag} (first at {at}) is not recognized; kept as a raw tagged node")
            })
            .collect()
    }
}

/// One step of a path through the tree; turned into JSON Pointer text only when a tag needs
/// reporting, so walking a large tree allocates nothing per node.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a Node),
    Index(usize),
}

fn pointer(path: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) => match k.as_str() {
                Some(key) => asdf_yaml::pointer::push_token(&mut out, key),
                None => asdf_yaml::pointer::push_token(&mut out, &format!("{k:?}")),
            },
            Step::Index(i) => asdf_yaml::pointer::push_token(&mut out, &i.to_string()),
        }
    }
    out
}

fn walk<'a>(
    node: &'a Node,
    path: &mut Vec<Step<'a>>,
    f: &mut dyn FnMut(&str, &[Step<'a>]),
    depth: usize,
) {
    if depth > 10_000 {
        return;
    }
    if let Some(t) = node.tag() {
        f(t, path);
    }
    match node.value() {
        Value::Seq(items) => {
            for (i, c) in items.iter().enumerate() {
                path.push(Step::Index(i));
                walk(c, path, f, depth + 1);
                path.pop();
            }
        }
        Value::Map(m) => {
            for (k, v) in m.iter() {
                path.push(Step::Key(k));
                walk(v, path, f, depth + 1);
                path.pop();
            }
        }
        _ => {}
    }
}
