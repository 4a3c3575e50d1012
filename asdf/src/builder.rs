//! Building a file from Rust values: arrays with per-array storage options, then the tree.

use std::io::{Seek, Write};
use std::path::Path;

use asdf_block::{encode_block, BlockWriter, Label};
use asdf_ndarray::{AnyArray, ArrayWriter, Element, StoreOptions};
use asdf_yaml::{Mapping, Node, Value};
use ndarray::{ArrayBase, Data, Dimension};

use crate::error::{AsdfError, Result};
use crate::write::{atomic_write_inner, WriteOptions};

/// The name this library writes in `asdf_library`. Deliberately not `asdf` (Python's): readers
/// key checksum conventions on `asdf_library.name == "asdf"` and its version.
pub const LIBRARY_NAME: &str = "asdf-rust";

const TAG: &str = "tag:stsci.edu:asdf/core/";

/// Collects the arrays of a file while the caller builds its tree, then writes both.
///
/// ```
/// use asdf::{AsdfFile, AsdfWriter, StoreOptions};
/// use asdf::yaml::Node;
/// let image = ndarray::Array2::<f32>::from_shape_fn((64, 32), |(i, j)| (i * j) as f32);
/// let mut w = AsdfWriter::new();
/// let sci = w.add(&image, &StoreOptions::compressed("lz4").unwrap()).unwrap();
/// let err = w.add(&image.t(), &StoreOptions::default()).unwrap(); // Fortran order is fine
/// let tree = Node::mapping([("sci", sci), ("err", err), ("exposure", Node::from(30.0))]);
/// let bytes = w.to_bytes(tree, &Default::default()).unwrap();
///
/// let f = AsdfFile::from_bytes(bytes, &Default::default()).unwrap();
/// assert_eq!(f.array::<f32>("/sci").unwrap(), image.clone().into_dyn());
/// assert_eq!(f.array::<f32>("/err").unwrap(), image.t().into_dyn());
/// assert_eq!(f.pointer("/asdf_library/name").unwrap().as_str(), Some("asdf-rust"));
/// ```
#[derive(Debug, Default)]
pub struct AsdfWriter {
    pub(crate) arrays: ArrayWriter,
    pub(crate) stream: Option<StreamSpec>,
}

