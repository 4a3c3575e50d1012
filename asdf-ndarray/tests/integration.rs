//! Every integration test of this crate in one test binary: each file of `tests/` is a module
//! here, so the suite links once instead of once per file.
//! Files whose tests change process-wide state stay binaries of their own (see Cargo.toml).

mod common;
mod interop_python;
mod layouts;
mod limits;
mod prop_layouts;
mod reference_files;
mod whole_block;
