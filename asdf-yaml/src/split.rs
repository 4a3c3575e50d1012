//! Parallel parsing of large trees.
//!
//! The trees that take long to parse are large because one block mapping holds many entries
//! (a catalogue of objects, a mapping of thousands of arrays). Its entries can be parsed
//! independently: an entry starts on a line indented exactly like its siblings, and YAML
//! requires everything that continues an entry (block scalars, quoted or plain scalars over
//! several lines, flow collections) to be indented further. So the text is cut at such lines,
//! each piece is parsed as a document of its own on the rayon pool (or, on one thread, one after
//! another when the fast parser left the whole text to the reference parser, so that only the
//! pieces that need it pay for the slower parser), and the pieces' entries
//! are joined into the mapping, in order and with the same duplicate-key rule as the serial
//! parser. The rest of the document (the "skeleton", with `{}` where the mapping was) is
//! parsed as usual.
//!
//! The split is only an optimisation and must never change a result: whenever anything is
//! unusual (a line it cannot classify, keys that are not plain strings, warnings, anchors or
//! aliases reaching across pieces, any error at all), the caller parses the whole text
//! serially, so results and error messages are exactly those of the serial parser.

use rayon::prelude::*;

use crate::node::{Node, Value};
use crate::parse::{build, dedup, Built, ParseOptions};
use crate::resolve::{resolve_plain, Implicit};

/// Texts shorter than this are parsed serially (splitting costs a scan of the text).
pub(crate) const SPLIT_MIN_BYTES: usize = 1 << 20;

/// A mapping is split when it holds at least this share of the document's bytes.
const DESCEND_SHARE: f64 = 0.5;

/// The lines of the document body, each packed into one `u64` (the text of a million-line tree
/// is cut into lines before any of it is parsed: they should not outweigh the tree). Line `i`
/// runs from `start(i)` to `start(i + 1)`; a last entry marks the end of the body.
struct Lines(Vec<u64>);

/// Bits of a packed line that hold its start; the 16 above hold its indentation.
const START_BITS: u32 = 48;
/// The packed indentation of blank and comment-only lines.
const NO_INDENT: u64 = 0xffff;

impl Lines {
    /// Packs a line starting at byte `start` with `indent` leading spaces (`None` for blank
    /// and comment-only lines); `None` when either does not fit (the serial parser takes such
    /// texts).
    fn pack(start: usize, indent: Option<usize>) -> Option<u64> {
        let start = u64::try_from(start).ok().filter(|&s| s < 1 << START_BITS)?;
        let indent = match indent {
            None => NO_INDENT,
            Some(n) => u64::try_from(n).ok().filter(|&n| n < NO_INDENT)?,
        };
        Some(start | indent << START_BITS)
    }

    /// Number of lines.
    fn len(&self) -> usize {
        self.0.len().saturating_sub(1)
    }

    fn start(&self, i: usize) -> usize {
        (self.0[i] & ((1 << START_BITS) - 1)) as usize
    }

    /// Where line `i` ends (its line break included).
    fn end(&self, i: usize) -> usize {
        self.start(i + 1)
    }

    /// Leading spaces; `None` for blank and comment-only lines.
    fn indent(&self, i: usize) -> Option<usize> {
        let n = self.0[i] >> START_BITS;
        (n != NO_INDENT).then_some(n as usize)
    }

    /// The text of line `i`.
    fn text<'t>(&self, text: &'t str, i: usize) -> &'t str {
        &text[self.start(i)..self.end(i)]
    }
}

/// Parses `text` by pieces on the rayon pool (about four per thread); `None` on one thread,
/// when the text does not qualify, or when any piece needs the serial parser's judgement.
pub(crate) fn parse_parallel(text: &str, options: &ParseOptions) -> Option<Built> {
    let threads = rayon::current_num_threads();
    if threads < 2 {
        return None;
    }
    parse_pieces(
        text,
        options,
        SPLIT_MIN_BYTES,
        Pieces::Parallel(threads * 4),
    )
}

/// Bytes of a piece when pieces are parsed one after another: small, so that a construct left
/// to the reference parser costs it a few kilobytes of text, not a sixty-fourth of the
/// document (a catalogue with such a construct in every 2000th of its 200 000 rows went to the
/// reference parser whole with 64 pieces; with pieces of this size it keeps 80 % of the fast
/// parser's speed). Each piece costs a document of its own (a few microseconds).
const SERIAL_PIECE_BYTES: usize = 4 << 10;

/// Parses `text` by pieces one after another, for a document the fast parser left to the
/// reference parser: each piece again goes to the fast parser first, so the reference parser
/// (several times slower) reads only the pieces with the constructs it is needed for.
/// `None` as for [`parse_parallel`] (except that any number of threads will do).
pub(crate) fn parse_pieces_after_bail(text: &str, options: &ParseOptions) -> Option<Built> {
    let pieces = (text.len() / SERIAL_PIECE_BYTES).max(64);
    parse_pieces(text, options, SPLIT_MIN_BYTES, Pieces::Serial(pieces))
}

