//! Building a [`Node`] tree from the YAML event stream, with bounded resources.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError, Tag};

use crate::error::{Error, Location, Result};
use crate::fast::{self, Bail, Sink, TagParts};
use crate::node::{Entries, Mapping, Node, Value};
use crate::resolve::{
    construct_bool, construct_float, construct_int, resolve_plain, simple_number, Implicit,
    IntValue, Number, TIMESTAMP_TAG, VALUE_TAG, YAML_TAG_PREFIX,
};
use crate::text::{Interner, Str, Tag as SharedTag};

/// Resource bounds for parsing untrusted text. Exceeding one is an error, never a crash.
///
/// ```
/// use asdf_yaml::{parse_document, Limits, ParseOptions, Error};
/// let deep = "- ".repeat(100_000) + "x";
/// let opts = ParseOptions::default();
/// assert!(matches!(parse_document(&deep, &opts), Err(Error::DepthLimit { .. })));
/// let small = ParseOptions {
///     limits: Limits { max_depth: 2, ..Limits::default() },
///     ..ParseOptions::default()
/// };
/// assert!(parse_document("a: {b: {c: 1}}", &small).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Maximum nesting of collections (default 512; PyYAML itself stops near 330 levels because
    /// of Python's recursion limit, so every file Python can open fits).
    pub max_depth: usize,
    /// Maximum number of nodes that aliases (and `<<` merges) may stand for in total, counting
    /// the full expansion of each alias (default 1 000 000). A "billion laughs" document fails
    /// fast instead of describing 10^9 nodes to downstream walkers.
    pub max_alias_nodes: u64,
    /// Maximum number of scalar bytes that aliases (and `<<` merges) may stand for in total
    /// (default 256 MiB): an anchor on a multi-megabyte scalar aliased many times stays under
    /// the node count but would make every printer of the tree write gigabytes.
    pub max_alias_bytes: u64,
    /// Maximum length of one scalar in bytes (default 256 MiB).
    pub max_scalar_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_depth: 512,
            max_alias_nodes: 1_000_000,
            max_alias_bytes: 256 << 20,
            max_scalar_bytes: 256 << 20,
        }
    }
}

impl Limits {
    /// The preset for text from untrusted sources. The depth stays at 512 (every tree Python
    /// asdf can write must still parse); alias expansion, the only size not backed by the text
    /// itself, is cut to 100 000 nodes, and one scalar to 64 MiB (real trees are at most tens
    /// of MiB in all).
    ///
    /// ```
    /// use asdf_yaml::{parse_document, Limits, ParseOptions};
    /// let opts = ParseOptions::untrusted();
    /// assert!(parse_document("a: &x [1, 2]\nb: *x\n", &opts).is_ok());
    /// ```
    pub fn untrusted() -> Limits {
        Limits {
            max_depth: 512,
            max_alias_nodes: 100_000,
            max_alias_bytes: 16 << 20,
            max_scalar_bytes: 64 << 20,
        }
    }
}

/// Options for [`parse_document`](crate::parse_document).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// Resource bounds.
    pub limits: Limits,
    /// Which parser reads the text.
    pub engine: Engine,
}

impl ParseOptions {
    /// Options with [`Limits::untrusted`].
    pub fn untrusted() -> ParseOptions {
        ParseOptions {
            limits: Limits::untrusted(),
            ..ParseOptions::default()
        }
    }

    /// These options with `engine` instead of theirs (how a parse that falls back from one
    /// engine to the other keeps its limits).
    pub(crate) fn with_engine(self, engine: Engine) -> ParseOptions {
        ParseOptions { engine, ..self }
    }
}

/// Which parser turns text into events. Both feed the same tree builder, and the fast parser
/// produces exactly the reference parser's events wherever it accepts the text (the
/// differential tests hold it to that), so the choice changes speed, never a result.
///
/// ```
/// use asdf_yaml::{parse_document, Engine, ParseOptions};
/// let text = "%YAML 1.1\n--- !thing\na: [1, 2.5, yes]\nb: &x 'it''s'\nc: *x\n...\n";
/// let tree = |engine| {
///     parse_document(text, &ParseOptions { engine, ..ParseOptions::default() }).unwrap().root
/// };
/// assert_eq!(tree(Engine::Fast), tree(Engine::Reference));
/// // Errors are left to the reference parser, whose messages name the line and column.
/// let broken = "a: [1, 2\n";
/// let fast = ParseOptions { engine: Engine::Fast, ..ParseOptions::default() };
/// assert!(matches!(parse_document(broken, &fast), Err(asdf_yaml::Error::Unsupported { .. })));
/// let message = parse_document(broken, &ParseOptions::default()).unwrap_err().to_string();
/// assert!(message.contains("line 2"), "{message}");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// The fast parser, and the reference parser for whatever it leaves (rare constructs and
    /// every error, so error messages are always the reference parser's).
    #[default]
    Auto,
    /// Only the reference parser (saphyr-parser).
    Reference,
    /// Only the fast parser: text it leaves to the reference parser is an
    /// [`Error::Unsupported`]. For tests and benchmarks.
    Fast,
}

/// Something legal but discouraged found while parsing (e.g. a mapping key that is not a str, int
/// or bool, which ASDF Standard 1.6.0 forbids and Python asdf warns about).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Where it is.
    pub location: Location,
    /// What it is.
    pub message: String,
}

/// What one run of the builder produced.
pub(crate) struct Built {
    pub root: Node,
    pub warnings: Vec<Warning>,
    /// Nodes that aliases and merges stood for (charged against `max_alias_nodes`).
    pub alias_nodes: u64,
    /// Scalar bytes that aliases and merges stood for (charged against `max_alias_bytes`).
    pub alias_bytes: u64,
    /// Bytes of the distinct tags (charged against [`MAX_TAG_TOTAL_BYTES`]).
    pub tag_bytes: usize,
}

