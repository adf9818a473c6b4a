//! The energy of a GEMM run (`docs/energy.md`): what the problem's multipliers and
//! accumulator are, the memory path's events, and [`run`], a run with its switching activity
//! counted and estimated. The command line's `--energy` and the energy study call these.
//!
//! Like the dispatch ([`super::run`]), this file sits above `gemm`'s engines and `sparse`.

use super::{GemmRun, Problem, RunError};
use crate::gemm::memory::MemRun;
use std::sync::Arc;

use crate::energy::{
    self, AccKind, EnergyInputs, EnergyReport, MemoryEvents, MulKind, PowerWeights, Tech,
};
use crate::hw::{Dataflow, MemPortConfig};
use crate::numerics::dot::AccMode;
use crate::rtl::{TraceConfig, TraceFormat};

/// What `problem`'s multipliers multiply, the storage bits of an A and a B element, and its
/// accumulator.
pub fn datapath(problem: &Problem<'_>) -> (MulKind, (u32, u32), AccKind) {
    let cfg = match problem {
        Problem::Dense(g) => g.cfg,
        Problem::Sparse(s) => s.cfg,
        Problem::Mx(g) => g.cfg,
    };
    let (a, b) = (cfg.fmt_a, cfg.fmt_b);
    match (problem, cfg.mode) {
        (_, AccMode::Int(im)) => (
            MulKind::Int {
                a: im.a.bits,
                b: im.b.bits,
            },
            (im.a.bits, im.b.bits),
            AccKind::Int32,
        ),
        // MXINT8 lanes multiply 8-bit integers; the block scales only add exponents.
        (Problem::Mx(g), _) if g.spec.int8() => {
            (MulKind::Int { a: 8, b: 8 }, (8, 8), AccKind::Float(32))
        }
        _ => (
            MulKind::Float {
                p_a: a.frac_bits + 1,
                p_b: b.frac_bits + 1,
                e: a.exp_bits.max(b.exp_bits),
            },
            (a.width(), b.width()),
            AccKind::Float(cfg.acc.width()),
        ),
    }
}

/// The memory path's events of `r`, a run of `problem`: global bytes loaded and stored,
/// shared-memory bytes (the TMA's landing writes and store reads, and the core's operand
/// reads: every 4 x 4 output tile reads its A and B panels, `4 * K` elements each, half of A's
/// when A is 2:4-compressed; elements sit in whole power-of-two bytes, TF32 in 4), and the
/// TMA's requests.
pub fn memory_events(problem: &Problem<'_>, r: &MemRun) -> MemoryEvents {
    let (_, (bits_a, bits_b), _) = datapath(problem);
    let container = |bits: u32| f64::from(bits.div_ceil(8).next_power_of_two());
    let (k, a_fraction) = match problem {
        Problem::Dense(g) => (g.k, 1.0),
        Problem::Sparse(s) => (s.k, 0.5),
        Problem::Mx(g) => (g.k, 1.0),
    };
    let c = &r.counters;
    let panel = 4.0 * k as f64;
    let reads =
        r.run.run.tiles as f64 * panel * (a_fraction * container(bits_a) + container(bits_b));
    MemoryEvents {
        gmem_bytes: c.bytes_loaded + c.bytes_stored,
        smem_bytes: c.tx_bytes + c.bytes_stored + reads.round() as u64,
        smem_capacity: u64::from(r.params.smem_bytes),
        tma_requests: c.requests,
    }
}

/// The estimate of `done`, a run of `problem` whose trace counted activity, with `tech` at
/// `clock_ghz`; `None` when the run counted none.
pub fn estimate(
    problem: &Problem<'_>,
    done: &GemmRun,
    tech: &Tech,
    clock_ghz: f64,
) -> Option<EnergyReport> {
    let activity = done.run.activity.as_ref()?;
    let (mul, operand_bits, acc) = datapath(problem);
    let inputs = EnergyInputs {
        macs: done.run.mac_slots_used,
        cycles: done.run.cycles,
        mul,
        operand_bits,
        acc,
        activity,
        memory: done.memory.as_ref().map(|r| memory_events(problem, r)),
        dataflow: problem.config().dataflow(),
    };
    Some(energy::estimate(&inputs, tech, clock_ghz))
}

/// The trace a run of `problem` with an energy estimate needs: `trace` (a waveform, a SAIF)
/// with every signal's activity counted too, or a counting-only trace. A VCD also gets the
/// power signals (`power.<block>` in watts at `clock_ghz`, [`crate::energy::power`]). The
/// trace asks the core for its energy probes ([`TraceConfig::energy_probes`]: the
/// weight-stationary core's multiplier operands and accumulator adder inputs). A trace
/// narrowed by globs or a window is refused: the estimate needs every signal over the whole
/// run.
pub fn counting_trace(
    trace: Option<&TraceConfig>,
    problem: &Problem<'_>,
    memory: Option<&MemPortConfig>,
    tech: &Tech,
    clock_ghz: f64,
) -> Result<TraceConfig, RunError> {
    let dataflow = problem.config().dataflow();
    let counted = match trace {
        Some(t) if !t.globs.is_empty() || t.window.is_some() => {
            return Err(RunError::NarrowedTrace)
        }
        Some(t) if t.format == TraceFormat::Vcd => {
            let (mul, operand_bits, acc) = datapath(problem);
            let weights = PowerWeights {
                tech: tech.clone(),
                mul,
                operand_bits,
                acc,
                smem_capacity: memory.map_or(0, |m| u64::from(m.params.smem_bytes)),
                clock_ghz,
                dataflow,
            };
            t.clone().count().power(Arc::new(weights))
        }
        Some(t) => t.clone().count(),
        None => counting_only(dataflow),
    };
    Ok(counted.energy_probes())
}

/// The trace an estimate of a `dataflow` core's run needs when no waveform is written: the
/// toggle totals of every register and of the arithmetic units' inputs
/// ([`energy::charged_globs`]), all that [`energy::estimate()`] reads. The other wires are
/// then neither counted nor computed, and each register's toggles are counted at the
/// register itself (`docs/energy.md`, "Cost").
pub fn counting_only(dataflow: Dataflow) -> TraceConfig {
    energy::charged_globs(dataflow)
        .into_iter()
        .fold(TraceConfig::counting().registers(), TraceConfig::glob)
        .energy_probes()
}

/// Runs `problem` as [`super::run`] does, with every signal's toggles counted (beside the
/// waveform `trace` asks for, if any: see [`counting_trace`]), and estimates its energy with
/// `tech` at `clock_ghz`.
pub fn run(
    problem: Problem<'_>,
    memory: Option<&MemPortConfig>,
    trace: Option<&TraceConfig>,
    tech: &Tech,
    clock_ghz: f64,
) -> Result<(GemmRun, EnergyReport), RunError> {
    let counting = counting_trace(trace, &problem, memory, tech, clock_ghz)?;
    let done = super::run(problem, memory, Some(&counting))?;
    let report = estimate(&problem, &done, tech, clock_ghz).ok_or(RunError::NoActivity)?;
    Ok((done, report))
}
