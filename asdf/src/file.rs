//! Reading an ASDF file: header, tree and blocks.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use asdf_block::{BlockReader, ReadOptions};
use asdf_yaml::{Node, ParseOptions};

use crate::error::{AsdfError, Result};
use crate::external::{ExternalFiles, ExternalObserver};
use crate::layout::{split, FileHeader};

/// How to open a file.
///
/// [`OpenOptions::default`] is sized for real data (per-block ceilings in GiB);
/// [`OpenOptions::untrusted`] is the preset for files from untrusted sources.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// Block reading: checksum policy, decoded-size ceiling, codecs, use of the block index.
    pub blocks: ReadOptions,
    /// Tree parsing: depth, alias and scalar-size limits.
    pub yaml: ParseOptions,
    /// The tags this reader recognises beyond the built-in ones (share one registry between
    /// files through the `Arc`).
    pub extensions: std::sync::Arc<crate::Extensions>,
    /// Do not warn about tags nobody recognises (they are kept either way).
    pub ignore_unrecognized_tags: bool,
    /// Check the tree against the rules of its core tags and refuse an invalid file.
    pub validate: bool,
    /// Array reading: the largest result accepted beyond the bytes an array's data occupies
    /// (overlapping strides, chunk gaps), so a small file cannot make a read allocate gigabytes.
    pub arrays: asdf_ndarray::ReadLimits,
    /// The most bytes the compressed blocks of one open file may decode to in all, each block
    /// counted once (the first time it is decoded, whatever the number of reads), checked
    /// before decoding. Bounds `n` blocks × `blocks.limits.max_decoded_block_size`. Applies to
    /// the reads of [`AsdfFile`] (arrays, [`AsdfFile::block_data`]), not to direct use of
    /// [`AsdfFile::blocks`]. Default 64 GiB.
    pub max_total_decoded_bytes: u64,
    /// Which external files (exploded arrays, `$ref` targets) the file may make the reader open:
    /// [`ExternalFiles::Any`] by default (as Python asdf), [`ExternalFiles::SameDirAndBelow`]
    /// in [`OpenOptions::untrusted`]. Relative URIs are always relative to the file that
    /// contains them ([`crate::locate`]).
    pub external_files: ExternalFiles,
    /// Told the path of each external file before it is opened (none by default).
    pub external_observer: Option<ExternalObserver>,
    /// The most distinct external files one open file may make the reader open (each counted
    /// once, however many arrays it holds): 100 000 by default, 10 000 in
    /// [`OpenOptions::untrusted`]. A tree naming thousands of external files is refused past
    /// the limit instead of mapping and parsing every one of them.
    pub max_external_files: usize,
    /// The most decoded bytes of compressed blocks one open file keeps for reuse: a block read
    /// a second time (several arrays viewing one compressed block) is kept within this budget
    /// and never decoded again; past it, blocks are decoded on each read. 1 GiB by default,
    /// 256 MiB in [`OpenOptions::untrusted`]; 0 keeps nothing.
    pub max_cached_block_bytes: u64,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            blocks: ReadOptions::default(),
            yaml: ParseOptions::default(),
            extensions: Default::default(),
            ignore_unrecognized_tags: false,
            validate: false,
            arrays: asdf_ndarray::ReadLimits::default(),
            max_total_decoded_bytes: 64 << 30,
            external_files: ExternalFiles::Any,
            external_observer: None,
            max_external_files: 100_000,
            max_cached_block_bytes: 1 << 30,
        }
    }
}

