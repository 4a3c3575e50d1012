//! The fast path: a single-pass parser for the YAML that ASDF writers produce, and most other
//! YAML.
//!
//! It emits exactly the events saphyr-parser (the reference parser) would emit for the same text,
//! into the same tree builder, so the tree is made by one piece of code whichever parser read the
//! text. It understands what PyYAML and this crate's emitter write: block mappings and sequences
//! (compact `- a: 1` and indentless `key:\n- x` forms, indented roots), flow collections over
//! several lines (JSON's `{"a":1}`, keys without values and single-pair mappings `[a: 1]`
//! included), plain scalars folded over lines (in flow collections too, as PyYAML wraps them),
//! plain scalars led by `-`, `:` or `?`, single- and double-quoted scalars with escapes and
//! folding, literal and folded block scalars (`|`, `>`, with chomping and indentation
//! indicators, as PyYAML writes `|2-` for text that starts with a space, read line by line as the
//! reference parser reads them; at column 0 at the root), explicit `? key` / `: value` entries
//! (PyYAML writes them for keys longer than 128 characters or over several lines, and inside
//! flow collections for long keys there), tags through `%TAG` handles, verbatim ones (`!<uri>`,
//! percent escapes decoded) and the non-specific `!`, anchors and tags on keys and on lines of
//! their own, aliases, comments, directives (reserved ones ignored) and `...` before the first
//! document. Tabs are read where the reference parser's reading of them is plain (see
//! [`Parser::claim`]): inside comments, quoted scalars (trimmed around their line breaks), block
//! scalars' content and block plain scalars (leading a continuation line past the scalar's
//! indentation), between flow tokens, trailing a node's line, on lines holding nothing else, and
//! after the indicators `-`, `:` and `---` (see [`Parser::tab_after_indicator`]). Aliases and
//! empty nodes may be keys (null and float keys draw the builder's warning, located as the
//! reference parser locates it). At anything else — tabs elsewhere (at a line's indentation,
//! after `?`), carriage returns (the builder hands text over with LF breaks only), a second
//! document, collections as keys, nesting deeper than [`DEEP_MAX_DEPTH`], and every error — it
//! stops with a [`Bail`], and the caller parses the text with the reference parser, which
//! therefore decides every error message and every rare construct. The differential tests hold
//! the two parsers to the same events and trees.
//!
//! Speed comes from working on bytes (every structural character is ASCII), scanning with
//! `memchr`, borrowing scalars from the text instead of copying them, and emitting events
//! straight into the builder without a token queue.

use std::borrow::Cow;
use std::collections::HashMap;

use memchr::{memchr, memchr2, memchr3};
use saphyr_parser::{Event, Marker, ScalarStyle};

/// Why the fast path stopped: the construct (or error) it leaves to the reference parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bail {
    /// Byte offset in the text where it stopped.
    pub offset: usize,
    /// What it found there.
    pub reason: &'static str,
}

type R<T = ()> = Result<T, Bail>;

/// Deepest nesting the fast parser follows on a thread whose stack bounds are unknown (off
/// Linux; see [`crate::stack`]). It recurses once per level (the reference parser does not):
/// unoptimised, a level takes up to about 9 KiB of stack (1.5 KiB optimised), and 96 levels fit
/// the 2 MiB stacks of test and rayon threads. Where the bounds are known it follows nesting
/// while the stack has room ([`Stack::Floor`]). Deeper text is parsed again on a thread of its
/// own (see [`DEEP_STACK`]).
pub(crate) const MAX_DEPTH: usize = 96;

/// Deepest nesting the fast parser follows at all (the default
/// [`Limits::max_depth`](crate::Limits::max_depth)); deeper text (with a raised limit) goes to
/// the reference parser, which does not recurse.
pub(crate) const DEEP_MAX_DEPTH: usize = 512;

/// Stack of the thread that parses text nested deeper than the caller's stack lets the fast
/// parser follow: more than six times what [`DEEP_MAX_DEPTH`] levels take unoptimised
/// (reserved, not touched, until used).
pub(crate) const DEEP_STACK: usize = 64 << 20;

/// How far the stack of the thread it runs on lets the fast parser follow nesting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stack {
    /// While the stack pointer stays above this address ([`crate::stack::floor`]).
    Floor(usize),
    /// This many levels: the thread's stack bounds are unknown.
    Levels(usize),
}

impl Stack {
    /// The calling thread's: its floor when its bounds are known, else `levels` levels.
    pub(crate) fn here(levels: usize) -> Stack {
        crate::stack::floor().map_or(Stack::Levels(levels), Stack::Floor)
    }

    /// Whether a collection may open at `depth` (the levels open around it).
    #[inline(always)]
    fn room(self, depth: usize) -> bool {
        match self {
            Stack::Floor(floor) => crate::stack::pointer() > floor,
            Stack::Levels(levels) => depth < levels,
        }
    }
}

/// Flow collections the reference parser reads inside each other (it counts them in a `u8`);
/// one more is its error.
const MAX_FLOW_LEVEL: usize = 255;

/// Why the fast parser stops at a nesting level past its `max_depth`.
pub(crate) const TOO_DEEP: &str = "nesting deeper than the fast parser follows";

/// Why the fast parser stops at a nesting level its thread's stack has no room for.
pub(crate) const NO_STACK: &str =
    "nesting deeper than this thread's stack lets the fast parser follow";

/// A node's tag as a parser read it: the prefix its handle stands for (empty for a verbatim
/// tag) and its suffix; the full tag is the two joined. Borrowed from the text (and from the
/// `%TAG` directives), so a tagged node costs the parser no allocation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TagParts<'a> {
    pub prefix: &'a str,
    pub suffix: &'a str,
}

/// Receives the events. An `Err` (the builder refused an event: a limit, a bad alias, a
/// collection as a key) stops the fast path.
///
/// Scalars and collection starts and ends (nearly every event of a tree) have methods of their
/// own, so the hot path builds no [`Event`]; each means exactly the event it is named after.
pub(crate) trait Sink<'t> {
    /// Takes one stream, document or alias event; `mark.index()` is its byte offset.
    fn event(&mut self, event: Event<'t>, mark: Marker) -> Result<(), ()>;
    /// `Event::Scalar(text, style, anchor, tag)` (`node` is the anchor and the tag) whose text
    /// starts at byte offset `at`;
    /// `props_at` is 1 + the offset of its properties (0 without them), where the reference
    /// parser marks such a node.
    fn scalar(
        &mut self,
        text: &str,
        style: ScalarStyle,
        node: (usize, Option<TagParts<'_>>),
        at: usize,
        props_at: usize,
    ) -> Result<(), ()>;
    /// `Event::MappingStart` (`map`) or `Event::SequenceStart` at byte offset `at`.
    fn start(
        &mut self,
        map: bool,
        anchor: usize,
        tag: Option<TagParts<'_>>,
        at: usize,
    ) -> Result<(), ()>;
    /// `Event::MappingEnd` or `Event::SequenceEnd` (whichever closes the innermost collection).
    fn end(&mut self, at: usize) -> Result<(), ()>;
}

/// The line the parser stands on after a node: the indentation of the next content line (the
/// position is at its first character), or `None` at the end of the text or at a document marker.
type Next = Option<usize>;

/// Where a node starts, which decides what may follow on its line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// After `key:` — a block sequence may start on the next line at the key's own column.
    MapValue,
    /// After `- ` — a block mapping or sequence may start on the same line.
    SeqItem,
    /// After an explicit key's `?` or its value's `:` — both of the above.
    Explicit,
    /// After `---`.
    Root,
}

/// A mapping key read before it can be emitted (before its mapping is opened, or before it is
/// known to be a key): a scalar (its text, style and properties) or an alias (of the anchor
/// with this id).
enum Key<'t> {
    Scalar(Cow<'t, str>, ScalarStyle, Props<'t>),
    Alias(usize),
}

impl Ctx {
    /// Whether a block sequence may start on a following line at the column of the collection
    /// holding the node (an indentless sequence, as a mapping's value).
    fn indentless(self) -> bool {
        matches!(self, Ctx::MapValue | Ctx::Explicit)
    }
}

/// Anchor and tag of a node, and 1 + the offset where the first of them starts (the reference
/// parser's mark for the node, which warnings about keys report; 0 without properties). Both
/// numbers are `u32`, so that the properties take no more room than without the offset.
#[derive(Default, Clone, Copy)]
struct Props<'t> {
    anchor: u32,
    at: u32,
    tag: Option<Tag<'t>>,
}