/// How the pieces are parsed.
#[derive(Clone, Copy)]
enum Pieces {
    /// About this many, in parallel, each by the caller's engine.
    Parallel(usize),
    /// About this many, one after another: each by the fast parser, and each run of
    /// consecutive pieces it leaves by the reference parser as one document (a document's
    /// set-up costs the reference parser tens of microseconds: paid per piece, a construct in
    /// every row made the whole parse 13 % slower than the reference parser alone).
    Serial(usize),
}

fn parse_pieces(
    text: &str,
    options: &ParseOptions,
    min_bytes: usize,
    how: Pieces,
) -> Option<Built> {
    let pieces = match how {
        Pieces::Parallel(n) | Pieces::Serial(n) => n,
    };
    if text.len() < min_bytes {
        return None;
    }
    let plan = plan(text, pieces)?;
    // The region becomes an empty placeholder, indented past the key that holds it (a block
    // sequence may sit at its key's own column; a flow placeholder may not).
    let placeholder = if plan.seq { "[]" } else { "{}" };
    let skeleton = format!(
        "{}{}{placeholder}\n{}",
        &text[..plan.region.start],
        " ".repeat(plan.indent + usize::from(plan.seq)),
        &text[plan.region.end..]
    );
    // The serial parser's depth limit, less the levels above the pieces' mapping.
    let mut piece_options = *options;
    piece_options.limits.max_depth = options.limits.max_depth.checked_sub(plan.path.len())?;
    let doc = |from: usize, to: usize| format!("{}---\n{}", plan.prologue(text), &text[from..to]);
    let pieces: Vec<Option<Built>> = match how {
        Pieces::Parallel(_) => plan
            .cuts
            .par_windows(2)
            .map(|w| build(&doc(w[0], w[1]), 0, &piece_options).ok())
            .collect(),
        Pieces::Serial(_) => serial_pieces(&plan.cuts, &doc, &piece_options),
    };
    let mut skeleton = build(&skeleton, 0, options).ok()?;
    // Everything that sends the text to the serial parser is checked before anything is joined.
    let pieces: Vec<Built> = pieces.into_iter().collect::<Option<_>>()?;
    let usable = |b: &Built| b.warnings.is_empty() && b.root.tag().is_none() && !b.root.is_shared();
    if !skeleton.warnings.is_empty() || !pieces.iter().all(usable) {
        return None;
    }
    let sum = |f: fn(&Built) -> u64| pieces.iter().map(f).fold(f(&skeleton), u64::saturating_add);
    let (alias_nodes, alias_bytes) = (sum(|b| b.alias_nodes), sum(|b| b.alias_bytes));
    // Each piece stored its own copy of the tags it met: the sum may count a tag several times,
    // which can only send a text to the serial parser, never let one past the limit.
    let tag_bytes = sum(|b| b.tag_bytes as u64);
    if alias_nodes > options.limits.max_alias_nodes
        || alias_bytes > options.limits.max_alias_bytes
        || tag_bytes > crate::MAX_TAG_TOTAL_BYTES as u64
    {
        return None;
    }
    // The joined collection is allocated once, at its final size (beyond a mapping's size, the
    // serial parser reports the error).
    let total: usize = pieces.iter().map(|p| p.root.len()).sum();
    if !plan.seq && total > crate::Mapping::MAX_LEN {
        return None;
    }
    let (mut entries, mut items) = match plan.seq {
        true => (Default::default(), thin_vec::ThinVec::with_capacity(total)),
        false => (
            crate::node::Entries::with_capacity(total),
            Default::default(),
        ),
    };
    for mut piece in pieces {
        match (std::mem::take(piece.root.value_mut()), plan.seq) {
            (Value::Map(m), false) => entries.extend(m),
            (Value::Seq(s), true) => items.extend(s),
            _ => return None,
        }
    }
    let slot = locate(&mut skeleton.root, &plan.path, plan.seq)?;
    *slot = Node::new(match plan.seq {
        true => Value::Seq(items),
        false => Value::Map(dedup(entries)),
    });
    skeleton.alias_nodes = alias_nodes;
    skeleton.alias_bytes = alias_bytes;
    skeleton.tag_bytes = usize::try_from(tag_bytes).unwrap_or(usize::MAX);
    Some(skeleton)
}

