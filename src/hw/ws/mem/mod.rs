//! The memory-fed supply of the weight-stationary core (scope `mem`): A, B and C start in
//! global memory and travel by TMA into shared memory, the weights once per pass, the rows
//! of A once per pass that streams them, C once per output block; the array's operands are
//! read from shared memory into queues; D leaves through shared memory and a TMA store
//! (`docs/memory.md`, "The weight-stationary memory path"). It is a [`WsSupply`]: the core
//! built on it ([`crate::hw::ws::WsCore`]) loads a weight row or feeds a row of A only when
//! the queue holds it (and, on a first fold, its row of C; on a last fold, room for its D).
//!
//! - [`layout`]: where everything lives (pure arithmetic).
//! - `mem.producer` (this file): the TMA loads, each stream's boxes in order into its ring
//!   of stages once the ring has room (`w_issued`, `a_issued`, `c_issued`).
//! - [`reads`] (`mem.consumer`): the shared-memory reads into the weight, A and C queues.
//! - [`d_store`] (`mem.d_store`): the D queue, the slot writes and the TMA stores.
//! - `mem.arbiter`: one TMA command a cycle: the store, else C, else the weights, else A.
//!
//! Dense floating-point and integer problems only: a 2:4 sparse or block-scaled problem in
//! `ws` runs on the ideal store (refused here before the run, with the reason).

pub mod d_store;
pub mod layout;
pub mod reads;

use super::supply::{WsIo, WsSupply};
use crate::hw::config::CoreConfig;
use crate::hw::feeder::{check_dense_problem, step_lanes, LaneGroup, OperandFeeder};
use crate::hw::mem_port::host::{container_shift, host_rows, le_word, memory_system};
use crate::hw::mem_port::{TmaArbiter, TmaKind, TmaRequest};
use crate::hw::memory::{
    MbarOp, MbarOpKind, MemCounters, MemIn, MemorySystem, SmemLane, SmemWriteLane,
};
use crate::hw::{HwError, MemPortConfig};
use crate::rtl::{Module, Reg, Visitor};
use d_store::WsDStore;
use layout::{WsMemLayout, CD_SLOTS, DESC_A, DESC_B, DESC_C};
use reads::WsReads;

/// The TMA loads of the three streams (scope `mem.producer`): boxes issued so far.
struct WsProducer {
    w_issued: Reg<u32>,
    a_issued: Reg<u32>,
    c_issued: Reg<u32>,
}

impl Module for WsProducer {
    fn name(&self) -> &str {
        "producer"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.w_issued);
        v.reg(&mut self.a_issued);
        v.reg(&mut self.c_issued);
    }
}

/// The memory-fed supply of the weight-stationary core (see the module documentation).
pub struct WsMemoryPort<const W: usize> {
    lay: WsMemLayout,
    mem: MemorySystem,
    box_bytes: [u32; 3],
    init_done: Reg<bool>,
    producer: WsProducer,
    reads: WsReads<W>,
    d_store: WsDStore,
    arbiter: TmaArbiter,
    lanes: Vec<SmemLane>,
    writes: Vec<SmemWriteLane>,
    mbar_ops: Vec<MbarOp>,
}

