//! The GEMM through the memory path: A, B and C start in the global-memory model, tiles travel
//! by TMA into shared-memory stages, the memory-fed port ([`crate::hw::MemoryPort`]) feeds the
//! array, and D leaves by TMA store. D is read back from global memory after the run; it must
//! equal the ideal path's D bit for bit (`tests/memory/gemm_memory.rs`).

use super::clocked::{run_core, CoreRun};
use super::problem::Gemm;
use crate::hw::config::CoreConfig;
use crate::hw::mem_port::PortExtras;
use crate::hw::memory::{MemCounters, MemParams};
use crate::hw::{HwError, MemLayout, MemPortConfig, MemoryPort, TensorCore};
use crate::rtl::TraceConfig;

/// The outcome of a run through the memory path.
#[derive(Clone, Debug, PartialEq)]
pub struct MemRun {
    /// The run (D as stored to global memory, cycles, utilisation, stalls).
    pub run: CoreRun,
    /// Bytes moved, bank conflicts, out-of-bounds fills, requests.
    pub counters: MemCounters,
    /// The memory parameters used.
    pub params: MemParams,
    /// Where the problem lived and the stages used.
    pub layout: MemLayout,
}

/// A cycle bound no correct run reaches on a `rows x cols` array: the ideal schedule, plus
/// every byte at the bandwidth, plus the latency for every chunk, tile and store, twice over.
fn cycle_limit(lay: &MemLayout, p: &MemParams, (rows, cols): (usize, usize), ideal: u64) -> u64 {
    let bytes = lay.gmem_bytes * (lay.n.div_ceil(cols) as u64 + 1);
    let bw = u64::from(p.bytes_per_cycle.min(p.request_bytes).max(1));
    let tiles = (lay.m.div_ceil(rows) * lay.n.div_ceil(cols)) as u64;
    let events = tiles * (lay.chunks as u64 + 2) + 8;
    2 * (ideal + bytes / bw + events * (u64::from(p.latency) + 64)) + 10_000
}

/// Runs `g` through the memory path built as `pc` says, optionally tracing.
pub fn run_memory(
    g: &Gemm,
    pc: &MemPortConfig,
    trace: Option<&TraceConfig>,
) -> Result<MemRun, HwError> {
    crate::hw::dispatch_width!(g.cfg.width, W => run_w::<W>(g, pc, trace))
}

fn run_w<const W: usize>(
    g: &Gemm,
    pc: &MemPortConfig,
    trace: Option<&TraceConfig>,
) -> Result<MemRun, HwError> {
    let port = MemoryPort::<W>::new(g.cfg, pc, g.m, g.n, g.k, &g.a, &g.b, &g.c)?;
    run_port(g.cfg, port, g.macs(), pc, trace)
}

/// Runs the tensor core built for `cfg` on a filled memory-fed `port` (dense or 2:4 sparse)
/// until `Done` and every D box is stored; `macs` counts the useful multiply-accumulates.
/// D is read back from global memory and must equal what left the array.
pub fn run_port<const W: usize, X: PortExtras<W>>(
    cfg: CoreConfig,
    port: MemoryPort<W, X>,
    macs: u64,
    pc: &MemPortConfig,
    trace: Option<&TraceConfig>,
) -> Result<MemRun, HwError> {
    let layout = *port.layout();
    let n = layout.n;
    let core = TensorCore::<W, MemoryPort<W, X>>::with_port(cfg, port)?;
    let ideal = core.schedule().total_cycles();
    let limit = cycle_limit(&layout, &pc.params, core.schedule().array(), ideal);
    let watchdog = 4 * u64::from(pc.params.latency) + 4096;
    let (mut run, core) = run_core(core, macs, limit, watchdog, trace)?;
    // D as the TMA stores left it in global memory: it must equal what left the array.
    let stored = core.port().read_d();
    if stored != run.run.out.d {
        let at = stored
            .iter()
            .zip(&run.run.out.d)
            .position(|(s, d)| s != d)
            .unwrap_or(0);
        return Err(HwError::Memory(format!(
            "D in global memory differs from the drained D at element {at} (row {}, column {})",
            at / n,
            at % n
        )));
    }
    run.run.out.d = stored;
    Ok(MemRun {
        counters: core.port().counters(),
        run,
        params: pc.params,
        layout,
    })
}