impl OpenOptions {
    /// The preset for files from untrusted sources (uploads, the internet).
    ///
    /// The defaults let a file of a few MiB legitimately demand tens of GiB (zstd, xz and
    /// bzip2 reach ratios above 1000:1 on real data; one block may decode to 16 GiB, an array
    /// with overlapping strides expand to 4 GiB, and every block of a file may do so). This
    /// preset keeps every bound at about 1 GiB per result and 4 GiB per file, which still
    /// opens every file of the test corpus:
    ///
    /// * `blocks`: [`asdf_block::ReadOptions::untrusted`]: one block decodes to ≤ 1 GiB;
    /// * `yaml`: [`asdf_yaml::ParseOptions::untrusted`]: aliases expand to ≤ 100 000 nodes, a
    ///   scalar is ≤ 64 MiB (depth stays 512, for Python-written trees);
    /// * `arrays`: [`asdf_ndarray::ReadLimits::untrusted`]: results larger than their data
    ///   (overlapping strides, chunk gaps, broadcast masks) ≤ 1 GiB;
    /// * `max_total_decoded_bytes`: 4 GiB for all the blocks of the file;
    /// * `external_files`: [`ExternalFiles::SameDirAndBelow`]: external arrays and references
    ///   only in the file's directory or below it (links resolved);
    /// * `max_external_files`: 10 000 distinct external files;
    /// * `max_cached_block_bytes`: 256 MiB of decoded blocks kept for reuse.
    ///
    /// ```
    /// use asdf::{AsdfFile, AsdfWriter, OpenOptions, StoreOptions};
    /// let mut w = AsdfWriter::new();
    /// let node = w.add(&ndarray::Array1::<f64>::zeros(1000), &StoreOptions::compressed("zstd").unwrap()).unwrap();
    /// let bytes = w.to_bytes(asdf::yaml::Node::mapping([("x", node)]), &Default::default()).unwrap();
    /// let f = AsdfFile::from_bytes(bytes, &OpenOptions::untrusted()).unwrap();
    /// assert_eq!(f.array::<f64>("/x").unwrap().len(), 1000);
    /// ```
    pub fn untrusted() -> Self {
        OpenOptions {
            blocks: ReadOptions::untrusted(),
            yaml: ParseOptions::untrusted(),
            arrays: asdf_ndarray::ReadLimits::untrusted(),
            max_total_decoded_bytes: 4 << 30,
            external_files: ExternalFiles::SameDirAndBelow,
            max_external_files: 10_000,
            max_cached_block_bytes: 256 << 20,
            ..OpenOptions::default()
        }
    }
}

/// The running total of bytes decoded from one open file, against
/// [`OpenOptions::max_total_decoded_bytes`]. Each compressed block is charged once, the first
/// time it is decoded; the charge is atomic, so parallel reads (chunked arrays, rayon) share it.
#[derive(Debug)]
pub(crate) struct DecodeBudget {
    limit: u64,
    /// The per-block ceiling: a block above it is refused by the block reader, not charged.
    block_limit: u64,
    used: AtomicU64,
    /// Per block: whether its charge was accepted (set once).
    charged: Vec<OnceLock<bool>>,
}

