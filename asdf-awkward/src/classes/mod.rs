//! Classes awkward 2 has and awkward0 does not, one module each (the struct, its checks, element
//! access, its awkward 2 form in both directions, and how it is written in awkward0's schema).
//!
//! awkward0's own classes live in [`crate::layout`]; these complete the model so that every
//! awkward 2 form (`ak.forms`) has a layout it reads into.

pub mod empty;
pub mod parameters;
pub mod record;
pub mod regular;
pub mod unmasked;

pub use empty::EmptyArray;
pub use parameters::Parameterized;
pub use record::RecordArray;
pub use regular::RegularArray;
pub use unmasked::UnmaskedArray;
