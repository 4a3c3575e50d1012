//! Awkward Array 0.x persistence — awkward0's JSON "schema" over named binary blobs — read and
//! written exactly as awkward0 0.15.5 does, with none of its ways to run code.
//!
//! # The format in one paragraph
//!
//! An awkward0 array is stored as a set of named blobs (raw numpy buffers, optionally
//! zlib-compressed) plus one JSON document, itself a blob, whose `"schema"` is an S-expression:
//! `{"call": ["awkward0", "JaggedArray", "fromcounts"], "args": [...]}` calls a constructor,
//! `{"read": "1.raw"}` reads a blob, `{"json": 3}` is a literal, `{"ref": 2}` reuses the value
//! of the expression with `"id": 2`, and so on (11 kinds). `.awkd` files are ZIP archives of
//! these blobs (`<name>-<id>.raw` + `<name>.json`, entries stored).
//!
//! # Safety
//!
//! * `call` specs pass awkward0's [`Whitelist`] (fnmatch per element, same rules) and are then
//!   dispatched **only** to this crate's fixed table of constructors. `python` (pickle),
//!   `function`, `awkward0.persist.topython`, Parquet/uproot specs (paths, URLs), `ObjectArray`
//!   and `VirtualArray` are refused with [`Error::Refused`]. (awkward0 pickles `SparseArray`
//!   defaults that JSON cannot hold, such as NaN; [`ReadOptions::decode_pickled_scalars`] opts in
//!   to a parser that understands only single-number pickles and still refuses everything else.)
//! * Every size is checked before allocating: `count × itemsize` against the blob length,
//!   decompressed sizes against what `frombuffer` declares and against [`Limits`]; nesting depth,
//!   expression count (bounding `ref` fan-out), reference cycles, index ranges, offsets, tags and
//!   mask lengths are all validated. Errors say where (`schema.args[0].pairs[1][1]`) and what.
//! * Directory stores refuse blob names that would leave their folder; writes go through a
//!   temporary file in the same directory, fsync, rename.
//!
//! # Example
//!
//! ```
//! use asdf_awkward::{read_array, write_array, Layout, MemoryStore, ReadOptions, WriteOptions};
//!
//! let events = Layout::from_json(&serde_json::json!([
//!     {"pt": [31.5, 12.25], "tag": "mu"},
//!     null,
//!     {"pt": [], "tag": "e"},
//! ])).unwrap();
//! let mut store = MemoryStore::default();
//! write_array(&events, &mut store, "events", &WriteOptions::default()).unwrap();
//! // awkward0's blob names: "<name>-<id>.raw" and the schema "<name>.json".
//! assert!(store.blobs.contains_key("events.json"));
//! let back = read_array(&store, "events", &ReadOptions::default()).unwrap();
//! assert_eq!(back.get(0).unwrap().to_json()["tag"], "mu");
//! assert_eq!(back.to_json().unwrap(), events.to_json().unwrap());
//! ```
//!
//! # Containers
//!
//! Reading goes through [`BlobStore`], writing through [`BlobSink`]: [`AwkdFile`] /
//! [`save_awkd`] (ZIP), [`DirStore`] (a directory of files) and [`MemoryStore`]. With the `asdf`
//! feature (on by default), `to_asdf`/`from_asdf` keep the blobs as ASDF blocks and the schema
//! in the YAML tree ([`serialize`] returns a schema without storing it and [`read_schema`]
//! evaluates one that came from elsewhere, which is what that store uses).
//!
//! # awkward 2
//!
//! [`to_awkward2`] gives the `(form, length, buffers)` triple that `ak.from_buffers` accepts, for
//! every class that has an awkward 2 equivalent; [`from_buffers()`] reads `ak.to_buffers` output
//! (every form class, parameters included) back into a [`Layout`], validated like awkward0
//! input. The classes awkward0 lacks ([`RegularArray`], [`RecordArray`] with tuples and an
//! explicit length, [`UnmaskedArray`], [`EmptyArray`], and [`Parameterized`] for parameters) live
//! in [`classes`]; written as awkward0 they become their nearest awkward0 stand-ins.
//! [`write_awkward2_dir`]/[`read_awkward2_dir`] and [`write_awkward2_npz`]/[`read_awkward2_npz`]
//! keep the buffers in a directory or an `.npz` (see [`awkward2_files`]).
//!
//! # Arrow and Parquet
//!
//! With the `arrow` feature, `arrow::to_arrow`/`arrow::from_arrow` convert layouts to arrow-rs
//! arrays and back, following `ak.to_arrow`'s mapping; with `parquet`,
//! `parquet_io::write_parquet`/`parquet_io::read_parquet` write and read Parquet files that
//! `ak.from_parquet` and pyarrow read (and read theirs). awkward 2's metadata rides along both
//! ways, so parameters, tuples and option types come back as they went.

#[cfg(feature = "arrow")]
pub mod arrow;
#[cfg(feature = "arrow")]
mod arrow_meta;
#[cfg(feature = "asdf")]
pub mod asdf_store;
pub mod awkd;
pub mod awkward2;
pub mod awkward2_files;
mod call;
pub mod classes;
pub mod dtype;
mod element;
pub mod error;
pub mod from_buffers;
pub mod layout;
pub mod limits;
pub mod numpy;
#[cfg(feature = "parquet")]
pub mod parquet_io;
mod pickle;
pub mod read;
pub mod store;
pub mod value;
pub mod whitelist;
pub mod write;

pub use array_core::Durability;
#[cfg(feature = "asdf")]
pub use asdf_store::{
    from_asdf, is_awkward_tag, to_asdf, to_asdf_awkward2, AWKWARD0_TAG, AWKWARD2_TAG,
};
pub use awkd::{check_names, save_awkd, AwkdFile, SaveMode};
pub use awkward2::{to_awkward2, Awkward2Buffers};
pub use awkward2_files::{
    read_awkward2_dir, read_awkward2_npz, write_awkward2_dir, write_awkward2_dir_with,
    write_awkward2_npz, write_awkward2_npz_with, METADATA_NAME,
};
pub use dtype::{ByteOrder, DType, Kind, Primitive};
pub use error::{Error, Result};
pub use from_buffers::{
    from_awkward2, from_buffers, parse_form, FromBuffersOptions, DEFAULT_BUFFER_KEY,
};
pub use layout::*;
pub use limits::Limits;
pub use numpy::{Buffer, NumpyArray};
pub use read::{parse_schema_bytes, read_array, read_schema, ReadOptions};
pub use store::{check_blob_name, BlobSink, BlobStore, DirStore, MemoryStore};
pub use value::Value;
pub use whitelist::Whitelist;
pub use write::{
    serialize, to_python_json, write_array, Codec, CompressionPolicy, CompressionRule, Dialect,
    WriteOptions,
};