impl DecodeBudget {
    pub(crate) fn new(limit: u64, block_limit: u64, blocks: usize) -> Self {
        DecodeBudget {
            limit,
            block_limit,
            used: AtomicU64::new(0),
            charged: (0..blocks).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Charges block `info` (if compressed) before it is decoded.
    pub(crate) fn charge(&self, info: &asdf_block::BlockInfo) -> Result<()> {
        if !info.header.is_compressed() {
            // Borrowed from the file, never copied: bounded by the file length.
            return Ok(());
        }
        let size = info.data_size();
        if size > self.block_limit {
            // The block reader refuses it (naming `max_decoded_block_size`) before decoding.
            return Ok(());
        }
        let add = || {
            self.used
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |u| {
                    u.checked_add(size).filter(|&t| t <= self.limit)
                })
                .is_ok()
        };
        let accepted = match self.charged.get(info.index) {
            Some(cell) => *cell.get_or_init(add),
            None => add(),
        };
        if accepted {
            Ok(())
        } else {
            Err(AsdfError::DecodedTotalTooLarge {
                block: info.index,
                offset: info.offset,
                size,
                decoded: self.used.load(Ordering::SeqCst),
                limit: self.limit,
            })
        }
    }

    /// [`charge`](Self::charge) with the array layer's error type.
    pub(crate) fn charge_nd(
        &self,
        info: &asdf_block::BlockInfo,
    ) -> std::result::Result<(), asdf_ndarray::NdError> {
        self.charge(info).map_err(|e| match e {
            AsdfError::DecodedTotalTooLarge {
                block,
                offset,
                size,
                decoded,
                limit,
            } => asdf_ndarray::NdError::TooLarge {
                what: format!(
                    "block {block} at byte offset {offset}: decoding its {size} bytes after \
                     {decoded} already decoded from this file \
                     (OpenOptions::max_total_decoded_bytes)"
                ),
                limit,
            },
            other => asdf_ndarray::NdError::Usage(other.to_string()),
        })
    }

    /// Bytes charged so far.
    pub(crate) fn used(&self) -> u64 {
        self.used.load(Ordering::SeqCst)
    }
}

/// The built-in checks of the core tags; an error listing every violation.
pub(crate) fn check(tree: &Node) -> Result<()> {
    let violations = asdf_schema::check_builtin(tree);
    if violations.is_empty() {
        Ok(())
    } else {
        Err(AsdfError::Invalid(asdf_schema::Report { violations }))
    }
}

/// An open ASDF file: its header, its parsed tree and its blocks, over a memory map
/// ([`AsdfFile::open`]) or any bytes ([`AsdfFile::from_bytes`]). Block data is decoded only when
/// asked for; uncompressed blocks are borrowed from the map.
///
/// ```
/// let bytes = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
///               --- !core/asdf-1.1.0\nname: test\nshape: [2, 3]\n...\n".to_vec();
/// let f = asdf::AsdfFile::from_bytes(bytes, &Default::default()).unwrap();
/// assert_eq!(f.standard_version(), "1.6.0");
/// assert_eq!(f.tree().get("name").and_then(|n| n.as_str()), Some("test"));
/// assert_eq!(f.pointer("/shape/1").and_then(|n| n.as_i64()), Some(3));
/// assert!(f.blocks().is_empty());
/// ```
#[derive(Debug)]
pub struct AsdfFile<B = memmap2::Mmap> {
    header: FileHeader,
    tree: Node,
    tree_range: Option<std::ops::Range<usize>>,
    blocks: BlockReader<B>,
    warnings: Vec<String>,
    path: Option<PathBuf>,
    /// `path` made absolute when the file was opened: what relative external URIs are resolved
    /// against, whatever the working directory is later.
    absolute_path: Option<PathBuf>,
    /// The distinct external files opened so far, against `OpenOptions::max_external_files`.
    pub(crate) externals_opened: std::sync::Mutex<std::collections::HashSet<PathBuf>>,
    /// Arrays added since opening, written by the next save.
    pub(crate) pending: asdf_ndarray::ArrayWriter,
    /// Limits for reading arrays.
    pub(crate) array_limits: asdf_ndarray::ReadLimits,
    /// Bytes decoded so far, against `OpenOptions::max_total_decoded_bytes`.
    pub(crate) decoded: DecodeBudget,
    /// Decoded blocks kept for reuse, within `OpenOptions::max_cached_block_bytes`.
    pub(crate) cache: crate::cache::BlockCache,
    /// The options the file was opened with (external array files are opened with them too).
    pub(crate) options: OpenOptions,
}

impl AsdfFile<memmap2::Mmap> {
    /// Opens the file at `path` (memory-mapped) with default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, &OpenOptions::default())
    }

    /// Opens the file at `path` (memory-mapped). Errors name the file.
    pub fn open_with(path: impl AsRef<Path>, options: &OpenOptions) -> Result<Self> {
        let path = path.as_ref();
        let map = asdf_block::map_file(path)?;
        let mut file = Self::from_bytes(map, options).map_err(|e| e.in_file(path))?;
        file.blocks = file.blocks.with_path(path);
        file.path = Some(path.to_path_buf());
        file.absolute_path = Some(crate::external::absolute(path));
        Ok(file)
    }
}

