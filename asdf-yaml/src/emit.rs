//! Writing a [`Node`] tree as an ASDF YAML 1.1 document that PyYAML and Python asdf read back to
//! the same values and tags.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::node::{Node, Value};
use crate::pointer::escape;
use crate::resolve::{resolve_plain, Implicit, TIMESTAMP_TAG, VALUE_TAG, YAML_TAG_PREFIX};

/// The tag prefix bound to the `!` handle in every ASDF file.
pub const ASDF_TAG_PREFIX: &str = "tag:stsci.edu:asdf/";

/// Options of the emitter.
///
/// ```
/// use asdf_yaml::{emit_with, EmitOptions, Node};
/// let tree = Node::mapping([("shape", Node::sequence([1i64, 2, 3]))]);
/// let mut out = Vec::new();
/// emit_with(&tree, &EmitOptions::default(), &mut out).unwrap();
/// assert_eq!(String::from_utf8(out).unwrap(),
///            "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n---\nshape: [1, 2, 3]\n...\n");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmitOptions {
    /// Soft line width for flow sequences (default 100); longer ones wrap onto indented lines.
    pub width: usize,
    /// Sequences of at most this many plain scalars are written in flow style `[a, b]`
    /// (default `usize::MAX`: every sequence of untagged scalars, like PyYAML's leaf
    /// collections; set 0 for block style everywhere).
    pub flow_max_items: usize,
    /// Maximum nesting the emitter follows (default 520, above the parser's 512); deeper trees are an error.
    pub max_depth: usize,
}

impl Default for EmitOptions {
    fn default() -> EmitOptions {
        EmitOptions {
            width: 100,
            flow_max_items: usize::MAX,
            max_depth: 520,
        }
    }
}

/// Emits a full document (`%YAML 1.1`, `%TAG ! tag:stsci.edu:asdf/`, `--- <root tag>`, the tree
/// and `...`) into a `String`.
///
/// ```
/// use asdf_yaml::{emit_to_string, parse_str, Node};
/// let tree = Node::mapping([
///     ("yes", Node::from("yes")),
///     ("big", Node::from(u64::MAX)),
///     ("x", Node::from(1e20)),
/// ]).with_tag("tag:stsci.edu:asdf/core/asdf-1.1.0");
/// let text = emit_to_string(&tree).unwrap();
/// assert!(text.starts_with("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n"));
/// assert!(text.contains("\"yes\": \"yes\"\n") && text.contains("x: 1.0e+20\n"));
/// assert_eq!(parse_str(&text).unwrap(), tree);
/// ```
pub fn emit_to_string(root: &Node) -> Result<String> {
    emit_string_with(root, &EmitOptions::default())
}

/// Emits a full document into `out` with default options.
pub fn emit<W: std::io::Write>(root: &Node, out: W) -> Result<()> {
    emit_with(root, &EmitOptions::default(), out)
}

/// Emits a full document into `out`, streaming: the text is handed to `out` in pieces of about
/// [`STREAM_PIECE`] bytes as it is produced, so a tree holding large [`Value::Packed`] arrays is
/// written without its whole text in memory.
pub fn emit_with<W: std::io::Write>(root: &Node, options: &EmitOptions, mut out: W) -> Result<()> {
    let mut e = Emitter::new(root, options, Some(&mut out));
    e.document(root)?;
    e.flush()
}

/// Emits a full document into a `String` with the given options.
pub fn emit_string_with(root: &Node, options: &EmitOptions) -> Result<String> {
    let mut e = Emitter::new(root, options, None);
    e.document(root)?;
    Ok(e.out)
}

/// The size of the pieces [`emit_with`] hands to its writer.
pub const STREAM_PIECE: usize = 1 << 16;

struct Emitter<'o> {
    out: String,
    /// Where [`emit_with`] streams the text (`None`: all of it stays in `out`).
    sink: Option<&'o mut dyn std::io::Write>,
    options: &'o EmitOptions,
    /// How often each shared subtree occurs.
    uses: HashMap<*const Node, usize>,
    /// Anchor names of shared subtrees already written.
    names: HashMap<*const Node, String>,
}

fn count_shared(node: &Node, uses: &mut HashMap<*const Node, usize>, depth: usize, max: usize) {
    if depth > max {
        return;
    }
    if let Value::Shared(arc) = node.raw_value() {
        let n = uses.entry(Arc::as_ptr(arc)).or_insert(0);
        *n += 1;
        if *n > 1 {
            return;
        }
    }
    match node.value() {
        Value::Seq(items) => items
            .iter()
            .for_each(|c| count_shared(c, uses, depth + 1, max)),
        Value::Map(m) => {
            for (k, v) in m.iter() {
                count_shared(k, uses, depth + 1, max);
                count_shared(v, uses, depth + 1, max);
            }
        }
        _ => {}
    }
}