/// Parses `text` (already prepared: no byte-order mark, YAML 1.1 line breaks rewritten) on this
/// thread. `base` is added to reported byte offsets.
pub(crate) fn build(text: &str, base: usize, options: &ParseOptions) -> Result<Built> {
    match options.engine {
        Engine::Reference => build_reference(text, base, options),
        Engine::Fast => build_fast(text, base, options).map_err(|bail| Error::Unsupported {
            offset: bail.offset + base,
            reason: bail.reason,
        }),
        Engine::Auto => match build_fast(text, base, options) {
            Ok(built) => Ok(built),
            Err(_) => build_reference(text, base, options),
        },
    }
}

/// The fast parser's tree (see [`build_fast_to`]), nesting followed on the caller's thread
/// while its stack has room; text nested deeper than that is parsed again on a thread with a
/// stack for [`fast::DEEP_MAX_DEPTH`] levels.
fn build_fast(text: &str, base: usize, options: &ParseOptions) -> std::result::Result<Built, Bail> {
    build_fast_from(text, base, options, fast::Stack::here(fast::MAX_DEPTH))
}

/// [`build_fast`] on a thread whose stack lets the fast parser go as deep as `here` says.
fn build_fast_from(
    text: &str,
    base: usize,
    options: &ParseOptions,
    here: fast::Stack,
) -> std::result::Result<Built, Bail> {
    match build_fast_to(text, base, options, here) {
        Err(bail) if bail.reason == fast::NO_STACK => {
            let deep = || build_fast_to(text, base, options, fast::Stack::here(usize::MAX));
            on_deep_stack(deep).unwrap_or(Err(bail))
        }
        built => built,
    }
}

/// Runs `f` on a thread of its own with [`fast::DEEP_STACK`] bytes of stack; `None` when no such
/// thread can be started. A panic there is the caller's.
fn on_deep_stack<T: Send>(f: impl FnOnce() -> T + Send) -> Option<T> {
    #[cfg(test)]
    tests::DEEP_THREADS.with(|n| n.set(n.get() + 1));
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("asdf-yaml deep parse".into())
            .stack_size(fast::DEEP_STACK)
            .spawn_scoped(scope, f)
            .ok()?;
        Some(
            thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        )
    })
}

/// The fast parser's tree, nesting followed `max_depth` levels deep; any error is left to the
/// reference parser, so that its messages are the ones users see. Warnings are the fast
/// parser's, with the reference parser's locations, except in text with CRs (whose offsets the
/// fast parser does not read) and at the end of a text without a final line break (an empty
/// key there), which the reference parser places on that line or the next by its indentation
/// state.
fn build_fast_to(
    text: &str,
    base: usize,
    options: &ParseOptions,
    stack: fast::Stack,
) -> std::result::Result<Built, Bail> {
    let original = text;
    let lf = crlf_to_lf(text);
    let text = lf.as_deref().unwrap_or(text);
    let mut b = Builder::new(text, base, options);
    b.fast_marks = true;
    fast::parse(text, &mut b, options.limits.max_depth, stack).map_err(|bail| Bail {
        offset: lf
            .as_ref()
            .map_or(bail.offset, |_| original_offset(original, bail.offset)),
        ..bail
    })?;
    let at_unterminated_end = |w: &Warning| w.location.offset == base + text.len();
    if !b.warnings.is_empty()
        && (lf.is_some() || !text.ends_with('\n') && b.warnings.iter().any(at_unterminated_end))
    {
        return Err(Bail {
            offset: 0,
            reason: "a warning the reference parser locates itself",
        });
    }
    Ok(b.built())
}

/// Text whose line breaks are CR LF (written on Windows) or a CR alone (classic Mac OS) with LF
/// breaks instead, for the fast parser, which reads LF only; `None` when there is no CR. YAML
/// reads every line break, inside a scalar too, as one line feed, so the tree is the same;
/// positions only matter for errors and warnings, which the reference parser reports on the
/// original text.
fn crlf_to_lf(text: &str) -> Option<String> {
    memchr::memchr(b'\r', text.as_bytes())?;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = memchr::memchr(b'\r', rest.as_bytes()) {
        out.push_str(&rest[..i]);
        out.push('\n');
        rest = &rest[i + 1..];
        rest = rest.strip_prefix('\n').unwrap_or(rest);
    }
    out.push_str(rest);
    Some(out)
}

/// The offset in `original` (text with CRs) of `offset` in the LF text the fast parser read:
/// each CR LF there is one byte shorter, a CR alone is replaced in place.
fn original_offset(original: &str, offset: usize) -> usize {
    let b = original.as_bytes();
    let mut removed = 0;
    for cr in memchr::memchr_iter(b'\r', b) {
        if b.get(cr + 1) != Some(&b'\n') {
            continue;
        }
        // In the LF text, the line feed standing for this CR LF sits at `cr - removed`.
        if cr - removed >= offset {
            break;
        }
        removed += 1;
    }
    offset + removed
}

fn build_reference(text: &str, base: usize, options: &ParseOptions) -> Result<Built> {
    let mut b = Builder::new(text, base, options);
    b.run()?;
    Ok(b.built())
}

