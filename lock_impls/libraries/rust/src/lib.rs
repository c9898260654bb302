//! Shared code of the Rust adapters (one binary per library in src/bin).
pub mod protocol;
