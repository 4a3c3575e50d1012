//! `search`: JSON Pointers of the nodes matching a key pattern, a type and a value.

use asdf::yaml::Node;
use regex::Regex;

use crate::error::{CliError, Result};
use crate::tree::{scalar_text, type_name, visit};

/// What to look for; every given criterion must match.
#[derive(Clone, Debug, Default)]
pub struct Query {
    /// Regular expression the node's key (or list index) must match (anywhere; anchor with `^$`).
    pub key: Option<String>,
    /// Type: a YAML kind (`str`, `int`, `float`, `bool`, `null`, `dict`/`mapping`,
    /// `list`/`sequence`), `ndarray`, or any part of the node's tag.
    pub type_: Option<String>,
    /// The scalar value, as text (`42`, `3.5`, `true`, `foo`).
    pub value: Option<String>,
}

fn type_matches(node: &Node, t: &str) -> bool {
    let kind = node.kind();
    let name = type_name(node);
    match t {
        "dict" | "mapping" | "map" => kind == "mapping",
        "list" | "sequence" | "seq" => kind == "sequence",
        "ndarray" | "array" => asdf::array_kind(node).is_some(),
        _ => kind == t || name == t || node.tag().is_some_and(|tag| tag.contains(t)),
    }
}

fn value_matches(node: &Node, v: &str) -> bool {
    match scalar_text(node) {
        Some(s) if s == v => true,
        Some(_) => match (node.as_f64(), v.parse::<f64>()) {
            (Some(a), Ok(b)) => a == b || (a.is_nan() && b.is_nan()),
            _ => false,
        },
        None => false,
    }
}

/// The JSON Pointers of the nodes of `root` matching `q`, in tree order. Arrays are matched as
/// wholes (their fields are not searched).
pub fn search(root: &Node, q: &Query) -> Result<Vec<String>> {
    let re = match &q.key {
        Some(k) => {
            Some(Regex::new(k).map_err(|e| CliError::Usage(format!("invalid --key regex: {e}")))?)
        }
        None => None,
    };
    let mut out = Vec::new();
    visit(root, &mut |path, key, node| {
        let ok = re
            .as_ref()
            .is_none_or(|re| key.is_some_and(|k| re.is_match(k)))
            && q.type_.as_deref().is_none_or(|t| type_matches(node, t))
            && q.value.as_deref().is_none_or(|v| value_matches(node, v));
        if ok {
            out.push(if path.is_empty() {
                "/".to_string()
            } else {
                path.to_string()
            });
        }
        asdf::array_kind(node).is_none()
    });
    Ok(out)
}
