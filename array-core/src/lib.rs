//! The element-type vocabulary under every format crate of this workspace.
//!
//! `asdf-ndarray`, `rawarray`, `asdf-awkward` and `asdftool` describe the values they store with
//! the same words, defined once here:
//!
//! * [`ScalarType`] — every scalar a supported format can store, with its ASDF name, size, the
//!   unit byte swapping reverses and its NumPy type code;
//! * [`ByteOrder`] — little or big endian;
//! * [`TypeStr`] — NumPy's array-interface type strings (`"<f8"`, `"|S7"`, `">U3"`), parsed
//!   and formatted;
//! * [`Pod`] and the checked casts between plain values and bytes ([`bytes_of`],
//!   [`bytes_of_mut`], [`cast_slice`]) and [`swap_bytes`];
//! * [`zeroed_vec`] — fallible, lazily zeroed buffers backed by transparent huge pages when
//!   large ([`advise_huge_pages`]);
//! * [`AtomicFile`] — the crash-safe writer every `save` goes through;
//! * [`read_exact_at_parallel`] — large reads from a file spread over the cores;
//! * [`bounds`] — how far each codec can expand its input, checked before allocating.
//!
//! The crate has no format knowledge and depends only on `half`, `num-complex` and `thiserror`,
//! so `rawarray` and `asdf-awkward` stay usable without the ASDF stack.
//!
//! ```
//! use array_core::{ByteOrder, ScalarType, TypeStr};
//! let t = TypeStr::parse(">f8").unwrap();
//! assert_eq!(t.scalar_type(), Some(ScalarType::Float64));
//! assert_eq!(t.order, Some(ByteOrder::Big));
//! assert_eq!(ScalarType::from_name("uint16").unwrap().size(), 2);
//! ```

mod atomic;
pub mod bounds;
mod buffer;
mod byteorder;
mod counting;
mod pod;
mod read;
mod scalar;
mod typestr;

pub use atomic::{AtomicBatch, AtomicError, AtomicFile, AtomicWriter, Durability, WritebackFile};
pub use buffer::{advise_huge_pages, fill_prefaulted, zeroed_vec, AllocError};
pub use byteorder::ByteOrder;
pub use counting::CountingWriter;
pub use pod::{bytes_of, bytes_of_mut, cast_slice, swap_bytes, CastError, Pod, Zeroable};
pub use read::read_exact_at_parallel;
pub use scalar::ScalarType;
pub use typestr::{TypeStr, TypeStrElement, TypeStrError};
