//! [`MemorySystem`]: global memory, shared memory, the TMA engine and the mbarriers as one
//! block with one per-cycle `comb`, the object a tensor core embeds.

use super::clients::{ClientArbiter, ClientCountError, MAX_CLIENTS};
use super::gmem::{GlobalMemory, GmemFault, GmemReq};
use super::level::MemLevel;
use super::mbarrier::{MBarrier, MbarMisuse, MbarOp, MbarOpKind, MbarState};
use super::params::{MemParams, ParamError};
use super::smem::{SharedMemory, SmemFault, SmemLane, SmemWriteLane};
use super::tensor_map::{TensorMap, TensorMapError};
use super::tma::{TmaCmd, TmaEngine, TmaFault, TmaGrants};
use crate::rtl::{Mem, Module, Reg, Result, RtlError, Visitor};

/// Most mbarriers in one memory system (the phase bits fit one `u64`).
pub const MAX_MBARS: usize = 64;
/// Descriptor slots of the TMA engine.
pub const DESCRIPTORS: usize = 8;

/// The inputs of one cycle.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemIn<'a> {
    /// The TMA command port (`valid` = `Some`; accepted when [`MemOut::tma_ready`]).
    pub tma_cmd: Option<TmaCmd>,
    /// The consumer's shared-memory read request (priority over the TMA store path).
    pub smem_read: Option<&'a [SmemLane]>,
    /// The consumer's shared-memory write request (priority over the TMA load path).
    pub smem_write: Option<&'a [SmemWriteLane]>,
    /// mbarrier operations of this cycle, applied in order (before the TMA's `complete_tx`).
    pub mbar_ops: &'a [MbarOp],
}

/// The outputs of one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemOut {
    /// The TMA command port's `ready` (register function: the address generator is idle).
    pub tma_ready: bool,
    /// The consumer's read request is accepted this cycle (its last pass).
    pub smem_read_ready: bool,
    /// The consumer's read accepted in the previous cycle has its data in
    /// [`MemorySystem::smem_read_data`] (register).
    pub smem_read_valid: bool,
    /// The consumer's write request is accepted this cycle (its last pass).
    pub smem_write_ready: bool,
    /// Bit `i`: the current phase parity of mbarrier `i` (registers).
    pub mbar_phase: u64,
    /// TMA store commands not yet fully written (register).
    pub stores_outstanding: u32,
    /// The first error of the run, latched in the cycle it happened (visible from the next).
    pub error: Option<MemError>,
}

/// What went wrong in the memory system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemFault {
    /// An mbarrier misuse.
    Mbar {
        /// The barrier.
        bar: usize,
        /// What was done wrong.
        misuse: MbarMisuse,
    },
    /// An mbarrier operation names a barrier that does not exist.
    NoMbarrier(usize),
    /// A refused TMA command.
    Tma(TmaFault),
    /// A malformed shared-memory request.
    Smem(SmemFault),
    /// A global-memory request past the end of global memory (or malformed).
    Gmem(GmemFault),
}

/// The first error of a run: the cycle and the fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("memory system error at cycle {cycle}: {fault}")]
pub struct MemError {
    /// The cycle in which it happened, counted by the memory system's `cycle` register: 0 is
    /// the first cycle after reset (add the reset cycles for a simulator cycle).
    pub cycle: u64,
    /// What happened.
    pub fault: MemFault,
}

impl std::fmt::Display for MemFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemFault::Mbar { bar, misuse } => write!(f, "mbarrier mbar_{bar}: {misuse}"),
            MemFault::NoMbarrier(i) => write!(f, "mbarrier operation on mbar_{i}, which does not exist"),
            MemFault::Tma(t) => write!(f, "{t}"),
            MemFault::Smem(SmemFault::TooManyLanes(n)) => {
                write!(f, "shared-memory request of {n} lanes (at most 32)")
            }
            MemFault::Smem(SmemFault::BadLane { addr, len }) => write!(
                f,
                "shared-memory lane of {len} bytes at {addr:#x} (1..=16 bytes inside one 16-byte chunk)"
            ),
            MemFault::Smem(SmemFault::OutOfRange { addr }) => {
                write!(f, "shared-memory lane at {addr:#x} is past the end of shared memory")
            }
            MemFault::Gmem(g) => write!(
                f,
                "global-memory request of {} bytes at {:#x} is past the end of global memory or malformed",
                g.len, g.addr
            ),
        }
    }
}

