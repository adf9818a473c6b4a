//! Tests of the memory path: TMA descriptors and boxes, shared memory, GEMMs through TMA (dense, sparse and block-scaled, both dataflows).
//!
//! One test binary for the block (`cargo test --test memory`); each file below is one
//! subject, and `cargo test --test memory NAME::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod clients;
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

/// Every array size of issue 21's set: every R, C in 1..=8, and 16 x 16, 1 x 32, 32 x 1,
/// 32 x 32.
pub fn sizes() -> Vec<(usize, usize)> {
    let mut v: Vec<(usize, usize)> = (1..=8).flat_map(|r| (1..=8).map(move |c| (r, c))).collect();
    v.extend([(16, 16), (1, 32), (32, 1), (32, 32)]);
    v
}

/// Every size (`all`), or every third of the `1..=8` grid and the large ones, with its index.
pub fn sample(all: bool) -> impl Iterator<Item = (usize, (usize, usize))> {
    sizes()
        .into_iter()
        .enumerate()
        .filter(move |&(s, (r, c))| all || s % 3 == 0 || r > 8 || c > 8)
}