/// YAML 1.1 (and so PyYAML) treats NEL (U+0085), LS (U+2028) and PS (U+2029) as line breaks;
/// YAML 1.2 parsers treat them as ordinary characters. PyYAML writes them raw in single-quoted
/// scalars, each followed by the indentation of the continuation line, and reads NEL as a folded
/// `\n` and LS/PS as themselves with the indentation after them dropped. This rewrites the text
/// so the 1.2 parser sees the same thing: NEL becomes `\n`, blanks after LS/PS are removed.
/// Text without these characters is returned as is.
pub(crate) fn yaml11_line_breaks(text: &str) -> Cow<'_, str> {
    // NEL is C2 85 in UTF-8, LS and PS are E2 80 A8/A9: look for their lead bytes first.
    let b = text.as_bytes();
    let found = memchr::memchr2_iter(0xC2, 0xE2, b).any(|i| match b[i] {
        0xC2 => b.get(i + 1) == Some(&0x85),
        _ => b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xA8 | 0xA9)),
    });
    if !found {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{85}' => out.push('\n'),
            '\u{2028}' | '\u{2029}' => {
                out.push(c);
                while chars.next_if(|&n| n == ' ' || n == '\t').is_some() {}
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Reads `%YAML` and `%TAG` lines before the first `---`.
pub(crate) fn scan_directives(text: &str) -> (Option<String>, Vec<(String, String)>) {
    let mut version = None;
    let mut tags = Vec::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.starts_with('%') {
            // The directive's name ends at a blank: `%YAMLL 1.1` is a reserved directive.
            let mut parts = line.split_whitespace();
            match parts.next() {
                Some("%YAML") => version = parts.next().map(str::to_string),
                Some("%TAG") => {
                    if let (Some(h), Some(p)) = (parts.next(), parts.next()) {
                        tags.push((h.to_string(), p.to_string()));
                    }
                }
                _ => {}
            }
        } else if !(line.starts_with('#') || line.trim().is_empty()) {
            break;
        }
    }
    (version, tags)
}

/// How much a subtree expands to: its nodes and its scalars' bytes (for the alias budgets).
#[derive(Clone, Copy, Debug, Default)]
struct Size {
    nodes: u64,
    bytes: u64,
}

impl Size {
    /// One node holding `bytes` of scalar text.
    fn node(bytes: usize) -> Size {
        Size {
            nodes: 1,
            bytes: bytes as u64,
        }
    }

    fn add(self, other: Size) -> Size {
        Size {
            nodes: self.nodes.saturating_add(other.nodes),
            bytes: self.bytes.saturating_add(other.bytes),
        }
    }
}

/// A collection under construction.
struct Frame {
    tag: Option<SharedTag>,
    anchor: usize,
    start: Marker,
    /// Expanded size of the collection and its finished children (for the alias budgets).
    size: Size,
    kind: FrameKind,
}

/// A collection's children wait on the builder's shared stacks (`items`, `pairs`) from
/// `start` on, and move into one exactly-sized `Vec` when it closes: no growth reallocation
/// per collection.
enum FrameKind {
    Seq {
        start: usize,
    },
    Map {
        start: usize,
        /// The key waiting for its value, and whether it is the merge key `<<`.
        pending: Option<(Node, bool)>,
        /// Indices of entries whose key is the merge key.
        merges: Vec<usize>,
        /// Sizes of merge values.
        merge_size: Size,
    },
}

struct Builder<'t> {
    text: &'t str,
    /// Last (character index, byte offset) pair computed, so offsets of increasing positions cost
    /// O(n) in total.
    offset_cache: std::cell::Cell<(usize, usize)>,
    /// Whether marks come from the fast parser, which gives a byte offset and no line or
    /// column; then `offset_cache` holds the last (byte offset, line breaks before it) pair.
    fast_marks: bool,
    /// Bytes skipped before `text` (a byte-order mark), added to reported offsets.
    base: usize,
    limits: Limits,
    stack: Vec<Frame>,
    anchors: HashMap<usize, (Arc<Node>, Size)>,
    open_anchors: Vec<usize>,
    alias_nodes: u64,
    alias_bytes: u64,
    root: Option<(Node, Size)>,
    warnings: Vec<Warning>,
    /// Set while the scalar just built is a plain `<<`.
    plain_merge: bool,
    /// Every distinct tag of the document, stored once and shared by the nodes that carry it.
    tags: std::collections::HashSet<SharedTag>,
    /// Repeated strings (mapping keys above all), stored once.
    strings: Interner,
    /// The tag interned last.
    last_tag: Option<SharedTag>,
    /// Where a tag's full text is put together (kept to reuse its allocation).
    tag_buf: String,
    /// Bytes of the distinct tags, against [`MAX_TAG_TOTAL_BYTES`].
    tag_bytes: usize,
    /// Documents started so far.
    documents: usize,
    /// Children of the open sequences, innermost last (see [`FrameKind`]).
    items: Vec<Node>,
    /// Entries of the open mappings, innermost last.
    pairs: Vec<(Node, Node)>,
}

/// The longest tag accepted, in bytes. Real tags are URIs of under 100 bytes; a `%TAG` handle
/// lets a few bytes of text stand for a prefix of any length, so without a bound every node of
/// a document could carry its own megabyte-long tag.
pub const MAX_TAG_BYTES: usize = 1024;

/// The most bytes all the distinct tags of one document may take together (16 MiB): real
/// documents use a few dozen tags.
pub const MAX_TAG_TOTAL_BYTES: usize = 16 << 20;

/// Byte offset of character index `idx` in `text`.
fn byte_offset(text: &str, idx: usize) -> usize {
    text.char_indices().nth(idx).map_or(text.len(), |(b, _)| b)
}

impl<'t> Builder<'t> {
    /// The shared copy of `tag` (stored on first use), within [`MAX_TAG_BYTES`] and
    /// [`MAX_TAG_TOTAL_BYTES`].
    fn intern(&mut self, tag: &str, mark: &Marker) -> Result<SharedTag> {
        // Tagged nodes come in runs of one tag (the rows of a table, a list of quantities).
        if let Some(t) = self.last_tag.as_ref().filter(|t| t.as_str() == tag) {
            return Ok(t.clone());
        }
        if let Some(t) = self.tags.get(tag) {
            self.last_tag = Some(t.clone());
            return Ok(t.clone());
        }
        let total = self.tag_bytes.saturating_add(tag.len());
        if tag.len() > MAX_TAG_BYTES || total > MAX_TAG_TOTAL_BYTES {
            return Err(Error::TagLimit {
                len: tag.len(),
                total,
                location: self.loc(mark),
            });
        }
        self.tag_bytes = total;
        let t = SharedTag::new(tag);
        self.tags.insert(t.clone());
        self.last_tag = Some(t.clone());
        Ok(t)
    }

