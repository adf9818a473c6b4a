//! One entry for every GEMM the clocked tensor core runs: [`run`] takes the problem (dense
//! floating-point or integer in any output format, 2:4 sparse, or block-scaled MX), the memory
//! path (the ideal operand store, or the TMA memory port) and an optional waveform, and picks
//! the engine. The command line, the testbenches and any binding call this one function, so
//! a mode is dispatched in one place.
//!
//! This layer sits above both `gemm`'s engines and `sparse` (whose problem type builds on
//! `gemm`'s): it imports them, and neither imports it. Beside the dispatch: a run's energy
//! ([`energy`]) and the energy study's cases ([`energy_study`]), which run through it. The
//! former paths under `gemm` (`gemm::run`, `gemm::Problem`, `gemm::dispatch`, `gemm::energy`,
//! `gemm::energy_study`) are re-exports of these.

pub mod energy;
pub mod energy_study;
pub mod report;

use crate::gemm::clocked::{run_clocked_measured, ClockedRun, CoreRun};
use crate::gemm::memory::{run_memory, run_memory_mx, MemRun};
use crate::gemm::mx::{run_clocked_mx, MxGemm};
use crate::gemm::problem::Gemm;
use crate::hw::dataflow::is::is_schedule;
use crate::hw::schedule::Schedule;
use crate::hw::ws::WsSchedule;
use crate::hw::{Dataflow, HwError, MemPortConfig};
use crate::rtl::TraceConfig;
use crate::sparse::clocked::sparse_figures;
use crate::sparse::{run_clocked_sparse_measured, run_memory_sparse, SparseGemm};

/// A GEMM problem, by the core mode it needs.
#[derive(Clone, Copy, Debug)]
pub enum Problem<'a> {
    /// Dense A and B: floating-point (any accumulation mode and output format) or integer;
    /// the mode is the problem's `cfg`.
    Dense(&'a Gemm),
    /// A 2:4-sparse A (compressed values and metadata) times a dense B.
    Sparse(&'a SparseGemm),
    /// Block-scaled (MX, NVFP4) A and B with their scales.
    Mx(&'a MxGemm),
}

impl Problem<'_> {
    /// The core configuration the problem runs on.
    pub fn config(&self) -> &crate::hw::CoreConfig {
        match self {
            Problem::Dense(g) => &g.cfg,
            Problem::Sparse(s) => &s.cfg,
            Problem::Mx(g) => &g.cfg,
        }
    }

    /// The cycles the run takes on the ideal path (the schedule's count; the memory path takes
    /// at least these): the figure a waveform's size is estimated from before the run.
    pub fn schedule_cycles(&self) -> u64 {
        match self {
            Problem::Dense(g) if g.cfg.dataflow() == Dataflow::Ws => {
                WsSchedule::for_core(&g.cfg, g.m, g.n, g.k).total_cycles()
            }
            Problem::Dense(g) if g.cfg.dataflow() == Dataflow::Is => {
                is_schedule(&g.cfg, g.m, g.n, g.k).total_cycles()
            }
            Problem::Dense(g) => {
                Schedule::for_core(&g.cfg, g.m, g.n, g.k, g.cfg.block()).total_cycles()
            }
            Problem::Sparse(s) => sparse_figures(s).total_cycles,
            Problem::Mx(g) if g.cfg.dataflow() == Dataflow::Ws => {
                WsSchedule::for_core(&g.cfg, g.m, g.n, g.k).total_cycles()
            }
            Problem::Mx(g) => {
                Schedule::for_core(&g.cfg, g.m, g.n, g.k, g.spec.block()).total_cycles()
            }
        }
    }
}

/// Why a run did not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The core refused the configuration or stopped (watchdog, unsupported width).
    #[error(transparent)]
    Hw(#[from] HwError),
    /// An energy estimate was asked of a run whose trace counted no switching activity.
    #[error("the run counted no switching activity")]
    NoActivity,
    /// An energy estimate needs every signal's toggles over the whole run: a trace narrowed
    /// by globs or a window cannot give them.
    #[error("the energy estimate counts every signal over the whole run: it cannot be combined with a trace narrowed by globs or a window (--trace-glob, --trace-window)")]
    NarrowedTrace,
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct GemmRun {
    /// D, flags, cycles, tiles and utilization.
    pub run: ClockedRun,
    /// The controller's measured phases (dense and sparse runs; `None` for MX).
    pub measured: Option<CoreRun>,
    /// The memory path's counters and layout (with a memory port only).
    pub memory: Option<MemRun>,
}

/// Runs `problem` on the clocked tensor core, its operands served by the ideal store
/// (`memory` = `None`) or through the TMA memory port built as `memory` says, writing the
/// waveform `trace` asks for.
pub fn run(
    problem: Problem<'_>,
    memory: Option<&MemPortConfig>,
    trace: Option<&TraceConfig>,
) -> Result<GemmRun, RunError> {
    let (measured, memory) = match (problem, memory) {
        (Problem::Mx(g), Some(pc)) => {
            let r = run_memory_mx(g, pc, trace)?;
            return Ok(GemmRun {
                run: r.run.run.clone(),
                measured: None,
                memory: Some(r),
            });
        }
        (Problem::Mx(g), None) => {
            return Ok(GemmRun {
                run: run_clocked_mx(g, trace)?,
                measured: None,
                memory: None,
            })
        }
        (Problem::Dense(g), None) => (run_clocked_measured(g, trace)?, None),
        (Problem::Dense(g), Some(pc)) => {
            let r = run_memory(g, pc, trace)?;
            (r.run.clone(), Some(r))
        }
        (Problem::Sparse(s), None) => (run_clocked_sparse_measured(s, trace)?, None),
        (Problem::Sparse(s), Some(pc)) => {
            let r = run_memory_sparse(s, pc, trace)?;
            (r.run.clone(), Some(r))
        }
    };
    Ok(GemmRun {
        run: measured.run.clone(),
        measured: Some(measured),
        memory,
    })
}