impl AsdfWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores an array (any layout: views, Fortran order, negative strides) and returns the
    /// ndarray node to place in the tree.
    pub fn add<A: Element, S: Data<Elem = A>, D: Dimension>(
        &mut self,
        a: &ArrayBase<S, D>,
        options: &StoreOptions,
    ) -> Result<Node> {
        self.arrays
            .add(a, options)
            .map_err(|e| nd("adding an array", e))
    }

    /// Stores `view` as a view of `base`, sharing `base`'s block through `offset`/`strides`.
    pub fn add_view<A, S, S2, D, D2>(
        &mut self,
        base: &ArrayBase<S, D>,
        view: &ArrayBase<S2, D2>,
        options: &StoreOptions,
    ) -> Result<Node>
    where
        A: Element,
        S: Data<Elem = A>,
        S2: Data<Elem = A>,
        D: Dimension,
        D2: Dimension,
    {
        self.arrays
            .add_view(base, view, options)
            .map_err(|e| nd("adding a view", e))
    }

    /// Stores a big array as a chunked ndarray (each chunk its own block, compressed and
    /// decompressed in parallel, readable alone). Only ASDF.jl and this workspace read the tag.
    pub fn add_chunked<A: Element, S: Data<Elem = A>, D: Dimension>(
        &mut self,
        a: &ArrayBase<S, D>,
        chunk_shape: Option<&[usize]>,
        options: &StoreOptions,
    ) -> Result<Node> {
        self.arrays
            .add_chunked(a, chunk_shape, options)
            .map_err(|e| nd("adding a chunked array", e))
    }

    /// Stores an array of any datatype (strings and records included).
    pub fn add_any(&mut self, a: &AnyArray, options: &StoreOptions) -> Result<Node> {
        self.arrays
            .add_any(a, options)
            .map_err(|e| nd("adding an array", e))
    }

    /// The underlying [`ArrayWriter`], for masked, string and record arrays.
    pub fn arrays_mut(&mut self) -> &mut ArrayWriter {
        &mut self.arrays
    }

    /// Writes the file to `out`. External arrays need [`write_path`](Self::write_path).
    pub fn write_to<W: Write>(self, out: W, tree: Node, options: &WriteOptions) -> Result<W> {
        let tree = self.tree_for_output(tree, options)?;
        write_with_blocks(out, &tree, options, |w| self.arrays.write_blocks(w))
    }

    /// [`write_to`](Self::write_to) an output that can seek (a file, a `Cursor`): a large
    /// block of a codec that streams (`zstd`) is hashed and written while it is compressed,
    /// instead of after. [`write_path`](Self::write_path) writes so too.
    ///
    /// ```
    /// use asdf::{AsdfFile, AsdfWriter, StoreOptions};
    /// let a = ndarray::Array1::from_shape_fn(1 << 20, |i| (i / 7) as f64);
    /// let mut w = AsdfWriter::new();
    /// let node = w.add(&a, &StoreOptions::compressed("zstd").unwrap()).unwrap();
    /// let tree = asdf::yaml::Node::mapping([("a", node)]);
    /// let out = w.write_to_seekable(std::io::Cursor::new(Vec::new()), tree, &Default::default()).unwrap();
    /// let f = AsdfFile::from_bytes(out.into_inner(), &Default::default()).unwrap();
    /// assert_eq!(f.array::<f64>("/a").unwrap(), a.into_dyn());
    /// ```
    pub fn write_to_seekable<W: Write + Seek>(
        self,
        out: W,
        tree: Node,
        options: &WriteOptions,
    ) -> Result<W> {
        let tree = self.tree_for_output(tree, options)?;
        write_with_blocks(out, &tree, options, |w| {
            self.arrays.write_blocks_streaming(w)
        })
    }

    /// `tree` completed for writing to an output (not a path: no streamed or external arrays).
    fn tree_for_output(&self, tree: Node, options: &WriteOptions) -> Result<Node> {
        self.no_stream()?;
        if let Some((uri, _)) = self.arrays.externals().first() {
            return Err(AsdfError::External {
                uri: uri.clone(),
                reason: "external arrays can only be written next to a file path (write_path)"
                    .into(),
            });
        }
        finish_tree(tree, &self.labels(), options)
    }

    /// Writes the file into memory.
    pub fn to_bytes(self, tree: Node, options: &WriteOptions) -> Result<Vec<u8>> {
        self.write_to(Vec::new(), tree, options)
    }

    /// Writes the file at `path` crash-safely (temporary file, fsync, rename), and each external
    /// array as its own one-block ASDF file next to it.
    pub fn write_path(
        self,
        path: impl AsRef<Path>,
        tree: Node,
        options: &WriteOptions,
    ) -> Result<()> {
        let path = path.as_ref();
        write_externals(path, self.arrays.externals(), options)?;
        let tree = finish_tree(tree, &self.labels(), options)?;
        atomic_write_inner(path, options.durability, |w| {
            // A file can be seeked: large zstd blocks are written while they are compressed.
            write_with_blocks(w, &tree, options, |w| self.arrays.write_blocks_streaming(w))
                .map(drop)
        })?;
        Ok(())
    }

    fn no_stream(&self) -> Result<()> {
        if self.stream.is_some() {
            return Err(AsdfError::InvalidTree(
                "this writer has a streamed array: use write_path_streaming".into(),
            ));
        }
        Ok(())
    }

    pub(crate) fn labels(&self) -> Vec<Label> {
        let mut l: Vec<Label> = self.arrays.blocks().iter().map(|b| b.compression).collect();
        l.extend(self.arrays.externals().iter().map(|(_, b)| b.compression));
        l.sort();
        l.dedup();
        l
    }
}

