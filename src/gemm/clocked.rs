//! The clocked GEMM: the problem tiled onto the 4 x 4 tensor core ([`crate::hw`]) and run
//! cycle by cycle on the cycle engine. Its result equals [`super::run_functional`] bit for
//! bit (tested in `tests/hw/gemm.rs`); its cycle count follows `docs/timing.md`.

use std::time::Instant;

use super::problem::{Gemm, GemmOutput};
use crate::hw::core::{CoreTop, Edge, RunMonitors};
use crate::hw::dataflow::is::{Inputs, IsSupply};
use crate::hw::ws::{WsCore, WsExtras, WsSupply};
use crate::hw::{
    CoreConfig, DRow, Dataflow, HwError, IdealPort, OperandFeeder, Schedule, TensorCore,
    TileBuffer, Traffic,
};
use crate::numerics::flags::Flags;
use crate::rtl::{ActivityReport, Simulator, TraceConfig};

/// The outcome of a clocked run.
#[derive(Clone, Debug, PartialEq)]
pub struct ClockedRun {
    /// D and the OR of the IEEE flags.
    pub out: GemmOutput,
    /// Cycles from leaving `Idle` to `Done` (reset cycles not counted).
    pub cycles: u64,
    /// Number of 4 x 4 output tiles.
    pub tiles: usize,
    /// Useful multiply-accumulate slots: `M * N * K`.
    pub mac_slots_used: u64,
    /// Offered slots: `cycles * R * C * w`.
    pub mac_slots_offered: u64,
    /// Wall-clock seconds the simulation loop took.
    pub sim_seconds: f64,
    /// The switching activity, when the run's trace counted it
    /// ([`crate::rtl::TraceConfig::counts_activity`]).
    pub activity: Option<ActivityReport>,
    /// What the array read from the operand store and wrote as D, measured during the run
    /// (a dense run on the ideal store; `None` where the store does not count, e.g. the TMA
    /// memory port, sparse and MX runs).
    pub traffic: Option<Traffic>,
}

impl ClockedRun {
    /// Useful MAC slots / offered slots.
    pub fn utilization(&self) -> f64 {
        if self.mac_slots_offered == 0 {
            0.0
        } else {
            self.mac_slots_used as f64 / self.mac_slots_offered as f64
        }
    }

    /// Simulated cycles per wall-clock second.
    pub fn cycles_per_second(&self) -> f64 {
        if self.sim_seconds > 0.0 {
            self.cycles as f64 / self.sim_seconds
        } else {
            0.0
        }
    }
}

/// One 4 x 4 tile's compute latency for `k`: `T + R + C - 2 + L` with `T = ceil(k / w)`
/// and `L` = [`crate::hw::PIPELINE_LATENCY`].
pub fn tile_cycles(cfg: &CoreConfig, k: usize) -> u64 {
    Schedule::for_core(cfg, cfg.rows(), cfg.cols(), k.max(1), 0).tile_cycles()
}

/// What one clocked run measured beyond [`ClockedRun`].
#[derive(Clone, Debug, PartialEq)]
pub struct CoreRun {
    /// The run.
    pub run: ClockedRun,
    /// Cycles from feeding tile 0's first step to the bottom-right PE's last accumulator
    /// write of tile 0, inclusive (measured; compare [`tile_cycles`]).
    pub first_tile_cycles: u64,
    /// Cycles the controller spent in `Compute` (feeding tiles; measured).
    pub compute_cycles: u64,
    /// Cycles the controller was ready for a step the operand port did not have (0 on the
    /// ideal port).
    pub stall_cycles: u64,
    /// Cycles in which a step was taken while loads were in flight behind the port (memory
    /// overlapping compute; 0 on the ideal port).
    pub overlap_cycles: u64,
    /// Cycles a due shift window waited for the port (C not loaded, or no room for the
    /// results; 0 on the ideal port).
    pub window_wait_cycles: u64,
    /// Bytes the array's operand reads took from shared memory (A, B, C and a sparse A's
    /// metadata; 0 on the ideal port): a monitor summing, every cycle, the bytes in shared
    /// memory's read-data register.
    pub smem_read_bytes: u64,
}

/// Runs `g` on the clocked tensor core, optionally tracing.
pub fn run_clocked(g: &Gemm, trace: Option<&TraceConfig>) -> Result<ClockedRun, HwError> {
    run_clocked_measured(g, trace).map(|r| r.run)
}

