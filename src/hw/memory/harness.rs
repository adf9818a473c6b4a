//! [`TmaHarness`] (scope `tma_top`): a testbench top around a [`MemorySystem`] that issues TMA
//! loads one after another on mbarrier 0 and waits for each with `try_wait.parity`, and
//! [`run_loads`], the host-side runner the CLI and the TMA testbenches use.

use super::mbarrier::{MbarOp, MbarOpKind};
use super::params::MemParams;
use super::system::{MemBuildError, MemCounters, MemError, MemIn, MemorySystem};
use super::tensor_map::{TensorMap, TensorMapError};
use super::tma::{TmaCmd, TmaOp};
use crate::rtl::{Design, Module, Reg, RtlError, Simulator, TraceConfig, Visitor};

/// One load the harness issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HarnessLoad {
    /// Descriptor slot.
    pub desc: usize,
    /// Box coordinates.
    pub coords: [i32; 5],
    /// Shared-memory destination (pre-swizzle byte address).
    pub smem_addr: u32,
}

const INIT: u8 = 0;
const ISSUE: u8 = 1;
const WAIT: u8 = 2;
const DONE: u8 = 3;

/// The harness top (scope `tma_top`, the memory system below it as `mem`).
///
/// Its FSM (`state`): `Init` (one cycle: `mbarrier.init(1)` on `mbar_0`), then per load
/// `Issue` (present the TMA command; in its accepting cycle also
/// `arrive.expect_tx(box bytes)`), `Wait` (until `try_wait.parity(load index mod 2)`), and
/// finally `Done`. `load` is the index of the current load.
pub struct TmaHarness {
    mem: MemorySystem,
    loads: Vec<HarnessLoad>,
    tx: Vec<u32>,
    state: Reg<u8>,
    load: Reg<u16>,
    ops: Vec<MbarOp>,
}

impl TmaHarness {
    /// A harness over `mem` issuing `loads` (each descriptor must already be set).
    pub fn new(mem: MemorySystem, loads: Vec<HarnessLoad>) -> Result<Self, RtlError> {
        Ok(Self {
            tx: loads
                .iter()
                .map(|l| mem.descriptor_box_bytes(l.desc))
                .collect(),
            mem,
            loads,
            state: Reg::new("state", 2, INIT)?.with_labels(&[
                (0, "Init"),
                (1, "Issue"),
                (2, "Wait"),
                (3, "Done"),
            ]),
            load: Reg::new("load", 16, 0)?,
            ops: Vec::with_capacity(2),
        })
    }

    /// The memory system.
    pub fn mem(&self) -> &MemorySystem {
        &self.mem
    }

    /// The memory system, mutably (host access between cycles).
    pub fn mem_mut(&mut self) -> &mut MemorySystem {
        &mut self.mem
    }

    /// Whether every load has completed.
    pub fn is_done(&self) -> bool {
        self.state.q() == DONE
    }

    /// Loads completed so far.
    pub fn loads_done(&self) -> usize {
        if self.is_done() {
            self.loads.len()
        } else {
            self.load.q() as usize
        }
    }
}

impl Module for TmaHarness {
    fn name(&self) -> &str {
        "tma_top"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.state);
        v.reg(&mut self.load);
        v.child(&mut self.mem);
    }
}

impl Design for TmaHarness {
    fn comb(&mut self) {
        let st = self.state.q();
        let i = self.load.q() as usize;
        self.ops.clear();
        let mut cmd = None;
        let ready = self.mem.out().tma_ready;
        match st {
            INIT => {
                self.ops.push(MbarOp {
                    bar: 0,
                    op: MbarOpKind::Init(1),
                });
                self.state
                    .set_d(if self.loads.is_empty() { DONE } else { ISSUE });
            }
            ISSUE => {
                let l = self.loads[i];
                cmd = Some(TmaCmd {
                    op: TmaOp::Load,
                    desc: l.desc,
                    coords: l.coords,
                    smem_addr: l.smem_addr,
                    mbar: 0,
                });
                if ready {
                    self.ops.push(MbarOp {
                        bar: 0,
                        op: MbarOpKind::ArriveExpectTx(self.tx[i]),
                    });
                    self.state.set_d(WAIT);
                }
            }
            WAIT if self.mem.try_wait_parity(0, i % 2 == 1) => {
                if i + 1 < self.loads.len() {
                    self.load.set_d(i as u16 + 1);
                    self.state.set_d(ISSUE);
                } else {
                    self.state.set_d(DONE);
                }
            }
            _ => {}
        }
        let inp = MemIn {
            tma_cmd: cmd,
            smem_read: None,
            smem_write: None,
            mbar_ops: &self.ops,
        };
        self.mem.comb(&inp);
    }

    fn state(&self) -> String {
        format!(
            "harness state {} load {}; tma idle {}",
            self.state.q(),
            self.load.q(),
            self.mem.tma_idle()
        )
    }
}

