//! Reading an ASDF file: header, tree and blocks.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use asdf_block::{BlockReader, ReadOptions};
use asdf_yaml::{Node, ParseOptions};

use crate::error::{AsdfError, Result};
use crate::layout::{split, FileHeader};

/// How to open a file.
#[derive(Clone, Debug, Default)]
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
    /// Arrays added since opening, written by the next save.
    pub(crate) pending: asdf_ndarray::ArrayWriter,
    /// Limits for reading arrays.
    pub(crate) array_limits: asdf_ndarray::ReadLimits,
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

impl<B: AsRef<[u8]>> AsdfFile<B> {
    /// Reads a whole file held in `bytes` (a buffer, a memory map, ...).
    pub fn from_bytes(bytes: B, options: &OpenOptions) -> Result<Self> {
        let sections = split(bytes.as_ref())?;
        let mut warnings = Vec::new();
        let tree = match &sections.tree {
            Some(range) => {
                let doc =
                    asdf_yaml::parse_document_bytes(&bytes.as_ref()[range.clone()], &options.yaml)
                        .map_err(|source| AsdfError::Yaml {
                            tree_start: range.start,
                            source,
                        })?;
                warnings.extend(doc.warnings.iter().map(|w| format!("tree: {w:?}")));
                doc.root
            }
            None => Node::mapping(std::iter::empty::<(Node, Node)>()),
        };
        if options.validate {
            check(&tree)?;
        }
        if !options.ignore_unrecognized_tags {
            warnings.extend(options.extensions.unknown_tags(&tree));
        }
        let blocks = BlockReader::new(bytes, sections.blocks_start as u64, options.blocks.clone())?;
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
            pending: asdf_ndarray::ArrayWriter::new(),
            array_limits: options.arrays,
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
    /// when uncompressed.
    pub fn block_data(&self, source: i64) -> Result<Cow<'_, [u8]>> {
        Ok(self.blocks.data(source)?)
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

    /// The file's path, when opened by path.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}
