//! Every integration test of this crate in one test binary: each file of `tests/` is a module
//! here, so the suite links once instead of once per file.

mod corpus;
mod differential;
mod interop_asdf;
mod limits;
mod packed;
mod proptest_roundtrip;
mod resolver_table;
mod tags_and_keys;
