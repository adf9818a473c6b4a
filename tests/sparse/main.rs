//! Tests of 2:4 structured sparsity: compression, the selection multiplexers, the sparse clocked core.
//!
//! One test binary for the block (`cargo test --test sparse`); each file below is one
//! subject, and `cargo test --test sparse NAME::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod clocked;
mod compress;
mod input;
mod meta_nibbles;
mod props;
mod select_rtl;
mod ws;
