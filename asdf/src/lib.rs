//! # asdf
//!
//! ASDF (Advanced Scientific Data Format) files in Rust: the crate most users depend on. It owns
//! the file — header, comments, YAML tree, binary blocks, block index — and re-exports the layers
//! it is built on:
//!
//! * [`block`] (`asdf-block`): blocks, codecs, checksums, block index;
//! * [`yaml`] (`asdf-yaml`): the tagged YAML 1.1 tree, JSON Pointer, `$ref`;
//! * [`ndarray`] (`asdf-ndarray`): ndarray nodes as `ndarray::ArrayD`, zero-copy views.
//!
//! ```no_run
//! let file = asdf::AsdfFile::open("observation.asdf")?;
//! println!("ASDF Standard {}", file.standard_version());
//! if let Some(name) = file.pointer("/meta/instrument/name").and_then(|n| n.as_str()) {
//!     println!("instrument: {name}");
//! }
//! for (i, block) in file.blocks().blocks().iter().enumerate() {
//!     println!("block {i}: {} bytes, {}", block.data_size(), block.header.compression);
//! }
//! # Ok::<(), asdf::AsdfError>(())
//! ```
//!
//! Writes go through [`write_path`] / [`atomic_write`]: a temporary file, fsync, rename, so an
//! interrupted write never destroys the previous file.

mod arrays;
pub mod astro;
mod builder;
mod cache;
mod checked;
mod error;
mod extension;
pub mod external;
mod file;
pub mod fits;
pub mod layout;
mod rebuild;
#[cfg(feature = "remote")]
pub mod remote;
pub mod salvage;
mod save;
mod stream;
mod write;

pub use asdf_block as block;
pub use asdf_ndarray as ndarray;
pub use asdf_yaml as yaml;

pub use arrays::{array_kind, find_array_nodes, find_arrays, ArrayKind};
pub use asdf_ndarray::{AnyArray, Element, Storage, StoreOptions};
pub use builder::{AsdfWriter, LIBRARY_NAME};

pub use array_core::Durability;
pub use error::{AsdfError, Result};
pub use extension::{split_tag, to_tagged, Extensions, TaggedType};
pub use external::{content_free, locate, ExternalFiles, ExternalObserver};
pub use file::{open_external, open_located, AsdfFile, OpenOptions};
pub use layout::{FileHeader, Sections};
pub use salvage::{salvage, LostArray, Salvage};
pub use stream::StreamWriter;
pub use write::{atomic_write, write_path, write_to, WriteOptions};

/// The README's examples, compiled as doctests so they stay true (with `remote`, which the
/// README's URL example needs; the workspace's test run has it).
#[doc = include_str!("../../README.md")]
#[cfg(all(doctest, feature = "remote"))]
pub struct ReadmeDoctests;
