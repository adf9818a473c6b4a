//! The roofline of a GEMM through the memory path: how much of the array's peak the link to
//! global memory can feed (`docs/memory.md`, `docs/performance.md`).
//!
//! The arithmetic intensity AI is the problem's multiply-accumulates per byte the run moved
//! (loads and stores together, so re-fetched operand tiles count). The link moves at most
//! `min(bytes_per_cycle, request_bytes)` bytes a cycle, which feeds `AI x bandwidth` MACs a
//! cycle; the array does at most `rows x cols x w` a cycle. The bound on utilization is the
//! smaller of the two over the peak: `min(1, AI x bandwidth / peak)`.

use super::memory::MemRun;
use super::problem::Gemm;
use crate::hw::memory::MemParams;
use crate::hw::CoreConfig;

/// The roofline figures of one run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Roofline {
    /// MACs per byte moved between global memory and shared memory.
    pub arithmetic_intensity: f64,
    /// The highest utilization (0..=1) the link allows at that intensity.
    pub bound: f64,
}

/// The array's peak: MACs a cycle of the `rows x cols` mesh of a core built for `cfg`, with
/// `cfg.width` products per PE step.
pub fn peak_macs_per_cycle(cfg: &CoreConfig) -> f64 {
    (cfg.rows() * cfg.cols() * cfg.width) as f64
}

/// MACs per byte moved (`macs / bytes_moved`; infinite when nothing moved).
pub fn arithmetic_intensity(macs: u64, bytes_moved: u64) -> f64 {
    macs as f64 / bytes_moved as f64
}

/// The bytes a cycle the link delivers: the bandwidth, capped by one request's size (a
/// request is the most one cycle can return).
pub fn link_bytes_per_cycle(params: &MemParams) -> f64 {
    f64::from(params.bytes_per_cycle.min(params.request_bytes))
}

/// The roofline bound `min(1, intensity x bytes_per_cycle / peak)`.
pub fn bound(intensity: f64, bytes_per_cycle: f64, peak: f64) -> f64 {
    (intensity * bytes_per_cycle / peak).min(1.0)
}

/// The roofline of the memory-path run `run` of the problem `g`.
pub fn of_run(g: &Gemm, run: &MemRun) -> Roofline {
    let moved = run.counters.bytes_loaded + run.counters.bytes_stored;
    let ai = arithmetic_intensity(g.macs(), moved);
    Roofline {
        arithmetic_intensity: ai,
        bound: bound(
            ai,
            link_bytes_per_cycle(&run.params),
            peak_macs_per_cycle(&g.cfg),
        ),
    }
}