/// [`run_clocked`] plus the measured first-tile latency.
pub fn run_clocked_measured(g: &Gemm, trace: Option<&TraceConfig>) -> Result<CoreRun, HwError> {
    crate::hw::dispatch_width!(g.cfg.width, W => run_w::<W>(g, trace))
}

fn run_w<const W: usize>(g: &Gemm, trace: Option<&TraceConfig>) -> Result<CoreRun, HwError> {
    let cfg = g.cfg;
    let buf = TileBuffer::new(cfg, g.m, g.n, g.k, g.a.clone(), g.b.clone(), g.c.clone())?;
    match cfg.dataflow() {
        Dataflow::Os => run_feeder::<W, _>(cfg, buf, g.macs(), trace),
        Dataflow::Ws => run_ws_feeder::<W, _>(cfg, buf, g.macs(), trace),
        Dataflow::Is => {
            let supply = IsSupply::new::<W>(&cfg, buf, (g.m, g.n, g.k), g.c.clone());
            run_is_feeder::<W, _>(cfg, supply, g.macs(), trace)
        }
    }
}

/// Places row `row` of D (its output tile's origin `origin`) into the row-major `m x n`
/// matrix `d`, dropping the words outside it; returns the words placed.
fn place_row(
    d: &mut [u32],
    (m, n): (usize, usize),
    (r0, c0): (usize, usize),
    row: &DRow<'_>,
) -> u64 {
    let i = r0 + row.row;
    let mut words = 0;
    if i < m {
        for (j, v) in row.values.iter().enumerate() {
            if c0 + j < n {
                d[i * n + c0 + j] = *v;
                words += 1;
            }
        }
    }
    words
}

/// The transpose of the row-major `rows x cols` matrix `t`.
fn transpose(t: &[u32], rows: usize, cols: usize) -> Vec<u32> {
    let mut out = vec![0u32; t.len()];
    for (i, row) in t.chunks_exact(cols.max(1)).enumerate() {
        for (j, &v) in row.iter().enumerate() {
            out[j * rows + i] = v;
        }
    }
    out
}

/// The store's count of A, B and C with the runner's count of D words (`d_words` words of
/// the accumulator format).
fn with_d(store: Option<Traffic>, cfg: &CoreConfig, d_words: u64) -> Option<Traffic> {
    store.map(|t| Traffic {
        d_write_bits: d_words * u64::from(cfg.acc.width()),
        ..t
    })
}

/// Runs the weight-stationary core built for `cfg` (dataflow `ws`, `cfg.width` = `W`) over
/// any operand store (dense or 2:4 sparse) until `Done`, collecting D; `macs` as for
/// [`run_feeder`].
pub fn run_ws_feeder<const W: usize, F: WsSupply<W>>(
    cfg: CoreConfig,
    feeder: F,
    macs: u64,
    trace: Option<&TraceConfig>,
) -> Result<CoreRun, HwError>
where
    F::Extras: WsExtras<W>,
{
    run_scheduled(WsCore::<W, F>::new(cfg, feeder)?, macs, trace)
}

/// Runs the input-stationary core built for `cfg` (dataflow `is`, `cfg.width` = `W`) over an
/// operand store seen in its transposed view ([`IsSupply`]) until `Done`, collecting D (the
/// run loop transposes the columns of D the array delivers); `macs` as for [`run_feeder`].
pub fn run_is_feeder<const W: usize, F: WsSupply<W>>(
    cfg: CoreConfig,
    feeder: F,
    macs: u64,
    trace: Option<&TraceConfig>,
) -> Result<CoreRun, HwError>
where
    F::Extras: WsExtras<W>,
{
    run_scheduled(WsCore::<W, F, Inputs>::new(cfg, feeder)?, macs, trace)
}

/// Runs the tensor core built for `cfg` (`cfg.width` must equal `W`) on any operand feeder
/// behind the zero-latency [`IdealPort`] until `Done`, collecting D; `macs` is the useful
/// multiply-accumulates of the problem (for the utilisation). The loop behind
/// [`run_clocked`] and `sparse::run_clocked_sparse`.
pub fn run_feeder<const W: usize, F: OperandFeeder<W>>(
    cfg: CoreConfig,
    feeder: F,
    macs: u64,
    trace: Option<&TraceConfig>,
) -> Result<CoreRun, HwError> {
    run_scheduled(
        TensorCore::<W, IdealPort<F>>::with_feeder(cfg, feeder)?,
        macs,
        trace,
    )
}

