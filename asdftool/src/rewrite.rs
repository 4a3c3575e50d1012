//! `to-yaml`, `defragment`, `explode`, `implode`: rewrite a file with every array stored one
//! way, keeping the tree, its tags, references and anchors.

use std::path::Path;

use asdf::block::Label;
use asdf::ndarray::{ByteOrder, ChunkedArray, NdArrayMeta, ZarrArray};
use asdf::yaml::Node;
use asdf::{AnyArray, ArrayKind, AsdfFile, AsdfWriter, Storage, StoreOptions, WriteOptions};

use crate::error::{CliError, Result};
use crate::input;

/// Where the rewritten arrays go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Inline in the tree (`to-yaml`).
    Inline,
    /// Internal blocks, compressed with `compression` (`defragment`, `implode`).
    Blocks {
        /// The codec label applied to every array.
        compression: Label,
        /// Codec level.
        level: Option<i32>,
    },
    /// One external ASDF file per array, next to the output (`explode`).
    External,
}

/// Parses a `-c` label and checks this build has the codec.
///
/// ```
/// assert!(asdftool::rewrite::parse_label("zstd").is_ok());
/// assert!(asdftool::rewrite::parse_label("none").unwrap().is_none());
/// assert!(asdftool::rewrite::parse_label("nope").is_err());
/// ```
pub fn parse_label(name: &str) -> Result<Label> {
    let label = Label::from_name(name)
        .ok_or_else(|| CliError::Usage(format!("invalid compression label {name:?}")))?;
    if label.is_none() {
        return Ok(label);
    }
    let reg = asdf::block::CodecRegistry::default();
    if reg.get(label).is_none() {
        return Err(CliError::Usage(format!(
            "unknown compression {name:?}: this build knows none, {}",
            reg.known()
        )));
    }
    Ok(label)
}

/// What a rewrite did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Arrays rewritten.
    pub arrays: usize,
}

fn write_options(file: &AsdfFile) -> WriteOptions {
    let v = file.standard_version();
    let ok = matches!(
        v,
        "1.0.0" | "1.1.0" | "1.2.0" | "1.3.0" | "1.4.0" | "1.5.0" | "1.6.0" | "1.7.0"
    );
    // float16 needs ndarray-1.1.0 (ASDF Standard 1.6.0): such a file (asdf-cxx writes them
    // under older standards) is upgraded rather than refused.
    let upgrade = ok && v < "1.6.0" && has_float16(file.tree());
    if upgrade {
        eprintln!(
            "asdftool: float16 arrays need ASDF Standard 1.6.0: the copy is written as 1.6.0"
        );
    }
    WriteOptions {
        standard_version: if ok && !upgrade {
            v.to_string()
        } else {
            "1.6.0".into()
        },
        ..crate::output::asdf_options()
    }
}

/// Whether an ndarray of the tree declares `datatype: float16`.
fn has_float16(tree: &Node) -> bool {
    asdf::find_array_nodes(tree).iter().any(|(_, kind, node)| {
        *kind == ArrayKind::NdArray
            && node.get("datatype").and_then(Node::as_str) == Some("float16")
    })
}

/// Reads the array of `node` (an ndarray, chunked ndarray or asdf-zarr array, which are all
/// written back as ndarrays), mask aside.
pub fn read_node(file: &AsdfFile, pointer: &str, node: &Node) -> Result<AnyArray> {
    let res = match asdf::array_kind(node) {
        Some(ArrayKind::Chunked) => ChunkedArray::from_node(node).and_then(|c| c.read(file)),
        Some(ArrayKind::Zarr) => ZarrArray::open(node, file).and_then(|z| z.read(file)),
        _ => NdArrayMeta::from_node(node).and_then(|m| m.read(file)),
    };
    res.map_err(|e| CliError::Invalid(format!("array at {pointer:?}: {e}")))
}

/// The byte order `node` declares for its data (little when absent, as the standard says);
/// native for chunked arrays and bare inline lists, which declare none.
fn declared_byteorder(node: &Node) -> ByteOrder {
    match asdf::array_kind(node) {
        Some(ArrayKind::NdArray) => NdArrayMeta::from_node(node)
            .map(|m| m.byteorder)
            .unwrap_or(ByteOrder::NATIVE),
        _ => ByteOrder::NATIVE,
    }
}

/// An inline array written again inline keeps a `byteorder` its source declared (Python asdf
/// writes none for inline data, but other writers do, and a rewrite keeps what was declared),
/// placed after `datatype` as in block-backed ndarrays.
fn keep_inline_byteorder(old: &Node, new: &mut Node) {
    let Some(order) = old.get("byteorder") else {
        return;
    };
    let Some(map) = new.as_map_mut() else {
        return;
    };
    if map.contains_key("byteorder") || !map.contains_key("data") {
        return;
    }
    let entries: Vec<(Node, Node)> = std::mem::take(map).into_iter().collect();
    let mut out = asdf::yaml::Mapping::new();
    let mut placed = false;
    for (k, v) in entries {
        if !placed && k.as_str() == Some("shape") {
            out.insert("byteorder", order.clone());
            placed = true;
        }
        out.insert(k, v);
    }
    if !placed {
        out.insert("byteorder", order.clone());
    }
    *map = out;
}

