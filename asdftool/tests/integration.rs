//! Every integration test of this crate in one test binary: each file of `tests/` is a module
//! here, so the suite links once instead of once per file.

mod astro;
mod awkward2;
mod cli;
mod common;
mod corrupt;
mod edit;
mod external;
mod fits;
mod hostile;
mod interop;
mod real_consumers;
mod remote;
mod rewrite_keeps;
mod roman;
mod salvage;
mod signals;
mod validate;