/// Writes each external block as the only block of its own ASDF file next to `path`, all
/// committed together ([`array_core::AtomicBatch`]: one filesystem sync for all of them, not two
/// per file, which made exploding 10⁵ arrays take minutes).
pub(crate) fn write_externals(
    path: &Path,
    externals: &[(String, asdf_ndarray::PendingBlock)],
    options: &WriteOptions,
) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let atomic_err =
        |e: array_core::AtomicError| AsdfError::io(e.action, e.source).in_file(&e.path);
    let mut batch = array_core::AtomicBatch::with_durability(options.durability);
    for (uri, block) in externals {
        let target = dir.join(uri);
        let ext_tree = finish_tree(
            Node::mapping(std::iter::empty::<(Node, Node)>()),
            &[block.compression],
            options,
        )?;
        let encoded = encode_block(
            &block.data,
            block.compression,
            &block.encode,
            &options.blocks,
        )?;
        let mut file = array_core::AtomicFile::create(&target)
            .map_err(atomic_err)?
            .with_durability(options.durability);
        crate::write::write_to(file.writer_mut(), &ext_tree, &[encoded], options)
            .map_err(|e| e.in_file(&target))?;
        batch.add(file).map_err(atomic_err)?;
    }
    batch.commit().map_err(atomic_err)
}

fn nd(context: &str, source: asdf_ndarray::NdError) -> AsdfError {
    AsdfError::Array {
        pointer: context.to_string(),
        source,
    }
}

/// Writes the header and `tree`, then the blocks with `blocks`.
fn write_with_blocks<W: Write>(
    out: W,
    tree: &Node,
    options: &WriteOptions,
    blocks: impl FnOnce(&mut BlockWriter<W>) -> asdf_ndarray::Result<Vec<asdf_block::BlockInfo>>,
) -> Result<W> {
    let (out, head_len) = crate::write::write_head(out, tree, options)?;
    let mut w = BlockWriter::new(out, head_len, options.blocks.clone());
    blocks(&mut w).map_err(|e| nd("writing blocks", e))?;
    Ok(w.finish()?)
}

fn software() -> Node {
    Node::mapping([
        ("name", Node::from(LIBRARY_NAME)),
        ("version", Node::from(env!("CARGO_PKG_VERSION"))),
    ])
    .with_tag(format!("{TAG}software-1.0.0"))
}

/// `(extension_uri, extension_class)` of the extensions a file uses: the core one, and
/// asdf-compression's for its codecs, as Python asdf records them.
fn extensions(version: &str, labels: &[Label]) -> Vec<(String, &'static str)> {
    let mut out = vec![(
        format!("asdf://asdf-format.org/core/extensions/core-{version}"),
        "asdf.extension._manifest.ManifestExtension",
    )];
    let codecs = asdf_block::CodecRegistry::default();
    for l in labels {
        if let Some(ext) = codecs.get(*l).and_then(|c| c.extension()) {
            out.push((ext.uri.to_string(), ext.class));
        }
    }
    out
}

fn version_tuple(v: &str) -> Option<(u32, u32, u32)> {
    let mut it = v.split('.').map(|p| p.parse::<u32>().ok());
    Some((it.next()??, it.next()??, it.next()??))
}

/// Rewrites the versioned core tags to those of ASDF Standard `1.minor.0`: older ones for
/// older standards, `-1.2.0` for the unstable 1.7.0, and a float16 array under `ndarray-1.0.0`
/// to the ndarray version that has float16.
fn retag(node: &Node, minor: u32) -> Result<Node> {
    crate::rebuild::rebuild(node, &mut |mut n| {
        let Some(name) = n.tag().and_then(|t| t.strip_prefix(TAG)) else {
            return Ok(n);
        };
        let new = match name {
            "ndarray-1.1.0" | "ndarray-1.2.0" if minor < 6 => {
                if n.get("datatype").and_then(Node::as_str) == Some("float16") {
                    return Err(AsdfError::InvalidTree(
                        "float16 arrays need ASDF Standard 1.6.0 (ndarray-1.1.0)".into(),
                    ));
                }
                "ndarray-1.0.0"
            }
            "integer-1.1.0" | "integer-1.2.0" if minor < 6 => {
                if minor < 3 {
                    return Err(AsdfError::InvalidTree(
                        "big integers need ASDF Standard 1.3.0 or later".into(),
                    ));
                }
                "integer-1.0.0"
            }
            // float16 under ndarray-1.0.0 (asdf-cxx writes it so), which has no float16.
            "ndarray-1.0.0"
                if minor >= 6 && n.get("datatype").and_then(Node::as_str) == Some("float16") =>
            {
                if minor == 6 {
                    "ndarray-1.1.0"
                } else {
                    "ndarray-1.2.0"
                }
            }
            "ndarray-1.2.0" if minor == 6 => "ndarray-1.1.0",
            "integer-1.2.0" if minor == 6 => "integer-1.1.0",
            // The unstable core 1.7.0 (Python asdf with ASDF_UNSTABLE_CORE_SCHEMAS).
            "ndarray-1.1.0" if minor >= 7 => "ndarray-1.2.0",
            "integer-1.1.0" if minor >= 7 => "integer-1.2.0",
            _ => return Ok(n),
        };
        n.set_tag(Some(format!("{TAG}{new}")));
        Ok(n)
    })
}

