//! The clocked 2:4 sparse GEMM: a [`SparseGemm`] on the tensor core in sparse mode
//! ([`crate::hw::SparseTileBuffer`]: metadata registers travelling with A, B-side
//! multiplexers in every PE). Its D equals [`super::run_functional_sparse`] bit for bit
//! (`tests/sparse/clocked.rs`); a tile's compute phase takes `ceil((K / 2) / w)` steps against
//! the dense `ceil(K / w)`.

use super::problem::SparseGemm;
use crate::gemm::clocked::{run_feeder, run_ws_feeder, ClockedRun, CoreRun};
use crate::hw::ws::WsSchedule;
use crate::hw::{Dataflow, HwError, Schedule, SparseTileBuffer};
use crate::rtl::TraceConfig;

/// Runs `g` on the clocked tensor core in 2:4 sparse mode, optionally tracing.
pub fn run_clocked_sparse(
    g: &SparseGemm,
    trace: Option<&TraceConfig>,
) -> Result<ClockedRun, HwError> {
    run_clocked_sparse_measured(g, trace).map(|r| r.run)
}

/// [`run_clocked_sparse`] plus the measured first-tile latency and compute-phase cycles.
pub fn run_clocked_sparse_measured(
    g: &SparseGemm,
    trace: Option<&TraceConfig>,
) -> Result<CoreRun, HwError> {
    crate::hw::dispatch_width!(g.cfg.width, W => run_w::<W>(g, trace))
}

/// The sparse operand feeder holding `g` (compressed A, metadata, B, C).
pub fn tile_buffer(g: &SparseGemm) -> Result<SparseTileBuffer, HwError> {
    SparseTileBuffer::new(
        g.cfg,
        g.m,
        g.n,
        g.k,
        g.a.values().to_vec(),
        g.a.meta().to_vec(),
        g.b.clone(),
        g.c.clone(),
    )
}

fn run_w<const W: usize>(g: &SparseGemm, trace: Option<&TraceConfig>) -> Result<CoreRun, HwError> {
    let buf = tile_buffer(g)?;
    match g.cfg.dataflow() {
        Dataflow::Os => run_feeder::<W, _>(g.cfg, buf, g.macs(), trace),
        Dataflow::Ws => run_ws_feeder::<W, _>(g.cfg, buf, g.macs(), trace),
        Dataflow::Is => Err(crate::hw::dataflow::is::unsupported("a 2:4 sparse GEMM")),
    }
}

/// What a sparse run is compared with, in its dataflow's terms: steps (output-stationary:
/// steps a tile; weight-stationary: folds of K, the passes each block of D takes) and the
/// cycles of the same problem run dense, from the schedule formulas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SparseFigures {
    /// Steps (os) or folds (ws) of the `K / 2` kept positions.
    pub steps: usize,
    /// The same of the dense `K`.
    pub dense_steps: usize,
    /// The cycles the sparse run takes (the schedule's count).
    pub total_cycles: u64,
    /// Cycles the dense run spends feeding the array (os: `Compute`; ws: rows fed).
    pub dense_compute_cycles: u64,
    /// Cycles the dense run takes.
    pub dense_total_cycles: u64,
}

/// The [`SparseFigures`] of `g` in its configured dataflow.
pub fn sparse_figures(g: &SparseGemm) -> SparseFigures {
    match g.cfg.dataflow() {
        Dataflow::Os => {
            let (ss, ds) = (sparse_schedule(g), dense_schedule(g));
            SparseFigures {
                steps: ss.steps,
                dense_steps: ds.steps,
                total_cycles: ss.total_cycles(),
                dense_compute_cycles: compute_cycles(&ds),
                dense_total_cycles: ds.total_cycles(),
            }
        }
        // (`is` runs no sparse GEMM: its figures would be `ws`'s of the transposed problem.)
        Dataflow::Ws | Dataflow::Is => {
            let ss = WsSchedule::for_core(&g.cfg, g.m, g.n, g.k / 2);
            let ds = WsSchedule::for_core(&g.cfg, g.m, g.n, g.k);
            SparseFigures {
                steps: ss.folds,
                dense_steps: ds.folds,
                total_cycles: ss.total_cycles(),
                dense_compute_cycles: ws_feed_cycles(&ds),
                dense_total_cycles: ds.total_cycles(),
            }
        }
    }
}

/// Cycles a weight-stationary run feeds rows of A under `s`: every pass's rows, one a cycle.
pub fn ws_feed_cycles(s: &WsSchedule) -> u64 {
    (0..s.passes()).map(|p| s.pass(p).rows as u64).sum()
}

/// The schedule the sparse run follows: the dense schedule of `K / 2` kept positions
/// (`steps = ceil((K / 2) / w)`, NVIDIA blocks of `n` kept products).
pub fn sparse_schedule(g: &SparseGemm) -> Schedule {
    Schedule::for_core(&g.cfg, g.m, g.n, g.k / 2, block(g))
}

/// The schedule of the same problem run dense (the decompressed A, `steps = ceil(K / w)`):
/// the comparison for the sparse speed-up.
pub fn dense_schedule(g: &SparseGemm) -> Schedule {
    Schedule::for_core(&g.cfg, g.m, g.n, g.k, block(g))
}

/// Cycles the controller spends in `Compute` under `s`: tiles are fed back to back, one step
/// a cycle, `period` cycles apart, the last tile's `steps` ending the phase.
pub fn compute_cycles(s: &Schedule) -> u64 {
    ((s.tiles() - 1) * s.period + s.steps) as u64
}

fn block(g: &SparseGemm) -> usize {
    g.cfg.block()
}
