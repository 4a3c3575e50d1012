//! The error type of this crate.

use std::fmt;

/// Where in the input text something was found.
///
/// `line` is 1-based, `column` 0-based (in characters) and `offset` is the byte offset from the
/// start of the text handed to the parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Location {
    /// Line number, 1-based.
    pub line: usize,
    /// Column, 0-based, counted in characters.
    pub column: usize,
    /// Byte offset from the start of the input.
    pub offset: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {} (byte {})",
            self.line, self.column, self.offset
        )
    }
}

/// Everything that can go wrong while parsing, emitting or resolving references.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input is not valid UTF-8.
    #[error("the YAML tree is not valid UTF-8: invalid byte at offset {offset}")]
    Utf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// The YAML text is malformed (reported by the event parser).
    #[error("YAML syntax error at {location}: {message}")]
    Syntax {
        /// Where the parser stopped.
        location: Location,
        /// What the parser expected.
        message: String,
    },
    /// [`Engine::Fast`](crate::Engine::Fast) met text it leaves to the reference parser (a
    /// rare construct, or an error the reference parser reports with its location).
    #[error("the fast YAML parser stops at byte {offset}: {reason} (Engine::Auto reads such text with the reference parser)")]
    Unsupported {
        /// Byte offset where it stopped.
        offset: usize,
        /// What it found there.
        reason: &'static str,
    },
    /// The input has more than one YAML document; an ASDF tree is exactly one.
    #[error("a second YAML document starts at {location}; an ASDF tree is a single document")]
    MultipleDocuments {
        /// Where the second document starts.
        location: Location,
    },
    /// Collections nest deeper than [`Limits::max_depth`](crate::Limits::max_depth).
    #[error("nesting deeper than the limit of {limit} levels at {location}")]
    DepthLimit {
        /// The configured limit.
        limit: usize,
        /// Where the limit was crossed.
        location: Location,
    },
    /// Aliases would expand to more nodes than [`Limits::max_alias_nodes`](crate::Limits::max_alias_nodes).
    #[error("aliases expand to more than the limit of {limit} nodes (alias at {location})")]
    AliasLimit {
        /// The configured limit.
        limit: u64,
        /// The alias that crossed the limit.
        location: Location,
    },
    /// Aliases would expand to more scalar bytes than
    /// [`Limits::max_alias_bytes`](crate::Limits::max_alias_bytes).
    #[error(
        "aliases expand to more than the limit of {limit} bytes of scalars (alias at {location})"
    )]
    AliasBytesLimit {
        /// The configured limit.
        limit: u64,
        /// The alias that crossed the limit.
        location: Location,
    },
    /// A mapping has more entries than [`Mapping::MAX_LEN`](crate::Mapping::MAX_LEN).
    #[error("the mapping starting at {location} has more than {limit} entries")]
    MappingTooLarge {
        /// The most entries a mapping holds.
        limit: usize,
        /// Where the mapping starts.
        location: Location,
    },
    /// A scalar is longer than [`Limits::max_scalar_bytes`](crate::Limits::max_scalar_bytes).
    #[error("scalar of {len} bytes at {location} exceeds the limit of {limit} bytes")]
    ScalarLimit {
        /// Length of the scalar in bytes.
        len: usize,
        /// The configured limit.
        limit: usize,
        /// Where the scalar starts.
        location: Location,
    },
    /// An integer scalar has more digits than
    /// [`MAX_INT_DIGITS`](crate::resolve::MAX_INT_DIGITS) (Python's limit for `int()` of a
    /// string: PyYAML cannot read it either).
    #[error("integer of {digits} digits at {location} exceeds the limit of {limit} digits")]
    IntegerTooLong {
        /// Its number of digits.
        digits: usize,
        /// The limit.
        limit: usize,
        /// Where the scalar starts.
        location: Location,
    },
    /// A tag is longer than [`MAX_TAG_BYTES`](crate::MAX_TAG_BYTES), or the distinct
    /// tags of the document together exceed
    /// [`MAX_TAG_TOTAL_BYTES`](crate::MAX_TAG_TOTAL_BYTES).
    #[error("tag of {len} bytes at {location}: tags are limited to {} bytes each and {} bytes in all (the distinct tags so far take {total})", crate::MAX_TAG_BYTES, crate::MAX_TAG_TOTAL_BYTES)]
    TagLimit {
        /// The tag's length in bytes.
        len: usize,
        /// The bytes of the distinct tags with this one.
        total: usize,
        /// Where the tagged node starts.
        location: Location,
    },
    /// An alias names an anchor that is not defined (or not yet complete: a recursive alias).
    #[error("alias at {location} refers to {reason}")]
    BadAlias {
        /// Where the alias is.
        location: Location,
        /// "an undefined anchor" or "an anchor that contains it (recursive alias)".
        reason: &'static str,
    },
    /// A scalar with an explicit or implicit type cannot be converted to that type.
    #[error("invalid {expected} scalar {text:?} at {location}")]
    InvalidScalar {
        /// The type the tag or the YAML 1.1 resolver asked for (`int`, `float`, `bool`, `null`).
        expected: &'static str,
        /// The scalar text (truncated to 80 characters).
        text: String,
        /// Where the scalar starts.
        location: Location,
    },
    /// A mapping key is a collection (Python cannot load such keys either).
    #[error("mapping key at {location} is a {kind}; keys must be scalars (str, int or bool)")]
    InvalidKey {
        /// `sequence` or `mapping`.
        kind: &'static str,
        /// Where the key starts.
        location: Location,
    },
    /// A `<<` merge key has a value that is not a mapping or a sequence of mappings.
    #[error("merge key `<<` at {location} needs a mapping or a list of mappings")]
    InvalidMerge {
        /// Where the mapping holding the merge key starts.
        location: Location,
    },
    /// The emitter met something it cannot write.
    #[error("cannot emit node at {path}: {message}")]
    Emit {
        /// JSON Pointer of the offending node.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A JSON Pointer is syntactically invalid.
    #[error("invalid JSON Pointer {pointer:?}: {message}")]
    InvalidPointer {
        /// The pointer text.
        pointer: String,
        /// What is wrong with it.
        message: &'static str,
    },
    /// A `$ref` points at nothing.
    #[error("unresolvable reference {reference:?} (found at {path}): {message}")]
    DanglingReference {
        /// The `$ref` value.
        reference: String,
        /// JSON Pointer of the mapping holding the `$ref`.
        path: String,
        /// Which part of the pointer failed.
        message: String,
    },
    /// Following `$ref`s leads back to a reference already being resolved.
    #[error("reference cycle: {}", chain.join(" -> "))]
    ReferenceCycle {
        /// The references in the cycle, in the order they were followed.
        chain: Vec<String>,
    },
    /// The caller's resolver failed to provide an external document.
    #[error("cannot load external document {uri:?}: {source}")]
    External {
        /// The document URI (the `$ref` value without its fragment).
        uri: String,
        /// The resolver's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Resolving references would copy too many nodes or nest too deeply.
    #[error("resolving references exceeds the limit of {limit} {what}")]
    ResolveLimit {
        /// `nodes` or `levels`.
        what: &'static str,
        /// The limit that was hit.
        limit: u64,
    },
    /// Writing the output failed.
    #[error("I/O error while writing YAML: {0}")]
    Io(#[from] std::io::Error),
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