/// A tag as the parser read it: borrowed from the text, or, when its suffix has percent
/// escapes, with the decoded suffix kept by the parser (`Parser::decoded`, by index).
#[derive(Clone, Copy)]
enum Tag<'t> {
    Text(TagParts<'t>),
    Decoded { prefix: &'t str, suffix: usize },
}

/// The parts of `tag`, a decoded suffix looked up in `decoded`.
fn tag_parts<'a>(tag: Option<Tag<'a>>, decoded: &'a [String]) -> Option<TagParts<'a>> {
    tag.map(|tag| match tag {
        Tag::Text(parts) => parts,
        Tag::Decoded { prefix, suffix } => TagParts {
            prefix,
            suffix: &decoded[suffix],
        },
    })
}

impl<'t> Props<'t> {
    fn is_empty(&self) -> bool {
        self.anchor == 0 && self.tag.is_none()
    }

    /// These properties with `other`'s (read on another line before the same node), or `None`
    /// if both have an anchor or both a tag.
    #[inline]
    fn merged(self, other: Props<'t>) -> Option<Props<'t>> {
        // Nearly always one side (usually both) is empty.
        if other.is_empty() {
            return Some(self);
        }
        if self.anchor != 0 && other.anchor != 0 || self.tag.is_some() && other.tag.is_some() {
            return None;
        }
        Some(Props {
            anchor: self.anchor.max(other.anchor),
            tag: self.tag.or(other.tag),
            at: if self.is_empty() { other.at } else { self.at },
        })
    }
}

/// Parses `text` (no byte-order mark, YAML 1.1 line breaks already rewritten), emitting events
/// into `sink`, following nesting `max_depth` levels deep (at most [`DEEP_MAX_DEPTH`]) while
/// `stack` has room. Stops at the first construct it leaves to the reference parser.
pub(crate) fn parse<'t, S: Sink<'t>>(
    text: &'t str,
    sink: &mut S,
    max_depth: usize,
    stack: Stack,
) -> R {
    let b = text.as_bytes();
    // The reference parser's rules for carriage returns, NUL (which ends its input) and
    // byte-order marks inside the text are subtle; real ASDF trees have none of them outside
    // escapes, so such text goes to it whole. Tabs are noted, and each must be claimed.
    let tabs = scan_controls(b).map_err(|offset| Bail {
        offset,
        reason: "a control character (carriage return, NUL, ...)",
    })?;
    if let Some(offset) = memchr::memmem::find(b, "\u{feff}".as_bytes()) {
        return Err(Bail {
            offset,
            reason: "a byte-order mark inside the text",
        });
    }
    let mut p = Parser {
        text,
        b,
        pos: 0,
        line_start: 0,
        handles: Vec::new(),
        anchors: HashMap::new(),
        next_anchor: 1,
        version_seen: false,
        decoded: Vec::new(),
        depth: 0,
        max_depth: max_depth.min(DEEP_MAX_DEPTH),
        stack,
        flow_level: 0,
        explicit_pairs: 0,
        block_indent: -1,
        flow_unrolled: false,
        tabs,
        next_tab: 0,
        sink,
    };
    p.stream()?;
    match p.tabs.get(p.next_tab) {
        Some(&offset) => Err(Bail {
            offset,
            reason: "a tab where the fast parser does not read one",
        }),
        None => Ok(()),
    }
}

struct Parser<'t, 's, S> {
    text: &'t str,
    b: &'t [u8],
    pos: usize,
    /// Start of the line the position is on (kept by [`Parser::next_line`]).
    line_start: usize,
    /// `%TAG` handles of the document, as `(handle, prefix)`.
    handles: Vec<(&'t str, &'t str)>,
    /// Anchor names to the id of their latest definition (ids count from 1 in text order, as
    /// the reference parser numbers them).
    anchors: HashMap<&'t str, u32>,
    next_anchor: u32,
    /// Whether a `%YAML` directive was read.
    version_seen: bool,
    /// Tag suffixes with their percent escapes decoded (rare: most tags are borrowed).
    decoded: Vec<String>,
    /// Collections open around the position.
    depth: usize,
    /// Deepest nesting followed (see [`parse`]).
    max_depth: usize,
    /// How deep the thread's stack lets it go.
    stack: Stack,
    /// Flow collections open around the position.
    flow_level: usize,
    /// Column of the innermost open block collection (-1 for none): a tab among a line's
    /// leading blanks at or before it, before content, is an error (see
    /// [`Parser::tab_indented_line`]).
    block_indent: isize,
    /// Bit `n` set: the flow sequence at flow level `n` (below 128) has had an explicit pair
    /// (`[? a]`), after which the reference parser refuses an empty key without properties
    /// (`[: b]`); the bit is cleared when that sequence closes. Explicit pairs deeper than that
    /// are left to the reference parser.
    explicit_pairs: u128,
    /// Whether a plain scalar was read since the outermost open flow collection started (the
    /// reference parser then lets closing brackets and commas stand at the parent's column).
    flow_unrolled: bool,
    /// Offsets of the text's tabs, in order (usually none).
    tabs: Vec<usize>,
    /// The first of `tabs` not yet claimed by [`Parser::claim`].
    next_tab: usize,
    sink: &'s mut S,
}

/// The offsets of the tabs in `b`, or the offset of its first other C0 control character (a
/// line feed is none). Checked a chunk at a time without branches (so the compiler vectorises
/// it), then each chunk that has one.
fn scan_controls(b: &[u8]) -> Result<Vec<usize>, usize> {
    let control = |c: u8| c < 0x20 && c != b'\n';
    let mut tabs = Vec::new();
    let mut chunks = b.chunks_exact(64);
    let mut base = 0;
    for chunk in &mut chunks {
        if chunk.iter().fold(false, |any, &c| any | control(c)) {
            note_controls(chunk, base, &mut tabs)?;
        }
        base += 64;
    }
    note_controls(chunks.remainder(), base, &mut tabs)?;
    Ok(tabs)
}

/// [`scan_controls`] on one chunk starting at offset `base`.
fn note_controls(chunk: &[u8], base: usize, tabs: &mut Vec<usize>) -> Result<(), usize> {
    for (i, &c) in chunk.iter().enumerate() {
        if c == b'\t' {
            tabs.push(base + i);
        } else if c < 0x20 && c != b'\n' {
            return Err(base + i);
        }
    }
    Ok(())
}

/// A `%YAML` directive's version as the reference parser accepts it: `major.minor`, each of 1
/// to 9 digits (it reads any version; only the tree builder's resolver is YAML 1.1's).
fn is_yaml_version(v: &str) -> bool {
    let digits = |s: &str| (1..=9).contains(&s.len()) && s.bytes().all(|c| c.is_ascii_digit());
    v.split_once('.')
        .is_some_and(|(major, minor)| digits(major) && digits(minor))
}

/// `!`, `!!` or `!name!` with a name of letters, digits and `-`.
fn is_tag_handle(h: &str) -> bool {
    if h == "!" {
        return true;
    }
    match h.strip_prefix('!').and_then(|r| r.strip_suffix('!')) {
        Some(name) => name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'),
        None => false,
    }
}

/// A sink's refusal as the bail that stops the fast path.
fn refused(sent: Result<(), ()>, at: usize) -> R {
    sent.map_err(|()| Bail {
        offset: at,
        reason: "the tree builder refused an event",
    })
}

/// A space: what separates tokens wherever the fast parser does not read tabs.
fn is_ws(c: u8) -> bool {
    c == b' '
}

/// A space or a tab, where the reference parser reads either as white space around the end of
/// a line's content (before a comment or a line break, after a plain scalar).
fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

fn is_flow_indicator(c: u8) -> bool {
    matches!(c, b',' | b'[' | b']' | b'{' | b'}')
}

/// The URI characters of a verbatim tag (the reference parser's set: letters, digits, `-` and
/// these punctuation marks; `%` starts an escape).
fn is_uri_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-#;/?:@&=+$,_.!~*'()[]%".contains(&c)
}

/// Characters accepted in a shorthand tag: URI characters but flow indicators and `!`, as the
/// reference parser has it, and without `%` (which starts an escape).
fn is_tag_char(c: u8) -> bool {
    is_uri_char(c) && !matches!(c, b',' | b'[' | b']' | b'!' | b'%')
}

impl<'t, S: Sink<'t>> Parser<'t, '_, S> {
    fn bail<T>(&self, reason: &'static str) -> R<T> {
        self.bail_at(self.pos, reason)
    }

    fn bail_at<T>(&self, offset: usize, reason: &'static str) -> R<T> {
        Err(Bail { offset, reason })
    }

    fn emit(&mut self, event: Event<'t>, at: usize) -> R {
        let sent = self.sink.event(event, Marker::new(at, 0, 0));
        refused(sent, at)
    }

    /// Opens a mapping (`map`) or a sequence in the sink.
    fn emit_start(&mut self, map: bool, props: &Props<'t>, at: usize) -> R {
        let tag = tag_parts(props.tag, &self.decoded);
        let sent = self.sink.start(map, props.anchor as usize, tag, at);
        refused(sent, at)
    }

    /// Closes the innermost collection in the sink.
    fn emit_end(&mut self, at: usize) -> R {
        let sent = self.sink.end(at);
        refused(sent, at)
    }

    /// Opens a collection level.
    fn enter(&mut self) -> R {
        if self.depth >= self.max_depth {
            return self.bail(TOO_DEEP);
        }
        if !self.stack.room(self.depth) {
            return self.bail(NO_STACK);
        }
        self.depth += 1;
        Ok(())
    }

    /// Claims the tabs in `start..end`, text its caller has read the way the reference parser
    /// reads it with the tabs in it. Each tab must be claimed before the parse ends (checked at
    /// the end), and in order: a tab before `start` still unclaimed was passed over by code that
    /// does not read tabs (which treats it as an ordinary character or stops at it), so the
    /// fast path ends there, and nothing it emitted is used.
    #[inline(always)]
    fn claim(&mut self, start: usize, end: usize) -> R {
        if self.tab_before(end) {
            return self.claim_tabs(start, end);
        }
        Ok(())
    }

    /// Whether an unclaimed tab lies before `end` (never, in text without tabs).
    #[inline(always)]
    fn tab_before(&self, end: usize) -> bool {
        self.tabs.get(self.next_tab).is_some_and(|&t| t < end)
    }

    #[cold]
    fn claim_tabs(&mut self, start: usize, end: usize) -> R {
        let first = self.tabs[self.next_tab];
        if first < start {
            return Err(Bail {
                offset: first,
                reason: "a tab where the fast parser does not read one",
            });
        }
        while self.tab_before(end) {
            self.next_tab += 1;
        }
        Ok(())
    }

    /// Claims the tabs of the comment in `start..end` (the rest of a line: blanks, then a comment
    /// or nothing). The blanks before the comment are not claimed here: whoever read the text
    /// before them claims them (the end of a plain scalar's first line, a node's line end), and
    /// otherwise they stay unclaimed, which ends the fast path.
    fn claim_comment(&mut self, start: usize, end: usize) -> R {
        if !self.tab_before(end) {
            return Ok(());
        }
        let hash = self.blanks_end(start);
        match self.peek_at(hash) {
            Some(b'#') if hash < end => self.claim_tabs(hash, end),
            _ => Ok(()),
        }
    }

    /// Claims the tabs of the first line of a block plain scalar whose content is `start..end`,
    /// and of the blanks after it. The reference parser reads a tab inside such a line as text
    /// and trailing ones as white space, except after a `:` (an indicator there, then an error)
    /// and in a leading `-`, `---` or `...` (an indicator or a document marker): those stop the
    /// fast path.
    #[inline(always)]
    fn claim_plain(&mut self, start: usize, end: usize) -> R {
        if self.next_tab == self.tabs.len() {
            return Ok(());
        }
        self.claim_plain_tabs(start, end)
    }

    #[cold]
    fn claim_plain_tabs(&mut self, start: usize, end: usize) -> R {
        let after = self.blanks_end(end);
        if !self.tab_before(after) {
            return Ok(());
        }
        let text = &self.b[start..after];
        let leading =
            matches!(text.first(), Some(b'-' | b'.')) && text[..text.len().min(4)].contains(&b'\t');
        if leading || memchr::memmem::find(text, b":\t").is_some() {
            return Err(Bail {
                offset: start,
                reason: "a tab the reference parser may read as an indicator's separator",
            });
        }
        self.claim_tabs(start, after)
    }

    /// Claims the tabs of the quoted scalar that started at `open` and ended before the
    /// position: text inside a line, blanks that folding trims around its line breaks (see
    /// [`Parser::fold`]).
    #[inline(always)]
    fn claim_quoted(&mut self, open: usize) -> R {
        if self.tab_before(self.pos) {
            return self.claim_tabs(open, self.pos);
        }
        Ok(())
    }

    /// Moves over spaces and tabs.
    fn skip_blanks(&mut self) {
        self.pos = self.blanks_end(self.pos);
    }

    /// The first offset from `i` on that is not a space or a tab.
    fn blanks_end(&self, mut i: usize) -> usize {
        while self.peek_at(i).is_some_and(is_blank) {
            i += 1;
        }
        i
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn peek_at(&self, i: usize) -> Option<u8> {
        self.b.get(i).copied()
    }

    /// Whether the byte at `i` ends a token: a blank, a line break or the end of the text.
    fn blank_at(&self, i: usize) -> bool {
        self.peek_at(i).is_none_or(|c| is_ws(c) || c == b'\n')
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(is_ws) {
            self.pos += 1;
        }
    }

    /// Whether the position is at the end of its line's content (a line break, the end of the
    /// text, or a comment after a blank).
    fn at_line_end(&self) -> bool {
        match self.peek() {
            None | Some(b'\n') => true,
            Some(b'#') => self.pos > 0 && is_blank(self.b[self.pos - 1]),
            _ => false,
        }
    }

    /// Whether a document marker (`---` or `...` then a space, a tab, a line break or the end
    /// of the text) starts at `i`, a line start.
    fn doc_marker_at(&self, i: usize) -> bool {
        let m = &self.b[i.min(self.b.len())..];
        (m.starts_with(b"---") || m.starts_with(b"..."))
            && self
                .peek_at(i + 3)
                .is_none_or(|c| is_blank(c) || c == b'\n')
    }

    /// Whether the `:` at `k` ends a block mapping's key: a blank (space or tab), a line break
    /// or the end of the text follows (what may follow a tab is [`Parser::tab_after_indicator`]'s
    /// business).
    #[inline(always)]
    fn key_colon_at(&self, k: usize) -> bool {
        self.sep_at(k + 1)
    }

    /// Whether the byte at `i` ends a block indicator (`:`, `-`): a blank, a line break or the
    /// end of the text. Unlike [`Parser::blank_at`], a tab counts.
    #[inline(always)]
    fn sep_at(&self, i: usize) -> bool {
        self.peek_at(i).is_none_or(|c| is_blank(c) || c == b'\n')
    }

    /// Whether a block sequence entry (`-` then a blank) starts at the position.
    fn dash_here(&self) -> bool {
        self.peek() == Some(b'-') && self.sep_at(self.pos + 1)
    }

    /// After an explicit key's `?` (the position is after it): the reference parser moves over
    /// spaces, line breaks and comments to the key, and refuses a tab it meets there.
    fn no_tab_after_key_indicator(&self) -> R {
        let mut i = self.pos;
        loop {
            match self.peek_at(i) {
                Some(b' ' | b'\n') => i += 1,
                Some(b'#') => {
                    i = memchr(b'\n', &self.b[i..]).map_or(self.b.len(), |j| i + j);
                }
                Some(b'\t') => return self.bail_at(i, "a tab after an explicit key's `?`"),
                _ => return Ok(()),
            }
        }
    }

    /// Whether an explicit key's `?` indicator (then a space or a line break: the reference
    /// parser refuses one at the end of the text) is at the position.
    fn explicit_key_here(&self) -> bool {
        self.peek() == Some(b'?') && matches!(self.peek_at(self.pos + 1), Some(b' ' | b'\n'))
    }

    /// From the end of a line's content, moves to the first character of the next line that
    /// holds content (skipping blank and comment lines) and returns its indentation.
    fn next_line(&mut self) -> R<Next> {
        // Nearly always the position is at the line break already.
        if self.peek() == Some(b'\n') {
            self.pos += 1;
        } else {
            let nl = memchr(b'\n', &self.b[self.pos..]).map_or(self.b.len(), |i| self.pos + i);
            self.claim_comment(self.pos, nl)?;
            if nl == self.b.len() {
                self.pos = nl;
                return Ok(None);
            }
            self.pos = nl + 1;
        }
        loop {
            let start = self.pos;
            self.line_start = start;
            while self.peek() == Some(b' ') {
                self.pos += 1;
            }
            match self.peek() {
                None => return Ok(None),
                Some(b'\n') => self.pos += 1,
                Some(b'#') => match memchr(b'\n', &self.b[self.pos..]) {
                    Some(i) => {
                        self.claim(self.pos, self.pos + i)?;
                        self.pos += i + 1
                    }
                    None => {
                        self.claim(self.pos, self.b.len())?;
                        self.pos = self.b.len();
                        return Ok(None);
                    }
                },
                Some(b'\t') if !self.blank_line_from(self.pos) => {
                    return self.tab_indented_line(start).map(Some);
                }
                // A line of blanks, or of blanks and a comment, that has a tab.
                Some(b'\t') => {
                    let nl =
                        memchr(b'\n', &self.b[self.pos..]).map_or(self.b.len(), |i| self.pos + i);
                    self.claim(start, nl)?;
                    if nl == self.b.len() {
                        self.pos = nl;
                        return Ok(None);
                    }
                    self.pos = nl + 1;
                }
                Some(_) => {
                    let ind = self.pos - start;
                    if ind == 0 && self.doc_marker_at(start) {
                        return Ok(None);
                    }
                    return Ok(Some(ind));
                }
            }
        }
    }

    /// Moves over blanks with a tab at the position, which follow the indicator (`:`, `-`,
    /// `?` or `---`) that ends at `after`, claiming the tabs where the reference parser reads
    /// them as white space: anywhere after `---`; after `:` unless the tab comes right after
    /// the colon, no space is among the blanks and a `-` or a letter, digit or `_` follows
    /// (then the colon is an error); after `-` unless a block entry (`-` then a blank) follows
    /// (an error too). After `?` a tab is an error, left where it is.
    #[cold]
    fn tab_after_indicator(&mut self, after: usize, ctx: Ctx) -> R {
        let end = self.blanks_end(self.pos);
        let next = self.peek_at(end);
        let refused = match (ctx, self.b[after - 1]) {
            (Ctx::Root, _) => false,
            (Ctx::SeqItem, _) => next == Some(b'-') && self.sep_at(end + 1),
            (_, b':') => {
                let spaced = self.b[after..end].contains(&b' ');
                self.b[after] == b'\t'
                    && !spaced
                    && next.is_some_and(|c| c == b'-' || c == b'_' || c.is_ascii_alphanumeric())
            }
            _ => true,
        };
        if refused {
            return Ok(());
        }
        self.claim(self.pos, end)?;
        self.pos = end;
        Ok(())
    }

    /// A content line starting at `start` whose leading blanks have a tab (the position is at
    /// the first tab): moves to its content and returns its column. The reference parser reads
    /// the blanks as white space when the tab stands past the column of the innermost block
    /// collection (past it plus one, after some indicators): earlier it is an error, left to it.
    #[cold]
    fn tab_indented_line(&mut self, start: usize) -> R<usize> {
        if (self.pos - start) as isize <= self.block_indent {
            return self.bail("a tab indenting a block line");
        }
        let content = self.blanks_end(self.pos);
        self.claim(self.pos, content)?;
        self.pos = content;
        Ok(content - start)
    }

    /// Whether the rest of the line from `i` is blanks, then a comment or nothing.
    fn blank_line_from(&self, i: usize) -> bool {
        matches!(self.peek_at(self.blanks_end(i)), None | Some(b'\n' | b'#'))
    }

    /// Requires the rest of the line to be blank (or a comment), then moves to the next line.
    fn line_end(&mut self) -> R<Next> {
        let from = self.pos;
        self.skip_blanks();
        if !self.at_line_end() {
            return self.bail("unexpected text after a node");
        }
        self.claim(from, self.pos)?;
        self.next_line()
    }

    // ---- the stream and its document --------------------------------------------------------

    fn stream(&mut self) -> R {
        let mut directives = self.preamble()?;
        // Document end markers before any document end nothing (the reference parser skips
        // them); what follows them is read as if they were not there.
        while !directives && self.doc_marker_at(self.pos) && self.b[self.pos] == b'.' {
            self.pos += 3;
            let from = self.pos;
            self.skip_blanks();
            if !self.at_line_end() {
                return self.bail("text after a document end before any document");
            }
            let nl = memchr(b'\n', &self.b[self.pos..]).map_or(self.b.len(), |i| self.pos + i);
            self.claim(from, nl)?;
            self.pos = (nl + 1).min(self.b.len());
            directives = self.preamble()?;
        }
        let at = self.pos;
        if self.pos >= self.b.len() {
            if directives {
                return self.bail("directives without a document");
            }
            return self.emit(Event::StreamEnd, at);
        }
        let next = if self.doc_marker_at(self.pos) {
            if self.b[self.pos] != b'-' {
                return self.bail("a document end before any document");
            }
            self.emit(Event::DocumentStart(true), at)?;
            self.pos += 3;
            self.value(-1, Ctx::Root)?
        } else if directives {
            return self.bail("a document without `---` after directives");
        } else {
            self.emit(Event::DocumentStart(false), at)?;
            // The root node may be indented (the position stays on its line), by tabs too:
            // outside any block collection they are white space.
            let from = self.pos;
            self.skip_blanks();
            self.claim(from, self.pos)?;
            self.block_node(-1, Props::default(), Ctx::Root)?
        };
        self.document_end(next)
    }

    /// Comment lines (indented or not), blank lines, `%YAML` and `%TAG` directives before the
    /// document. Returns whether there were directives; the position is at the first other line.
    fn preamble(&mut self) -> R<bool> {
        let mut directives = false;
        loop {
            self.line_start = self.pos;
            let rest = &self.b[self.pos..];
            let line_len = memchr(b'\n', rest).unwrap_or(rest.len());
            let line = &self.text[self.pos..self.pos + line_len];
            if line.starts_with('%') {
                self.directive(line)?;
                directives = true;
            } else if line.trim_start_matches(' ').starts_with('#') || line.bytes().all(is_blank) {
                self.claim(self.pos, self.pos + line_len)?;
            } else {
                return Ok(directives);
            }
            if self.pos + line_len >= self.b.len() {
                self.pos = self.b.len();
                return Ok(directives);
            }
            self.pos += line_len + 1;
        }
    }

    /// A directive line: `%YAML major.minor` (once), `%TAG handle prefix` (once per handle),
    /// or a reserved directive (any other name, then parameters), which the reference parser
    /// ignores. A comment may follow `%YAML` and `%TAG` (a reserved directive reads it as
    /// parameters). Blanks between the parts may be spaces or tabs.
    fn directive(&mut self, line: &'t str) -> R {
        if line.bytes().any(|c| c == b'\r' || c == 0) {
            return self.bail("a directive the fast parser does not read");
        }
        let mut parts = line.split([' ', '\t']).filter(|s| !s.is_empty());
        let ended = |rest: Option<&str>| rest.is_none_or(|r| r.starts_with('#'));
        let read = match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some("%YAML"), Some(version), rest, _)
                if is_yaml_version(version) && ended(rest) && !self.version_seen =>
            {
                self.version_seen = true;
                true
            }
            (Some("%TAG"), Some(handle), Some(prefix), rest)
                if ended(rest)
                    && is_tag_handle(handle)
                    // A global prefix may not start with a flow indicator (`,`).
                    && !prefix.starts_with(',')
                    && prefix
                        .bytes()
                        .all(|c| c == b'!' || c == b',' || is_tag_char(c))
                    && self.handles.iter().all(|(h, _)| *h != handle) =>
            {
                self.handles.push((handle, prefix));
                true
            }
            (Some("%YAML" | "%TAG"), ..) => false,
            (Some(name), ..) => name.len() > 1,
            (None, ..) => false,
        };
        if !read {
            return self.bail("a directive the fast parser does not read");
        }
        self.claim(self.pos, self.pos + line.len())
    }

    fn document_end(&mut self, next: Next) -> R {
        if next.is_some() {
            return self.bail("text after the root node");
        }
        if self.pos < self.b.len() {
            if self.b[self.pos] != b'.' {
                return self.bail("a second document");
            }
            self.pos += 3;
            if self.line_end()?.is_some() || self.pos < self.b.len() {
                return self.bail("text after the document end");
            }
        }
        let at = self.pos;
        self.emit(Event::DocumentEnd, at)?;
        self.emit(Event::StreamEnd, at)
    }

    // ---- block structure ----------------------------------------------------------------------

    /// The node after an indicator (`key:`, `- `, `---`): on the same line, or on the following
    /// lines when indented past `parent` (the column of the collection holding it).
    fn value(&mut self, parent: isize, ctx: Ctx) -> R<Next> {
        let after = self.pos;
        self.skip_ws();
        if self.peek() == Some(b'\t') {
            self.tab_after_indicator(after, ctx)?;
        }
        let col = self.pos - self.line_start;
        let props = self.props()?;
        if self.at_line_end() {
            let next = self.next_line()?;
            return match next {
                Some(ind) if ind as isize > parent => self.block_node(parent, props, ctx),
                Some(ind) if ind as isize == parent && ctx.indentless() && self.dash_here() => {
                    self.block_seq(ind, props)
                }
                // Marked, as the reference parser marks it, at the token after it.
                _ => {
                    self.empty_scalar(props, self.pos)?;
                    Ok(next)
                }
            };
        }
        let compact = matches!(ctx, Ctx::SeqItem | Ctx::Explicit);
        self.node_here(parent, (Props::default(), props), col, compact)
    }

    /// A node that starts a line (the position is at its first character, or at properties
    /// before it); `props` were read on earlier lines, after the indicator `ctx` names.
    fn block_node(&mut self, parent: isize, props: Props<'t>, ctx: Ctx) -> R<Next> {
        let col = self.pos - self.line_start;
        if !matches!(self.peek(), Some(b'!' | b'&')) {
            return self.node_here(parent, (props, Props::default()), col, true);
        }
        let inline = self.props()?;
        if !self.at_line_end() {
            return self.node_here(parent, (props, inline), col, true);
        }
        self.props_line(parent, (props, inline), ctx)
    }

    /// After properties alone on their line (`line`; `earlier` were read on lines before):
    /// they belong to the node on the following lines (a sequence at a key's column too: `key:`
    /// / `  &a` / `- x`), or to an empty scalar.
    #[cold]
    fn props_line(
        &mut self,
        parent: isize,
        (earlier, line): (Props<'t>, Props<'t>),
        ctx: Ctx,
    ) -> R<Next> {
        let props = self.merge(earlier, line)?;
        let at = self.pos;
        let next = self.next_line()?;
        match next {
            Some(ind) if ind as isize > parent => self.block_node(parent, props, ctx),
            Some(ind) if ind as isize == parent && ctx.indentless() && self.dash_here() => {
                self.block_seq(ind, props)
            }
            _ => {
                self.empty_scalar(props, at)?;
                Ok(next)
            }
        }
    }

    /// The node at the position. `outer` are properties read before its line (or before the
    /// indicator that introduced it), `inline` on its line before it, from column `col`.
    /// `compact` allows a block mapping or sequence to start here: the reference parser gives
    /// `inline` to a mapping's first key and `outer` to the mapping (whose column is where
    /// `inline` starts), and reads no sequence after `inline`.
    fn node_here(
        &mut self,
        parent: isize,
        (outer, inline): (Props<'t>, Props<'t>),
        col: usize,
        compact: bool,
    ) -> R<Next> {
        let at = self.pos;
        let collection = compact && inline.is_empty();
        match self.peek() {
            Some(b'-') if self.sep_at(self.pos + 1) => {
                if !collection {
                    return self.bail("a block sequence where it cannot start");
                }
                self.block_seq(col, outer)
            }
            Some(b'[' | b'{') => {
                let props = self.merge(outer, inline)?;
                self.flow_node(parent, props)?;
                self.skip_ws();
                if self.peek() == Some(b':') {
                    return self.bail("a flow collection as a key");
                }
                self.line_end()
            }
            Some(b'*') => {
                let id = self.alias_id()?;
                self.skip_ws();
                if self.peek() == Some(b':') {
                    if !compact || !inline.is_empty() {
                        return self.bail("an alias as a key where a value belongs");
                    }
                    self.key_colon(at)?;
                    return self.block_map(col, outer, (Key::Alias(id), at));
                }
                if !(outer.is_empty() && inline.is_empty()) {
                    return self.bail("properties on an alias");
                }
                self.emit(Event::Alias(id), at)?;
                self.line_end()
            }
            Some(b'\'' | b'"') => {
                let (text, style) = self.quoted(parent)?;
                self.claim_quoted(at)?;
                self.skip_ws();
                if self.peek() == Some(b':') && self.key_colon_at(self.pos) {
                    if !compact || self.b[at..self.pos].contains(&b'\n') {
                        return self.bail("a key where a value belongs, or over several lines");
                    }
                    self.simple_key_colon(at)?;
                    return self.block_map(col, outer, (Key::Scalar(text, style, inline), at));
                }
                let props = self.merge(outer, inline)?;
                self.scalar(text, style, props, at)?;
                self.line_end()
            }
            Some(b'|' | b'>') => {
                let props = self.merge(outer, inline)?;
                self.block_scalar(parent, props)
            }
            Some(b'?') if self.explicit_key_here() => {
                if !collection {
                    return self.bail("an explicit key where a value belongs");
                }
                self.explicit_map(col, outer)
            }
            Some(b':') if self.sep_at(self.pos + 1) => {
                if !compact {
                    return self.bail("an empty key where a value belongs");
                }
                self.empty_key_map(col, (outer, inline))
            }
            Some(c) if self.plain_start(c, false) => {
                self.plain_node(parent, (outer, inline), compact, col)
            }
            _ => self.bail("a construct the fast parser leaves to the reference parser"),
        }
    }

    /// `outer` and `inline` as the properties of one node (at most one anchor and one tag).
    #[inline]
    fn merge(&self, outer: Props<'t>, inline: Props<'t>) -> R<Props<'t>> {
        match outer.merged(inline) {
            Some(props) => Ok(props),
            None => self.bail("properties on two lines"),
        }
    }

    /// A plain scalar at the position: a scalar node, or the first key of a block mapping
    /// (`props` as [`Parser::node_here`]'s `outer` and `inline`).
    fn plain_node(
        &mut self,
        parent: isize,
        (outer, inline): (Props<'t>, Props<'t>),
        compact: bool,
        col: usize,
    ) -> R<Next> {
        let at = self.pos;
        let (end, stop) = self.plain_line(self.pos);
        let first = &self.text[at..end];
        self.claim_plain(at, end)?;
        if stop == Stop::Colon {
            if !compact {
                return self.bail("a key where a value belongs");
            }
            self.pos = end;
            self.skip_blanks();
            self.simple_key_colon(at)?;
            let key = Key::Scalar(Cow::Borrowed(first), ScalarStyle::Plain, inline);
            return self.block_map(col, outer, (key, at));
        }
        self.pos = end;
        let props = self.merge(outer, inline)?;
        let (text, next) = self.plain_rest(parent, first, stop)?;
        self.scalar(text, ScalarStyle::Plain, props, at)?;
        Ok(next)
    }

    /// A block mapping at column `col` whose first key (and its offset) has been read (the
    /// position is after its `:`).
    fn block_map(&mut self, col: usize, props: Props<'t>, (key, at): (Key<'t>, usize)) -> R<Next> {
        let outer = self.open_block(true, &props, at, col)?;
        self.key(key, at)?;
        let next = self.value(col as isize, Ctx::MapValue)?;
        self.map_entries(col, next, outer)
    }

    /// Opens a block mapping (`map`) or sequence at column `col`, marked at `at`; returns the
    /// column of the block collection around it, which [`Parser::close_block`] restores.
    #[inline(always)]
    fn open_block(&mut self, map: bool, props: &Props<'t>, at: usize, col: usize) -> R<isize> {
        self.enter()?;
        self.emit_start(map, props, at)?;
        Ok(std::mem::replace(&mut self.block_indent, col as isize))
    }

    /// Closes the innermost block collection at the position (`outer` as
    /// [`Parser::open_block`] returned it).
    #[inline(always)]
    fn close_block(&mut self, outer: isize) -> R {
        self.depth -= 1;
        self.block_indent = outer;
        self.emit_end(self.pos)
    }

    /// A block mapping at column `col` whose first entry is an explicit one (the position is
    /// at its `?`).
    fn explicit_map(&mut self, col: usize, props: Props<'t>) -> R<Next> {
        let outer = self.open_block(true, &props, self.pos, col)?;
        let next = self.explicit_entry(col)?;
        self.map_entries(col, next, outer)
    }

    /// The entries of a block mapping at column `col` after its first, through its end; `next`
    /// is the line after the first entry, `outer` as [`Parser::open_block`] returned it.
    fn map_entries(&mut self, col: usize, mut next: Next, outer: isize) -> R<Next> {
        loop {
            match next {
                Some(ind) if ind == col => {
                    if self.dash_here() {
                        return self.bail("a sequence entry inside a mapping");
                    }
                    next = if self.explicit_key_here() {
                        self.explicit_entry(col)?
                    } else {
                        let ctx = self.block_key()?;
                        self.value(col as isize, ctx)?
                    };
                }
                Some(ind) if ind > col => return self.bail("a line indented past its mapping"),
                _ => {
                    self.close_block(outer)?;
                    return Ok(next);
                }
            }
        }
    }

    /// An explicit entry of a block mapping at column `col` (`? key`, then `: value` on a line
    /// of its own at the same column, or no value: null), the position at its `?`. PyYAML
    /// writes one for a key longer than 128 characters or over several lines.
    fn explicit_entry(&mut self, col: usize) -> R<Next> {
        self.pos += 1;
        self.no_tab_after_key_indicator()?;
        let next = self.value(col as isize, Ctx::Explicit)?;
        if next == Some(col) && self.peek() == Some(b':') && self.sep_at(self.pos + 1) {
            self.pos += 1;
            return self.value(col as isize, Ctx::Explicit);
        }
        self.empty_scalar(Props::default(), self.pos)?;
        Ok(next)
    }

    /// A key of a block mapping (plain or quoted, on one line, after its properties, an alias,
    /// or empty), through its `:`. Returns where its value starts.
    fn block_key(&mut self) -> R<Ctx> {
        let props = self.props()?;
        let at = self.pos;
        let (text, style) = match self.peek() {
            Some(b'*') if props.is_empty() => {
                let id = self.alias_id()?;
                self.skip_ws();
                self.key_colon(at)?;
                self.emit(Event::Alias(id), at)?;
                return Ok(Ctx::MapValue);
            }
            Some(b':') if self.sep_at(self.pos + 1) => return self.empty_key(props, at),
            Some(b'\'' | b'"') => {
                let (text, style) = self.quoted(-1)?;
                self.claim_quoted(at)?;
                self.skip_ws();
                (text, style)
            }
            Some(c) if self.plain_start(c, false) => {
                let (end, stop) = self.plain_line(self.pos);
                if stop != Stop::Colon {
                    return self.bail("a mapping entry without a one-line key");
                }
                self.claim_plain(at, end)?;
                let key = Cow::Borrowed(&self.text[at..end]);
                self.pos = end;
                self.skip_blanks();
                (key, ScalarStyle::Plain)
            }
            _ => return self.bail("a mapping key the fast parser leaves to the reference parser"),
        };
        if self.b[at..self.pos].contains(&b'\n') {
            return self.bail("a key over several lines");
        }
        self.key_colon(at)?;
        self.scalar(text, style, props, at)?;
        Ok(Ctx::MapValue)
    }

    /// A block mapping at column `col` whose first key is empty (its `:` at the position),
    /// `outer` the mapping's properties and `inline` the key's.
    #[cold]
    fn empty_key_map(&mut self, col: usize, (outer, inline): (Props<'t>, Props<'t>)) -> R<Next> {
        let at = self.pos;
        let block = self.open_block(true, &outer, at, col)?;
        let ctx = self.empty_key(inline, at)?;
        let next = self.value(col as isize, ctx)?;
        self.map_entries(col, next, block)
    }

    /// An empty key (its `:` at the position; `props` before it, read from `at`): moves past
    /// the colon and returns where its value starts. Without properties the reference parser
    /// reads the colon as an explicit entry's (a mapping or sequence may start after it); with
    /// them, as an implicit key's.
    #[cold]
    fn empty_key(&mut self, props: Props<'t>, at: usize) -> R<Ctx> {
        self.empty_scalar(props, at)?;
        self.pos += 1;
        Ok(if props.is_empty() {
            Ctx::Explicit
        } else {
            Ctx::MapValue
        })
    }

    /// [`Parser::simple_key_colon`] where the position may not be at a key's `:` (see
    /// [`Parser::key_colon_at`]): then the fast path stops.
    #[inline(always)]
    fn key_colon(&mut self, at: usize) -> R {
        if self.peek() != Some(b':') || !self.key_colon_at(self.pos) {
            return self.bail("a mapping key without `: `");
        }
        self.simple_key_colon(at)
    }

    /// Moves past the `:` at the position, which ends a block mapping key that starts at `at`.
    /// The reference parser reads a key only when its `:` comes within 1024 bytes of its start
    /// (YAML's limit on implicit keys); past that the `:` is an error.
    #[inline(always)]
    fn simple_key_colon(&mut self, at: usize) -> R {
        if self.pos - at > 1024 {
            return self.bail("a key whose `:` is more than 1024 bytes past its start");
        }
        self.pos += 1;
        Ok(())
    }

    /// A block sequence whose first `-` is at the position, at column `col`.
    fn block_seq(&mut self, col: usize, props: Props<'t>) -> R<Next> {
        let outer = self.open_block(false, &props, self.pos, col)?;
        loop {
            self.pos += 1;
            let next = self.value(col as isize, Ctx::SeqItem)?;
            match next {
                Some(ind) if ind == col && self.dash_here() => {}
                Some(ind) if ind > col => return self.bail("a line indented past its sequence"),
                _ => {
                    self.close_block(outer)?;
                    return Ok(next);
                }
            }
        }
    }

    // ---- node properties, aliases, scalars ------------------------------------------------------

    /// Anchors and tags before a node (at most one of each), with the blanks after them.
    #[inline]
    fn props(&mut self) -> R<Props<'t>> {
        if !matches!(self.peek(), Some(b'&' | b'!')) {
            return Ok(Props::default());
        }
        self.read_props()
    }

    #[inline(never)]
    fn read_props(&mut self) -> R<Props<'t>> {
        let Ok(at) = u32::try_from(self.pos + 1) else {
            return self.bail("properties past 4 GiB into the text");
        };
        let mut props = Props {
            at,
            ..Props::default()
        };
        loop {
            match self.peek() {
                Some(b'&') if props.anchor == 0 => {
                    let name = self.name()?;
                    props.anchor = self.next_anchor;
                    self.next_anchor = self.next_anchor.checked_add(1).ok_or(Bail {
                        offset: self.pos,
                        reason: "more anchors than the fast parser counts",
                    })?;
                    self.anchors.insert(name, props.anchor);
                }
                Some(b'!') if props.tag.is_none() => props.tag = Some(self.tag()?),
                _ => return Ok(props),
            }
            let flow_end = self.flow_level > 0 && self.peek().is_some_and(is_flow_indicator);
            if !self.blank_at(self.pos) && !flow_end {
                return self.bail("properties not followed by a blank");
            }
            self.skip_ws();
        }
    }

    /// The name after `&` or `*`.
    fn name(&mut self) -> R<&'t str> {
        let start = self.pos + 1;
        let mut end = start;
        while self
            .peek_at(end)
            .is_some_and(|c| !is_ws(c) && c != b'\n' && !is_flow_indicator(c))
        {
            end += 1;
        }
        if end == start {
            return self.bail("an empty anchor name");
        }
        self.pos = end;
        Ok(&self.text[start..end])
    }

    fn tag(&mut self) -> R<Tag<'t>> {
        if self.peek_at(self.pos + 1) == Some(b'<') {
            return self.verbatim_tag();
        }
        let start = self.pos;
        let mut end = start + 1;
        while self
            .peek_at(end)
            .is_some_and(|c| c == b'!' || c == b'%' || is_tag_char(c))
        {
            end += 1;
        }
        let t = &self.text[start..end];
        if t == "!" {
            // The non-specific tag, as the reference parser gives it (no prefix).
            self.pos = end;
            return Ok(Tag::Text(TagParts {
                prefix: "",
                suffix: t,
            }));
        }
        let (handle, suffix) = match t[1..].find('!') {
            Some(i) => t.split_at(i + 2),
            None => t.split_at(1),
        };
        if suffix.is_empty() || suffix.contains('!') {
            return self.bail("a tag the fast parser leaves to the reference parser");
        }
        let declared = self
            .handles
            .iter()
            .find(|(h, _)| *h == handle)
            .map(|(_, p)| *p);
        let prefix = match (handle, declared) {
            (_, Some(prefix)) => prefix,
            ("!!", None) => "tag:yaml.org,2002:",
            ("!", None) => "!",
            _ => return self.bail("an undeclared tag handle"),
        };
        let tag = self.decode_tag(prefix, suffix, start)?;
        self.pos = end;
        Ok(tag)
    }

    /// The tag `prefix` + `suffix` (a suffix read at `at`), its suffix's percent escapes
    /// decoded as the reference parser decodes them (see [`escaped_char`]); escapes it refuses
    /// are left to it.
    fn decode_tag(&mut self, prefix: &'t str, suffix: &'t str, at: usize) -> R<Tag<'t>> {
        if !suffix.contains('%') {
            return Ok(Tag::Text(TagParts { prefix, suffix }));
        }
        let mut out = String::with_capacity(suffix.len());
        let mut rest = suffix;
        while let Some(k) = rest.find('%') {
            out.push_str(&rest[..k]);
            let Some((c, len)) = escaped_char(&rest[k..]) else {
                return self.bail_at(
                    at,
                    "a tag escape the fast parser leaves to the reference parser",
                );
            };
            out.push(c);
            rest = &rest[k + len..];
        }
        out.push_str(rest);
        self.decoded.push(out);
        Ok(Tag::Decoded {
            prefix,
            suffix: self.decoded.len() - 1,
        })
    }

    /// `!<uri>`: the URI as written, under no handle (what the reference parser makes of it).
    /// Python asdf writes every tag outside `tag:stsci.edu:asdf/` this way (gwcs, asdf-astropy,
    /// roman_datamodels), so real trees are full of them. Percent escapes are decoded (see
    /// [`Parser::decode_tag`]); an empty URI and the non-specific `!<!>` are left to the
    /// reference parser.
    fn verbatim_tag(&mut self) -> R<Tag<'t>> {
        let start = self.pos + 2;
        let mut end = start;
        while self.peek_at(end).is_some_and(is_uri_char) {
            end += 1;
        }
        let uri = &self.text[start..end];
        if self.peek_at(end) != Some(b'>') || matches!(uri, "" | "!") || uri == "%21" {
            return self.bail("a verbatim tag the fast parser leaves to the reference parser");
        }
        let tag = self.decode_tag("", uri, self.pos)?;
        self.pos = end + 1;
        Ok(tag)
    }

    fn alias(&mut self) -> R {
        let at = self.pos;
        let id = self.alias_id()?;
        self.emit(Event::Alias(id), at)
    }

    /// The anchor that the alias at the position refers to; the position moves past its name.
    fn alias_id(&mut self) -> R<usize> {
        let name = self.name()?;
        match self.anchors.get(name) {
            Some(&id) => Ok(id as usize),
            None => self.bail("an alias of an unknown anchor"),
        }
    }

    /// Emits a key read before its mapping was opened, at offset `at`.
    #[inline(always)]
    fn key(&mut self, key: Key<'t>, at: usize) -> R {
        match key {
            Key::Scalar(text, style, props) => self.scalar(text, style, props, at),
            Key::Alias(id) => self.emit(Event::Alias(id), at),
        }
    }

    /// Emits a scalar whose text starts at `at`.
    fn scalar(&mut self, text: Cow<'t, str>, style: ScalarStyle, props: Props<'t>, at: usize) -> R {
        let tag = tag_parts(props.tag, &self.decoded);
        let node = (props.anchor as usize, tag);
        let sent = (self.sink).scalar(&text, style, node, at, props.at as usize);
        refused(sent, at)
    }

    fn empty_scalar(&mut self, props: Props<'t>, at: usize) -> R {
        self.scalar(Cow::Borrowed(""), ScalarStyle::Plain, props, at)
    }

    /// Whether a plain scalar may start with `c` at the position (`flow`: inside `[]`/`{}`).
    fn plain_start(&self, c: u8, flow: bool) -> bool {
        match c {
            // `-`, `?` and `:` start a plain scalar unless a blank (a tab too), a line break or
            // the end follows (`-1`, `:sym`, `?maybe`), or, inside `[]`/`{}`, a flow indicator
            // after `-` (an error) or `:` (a value indicator), as in the reference parser (`[?]`
            // is `["?"]`).
            b'-' | b'?' | b':' => self.peek_at(self.pos + 1).is_some_and(|n| {
                let indicator = flow && c != b'?' && is_flow_indicator(n);
                !(matches!(n, b' ' | b'\t' | b'\n' | b'\r' | 0) || indicator)
            }),
            b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\''
            | b'"' | b'%' | b'@' | b'`' | b' ' | b'\t' | b'\n' => false,
            _ => true,
        }
    }
}

