//! Every integration test of this crate in one test binary: each file of `tests/` is a module
//! here, so the suite links once instead of once per file.
//! Files whose tests change process-wide state stay binaries of their own (see Cargo.toml).

mod broken;
mod common;
mod interop;
mod reference_files;
