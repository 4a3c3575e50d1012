//! `info`: the tree rendered like Python's `asdftool info`, the blocks table, or JSON.

use std::fmt::Write as _;
use std::path::Path;

use asdf::astro::{FromTree, Quantity, Table, Time, Values};
use asdf::block::BlockLayout;
use asdf::ndarray::{ChunkedArray, Mask, NdArrayMeta, Source, ZarrArray};
use asdf::yaml::{Node, Value};
use asdf::{ArrayKind, AsdfFile};
use serde_json::json;

use crate::error::{CliError, Result};
use crate::input;
use crate::sniff::{sniff_path, Format};
use crate::tree::{key_text, scalar_text, type_name, MAX_DEPTH};

/// Options of `info`.
#[derive(Clone, Debug, Default)]
pub struct InfoOptions {
    /// Stop the tree after this many lines.
    pub max_rows: Option<usize>,
    /// Print the block table.
    pub show_blocks: bool,
    /// Print JSON instead of text.
    pub json: bool,
    /// Also say what was fetched from a remote file (requests, bytes).
    pub verbose: bool,
}

/// What `info` shows of an open ASDF file, local ([`AsdfFile`]) or remote
/// (`asdf::remote::RemoteFile`).
pub trait Summary {
    /// The ASDF Standard version.
    fn standard_version(&self) -> &str;
    /// The header comments.
    fn comments(&self) -> &[String];
    /// The tree.
    fn tree(&self) -> &Node;
    /// Non-fatal oddities found while reading.
    fn warnings(&self) -> Vec<String>;
    /// Where the blocks are.
    fn layout(&self) -> &BlockLayout;
}

impl<B: AsRef<[u8]>> Summary for AsdfFile<B> {
    fn standard_version(&self) -> &str {
        AsdfFile::standard_version(self)
    }
    fn comments(&self) -> &[String] {
        AsdfFile::comments(self)
    }
    fn tree(&self) -> &Node {
        AsdfFile::tree(self)
    }
    fn warnings(&self) -> Vec<String> {
        AsdfFile::warnings(self).to_vec()
    }
    fn layout(&self) -> &BlockLayout {
        self.blocks().layout()
    }
}

/// A remote file with every block header read (what `info` shows).
#[cfg(feature = "remote")]
pub struct RemoteSummary<'a> {
    file: &'a asdf::remote::RemoteFile,
    layout: &'a BlockLayout,
}

#[cfg(feature = "remote")]
impl<'a> RemoteSummary<'a> {
    /// Reads every block header of `file`.
    pub fn new(file: &'a asdf::remote::RemoteFile) -> Result<Self> {
        let layout = file
            .layout()
            .map_err(|e| CliError::Invalid(e.to_string()))?;
        Ok(RemoteSummary { file, layout })
    }
}

#[cfg(feature = "remote")]
impl Summary for RemoteSummary<'_> {
    fn standard_version(&self) -> &str {
        self.file.standard_version()
    }
    fn comments(&self) -> &[String] {
        &self.file.header().comments
    }
    fn tree(&self) -> &Node {
        self.file.tree()
    }
    fn warnings(&self) -> Vec<String> {
        // The file's own (tree, tags), then the block scan's, as a local file lists them.
        let mut all = self.file.warnings().to_vec();
        all.extend(self.layout.warnings.iter().cloned());
        all
    }
    fn layout(&self) -> &BlockLayout {
        self.layout
    }
}