/// Flow level `level`'s bit in [`Parser`]'s `explicit_pairs` (none past 127).
#[inline(always)]
fn flow_bit(level: usize) -> u128 {
    u32::try_from(level)
        .ok()
        .and_then(|l| 1u128.checked_shl(l))
        .unwrap_or(0)
}

/// The character that the percent escape (or two) at the start of `s`, in a tag, stands for as
/// the reference parser decodes it, and the length of the escapes: an ASCII byte, or the two
/// bytes of a two-byte UTF-8 sequence read together as one code point (`%C3%A9` is U+C3A9, which
/// the builder repairs to `é` whichever parser read it). `None` for what the reference parser
/// refuses: invalid escapes, bytes that cannot lead or continue a sequence, longer sequences
/// (whose bytes read together pass the last code point) and surrogate code points.
fn escaped_char(s: &str) -> Option<(char, usize)> {
    // Two hex digits after `%` (`from_str_radix` alone would take a sign).
    let byte = |i: usize| {
        s.get(i..i + 3)
            .filter(|e| e.starts_with('%') && e[1..].bytes().all(|c| c.is_ascii_hexdigit()))
            .and_then(|e| u8::from_str_radix(&e[1..], 16).ok())
    };
    let lead = byte(0)?;
    if lead.is_ascii() {
        return Some((char::from(lead), 3));
    }
    if lead & 0xE0 != 0xC0 {
        return None;
    }
    let trail = byte(3).filter(|t| t & 0xC0 == 0x80)?;
    char::from_u32(u32::from(lead) << 8 | u32::from(trail)).map(|c| (c, 6))
}

