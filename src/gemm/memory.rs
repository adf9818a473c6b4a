//! The GEMM through the memory path: A, B and C start in the global-memory model, tiles travel
//! by TMA into shared-memory stages, the memory-fed port ([`crate::hw::MemoryPort`]) feeds the
//! array, and D leaves by TMA store. D is read back from global memory after the run; it must
//! equal the ideal path's D bit for bit (`tests/memory/gemm_memory.rs`).

use super::clocked::{run_core, CoreRun};
use super::mx::MxGemm;
use super::problem::Gemm;
use crate::hw::config::{CoreConfig, Dataflow};
use crate::hw::extras::BlockScales;
use crate::hw::mem_port::PortExtras;
use crate::hw::memory::{MemCounters, MemParams, Swizzle};
use crate::hw::ws::mem::layout::WsMemLayout;
use crate::hw::ws::mem::{WsMemExtras, WsMemoryPort};
use crate::hw::ws::WsCore;
use crate::hw::{HwError, MemLayout, MemPortConfig, MemoryPort, TensorCore};
use crate::rtl::TraceConfig;

/// Where a run through the memory path kept its operands: the output-stationary port's
/// layout or the weight-stationary one's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunLayout {
    /// The output-stationary port ([`MemoryPort`]).
    Os(MemLayout),
    /// The weight-stationary supply ([`WsMemoryPort`]).
    Ws(WsMemLayout),
}

impl RunLayout {
    /// Operand stages (`os`), or A stages (`ws`).
    pub fn stages(&self) -> usize {
        match self {
            RunLayout::Os(l) => l.stages,
            RunLayout::Ws(l) => l.a_stages,
        }
    }

    /// A panel reused across a tile row (`os` only).
    pub fn panel(&self) -> bool {
        matches!(self, RunLayout::Os(l) if l.panel)
    }

    /// The operand tiles are swizzled in shared memory (`os` only: `ws` reads whole spans).
    pub fn swizzled(&self) -> bool {
        matches!(self, RunLayout::Os(l) if l.swz_b != Swizzle::None)
    }

    /// The output-stationary layout, if this was one.
    pub fn os(&self) -> Option<&MemLayout> {
        match self {
            RunLayout::Os(l) => Some(l),
            RunLayout::Ws(_) => None,
        }
    }
}

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
    pub layout: RunLayout,
}

/// A cycle bound no correct run reaches on a `rows x cols` array: the ideal schedule (times
/// the beats plus one where a step's read takes several requests), plus every byte at the
/// bandwidth, plus the latency for every chunk, tile and store, plus a cycle for every C word
/// of every tile, twice over.
fn cycle_limit(lay: &MemLayout, p: &MemParams, (rows, cols): (usize, usize), ideal: u64) -> u64 {
    let bytes = lay.gmem_bytes * (lay.n.div_ceil(cols) as u64 + 1);
    let bw = u64::from(p.bytes_per_cycle.min(p.request_bytes).max(1));
    let tiles = (lay.m.div_ceil(rows) * lay.n.div_ceil(cols)) as u64;
    let events = tiles * (lay.chunks as u64 + 2) + 8;
    let steps = if lay.max_beats > 1 {
        ideal * (lay.max_beats as u64 + 1)
    } else {
        ideal
    };
    let c_words = if rows * cols > 16 {
        tiles * (rows * cols) as u64
    } else {
        0
    };
    2 * (steps + bytes / bw + events * (u64::from(p.latency) + 64) + c_words) + 10_000
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
    match g.cfg.dataflow() {
        Dataflow::Ws => return run_ws::<W>(g, pc, trace),
        Dataflow::Is => return Err(crate::hw::dataflow::is::unsupported("the TMA memory path")),
        Dataflow::Os => {}
    }
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
    check_stored(&stored, &run.run.out.d, n)?;
    run.run.out.d = stored;
    Ok(MemRun {
        counters: core.port().counters(),
        run,
        params: pc.params,
        layout: RunLayout::Os(layout),
    })
}

/// D read back from global memory must equal what left the array.
fn check_stored(stored: &[u32], drained: &[u32], n: usize) -> Result<(), HwError> {
    match stored.iter().zip(drained).position(|(s, d)| s != d) {
        None => Ok(()),
        Some(at) => Err(HwError::Memory(format!(
            "D in global memory differs from the drained D at element {at} (row {}, column {})",
            at / n,
            at % n
        ))),
    }
}