impl<const W: usize> WsMemoryPort<W> {
    /// A supply holding the dense `m x n x k` problem (`a`: `m x k`, `b`: `k x n`, row-major
    /// bit patterns; `c`: `m x n` in the accumulator format) in global memory, laid out as
    /// [`WsMemLayout`] says, for a core built for `cfg` (dataflow `ws`).
    #[allow(clippy::too_many_arguments)] // the shape and the three matrices of the problem
    pub fn new(
        cfg: CoreConfig,
        pc: &MemPortConfig,
        m: usize,
        n: usize,
        k: usize,
        a: &[u64],
        b: &[u64],
        c: &[u32],
    ) -> Result<Self, HwError> {
        check_dense_problem((m, n, k), (a.len(), b.len(), c.len()))?;
        let lay = WsMemLayout::new(&cfg, m, n, k, pc)?;
        let mut mem = memory_system(pc.params, lay.gmem_bytes, lay.mbars(), lay.descriptors())?;
        // The host fills global memory: A (K-major), B and C (column-tile panels).
        let (sa, sb) = (
            container_shift(lay.esa, cfg.fmt_a.width()),
            container_shift(lay.esb, cfg.fmt_b.width()),
        );
        host_rows(&mut mem, lay.a, lay.esa, m, k, |i, p| a[i * k + p] << sa);
        // B and C into their column-tile panels.
        for p in 0..k {
            for j in 0..n {
                let word = (b[p * n + j] << sb).to_le_bytes();
                mem.host_write(lay.b_addr(p, j), &word[..lay.esb as usize]);
            }
        }
        for i in 0..m {
            for j in 0..n {
                let word = c[i * n + j].to_le_bytes();
                mem.host_write(lay.cd_addr(true, i, j), &word[..lay.esc as usize]);
            }
        }
        let box_bytes = [
            mem.descriptor_box_bytes(DESC_A),
            mem.descriptor_box_bytes(DESC_B),
            mem.descriptor_box_bytes(DESC_C),
        ];
        let reg32 = |name: &'static str| Reg::new(name, 32, 0u32);
        Ok(Self {
            lay,
            mem,
            box_bytes,
            init_done: Reg::new("init_done", 1, false)?,
            producer: WsProducer {
                w_issued: reg32("w_issued")?,
                a_issued: reg32("a_issued")?,
                c_issued: reg32("c_issued")?,
            },
            reads: WsReads::new(lay, cfg.fmt_a.width(), cfg.fmt_b.width(), cfg.acc.width())?,
            d_store: WsDStore::new(lay, cfg.acc.width())?,
            arbiter: TmaArbiter::new()?,
            lanes: Vec::with_capacity(64),
            writes: Vec::with_capacity(8),
            mbar_ops: Vec::with_capacity(lay.mbars()),
        })
    }

    /// The layout in use.
    pub fn layout(&self) -> &WsMemLayout {
        &self.lay
    }

    /// The memory system's counters.
    pub fn counters(&self) -> MemCounters {
        self.mem.counters()
    }

    /// D as stored in global memory, read from its panels (`m x n` bit patterns of the
    /// accumulator format, row-major).
    pub fn read_d(&self) -> Vec<u32> {
        let s = &self.lay.sched;
        let es = self.lay.esc as usize;
        let mut d = Vec::with_capacity(s.m * s.n);
        for i in 0..s.m {
            for j in 0..s.n {
                d.push(le_word(self.mem.host_read(self.lay.cd_addr(false, i, j), es)) as u32);
            }
        }
        d
    }

    /// The loads the producer bids for this cycle (C first: a first fold waits on it).
    fn c_load(&self) -> Option<TmaRequest> {
        let lay = &self.lay;
        let g = self.producer.c_issued.q() as usize;
        (g < lay.cd_boxes() && g < self.reads.c_boxes_read() + CD_SLOTS).then(|| {
            self.load(
                TmaKind::LoadC,
                DESC_C,
                lay.cd_coords(g),
                lay.c_row_addr(g, 0),
                lay.c_bar(g).0,
            )
        })
    }

    /// The weight box of the next pass, else the next A box.
    fn operand_load(&self) -> Option<TmaRequest> {
        let lay = &self.lay;
        let p = self.producer.w_issued.q() as usize;
        if p < lay.passes() && p < self.reads.w_passes_read() + lay.w_stages {
            return Some(self.load(
                TmaKind::LoadB,
                DESC_B,
                lay.w_coords(p),
                lay.w_row_addr(p, 0),
                lay.w_bar(p).0,
            ));
        }
        let g = self.producer.a_issued.q() as usize;
        (g < lay.a_boxes() && g < self.reads.a_boxes_read() + lay.a_stages).then(|| {
            self.load(
                TmaKind::LoadA,
                DESC_A,
                lay.a_coords(g),
                lay.a_row_addr(g, 0),
                lay.a_bar(g).0,
            )
        })
    }

    fn load(
        &self,
        kind: TmaKind,
        desc: usize,
        coords: [i32; 5],
        addr: u32,
        bar: usize,
    ) -> TmaRequest {
        TmaRequest::load(kind, desc, coords, addr, (bar, self.box_bytes[desc]))
    }

    fn stores_completed(&self) -> u32 {
        self.d_store.stored() - self.mem.stores_outstanding()
    }

    /// How many of step `step`'s `w` lanes hold data (0 past K).
    fn lanes_at(&self, step: usize) -> usize {
        let s = &self.lay.sched;
        step_lanes::<W>(s.k, s.width, step).1
    }
}

impl<const W: usize> Module for WsMemoryPort<W> {
    fn name(&self) -> &str {
        "mem"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.init_done);
        self.mem.visit(v);
        v.child(&mut self.producer);
        v.child(&mut self.reads);
        v.child(&mut self.d_store);
        v.child(&mut self.arbiter);
    }
}

impl<const W: usize> OperandFeeder<W> for WsMemoryPort<W> {
    type Extras = ();