/// Where the first line of a plain scalar ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stop {
    /// At `: ` (the scalar is a key).
    Colon,
    /// At ` #`.
    Comment,
    /// At the line break or the end of the text.
    Eol,
}

impl<'t, S: Sink<'t>> Parser<'t, '_, S> {
    /// Scans one line of a block plain scalar from `start`: returns the end of its content
    /// (trailing blanks excluded) and what stopped it. The stop itself is not consumed.
    fn plain_line(&self, start: usize) -> (usize, Stop) {
        let b = self.b;
        let mut i = start;
        loop {
            let rest = &b[i..];
            let Some(j) = memchr3(b'\n', b':', b'#', rest) else {
                return (trim_end(b, start, b.len()), Stop::Eol);
            };
            let k = i + j;
            match b[k] {
                b'\n' => return (trim_end(b, start, k), Stop::Eol),
                b':' if self.key_colon_at(k) => return (trim_end(b, start, k), Stop::Colon),
                b'#' if k > start && is_blank(b[k - 1]) => {
                    return (trim_end(b, start, k), Stop::Comment)
                }
                _ => i = k + 1,
            }
        }
    }

    /// The rest of a plain scalar whose first line ended (at `stop`) at the position: folds
    /// continuation lines indented past `parent`. Returns the text and the next content line.
    #[inline(always)]
    fn plain_rest(&mut self, parent: isize, first: &'t str, stop: Stop) -> R<(Cow<'t, str>, Next)> {
        if stop == Stop::Comment {
            return Ok((Cow::Borrowed(first), self.next_line()?));
        }
        let mut text = Cow::Borrowed(first);
        loop {
            // The position is at the line break (or the end of the text) after the content.
            let save = self.pos;
            let mut breaks = 0usize;
            let mut i = self.blanks_end(self.pos);
            let (line, ind) = loop {
                if i >= self.b.len() {
                    break (None, 0);
                }
                let start = i + 1;
                let mut j = start;
                while self.peek_at(j).is_some_and(is_ws) {
                    j += 1;
                }
                match self.peek_at(j) {
                    Some(b'\n') => {
                        breaks += 1;
                        i = j;
                    }
                    Some(b'\t') => match self.tab_led_line(start, j, parent)? {
                        Some(content) => break (Some((start, content)), content - start),
                        None => {
                            breaks += 1;
                            i = self.blanks_end(j);
                        }
                    },
                    None => break (None, 0),
                    Some(_) => break (Some((start, j)), j - start),
                }
            };
            let Some((start, content)) = line else {
                self.pos = save;
                return Ok((text, self.next_line()?));
            };
            let c = self.b[content];
            if c == b'#' {
                self.pos = save;
                return Ok((text, self.next_line()?));
            }
            // The scalar ends before a line indented no further than its parent or a document
            // marker: that line is the next one, as [`Parser::next_line`] would find it.
            let marker = content == start && self.doc_marker_at(start);
            if ind as isize <= parent || marker {
                self.line_start = start;
                self.pos = content;
                return Ok((text, (!marker).then_some(ind)));
            }
            // In block context a continuation line may start with any indicator (`-`, `[`,
            // `"`, a backtick...): only `#` (handled above) and `: ` end the scalar there.
            self.pos = content;
            let (end, stop) = self.plain_line(content);
            if stop == Stop::Colon {
                return self.bail("a key inside a plain scalar");
            }
            self.claim_plain(content, end)?;
            fold_line(text.to_mut(), breaks, &self.text[content..end]);
            self.pos = end;
            if stop == Stop::Comment {
                return Ok((text, self.next_line()?));
            }
        }
    }
}