/// What [`run_loads`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadRun {
    /// Cycles from the first cycle after reset to the cycle `try_wait.parity` saw the last
    /// load complete.
    pub cycles: u64,
    /// Per load, the cycle (from the same origin) at which its wait succeeded.
    pub load_done: Vec<u64>,
    /// The counters.
    pub counters: MemCounters,
}

/// Why a harness run failed.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The memory system cannot be built.
    #[error(transparent)]
    Build(#[from] MemBuildError),
    /// A descriptor is invalid.
    #[error(transparent)]
    Descriptor(#[from] TensorMapError),
    /// The engine failed (watchdog, trace I/O).
    #[error(transparent)]
    Rtl(#[from] RtlError),
    /// The memory system reported an error.
    #[error(transparent)]
    Mem(#[from] MemError),
}

/// Builds a memory system (`params`, `gmem_bytes` of global memory, one mbarrier), writes
/// `gmem_image` at global address 0, sets `descs` in slots 0.., runs `loads` through the
/// [`TmaHarness`] (tracing to `trace` if given) and returns the run and the harness (for the
/// shared-memory image).
pub fn run_loads(
    params: MemParams,
    gmem_bytes: u64,
    gmem_image: &[u8],
    descs: &[TensorMap],
    loads: &[HarnessLoad],
    trace: Option<&TraceConfig>,
) -> Result<(LoadRun, TmaHarness), HarnessError> {
    run_loads_over(params, gmem_bytes, gmem_image, 0, descs, loads, trace)
}

/// [`run_loads`] with shared memory holding `smem_fill` in every byte before the first load
/// (0 is the reset contents).
pub fn run_loads_over(
    params: MemParams,
    gmem_bytes: u64,
    gmem_image: &[u8],
    smem_fill: u8,
    descs: &[TensorMap],
    loads: &[HarnessLoad],
    trace: Option<&TraceConfig>,
) -> Result<(LoadRun, TmaHarness), HarnessError> {
    let mut mem = MemorySystem::new(params, gmem_bytes, 1)?;
    mem.host_write(0, gmem_image);
    if smem_fill != 0 {
        let fill = vec![smem_fill; params.smem_bytes as usize];
        mem.smem_host_write(0, &fill);
    }
    for (i, d) in descs.iter().enumerate() {
        mem.set_descriptor(i, *d)?;
    }
    let top = TmaHarness::new(mem, loads.to_vec())?;
    let mut sim = match trace {
        Some(cfg) => Simulator::with_trace(top, cfg)?,
        None => Simulator::new(top)?,
    };
    sim.set_watchdog(u64::from(params.latency) + 10_000);
    sim.reset(1)?;
    let start = sim.cycle();
    let mut load_done = Vec::with_capacity(loads.len());
    while !sim.top().is_done() {
        if let Some(e) = sim.top().mem().error() {
            return Err(e.into());
        }
        let before = sim.top().loads_done();
        sim.step()?;
        if sim.top().loads_done() > before {
            load_done.push(sim.cycle() - start);
        }
    }
    if let Some(e) = sim.top().mem().error() {
        return Err(e.into());
    }
    let cycles = sim.cycle() - start;
    let (top, _) = sim.finish()?;
    let counters = top.mem().counters();
    Ok((
        LoadRun {
            cycles,
            load_done,
            counters,
        },
        top,
    ))
}

/// One step of a [`MemScript`]: what is presented to the memory system until it is accepted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stim {
    /// A TMA command (held until `tma_ready`).
    pub tma_cmd: Option<TmaCmd>,
    /// A consumer read (held until accepted).
    pub smem_read: Option<Vec<super::smem::SmemLane>>,
    /// A consumer write (held until accepted).
    pub smem_write: Option<Vec<super::smem::SmemWriteLane>>,
    /// mbarrier operations, applied in the step's first cycle only.
    pub mbar_ops: Vec<MbarOp>,
    /// Before presenting anything, wait until `try_wait.parity(p)` of barrier `b` holds.
    pub wait: Option<(usize, bool)>,
    /// Before presenting anything, wait until no TMA store is outstanding.
    pub wait_stores: bool,
}

/// What happened to one [`Stim`] step.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StimLog {
    /// The cycle the step started presenting (after its wait).
    pub start: u64,
    /// The cycle everything it presented was accepted.
    pub done: u64,
    /// The data of its read (from the cycle after acceptance).
    pub read_data: Vec<u8>,
}

/// A scripted testbench top (scope `script_top`, the memory system as `mem`): plays a list of
/// [`Stim`] steps one after the other, each held until accepted (valid/ready), and logs the
/// cycles (`log`). The log is testbench bookkeeping (written idempotently during the
/// combinational phase and by [`MemScript::after_edge`]), not hardware state; the step and
/// handshake registers are.
pub struct MemScript {
    mem: MemorySystem,
    steps: Vec<Stim>,
    step: Reg<u16>,
    started: Reg<bool>,
    cmd_done: Reg<bool>,
    rd_done: Reg<bool>,
    wr_done: Reg<bool>,
    cycle: Reg<u64>,
    log: Vec<StimLog>,
    capture: Option<usize>,
}

impl MemScript {
    /// A script over `mem`.
    pub fn new(mem: MemorySystem, steps: Vec<Stim>) -> Result<Self, RtlError> {
        Ok(Self {
            log: vec![StimLog::default(); steps.len()],
            mem,
            steps,
            step: Reg::new("step", 16, 0)?,
            started: Reg::new("started", 1, false)?,
            cmd_done: Reg::new("cmd_done", 1, false)?,
            rd_done: Reg::new("rd_done", 1, false)?,
            wr_done: Reg::new("wr_done", 1, false)?,
            cycle: Reg::new("cycle", 64, 0)?,
            capture: None,
        })
    }

    /// Whether every step is done.
    pub fn is_done(&self) -> bool {
        self.step.q() as usize >= self.steps.len()
    }

    /// The log of every step.
    pub fn log(&self) -> &[StimLog] {
        &self.log
    }

    /// The memory system.
    pub fn mem(&self) -> &MemorySystem {
        &self.mem
    }

    /// The memory system, mutably (host access between cycles).
    pub fn mem_mut(&mut self) -> &mut MemorySystem {
        &mut self.mem
    }

    /// Host-side bookkeeping after each clock edge (the log is not hardware): records the
    /// read data of a step whose read was accepted in the previous cycle.
    pub fn after_edge(&mut self) {
        if let Some(i) = self.capture.take() {
            self.log[i].read_data = self.mem.smem_read_data().to_vec();
        }
    }
}

impl Module for MemScript {
    fn name(&self) -> &str {
        "script_top"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.step);
        v.reg(&mut self.started);
        v.reg(&mut self.cmd_done);
        v.reg(&mut self.rd_done);
        v.reg(&mut self.wr_done);
        v.reg(&mut self.cycle);
        v.child(&mut self.mem);
    }
}