    fn dims(&self) -> (usize, usize, usize) {
        let s = &self.lay.sched;
        (s.m, s.n, s.k)
    }

    fn spec(&self) {}

    /// Array row `step mod R`'s lanes of the queued row of A (the core asks for the row the
    /// queue's head holds: rows are taken in order).
    fn a(&self, _tile: usize, _row: usize, step: usize) -> LaneGroup<W> {
        let lanes = self.lanes_at(step);
        if lanes == 0 {
            return LaneGroup::default();
        }
        LaneGroup {
            bits: self.reads.a_head(step % self.lay.sched.rows),
            lanes,
        }
    }

    /// Column `col` of the queued weight row.
    fn b(&self, col_tile: usize, col: usize, step: usize) -> LaneGroup<W> {
        let s = &self.lay.sched;
        let lanes = self.lanes_at(step);
        if lanes == 0 || col_tile * s.cols + col >= s.n {
            return LaneGroup::default();
        }
        LaneGroup {
            bits: self.reads.w_head(col),
            lanes,
        }
    }

    /// The queued row of C (the accumulator block reads them in the order they were claimed).
    fn c_row(&self, _tile: usize, _row: usize, out: &mut [u32]) {
        for (j, o) in out.iter_mut().enumerate() {
            *o = self.reads.c_head(j).unwrap_or(0);
        }
    }

    fn extras(&self, _tile: usize, _step: usize, _out: &mut ()) {}
}

impl<const W: usize> WsSupply<W> for WsMemoryPort<W> {
    fn w_ready(&self) -> bool {
        self.reads.w_ready()
    }

    fn a_ready(&self, first: bool, last: bool) -> bool {
        self.reads.a_ready(first) && (!last || self.d_store.room())
    }

    fn done(&self, _out_last: bool) -> bool {
        self.d_store.drained() && self.mem.stores_outstanding() == 0
    }

    fn tick(&mut self, io: &WsIo<'_>) {
        self.mbar_ops.clear();
        self.lanes.clear();
        if !self.init_done.q() {
            for bar in 0..self.lay.mbars() {
                self.mbar_ops.push(MbarOp {
                    bar,
                    op: MbarOpKind::Init(1),
                });
            }
            self.init_done.set_d(true);
        }
        let ready = self.init_done.q();
        let mem = &self.mem;
        let parts = self.reads.request(
            ready,
            |(bar, p)| mem.try_wait_parity(bar, p),
            &mut self.lanes,
        );
        let completed = self.stores_completed();
        let write = self.d_store.write_request(completed, &mut self.writes);
        let (store, c_load, operand) = (
            self.d_store.store_request(),
            self.c_load(),
            self.operand_load(),
        );
        let grant = self.arbiter.comb(
            ready && self.mem.tma_ready(),
            || store,
            || c_load,
            || operand,
        );
        if let Some(op) = grant.and_then(|g| g.expect) {
            self.mbar_ops.push(op);
        }
        let out = self.mem.comb(&MemIn {
            tma_cmd: grant.map(|g| g.cmd),
            smem_read: (parts != 0).then_some(&self.lanes[..]),
            smem_write: write.then_some(&self.writes[..]),
            mbar_ops: &self.mbar_ops,
        });
        match grant.map(|g| g.kind) {
            Some(TmaKind::LoadB) => self.producer.w_issued.set_d(self.producer.w_issued.q() + 1),
            Some(TmaKind::LoadA) => self.producer.a_issued.set_d(self.producer.a_issued.q() + 1),
            Some(TmaKind::LoadC) => self.producer.c_issued.set_d(self.producer.c_issued.q() + 1),
            _ => {}
        }
        let accepted = parts != 0 && out.smem_read_ready;
        let (first, last) = io.feed.unwrap_or((false, false));
        let data = self.mem.smem_read_data();
        self.reads.commit(
            parts,
            accepted,
            data,
            io.load,
            io.feed.is_some(),
            io.feed.is_some() && first,
            io.c_read,
        );
        self.d_store.commit(
            grant.map(|g| g.kind) == Some(TmaKind::StoreD),
            write && out.smem_write_ready,
            io.feed.is_some() && last,
            io.d_row.as_ref(),
        );
    }

    fn visit_supply<V: Visitor>(&mut self, v: &mut V) {
        v.child(self);
    }

    fn smem_read_bytes(&self) -> u64 {
        self.mem.smem_read_data().len() as u64
    }

    fn error(&self) -> Option<String> {
        self.mem.error().map(|e| e.to_string())
    }
}