    fn loc(&self, m: &Marker) -> Location {
        if self.fast_marks {
            // The fast parser's marks are byte offsets, and a scalar's carries 1 + the offset
            // of its properties, where the reference parser marks it, in its line field.
            let offset = m.line().checked_sub(1).unwrap_or(m.index());
            return self.fast_loc(offset);
        }
        let idx = m.index();
        let (ci, bi) = self.offset_cache.get();
        let offset = if idx >= ci && bi <= self.text.len() {
            bi + byte_offset(&self.text[bi..], idx - ci)
        } else {
            byte_offset(self.text, idx)
        };
        self.offset_cache.set((idx, offset));
        Location {
            line: m.line(),
            column: m.col(),
            offset: offset + self.base,
        }
    }

    /// The location of byte `offset`, as the reference parser gives it: lines counted from 1,
    /// columns (characters) from 0 (see [`build_fast`] for the end of the text). Warnings come
    /// in text order, so the line breaks are counted once in all.
    #[cold]
    fn fast_loc(&self, offset: usize) -> Location {
        let b = self.text.as_bytes();
        let offset = offset.min(b.len());
        let (from, breaks) = match self.offset_cache.get() {
            (at, breaks) if at <= offset => (at, breaks),
            _ => (0, 0),
        };
        let breaks = breaks + memchr::memchr_iter(b'\n', &b[from..offset]).count();
        self.offset_cache.set((offset, breaks));
        let line_start = memchr::memrchr(b'\n', &b[..offset]).map_or(0, |i| i + 1);
        let column = self
            .text
            .get(line_start..offset)
            .map_or(0, |s| s.chars().count());
        Location {
            line: breaks + 1,
            column,
            offset: offset + self.base,
        }
    }

    fn syntax(&self, e: &ScanError) -> Error {
        Error::Syntax {
            location: self.loc(e.marker()),
            message: e.info().to_string(),
        }
    }

