//! # asdf-ndarray
//!
//! ASDF `core/ndarray-1.0.0`/`1.1.0` nodes (and ASDF.jl's non-standard
//! `core/chunked-ndarray-1.0.0`) as [`ndarray::ArrayD`] values, and arrays back into nodes plus
//! blocks. Builds on `asdf-block` (block bytes) and `asdf-yaml` (the tree); knows nothing of
//! file headers.
//!
//! * [`Datatype`]: every scalar (`int8`…`uint64`, `float16`…`float64`, `complex64/128`,
//!   `bool8`, and ASDF.jl's `int128`/`uint128`/`complex32` for reading), `[ascii, N]`,
//!   `[ucs4, N]` and records (nested, with sub-array shapes and per-field byte order).
//! * [`NdArrayMeta`]: a parsed ndarray node (`source`, inline `data`, `shape` with a streamed
//!   `'*'`, `byteorder`, `offset`, `strides`, `mask`). Every offset/stride/shape combination is
//!   checked against the block length before any byte is read.
//! * Reading through a [`BlockStore`] (implemented for [`asdf_block::BlockReader`]):
//!   [`NdArrayMeta::array`] (typed copy, bytes swapped during the copy),
//!   [`NdArrayMeta::view`] (zero-copy over the memory map when the layout allows, never
//!   undefined behaviour on misaligned data), [`NdArrayMeta::read`] ([`AnyArray`]),
//!   [`NdArrayMeta::strings`], [`NdArrayMeta::records`] ([`RecordArray`]),
//!   [`NdArrayMeta::read_masked`].
//! * Writing: [`ArrayWriter`] turns any `ndarray::ArrayBase` into a node and pending blocks
//!   (inline or block storage, compression, byte order, external files, views sharing a base
//!   block, chunked arrays).
//! * [`ChunkedArray`]: chunked ndarrays, read whole or by region (only the touched chunks are
//!   decoded, in parallel).
//! * [`ZarrArray`]: asdf-zarr's zarr v2 arrays whose chunks are blocks of the file, read whole
//!   or by region (only the touched chunks are read and decoded).
//! * [`BigInteger`] (`core/integer-1.0.0/1.1.0`) and complex scalars ([`parse_complex`]).
//!
//! ```
//! use asdf_ndarray::{ArrayWriter, NdArrayMeta, StoreOptions};
//! use ndarray::array;
//! let a = array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]];
//! let mut w = ArrayWriter::new();
//! let node = w.add(&a.t(), &StoreOptions::default()).unwrap();     // Fortran-order view
//! let store = w.memory_store();                                     // the blocks, in memory
//! let back = NdArrayMeta::from_node(&node).unwrap().array::<f64>(&store).unwrap();
//! assert_eq!(back, a.t().into_dyn());
//! ```

mod any;
mod chunked;
mod complex;
mod datatype;
mod element;
mod error;
mod integer;
mod layout;
mod meta;
mod read;
mod record;
mod region;
mod store;
mod values;
mod write;
mod zarr;

pub use any::AnyArray;
pub use chunked::{Chunk, ChunkedArray, CHUNKED_TAG, CHUNK_TAG};
pub use complex::{complex_from_node, complex_node, format_complex, parse_complex, COMPLEX_TAG};
pub use datatype::{ByteOrder, Datatype, Field, ScalarType};
pub use element::Element;
pub use error::{NdError, Result};
pub use integer::{BigInteger, INTEGER_TAG};
pub use meta::{
    is_ndarray_tag, Mask, NdArrayMeta, ReadLimits, Source, MAX_NDIM, NDARRAY_TAG,
    NDARRAY_TAG_PREFIX,
};
pub use record::RecordArray;
pub use region::{check_region, slice_region};
pub use store::{direct_len, BlockStore, NoBlocks};
pub use values::infer_datatype;
pub use write::{ArrayWriter, BlockBytes, MemoryStore, PendingBlock, Storage, StoreOptions};
pub use zarr::{
    external_store_location, is_remote_store, is_zarr_tag, ChunkMap, ZarrArray, ZarrStorage,
    MAX_CHUNK_FILES, ZARR_TAG_PREFIX,
};
