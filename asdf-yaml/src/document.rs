//! The parser's entry points: text or bytes in, a [`Document`] (tree plus directives) out. Large
//! trees are parsed by pieces in parallel (`split`) when they qualify, by the serial builder
//! (`parse`) otherwise; on one thread, a large tree the fast parser leaves to the reference
//! parser is tried by pieces too, so that only the pieces that need it pay for the slower parser.

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::node::Node;
use crate::parse::{
    build, scan_directives, yaml11_line_breaks, Built, Engine, ParseOptions, Warning,
};

/// A parsed YAML document: the tree plus what the directives said.
#[derive(Clone, Debug)]
pub struct Document {
    /// The root node (null for an empty document).
    pub root: Node,
    /// The `%YAML` directive's version (e.g. `"1.1"`), if present.
    pub yaml_version: Option<String>,
    /// The `%TAG` directives as `(handle, prefix)` pairs, in order.
    pub tag_handles: Vec<(String, String)>,
    /// Warnings (at most 100 are kept).
    pub warnings: Vec<Warning>,
}

/// Parses YAML text with default options and returns the root node.
///
/// Text before the directives may be `#ASDF ...` header lines (they are YAML comments).
///
/// ```
/// let text = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
///             --- !core/asdf-1.1.0\nflag: yes\nmode: 017\nname: '017'\n...\n";
/// let root = asdf_yaml::parse_str(text).unwrap();
/// assert_eq!(root.tag(), Some("tag:stsci.edu:asdf/core/asdf-1.1.0"));
/// assert_eq!(root.get("flag").and_then(|n| n.as_bool()), Some(true));
/// assert_eq!(root.get("mode").and_then(|n| n.as_i64()), Some(15));
/// assert_eq!(root.get("name").and_then(|n| n.as_str()), Some("017"));
/// ```
pub fn parse_str(text: &str) -> Result<Node> {
    Ok(parse_document(text, &ParseOptions::default())?.root)
}

/// Parses UTF-8 bytes with default options (a leading byte-order mark is skipped).
pub fn parse_bytes(bytes: &[u8]) -> Result<Node> {
    Ok(parse_document_bytes(bytes, &ParseOptions::default())?.root)
}

/// Parses UTF-8 bytes into a [`Document`].
pub fn parse_document_bytes(bytes: &[u8], options: &ParseOptions) -> Result<Document> {
    let text = std::str::from_utf8(bytes).map_err(|e| Error::Utf8 {
        offset: e.valid_up_to(),
    })?;
    parse_document(text, options)
}

/// The tree of a document's text as given (no byte-order mark skipped, no line breaks
/// rewritten, so that pieces of it are pieces of the text). Large trees are parsed by pieces in
/// parallel when they qualify. On one thread, when the fast parser leaves a large tree to the
/// reference parser, its pieces are tried first, so that only the pieces that need it pay for the
/// slower parser. Whenever the pieces do not settle it, the serial parse decides (and reports
/// every error).
fn build_text(text: &str, options: &ParseOptions) -> Result<Built> {
    if let Some(built) = crate::split::parse_parallel(text, options) {
        return Ok(built);
    }
    if options.engine != Engine::Auto || rayon::current_num_threads() > 1 {
        return build(text, 0, options);
    }
    if let Ok(built) = build(text, 0, &options.with_engine(Engine::Fast)) {
        return Ok(built);
    }
    match crate::split::parse_pieces_after_bail(text, options) {
        Some(built) => Ok(built),
        None => build(text, 0, &options.with_engine(Engine::Reference)),
    }
}

/// Parses YAML text into a [`Document`] with the given options.
pub fn parse_document(text: &str, options: &ParseOptions) -> Result<Document> {
    let (text, base) = match text.strip_prefix('\u{feff}') {
        Some(rest) => (rest, '\u{feff}'.len_utf8()),
        None => (text, 0),
    };
    let (yaml_version, tag_handles) = scan_directives(text);
    let text = yaml11_line_breaks(text);
    let built = match (&text, base) {
        (Cow::Borrowed(t), 0) => build_text(t, options)?,
        _ => build(&text, base, options)?,
    };
    Ok(Document {
        root: built.root,
        yaml_version,
        tag_handles,
        warnings: built.warnings,
    })
}
