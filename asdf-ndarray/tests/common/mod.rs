//! Helpers shared by the integration tests: reading and writing whole ASDF files (the facade
//! crate will own the real file layer later).
#![allow(dead_code)]

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use asdf_block::{BlockWriter, MappedBlocks, ReadOptions, WriteOptions};
use asdf_ndarray::{is_ndarray_tag, ArrayWriter, BlockStore, NdArrayMeta, NdError, Source};
use asdf_yaml::Node;

/// The tree of an ASDF file: everything up to the first line `...`.
pub(crate) fn read_tree(path: &Path) -> Node {
    let bytes = std::fs::read(path).unwrap();
    let end = find_tree_end(&bytes).unwrap_or(bytes.len());
    asdf_yaml::parse_bytes(&bytes[..end]).unwrap()
}

fn find_tree_end(bytes: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(p) = bytes[i..].windows(4).position(|w| w == b"\n...") {
        let at = i + p + 4;
        match bytes.get(at) {
            None | Some(b'\n') | Some(b'\r') => return Some(at + 1),
            _ => i = at,
        }
    }
    None
}

/// A file's blocks plus the external files its tree names, as a block store.
pub(crate) struct FileStore {
    pub main: Option<MappedBlocks>,
    pub externals: HashMap<String, MappedBlocks>,
}

impl FileStore {
    pub(crate) fn open(path: &Path, tree: &Node) -> FileStore {
        let main = MappedBlocks::open(path, 0, ReadOptions::default()).ok();
        let mut uris = Vec::new();
        collect_external(tree, &mut uris);
        let dir = path.parent().unwrap().to_path_buf();
        let externals = uris
            .into_iter()
            .map(|u| {
                let r = MappedBlocks::open(dir.join(&u), 0, ReadOptions::default()).unwrap();
                (u, r)
            })
            .collect();
        FileStore { main, externals }
    }
}

fn collect_external(n: &Node, out: &mut Vec<String>) {
    if n.tag().is_some_and(is_ndarray_tag) {
        if let Ok(m) = NdArrayMeta::from_node(n) {
            if let Some(Source::External(u)) = m.source {
                out.push(u);
            }
        }
    }
    for c in n.children() {
        collect_external(c, out);
    }
}

impl BlockStore for FileStore {
    fn block(&self, source: i64) -> Result<Cow<'_, [u8]>, NdError> {
        match &self.main {
            Some(m) => m.block(source),
            None => Err(NdError::Usage("no blocks".into())),
        }
    }
    fn external(&self, uri: &str) -> Result<Cow<'_, [u8]>, NdError> {
        let r = self
            .externals
            .get(uri)
            .ok_or_else(|| NdError::NoExternal(uri.into()))?;
        Ok(r.data(0)?)
    }
}

/// Writes a complete ASDF file: header, tree, blocks of `w`, block index. External blocks go
/// to their own files next to it. Returns the path.
pub(crate) fn write_file(path: &Path, tree: &Node, w: &ArrayWriter, align: u32) -> PathBuf {
    let bytes = file_bytes(tree, w, align);
    std::fs::write(path, bytes).unwrap();
    for (uri, block) in w.externals() {
        let mut ext = ArrayWriter::new();
        ext.push_block(block.clone());
        let root = Node::mapping([("note", Node::from("external block"))])
            .with_tag("tag:stsci.edu:asdf/core/asdf-1.1.0");
        std::fs::write(
            path.parent().unwrap().join(uri),
            file_bytes(&root, &ext, align),
        )
        .unwrap();
    }
    path.to_path_buf()
}

pub(crate) fn file_bytes(tree: &Node, w: &ArrayWriter, align: u32) -> Vec<u8> {
    let mut text = asdf_yaml::emit_to_string(tree).unwrap();
    if !text.starts_with("#ASDF") {
        text = format!("#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n{text}");
    }
    let out = text.into_bytes();
    let pos = out.len() as u64;
    let mut bw = BlockWriter::new(
        out,
        pos,
        WriteOptions {
            align,
            ..WriteOptions::default()
        },
    );
    w.write_blocks(&mut bw).unwrap();
    bw.finish().unwrap()
}

/// The root node of a tree.
pub(crate) fn root(entries: Vec<(&str, Node)>) -> Node {
    Node::mapping(entries).with_tag("tag:stsci.edu:asdf/core/asdf-1.1.0")
}