/// How a node's content is written.
enum Shape<'a> {
    Alias(String),
    Scalar(String),
    FlowSeq(&'a [Node]),
    Packed(&'a dyn crate::PackedItems),
    Empty(&'static str),
    BlockSeq(&'a [Node]),
    BlockMap(&'a crate::node::Mapping),
}

impl<'o> Emitter<'o> {
    fn new(
        root: &Node,
        options: &'o EmitOptions,
        sink: Option<&'o mut dyn std::io::Write>,
    ) -> Emitter<'o> {
        let mut uses = HashMap::new();
        count_shared(root, &mut uses, 0, options.max_depth);
        Emitter {
            out: String::new(),
            sink,
            options,
            uses,
            names: HashMap::new(),
        }
    }

    fn document(&mut self, root: &Node) -> Result<()> {
        self.out
            .push_str("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n---");
        let mut path = String::new();
        self.value(root, 0, false, &mut path, 0)?;
        self.out.push_str("...\n");
        Ok(())
    }

    /// Hands the text so far to the sink, if there is one.
    fn flush(&mut self) -> Result<()> {
        if let Some(sink) = self.sink.as_mut() {
            sink.write_all(self.out.as_bytes())?;
            self.out.clear();
        }
        Ok(())
    }

    /// [`flush`](Self::flush)es once a piece is full, at the start of a line (the flow writer
    /// measures its column from the last line break in `out`).
    fn flush_at_line_start(&mut self) -> Result<()> {
        if self.sink.is_some() && self.out.len() >= STREAM_PIECE && self.out.ends_with('\n') {
            self.flush()?;
        }
        Ok(())
    }

    fn err(path: &str, message: impl Into<String>) -> Error {
        Error::Emit {
            path: if path.is_empty() {
                "/".into()
            } else {
                path.into()
            },
            message: message.into(),
        }
    }

    fn check_depth(&self, path: &str, depth: usize) -> Result<()> {
        if depth > self.options.max_depth {
            return Err(Self::err(
                path,
                format!("nesting deeper than {} levels", self.options.max_depth),
            ));
        }
        Ok(())
    }

    /// Properties (`&anchor !tag`) and shape of a node; registers anchors.
    fn classify<'a>(&mut self, node: &'a Node, path: &str) -> Result<(String, Shape<'a>)> {
        let mut props = String::new();
        if let Value::Shared(arc) = node.raw_value() {
            let ptr = Arc::as_ptr(arc);
            if let Some(name) = self.names.get(&ptr) {
                return Ok((String::new(), Shape::Alias(name.clone())));
            }
            if self.uses.get(&ptr).copied().unwrap_or(0) > 1 {
                let name = format!("id{:03}", self.names.len() + 1);
                props.push('&');
                props.push_str(&name);
                self.names.insert(ptr, name);
            }
        }
        let shape = match node.value() {
            Value::Seq(items) if items.is_empty() => Shape::Empty("[]"),
            Value::Map(m) if m.is_empty() => Shape::Empty("{}"),
            Value::Seq(items) => {
                if items.len() <= self.options.flow_max_items
                    && items.iter().all(|n| self.flowable(n))
                {
                    Shape::FlowSeq(items)
                } else {
                    Shape::BlockSeq(items)
                }
            }
            Value::Map(m) => Shape::BlockMap(m),
            Value::Packed(p) => Shape::Packed(&**p),
            _ => {
                let (tag_written, text) = scalar(node, false, path)?;
                if let Some(t) = tag_written {
                    push_prop(&mut props, &t);
                }
                return Ok((props, Shape::Scalar(text)));
            }
        };
        if let Some(t) = node.tag() {
            push_prop(&mut props, &tag_text(t));
        }
        Ok((props, shape))
    }

    /// Writes a node whose key/dash/`---` is already on the current line. `indent` is the
    /// indentation of block children; `compact` allows starting a block collection on the same
    /// line (after `- `).
    fn value(
        &mut self,
        node: &Node,
        indent: usize,
        compact: bool,
        path: &mut String,
        depth: usize,
    ) -> Result<()> {
        self.check_depth(path, depth)?;
        check_tag(node.tag(), path)?;
        let (props, shape) = self.classify(node, path)?;
        if !props.is_empty() {
            self.out.push(' ');
            self.out.push_str(&props);
        }
        match shape {
            Shape::Alias(name) => {
                self.out.push_str(" *");
                self.out.push_str(&name);
                self.out.push('\n');
            }
            Shape::Scalar(text) => {
                self.out.push(' ');
                self.out.push_str(&text);
                self.out.push('\n');
            }
            Shape::Empty(text) => {
                self.out.push(' ');
                self.out.push_str(text);
                self.out.push('\n');
            }
            Shape::FlowSeq(items) => {
                self.out.push(' ');
                self.flow_seq(items.len(), |i| Cow::Borrowed(&items[i]), indent, path)?;
                self.out.push('\n');
            }
            Shape::Packed(p) => {
                let inline = compact && props.is_empty();
                self.packed(p, p.shape(), 0, indent, inline, path, depth)?;
            }
            Shape::BlockSeq(items) => {
                let inline = compact && props.is_empty();
                self.block_seq(items.len(), inline, indent, path, |e, i, path| {
                    e.value(&items[i], indent + 2, true, path, depth + 1)
                })?;
            }
            Shape::BlockMap(m) => {
                let inline = compact && props.is_empty();
                self.block_map(m, inline, indent, path, depth)?;
            }
        }
        Ok(())
    }

    /// Writes `count` block sequence items (`- ` each, the first on the current line when
    /// `inline`), each by `item`, which gets the item's index and its path.
    fn block_seq(
        &mut self,
        count: usize,
        inline: bool,
        indent: usize,
        path: &mut String,
        mut item: impl FnMut(&mut Self, usize, &mut String) -> Result<()>,
    ) -> Result<()> {
        self.out.push(if inline { ' ' } else { '\n' });
        for i in 0..count {
            if !(inline && i == 0) {
                push_indent(&mut self.out, indent);
            }
            self.out.push('-');
            let len = path.len();
            let _ = write!(path, "/{i}");
            item(self, i, path)?;
            path.truncate(len);
            self.flush_at_line_start()?;
        }
        Ok(())
    }

    /// Writes the entries of a block mapping (the first on the current line when `inline`).
    fn block_map(
        &mut self,
        m: &crate::node::Mapping,
        inline: bool,
        indent: usize,
        path: &mut String,
        depth: usize,
    ) -> Result<()> {
        self.out.push(if inline { ' ' } else { '\n' });
        for (i, (k, v)) in m.iter().enumerate() {
            if !(inline && i == 0) {
                push_indent(&mut self.out, indent);
            }
            let len = path.len();
            path.push('/');
            path.push_str(&escape(&key_path_text(k)));
            self.key(k, indent, path)?;
            self.value(v, indent + 2, false, path, depth + 1)?;
            path.truncate(len);
            self.flush_at_line_start()?;
        }
        Ok(())
    }

    fn key(&mut self, key: &Node, indent: usize, path: &str) -> Result<()> {
        if matches!(key.value(), Value::Seq(_) | Value::Map(_)) {
            return Err(Self::err(path, "mapping keys must be scalars"));
        }
        let mut text = String::new();
        if let Value::Shared(arc) = key.raw_value() {
            let ptr = Arc::as_ptr(arc);
            if let Some(name) = self.names.get(&ptr) {
                // An alias as a key needs a space before the colon.
                let _ = write!(self.out, "*{name} :");
                return Ok(());
            }
            if self.uses.get(&ptr).copied().unwrap_or(0) > 1 {
                let name = format!("id{:03}", self.names.len() + 1);
                let _ = write!(text, "&{name} ");
                self.names.insert(ptr, name);
            }
        }
        let (tag, repr) = scalar(key, false, path)?;
        if let Some(t) = tag {
            text.push_str(&t);
            text.push(' ');
        }
        text.push_str(&repr);
        if text.chars().count() > 1000 {
            // Implicit keys are limited to 1024 characters: use an explicit key.
            self.out.push_str("? ");
            self.out.push_str(&text);
            self.out.push('\n');
            push_indent(&mut self.out, indent);
            self.out.push(':');
        } else {
            self.out.push_str(&text);
            self.out.push(':');
        }
        Ok(())
    }

    /// Whether an item can sit in a flow sequence: a scalar that needs no anchor (unshared, or
    /// shared but used only once, which is written without one). Deciding this the same way
    /// before and after a round trip keeps the output stable.
    fn flowable(&self, n: &Node) -> bool {
        if matches!(n.value(), Value::Seq(_) | Value::Map(_) | Value::Packed(_)) {
            return false;
        }
        match n.shared() {
            Some(arc) => self.uses.get(&Arc::as_ptr(arc)).copied().unwrap_or(0) <= 1,
            None => true,
        }
    }

    /// Writes the level `dims` of the packed sequence `p` from its item `base` on, exactly as
    /// [`value`](Self::value) writes the nested sequences of scalar nodes it stands for (after
    /// the properties; `inline` as `value` decides it for a block sequence).
    #[allow(clippy::too_many_arguments)]
    fn packed(
        &mut self,
        p: &dyn crate::PackedItems,
        dims: &[usize],
        base: usize,
        indent: usize,
        inline: bool,
        path: &mut String,
        depth: usize,
    ) -> Result<()> {
        self.check_depth(path, depth)?;
        let Some((&n, rest)) = dims.split_first() else {
            return Err(Self::err(path, "a packed sequence has no shape"));
        };
        if n == 0 {
            self.out.push_str(" []\n");
            return Ok(());
        }
        if rest.is_empty() && n <= self.options.flow_max_items {
            self.out.push(' ');
            self.flow_seq(n, |i| Cow::Owned(p.item(base + i)), indent, path)?;
            self.out.push('\n');
            return Ok(());
        }
        let stride: usize = rest.iter().product();
        self.block_seq(n, inline, indent, path, |e, i, path| {
            let at = base + i * stride;
            if rest.is_empty() {
                e.value(&p.item(at), indent + 2, true, path, depth + 1)
            } else {
                e.packed(p, rest, at, indent + 2, true, path, depth + 1)
            }
        })
    }

    fn flow_seq<'n>(
        &mut self,
        count: usize,
        item: impl Fn(usize) -> Cow<'n, Node>,
        indent: usize,
        path: &str,
    ) -> Result<()> {
        let mut col = self.out.len() - self.out.rfind('\n').map_or(0, |i| i + 1);
        self.out.push('[');
        col += 1;
        // One buffer for every item (an inline array may have hundreds of millions).
        let mut piece = String::new();
        for i in 0..count {
            piece.clear();
            let node = item(i);
            if let (None, Value::Int(v)) = (node.tag(), node.value()) {
                // The common case, written without the allocations of `scalar`.
                let _ = write!(piece, "{v}");
            } else {
                let (tag, text) = scalar(&node, true, path)?;
                if let Some(t) = tag {
                    piece.push_str(&t);
                    piece.push(' ');
                }
                piece.push_str(&text);
            }
            if i > 0 {
                self.out.push(',');
                col += 1;
                if col + 1 + piece.len() > self.options.width {
                    self.out.push('\n');
                    self.flush_at_line_start()?;
                    push_indent(&mut self.out, indent);
                    col = indent;
                } else {
                    self.out.push(' ');
                    col += 1;
                }
            }
            col += piece.len();
            self.out.push_str(&piece);
        }
        self.out.push(']');
        Ok(())
    }
}

fn push_indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

fn push_prop(props: &mut String, p: &str) {
    if !props.is_empty() {
        props.push(' ');
    }
    props.push_str(p);
}

fn key_path_text(k: &Node) -> String {
    match k.value() {
        Value::Str(s) => s.to_string(),
        other => format!("{other:?}"),
    }
}

/// Tags must be ASCII (YAML URI characters); a non-ASCII tag is an emit error.
fn check_tag(tag: Option<&str>, path: &str) -> Result<()> {
    match tag {
        Some(t) if !t.is_ascii() => Err(Emitter::err(
            path,
            format!("tag {t:?} is not ASCII; percent-encode it (YAML tags are URIs)"),
        )),
        _ => Ok(()),
    }
}

/// The written form of a tag: `!suffix` for the ASDF prefix, `!!suffix` for YAML core tags,
/// `!<uri>` otherwise (characters outside the URI set percent-encoded).
pub fn tag_text(tag: &str) -> String {
    if let Some(s) = tag.strip_prefix(ASDF_TAG_PREFIX) {
        if shorthand_ok(s) {
            return format!("!{s}");
        }
    }
    if let Some(s) = tag.strip_prefix(YAML_TAG_PREFIX) {
        if shorthand_ok(s) {
            return format!("!!{s}");
        }
    }
    let mut out = String::from("!<");
    for c in tag.chars() {
        if c.is_ascii_alphanumeric() || "-;/?:@&=+$,_.!~*'()[]#".contains(c) {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out.push('>');
    out
}

fn shorthand_ok(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-;/?:@&=+$_.~*'()".contains(c))
}

/// A scalar's written form: the tag to write (if any) and the text.
fn scalar(node: &Node, flow: bool, path: &str) -> Result<(Option<String>, String)> {
    let tag = node.tag();
    check_tag(tag, path)?;
    let text = match node.value() {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(s) => canonical_bigint(s)
            .ok_or_else(|| Emitter::err(path, format!("BigInt {s:?} is not a decimal integer")))?,
        Value::Float(f) => float_text(*f),
        Value::Str(s) => return Ok(string_scalar(s, tag, flow)),
        Value::Seq(_) | Value::Map(_) | Value::Shared(_) | Value::Packed(_) => {
            return Err(Emitter::err(path, "expected a scalar"))
        }
    };
    Ok((tag.map(tag_text), text))
}

fn string_scalar(s: &str, tag: Option<&str>, flow: bool) -> (Option<String>, String) {
    match tag {
        None => {
            let text = if plain_syntax_ok(s, flow) && resolve_plain(s) == Implicit::Str {
                s.to_string()
            } else {
                quote(s)
            };
            (None, text)
        }
        Some(TIMESTAMP_TAG)
            if plain_syntax_ok(s, flow) && resolve_plain(s) == Implicit::Timestamp =>
        {
            (None, s.to_string())
        }
        Some(VALUE_TAG) if s == "=" => (None, s.to_string()),
        Some(t) => {
            let text = if plain_syntax_ok(s, flow) {
                s.to_string()
            } else {
                quote(s)
            };
            (Some(tag_text(t)), text)
        }
    }
}

fn canonical_bigint(s: &str) -> Option<String> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let t = digits.trim_start_matches('0');
    let t = if t.is_empty() { "0" } else { t };
    Some(if neg && t != "0" {
        format!("-{t}")
    } else {
        t.to_string()
    })
}

/// A float spelled so that YAML 1.1 reads it back as the same float: `.nan`, `.inf`, `-.inf`,
/// shortest round-trip digits with a `.` and, for exponents, an explicit sign (`1.0e+20`).
///
/// ```
/// use asdf_yaml::emit::float_text;
/// assert_eq!(float_text(1e20), "1.0e+20");
/// assert_eq!(float_text(-0.0), "-0.0");
/// assert_eq!(float_text(2.5e-7), "2.5e-7");
/// assert_eq!(float_text(f64::NEG_INFINITY), "-.inf");
/// assert_eq!(float_text(3.0), "3.0");
/// ```
pub fn float_text(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    let s = format!("{f:?}");
    match s.split_once('e') {
        None => {
            if s.contains('.') {
                s
            } else {
                format!("{s}.0")
            }
        }
        Some((mant, exp)) => {
            let mant = if mant.contains('.') {
                mant.to_string()
            } else {
                format!("{mant}.0")
            };
            let exp = if exp.starts_with('-') {
                exp.to_string()
            } else {
                format!("+{exp}")
            };
            format!("{mant}e{exp}")
        }
    }
}

fn printable_plain(c: char) -> bool {
    match c {
        ' '..='~' => true,
        '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..='\u{10ffff}' => {
            !matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
        }
        _ => false,
    }
}

/// Whether `s` can be written as a plain scalar without changing its characters (types are
/// checked separately).
fn plain_syntax_ok(s: &str, flow: bool) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if s.starts_with([' ', '\t'])
        || s.ends_with([' ', '\t'])
        || s.ends_with(':')
        || s.starts_with("---")
        || s.starts_with("...")
    {
        return false;
    }
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        let second = s[first.len_utf8()..].chars().next();
        let ok_dash = first == '-' && second.is_some_and(|c| c.is_ascii_alphanumeric());
        if !ok_dash {
            return false;
        }
    }
    if s.contains(": ") || s.contains(" #") || s.contains(":\t") {
        return false;
    }
    if flow && s.contains([',', '[', ']', '{', '}', ':']) {
        return false;
    }
    // In a flow collection the scalar is followed by `,` or `]`: a last word that is a lone `-`
    // would read as `-` before a flow indicator, which the parser refuses (found by fuzzing).
    if flow && (s == "-" || s.ends_with(" -") || s.ends_with("\t-")) {
        return false;
    }
    s.chars().all(printable_plain)
}

/// A double-quoted scalar; every control and non-printable character escaped.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if (c as u32) < 0x20 || ('\u{7f}'..='\u{9f}').contains(&c) => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            '\u{feff}' | '\u{fffe}' | '\u{ffff}' => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
