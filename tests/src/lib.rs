//! Cross-crate robustness tests for the ASDF workspace (no library code).
//!
//! The tests live in `tests/`: the corrupted-file sweep over every corpus file and every reader,
//! crash safety of every atomic writer, and concurrent readers and writers.