/// Runs `info` on `path` (a file, or a URL with the `remote` feature), returning the text to
/// print.
pub fn info(path: &Path, opts: &InfoOptions) -> Result<String> {
    #[cfg(feature = "remote")]
    if let Some(url) = input::url_of(path) {
        let file = match input::open_remote(url) {
            Ok(file) => file,
            // RawArray, .npy, .awkd: described from a local copy.
            Err(_) if !input::remote_is_asdf(url)? => {
                let local = input::localize(path)?;
                return info(local.path(), opts);
            }
            Err(e) => return Err(e),
        };
        let mut text = asdf_info(&RemoteSummary::new(&file)?, opts)?;
        if opts.verbose {
            let t = file.traffic();
            let fetched = format!(
                "fetched {} bytes of {} in {} request(s) from {url}",
                t.bytes,
                file.size(),
                t.requests
            );
            if opts.json {
                eprintln!("{fetched}");
            } else {
                let _ = writeln!(text, "{fetched}");
            }
        }
        return Ok(text);
    }
    match sniff_path(path)? {
        Format::Asdf => {
            let file = input::open_asdf(path)?;
            let text = asdf_info(&file, opts);
            input::release(file);
            text
        }
        Format::RawArray => ra_info(path, opts),
        Format::Npy => npy_info(path, opts),
        fmt @ (Format::Awkd | Format::Npz | Format::AwkwardDir | Format::Parquet) => {
            crate::awk::info(path, fmt, opts.json)
        }
        Format::Fits => fits_info(path, opts),
    }
}

/// `info` of a FITS file holding an ASDF tree: its HDUs, then the tree as for an ASDF file
/// (arrays stored in image extensions show as `external fits:NAME,VER`).
fn fits_info(path: &Path, opts: &InfoOptions) -> Result<String> {
    let f = input::open_fits(path)?;
    let tree = asdf_info(f.asdf(), opts)?;
    if opts.json {
        return Ok(tree);
    }
    let mut text = format!("FITS file with {} HDUs:\n", f.hdus().len());
    for h in f.hdus() {
        let name = h
            .name
            .as_deref()
            .map(|n| format!(" {n},{}", h.version))
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "  [{}] {}{name}: BITPIX {}, shape {:?}{}",
            h.index,
            h.kind,
            h.bitpix,
            h.shape,
            if h.bzero != 0.0 || h.bscale != 1.0 {
                format!(", BSCALE {} BZERO {}", h.bscale, h.bzero)
            } else {
                String::new()
            }
        );
    }
    text.push_str(&tree);
    Ok(text)
}

/// Describes an array node in one line, and as JSON.
pub fn describe_array(file: &dyn Summary, node: &Node) -> (String, serde_json::Value) {
    match asdf::array_kind(node) {
        Some(ArrayKind::Chunked) => match ChunkedArray::from_node(node) {
            Ok(c) => {
                let text = format!(
                    "shape {:?}, {}, chunked ({} chunks)",
                    c.shape,
                    c.datatype,
                    c.chunks.len()
                );
                let j = json!({"kind": "chunked", "shape": c.shape, "datatype": c.datatype.to_string(),
                               "chunks": c.chunks.len()});
                (text, j)
            }
            Err(e) => (
                format!("invalid chunked ndarray: {e}"),
                json!({"error": e.to_string()}),
            ),
        },
        Some(ArrayKind::Zarr) if node.get(".zarray").is_none() => {
            let store = node.get("store");
            let field = |k: &str| store.and_then(|s| s.get(k)).and_then(Node::as_str);
            // Where the chunks are read from: a path, or the URL of an FSStore off this machine.
            let location = asdf::ndarray::external_store_location(node).ok().flatten();
            let path = location.as_deref().or(field("path")).unwrap_or("?");
            let kind = field("type_string").unwrap_or("?");
            let text = format!("zarr (chunks in an external {kind} at {path})");
            (text, json!({"kind": "zarr", "store": kind, "path": path}))
        }
        Some(ArrayKind::Zarr) => match ZarrArray::from_node(node) {
            Ok(z) => {
                let codec = z.compressor.as_deref().unwrap_or("uncompressed");
                let text = format!(
                    "shape {:?}, {}, zarr ({:?} chunks of {:?}, {codec})",
                    z.shape,
                    z.scalar.name(),
                    z.grid(),
                    z.chunks
                );
                let j = json!({"kind": "zarr", "shape": z.shape, "datatype": z.scalar.name(),
                               "chunks": z.chunks, "grid": z.grid(), "compressor": z.compressor});
                (text, j)
            }
            Err(e) => (
                format!("invalid zarr array: {e}"),
                json!({"error": e.to_string()}),
            ),
        },
        _ => match NdArrayMeta::from_node(node) {
            Ok(m) => describe_meta(file, &m),
            Err(e) => (
                format!("invalid ndarray: {e}"),
                json!({"error": e.to_string()}),
            ),
        },
    }
}

