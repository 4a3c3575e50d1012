//! Rebuilding a tree node by node while keeping shared (anchored) subtrees shared.

use std::collections::HashMap;
use std::sync::Arc;

use asdf_yaml::{Mapping, Node, Value};

use crate::error::Result;

/// Rebuilds `node` bottom-up, passing every rebuilt node to `f`. A subtree shared by several
/// places (an anchor and its aliases) is rebuilt once and stays shared in the result.
pub(crate) fn rebuild(node: &Node, f: &mut dyn FnMut(Node) -> Result<Node>) -> Result<Node> {
    let mut cache = HashMap::new();
    walk(node, f, &mut cache)
}

fn walk(
    node: &Node,
    f: &mut dyn FnMut(Node) -> Result<Node>,
    cache: &mut HashMap<*const Node, Node>,
) -> Result<Node> {
    if let Value::Shared(arc) = node.raw_value() {
        let key = Arc::as_ptr(arc);
        if let Some(done) = cache.get(&key) {
            return Ok(done.clone());
        }
        let shared = walk(arc, f, cache)?.into_shared();
        cache.insert(key, shared.clone());
        return Ok(shared);
    }
    let value = match node.raw_value() {
        Value::Seq(items) => Value::Seq(
            items
                .iter()
                .map(|c| walk(c, f, cache))
                .collect::<Result<_>>()?,
        ),
        Value::Map(m) => {
            let mut out = Mapping::new();
            for (k, v) in m.iter() {
                out.insert(k.clone(), walk(v, f, cache)?);
            }
            Value::Map(out)
        }
        other => other.clone(),
    };
    let mut n = Node::new(value);
    n.set_tag(node.raw_tag().map(str::to_string));
    f(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sharing_survives_and_every_node_is_visited() {
        let shared = Node::mapping([("x", Node::from(1i64))]).into_shared();
        let tree = Node::mapping([("a", shared.clone()), ("b", Node::sequence([shared]))]);
        let mut seen = 0;
        let out = rebuild(&tree, &mut |mut n| {
            seen += 1;
            if n.as_i64() == Some(1) {
                n = Node::from(2i64);
            }
            Ok(n)
        })
        .unwrap();
        assert!(out.get("a").unwrap().is_shared());
        let (a, b) = (out.get("a").unwrap(), out.pointer("/b/0").unwrap());
        assert!(Arc::ptr_eq(a.shared().unwrap(), b.shared().unwrap()));
        assert_eq!(out.pointer("/b/0/x").and_then(Node::as_i64), Some(2));
        // root, a's mapping, 1, the sequence: the shared subtree is visited once.
        assert_eq!(seen, 4);
    }
}
