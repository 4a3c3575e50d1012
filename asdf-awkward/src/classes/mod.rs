//! Every array class, one module each: its struct, its checks, its `Class` implementation
//! (length, children, how awkward0 writes it) and the awkward0 constructors it answers to.
//! awkward 2's classes that awkward0 lacks carry their awkward 2 form and their awkward0
//! stand-in. The numpy leaf lives in [`crate::numpy`].
//!
//! Adding a class: a module here, its `pub use` below, one line in `layout.rs`'s
//! `layout_classes!` list, and its constructors (if awkward0 has any) in `read/dispatch.rs`.

pub mod appendable;
pub mod bit_masked;
pub mod chunked;
pub mod empty;
pub mod indexed;
pub mod indexed_masked;
pub mod jagged;
pub mod masked;
pub mod parameters;
pub mod record;
pub mod regular;
pub mod sparse;
pub mod string;
pub mod table;
pub mod union;
pub mod unmasked;

pub use appendable::AppendableArray;
pub use bit_masked::BitMaskedArray;
pub use chunked::ChunkedArray;
pub use empty::EmptyArray;
pub use indexed::IndexedArray;
pub use indexed_masked::IndexedMaskedArray;
pub use jagged::JaggedArray;
pub use masked::MaskedArray;
pub use parameters::Parameterized;
pub use record::RecordArray;
pub use regular::RegularArray;
pub use sparse::{SparseArray, SparseDefault};
pub use string::StringArray;
pub use table::{Table, TableView};
pub use union::UnionArray;
pub use unmasked::UnmaskedArray;