    fn new(text: &'t str, base: usize, options: &ParseOptions) -> Builder<'t> {
        Builder {
            text,
            offset_cache: std::cell::Cell::new((0, 0)),
            fast_marks: false,
            base,
            limits: options.limits,
            stack: Vec::new(),
            anchors: HashMap::new(),
            open_anchors: Vec::new(),
            alias_nodes: 0,
            alias_bytes: 0,
            root: None,
            warnings: Vec::new(),
            plain_merge: false,
            tags: std::collections::HashSet::new(),
            last_tag: None,
            tag_buf: String::new(),
            strings: Interner::new(),
            tag_bytes: 0,
            documents: 0,
            items: Vec::new(),
            pairs: Vec::new(),
        }
    }

    fn built(self) -> Built {
        Built {
            root: self.root.map(|(n, _)| n).unwrap_or_default(),
            warnings: self.warnings,
            alias_nodes: self.alias_nodes,
            alias_bytes: self.alias_bytes,
            tag_bytes: self.tag_bytes,
        }
    }

    /// Builds the tree from the reference parser's events.
    fn run(&mut self) -> Result<()> {
        let mut parser = Parser::new_from_str(self.text);
        while let Some(item) = parser.next_event() {
            let (event, span) = item.map_err(|e| self.syntax(&e))?;
            if !self.event(event, span.start)? {
                break;
            }
        }
        Ok(())
    }

    /// Takes one event; `false` at the end of the stream.
    fn event(&mut self, event: Event<'_>, mark: Marker) -> Result<bool> {
        match event {
            Event::Nothing | Event::StreamStart => {}
            Event::StreamEnd => return Ok(false),
            Event::DocumentStart(_) => {
                if self.documents > 0 {
                    return Err(Error::MultipleDocuments {
                        location: self.loc(&mark),
                    });
                }
                self.documents += 1;
            }
            Event::DocumentEnd => {}
            Event::Alias(id) => {
                let (node, size) = self.alias(id, &mark)?;
                self.finish(node, size, &mark)?;
            }
            Event::Scalar(text, style, anchor, tag) => {
                self.on_scalar(&text, style, anchor, tag.as_deref().map(parts), &mark)?
            }
            Event::SequenceStart(anchor, tag) => {
                self.on_start(false, anchor, tag.as_deref().map(parts), mark)?
            }
            Event::MappingStart(anchor, tag) => {
                self.on_start(true, anchor, tag.as_deref().map(parts), mark)?
            }
            Event::SequenceEnd | Event::MappingEnd => self.on_end(&mark)?,
        }
        Ok(true)
    }

    /// A scalar event: the node, placed into its parent.
    #[inline]
    fn on_scalar(
        &mut self,
        text: &str,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<TagParts<'_>>,
        mark: &Marker,
    ) -> Result<()> {
        let node = self.scalar(text, style, tag, mark)?;
        let size = Size::node(text.len());
        let node = self.anchor(node, size, anchor);
        self.finish(node, size, mark)?;
        self.plain_merge = false;
        Ok(())
    }

    /// A mapping (`map`) or sequence start event.
    #[inline]
    fn on_start(
        &mut self,
        map: bool,
        anchor: usize,
        tag: Option<TagParts<'_>>,
        mark: Marker,
    ) -> Result<()> {
        let kind = if map {
            FrameKind::Map {
                start: self.pairs.len(),
                pending: None,
                merges: Vec::new(),
                merge_size: Size::default(),
            }
        } else {
            FrameKind::Seq {
                start: self.items.len(),
            }
        };
        self.push(anchor, tag, mark, kind)
    }

    /// A collection end event: the collection, placed into its parent.
    #[inline]
    fn on_end(&mut self, mark: &Marker) -> Result<()> {
        let (node, size) = self.pop(mark)?;
        self.finish(node, size, mark)
    }

    fn push(
        &mut self,
        anchor: usize,
        tag: Option<TagParts<'_>>,
        start: Marker,
        kind: FrameKind,
    ) -> Result<()> {
        if self.stack.len() >= self.limits.max_depth {
            return Err(Error::DepthLimit {
                limit: self.limits.max_depth,
                location: self.loc(&start),
            });
        }
        let tag = match tag {
            Some(t) => self.collection_tag(t, &start)?,
            None => None,
        };
        if anchor != 0 {
            self.open_anchors.push(anchor);
        }
        self.stack.push(Frame {
            tag,
            anchor,
            start,
            size: Size::node(0),
            kind,
        });
        Ok(())
    }

    /// Closes the innermost collection and returns it with its expanded size.
    fn pop(&mut self, mark: &Marker) -> Result<(Node, Size)> {
        let Some(frame) = self.stack.pop() else {
            return Err(Error::Syntax {
                location: self.loc(mark),
                message: "collection end without a start".into(),
            });
        };
        let mut size = frame.size;
        let value = match frame.kind {
            FrameKind::Seq { start } => Value::Seq(self.items.drain(start..).collect()),
            FrameKind::Map {
                start,
                merges,
                merge_size,
                ..
            } => {
                if self.pairs.len() - start > Mapping::MAX_LEN {
                    return Err(Error::MappingTooLarge {
                        limit: Mapping::MAX_LEN,
                        location: self.loc(&frame.start),
                    });
                }
                let entries: Entries = self.pairs.drain(start..).collect();
                let entries = if merges.is_empty() {
                    entries
                } else {
                    size = size.add(merge_size);
                    self.charge_aliases(merge_size, &frame.start)?;
                    self.flatten_merges(entries, &merges, &frame.start)?
                };
                Value::Map(dedup(entries))
            }
        };
        let node = Node::new(value);
        let node = match frame.tag {
            Some(t) => node.with_shared_tag(t),
            None => node,
        };
        if frame.anchor != 0 {
            self.open_anchors.retain(|&a| a != frame.anchor);
        }
        Ok((self.anchor(node, size, frame.anchor), size))
    }

    fn charge_aliases(&mut self, n: Size, mark: &Marker) -> Result<()> {
        self.alias_nodes = self.alias_nodes.saturating_add(n.nodes);
        self.alias_bytes = self.alias_bytes.saturating_add(n.bytes);
        if self.alias_nodes > self.limits.max_alias_nodes {
            return Err(Error::AliasLimit {
                limit: self.limits.max_alias_nodes,
                location: self.loc(mark),
            });
        }
        if self.alias_bytes > self.limits.max_alias_bytes {
            return Err(Error::AliasBytesLimit {
                limit: self.limits.max_alias_bytes,
                location: self.loc(mark),
            });
        }
        Ok(())
    }

    /// PyYAML's merge semantics: merged entries come first (for a list of mappings, earlier
    /// mappings win), the mapping's own entries override them.
    fn flatten_merges(
        &self,
        entries: Entries,
        merges: &[usize],
        start: &Marker,
    ) -> Result<Entries> {
        let mut merged = Entries::default();
        let mut own = Vec::new();
        let bad = || Error::InvalidMerge {
            location: self.loc(start),
        };
        // The merged mapping holds at most `Mapping::MAX_LEN` entries, like any other.
        let own_len = entries.len().saturating_sub(merges.len());
        let add = |merged: &mut Entries, m: &Mapping| {
            if merged.len().saturating_add(m.len()).saturating_add(own_len) > Mapping::MAX_LEN {
                return Err(Error::MappingTooLarge {
                    limit: Mapping::MAX_LEN,
                    location: self.loc(start),
                });
            }
            merged.extend(m.iter().map(|(k, v)| (k.clone(), v.clone())));
            Ok(())
        };
        for (i, (k, v)) in entries.into_vec().into_iter().enumerate() {
            if !merges.contains(&i) {
                own.push((k, v));
                continue;
            }
            match v.value() {
                Value::Map(m) => add(&mut merged, m)?,
                Value::Seq(items) => {
                    for item in items.iter().rev() {
                        add(&mut merged, item.as_map().ok_or_else(bad)?)?;
                    }
                }
                _ => return Err(bad()),
            }
        }
        merged.extend(own);
        Ok(merged)
    }

    /// `node` itself, or (when it carries an anchor) the shared node its aliases will refer to.
    #[inline]
    fn anchor(&mut self, node: Node, size: Size, anchor: usize) -> Node {
        if anchor == 0 {
            return node;
        }
        let arc = Arc::new(node);
        self.anchors.insert(anchor, (arc.clone(), size));
        Node::new(Value::Shared(arc))
    }

    fn alias(&mut self, id: usize, mark: &Marker) -> Result<(Node, Size)> {
        let Some((arc, size)) = self.anchors.get(&id).cloned() else {
            let reason = if self.open_anchors.contains(&id) {
                "an anchor that contains it (recursive alias)"
            } else {
                "an undefined anchor"
            };
            return Err(Error::BadAlias {
                location: self.loc(mark),
                reason,
            });
        };
        self.charge_aliases(size, mark)?;
        Ok((Node::new(Value::Shared(arc)), size))
    }

    /// Inlined into the scalar event's handler, with [`implicit`](Self::implicit),
    /// [`string`](Self::string) and [`boolean`](Self::boolean): a `Node` returned from a call
    /// is stored in pieces (its last byte holds the variant) and reloaded whole by the caller,
    /// a load the processor cannot forward from those stores. Inlined, the node stays in
    /// registers until it is placed in its parent: a fifth of a fast parse's time.
    #[inline(always)]
    fn scalar(
        &mut self,
        text: &str,
        style: ScalarStyle,
        tag: Option<TagParts<'_>>,
        mark: &Marker,
    ) -> Result<Node> {
        if text.len() > self.limits.max_scalar_bytes {
            return Err(Error::ScalarLimit {
                len: text.len(),
                limit: self.limits.max_scalar_bytes,
                location: self.loc(mark),
            });
        }
        let node = match tag {
            // Numbers (most plain scalars of a data tree) are resolved and read in one pass.
            None if style == ScalarStyle::Plain => match simple_number(text) {
                Some(Number::Int(i)) => Node::new(Value::Int(i)),
                Some(Number::Float(f)) => Node::from(f),
                None => self.implicit(text, mark)?,
            },
            None => self.string(text),
            Some(t) => self.tagged(text, t, mark)?,
        };
        Ok(node)
    }

    /// A scalar with a tag: the YAML types by their tags, `!` a string, any other tag kept on
    /// the string.
    #[inline(never)]
    fn tagged(&mut self, text: &str, tag: TagParts<'_>, mark: &Marker) -> Result<Node> {
        self.with_full_tag(tag, |b, t| {
            Ok(match t {
                "!" => b.string(text),
                t => match t.strip_prefix(YAML_TAG_PREFIX) {
                    Some("str") => b.string(text),
                    Some("null") => Node::null(),
                    Some("bool") => b.boolean(text, mark)?,
                    Some("int") => b.int(text, mark)?,
                    Some("float") => b.float(text, mark)?,
                    _ => b.string(text).with_shared_tag(b.intern(t, mark)?),
                },
            })
        })
    }

    /// A collection's tag as kept on the node: `!!seq`, `!!map` and `!` mean "no tag".
    fn collection_tag(&mut self, tag: TagParts<'_>, mark: &Marker) -> Result<Option<SharedTag>> {
        self.with_full_tag(tag, |b, t| match t {
            "!" => Ok(None),
            s if matches!(s.strip_prefix(YAML_TAG_PREFIX), Some("seq" | "map")) => Ok(None),
            s => b.intern(s, mark).map(Some),
        })
    }

    /// Runs `f` on the full text of `tag` (`"!"` for the non-specific tag), put together in
    /// the builder's reused buffer.
    fn with_full_tag<T>(
        &mut self,
        tag: TagParts<'_>,
        f: impl FnOnce(&mut Self, &str) -> Result<T>,
    ) -> Result<T> {
        let mut buf = std::mem::take(&mut self.tag_buf);
        buf.clear();
        buf.push_str(tag.prefix);
        buf.push_str(&repair_escapes(tag.suffix));
        let out = f(self, &buf);
        self.tag_buf = buf;
        out
    }

    /// An untagged plain scalar, typed by PyYAML's implicit resolver.
    #[inline(always)]
    fn implicit(&mut self, text: &str, mark: &Marker) -> Result<Node> {
        Ok(match resolve_plain(text) {
            Implicit::Null => Node::null(),
            Implicit::Bool => self.boolean(text, mark)?,
            Implicit::Int => self.int(text, mark)?,
            Implicit::Float => self.float(text, mark)?,
            Implicit::Timestamp => self
                .string(text)
                .with_shared_tag(self.intern(TIMESTAMP_TAG, mark)?),
            Implicit::Value => self
                .string(text)
                .with_shared_tag(self.intern(VALUE_TAG, mark)?),
            // `<<` is only special as a mapping key; `finish` checks for that.
            Implicit::Merge => {
                self.plain_merge = true;
                self.string(text)
            }
            Implicit::Str => self.string(text),
        })
    }

    /// A scalar whose text is not what its type needs.
    fn invalid(&self, expected: &'static str, text: &str, mark: &Marker) -> Error {
        Error::InvalidScalar {
            expected,
            text: text.chars().take(80).collect(),
            location: self.loc(mark),
        }
    }

    #[inline(always)]
    fn boolean(&self, text: &str, mark: &Marker) -> Result<Node> {
        construct_bool(text)
            .map(Node::from)
            .ok_or_else(|| self.invalid("bool", text, mark))
    }

    fn float(&self, text: &str, mark: &Marker) -> Result<Node> {
        construct_float(text)
            .map(Node::from)
            .ok_or_else(|| self.invalid("float", text, mark))
    }

    /// An integer, within [`MAX_INT_DIGITS`](crate::resolve::MAX_INT_DIGITS).
    fn int(&self, text: &str, mark: &Marker) -> Result<Node> {
        let digits = crate::resolve::int_digits(text);
        if digits > crate::resolve::MAX_INT_DIGITS {
            return Err(Error::IntegerTooLong {
                digits,
                limit: crate::resolve::MAX_INT_DIGITS,
                location: self.loc(mark),
            });
        }
        let value = construct_int(text).ok_or_else(|| self.invalid("int", text, mark))?;
        Ok(Node::new(match value {
            IntValue::Small(i) => Value::Int(i),
            IntValue::Big(s) => Value::BigInt(Box::new(Str::from(s))),
        }))
    }

    /// A string scalar. Short text (enums, units, names: up to `Str::INLINE_CAPACITY` bytes) is
    /// held inside the `Str`; longer mapping keys come from the interner, so the keys of a
    /// table's rows are stored once; long values, which rarely repeat, are stored as they come.
    #[inline(always)]
    fn string(&mut self, text: &str) -> Node {
        let key = matches!(
            self.stack.last(),
            Some(Frame {
                kind: FrameKind::Map { pending: None, .. },
                ..
            })
        );
        Node::from(if key {
            self.strings.get(text)
        } else {
            Str::from(text)
        })
    }

    /// Places a finished node into its parent (or as the root). Inlined into every event's
    /// handler: it runs once per node.
    #[inline(always)]
    fn finish(&mut self, node: Node, size: Size, mark: &Marker) -> Result<()> {
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some((node, size));
            return Ok(());
        };
        frame.size = frame.size.add(size);
        match &mut frame.kind {
            FrameKind::Seq { .. } => self.items.push(node),
            FrameKind::Map {
                start,
                pending,
                merges,
                merge_size,
            } => match pending.take() {
                Some((key, is_merge)) => {
                    if is_merge {
                        merges.push(self.pairs.len() - *start);
                        *merge_size = merge_size.add(size);
                    }
                    self.pairs.push((key, node));
                }
                None => return self.key(node, mark),
            },
        }
        Ok(())
    }

