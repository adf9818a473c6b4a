//! Tests of block-scaled (MX, NVFP4, MXINT8) dot products and the MX tensor core.
//!
//! One test binary for the block (`cargo test --test mx`); each file below is one
//! subject, and `cargo test --test mx NAME::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod block_accumulator;
mod core;
mod core_nvfp4_int8;
mod dot;
mod gemm_problem;
mod is;
mod ws;