/// Runs the dense `g` on the weight-stationary core fed through the memory path.
fn run_ws<const W: usize>(
    g: &Gemm,
    pc: &MemPortConfig,
    trace: Option<&TraceConfig>,
) -> Result<MemRun, HwError> {
    let port = WsMemoryPort::<W>::new(g.cfg, pc, g.m, g.n, g.k, &g.a, &g.b, &g.c)?;
    run_ws_port(g.cfg, port, g.macs(), pc, trace)
}

/// Runs the weight-stationary core built for `cfg` on a filled memory-fed supply (dense, 2:4
/// sparse or block-scaled) until `Done` and every D box is stored; `macs` counts the useful
/// multiply-accumulates. D is read back from global memory and must equal what left the
/// array.
pub fn run_ws_port<const W: usize, X: WsMemExtras<W>>(
    cfg: CoreConfig,
    port: WsMemoryPort<W, X>,
    macs: u64,
    pc: &MemPortConfig,
    trace: Option<&TraceConfig>,
) -> Result<MemRun, HwError> {
    let lay = *port.layout();
    let core = WsCore::<W, WsMemoryPort<W, X>>::new(cfg, port)?;
    let ideal = core.schedule().total_cycles();
    let p = &pc.params;
    // Every byte of every box at the bandwidth, and the latency for every box, twice over
    // (a side box counts as one more of its operand's).
    let sides = usize::from(lay.xa.is_some()) * lay.a_boxes()
        + usize::from(lay.xb.is_some()) * lay.passes();
    let boxes = (lay.passes() + lay.a_boxes() + 2 * lay.cd_boxes() + sides) as u64;
    let bytes = boxes
        * u64::from(
            lay.a_stage_bytes
                .max(lay.w_stage_bytes)
                .max(lay.cd_slot_bytes),
        );
    let bw = u64::from(p.bytes_per_cycle.min(p.request_bytes).max(1));
    let limit = 2 * (ideal + bytes / bw + boxes * (u64::from(p.latency) + 64)) + 10_000;
    let watchdog = 4 * u64::from(p.latency) + 4096;
    let (run, core) = run_core(core, macs, limit, watchdog, trace)?;
    let stored = core.feeder().read_d();
    check_stored(&stored, &run.run.out.d, lay.sched.n)?;
    Ok(MemRun {
        counters: core.feeder().counters(),
        run,
        params: pc.params,
        layout: RunLayout::Ws(lay),
    })
}

/// Runs the block-scaled `g` through the memory path built as `pc` says, optionally tracing:
/// in the output-stationary dataflow through the memory port built by
/// [`MemoryPort::new_mx`] (the scales in global memory beside their operands, loaded into the
/// same stages), in the weight-stationary one through its supply (the scales beside A and the
/// weights).
pub fn run_memory_mx(
    g: &MxGemm,
    pc: &MemPortConfig,
    trace: Option<&TraceConfig>,
) -> Result<MemRun, HwError> {
    match g.cfg.dataflow() {
        Dataflow::Os => {
            return crate::hw::dispatch_width!(g.cfg.width, W => run_os_mx::<W>(g, pc, trace))
        }
        Dataflow::Is => return Err(crate::hw::dataflow::is::unsupported("the TMA memory path")),
        Dataflow::Ws => {}
    }
    super::mx::stationary_width(
        g,
        |g| crate::hw::dispatch_block_width!(g.cfg.width, B => run_ws_mx::<B>(g, pc, trace)),
    )
}

fn run_os_mx<const W: usize>(
    g: &MxGemm,
    pc: &MemPortConfig,
    trace: Option<&TraceConfig>,
) -> Result<MemRun, HwError> {
    let port = MemoryPort::<W>::new_mx(
        g.cfg,
        g.spec,
        pc,
        (g.m, g.n, g.k),
        &g.a,
        &g.b,
        &g.c,
        (&g.a_scales, &g.b_scales),
    )?;
    run_port(g.cfg, port, (g.m * g.n * g.k) as u64, pc, trace)
}

fn run_ws_mx<const W: usize>(
    g: &MxGemm,
    pc: &MemPortConfig,
    trace: Option<&TraceConfig>,
) -> Result<MemRun, HwError> {
    let port = WsMemoryPort::<W, BlockScales>::new_mx(
        g.cfg,
        g.spec,
        pc,
        (g.m, g.n, g.k),
        &g.a,
        &g.b,
        &g.c,
        (&g.a_scales, &g.b_scales),
    )?;
    run_ws_port(g.cfg, port, (g.m * g.n * g.k) as u64, pc, trace)
}