impl<'t, S: Sink<'t>> Parser<'t, '_, S> {
    /// A line after a plain scalar's line that starts at `start` and whose spaces end at `tab`
    /// (a tab): the offset of its content if it continues the scalar, `None` if it is blank.
    /// The reference parser skips blanks past the scalar's indentation (`parent` + 1) as white
    /// space, but a tab before it either makes the line blank or is an error; a comment there
    /// may not end the scalar (it is skipped with the tab). Such lines and comments are left to
    /// it.
    #[cold]
    fn tab_led_line(&mut self, start: usize, tab: usize, parent: isize) -> R<Option<usize>> {
        let content = self.blanks_end(tab);
        match self.peek_at(content) {
            None | Some(b'\n') => {
                self.claim(tab, content)?;
                Ok(None)
            }
            Some(b'#') => self.bail_at(tab, "a comment after a tab ending a plain scalar"),
            Some(_) if (tab - start) as isize <= parent => {
                self.bail_at(tab, "a tab indenting a plain scalar's line")
            }
            Some(_) => {
                self.claim(tab, content)?;
                Ok(Some(content))
            }
        }
    }
}

/// Appends a plain scalar's next line to its text: after a space if it follows directly, after
/// a line break per blank line between them otherwise.
fn fold_line(text: &mut String, blank_lines: usize, line: &str) {
    if blank_lines == 0 {
        text.push(' ');
    } else {
        text.extend(std::iter::repeat_n('\n', blank_lines));
    }
    text.push_str(line);
}

