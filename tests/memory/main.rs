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

use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::MemPortConfig;

/// A memory port of `latency` cycles and `bw` bytes a cycle with `stages` stages (0: the
/// automatic count), the other parameters at their defaults.
pub fn pc(latency: u32, bw: u32, stages: usize) -> MemPortConfig {
    MemPortConfig {
        params: MemParams {
            latency,
            bytes_per_cycle: bw,
            ..MemParams::default()
        },
        stages,
        ..MemPortConfig::default()
    }
}