impl AsdfFile<Vec<u8>> {
    /// Reads a file from any reader (a socket, a decompressor, a `Read + Seek` file handle...).
    /// The whole stream is read into memory; for files on disk prefer [`AsdfFile::open`], which
    /// maps them and decodes arrays only when asked.
    pub fn from_reader(mut reader: impl std::io::Read, options: &OpenOptions) -> Result<Self> {
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .map_err(|e| AsdfError::io("reading the file", e))?;
        Self::from_bytes(bytes, options)
    }
}

/// The tree of a file whose sections are `sections` (within `bytes`, which hold at least its
/// header and tree), checked under `options`, and the warnings of reading it: the lenient
/// reads of the header, the YAML's, unknown tags. A file without a tree, or whose root is an
/// empty `core/asdf` node (`--- !core/asdf-1.1.0` then `...`), has an empty mapping, as Python
/// reads it.
pub(crate) fn parse_tree(
    bytes: &[u8],
    sections: &crate::layout::Sections,
    options: &OpenOptions,
) -> Result<(Node, Vec<String>)> {
    let mut warnings = sections.warnings.clone();
    let tree = match &sections.tree {
        Some(r) => {
            let doc = asdf_yaml::parse_document_bytes(&bytes[r.clone()], &options.yaml).map_err(
                |source| AsdfError::Yaml {
                    tree_start: r.start,
                    source,
                },
            )?;
            warnings.extend(doc.warnings.iter().map(|w| format!("tree: {w:?}")));
            empty_root_as_mapping(doc.root)
        }
        None => Node::mapping(std::iter::empty::<(Node, Node)>()),
    };
    if options.validate {
        check(&tree)?;
    }
    if !options.ignore_unrecognized_tags {
        warnings.extend(options.extensions.unknown_tags(&tree));
    }
    Ok((tree, warnings))
}

/// A root tagged `core/asdf-*` with no content (null, or an empty plain scalar) as an empty
/// mapping with that tag.
fn empty_root_as_mapping(root: Node) -> Node {
    let empty = match root.value() {
        asdf_yaml::Value::Null => true,
        asdf_yaml::Value::Str(s) => s.is_empty(),
        _ => false,
    };
    match root.tag() {
        Some(t) if empty && t.starts_with("tag:stsci.edu:asdf/core/asdf-") => {
            let tag = t.to_string();
            Node::mapping(std::iter::empty::<(Node, Node)>()).with_tag(tag)
        }
        _ => root,
    }
}

impl<B: AsRef<[u8]>> AsdfFile<B> {
    /// Reads a whole file held in `bytes` (a buffer, a memory map, ...).
    pub fn from_bytes(bytes: B, options: &OpenOptions) -> Result<Self> {
        let sections = split(bytes.as_ref())?;
        let (tree, mut warnings) = parse_tree(bytes.as_ref(), &sections, options)?;
        let blocks = BlockReader::new(bytes, sections.blocks_start as u64, options.blocks.clone())?;
        let decoded = DecodeBudget::new(
            options.max_total_decoded_bytes,
            options.blocks.limits.max_decoded_block_size,
            blocks.len(),
        );
        let cache = crate::cache::BlockCache::new(options.max_cached_block_bytes, blocks.len());
        warnings.extend(blocks.layout().warnings.iter().cloned());
        for w in &warnings {
            log::warn!("{w}");
        }
        Ok(AsdfFile {
            header: sections.header,
            tree,
            tree_range: sections.tree,
            blocks,
            warnings,
            path: None,
            absolute_path: None,
            externals_opened: Default::default(),
            pending: asdf_ndarray::ArrayWriter::new(),
            array_limits: options.arrays,
            decoded,
            cache,
            options: options.clone(),
        })
    }

    /// The `#ASDF` line and the comments after it.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The ASDF Standard version (`#ASDF_STANDARD`, `1.0.0` when absent).
    pub fn standard_version(&self) -> &str {
        &self.header.standard_version
    }