/// Makes `tree` a complete ASDF root for `options.standard_version`: the root tag,
/// `asdf_library` (this library) and `history.extensions` first, as Python asdf writes them;
/// existing history entries and extension records are kept.
pub(crate) fn finish_tree(tree: Node, labels: &[Label], options: &WriteOptions) -> Result<Node> {
    let version = options.standard_version.as_str();
    let (major, minor, _) = version_tuple(version)
        .filter(|&(ma, mi, _)| ma == 1 && mi <= 7)
        .ok_or_else(|| {
            AsdfError::InvalidTree(format!(
                "unsupported ASDF Standard version {version:?} (1.0.0 to 1.7.0)"
            ))
        })?;
    debug_assert_eq!(major, 1);
    let (tag, value) = tree.into_parts();
    let map = match value {
        Value::Map(m) => m,
        Value::Null => Mapping::new(),
        other => {
            return Err(AsdfError::InvalidTree(format!(
                "the root of an ASDF tree must be a mapping, not {}",
                Node::new(other).kind()
            )))
        }
    };
    let root_tag = if minor < 2 {
        "asdf-1.0.0"
    } else {
        "asdf-1.1.0"
    };
    let tag = match tag {
        Some(t) if !t.starts_with(&format!("{TAG}asdf-")) => t,
        _ => format!("{TAG}{root_tag}"),
    };
    let mut history = map.get("history").cloned();
    if minor >= 2 {
        let mut h = match history.take() {
            Some(h) if h.as_map().is_some() => h,
            // A legacy list of entries becomes the entries of the new form.
            Some(h) if h.as_seq().is_some() => Node::mapping([("entries", h)]),
            _ => Node::mapping(std::iter::empty::<(Node, Node)>()),
        };
        let hm = h
            .as_map_mut()
            .ok_or_else(|| AsdfError::InvalidTree("history is not a mapping".into()))?;
        let mut exts: Vec<Node> = hm
            .get("extensions")
            .and_then(Node::as_seq)
            .map(<[Node]>::to_vec)
            .unwrap_or_default();
        for (uri, class) in extensions(version, labels) {
            let present = exts
                .iter()
                .any(|e| e.get("extension_uri").and_then(Node::as_str) == Some(uri.as_str()));
            if !present {
                exts.push(
                    Node::mapping([
                        ("extension_class", Node::from(class)),
                        ("extension_uri", Node::from(uri)),
                        ("software", software()),
                    ])
                    .with_tag(format!("{TAG}extension_metadata-1.0.0")),
                );
            }
        }
        hm.insert("extensions", Node::from(exts));
        history = Some(h);
    }
    let mut out = Mapping::new();
    out.insert("asdf_library", software());
    if let Some(h) = history {
        out.insert("history", h);
    }
    for (k, v) in map {
        if !matches!(k.as_str(), Some("asdf_library" | "history")) {
            out.insert(k, v);
        }
    }
    let root = retag(&Node::from(out).with_tag(tag), minor)?;
    if options.validate {
        crate::file::check(&root)?;
    }
    Ok(root)
}

/// The row layout of the one streamed array of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StreamSpec {
    pub(crate) row_shape: Vec<usize>,
    pub(crate) datatype: asdf_ndarray::Datatype,
    pub(crate) row_bytes: usize,
}