/// The pieces between consecutive `cuts` (each made a document by `doc`), one after another:
/// each by the fast parser, and each run of consecutive pieces it leaves by the reference parser
/// as one document. `None` in the result where a run failed (an error there is the serial
/// parser's to report).
fn serial_pieces(
    cuts: &[usize],
    doc: &dyn Fn(usize, usize) -> String,
    options: &ParseOptions,
) -> Vec<Option<Built>> {
    let fast = options.with_engine(crate::Engine::Fast);
    let reference = options.with_engine(crate::Engine::Reference);
    let mut out = Vec::new();
    // Where the run of pieces left to the reference parser started.
    let mut run = None;
    for w in cuts.windows(2) {
        match build(&doc(w[0], w[1]), 0, &fast) {
            Ok(built) => {
                if let Some(start) = run.take() {
                    out.push(build(&doc(start, w[0]), 0, &reference).ok());
                }
                out.push(Some(built));
            }
            Err(_) => {
                run.get_or_insert(w[0]);
            }
        }
    }
    if let (Some(start), Some(&end)) = (run, cuts.last()) {
        out.push(build(&doc(start, end), 0, &reference).ok());
    }
    out
}

/// Where to cut: the region of the split mapping's entries, the cut points inside it, the
/// indentation of its entries and the keys leading to it.
struct Plan {
    /// Byte offset of the `---` line (what comes before it is repeated before every piece).
    document_start: usize,
    region: std::ops::Range<usize>,
    /// Piece boundaries: `region.start`, the cut lines, `region.end`.
    cuts: Vec<usize>,
    indent: usize,
    path: Vec<String>,
    /// Whether the region is a block sequence's entries (else a block mapping's).
    seq: bool,
}

impl Plan {
    fn prologue<'t>(&self, text: &'t str) -> &'t str {
        &text[..self.document_start]
    }
}

/// Bodies longer than this are scanned for their lines in parallel pieces.
const PARALLEL_LINES_BYTES: usize = 4 << 20;

/// The lines of the document body that starts at byte `from`, up to the first line starting
/// with `...` or `---` (whose start is the last entry: where the body ends); `None` when a line
/// before it starts with a tab or does not fit [`Lines::pack`]. A large body is cut at line
/// breaks into one run of lines per thread, each scanned on the rayon pool into its own part of
/// one allocation: on a catalogue of a million lines this scan was a fifth of a two-thread
/// parse, all of it serial.
fn body_lines(text: &str, from: usize) -> Option<Lines> {
    let b = text.as_bytes();
    let threads = rayon::current_num_threads();
    let runs = if b.len() - from < PARALLEL_LINES_BYTES {
        1
    } else {
        threads
    };
    lines_in_runs(b, from, runs)
}

/// [`body_lines`] with the body cut into about `runs` runs.
fn lines_in_runs(b: &[u8], from: usize, runs: usize) -> Option<Lines> {
    let runs = run_bounds(b, from, runs.max(1));
    let room: Vec<usize> = runs
        .par_windows(2)
        .map(|w| line_count(&b[w[0]..w[1]]))
        .collect();
    let total = room.iter().sum::<usize>();
    // One more entry for the end of the body.
    let mut out = vec![0u64; total + 1];
    let mut parts = Vec::with_capacity(room.len());
    let mut rest = out.as_mut_slice();
    for &n in &room {
        let (part, tail) = rest.split_at_mut(n);
        parts.push(part);
        rest = tail;
    }
    let scans: Vec<(usize, Option<LinesStop>)> = parts
        .into_par_iter()
        .zip(runs.par_windows(2))
        .map(|(part, w)| scan_lines(b, w[0]..w[1], part))
        .collect::<Option<_>>()?;
    // Runs before the first stop filled their parts whole, so the lines kept are a prefix.
    let mut len = 0;
    for (written, stop) in scans {
        len += written;
        match stop {
            Some(LinesStop::Tab) => return None,
            Some(LinesStop::DocumentEnd(at)) => {
                out.truncate(len);
                out.push(Lines::pack(at, None)?);
                return Some(Lines(out));
            }
            None => {}
        }
    }
    *out.get_mut(len)? = Lines::pack(b.len(), None)?;
    Some(Lines(out))
}

/// Lines in `run` (the last may end without a line break).
fn line_count(run: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', run).count() + usize::from(run.last().is_some_and(|&c| c != b'\n'))
}

/// `[from, .., b.len()]`: at most `n` runs of whole lines.
fn run_bounds(b: &[u8], from: usize, n: usize) -> Vec<usize> {
    let step = (b.len() - from) / n;
    let mut bounds = vec![from];
    for k in 1..n {
        let guess = from + k * step;
        let Some(i) = memchr_newline(&b[guess..]) else {
            break;
        };
        let at = guess + i + 1;
        if at > bounds[bounds.len() - 1] && at < b.len() {
            bounds.push(at);
        }
    }
    bounds.push(b.len());
    bounds
}

/// What stopped the scan of a run of lines before its end.
enum LinesStop {
    /// A line starting with a tab.
    Tab,
    /// A line starting with `...` or `---`, at this byte.
    DocumentEnd(usize),
}