    /// The comment lines after the `#ASDF` line, without their `#`.
    pub fn comments(&self) -> &[String] {
        &self.header.comments
    }

    /// The tree (an empty mapping for a file without one).
    pub fn tree(&self) -> &Node {
        &self.tree
    }

    /// The tree, to edit before writing it elsewhere.
    pub fn tree_mut(&mut self) -> &mut Node {
        &mut self.tree
    }

    /// The node at a JSON Pointer (`""` is the root, `/a/0/b` a path of keys and indexes).
    pub fn pointer(&self, pointer: &str) -> Option<&Node> {
        self.tree.pointer(pointer)
    }

    /// Byte range of the YAML tree in the file, if it has one.
    pub fn tree_range(&self) -> Option<std::ops::Range<usize>> {
        self.tree_range.clone()
    }

    /// The blocks.
    pub fn blocks(&self) -> &BlockReader<B> {
        &self.blocks
    }

    /// The decoded data of block `source` (negative counts from the end), borrowed from the file
    /// when uncompressed. Compressed blocks count towards
    /// [`OpenOptions::max_total_decoded_bytes`] (once each).
    pub fn block_data(&self, source: i64) -> Result<Cow<'_, [u8]>> {
        self.decoded.charge(self.blocks.info(source)?)?;
        Ok(self.cached_data(source)?)
    }

    /// Bytes decoded from this file's compressed blocks so far, as counted against
    /// [`OpenOptions::max_total_decoded_bytes`] (each block once).
    pub fn decoded_bytes(&self) -> u64 {
        self.decoded.used()
    }

    /// The options this file was opened with.
    pub fn open_options(&self) -> &OpenOptions {
        &self.options
    }

    /// Non-fatal oddities found while reading (also logged with `log::warn!`).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Checks the tree against the rules of its core tags (datatypes, shapes, strides, required
    /// keys, tag versions), returning every violation. For validation against full ASDF schema
    /// files, see the `asdf-schema` crate.
    pub fn validate(&self) -> asdf_schema::Report {
        asdf_schema::Report {
            violations: asdf_schema::check_builtin(&self.tree),
        }
    }

    /// The value at `pointer` as a [`TaggedType`](crate::TaggedType), with Python asdf's tag
    /// version rules (exact version; another version attempted with a warning).
    pub fn value<T: crate::TaggedType>(&self, pointer: &str) -> Result<T> {
        let node = self
            .pointer(pointer)
            .ok_or_else(|| AsdfError::NoNode(pointer.to_string()))?;
        crate::extension::convert(node, pointer)
    }

    /// The file's path, when opened by path (as it was given).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The file's path made absolute when it was opened (what relative external URIs in it are
    /// resolved against), when opened by path.
    pub fn absolute_path(&self) -> Option<&Path> {
        self.absolute_path.as_deref()
    }
}

/// Opens the external ASDF file `uri` found in the file at `referrer`, within the policy of
/// `options` for a tree opened from `root` ([`locate`](crate::locate)); the observer of `options` is told its
/// path first. Errors name the URI and the path but never quote the file's content
/// ([`content_free`](crate::content_free)).
pub fn open_external(
    uri: &str,
    referrer: &Path,
    root: &Path,
    options: &OpenOptions,
) -> Result<AsdfFile> {
    let path = crate::external::locate(uri, referrer, root, options.external_files)?;
    open_located(uri, &path, options)
}

/// Opens the external file `uri` already [`locate`](crate::locate)d at `path`: the observer of `options` is
/// told first, and errors never quote the file's content ([`content_free`](crate::content_free)).
pub fn open_located(uri: &str, path: &Path, options: &OpenOptions) -> Result<AsdfFile> {
    if let Some(o) = &options.external_observer {
        o.notify(path);
    }
    AsdfFile::open_with(path, options).map_err(|e| AsdfError::External {
        uri: uri.to_string(),
        reason: format!("{}: {}", path.display(), crate::external::content_free(&e)),
    })
}
