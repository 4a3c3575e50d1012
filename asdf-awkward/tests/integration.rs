//! Every integration test of this crate in one test binary: each file of `tests/` is a module
//! here, so the suite links once instead of once per file.

mod asdf_store;
mod awkward2;
mod awkward2_hostile;
mod common;
mod corpus;
mod interop;
mod materialize;
mod parquet;
mod roundtrip;
mod security;
