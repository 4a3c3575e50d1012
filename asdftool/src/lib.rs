//! # asdftool
//!
//! The library behind the `asdftool` command: the verbs over ASDF, RawArray (`.ra`), NumPy
//! (`.npy`) and Awkward Array 0.x (`.awkd`) files. Library users of the formats depend on
//! `asdf`, `rawarray` and `asdf-awkward` directly and never pay for this crate's CLI
//! dependencies; this library exists so the verbs are testable and documented.
//!
//! * [`sniff`]: the format of an input by its magic bytes, of an output by its extension.
//! * [`info`], [`verify`], [`diff`], [`search`]: read-only verbs.
//! * [`rewrite`] (`to-yaml`, `defragment`, `explode`, `implode`), [`convert`], [`edit`]: writers,
//!   all crash-safe (temporary file, fsync, rename), except `edit`'s in-place tree update.
//! * [`salvage`]: recovering what a damaged file still holds.
//! * [`npy`]: a small `.npy` reader/writer over [`asdf::AnyArray`].
//! * [`awk`]: the awkward verbs.
//!
//! Every error is a [`CliError`] whose [`exit_code`](CliError::exit_code) is 1 for an invalid
//! file and 2 for usage or I/O errors.
//!
//! ```
//! use asdftool::sniff::{sniff_bytes, Format};
//! let file = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n--- {a: 1, b: [x, y]}\n...\n";
//! assert_eq!(sniff_bytes(file), Some(Format::Asdf));
//! let f = asdf::AsdfFile::from_bytes(file.to_vec(), &Default::default()).unwrap();
//! let q = asdftool::search::Query { value: Some("y".into()), ..Default::default() };
//! assert_eq!(asdftool::search::search(f.tree(), &q).unwrap(), ["/b/1"]);
//! ```

pub mod awk;
pub mod columns;
pub mod convert;
pub mod diff;
pub mod edit;
pub mod error;
pub mod info;
pub mod input;
pub mod npy;
pub mod output;
pub mod progress;
pub mod refs;
pub mod report;
pub mod rewrite;
pub mod salvage;
pub mod search;
pub mod signals;
pub mod sniff;
pub mod tree;
pub mod verify;

pub use error::{CliError, Result};