fn describe_meta(file: &dyn Summary, m: &NdArrayMeta) -> (String, serde_json::Value) {
    let shape = match (&m.shape, m.streamed) {
        (Some(s), true) => format!(
            "['*'{}]",
            s.iter().map(|d| format!(", {d}")).collect::<String>()
        ),
        (Some(s), false) => format!("{s:?}"),
        (None, _) => "(inferred)".into(),
    };
    let dt = m
        .datatype
        .as_ref()
        .map_or_else(|| "(inferred)".to_string(), |d| d.to_string());
    let (storage, compression) = match &m.source {
        None => ("inline".to_string(), None),
        Some(Source::External(uri)) => (format!("external {uri}"), None),
        Some(Source::Block(i)) => {
            let blocks = &file.layout().blocks;
            let at = if *i < 0 { blocks.len() as i64 + i } else { *i };
            let comp = usize::try_from(at)
                .ok()
                .and_then(|at| blocks.get(at))
                .map(|b| b.header.compression.to_string());
            let s = if m.streamed {
                format!("streamed block {i}")
            } else {
                format!("block {i}")
            };
            (s, comp)
        }
    };
    let mut text = format!("shape {shape}, {dt}");
    if m.source.is_some() && m.datatype.as_ref().is_some_and(|d| d.has_byteorder()) {
        let _ = write!(text, ", {}", m.byteorder.name());
    }
    let _ = write!(text, ", {storage}");
    if let Some(c) = &compression {
        let _ = write!(text, " ({c})");
    }
    if m.offset != 0 || m.strides.is_some() {
        let _ = write!(text, ", view (offset {}", m.offset);
        if let Some(s) = &m.strides {
            let _ = write!(text, ", strides {s:?}");
        }
        text.push(')');
    }
    let mask = match &m.mask {
        None => None,
        Some(Mask::Sentinel(n)) => Some(format!("sentinel {}", scalar_text(n).unwrap_or_default())),
        Some(Mask::Array(_)) => Some("array".to_string()),
    };
    if let Some(mk) = &mask {
        let _ = write!(text, ", masked ({mk})");
    }
    let j = json!({
        "kind": "ndarray",
        "shape": m.shape,
        "streamed": m.streamed,
        "datatype": dt,
        "byteorder": m.byteorder.name(),
        "storage": storage,
        "compression": compression,
        "offset": m.offset,
        "strides": m.strides,
        "mask": mask,
    });
    (text, j)
}

/// The `info --json` document, written as the tree, arrays and blocks are walked (one small
/// value at a time), not built whole first.
struct InfoJson<'a>(&'a dyn Summary);

/// The array list of `info --json`, each array described as it is written.
struct ArraysJson<'a>(&'a dyn Summary);

/// The block list of `info --json`.
struct BlocksJson<'a>(&'a dyn Summary);

impl serde::Serialize for InfoJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let file = self.0;
        let mut m = s.serialize_map(Some(8))?;
        m.serialize_entry("format", "asdf")?;
        m.serialize_entry("asdf_standard", file.standard_version())?;
        m.serialize_entry("comments", file.comments())?;
        m.serialize_entry("tree", &crate::tree::JsonTree(file.tree(), 0))?;
        m.serialize_entry("arrays", &ArraysJson(file))?;
        m.serialize_entry("blocks", &BlocksJson(file))?;
        m.serialize_entry("block_index", &file.layout().index_offset)?;
        m.serialize_entry("warnings", &file.warnings())?;
        m.end()
    }
}