struct Rewriter<'a> {
    file: &'a AsdfFile,
    writer: AsdfWriter,
    mode: Mode,
    stem: String,
    externals: usize,
    arrays: usize,
    bar: indicatif::ProgressBar,
}

impl Rewriter<'_> {
    fn array(&mut self, pointer: &str, node: &Node, depth: usize) -> Result<Node> {
        let a = read_node(self.file, pointer, node)?;
        let byteorder = declared_byteorder(node);
        let opts = match &self.mode {
            Mode::Inline => StoreOptions {
                byteorder,
                ..StoreOptions::inline()
            },
            Mode::Blocks { compression, level } => StoreOptions {
                compression: *compression,
                level: *level,
                byteorder,
                ..StoreOptions::default()
            },
            Mode::External => {
                let uri = format!("{}{:04}.asdf", self.stem, self.externals);
                self.externals += 1;
                StoreOptions {
                    storage: Storage::External(uri),
                    byteorder,
                    ..StoreOptions::default()
                }
            }
        };
        let mut new = self
            .writer
            .add_any(&a, &opts)
            .map_err(|e| CliError::Unsupported(format!("array at {pointer:?}: {e}")))?;
        self.arrays += 1;
        self.bar.inc(1);
        keep_inline_byteorder(node, &mut new);
        if let Some(tag) = node.tag() {
            if asdf::array_kind(node) == Some(ArrayKind::NdArray) {
                new = new.with_tag(tag);
            }
        }
        if let (Some(mask), Some(map)) = (node.get("mask"), new.as_map().cloned()) {
            if depth > 8 {
                return Err(CliError::Invalid(format!(
                    "masks nested too deeply at {pointer:?}"
                )));
            }
            let m = if asdf::array_kind(mask).is_some() {
                self.array(&format!("{pointer}/mask"), mask, depth + 1)?
            } else {
                mask.clone()
            };
            let mut map = map;
            map.insert("mask", m);
            let tag = new.tag().map(str::to_string);
            new = Node::from(map);
            if let Some(t) = tag {
                new = new.with_tag(t);
            }
        }
        Ok(new)
    }
}

/// Rewrites `input` into `output` with every array stored as `mode` says.
pub fn rewrite(input_path: &Path, output: &Path, mode: Mode) -> Result<Summary> {
    let local = input::localize(input_path)?;
    let file = input::open_asdf(local.path())?;
    let summary = rewrite_file(&file, output, mode);
    input::release(file);
    summary
}

/// [`rewrite`] from an open file.
pub fn rewrite_file(file: &AsdfFile, output: &Path, mode: Mode) -> Result<Summary> {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "array".into());
    let count = file.arrays().len() as u64;
    let mut rw = Rewriter {
        file,
        writer: AsdfWriter::new(),
        mode,
        stem,
        externals: 0,
        arrays: 0,
        bar: crate::progress::bar(count, "rewriting arrays"),
    };
    let tree = crate::tree::map_arrays(file.tree(), &mut |p, n| rw.array(p, n, 0))?;
    rw.bar.finish_and_clear();
    let arrays = rw.arrays;
    rw.writer
        .write_path(output, tree, &write_options(file))
        .map_err(|e| match e {
            asdf::AsdfError::Io { .. } => {
                CliError::io(output, std::io::Error::other(e.to_string()))
            }
            asdf::AsdfError::File { .. } => {
                CliError::io(output, std::io::Error::other(e.to_string()))
            }
            other => CliError::Unsupported(other.to_string()),
        })?;
    Ok(Summary { arrays })
}

/// Writes a new ASDF file holding `array` at `/data`, stored in `byteorder`, and `extra` (a
/// key and its value) beside it.
pub fn write_single(
    array: &AnyArray,
    output: &Path,
    compression: Label,
    level: Option<i32>,
    byteorder: ByteOrder,
    extra: Option<(&str, Node)>,
) -> Result<()> {
    let mut w = AsdfWriter::new();
    let opts = StoreOptions {
        compression,
        level,
        byteorder,
        ..StoreOptions::default()
    };
    let node = w
        .add_any(array, &opts)
        .map_err(|e| CliError::Unsupported(e.to_string()))?;
    let mut tree = asdf::yaml::Mapping::new();
    tree.insert("data", node);
    if let Some((key, value)) = extra {
        tree.insert(key, value);
    }
    w.write_path(output, Node::from(tree), &crate::output::asdf_options())
        .map_err(|e| CliError::io(output, std::io::Error::other(e.to_string())))
}