    /// A finished node that is a key of the innermost mapping: checked, then held until its
    /// value comes. Inlined for the reason given at [`scalar`](Self::scalar); keys that are
    /// not strings, ints or bools are checked out of line.
    #[inline(always)]
    fn key(&mut self, node: Node, mark: &Marker) -> Result<()> {
        // Only a plain, untagged, unanchored `<<` is a merge key.
        let is_merge = self.plain_merge && !node.is_shared();
        if matches!(
            node.value(),
            Value::Seq(_) | Value::Map(_) | Value::Null | Value::Float(_)
        ) {
            self.odd_key(&node, mark)?;
        }
        if let Some(FrameKind::Map { pending, .. }) = self.stack.last_mut().map(|f| &mut f.kind) {
            *pending = Some((node, is_merge));
        }
        Ok(())
    }

    /// A collection as a key is an error; null and float keys are warned about.
    #[cold]
    #[inline(never)]
    fn odd_key(&mut self, node: &Node, mark: &Marker) -> Result<()> {
        match node.value() {
            Value::Seq(_) | Value::Map(_) => {
                let kind = if matches!(node.value(), Value::Seq(_)) {
                    "sequence"
                } else {
                    "mapping"
                };
                Err(Error::InvalidKey {
                    kind,
                    location: self.loc(mark),
                })
            }
            _ => {
                self.warn(mark, || {
                    format!(
                        "mapping key {:?} is a {}; ASDF 1.6.0 allows only str, int and bool keys",
                        node,
                        node.kind()
                    )
                });
                Ok(())
            }
        }
    }