impl serde::Serialize for ArraysJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let file = self.0;
        // The nodes come with the pointers: looking each pointer up again walked the root
        // mapping once per array (quadratic with 10⁵ arrays).
        let arrays = asdf::find_array_nodes(file.tree());
        let mut seq = s.serialize_seq(Some(arrays.len()))?;
        for (p, _, node) in &arrays {
            let (_, mut j) = describe_array(file, node);
            j["pointer"] = json!(p);
            seq.serialize_element(&j)?;
        }
        seq.end()
    }
}

impl serde::Serialize for BlocksJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.0.layout().blocks.iter().map(|b| {
            json!({
                "index": b.index, "offset": b.offset, "data_offset": b.data_offset,
                "flags": b.header.flags, "streamed": b.header.is_streamed(),
                "compression": b.header.compression.to_string(),
                "allocated_size": b.header.allocated_size, "used_size": b.header.used_size,
                "data_size": b.data_size(), "checksum": checksum_hex(&b.header.checksum),
            })
        }))
    }
}

struct Renderer<'a> {
    file: &'a dyn Summary,
    out: String,
    rows: usize,
    max_rows: usize,
    truncated: bool,
}

impl Renderer<'_> {
    fn line(&mut self, text: String) -> bool {
        if self.rows >= self.max_rows {
            self.truncated = true;
            return false;
        }
        self.rows += 1;
        self.out.push_str(&text);
        self.out.push('\n');
        true
    }

    fn node(
        &mut self,
        prefix: &str,
        connector: &str,
        child_prefix: &str,
        name: &str,
        node: &Node,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        let ty = type_name(node);
        let anchor = if node.is_shared() { " &" } else { "" };
        let head = format!("{prefix}{connector}{name}");
        if asdf::array_kind(node).is_some() {
            let (desc, _) = describe_array(self.file, node);
            self.line(format!("{head} ({ty}){anchor}: {desc}"));
            return;
        }
        if self.astro(&head, &format!("{prefix}{child_prefix}"), node, depth) {
            return;
        }
        let text = match scalar_text(node) {
            Some(s) => format!("{head} ({ty}){anchor}: {}", one_line(&s)),
            None => format!("{head} ({ty}){anchor}"),
        };
        if !self.line(text) {
            return;
        }
        let children: Vec<(String, &Node)> = match node.value() {
            Value::Map(m) => m.iter().map(|(k, v)| (key_text(k), v)).collect(),
            Value::Seq(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("[{i}]"), v))
                .collect(),
            _ => Vec::new(),
        };
        let n = children.len();
        let inner = format!("{prefix}{child_prefix}");
        for (i, (k, v)) in children.into_iter().enumerate() {
            let last = i + 1 == n;
            let (c, cp) = if last {
                ("└─", "  ")
            } else {
                ("├─", "│ ")
            };
            self.node(&inner, c, cp, &k, v, depth + 1);
            if self.truncated {
                return;
            }
        }
    }
}