/// `end` moved back over blanks (spaces and tabs), not past `start`.
fn trim_end(b: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && is_blank(b[end - 1]) {
        end -= 1;
    }
    end
}

// ---- block scalars -------------------------------------------------------------------------------

/// What a block scalar keeps of its final line breaks: `-` none, by default one, `+` all.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Chomp {
    Strip,
    Clip,
    Keep,
}

/// Where a block scalar's first content line starts: the scalar's indentation, the offset after
/// that line's indentation and the line's start, and the empty lines before it.
struct Content {
    indent: usize,
    at: usize,
    line: usize,
    breaks: usize,
}

/// A block scalar header after its `|` or `>`: the chomping indicator, the indentation
/// indicator (1 to 9) and how many bytes they take, in either order. Anything else (such as
/// the indicator `0`, which is an error) ends the header early, and the caller then finds no
/// blank after it.
fn block_header(h: &[u8]) -> (Chomp, Option<usize>, usize) {
    let chomp_of = |c: Option<&u8>| match c {
        Some(b'-') => Some(Chomp::Strip),
        Some(b'+') => Some(Chomp::Keep),
        _ => None,
    };
    let digit_of = |c: Option<&u8>| match c {
        Some(&d @ b'1'..=b'9') => Some(usize::from(d - b'0')),
        _ => None,
    };
    match (chomp_of(h.first()), digit_of(h.first())) {
        (Some(chomp), _) => match digit_of(h.get(1)) {
            Some(n) => (chomp, Some(n), 2),
            None => (chomp, None, 1),
        },
        (None, Some(n)) => match chomp_of(h.get(1)) {
            Some(chomp) => (chomp, Some(n), 2),
            None => (Chomp::Clip, Some(n), 1),
        },
        (None, None) => (Chomp::Clip, None, 0),
    }
}

impl<'t, S: Sink<'t>> Parser<'t, '_, S> {
    /// A literal (`|`) or folded (`>`) block scalar whose header is at the position; the
    /// content lines are indented past `parent`. Read as the reference parser reads it (lines of
    /// spaces, more-indented folded lines, leading and trailing empty lines, text ending without
    /// a line break); left to it: tabs that start or end its lines, content at column 0 (a
    /// document's root scalar), and the errors it reports.
    fn block_scalar(&mut self, parent: isize, props: Props<'t>) -> R<Next> {
        let at = self.pos;
        let folded = self.b[at] == b'>';
        let (chomp, increment, len) = block_header(&self.b[at + 1..]);
        self.pos = at + 1 + len;
        if !self.blank_at(self.pos) {
            return self.bail("a block scalar header the fast parser does not read");
        }
        self.skip_ws();
        if !self.at_line_end() {
            return self.bail("text after a block scalar header");
        }
        // An indentation indicator counts from the indentation of the collection holding the
        // scalar (from column 0 at the root), as the reference parser counts it.
        let indent = increment.map(|n| usize::try_from(parent).map_or(n, |p| p + n));
        let (text, end) = self.block_body(parent, indent, folded, chomp)?;
        let style = if folded {
            ScalarStyle::Folded
        } else {
            ScalarStyle::Literal
        };
        self.scalar(Cow::Owned(text), style, props, at)?;
        if end >= self.b.len() {
            self.pos = self.b.len();
            return Ok(None);
        }
        // At the line break before the next line, as after any node.
        self.pos = end - 1;
        self.next_line()
    }

    /// The text of a block scalar whose header line ends at the position, and the start of the
    /// first line after it (the text's length at its end). `explicit` is the indentation an
    /// indicator sets. Lines are joined (or folded) and chomped the way the reference parser
    /// does it, line by line: content lines are those indented at least as far as the scalar
    /// (the spaces past its indentation are content), empty lines are counted, and the first
    /// line indented less ends it.
    fn block_body(
        &mut self,
        parent: isize,
        explicit: Option<usize>,
        folded: bool,
        chomp: Chomp,
    ) -> R<(String, usize)> {
        let b = self.b;
        let Some(nl) = memchr(b'\n', &b[self.pos..]) else {
            // The header ends the text: an empty scalar whatever the chomping.
            return Ok((String::new(), b.len()));
        };
        let mut i = self.pos + nl + 1;
        if b.get(i) == Some(&b'\t') {
            return self.bail_at(i, "a tab starting a block scalar's first line");
        }
        // Empty lines before the first content line, as line breaks.
        let mut breaks = 0;
        let (indent, line) = match explicit {
            Some(n) => {
                let (next, line) = self.block_indent(i, n, &mut breaks);
                i = next;
                (n, line)
            }
            None => {
                let (next, line, widest) = self.block_first_indent(i, &mut breaks);
                i = next;
                // At least one column past the parent, as the reference parser has it.
                (widest.max(usize::try_from(parent + 1).unwrap_or(0)), line)
            }
        };
        if i >= b.len() {
            let text = match chomp {
                Chomp::Keep if breaks == 0 && i > line => "\n".to_string(),
                Chomp::Keep => "\n".repeat(breaks),
                Chomp::Strip | Chomp::Clip => String::new(),
            };
            return Ok((text, b.len()));
        }
        let col = i - line;
        if col < indent && col as isize > parent {
            return self.bail_at(i, "a line indented less than its block scalar");
        }
        self.block_content(
            Content {
                indent,
                at: i,
                line,
                breaks,
            },
            folded,
            chomp,
        )
    }

    /// The text of a block scalar from its first content line on (`start`), joined or folded
    /// line by line and chomped, and where the scalar ends (as [`Parser::block_body`]).
    fn block_content(&mut self, start: Content, folded: bool, chomp: Chomp) -> R<(String, usize)> {
        let b = self.b;
        let Content {
            indent,
            at: mut i,
            mut line,
            mut breaks,
        } = start;
        let mut col = i - line;
        let mut text = String::new();
        let mut leading_break = false;
        let mut leading_blank = false;
        while col == indent && i < b.len() && b[i] != b'\n' {
            // At the root the scalar may have no indentation: only a document end (`...`)
            // ends it there (`---` and comments are content), as in the reference parser.
            if indent == 0 && b[i..].starts_with(b"...") && self.doc_marker_at(i) {
                break;
            }
            let trailing_blank = is_blank(b[i]);
            if folded && leading_break && !leading_blank && !trailing_blank {
                match breaks {
                    0 => text.push(' '),
                    n => text.extend(std::iter::repeat_n('\n', n)),
                }
            } else {
                text.extend(std::iter::repeat_n(
                    '\n',
                    usize::from(leading_break) + breaks,
                ));
            }
            breaks = 0;
            leading_blank = trailing_blank;
            let end = memchr(b'\n', &b[i..]).map_or(b.len(), |k| i + k);
            self.claim(i, end)?;
            text.push_str(&self.text[i..end]);
            leading_break = end < b.len();
            if !leading_break {
                i = end;
                col = indent + 1;
                break;
            }
            (i, line) = self.block_indent(end + 1, indent, &mut breaks);
            col = i - line;
        }
        if chomp != Chomp::Strip {
            let unended = i >= b.len() && col >= indent.max(1);
            text.extend(std::iter::repeat_n(
                '\n',
                usize::from(leading_break) + usize::from(unended),
            ));
        }
        if chomp == Chomp::Keep {
            text.extend(std::iter::repeat_n('\n', breaks));
        }
        if i >= b.len() {
            return Ok((text, b.len()));
        }
        if b[i] == b'\t' {
            return self.bail_at(
                i,
                "a tab after the indentation of a line after a block scalar",
            );
        }
        Ok((text, line))
    }

    /// From the line starting at `i`, moves over up to `indent` spaces of each line and over
    /// the empty lines (counted into `breaks`); returns where it stopped and that line's start.
    fn block_indent(&self, mut i: usize, indent: usize, breaks: &mut usize) -> (usize, usize) {
        loop {
            let line = i;
            while i - line < indent && self.peek_at(i) == Some(b' ') {
                i += 1;
            }
            if self.peek_at(i) != Some(b'\n') {
                return (i, line);
            }
            *breaks += 1;
            i += 1;
        }
    }

    /// Like [`Parser::block_indent`] before a scalar's indentation is known: moves over all the
    /// spaces of each line and the lines that hold nothing else; also returns the widest
    /// indentation seen (which the scalar's indentation must reach).
    fn block_first_indent(&self, mut i: usize, breaks: &mut usize) -> (usize, usize, usize) {
        let mut widest = 0;
        loop {
            let line = i;
            while self.peek_at(i) == Some(b' ') {
                i += 1;
            }
            widest = widest.max(i - line);
            if self.peek_at(i) != Some(b'\n') {
                return (i, line, widest);
            }
            *breaks += 1;
            i += 1;
        }
    }
}

// ---- quoted scalars ------------------------------------------------------------------------------

impl<'t, S: Sink<'t>> Parser<'t, '_, S> {
    /// A single- or double-quoted scalar at the position; the position ends after the closing
    /// quote. Continuation lines must be indented past `parent`.
    fn quoted(&mut self, parent: isize) -> R<(Cow<'t, str>, ScalarStyle)> {
        let double = self.b[self.pos] == b'"';
        let start = self.pos + 1;
        let rest = &self.b[start..];
        // The common case: one line, no escapes — borrowed from the text.
        let found = if double {
            memchr3(b'"', b'\\', b'\n', rest)
        } else {
            memchr2(b'\'', b'\n', rest)
        };
        if let Some(i) = found {
            let end = start + i;
            let close = if double { b'"' } else { b'\'' };
            if self.b[end] == close && (double || self.peek_at(end + 1) != Some(b'\'')) {
                self.pos = end + 1;
                let style = if double {
                    ScalarStyle::DoubleQuoted
                } else {
                    ScalarStyle::SingleQuoted
                };
                return Ok((Cow::Borrowed(&self.text[start..end]), style));
            }
        }
        if double {
            Ok((
                Cow::Owned(self.double_slow(parent)?),
                ScalarStyle::DoubleQuoted,
            ))
        } else {
            Ok((
                Cow::Owned(self.single_slow(parent)?),
                ScalarStyle::SingleQuoted,
            ))
        }
    }

    fn single_slow(&mut self, parent: isize) -> R<String> {
        let mut out = String::new();
        let mut i = self.pos + 1;
        loop {
            let Some(j) = memchr2(b'\'', b'\n', &self.b[i..]).map(|j| i + j) else {
                return self.bail("an unterminated quoted scalar");
            };
            if self.b[j] == b'\'' {
                out.push_str(&self.text[i..j]);
                if self.peek_at(j + 1) == Some(b'\'') {
                    out.push('\'');
                    i = j + 2;
                    continue;
                }
                self.pos = j + 1;
                return Ok(out);
            }
            out.push_str(&self.text[i..trim_end(self.b, i, j)]);
            i = self.fold(j, parent, &mut out, false)?;
        }
    }