/// Packs the lines of `run` (whole lines of `b`) into `part`, which has room for all of them:
/// a line's indentation is its leading spaces; blank and comment-only lines have none. Returns
/// how many it wrote and what stopped it early.
fn scan_lines(
    b: &[u8],
    run: std::ops::Range<usize>,
    part: &mut [u64],
) -> Option<(usize, Option<LinesStop>)> {
    let (mut line, end) = (run.start, run.end);
    let unterminated = (end > line && b[end - 1] != b'\n').then_some(end);
    let first = run.start;
    let ends = memchr::memchr_iter(b'\n', &b[run])
        .map(|i| first + i + 1)
        .chain(unterminated);
    let mut written = 0;
    for line_end in ends {
        let text = &b[line..line_end];
        let stop = match text {
            [b'\t', ..] => Some(LinesStop::Tab),
            [b'.', b'.', b'.', ..] | [b'-', b'-', b'-', ..] => Some(LinesStop::DocumentEnd(line)),
            _ => None,
        };
        if stop.is_some() {
            return Some((written, stop));
        }
        let spaces = text.iter().take_while(|&&c| c == b' ').count();
        let content = &text[spaces..];
        let blank = content.iter().all(|&c| c == b'\n' || c == b'\r');
        let indent = (!blank && content[0] != b'#').then_some(spaces);
        *part.get_mut(written)? = Lines::pack(line, indent)?;
        written += 1;
        line = line_end;
    }
    Some((written, None))
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

/// The key of an entry line `key:` or `key: value`, when the key is a plain string starting
/// with a letter, digit or underscore (the only entries the split recognises).
fn plain_key(line: &str) -> Option<(&str, bool)> {
    let first = line.chars().next()?;
    if !(first.is_ascii_alphanumeric() || first == '_') {
        return None;
    }
    let colon = line.find(':')?;
    let key = &line[..colon];
    let rest = &line[colon + 1..];
    if !key
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_-.$/()+".contains(&b))
    {
        return None;
    }
    if resolve_plain(key) != Implicit::Str {
        return None;
    }
    let rest = rest.trim_end_matches(['\n', '\r']);
    if rest.is_empty() {
        Some((key, true))
    } else if rest.starts_with(' ') {
        Some((key, false))
    } else {
        None
    }
}

/// Finds the mapping to split: from the root, descend into the entry holding most of the
/// bytes while it holds more than [`DESCEND_SHARE`] of its parent's.
fn plan(text: &str, pieces: usize) -> Option<Plan> {
    let (document_start, all) = document_lines(text)?;
    let body = &all;
    let mut path = Vec::new();
    let mut range = 0..body.len();
    let mut indent = 0usize;
    loop {
        let starts = entry_starts(text, body, range.clone(), indent)?;
        let keys: Vec<(&str, bool)> = starts
            .iter()
            .map(|&i| plain_key(body.text(text, i).trim_start_matches(' ')))
            .collect::<Option<_>>()?;
        let total = byte_len(body, range.clone());
        let spans: Vec<std::ops::Range<usize>> = starts
            .iter()
            .enumerate()
            .map(|(j, &s)| s..starts.get(j + 1).copied().unwrap_or(range.end))
            .collect();
        let (biggest, span) = spans
            .iter()
            .enumerate()
            .max_by_key(|(_, s)| byte_len(body, (*s).clone()))?;
        let share = byte_len(body, span.clone()) as f64 / total.max(1) as f64;
        let (key, value_below) = keys[biggest];
        let duplicate = keys.iter().filter(|(k, _)| *k == key).count() > 1;
        if share > DESCEND_SHARE && value_below && !duplicate && span.len() > 1 {
            // The value is the lines under the key: split it if it is a block sequence,
            // descend into it if it is a block mapping.
            let inner = span.start + 1..span.end;
            let first = inner.clone().find(|&i| body.indent(i).is_some())?;
            let child_indent = body.indent(first)?;
            path.push(key.to_string());
            if is_seq_entry(body.text(text, first)) && child_indent >= indent {
                let doc = Doc {
                    text,
                    body,
                    start: document_start,
                    pieces,
                };
                return seq_plan(&doc, inner, child_indent, path);
            }
            if child_indent <= indent {
                return None;
            }
            range = inner;
            indent = child_indent;
            continue;
        }
        // Split this mapping (not the root: its tag and the skeleton would be all of it).
        if path.is_empty() || starts.len() < 2 {
            return None;
        }
        let doc = Doc {
            text,
            body,
            start: document_start,
            pieces,
        };
        let entries = Entries {
            range,
            starts,
            indent,
        };
        return cut(&doc, entries, path, false);
    }
}

/// The byte offset of the document's `---` line, and the lines of its body (up to a `...` or
/// `---` line); `None` when anything but directives, comments and blank lines comes before the
/// `---` line, or a body line starts with a tab.
fn document_lines(text: &str) -> Option<(usize, Lines)> {
    // The document starts at the first line beginning with `---`; only one document.
    let mut document_start = None;
    let mut pos = 0;
    while pos < text.len() {
        let end = memchr_newline(&text.as_bytes()[pos..]).map_or(text.len(), |i| pos + i + 1);
        let line = &text[pos..end];
        if line.starts_with("---") {
            document_start = Some(pos);
            break;
        }
        if !(line.starts_with('%') || line.starts_with('#') || line.trim().is_empty()) {
            return None;
        }
        pos = end;
    }
    let document_start = document_start?;
    let header_end =
        memchr_newline(&text.as_bytes()[document_start..]).map(|i| document_start + i + 1)?;
    let all = body_lines(text, header_end)?;
    Some((document_start, all))
}

/// The lines within `range` where entries at `indent` start; `None` unless every other content
/// line is deeper (continuing an entry) or an indentless sequence under the entry above.
fn entry_starts(
    text: &str,
    body: &Lines,
    range: std::ops::Range<usize>,
    indent: usize,
) -> Option<Vec<usize>> {
    let mut starts = Vec::new();
    for i in range {
        match body.indent(i) {
            None => {}
            // An indentless sequence: the value of the entry above.
            Some(n) if n == indent && !starts.is_empty() && is_seq_entry(body.text(text, i)) => {}
            Some(n) if n == indent => starts.push(i),
            // Deeper lines continue an entry: there must be one.
            Some(n) if n > indent && starts.is_empty() => return None,
            Some(n) if n > indent => {}
            Some(_) => return None,
        }
    }
    Some(starts)
}

/// Whether a line is a block sequence entry (`-` alone or followed by a space).
fn is_seq_entry(line: &str) -> bool {
    let s = line.trim_start_matches(' ').trim_end_matches(['\n', '\r']);
    s == "-" || s.starts_with("- ")
}

/// The plan for a block sequence whose entries start at `indent` within `range`.
fn seq_plan(
    doc: &Doc<'_>,
    range: std::ops::Range<usize>,
    indent: usize,
    path: Vec<String>,
) -> Option<Plan> {
    let mut starts = Vec::new();
    for i in range.clone() {
        match doc.body.indent(i) {
            None => {}
            Some(n) if n == indent && is_seq_entry(doc.body.text(doc.text, i)) => starts.push(i),
            Some(n) if n > indent && !starts.is_empty() => {}
            _ => return None,
        }
    }
    if starts.len() < 2 {
        return None;
    }
    let entries = Entries {
        range,
        starts,
        indent,
    };
    cut(doc, entries, path, true)
}

/// The document being planned: its text, its body lines and where its `---` line starts.
struct Doc<'a> {
    text: &'a str,
    body: &'a Lines,
    start: usize,
    /// How many pieces to cut the collection into.
    pieces: usize,
}