impl Renderer<'_> {
    /// A quantity, time or table in one line each (a table's columns below it, then its
    /// `meta`), as astronomers read them: values (shape and datatype, or the scalar), unit,
    /// format and scale. `false` for any other node, or one that does not parse as its tag says
    /// (shown raw instead).
    /// `head` is the line's start (indent, connector, name), `inner` the indent of children.
    fn astro(&mut self, head: &str, inner: &str, node: &Node, depth: usize) -> bool {
        let tag = node.tag().unwrap_or("");
        if Quantity::accepts(tag) {
            let Ok(q) = Quantity::from_tree(node, "") else {
                return false;
            };
            let values = self.values(node, &q.value);
            self.line(format!("{head} (Quantity): {values}, unit {}", q.unit));
        } else if Time::accepts(tag) {
            let Ok(t) = Time::from_tree(node, "") else {
                return false;
            };
            let mut text = format!("{head} (Time): {}", self.values(node, &t.value));
            for (k, v) in [("format", &t.format), ("scale", &t.scale)] {
                if let Some(v) = v {
                    let _ = write!(text, ", {k} {v}");
                }
            }
            self.line(text);
        } else if Table::accepts(tag) {
            let Ok(t) = Table::from_tree(node, "") else {
                return false;
            };
            self.table(head, inner, node, &t, depth);
        } else {
            return false;
        }
        true
    }

    /// A table's line, its columns', then its `meta` as a subtree.
    fn table(&mut self, head: &str, inner: &str, node: &Node, t: &Table, depth: usize) {
        let kind = if t.qtable { "QTable" } else { "Table" };
        if !self.line(format!("{head} ({kind}): {} columns", t.columns.len())) {
            return;
        }
        let n = t.columns.len() + usize::from(t.meta.is_some());
        for (i, c) in t.columns.iter().enumerate() {
            let c_conn = if i + 1 == n { "└─" } else { "├─" };
            let mut text = format!(
                "{inner}{c_conn}{}: {}",
                c.name,
                self.values(node, &c.values)
            );
            if let Some(u) = &c.unit {
                let _ = write!(text, ", unit {u}");
            }
            if let Some(d) = &c.description {
                let _ = write!(text, " ({})", one_line(d));
            }
            if !self.line(text) {
                return;
            }
        }
        if let Some(meta) = &t.meta {
            self.node(inner, "└─", "  ", "meta", meta, depth + 1);
        }
    }

    /// `values` of the node `within` (pointers relative to it): an array's description or the
    /// scalar.
    fn values(&self, within: &Node, values: &Values) -> String {
        match values {
            Values::Scalar(n) => scalar_text(n).map(|s| one_line(&s)).unwrap_or_default(),
            Values::Array(p) => match within.pointer(p) {
                Some(a) => describe_array(self.file, a).0,
                None => format!("(no array at {p})"),
            },
        }
    }
}

fn one_line(s: &str) -> String {
    let mut t: String = s.chars().take(200).collect();
    if t.len() < s.len() {
        t.push('…');
    }
    t.replace('\n', "\\n")
}

fn checksum_hex(c: &[u8; 16]) -> String {
    c.iter().map(|b| format!("{b:02x}")).collect()
}

/// `info` of an open ASDF file.
pub fn asdf_info(file: &dyn Summary, opts: &InfoOptions) -> Result<String> {
    if opts.json {
        let mut out = Vec::new();
        serde_json::to_writer_pretty(&mut out, &InfoJson(file))
            .map_err(|e| CliError::Unsupported(e.to_string()))?;
        out.push(b'\n');
        return String::from_utf8(out).map_err(|e| CliError::Unsupported(e.to_string()));
    }
    let mut r = Renderer {
        file,
        out: String::new(),
        rows: 0,
        max_rows: opts.max_rows.unwrap_or(usize::MAX),
        truncated: false,
    };
    r.node("", "", "", "root", file.tree(), 0);
    let mut out = r.out;
    if r.truncated {
        out.push_str("Some nodes not shown (use --max-rows to see more).\n");
    }
    for w in file.warnings() {
        let _ = writeln!(out, "warning: {w}");
    }
    if opts.show_blocks {
        let blocks = &file.layout().blocks;
        let _ = writeln!(
            out,
            "\n{} block(s){}",
            blocks.len(),
            match file.layout().index_offset {
                Some(o) => format!(", block index at byte {o}"),
                None => ", no block index".to_string(),
            }
        );
        if !blocks.is_empty() {
            let _ = writeln!(
                out,
                "{:>5} {:>12} {:>21} {:>5} {:>14} {:>14} {:>14}  checksum",
                "block", "offset", "flags", "label", "allocated", "used", "data_size"
            );
        }
        for b in blocks {
            let flags = if b.header.is_streamed() {
                format!("{:#010x}", b.header.flags) + " (streamed)"
            } else {
                format!("{:#010x}", b.header.flags)
            };
            let _ = writeln!(
                out,
                "{:>5} {:>12} {:>21} {:>5} {:>14} {:>14} {:>14}  {}",
                b.index,
                b.offset,
                flags,
                b.header.compression.to_string(),
                b.header.allocated_size,
                b.header.used_size,
                b.data_size(),
                checksum_hex(&b.header.checksum)
            );
        }
    }
    Ok(out)
}

