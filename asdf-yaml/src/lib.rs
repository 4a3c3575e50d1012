//! A tag-aware YAML 1.1 tree for ASDF.
//!
//! * [`Node`] / [`Value`] / [`Mapping`]: the tree every ASDF layer works on. Every node may carry
//!   a tag (a full URI); anchored subtrees are shared through `Arc` ([`Value::Shared`]) and
//!   written back as anchors and aliases. Trees are `Send + Sync`.
//! * [`parse_str`], [`parse_bytes`], [`parse_document`]: text to tree, with PyYAML's YAML 1.1
//!   implicit typing ([`resolve`]), every `%TAG` handle honoured, and resource [`Limits`].
//! * [`emit_to_string`], [`emit()`], [`emit_with`]: tree to text that Python asdf reads back to the
//!   same values and tags.
//! * [`Node::pointer`] (JSON Pointer) and [`resolve_references`] (`$ref`).
//!
//! ```
//! use asdf_yaml::{parse_str, emit_to_string, Node};
//! let text = "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
//!             a: &id001 {abc: 123}\nb: *id001\nwhen: 2001-12-14\n...\n";
//! let tree = parse_str(text).unwrap();
//! assert!(tree.get("b").unwrap().is_shared());
//! assert_eq!(tree.pointer("/b/abc").and_then(Node::as_i64), Some(123));
//! assert_eq!(tree.get("when").and_then(Node::tag), Some("tag:yaml.org,2002:timestamp"));
//! let again = emit_to_string(&tree).unwrap();
//! assert!(again.contains("b: *id001"));
//! assert_eq!(parse_str(&again).unwrap(), tree);
//! ```

// The exceptions are `text.rs` (`Str`'s two-word small-string representation), `entries.rs` (a
// mapping's entries behind one pointer) and `key_index.rs` (a mapping's lazily built key index,
// one atomic pointer).
#![deny(unsafe_code)]

mod document;
pub mod emit;
mod entries;
mod error;
mod fast;
mod key_index;
mod node;
mod parse;
pub mod pointer;
mod reference;
pub mod resolve;
mod split;
mod stack;
mod text;

pub use document::{parse_bytes, parse_document, parse_document_bytes, parse_str, Document};
pub use emit::{emit, emit_string_with, emit_to_string, emit_with, EmitOptions, ASDF_TAG_PREFIX};
pub use error::{Error, Location, Result};
pub use node::{Mapping, Node, Packed, PackedItems, Value};
pub use parse::{Engine, Limits, ParseOptions, Warning, MAX_TAG_BYTES, MAX_TAG_TOTAL_BYTES};
pub use reference::{join_uri, reference_target, resolve_references, NoExternal, RefResolver};
pub use text::{Str, Tag};
/// The one-word vector a [`Value::Seq`] holds (from the `thin-vec` crate).
pub use thin_vec::ThinVec;