/// The entry lines of one collection: its range of body lines, the line where each entry
/// starts, and their indentation.
struct Entries {
    range: std::ops::Range<usize>,
    starts: Vec<usize>,
    indent: usize,
}

/// Cuts the collection's region into about `doc.pieces` pieces at entry lines.
fn cut(doc: &Doc<'_>, entries: Entries, path: Vec<String>, seq: bool) -> Option<Plan> {
    let (text, body) = (doc.text, doc.body);
    let Entries {
        range,
        starts,
        indent,
    } = entries;
    let region = body.start(range.start)..body.end(range.end - 1);
    let target = region.len() / doc.pieces.max(2);
    let mut cuts = vec![region.start];
    for &s in &starts[1..] {
        let at = body.start(s);
        if at - cuts[cuts.len() - 1] >= target {
            cuts.push(at);
        }
    }
    cuts.push(region.end);
    if cuts.len() < 3 {
        return None;
    }
    // The skeleton replaces the region by one line: it must end with a line break.
    if !text[..region.end].ends_with('\n') {
        return None;
    }
    Some(Plan {
        document_start: doc.start,
        region,
        cuts,
        indent,
        path,
        seq,
    })
}

fn byte_len(body: &Lines, range: std::ops::Range<usize>) -> usize {
    if range.is_empty() {
        return 0;
    }
    body.end(range.end - 1) - body.start(range.start)
}