    fn double_slow(&mut self, parent: isize) -> R<String> {
        let mut out = String::new();
        let mut i = self.pos + 1;
        loop {
            let Some(j) = memchr3(b'"', b'\\', b'\n', &self.b[i..]).map(|j| i + j) else {
                return self.bail("an unterminated quoted scalar");
            };
            match self.b[j] {
                b'"' => {
                    out.push_str(&self.text[i..j]);
                    self.pos = j + 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(&self.text[i..j]);
                    if self.peek_at(j + 1) == Some(b'\n') {
                        i = self.fold(j + 1, parent, &mut out, true)?;
                    } else {
                        i = self.escape(j, &mut out)?;
                    }
                }
                _ => {
                    out.push_str(&self.text[i..trim_end(self.b, i, j)]);
                    i = self.fold(j, parent, &mut out, false)?;
                }
            }
        }
    }

    /// Folds the line break at `j` and the blank lines after it into `out` (one break is a space,
    /// or nothing after an escaped break; each blank line a `\n`) and returns where the next
    /// line's content starts.
    fn fold(&mut self, j: usize, parent: isize, out: &mut String, escaped: bool) -> R<usize> {
        let mut breaks = 0usize;
        let mut i = j + 1;
        loop {
            let start = i;
            while self.peek_at(i) == Some(b' ') {
                i += 1;
            }
            let ind = i - start;
            // Tabs among a line's leading blanks are trimmed like spaces, past the parent's
            // column (where the reference parser may count them as indentation, an error).
            if self.peek_at(i) == Some(b'\t') {
                if ind as isize <= parent {
                    self.pos = i;
                    return self.bail("a tab indenting a quoted scalar's line");
                }
                i = self.blanks_end(i);
            }
            match self.peek_at(i) {
                None => {
                    self.pos = i;
                    return self.bail("an unterminated quoted scalar");
                }
                Some(b'\n') => {
                    breaks += 1;
                    i += 1;
                }
                Some(_) => {
                    if ind as isize <= parent || (ind == 0 && self.doc_marker_at(start)) {
                        self.pos = i;
                        return self.bail("a quoted scalar's line not indented past its parent");
                    }
                    break;
                }
            }
        }
        match (breaks, escaped) {
            (0, false) => out.push(' '),
            (n, _) => out.extend(std::iter::repeat_n('\n', n)),
        }
        Ok(i)
    }

    /// The escape sequence whose `\` is at `j`, appended to `out`; returns the index after it.
    fn escape(&mut self, j: usize, out: &mut String) -> R<usize> {
        let c = self.peek_at(j + 1).unwrap_or(0);
        let simple = match c {
            b'0' => Some('\0'),
            b'a' => Some('\u{7}'),
            b'b' => Some('\u{8}'),
            b't' | b'\t' => Some('\t'),
            b'n' => Some('\n'),
            b'v' => Some('\u{b}'),
            b'f' => Some('\u{c}'),
            b'r' => Some('\r'),
            b'e' => Some('\u{1b}'),
            b' ' => Some(' '),
            b'"' => Some('"'),
            b'/' => Some('/'),
            b'\\' => Some('\\'),
            b'N' => Some('\u{85}'),
            b'_' => Some('\u{a0}'),
            b'L' => Some('\u{2028}'),
            b'P' => Some('\u{2029}'),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            return Ok(j + 2);
        }
        let digits = match c {
            b'x' => 2,
            b'u' => 4,
            b'U' => 8,
            _ => {
                self.pos = j;
                return self.bail("an escape the fast parser leaves to the reference parser");
            }
        };
        let hex = self.b.get(j + 2..j + 2 + digits).unwrap_or_default();
        let code = std::str::from_utf8(hex)
            .ok()
            .filter(|h| h.len() == digits && h.bytes().all(|c| c.is_ascii_hexdigit()))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .and_then(char::from_u32);
        match code {
            Some(ch) => {
                out.push(ch);
                Ok(j + 2 + digits)
            }
            None => {
                self.pos = j;
                self.bail("an invalid escape")
            }
        }
    }
}

/// The bytes at which [`Parser::plain_flow_end`] looks twice: everything its `match` names.
const FLOW_PLAIN_SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let special = b"\n,[]{}:#-";
    let mut i = 0;
    while i < special.len() {
        t[special[i] as usize] = true;
        i += 1;
    }
    t
};

// ---- flow collections ----------------------------------------------------------------------------

impl<'t, S: Sink<'t>> Parser<'t, '_, S> {
    /// A node inside (or starting) a flow collection: properties, then a collection, an alias,
    /// a quoted or a plain scalar. Lines inside must be indented past `parent`.
    fn flow_node(&mut self, parent: isize, props: Props<'t>) -> R {
        let props = if props.is_empty() {
            self.props()?
        } else {
            props
        };
        let at = self.pos;
        match self.peek() {
            Some(b'[') => self.flow_collection(parent, props, false),
            Some(b'{') => self.flow_collection(parent, props, true),
            Some(b'*') if props.is_empty() => self.alias(),
            Some(b'\'' | b'"') => {
                let (text, style) = self.quoted(parent)?;
                self.claim_quoted(at)?;
                self.scalar(text, style, props, at)
            }
            // Properties alone make an empty node (`[!!str, &a]`).
            Some(b',' | b']' | b'}') if !props.is_empty() => self.empty_scalar(props, at),
            Some(b'\n' | b'#') if !props.is_empty() => self.flow_props_line(parent, props),
            Some(c) if self.plain_start(c, true) => {
                let text = self.plain_flow(parent)?;
                self.scalar(text, ScalarStyle::Plain, props, at)
            }
            _ => self.bail("a flow entry the fast parser leaves to the reference parser"),
        }
    }

    /// The node after properties (`props`) that end their line in a flow collection.
    #[cold]
    fn flow_props_line(&mut self, parent: isize, props: Props<'t>) -> R {
        self.flow_ws(parent)?;
        let more = self.props()?;
        let props = self.merge(props, more)?;
        if matches!(self.peek(), Some(b'\n' | b'#')) {
            return self.bail("properties on several lines in a flow collection");
        }
        self.flow_node(parent, props)
    }

