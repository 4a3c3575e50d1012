//! Read and write RawArray (`.ra`) files: every variant real writers produced, typed or
//! dynamic, streaming or memory-mapped, with checked arithmetic and typed errors instead of
//! panics.
//!
//! # The format
//!
//! A 48-byte header of little-endian `u64`s (magic `rawarray`, flags, eltype, elbyte, size,
//! ndims), then `ndims` dims (first fastest: column-major), then `size` bytes of data, then any
//! trailing "volatile metadata", which is kept ([`RawArray::trailer`]) and never an error.
//!
//! Supported: every eltype (ints and uints up to 128 bits, `f16`/`f32`/`f64`, complex of
//! `f16`/`f32`/`f64`, bfloat16 and Julia `Bool` for eltype 5 told apart by `elbyte`, user
//! records as bytes or [`Pod`] structs); flag bit 0 (big-endian data, swapped on read, either
//! order on write); flag bit 1 in both meanings (the C library's raw LZ4 block and RawArray.jl's
//! LEB128/zigzag varints, told apart strictly); flag bit 2 (Julia's packed `BitArray`); the
//! historical files without magic or with Matlab's rounded magic (with a [`Warning`]); headers
//! written by native writers on big-endian hosts. Unknown flag bits are an error.
//!
//! # Examples
//!
//! Typed reading and writing through any `Read`/`Write`:
//!
//! ```
//! use num_complex::Complex32;
//! let data: Vec<Complex32> = (0..12).map(|k| Complex32::new(k as f32, -1.0 / k as f32)).collect();
//! let bytes = rawarray::to_bytes(&data, &[3, 4], &Default::default()).unwrap();
//! assert_eq!(&bytes[..8], b"rawarray");
//! let (back, info) = rawarray::read_vec::<Complex32, _>(&bytes[..], &Default::default()).unwrap();
//! assert_eq!(info.dims(), [3, 4]);
//! assert_eq!(back[1], Complex32::new(1.0, -1.0));
//! ```
//!
//! Dynamic reading, when the element type is not known in advance:
//!
//! ```
//! use rawarray::{ElementKind, RawArray, ReadOptions};
//! let bytes = rawarray::to_bytes(&[true, false, true], &[3], &Default::default()).unwrap();
//! let a = RawArray::from_slice(&bytes, &ReadOptions::default()).unwrap();
//! match a.kind() {
//!     ElementKind::Bool => assert_eq!(a.to_vec::<bool>().unwrap(), [true, false, true]),
//!     other => panic!("unexpected {other}"),
//! }
//! ```
//!
//! With the default `ndarray` feature, arrays keep the column-major shape Julia, Matlab and C
//! users expect (`a[[i, j]]` is their `a[i, j]`):
//!
//! ```
//! # #[cfg(feature = "ndarray")] {
//! use ndarray::array;
//! let a = array![[1u8, 2, 3], [4, 5, 6]];
//! let mut bytes = Vec::new();
//! rawarray::write_array(&mut bytes, &a, &Default::default()).unwrap();
//! assert_eq!(&bytes[64..], [1, 4, 2, 5, 3, 6]); // column-major on disk
//! let v = rawarray::view_array::<u8>(&bytes).unwrap(); // zero-copy
//! assert_eq!(v, a.into_dyn());
//! # }
//! ```
//!
//! # Features
//!
//! * `ndarray` (default): `ArrayD` reads, `ArrayBase` writes, `ArrayView`s.
//! * `mmap` (default): [`MappedRawArray`] over `memmap2`.

mod array;
pub mod asdf;
pub mod codec;
mod element;
mod error;
mod header;
mod kind;
#[cfg(feature = "mmap")]
mod mmap;
#[cfg(feature = "ndarray")]
mod nd;
mod read;
mod view;
mod write;

pub use array::RawArray;
pub use array_core::Durability;
pub use element::{Element, Pod};
pub use error::{Error, Result, ViewError};
pub use header::{
    read_header, Header, Layout, Limits, ParsedHeader, FLAG_BIG_ENDIAN, FLAG_BITS, FLAG_COMPRESSED,
    KNOWN_FLAGS, MAGIC, MAGIC_BYTES, MATLAB_ROUNDED_MAGIC,
};
pub use kind::{
    ByteOrder, ElementKind, ELTYPE_BOOL_OR_BF16, ELTYPE_COMPLEX, ELTYPE_FLOAT, ELTYPE_INT,
    ELTYPE_UINT, ELTYPE_USER,
};
#[cfg(feature = "mmap")]
pub use mmap::MappedRawArray;
#[cfg(feature = "ndarray")]
pub use nd::{
    open_array, read_array, save_array, view_array, write_array, ReadRaExt, ViewRaExt, WriteRaExt,
};
pub use read::{read_vec, CompressedMeaning, Encoding, FileInfo, ReadOptions, Warning};
pub use view::{locate, view_records, view_slice, DataLocation};
pub use write::{
    save, to_bytes, write_file_atomic, write_slice, BoolEltype, WriteEncoding, WriteOptions,
};

/// Reads the file at `path` as elements of type `T` (column-major), with default options.
///
/// ```no_run
/// let (v, info) = rawarray::open_vec::<f64, _>("phantom.ra").unwrap();
/// println!("{} values, dims {:?}", v.len(), info.dims());
/// ```
pub fn open_vec<T: Element, P: AsRef<std::path::Path>>(path: P) -> Result<(Vec<T>, FileInfo)> {
    let f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    read::read_vec_sized(
        std::io::BufReader::with_capacity(1 << 16, f),
        &ReadOptions::default(),
        Some(len),
    )
}