impl MemFault {
    fn pack(self) -> u128 {
        let (k, x, y): (u128, u128, u128) = match self {
            MemFault::Mbar { bar, misuse } => {
                let (c, v) = match misuse {
                    MbarMisuse::UseBeforeInit => (0, 0),
                    MbarMisuse::ReinitLive => (1, 0),
                    MbarMisuse::InitCount(n) => (2, u64::from(n)),
                    MbarMisuse::ArrivalUnderflow => (3, 0),
                    MbarMisuse::TxOverflow(t) => (4, t as u64),
                };
                (c, bar as u128, u128::from(v))
            }
            MemFault::NoMbarrier(i) => (5, i as u128, 0),
            MemFault::Tma(TmaFault::NoDescriptor(i)) => (6, i as u128, 0),
            MemFault::Tma(TmaFault::NoMbarrier(i)) => (7, i as u128, 0),
            MemFault::Tma(TmaFault::SmemAlign { addr, align }) => {
                (8, u128::from(addr), u128::from(align))
            }
            MemFault::Tma(TmaFault::SmemRange { addr, bytes }) => {
                (9, u128::from(addr), u128::from(bytes))
            }
            MemFault::Smem(SmemFault::TooManyLanes(n)) => (10, n as u128, 0),
            MemFault::Smem(SmemFault::BadLane { addr, len }) => {
                (11, u128::from(addr), u128::from(len))
            }
            MemFault::Smem(SmemFault::OutOfRange { addr }) => (12, u128::from(addr), 0),
            MemFault::Gmem(g) => (13, u128::from(g.len), u128::from(g.addr)),
            MemFault::Tma(TmaFault::InnerCoordAlign { coord, elem_bytes }) => {
                (14, u128::from(coord as u32), u128::from(elem_bytes))
            }
            MemFault::Tma(TmaFault::StoreNegativeCoord { dim, coord }) => {
                (15, u128::from(coord as u32), dim as u128)
            }
        };
        k | (x & 0xFFFF_FFFF) << 8 | y << 40
    }

    fn unpack(w: u128) -> Self {
        let k = (w & 0xFF) as u8;
        let x = ((w >> 8) & 0xFFFF_FFFF) as u32;
        let y = (w >> 40) as u64;
        let bar = x as usize;
        match k {
            0 => MemFault::Mbar {
                bar,
                misuse: MbarMisuse::UseBeforeInit,
            },
            1 => MemFault::Mbar {
                bar,
                misuse: MbarMisuse::ReinitLive,
            },
            2 => MemFault::Mbar {
                bar,
                misuse: MbarMisuse::InitCount(y as u32),
            },
            3 => MemFault::Mbar {
                bar,
                misuse: MbarMisuse::ArrivalUnderflow,
            },
            4 => MemFault::Mbar {
                bar,
                misuse: MbarMisuse::TxOverflow(y as i64),
            },
            5 => MemFault::NoMbarrier(bar),
            6 => MemFault::Tma(TmaFault::NoDescriptor(bar)),
            7 => MemFault::Tma(TmaFault::NoMbarrier(bar)),
            8 => MemFault::Tma(TmaFault::SmemAlign {
                addr: x,
                align: y as u32,
            }),
            9 => MemFault::Tma(TmaFault::SmemRange { addr: x, bytes: y }),
            10 => MemFault::Smem(SmemFault::TooManyLanes(bar)),
            11 => MemFault::Smem(SmemFault::BadLane {
                addr: x,
                len: y as u8,
            }),
            12 => MemFault::Smem(SmemFault::OutOfRange { addr: x }),
            14 => MemFault::Tma(TmaFault::InnerCoordAlign {
                coord: x as i32,
                elem_bytes: y as u32,
            }),
            15 => MemFault::Tma(TmaFault::StoreNegativeCoord {
                dim: y as usize,
                coord: x as i32,
            }),
            _ => MemFault::Gmem(GmemFault { addr: y, len: x }),
        }
    }
}