/// Runs a built core of any dataflow with its schedule's cycle count (plus a margin) as the
/// limit and the default watchdog (a testbench may build the core itself, e.g. to set its
/// evaluation order).
pub fn run_scheduled<T: CoreTop>(
    core: T,
    macs: u64,
    trace: Option<&TraceConfig>,
) -> Result<CoreRun, HwError> {
    let limit = core.scheduled_cycles() + 16;
    run_core(core, macs, limit, 1000, trace).map(|(run, _)| run)
}

/// The run loop of every core: runs a built core of any dataflow ([`CoreTop`]) with any
/// operand supply until `Done`, collecting D from its output register: at most `limit`
/// cycles, with the engine's watchdog set to `watchdog` cycles without progress. An error the
/// supply latches (a memory-system misuse) stops the run with the cycle it names. A trace
/// that asks for energy probes ([`TraceConfig::energy_probes`]) gets the core's
/// ([`CoreTop::set_energy_probes`]). Returns the run and the core (for the supply's own
/// results).
pub fn run_core<T: CoreTop>(
    mut core: T,
    macs: u64,
    limit: u64,
    watchdog: u64,
    trace: Option<&TraceConfig>,
) -> Result<(CoreRun, T), HwError> {
    // An energy estimate's trace asks for the probes (the multipliers' and the accumulator
    // adders' inputs); any other run keeps its waves.
    if trace.is_some_and(|t| t.probes) {
        core.set_energy_probes(true);
    }
    let (m, n, _) = core.dims();
    let cfg = *core.config();
    let tiles = core.output_tiles();
    let mut sim = match trace {
        Some(t) => Simulator::with_trace(core, t)?,
        None => Simulator::new(core)?,
    };
    sim.set_watchdog(watchdog);
    let t0 = Instant::now();
    sim.reset(1)?;
    sim.top_mut().start();
    sim.step()?; // Idle -> the first working state
    let mut d = vec![0u32; m * n];
    let mut d_words = 0u64;
    let mut cycles = 0u64;
    let mut smem_read_bytes = 0u64;
    let mut monitors = RunMonitors::default();
    while !sim.top().is_done() {
        if cycles > limit {
            return Err(HwError::Timeout(limit));
        }
        sim.top().monitor_edge(Edge::Before, &mut monitors);
        sim.step()?;
        cycles += 1;
        let top = sim.top();
        if let Some(e) = top.error() {
            return Err(HwError::Memory(e));
        }
        smem_read_bytes += top.smem_read_bytes();
        top.monitor_edge(Edge::After, &mut monitors);
        if let Some(row) = top.d_row() {
            d_words += place_row(&mut d, (m, n), top.tile_origin(row.tile), &row);
        }
    }
    if let Some(pe) = sim.top().hazard() {
        return Err(HwError::Hazard { pe });
    }
    if sim.top().d_columns() {
        // The array delivered D^T (n x m, row-major): D is its transpose.
        d = transpose(&d, m, n);
    }
    let flags: Flags = sim.top().flags();
    sim.top().monitor_end(&mut monitors);
    // One more clock in Done, so the waveform ends on the final state (not counted in
    // `cycles`: the result was complete at the previous edge).
    sim.step()?;
    let (top, summary) = sim.finish()?;
    let sim_seconds = t0.elapsed().as_secs_f64();
    let offered = cycles * (cfg.rows() * cfg.cols() * cfg.width) as u64;
    let traffic = with_d(top.traffic(), &cfg, d_words);
    Ok((
        CoreRun {
            run: ClockedRun {
                out: GemmOutput { d, flags },
                cycles,
                tiles,
                mac_slots_used: macs,
                mac_slots_offered: offered,
                sim_seconds,
                activity: summary.and_then(|s| s.activity),
                traffic,
            },
            first_tile_cycles: monitors.first_tile_cycles.unwrap_or(0),
            compute_cycles: monitors.compute_cycles,
            stall_cycles: monitors.stall_cycles,
            overlap_cycles: monitors.overlap_cycles,
            window_wait_cycles: monitors.window_wait_cycles,
            smem_read_bytes,
        },
        top,
    ))
}
