//! Every integration test of this crate in one test binary: each file of `tests/` is a module
//! here, so the suite links once instead of once per file.

mod common;
mod concurrency;
mod crash;
mod fuzz_regressions;
mod limits;
mod sweep;
