//! Helpers shared by the facade's test files.
#![allow(dead_code)]

use asdf::yaml::Node;

/// The root's entries without `asdf_library` and `history`, which the compliance procedure and
/// every round trip leave out of comparisons.
pub(crate) fn without_metadata(tree: &Node) -> Vec<(Node, Node)> {
    tree.as_map()
        .unwrap()
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), Some("asdf_library" | "history")))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