/// The node at `path` (string keys) in the skeleton: the `{}` (or `[]`) placeholder.
fn locate<'a>(root: &'a mut Node, path: &[String], seq: bool) -> Option<&'a mut Node> {
    let mut node = root;
    for key in path {
        node = match node.value_mut() {
            Value::Map(m) => m.get_mut(key)?,
            _ => return None,
        };
    }
    match node.value() {
        Value::Map(m) if !seq && m.is_empty() && node.tag().is_none() => Some(node),
        Value::Seq(s) if seq && s.is_empty() && node.tag().is_none() => Some(node),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit_to_string;
    use crate::Engine;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// The serial parser's verdict, as comparable text (tree emitted, or the error).
    fn serial(text: &str) -> String {
        match build(text, 0, &ParseOptions::default()) {
            Ok(b) => format!("{}{:?}", emit_to_string(&b.root).unwrap(), b.warnings),
            Err(e) => format!("error: {e}"),
        }
    }

    /// The split parse, when it accepts the text; the pieces parsed one after another (runs
    /// of those the fast parser leaves joined for the reference parser) give the same.
    fn split(text: &str) -> Option<String> {
        let run = |how| {
            pool(2).install(|| {
                parse_pieces(text, &ParseOptions::default(), 0, how)
                    .map(|b| format!("{}{:?}", emit_to_string(&b.root).unwrap(), b.warnings))
            })
        };
        let parallel = run(Pieces::Parallel(8));
        assert_eq!(run(Pieces::Serial(8)), parallel, "{text}");
        parallel
    }

    /// A tree with the constructs that continue over lines: block scalars, quoted and plain
    /// multi-line scalars, flow collections over lines, comments, tags, non-string keys.
    fn catalogue(n: usize) -> String {
        let mut s = String::from(
            "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
             --- !core/asdf-1.1.0\nasdf_library: !core/software-1.0.0 {name: x, version: 1}\n\
             history:\n  entries: []\nobjects:\n",
        );
        s += &entries(n, 2);
        s += "tail: !core/ndarray-1.0.0 {data: [1, 2]}\n...\n";
        s
    }

    /// `n` entries of a block mapping indented by `pad` spaces.
    fn entries(n: usize, pad: usize) -> String {
        let (p, q, r) = (" ".repeat(pad), " ".repeat(pad + 2), " ".repeat(pad + 4));
        let mut s = String::new();
        for i in 0..n {
            s += &format!("{p}obj{i:05}:\n{q}name: NGC {i}\n{q}ra: {}.5\n", i % 360);
            s += &match i % 7 {
                0 => format!("{q}note: |\n{r}first line\n\n{r}second: line\n"),
                1 => format!("{q}note: \"quoted\n{r}over lines\"\n"),
                2 => format!("{q}note: plain text\n{r}continued here\n"),
                3 => format!("{q}mag: [1.0,\n{r}2.0, 3.0]\n# a comment at column 0\n"),
                4 => format!("{q}when: !time/time-1.1.0 2020-01-01\n{q}1: int key\n"),
                5 => format!("{q}flags: {{good: yes, n: 0x1f}}\n{q}list:\n{q}- a\n{q}- b\n"),
                _ => format!("{q}empty:\n{q}nulls: ~\n"),
            };
        }
        s
    }

    /// A catalogue held in a block sequence of `n` mappings, indentless (`key:\n- a: 1`, as
    /// PyYAML writes it) or indented.
    fn seq_catalogue(n: usize, indentless: bool) -> String {
        let pad = if indentless { 0 } else { 2 };
        let objects = entries(n, pad)
            .lines()
            .map(|l| match l.strip_prefix(&" ".repeat(pad)) {
                Some(rest) if rest.starts_with("obj") => {
                    format!("{}- id: {}", " ".repeat(pad), &rest[3..8])
                }
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        catalogue(0).replace("objects:\n", &format!("objects:\n{objects}\n"))
    }

    /// The body's lines as one serial pass over `str` lines finds them.
    fn simple_body_lines(text: &str, from: usize) -> Option<Vec<u64>> {
        let mut out = Vec::new();
        let mut start = from;
        while start < text.len() {
            let end = text[start..]
                .find('\n')
                .map_or(text.len(), |i| start + i + 1);
            let line = &text[start..end];
            if line.starts_with('\t') {
                return None;
            }
            if line.starts_with("...") || line.starts_with("---") {
                break;
            }
            let trimmed = line.trim_end_matches(['\n', '\r']);
            let content = trimmed.trim_start_matches(' ');
            let indent = (!content.is_empty() && !content.starts_with('#'))
                .then(|| trimmed.len() - content.len());
            out.push(Lines::pack(start, indent)?);
            start = end;
        }
        out.push(Lines::pack(start, None)?);
        Some(out)
    }

    #[test]
    fn lines_scanned_in_runs_are_the_serial_scan() {
        let texts = [
            "a: 1\n  b: 2\n\n# c\n   # d\n  \n- e\n",
            "a: 1\nb: 2",
            "a: 1\r\n  b: 2\r\n\r\n",
            "a:\n  - 1\n  - 2\n...\nafter: 1\n",
            "a:\n  - 1\n---\n\tb: 2\n",
            "a:\n  - 1\n\tb: 2\n...\n",
            "",
            "\n\n\n",
            "x\n",
        ];
        let plain = entries(300, 7);
        let tabbed = plain.clone() + "\t\n";
        let ended = plain.clone() + "...\n\tafter\n";
        for text in texts.iter().copied().chain([&*plain, &*tabbed, &*ended]) {
            let want = simple_body_lines(text, 0);
            for runs in 1..=7 {
                let got = lines_in_runs(text.as_bytes(), 0, runs).map(|l| l.0);
                assert_eq!(got, want, "{text:?} in {runs} runs");
            }
        }
    }

    #[test]
    fn big_sequences_split_like_serial_parse() {
        for indentless in [true, false] {
            let text = seq_catalogue(300, indentless);
            let want = serial(&text);
            assert!(!want.starts_with("error"), "{want}\n{text}");
            assert_eq!(plan(&text, 8).map(|p| p.seq), Some(true));
            assert_eq!(split(&text).as_deref(), Some(&want[..]));
        }
    }

    #[test]
    fn split_parse_equals_serial_parse() {
        for text in [
            catalogue(300),
            catalogue(300).replace('\n', "\r\n"),
            catalogue(200).replace("...\n", ""),
            catalogue(100).trim_end_matches("...\n").to_string() + "other: 1",
        ] {
            let want = serial(&text);
            assert!(!want.starts_with("error"), "{want}");
            assert_eq!(split(&text).as_deref(), Some(&want[..]));
        }
    }

    #[test]
    fn nested_big_mappings_are_found() {
        let text = format!(
            "%YAML 1.1\n---\nmeta: 1\nlevel1:\n  small: [1]\n  level2:\n    objects:\n{}  after: 2\n",
            entries(150, 6)
        );
        let want = serial(&text);
        assert!(!want.starts_with("error"), "{want}");
        assert_eq!(
            plan(&text, 8).map(|p| p.path),
            Some(vec!["level1".into(), "level2".into(), "objects".into()])
        );
        assert_eq!(split(&text).as_deref(), Some(&want[..]));
        assert_eq!(
            plan(&catalogue(150), 8).map(|p| p.path),
            Some(vec!["objects".to_string()])
        );
        // A big sequence is split too (indentless or indented); a mapping whose entries are
        // not plain keys is not.
        let seq = format!("%YAML 1.1\n---\nitems:\n{}", "- {a: 1}\n".repeat(500));
        assert_eq!(
            plan(&seq, 8).map(|p| (p.path, p.seq)),
            Some((vec!["items".into()], true))
        );
        assert_eq!(split(&seq).as_deref(), Some(&serial(&seq)[..]));
        let quoted = format!("---\nobjects:\n{}", "  'k': 1\n".repeat(500));
        assert!(plan(&quoted, 8).is_none());
    }

    #[test]
    fn duplicates_across_pieces_follow_the_serial_rule() {
        let mut text = catalogue(200);
        text = text.replace("  obj00190:\n", "  obj00003:\n");
        let want = serial(&text);
        assert_eq!(split(&text).as_deref(), Some(&want[..]));
    }

    #[test]
    fn anchors_across_pieces_fall_back() {
        let text = catalogue(200)
            .replace(
                "  obj00001:\n    name: NGC 1\n",
                "  obj00001:\n    name: &n NGC 1\n",
            )
            .replace(
                "  obj00190:\n    name: NGC 190\n",
                "  obj00190:\n    name: *n\n",
            );
        assert!(split(&text).is_none());
        // Within one piece they are fine.
        let text =
            catalogue(200).replace("    name: NGC 1\n", "    name: &n NGC 1\n    again: *n\n");
        assert_eq!(split(&text).as_deref(), Some(&serial(&text)[..]));
    }

    /// Whatever is done to the text, the split parse either declines or agrees with the serial
    /// parse (so `parse_document` always gives the serial result, error messages included).
    #[test]
    fn mutated_texts_never_disagree() {
        mutated_texts_agree(&catalogue(120), 1000);
        mutated_texts_agree(&seq_catalogue(60, true), 300);
        mutated_texts_agree(&seq_catalogue(60, false), 300);
    }

    fn mutated_texts_agree(base: &str, rounds: usize) {
        let bytes = base.as_bytes();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let inserts: &[&str] = &[
            "\"",
            "'",
            "[",
            "{",
            "]",
            "\n",
            "\n  ",
            "\n    ",
            "\n  x:",
            "\n  obj00001:",
            "&a ",
            "*a",
            "- ",
            ": ",
            " #",
            "|\n",
            "\t",
            "<<: *a\n",
            "...\n",
            "---\n",
            "? ",
        ];
        let mut declined = 0;
        for _ in 0..rounds {
            let mut t = bytes.to_vec();
            for _ in 0..1 + rnd(3) {
                let at = rnd(t.len());
                match rnd(3) {
                    0 => {
                        t.remove(at);
                    }
                    _ => {
                        let ins = inserts[rnd(inserts.len())].as_bytes();
                        t.splice(at..at, ins.iter().copied());
                    }
                }
            }
            let Ok(text) = String::from_utf8(t) else {
                continue;
            };
            match split(&text) {
                Some(got) => assert_eq!(got, serial(&text), "{text}"),
                None => declined += 1,
            }
        }
        assert!(declined < rounds, "the split never applied");
    }

    #[test]
    fn parse_document_uses_pieces_only_when_big_and_parallel() {
        let text = catalogue(3000);
        assert!(text.len() > SPLIT_MIN_BYTES / 8);
        let one = pool(1).install(|| parse_parallel(&text, &ParseOptions::default()));
        assert!(one.is_none());
        let small = pool(2).install(|| parse_parallel("a: {b: 1}\n", &ParseOptions::default()));
        assert!(small.is_none());
    }

    /// On one thread, with [`deep_options`]: the pieces after a bail and the whole document
    /// give the reference tree and warnings for `text`; returns the pieces' tree.
    fn one_thread_pieces_match_the_reference(text: &str) -> Node {
        let reference = build(text, 0, &with(Engine::Reference)).unwrap();
        let pieces = pool(1)
            .install(|| parse_pieces_after_bail(text, &deep_options()))
            .expect("the pieces are read");
        assert!(pieces.root.identical(&reference.root));
        assert_eq!(
            format!("{:?}", pieces.warnings),
            format!("{:?}", reference.warnings)
        );
        // The whole document on one thread takes that path, and agrees.
        let doc = pool(1)
            .install(|| crate::parse_document(text, &deep_options()))
            .unwrap();
        assert!(doc.root.identical(&reference.root));
        pieces.root
    }

    /// Levels of [`deep`]'s nesting: past what the fast parser follows even on a thread of its
    /// own, within [`deep_options`]' limit.
    const DEEP: usize = crate::fast::DEEP_MAX_DEPTH + 4;

    /// Options whose depth limit lets the reference parser read [`deep`]'s nesting, which the
    /// fast parser leaves to it.
    fn deep_options() -> ParseOptions {
        ParseOptions {
            limits: crate::Limits {
                max_depth: DEEP + 10,
                ..crate::Limits::default()
            },
            ..ParseOptions::default()
        }
    }

    /// `scalar` in block sequences nested [`DEEP`] levels deep, as the value of `key` (at
    /// column 4).
    fn deep(key: &str, scalar: &str) -> String {
        format!("    {key}:\n    {}{scalar}\n", "- ".repeat(DEEP))
    }

    /// The scalar inside [`deep`]'s sequences.
    fn innermost(node: &Node) -> &Node {
        (0..DEEP).fold(node, |n, _| &n[0])
    }

    fn with(engine: Engine) -> ParseOptions {
        ParseOptions {
            engine,
            ..deep_options()
        }
    }

    #[test]
    fn scattered_constructs_for_the_reference_parser_keep_the_reference_tree() {
        // One entry in 500 has what the fast parser leaves (nesting deeper than it follows):
        // small pieces read the rest fast and change nothing.
        let mut text = catalogue(20_000);
        for i in (3..20_000).step_by(500) {
            let key = format!("  obj{i:05}:\n");
            let rare = format!("{key}{}", deep("scattered", &format!("plain {i}")));
            text = text.replacen(&key, &rare, 1);
        }
        let root = one_thread_pieces_match_the_reference(&text);
        let scattered = &root["objects"]["obj10003"]["scattered"];
        assert_eq!(innermost(scattered).as_str(), Some("plain 10003"));
    }

    #[test]
    fn one_thread_keeps_the_fast_parser_for_pieces_it_can_read() {
        // One entry in 20 000 nests deeper than the fast parser follows, which it leaves to the
        // reference parser: alone, it sends the whole text there.
        let rare = format!("  obj05000:\n{}", deep("escaped", "a tag"));
        let text = catalogue(20_000).replacen("  obj05000:\n", &rare, 1);
        assert!(text.len() > SPLIT_MIN_BYTES);
        assert!(build(&text, 0, &with(Engine::Fast)).is_err());
        let root = one_thread_pieces_match_the_reference(&text);
        assert_eq!(
            innermost(&root["objects"]["obj05000"]["escaped"]).as_str(),
            Some("a tag")
        );
        // An error anywhere is still the reference parser's, with its location.
        let broken = text.replacen("  obj07000:\n", "  obj07000: [unclosed\n", 1);
        let err = pool(1).install(|| crate::parse_document(&broken, &deep_options()));
        let serial = build(&broken, 0, &with(Engine::Reference)).map(drop);
        assert_eq!(format!("{:?}", err.map(drop)), format!("{serial:?}"));
    }
}