fn ra_info(path: &Path, opts: &InfoOptions) -> Result<String> {
    let ra = input::open_ra(path)?;
    let h = ra.header();
    let info = ra.info();
    let asdf_type = rawarray::asdf::kind_to_asdf(ra.kind(), ra.data_byte_order(), ra.dims(), None)
        .ok()
        .map(|m| (m.array.datatype.to_string(), m.array.shape, m.exact));
    let order = ra.data_byte_order().name();
    if opts.json {
        let j = json!({
            "format": "rawarray",
            "flags": h.flags, "eltype": h.eltype, "elbyte": h.elbyte, "size": h.size,
            "ndims": h.dims.len(), "dims": h.dims,
            "kind": ra.kind().to_string(), "byteorder": order,
            "encoding": format!("{:?}", info.encoding), "layout": format!("{:?}", info.layout),
            "trailer_bytes": ra.trailer().len(),
            "asdf_datatype": asdf_type.as_ref().map(|t| t.0.clone()),
            "asdf_shape": asdf_type.as_ref().map(|t| t.1.clone()),
            "warnings": ra.warnings().iter().map(|w| format!("{w:?}")).collect::<Vec<_>>(),
        });
        return Ok(serde_json::to_string_pretty(&j).unwrap_or_default() + "\n");
    }
    let mut out = String::new();
    let _ = writeln!(out, "RawArray file {}", path.display());
    let _ = writeln!(out, "  layout:   {:?}", info.layout);
    let _ = writeln!(out, "  flags:    {:#x}", h.flags);
    let _ = writeln!(out, "  eltype:   {}", h.eltype);
    let _ = writeln!(out, "  elbyte:   {}", h.elbyte);
    let _ = writeln!(out, "  size:     {}", h.size);
    let _ = writeln!(out, "  ndims:    {}", h.dims.len());
    let _ = writeln!(out, "  dims:     {:?} (first fastest)", h.dims);
    let _ = writeln!(out, "  element:  {} ({order}-endian)", ra.kind());
    let _ = writeln!(out, "  encoding: {:?}", info.encoding);
    if let Some((dt, shape, exact)) = asdf_type {
        let _ = writeln!(
            out,
            "  as ASDF:  {dt}, shape {shape:?}{}",
            if exact {
                ""
            } else {
                " (raw bytes: ASDF has no such type)"
            }
        );
    }
    if !ra.trailer().is_empty() {
        let _ = writeln!(out, "  trailer:  {} bytes", ra.trailer().len());
    }
    for w in ra.warnings() {
        let _ = writeln!(out, "  warning:  {w:?}");
    }
    Ok(out)
}

fn npy_info(path: &Path, opts: &InfoOptions) -> Result<String> {
    let bytes = input::read_bytes(path)?;
    let h = crate::npy::parse_header(&bytes).map_err(|e| CliError::invalid(path, e))?;
    let dt = h.datatype().ok();
    if opts.json {
        let j = json!({
            "format": "npy", "version": format!("{}.{}", h.version.0, h.version.1),
            "descr": h.descr, "fortran_order": h.fortran_order, "shape": h.shape,
            "data_offset": h.data_offset,
            "asdf_datatype": dt.as_ref().map(|d| d.0.to_string()),
        });
        return Ok(serde_json::to_string_pretty(&j).unwrap_or_default() + "\n");
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "NumPy file {} (format {}.{})",
        path.display(),
        h.version.0,
        h.version.1
    );
    let _ = writeln!(out, "  descr:         {}", h.descr);
    let _ = writeln!(out, "  fortran_order: {}", h.fortran_order);
    let _ = writeln!(out, "  shape:         {:?}", h.shape);
    let _ = writeln!(out, "  data offset:   {}", h.data_offset);
    if let Some((d, o)) = dt {
        let _ = writeln!(out, "  as ASDF:       {d}, {}", o.name());
    }
    Ok(out)
}