/// A memory system that cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum MemBuildError {
    /// A bad parameter.
    #[error(transparent)]
    Params(#[from] ParamError),
    /// Too many mbarriers.
    #[error("mbarriers: {0} (at most 64)")]
    Mbars(usize),
    /// No client, or more than the arbiter serves.
    #[error(transparent)]
    Clients(#[from] ClientCountError),
    /// The engine failed to elaborate.
    #[error(transparent)]
    Rtl(#[from] RtlError),
}

/// Counters of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct MemCounters {
    /// Bytes read from global memory.
    pub bytes_loaded: u64,
    /// Bytes written to global memory by TMA stores.
    pub bytes_stored: u64,
    /// Bytes landed in shared memory by TMA loads (out-of-bounds fill included).
    pub tx_bytes: u64,
    /// Shared-memory bank conflicts (sum of passes - 1).
    pub bank_conflicts: u64,
    /// Out-of-bounds elements filled by TMA loads.
    pub oob_elements: u64,
    /// Global-memory requests accepted.
    pub requests: u64,
}

/// The memory system (scope `mem`: children `gmem`, `smem`, `tma`, `mbar_0`..).
///
/// # One cycle ([`MemorySystem::comb`])
/// - TMA command port: `tma_ready` is a register function (generator idle); a command
///   presented while it is high is accepted this cycle.
/// - Shared-memory ports (see [`SharedMemory`] for passes and data timing): one read port shared
///   by the consumer and the TMA store path (the store first), one write port shared by the
///   consumer's writes (priority) and the TMA's landing writes. A multi-pass request that has
///   started keeps its port until its last pass (the other requester sees `ready` low).
///   `smem_read_ready`/`smem_write_ready` are the consumer's `ready` (combinational from its
///   request and the pass registers); `smem_read_valid` and [`MemorySystem::smem_read_data`]
///   give the data of the consumer's read accepted in the previous cycle.
/// - mbarriers: the ops of `mbar_ops` (in order) and then the TMA's `complete_tx` of this
///   cycle update the barriers at this cycle's edge; `mbar_phase` shows the phase bits from the
///   registers (so an op of cycle `t` is visible from `t + 1`).
/// - Errors: the first mbarrier misuse, refused TMA command or malformed request is latched
///   with its cycle; `MemOut::error` shows it from the next cycle (and [`MemorySystem::error`]),
///   and the runner stops with it.
pub struct MemorySystem<G: MemLevel = GlobalMemory> {
    params: MemParams,
    gmem: G,
    smem: SharedMemory,
    tma: TmaEngine,
    mbars: Vec<MBarrier>,
    cycle: Reg<u64>,
    rd_lock_tma: Reg<bool>,
    wr_lock_tma: Reg<bool>,
    rd_cons: Reg<bool>,
    err_valid: Reg<bool>,
    err_cycle: Reg<u64>,
    err_record: Mem<u128>,
    /// The arbiter among several clients ([`MemorySystem::with_clients`]; none for one).
    pub(super) arbiter: Option<ClientArbiter>,
}

impl MemorySystem {
    /// A memory system with `params`, `gmem_bytes` of global memory and `mbars` mbarriers.
    pub fn new(
        params: MemParams,
        gmem_bytes: u64,
        mbars: usize,
    ) -> std::result::Result<Self, MemBuildError> {
        params.validate()?;
        Self::with_level(params, GlobalMemory::new(params, gmem_bytes)?, mbars)
    }
}

impl<G: MemLevel> MemorySystem<G> {
    /// A memory system with `params` and `mbars` mbarriers whose TMA engine reaches memory
    /// through `level` (any [`MemLevel`]: global memory itself, or a level in front of it).
    pub fn with_level(
        params: MemParams,
        level: G,
        mbars: usize,
    ) -> std::result::Result<Self, MemBuildError> {
        params.validate()?;
        if mbars > MAX_MBARS {
            return Err(MemBuildError::Mbars(mbars));
        }
        Ok(Self {
            params,
            gmem: level,
            smem: SharedMemory::new(params.smem_bytes)?,
            tma: TmaEngine::new(
                DESCRIPTORS,
                params.smem_bytes,
                params.request_bytes,
                params.requests_in_flight,
                mbars,
            )?,
            mbars: (0..mbars).map(MBarrier::new).collect::<Result<_>>()?,
            cycle: Reg::new("cycle", 64, 0)?,
            rd_lock_tma: Reg::new("rd_lock_tma", 1, false)?,
            wr_lock_tma: Reg::new("wr_lock_tma", 1, false)?,
            rd_cons: Reg::new("rd_consumer", 1, false)?,
            err_valid: Reg::new("err_valid", 1, false)?,
            err_cycle: Reg::new("err_cycle", 64, 0)?,
            err_record: Mem::new("err_record", 1, 128)?,
            arbiter: None,
        })
    }

    /// The memory level behind the TMA engine.
    pub fn level(&self) -> &G {
        &self.gmem
    }

    /// The parameters.
    pub fn params(&self) -> &MemParams {
        &self.params
    }

    /// Sets TMA descriptor `index` (0..8), validated.
    pub fn set_descriptor(
        &mut self,
        index: usize,
        map: TensorMap,
    ) -> std::result::Result<(), TensorMapError> {
        self.tma.set_descriptor(index, map)
    }

    /// The box bytes (transaction count of one load) of descriptor `index` (0 if unset).
    pub fn descriptor_box_bytes(&self, index: usize) -> u32 {
        self.tma
            .descriptor(index)
            .map_or(0, |m| m.box_bytes() as u32)
    }

    /// Host backdoor: writes bytes into global memory.
    pub fn host_write(&mut self, addr: u64, data: &[u8]) {
        self.gmem.host_write(addr, data);
    }

    /// Host backdoor: reads global memory.
    pub fn host_read(&self, addr: u64, len: usize) -> &[u8] {
        self.gmem.host_read(addr, len)
    }

    /// Host backdoor: writes shared memory at physical address `addr`.
    pub fn smem_host_write(&mut self, addr: u32, data: &[u8]) {
        self.smem.host_write(addr, data);
    }

    /// Host backdoor: reads shared memory at physical address `addr`.
    pub fn smem_host_read(&self, addr: u32, len: usize) -> &[u8] {
        self.smem.host_read(addr, len)
    }

    /// The consumer's read data (the read accepted in the previous cycle; valid when
    /// [`MemOut::smem_read_valid`]): lanes concatenated in request order.
    pub fn smem_read_data(&self) -> &[u8] {
        match (self.rd_cons.q(), self.smem.read_data()) {
            (true, Some(d)) => d,
            _ => &[],
        }
    }

    /// Whether the consumer's read accepted in the previous cycle has its data in the read
    /// register this cycle (registers).
    pub(super) fn consumer_read_pending(&self) -> bool {
        self.rd_cons.q() && self.smem.read_data().is_some()
    }

    /// The state of mbarrier `i` (registers).
    pub fn mbar(&self, i: usize) -> Option<MbarState> {
        self.mbars.get(i).map(MBarrier::state)
    }

    /// `try_wait.parity(p)` of mbarrier `i` (registers; false for a missing barrier).
    pub fn try_wait_parity(&self, i: usize, p: bool) -> bool {
        self.mbars.get(i).is_some_and(|b| b.try_wait_parity(p))
    }

    /// TMA store commands not yet fully written.
    pub fn stores_outstanding(&self) -> u32 {
        self.tma.stores_outstanding()
    }

    /// The TMA command port's `ready` (a register function: the address generator is idle).
    #[inline]
    pub fn tma_ready(&self) -> bool {
        self.tma.cmd_ready()
    }

    /// Whether the TMA has nothing in progress.
    pub fn tma_idle(&self) -> bool {
        self.tma.is_idle()
    }

    /// The counters so far.
    pub fn counters(&self) -> MemCounters {
        MemCounters {
            bytes_loaded: self.gmem_bytes_read(),
            bytes_stored: self.tma.bytes_stored(),
            tx_bytes: self.tma.tx_bytes(),
            bank_conflicts: self.smem.bank_conflicts(),
            oob_elements: self.tma.oob_elements(),
            requests: self.gmem.requests(),
        }
    }

    fn gmem_bytes_read(&self) -> u64 {
        self.gmem.bytes_read()
    }

    /// The latched first error (registers).
    pub fn error(&self) -> Option<MemError> {
        self.err_valid.q().then(|| MemError {
            cycle: self.err_cycle.q(),
            fault: MemFault::unpack(self.err_record.peek(0)),
        })
    }

    /// The per-cycle outputs that are register functions (no inputs needed).
    pub fn out(&self) -> MemOut {
        let mut phase = 0u64;
        for (i, b) in self.mbars.iter().enumerate() {
            phase |= u64::from(b.phase()) << i;
        }
        MemOut {
            tma_ready: self.tma.cmd_ready(),
            smem_read_ready: false,
            smem_read_valid: self.rd_cons.q() && self.smem.read_data().is_some(),
            smem_write_ready: false,
            mbar_phase: phase,
            stores_outstanding: self.tma.stores_outstanding(),
            error: self.error(),
        }
    }

    /// The barriers of a cycle that addresses some: each applies the requesters' operations
    /// on it in order, then the TMA's `complete_tx` (if it is this barrier's); a barrier no
    /// operation addresses holds its registers. A misuse is the cycle's fault (the first).
    fn mbar_ops(
        &mut self,
        ops: &[MbarOp],
        complete_tx: Option<(usize, u32)>,
        fault: &mut Option<MemFault>,
    ) {
        for (i, b) in self.mbars.iter_mut().enumerate() {
            let addressed =
                ops.iter().any(|o| o.bar == i) || complete_tx.is_some_and(|(bar, _)| bar == i);
            if !addressed {
                b.idle();
                continue;
            }
            let ops = ops.iter().filter(|o| o.bar == i).map(|o| o.op).chain(
                complete_tx
                    .filter(|&(bar, _)| bar == i)
                    .map(|(_, n)| MbarOpKind::CompleteTx(n)),
            );
            if let Some(misuse) = b.comb(ops) {
                fault.get_or_insert(MemFault::Mbar { bar: i, misuse });
            }
        }
    }

    /// One cycle of the whole memory system (see the type's documentation for the timing).
    pub fn comb(&mut self, inp: &MemIn<'_>) -> MemOut {
        let mut out = self.out();
        let cycle = self.cycle.q();
        self.cycle.set_d(cycle + 1);
        let mut fault: Option<MemFault> = None;

        let g = self.gmem.out();
        let treq = self.tma.requests(&g, self.gmem.resp_data());

        // Port arbitration: the consumer first unless a TMA multi-pass request holds the port.
        // Writes: the consumer first. Reads: the TMA store path first (a consumer that reads
        // every cycle would otherwise starve the store, and with it every later load).
        let cons_w = inp.smem_write.is_some() && !self.wr_lock_tma.q();
        let tma_w = !cons_w && treq.smem_write;
        let tma_r = treq.smem_read;
        let cons_r = inp.smem_read.is_some() && !tma_r && !self.rd_lock_tma.q();
        let w_sel = if cons_w {
            inp.smem_write
        } else if tma_w {
            Some(self.tma.write_lanes())
        } else {
            None
        };
        let r_sel = if cons_r {
            inp.smem_read
        } else if tma_r {
            Some(self.tma.read_lanes())
        } else {
            None
        };
        let s = self.smem.comb(r_sel, w_sel);
        if let Some(f) = s.fault {
            fault.get_or_insert(MemFault::Smem(f));
        }
        out.smem_read_ready = cons_r && s.read_ready;
        out.smem_write_ready = cons_w && s.write_ready;
        self.rd_cons.set_d(cons_r && s.read_ready);
        self.wr_lock_tma.set_d(tma_w && !s.write_ready);
        self.rd_lock_tma.set_d(tma_r && !s.read_ready);
        let grant_w = tma_w && s.write_ready;
        let grant_r = tma_r && s.read_ready;

        // Global memory.
        let resp_pop = treq.resp_pop || (treq.resp_pop_on_write && grant_w);
        let greq = treq.gmem.map(|(write, addr, len)| GmemReq {
            write,
            addr,
            len,
            data: match (write, treq.gmem_data_from_smem) {
                (false, _) => &[],
                (true, true) => self.smem.read_data().unwrap_or(&[]),
                (true, false) => self.tma.store_data(),
            },
            tag: 0,
        });
        let gf = self.gmem.comb(greq, resp_pop);
        if let Some(f) = gf {
            fault.get_or_insert(MemFault::Gmem(f));
        }
        let grant_g = treq.gmem.is_some() && g.req_ready && gf.is_none();

        // TMA.
        let rdata = if self.rd_cons.q() {
            None
        } else {
            self.smem.read_data()
        };
        let tu = self.tma.update(
            inp.tma_cmd,
            &treq,
            TmaGrants {
                smem_write: grant_w,
                smem_read: grant_r,
                gmem: grant_g,
            },
            rdata,
        );
        if let Some(f) = tu.fault {
            fault.get_or_insert(MemFault::Tma(f));
        }

        // mbarriers: the requesters' ops in order, then the TMA's complete_tx.
        for op in inp.mbar_ops {
            if op.bar >= self.mbars.len() {
                fault.get_or_insert(MemFault::NoMbarrier(op.bar));
            }
        }
        if inp.mbar_ops.is_empty() && tu.complete_tx.is_none() {
            // No barrier is addressed this cycle (most cycles): every one holds.
            for b in &mut self.mbars {
                b.idle();
            }
        } else {
            self.mbar_ops(inp.mbar_ops, tu.complete_tx, &mut fault);
        }

        if let (Some(f), false) = (fault, self.err_valid.q()) {
            self.err_valid.set_d(true);
            self.err_cycle.set_d(cycle);
            self.err_record.write(0, &[f.pack()]);
        }
        out
    }
}

impl<G: MemLevel> MemorySystem<G> {
    /// The memory system serving `clients` clients through [`MemorySystem::comb_clients`]
    /// (1 to [`MAX_CLIENTS`]; one client needs no arbiter and gets none).
    pub fn with_clients(mut self, clients: usize) -> std::result::Result<Self, MemBuildError> {
        if clients == 0 || clients > MAX_CLIENTS {
            return Err(MemBuildError::Clients(ClientCountError(clients)));
        }
        self.arbiter = if clients > 1 {
            Some(ClientArbiter::new(clients)?)
        } else {
            None
        };
        Ok(self)
    }

    /// Clients served.
    pub fn clients(&self) -> usize {
        self.arbiter.as_ref().map_or(1, |a| a.clients)
    }

    /// One cycle with every client's requests: `reqs[i]` is client `i`'s request port and
    /// `grants[i]` receives its grants (entries past [`MemorySystem::clients`] are ignored; a
    /// missing client requests nothing). See the module documentation for the arbitration.
    pub fn comb_clients(&mut self, reqs: &[MemIn<'_>], grants: &mut [MemOut]) {
        let Some(mut arb) = self.arbiter.take() else {
            let one = self.comb(reqs.first().unwrap_or(&MemIn::default()));
            if let Some(g) = grants.first_mut() {
                *g = one;
            }
            return;
        };
        let n = arb.clients;
        let req = |i: usize| reqs.get(i).copied().unwrap_or_default();
        let cmd = arb.pick(arb.rr_cmd.q(), 0, |i| req(i).tma_cmd.is_some());
        let read = arb.pick(arb.rr_read.q(), arb.hold_read.q(), |i| {
            req(i).smem_read.is_some()
        });
        let write = arb.pick(arb.rr_write.q(), arb.hold_write.q(), |i| {
            req(i).smem_write.is_some()
        });
        let mut ops = std::mem::take(&mut arb.ops);
        ops.clear();
        for i in 0..n {
            ops.extend_from_slice(req(i).mbar_ops);
        }
        let granted = MemIn {
            tma_cmd: cmd.and_then(|i| req(i).tma_cmd),
            smem_read: read.and_then(|i| req(i).smem_read),
            smem_write: write.and_then(|i| req(i).smem_write),
            mbar_ops: &ops,
        };
        let read_valid_for = self.consumer_read_pending().then(|| arb.read_client.q());
        let out = self.comb(&granted);
        // The round-robin pointers move past a client whose request was accepted; a
        // shared-memory request not yet accepted holds its port.
        if let Some(i) = cmd.filter(|_| out.tma_ready) {
            arb.rr_cmd.set_d(i as u8);
        }
        match read {
            Some(i) if out.smem_read_ready => {
                arb.rr_read.set_d(i as u8);
                arb.hold_read.set_d(0);
                arb.read_client.set_d(i as u8);
            }
            Some(i) => arb.hold_read.set_d(i as u8 + 1),
            None => arb.hold_read.set_d(0),
        }
        match write {
            Some(i) if out.smem_write_ready => {
                arb.rr_write.set_d(i as u8);
                arb.hold_write.set_d(0);
            }
            Some(i) => arb.hold_write.set_d(i as u8 + 1),
            None => arb.hold_write.set_d(0),
        }
        for (i, g) in grants.iter_mut().enumerate().take(n) {
            *g = MemOut {
                tma_ready: out.tma_ready && cmd == Some(i),
                smem_read_ready: out.smem_read_ready && read == Some(i),
                smem_read_valid: out.smem_read_valid && read_valid_for == Some(i as u8),
                smem_write_ready: out.smem_write_ready && write == Some(i),
                ..out
            };
        }
        arb.ops = ops;
        self.arbiter = Some(arb);
    }
}

impl<G: MemLevel> Module for MemorySystem<G> {
    fn name(&self) -> &str {
        "mem"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.cycle);
        v.reg(&mut self.rd_lock_tma);
        v.reg(&mut self.wr_lock_tma);
        v.reg(&mut self.rd_cons);
        v.reg(&mut self.err_valid);
        v.reg(&mut self.err_cycle);
        v.mem(&mut self.err_record);
        v.child(&mut self.gmem);
        v.child(&mut self.smem);
        v.child(&mut self.tma);
        for b in &mut self.mbars {
            v.child(b);
        }
        if let Some(a) = &mut self.arbiter {
            v.child(a);
        }
    }
}