    /// Keeps the first 100 warnings (`message` is made only for those: a table with a null
    /// key in every row warns once per row).
    fn warn(&mut self, mark: &Marker, message: impl FnOnce() -> String) {
        if self.warnings.len() < 100 {
            let location = self.loc(mark);
            self.warnings.push(Warning {
                location,
                message: message(),
            });
        }
    }
}

/// The fast parser's events go to the same builder methods as the reference parser's; an error
/// only stops the fast path (the reference parser then reports it).
impl<'t> Sink<'t> for Builder<'_> {
    fn event(&mut self, event: Event<'t>, mark: Marker) -> std::result::Result<(), ()> {
        Builder::event(self, event, mark).map(drop).map_err(drop)
    }

    #[inline]
    fn scalar(
        &mut self,
        text: &str,
        style: ScalarStyle,
        (anchor, tag): (usize, Option<TagParts<'_>>),
        at: usize,
        props_at: usize,
    ) -> std::result::Result<(), ()> {
        // A fast mark's line field carries `props_at` (see `loc`).
        let mark = Marker::new(at, props_at, 0);
        self.on_scalar(text, style, anchor, tag, &mark)
            .map_err(drop)
    }

    #[inline]
    fn start(
        &mut self,
        map: bool,
        anchor: usize,
        tag: Option<TagParts<'_>>,
        at: usize,
    ) -> std::result::Result<(), ()> {
        let mark = Marker::new(at, 0, 0);
        self.on_start(map, anchor, tag, mark).map_err(drop)
    }

    #[inline]
    fn end(&mut self, at: usize) -> std::result::Result<(), ()> {
        self.on_end(&Marker::new(at, 0, 0)).map_err(drop)
    }
}

/// The parts of a reference parser's tag.
fn parts(t: &Tag) -> TagParts<'_> {
    TagParts {
        prefix: &t.handle,
        suffix: &t.suffix,
    }
}

