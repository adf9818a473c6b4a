//! Tests of the memory path: TMA descriptors and boxes, shared memory, GEMMs through TMA (dense, sparse and block-scaled, both dataflows).
//!
//! One test binary for the block (`cargo test --test memory`); each file below is one
//! subject, and `cargo test --test memory NAME::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod gemm_memory;
mod os_tma_mx;
mod os_tma_sizes;
mod port_scopes;
mod roofline;
mod sparse_tma;
mod tma_gpu;
mod tma_props;
mod ws_tma;
mod ws_tma_extras;
