//! The file behind an `asdf_rs.AsdfFile`: a memory-mapped local file, or a file on S3, GCS,
//! Azure or an HTTP server read by byte ranges. Everything the Python API asks of a file goes
//! through [`Engine`], so both kinds answer the same calls.

use std::ops::Range;
use std::sync::Arc;

use asdf::ndarray::{AnyArray, BigInteger, Element, NdArrayMeta, ZarrArray};
use asdf::remote::RemoteFile;
use asdf::yaml::Node;
use asdf::{ArrayKind, AsdfError, AsdfFile, Result};
use ndarray::ArrayD;

/// An open file, local or remote (cheap to clone: both are shared).
#[derive(Clone)]
pub enum Engine {
    /// Memory-mapped: arrays may be zero-copy views.
    Local(Arc<AsdfFile>),
    /// Read by ranged requests: arrays are always decoded copies.
    Remote(Arc<RemoteFile>),
}

impl Engine {
    /// The whole tree.
    pub fn tree(&self) -> &Node {
        match self {
            Engine::Local(f) => f.tree(),
            Engine::Remote(f) => f.tree(),
        }
    }

    /// The node at `pointer`, or the engine's "no node" error.
    pub fn node(&self, pointer: &str) -> Result<&Node> {
        self.tree()
            .pointer(pointer)
            .ok_or_else(|| AsdfError::NoNode(pointer.to_string()))
    }

    /// The parsed ndarray node at `pointer`.
    pub fn meta(&self, pointer: &str) -> Result<NdArrayMeta> {
        match self {
            Engine::Local(f) => f.meta(pointer),
            Engine::Remote(f) => f.meta(pointer),
        }
    }

    /// The array at `pointer` whatever its datatype.
    pub fn read(&self, pointer: &str) -> Result<AnyArray> {
        match self {
            Engine::Local(f) => f.read(pointer),
            Engine::Remote(f) => f.read(pointer),
        }
    }

    /// The array at `pointer` and its mask.
    pub fn read_masked(&self, pointer: &str) -> Result<(AnyArray, Option<ArrayD<bool>>)> {
        match self {
            Engine::Local(f) => f.read_masked(pointer),
            Engine::Remote(f) => f.read_masked(pointer),
        }
    }

    /// The array at `pointer` as `ArrayD<T>`.
    pub fn array<T: Element>(&self, pointer: &str) -> Result<ArrayD<T>> {
        match self {
            Engine::Local(f) => f.array::<T>(pointer),
            Engine::Remote(f) => f.array::<T>(pointer),
        }
    }

    /// The sub-array `region` of the array at `pointer`, reading only what covers it.
    pub fn read_region<T: Element>(
        &self,
        pointer: &str,
        region: &[Range<usize>],
    ) -> Result<ArrayD<T>> {
        match self {
            Engine::Local(f) => f.read_region::<T>(pointer, region),
            Engine::Remote(f) => f.read_region::<T>(pointer, region),
        }
    }

    /// JSON Pointers and kinds of every array, in tree order.
    pub fn arrays(&self) -> Vec<(String, ArrayKind)> {
        match self {
            Engine::Local(f) => f.arrays(),
            Engine::Remote(f) => f.arrays(),
        }
    }

    /// Built-in checks of the core tags: `(pointer, rule, message)` of each violation.
    pub fn validate(&self) -> Vec<(String, String, String)> {
        let report = match self {
            Engine::Local(f) => f.validate(),
            Engine::Remote(f) => f.validate(),
        };
        report
            .violations
            .into_iter()
            .map(|v| (v.pointer, v.rule, v.message))
            .collect()
    }

    /// `#ASDF_STANDARD` version.
    pub fn standard_version(&self) -> &str {
        match self {
            Engine::Local(f) => f.standard_version(),
            Engine::Remote(f) => f.standard_version(),
        }
    }

    /// Non-fatal oddities found while reading.
    pub fn warnings(&self) -> &[String] {
        match self {
            Engine::Local(f) => f.warnings(),
            Engine::Remote(f) => f.warnings(),
        }
    }

    /// The `core/integer` at `pointer` (node `node`).
    pub fn integer(&self, node: &Node, pointer: &str) -> Result<BigInteger> {
        match self {
            Engine::Local(f) => {
                BigInteger::from_node(node, &**f).map_err(|e| array_err(pointer, e))
            }
            Engine::Remote(f) => f.integer(pointer),
        }
    }

    /// The asdf-zarr array `node` (at `pointer`): an external store's `.zarray` is read for a
    /// local file; a remote file's zarr arrays keep their chunks in blocks.
    pub fn zarr(&self, node: &Node, pointer: &str) -> Result<ZarrArray> {
        match self {
            Engine::Local(f) => ZarrArray::open(node, &**f),
            Engine::Remote(_) => ZarrArray::from_node(node),
        }
        .map_err(|e| array_err(pointer, e))
    }

    /// Whether block `source` is compressed (`None` when its header cannot be read).
    pub fn block_compressed(&self, source: i64) -> Option<bool> {
        let info = match self {
            Engine::Local(f) => f.blocks().info(source).ok().copied(),
            Engine::Remote(f) => f.block_info(source).ok(),
        };
        info.map(|i| i.header.is_compressed())
    }

    /// What the file was opened from: its path or URL.
    pub fn location(&self) -> Option<String> {
        match self {
            Engine::Local(f) => f.path().map(|p| p.display().to_string()),
            Engine::Remote(f) => Some(f.url().to_string()),
        }
    }
}

fn array_err(pointer: &str, source: asdf::ndarray::NdError) -> AsdfError {
    AsdfError::Array {
        pointer: pointer.to_string(),
        source,
    }
}