    /// A plain scalar inside a flow collection at the position, through its last line's
    /// content.
    #[inline(always)]
    fn plain_flow(&mut self, parent: isize) -> R<Cow<'t, str>> {
        let at = self.pos;
        let end = self.plain_flow_end(at);
        self.flow_unrolled = true;
        self.pos = end;
        if matches!(self.peek_at(end), Some(b' ' | b'\t' | b'\n'))
            && self.peek_at(self.blanks_end(end)) == Some(b'\n')
        {
            if let Some(text) = self.plain_flow_lines(parent, &self.text[at..end])? {
                return Ok(Cow::Owned(text));
            }
        }
        Ok(Cow::Borrowed(&self.text[at..end]))
    }

    /// The lines that continue a flow plain scalar whose text so far is `first` (the position
    /// at the blanks after it, before a line break), folded into it; `None` if the scalar ends
    /// on its first line (the next line's content is a flow indicator, a comment or `: `).
    /// Continuation lines must be indented past `parent` and not start with a tab, and `-`
    /// before a flow indicator is an error: those are left to the reference parser.
    #[cold]
    fn plain_flow_lines(&mut self, parent: isize, first: &'t str) -> R<Option<String>> {
        let mut text: Option<String> = None;
        loop {
            let Some((start, content, breaks)) = self.flow_continuation()? else {
                return Ok(text);
            };
            if (content - start) as isize <= parent {
                return self.bail_at(content, "a flow scalar's line not indented past its parent");
            }
            if self.b[content] == b'-' && self.peek_at(content + 1).is_some_and(is_flow_indicator) {
                return self.bail_at(
                    content,
                    "a flow scalar's line starting with `-` before an indicator",
                );
            }
            let end = self.plain_flow_end(content);
            let s = text.get_or_insert_with(|| first.to_string());
            fold_line(s, breaks, &self.text[content..end]);
            self.pos = end;
        }
    }

    /// After a flow plain scalar's line (the position at the blanks after its content): the
    /// start and content offset of the next line that continues it, with the number of blank
    /// lines before it, or `None` if the scalar ends here.
    fn flow_continuation(&self) -> R<Option<(usize, usize, usize)>> {
        let mut i = self.blanks_end(self.pos);
        let mut breaks = 0usize;
        loop {
            if self.peek_at(i) != Some(b'\n') {
                return Ok(None);
            }
            let start = i + 1;
            let mut j = start;
            while self.peek_at(j) == Some(b' ') {
                j += 1;
            }
            match self.peek_at(j) {
                Some(b'\n') => {
                    breaks += 1;
                    i = j;
                }
                Some(b'\t') => return self.bail_at(j, "a tab starting a flow scalar's line"),
                None => return Ok(None),
                Some(c) => {
                    let next = self.peek_at(j + 1);
                    let ends = is_flow_indicator(c)
                        || c == b'#'
                        || c == b':'
                            && next
                                .is_none_or(|n| is_blank(n) || n == b'\n' || is_flow_indicator(n))
                        || j == start && self.doc_marker_at(start);
                    return Ok((!ends).then_some((start, j, breaks)));
                }
            }
        }
    }

    /// End of a plain scalar's line inside a flow collection (trailing blanks excluded): at a
    /// flow indicator, `: `, ` #` or the line's end.
    fn plain_flow_end(&self, start: usize) -> usize {
        let b = self.b;
        let mut i = start;
        loop {
            // Ordinary bytes (nearly all of them) cost one table lookup.
            while b
                .get(i)
                .is_some_and(|&c| !FLOW_PLAIN_SPECIAL[usize::from(c)])
            {
                i += 1;
            }
            let Some(&c) = b.get(i) else { break };
            let stop = match c {
                b'\n' | b',' | b'[' | b']' | b'{' | b'}' => true,
                // A tab after `:` ends the scalar too (the reference parser reads it as blank).
                b':' => self
                    .peek_at(i + 1)
                    .is_none_or(|n| is_blank(n) || n == b'\n' || is_flow_indicator(n)),
                b'#' => i > start && is_ws(b[i - 1]),
                // The reference parser refuses a word `-` before a flow indicator (`[a -]`):
                // stopping here leaves the `-` to the caller, which hands the text over.
                b'-' => {
                    i > start
                        && is_ws(b[i - 1])
                        && self.peek_at(i + 1).is_some_and(is_flow_indicator)
                }
                _ => false,
            };
            if stop {
                break;
            }
            i += 1;
        }
        trim_end(b, start, i)
    }

    /// Blanks (spaces and tabs), comments and line breaks between flow tokens; lines must be
    /// indented past `parent`.
    #[inline(always)]
    fn flow_ws(&mut self, parent: isize) -> R {
        // Most flow tokens follow each other on one line, one blank apart at most.
        if self.peek() == Some(b' ') {
            self.pos += 1;
        }
        if !matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'#')) {
            return Ok(());
        }
        self.flow_ws_lines(parent)
    }

    /// [`Parser::flow_ws`] past its first blank.
    #[inline(never)]
    fn flow_ws_lines(&mut self, parent: isize) -> R {
        loop {
            self.flow_blanks()?;
            match self.peek() {
                Some(b'\n') => {
                    self.pos += 1;
                    let start = self.pos;
                    while self.peek() == Some(b' ') {
                        self.pos += 1;
                    }
                    let ind = self.pos - start;
                    if self.peek() == Some(b'\t') {
                        self.flow_leading_tabs(ind, parent)?;
                    }
                    // The reference parser wants a flow collection's lines past the parent's
                    // column until it has read a plain scalar in it; from then on, only plain
                    // scalars, and other tokens (brackets, commas) may stand at that column.
                    let at_parent = ind as isize == parent
                        && self.flow_unrolled
                        && matches!(self.peek(), Some(b']' | b'}' | b','));
                    let blank = matches!(self.peek(), Some(b'\n' | b'#') | None);
                    if !blank
                        && !at_parent
                        && (ind as isize <= parent || (ind == 0 && self.doc_marker_at(start)))
                    {
                        return self.bail("a flow collection's line not indented past its parent");
                    }
                }
                // A comment runs to the end of its line; one not separated from the token
                // before it by a blank is an error the reference parser reports.
                Some(b'#') => {
                    if self.pos == 0 || !matches!(self.b[self.pos - 1], b' ' | b'\t' | b'\n') {
                        return self.bail("a comment right after a flow token");
                    }
                    let rest = &self.b[self.pos..];
                    let end = memchr(b'\n', rest).map_or(self.b.len(), |i| self.pos + i);
                    self.claim(self.pos, end)?;
                    self.pos = end;
                }
                _ => return Ok(()),
            }
        }
    }

    /// Moves over the spaces and tabs at the position, claiming the tabs (white space between
    /// flow tokens, wherever a line is already under way).
    fn flow_blanks(&mut self) -> R {
        let from = self.pos;
        self.skip_blanks();
        self.claim(from, self.pos)
    }

    /// A tab among a flow line's leading blanks, after `ind` spaces: the reference parser counts
    /// it as indentation (an error) when it stands at or before the parent's column and text
    /// follows on the line; otherwise it is white space.
    #[cold]
    fn flow_leading_tabs(&mut self, ind: usize, parent: isize) -> R {
        let end = self.blanks_end(self.pos);
        let rest_blank = matches!(self.peek_at(end), Some(b'\n' | b'#') | None);
        if !rest_blank && ind as isize <= parent {
            return self.bail("a tab indenting a flow collection's line");
        }
        self.claim(self.pos, end)?;
        self.pos = end;
        Ok(())
    }

    /// A flow sequence (`[`) or mapping (`{`) at the position, through its closing bracket.
    fn flow_collection(&mut self, parent: isize, props: Props<'t>, map: bool) -> R {
        let at = self.pos;
        self.enter()?;
        let close = if map { b'}' } else { b']' };
        if self.flow_level == 0 {
            self.flow_unrolled = false;
        }
        if self.flow_level == MAX_FLOW_LEVEL {
            return self.bail("flow collections nested deeper than the reference parser reads");
        }
        self.flow_level += 1;
        self.emit_start(map, &props, at)?;
        self.pos += 1;
        self.flow_ws(parent)?;
        if self.peek() != Some(close) {
            loop {
                if !map {
                    self.flow_seq_entry(parent)?;
                } else if self.flow_key(parent)? {
                    self.flow_node(parent, Props::default())?;
                }
                self.flow_ws(parent)?;
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        self.flow_ws(parent)?;
                        // A trailing comma (`[a, b, ]`, common in schemas) ends the collection.
                        if self.peek() == Some(close) {
                            break;
                        }
                    }
                    Some(c) if c == close => break,
                    _ => return self.bail("a flow entry the fast parser does not read"),
                }
            }
        }
        self.pos += 1;
        let at = self.pos;
        self.depth -= 1;
        if self.explicit_pairs != 0 {
            self.explicit_pairs &= !flow_bit(self.flow_level);
        }
        self.flow_level -= 1;
        self.emit_end(at)
    }

    /// An entry of a flow sequence: a node, or a single-pair mapping (`[a: 1, b: 2]`) whose key
    /// is a plain or quoted scalar on one line (properties before it are the key's) or an alias.
    fn flow_seq_entry(&mut self, parent: isize) -> R {
        let at = self.pos;
        // Most entries are plain scalars right before a `,` or the `]` (numbers in arrays).
        if self.peek().is_some_and(|c| self.plain_start(c, true)) {
            let end = self.plain_flow_end(at);
            if matches!(self.peek_at(end), Some(b',' | b']')) {
                self.flow_unrolled = true;
                self.pos = end;
                let text = Cow::Borrowed(&self.text[at..end]);
                return self.scalar(text, ScalarStyle::Plain, Props::default(), at);
            }
        }
        match self.peek() {
            // Collections in a sequence (rows of a JSON table, nested arrays).
            Some(b'[') => return self.flow_collection(parent, Props::default(), false),
            Some(b'{') => return self.flow_collection(parent, Props::default(), true),
            Some(b'?') if self.explicit_key_here() => return self.explicit_pair(parent),
            _ => {}
        }
        let props = self.props()?;
        let (key, style) = if self.peek() == Some(b'*') && props.is_empty() {
            let id = self.alias_id()?;
            self.flow_blanks()?;
            (Key::Alias(id), ScalarStyle::Plain)
        } else if self.peek() == Some(b':') && self.flow_colon_here(ScalarStyle::Plain) {
            // An empty key (`[: v]`).
            if props.is_empty() && self.explicit_pairs & flow_bit(self.flow_level) != 0 {
                return self.bail("an empty key after an explicit pair in a flow sequence");
            }
            (
                Key::Scalar(Cow::Borrowed(""), ScalarStyle::Plain, props),
                ScalarStyle::Plain,
            )
        } else {
            match self.flow_scalar(parent, false)? {
                Some((text, style)) => (Key::Scalar(text, style, props), style),
                None => return self.flow_node(parent, props),
            }
        };
        if self.peek() != Some(b':') {
            return self.key(key, at);
        }
        if !self.flow_colon_here(style) {
            return self.bail("a flow entry the fast parser does not read");
        }
        self.pos += 1;
        self.single_pair(parent, at, |p| {
            p.key(key, at)?;
            p.flow_value_follows(parent, b']')
        })
    }

    /// A single-pair mapping in a flow sequence, marked at `at`: `key` reads its key through
    /// the `:` and returns whether a value follows, which is read here.
    #[inline(always)]
    fn single_pair(
        &mut self,
        parent: isize,
        at: usize,
        key: impl FnOnce(&mut Self) -> R<bool>,
    ) -> R {
        self.enter()?;
        self.emit_start(true, &Props::default(), at)?;
        if key(self)? {
            self.flow_node(parent, Props::default())?;
        }
        self.depth -= 1;
        self.emit_end(self.pos)
    }

    /// A single-pair mapping in a flow sequence whose key is explicit (`[? key : value]`), the
    /// position at its `?`.
    #[cold]
    fn explicit_pair(&mut self, parent: isize) -> R {
        if self.flow_level >= 128 {
            return self.bail("an explicit pair nested more than 128 flow levels deep");
        }
        self.explicit_pairs |= flow_bit(self.flow_level);
        self.single_pair(parent, self.pos, |p| p.explicit_flow_key(parent, b']'))
    }

    /// A plain or quoted scalar in a flow collection, not yet emitted, with the blanks after it;
    /// `None` (nothing read) at anything else. A flow mapping's key (`map_key`) may span lines
    /// and have line breaks and comments before its `:` (the reference parser keeps flow keys
    /// over line breaks); a single-pair mapping's key in a sequence may not.
    #[inline(always)]
    fn flow_scalar(
        &mut self,
        parent: isize,
        map_key: bool,
    ) -> R<Option<(Cow<'t, str>, ScalarStyle)>> {
        let at = self.pos;
        let scalar = match self.peek() {
            Some(b'\'' | b'"') => {
                let key = self.quoted(parent)?;
                self.claim_quoted(at)?;
                key
            }
            Some(c) if self.plain_start(c, true) => (self.plain_flow(parent)?, ScalarStyle::Plain),
            _ => return Ok(None),
        };
        if map_key {
            self.flow_ws(parent)?;
        } else {
            self.flow_blanks()?;
            // The reference parser refuses a `:` after one over several lines.
            if self.peek() == Some(b':') && self.b[at..self.pos].contains(&b'\n') {
                return self.bail("a single-pair key over several lines");
            }
        }
        Ok(Some(scalar))
    }

    /// Whether the `:` at the position is a value indicator after a flow key of `style`. A
    /// quoted key is JSON-like: the value may follow the `:` without a blank (`{"a":1}`). After
    /// a plain key the reference parser refuses a `[` or `{` right after the colon.
    fn flow_colon_here(&self, style: ScalarStyle) -> bool {
        style != ScalarStyle::Plain
            || self.blank_at(self.pos + 1)
            || matches!(self.peek_at(self.pos + 1), Some(b',' | b']' | b'}'))
    }

    /// A flow mapping key (a plain or quoted scalar after its properties, an alias, or an
    /// explicit `? key`) through its `:` and the blanks after it. Returns whether a value follows; an
    /// entry that ends after its key or its `:` (`{a, b: }`) gets an empty value here.
    fn flow_key(&mut self, parent: isize) -> R<bool> {
        if self.explicit_key_here() {
            return self.explicit_flow_key(parent, b'}');
        }
        let props = self.props()?;
        let at = self.pos;
        // A key may have line breaks and comments before its `:`.
        let (text, style) = match self.peek() {
            // JSON's keys, read without the detour through `flow_scalar`.
            Some(b'"') => {
                let key = self.quoted(parent)?;
                self.claim_quoted(at)?;
                self.flow_ws(parent)?;
                key
            }
            Some(b'*') if props.is_empty() => {
                let id = self.alias_id()?;
                self.flow_ws(parent)?;
                return self.flow_key_end(Key::Alias(id), ScalarStyle::Plain, at, parent);
            }
            _ => match self.flow_scalar(parent, true)? {
                Some(key) => key,
                // An empty key (`{: v}`), or properties alone (`{!!str : v}`, `{&a, b}`).
                None if self.peek() == Some(b':')
                    || !props.is_empty() && matches!(self.peek(), Some(b',' | b'}')) =>
                {
                    (Cow::Borrowed(""), ScalarStyle::Plain)
                }
                None => return self.bail("a flow mapping key the fast parser does not read"),
            },
        };
        self.flow_key_end(Key::Scalar(text, style, props), style, at, parent)
    }

    /// After a flow mapping key of `style` (read from `at`, with the blanks after it): emits
    /// it and moves past its `:` (see [`Parser::flow_key`]).
    #[inline(always)]
    fn flow_key_end(
        &mut self,
        key: Key<'t>,
        style: ScalarStyle,
        at: usize,
        parent: isize,
    ) -> R<bool> {
        match self.peek() {
            Some(b':') if self.flow_colon_here(style) => {
                self.pos += 1;
                self.key(key, at)?;
                self.flow_value_follows(parent, b'}')
            }
            Some(b',' | b'}') => {
                self.key(key, at)?;
                self.empty_scalar(Props::default(), self.pos)?;
                Ok(false)
            }
            _ => self.bail("a flow mapping key without `: `"),
        }
    }

    /// An explicit flow mapping key (`? key`, the key any flow node, then `:` after blanks or
    /// line breaks, or no `:` and an empty value), the position at its `?`, in a collection
    /// that `close` ends. PyYAML writes one for a long key inside `{}`. In a flow mapping the
    /// key may be empty (`{? : v}`). Returns whether a value follows.
    fn explicit_flow_key(&mut self, parent: isize, close: u8) -> R<bool> {
        self.pos += 1;
        self.no_tab_after_key_indicator()?;
        self.flow_ws(parent)?;
        let c = self.peek();
        if c == Some(b',') || c == Some(close) || c == Some(b':') {
            if close == b']' {
                return self.bail("an empty explicit key in a flow sequence");
            }
            // Marked, as the reference parser marks it, at the token after it.
            self.empty_scalar(Props::default(), self.pos)?;
        } else {
            self.flow_node(parent, Props::default())?;
            self.flow_ws(parent)?;
        }
        match self.peek() {
            Some(b':') if self.flow_colon_here(ScalarStyle::Plain) => {
                self.pos += 1;
                self.flow_value_follows(parent, close)
            }
            Some(c) if c == b',' || c == close => {
                self.empty_scalar(Props::default(), self.pos)?;
                Ok(false)
            }
            _ => self.bail("an explicit flow mapping key without `: `"),
        }
    }

    /// Moves past the blanks after a flow key's `:` (the position is after it), in a
    /// collection that `close` ends. Returns whether a value follows; when the entry ends
    /// there, its value is empty.
    fn flow_value_follows(&mut self, parent: isize, close: u8) -> R<bool> {
        // The reference parser refuses some tabs right after the colon (before a word).
        if self.peek() == Some(b'\t') {
            return self.bail("a tab right after a flow key's `:`");
        }
        self.flow_ws(parent)?;
        if self.peek() == Some(b',') || self.peek() == Some(close) {
            self.empty_scalar(Props::default(), self.pos)?;
            return Ok(false);
        }
        Ok(true)
    }
}