/// saphyr-parser 0.3.3 decodes a percent-escaped two-byte UTF-8 sequence in a tag (`%C3%A9`) as
/// the code point of the raw bytes (U+C3A9) instead of the character (U+00E9). Tags are ASCII in
/// YAML, so any such character came from that decoding and is repaired here.
fn repair_escapes(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let code = c as u32;
        let (hi, lo) = ((code >> 8) as u8, code as u8);
        let fixed = (0x80..=0xFFFF).contains(&code)
            && (0xC2..=0xDF).contains(&hi)
            && (0x80..=0xBF).contains(&lo);
        match fixed.then(|| {
            std::str::from_utf8(&[hi, lo])
                .ok()
                .and_then(|t| t.chars().next())
        }) {
            Some(Some(d)) => out.push(d),
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Identity of a mapping key for duplicate detection, with Python's dict semantics
/// (`True == 1`, `1.0 == 1`, every NaN distinct).
#[derive(Hash, PartialEq, Eq)]
enum KeyId<'a> {
    Null,
    Int(i64),
    Big(&'a str),
    Float(u64),
    Str(&'a str),
}

fn key_id(k: &Node) -> Option<KeyId<'_>> {
    Some(match k.value() {
        Value::Null => KeyId::Null,
        Value::Bool(b) => KeyId::Int(i64::from(*b)),
        Value::Int(i) => KeyId::Int(*i),
        Value::BigInt(s) => KeyId::Big(s),
        Value::Float(f) if f.is_nan() => return None,
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e18 => KeyId::Int(*f as i64),
        Value::Float(f) => KeyId::Float((f + 0.0).to_bits()),
        Value::Str(s) => KeyId::Str(s),
        Value::Seq(_) | Value::Map(_) | Value::Shared(_) | Value::Packed(_) => return None,
    })
}

/// Mappings up to this many entries look for duplicate keys by comparing pairs.
const SMALL_MAP: usize = 16;

/// Whether the keys of a mapping of at most [`SMALL_MAP`] entries are distinct, when every one
/// of them is a string; `None` when one is not.
fn distinct_str_keys(entries: &[(Node, Node)]) -> Option<bool> {
    let mut keys = [""; SMALL_MAP];
    for (slot, (k, _)) in keys.iter_mut().zip(entries) {
        *slot = match k.value() {
            Value::Str(s) => s.as_str(),
            _ => return None,
        };
    }
    let keys = &keys[..entries.len().min(SMALL_MAP)];
    Some((1..keys.len()).all(|i| !keys[..i].contains(&keys[i])))
}

/// Later duplicates replace the value of the first occurrence, which keeps its position (what a
/// Python dict built by PyYAML does).
pub(crate) fn dedup(entries: Entries) -> Mapping {
    if entries.len() <= SMALL_MAP {
        // Small mappings (nearly all of them): compare keys pairwise, without allocating;
        // string keys (nearly all keys) as they are, others by their identity.
        if distinct_str_keys(&entries) == Some(true) {
            return Mapping::from_unique(entries);
        }
        let mut ids: [Option<KeyId<'_>>; SMALL_MAP] = Default::default();
        for (id, (k, _)) in ids.iter_mut().zip(entries.iter()) {
            *id = key_id(k);
        }
        let ids = &ids[..entries.len()];
        let unique = (1..ids.len()).all(|i| {
            ids[i]
                .as_ref()
                .is_none_or(|a| ids[..i].iter().all(|b| b.as_ref() != Some(a)))
        });
        if unique {
            return Mapping::from_unique(entries);
        }
    }
    // Work on indices first (keys borrowed from `entries`), then move. `slot[i]` is the index
    // of the first entry with entry `i`'s key.
    let mut slot = Vec::with_capacity(entries.len());
    let mut repeats = false;
    {
        let hasher = foldhash::fast::RandomState::default();
        let mut seen: HashMap<KeyId<'_>, usize, _> =
            HashMap::with_capacity_and_hasher(entries.len(), hasher);
        for (i, (k, _)) in entries.iter().enumerate() {
            let first = key_id(k).map_or(i, |id| *seen.entry(id).or_insert(i));
            repeats |= first != i;
            slot.push(first);
        }
    }
    // Big mappings almost never repeat a key: then the entries stay where they are.
    if !repeats {
        return Mapping::from_unique(entries);
    }
    let mut out = Entries::with_capacity(entries.len());
    let mut index_of_first: HashMap<usize, usize> = HashMap::new();
    for (i, (k, v)) in entries.into_vec().into_iter().enumerate() {
        let first = slot[i];
        if first == i {
            index_of_first.insert(i, out.len());
            out.push((k, v));
        } else if let Some(&pos) = index_of_first.get(&first) {
            out[pos].1 = v;
        }
    }
    Mapping::from_unique(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Threads [`on_deep_stack`] started from this thread.
        pub(super) static DEEP_THREADS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Flow sequences nested `depth` deep around a scalar, as a mapping's value.
    fn nested(depth: usize) -> String {
        format!("a: {}1{}\n", "[".repeat(depth), "]".repeat(depth))
    }

    fn reference(text: &str) -> Node {
        build_reference(text, 0, &ParseOptions::default())
            .unwrap()
            .root
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn deep_nesting_is_followed_in_place_while_the_stack_has_room() {
        // 400 block levels, past the 96 followed where the bounds are unknown, on a thread of
        // (at least) 8 MiB of stack.
        let text = format!("{}x\n", "- ".repeat(400));
        let (root, threads) = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn({
                let text = text.clone();
                move || {
                    let built = build(&text, 0, &ParseOptions::default()).unwrap();
                    (built.root, DEEP_THREADS.with(|n| n.get()))
                }
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(threads, 0);
        assert_eq!(root, reference(&text));
    }

    #[test]
    fn a_stack_without_room_hands_the_text_to_a_thread_of_its_own() {
        let text = nested(120);
        let before = DEEP_THREADS.with(|n| n.get());
        let options = ParseOptions::default();
        let none_left = fast::Stack::Floor(usize::MAX);
        let built = build_fast_from(&text, 0, &options, none_left).unwrap();
        assert_eq!(DEEP_THREADS.with(|n| n.get()), before + 1);
        assert_eq!(built.root, reference(&text));
        // Room for the text: no thread.
        let built = build_fast_from(&text, 0, &options, fast::Stack::Levels(121)).unwrap();
        assert_eq!(DEEP_THREADS.with(|n| n.get()), before + 1);
        assert_eq!(built.root, reference(&text));
    }

    #[test]
    fn the_fast_parser_stops_where_the_stack_or_the_limit_says() {
        let options = ParseOptions::default();
        let bail = |text: &str, stack| build_fast_to(text, 0, &options, stack).err();
        let text = nested(10);
        assert!(bail(&text, fast::Stack::Levels(11)).is_none());
        assert!(bail(&text, fast::Stack::Floor(0)).is_none());
        let no_stack = Some(fast::NO_STACK);
        assert_eq!(
            bail(&text, fast::Stack::Levels(10)).map(|b| b.reason),
            no_stack
        );
        let none_left = fast::Stack::Floor(usize::MAX);
        assert_eq!(bail(&text, none_left).map(|b| b.reason), no_stack);
        // The parse's depth limit is no matter of stack: the reference parser reports it.
        let limited = ParseOptions {
            limits: Limits {
                max_depth: 5,
                ..Limits::default()
            },
            ..ParseOptions::default()
        };
        let stopped = build_fast_to(&text, 0, &limited, fast::Stack::Floor(0));
        assert_eq!(stopped.err().map(|b| b.reason), Some(fast::TOO_DEEP));
        assert!(matches!(
            build(&text, 0, &limited),
            Err(Error::DepthLimit { limit: 5, .. })
        ));
    }
}