impl Design for MemScript {
    fn comb(&mut self) {
        let cycle = self.cycle.q();
        self.cycle.set_d(cycle + 1);
        let i = self.step.q() as usize;
        let Some(s) = self.steps.get(i) else {
            self.mem.comb(&MemIn::default());
            return;
        };
        let waiting = s.wait.is_some_and(|(b, p)| !self.mem.try_wait_parity(b, p))
            || (s.wait_stores && self.mem.stores_outstanding() > 0);
        if waiting && !self.started.q() {
            self.mem.comb(&MemIn::default());
            return;
        }
        let first = !self.started.q();
        let inp = MemIn {
            tma_cmd: if self.cmd_done.q() { None } else { s.tma_cmd },
            smem_read: if self.rd_done.q() {
                None
            } else {
                s.smem_read.as_deref()
            },
            smem_write: if self.wr_done.q() {
                None
            } else {
                s.smem_write.as_deref()
            },
            mbar_ops: if first { &s.mbar_ops } else { &[] },
        };
        let ready = self.mem.out().tma_ready;
        let has_cmd = inp.tma_cmd.is_some();
        let has_rd = inp.smem_read.is_some();
        let has_wr = inp.smem_write.is_some();
        let out = self.mem.comb(&inp);
        let cmd_done = self.cmd_done.q() || !has_cmd || ready;
        let rd_done = self.rd_done.q() || !has_rd || out.smem_read_ready;
        let wr_done = self.wr_done.q() || !has_wr || out.smem_write_ready;
        if first {
            self.log[i].start = cycle;
        }
        if has_rd && out.smem_read_ready {
            self.capture = Some(i);
        }
        if cmd_done && rd_done && wr_done {
            self.log[i].done = cycle;
            self.step.set_d(i as u16 + 1);
            self.started.set_d(false);
            self.cmd_done.set_d(false);
            self.rd_done.set_d(false);
            self.wr_done.set_d(false);
        } else {
            self.started.set_d(true);
            self.cmd_done.set_d(cmd_done);
            self.rd_done.set_d(rd_done);
            self.wr_done.set_d(wr_done);
        }
    }
}

/// Runs a [`MemScript`] until every step is done and the TMA is idle with no store
/// outstanding (or `max_cycles`), stopping at the first memory-system error.
pub fn run_script(sim: &mut Simulator<MemScript>, max_cycles: u64) -> Result<u64, HarnessError> {
    let start = sim.cycle();
    loop {
        if let Some(e) = sim.top().mem().error() {
            return Err(e.into());
        }
        let t = sim.top();
        if t.is_done() && t.mem().tma_idle() && t.mem().stores_outstanding() == 0 {
            return Ok(sim.cycle() - start);
        }
        if sim.cycle() - start >= max_cycles {
            return Err(RtlError::Timeout {
                max_cycles,
                cycle: sim.cycle(),
            }
            .into());
        }
        sim.step()?;
        sim.top_mut().after_edge();
    }
}
