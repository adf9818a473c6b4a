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
//! The supply's type parameter says what travels beside the operands ([`WsMemExtras`]):
//! nothing for a dense problem ([`WsMemoryPort::new`]); for a 2:4 sparse A
//! ([`WsMemoryPort::new_sparse`]) its kept values as A and, beside each A box in the same
//! stage, a box of its metadata E, read with each row of A into the E queue (`eq`) whose
//! heads are the selects of every array row; for a block-scaled problem
//! ([`WsMemoryPort::new_mx`]) a box of A's scales beside each A box and one of B's scales
//! beside each weight box, read with their rows into `xaq` and `xbq`. A side box is loaded
//! right after its operand's box (`mem.producer.a_side`, `w_side`) on the same barrier,
//! whose `expect_tx` counts both.

pub mod d_store;
pub mod layout;
pub mod reads;

use std::marker::PhantomData;

use super::extras::WsExtras;
use super::supply::{WsIo, WsSupply};
use crate::hw::config::{CoreConfig, MxSpec};
use crate::hw::extras::{BlockScales, EdgeExtras, SparseSelects};
use crate::hw::feeder::{check_dense_problem, step_lanes, LaneGroup, OperandFeeder};
use crate::hw::mem_port::host::{container_shift, host_rows, le_word, memory_system};
use crate::hw::mem_port::{TmaArbiter, TmaKind, TmaRequest};
use crate::hw::memory::{
    MbarOp, MbarOpKind, MemCounters, MemIn, MemorySystem, SmemLane, SmemWriteLane,
};
use crate::hw::mx_feeder::check_mx_problem;
use crate::hw::sparse_feeder::check_sparse_problem;
use crate::hw::{HwError, MemPortConfig};
use crate::rtl::{Module, Reg, Visitor};
use d_store::WsDStore;
use layout::{WsMemLayout, WsOperands, CD_SLOTS, DESC_A, DESC_B, DESC_C, DESC_XA, DESC_XB};
use reads::WsReads;

/// The TMA loads of the three streams (scope `mem.producer`): boxes issued so far, and,
/// where a side box (E or block scales) follows its operand's box into the same stage,
/// whether the operand's box has gone and the side box is next (`w_side`, `a_side`).
struct WsProducer {
    w_issued: Reg<u32>,
    a_issued: Reg<u32>,
    c_issued: Reg<u32>,
    w_side: Option<Reg<bool>>,
    a_side: Option<Reg<bool>>,
}

impl WsProducer {
    fn pending(r: &Option<Reg<bool>>) -> bool {
        r.as_ref().is_some_and(|r| r.q())
    }
}

impl Module for WsProducer {
    fn name(&self) -> &str {
        "producer"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.w_issued);
        v.reg(&mut self.a_issued);
        v.reg(&mut self.c_issued);
        if let Some(r) = self.w_side.as_mut() {
            v.reg(r);
        }
        if let Some(r) = self.a_side.as_mut() {
            v.reg(r);
        }
    }
}

/// What the memory-fed weight-stationary supply serves beside A and B, by kind of problem
/// (dense `()`, 2:4 sparse [`SparseSelects`], block-scaled [`BlockScales`]): read from the
/// side queues beside the A and weight queues ([`reads`]).
pub trait WsMemExtras<const W: usize>: WsExtras<W> {
    /// Writes schedule step `step`'s extras: B's side (the queued weight row's scales) and,
    /// in every row, A's side of array row `step mod R` of the queued row of A.
    fn from_queues(reads: &WsReads<W>, rows: usize, step: usize, out: &mut Self);
    /// Writes row `row`'s part: array row `step mod R`'s side word of the queued row of A.
    fn row_from_queues(reads: &WsReads<W>, rows: usize, row: usize, step: usize, out: &mut Self);
}

/// A dense problem: nothing beside A and B.
impl<const W: usize> WsMemExtras<W> for () {
    fn from_queues(_: &WsReads<W>, _: usize, _: usize, _: &mut ()) {}
    fn row_from_queues(_: &WsReads<W>, _: usize, _: usize, _: usize, _: &mut ()) {}
}

/// A 2:4 sparse A: each array row's selects beside the row of A.
impl<const W: usize> WsMemExtras<W> for SparseSelects {
    fn from_queues(reads: &WsReads<W>, rows: usize, step: usize, out: &mut SparseSelects) {
        out.meta.fill(reads.xa_head(step % rows));
    }
    fn row_from_queues(
        reads: &WsReads<W>,
        rows: usize,
        row: usize,
        step: usize,
        out: &mut SparseSelects,
    ) {
        out.meta[row] = reads.xa_head(step % rows);
    }
}

/// Block-scaled A and B: A's K-block scale beside each array row of A, B's beside each
/// column of the weight row.
impl<const W: usize> WsMemExtras<W> for BlockScales {
    fn from_queues(reads: &WsReads<W>, rows: usize, step: usize, out: &mut BlockScales) {
        out.a.fill(reads.xa_head(step % rows) as u8);
        for (j, x) in out.b.iter_mut().enumerate() {
            *x = reads.xb_head(j) as u8;
        }
    }
    fn row_from_queues(
        reads: &WsReads<W>,
        rows: usize,
        row: usize,
        step: usize,
        out: &mut BlockScales,
    ) {
        out.a[row] = reads.xa_head(step % rows) as u8;
    }
}

/// The memory-fed supply of the weight-stationary core (see the module documentation), its
/// extras `X` the kind of problem: dense `()`, 2:4 sparse, or block-scaled.
pub struct WsMemoryPort<const W: usize, X: WsMemExtras<W> = ()> {
    lay: WsMemLayout,
    mem: MemorySystem,
    spec: <X as EdgeExtras<W>>::Spec,
    box_bytes: [u32; 6],
    init_done: Reg<bool>,
    producer: WsProducer,
    reads: WsReads<W>,
    d_store: WsDStore,
    arbiter: TmaArbiter,
    lanes: Vec<SmemLane>,
    writes: Vec<SmemWriteLane>,
    mbar_ops: Vec<MbarOp>,
    extras: PhantomData<X>,
}

/// The host writes C into its column-tile panels.
fn host_c(mem: &mut MemorySystem, lay: &WsMemLayout, c: &[u32]) {
    let (m, n) = (lay.sched.m, lay.sched.n);
    for i in 0..m {
        for j in 0..n {
            let word = c[i * n + j].to_le_bytes();
            mem.host_write(lay.cd_addr(true, i, j), &word[..lay.esc as usize]);
        }
    }
}

/// The host writes a `rows x cols` row-major operand (`a`, bit patterns) of a `bits`-bit
/// format into `region`, each element in its `es`-byte container.
fn host_operand(
    mem: &mut MemorySystem,
    region: (u64, u64),
    (es, bits): (u32, u32),
    (rows, cols): (usize, usize),
    a: &[u64],
) {
    let shift = container_shift(es, bits);
    host_rows(mem, region, es, rows, cols, |r, x| a[r * cols + x] << shift);
}

/// The host writes B (`k x n`, row-major codes) into its column-tile panels.
fn host_b(mem: &mut MemorySystem, lay: &WsMemLayout, bits: u32, (k, n): (usize, usize), b: &[u64]) {
    let shift = container_shift(lay.esb, bits);
    for p in 0..k {
        for j in 0..n {
            let word = (b[p * n + j] << shift).to_le_bytes();
            mem.host_write(lay.b_addr(p, j), &word[..lay.esb as usize]);
        }
    }
}

/// The host writes the side blocks beside A (`side`: E, or A's scales): for every box of
/// rows and band, byte `t` of row `i`'s share is `byte(i, band, t)`.
fn host_side(
    mem: &mut MemorySystem,
    lay: &WsMemLayout,
    side: Option<layout::SideRegion>,
    byte: impl Fn(usize, usize, usize) -> u8,
) {
    let Some(x) = side else {
        return;
    };
    let bands = x.blocks / lay.sched.m.div_ceil(lay.a_box_rows);
    let mut row = Vec::with_capacity(x.row_bytes as usize);
    for b in 0..x.blocks {
        let (row_box, band) = (b / bands, b % bands);
        for r in 0..x.rows {
            let i = row_box * lay.a_box_rows + r;
            if i >= lay.sched.m {
                break;
            }
            row.clear();
            row.extend((0..x.row_bytes as usize).map(|t| byte(i, band, t)));
            mem.host_write(x.row_gmem(b, r), &row);
        }
    }
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
        host_operand(&mut mem, lay.a, (lay.esa, cfg.fmt_a.width()), (m, k), a);
        host_b(&mut mem, &lay, cfg.fmt_b.width(), (k, n), b);
        host_c(&mut mem, &lay, c);
        Self::assemble(cfg, lay, mem, ())
    }
}

impl<const W: usize> WsMemoryPort<W, SparseSelects> {
    /// A supply holding the 2:4 sparse `m x n x k` problem (`k` dense, a multiple of 4):
    /// `values` (`m x k/2` kept values of A), `meta` (`m x k/4` metadata nibbles, one a
    /// byte), `b` (`k x n`), `c` (`m x n` in the accumulator format). A holds the kept values
    /// and E, beside it, their metadata, 2 bits a kept value (two nibbles a byte, group `2x`
    /// in the low half of byte `x`, as the output-stationary port packs them), kept in the
    /// blocks [`layout::SideRegion`] describes.
    #[allow(clippy::too_many_arguments)] // the shape and the four matrices of the problem
    pub fn new_sparse(
        cfg: CoreConfig,
        pc: &MemPortConfig,
        m: usize,
        n: usize,
        k: usize,
        values: &[u64],
        meta: &[u8],
        b: &[u64],
        c: &[u32],
    ) -> Result<Self, HwError> {
        check_sparse_problem((m, n, k), values.len(), meta.len(), b.len(), c.len())?;
        let lay = WsMemLayout::new_sparse(&cfg, m, n, k, pc)?;
        let mut mem = memory_system(pc.params, lay.gmem_bytes, lay.mbars(), lay.descriptors())?;
        host_operand(
            &mut mem,
            lay.a,
            (lay.esa, cfg.fmt_a.width()),
            (m, k / 2),
            values,
        );
        host_b(&mut mem, &lay, cfg.fmt_b.width(), (k, n), b);
        host_c(&mut mem, &lay, c);
        // E: byte `x` of row `i` holds the nibbles of groups `2x` and `2x + 1`; each block
        // holds a box of rows' bytes of one band, from the byte of its first kept value.
        let groups = k / 4;
        let nib = |i: usize, g: usize| {
            if g < groups {
                meta[i * groups + g] & 0xF
            } else {
                0
            }
        };
        host_side(&mut mem, &lay, lay.xa, |i, band, t| {
            let x = lay.band_k0(band) / 4 + t;
            nib(i, 2 * x) | nib(i, 2 * x + 1) << 4
        });
        Self::assemble(cfg, lay, mem, ())
    }
}

impl<const W: usize> WsMemoryPort<W, BlockScales> {
    /// A supply holding the block-scaled `m x n x k` problem of `spec` (`k` a multiple of
    /// its block size `bs`): element codes `a` (`m x k`) and `b` (`k x n`), `c` (`m x n`
    /// FP32 bits), and the scale codes of A (`m x k/bs`, kept beside A) and B (`k/bs x n`,
    /// kept beside the weights), each in the blocks [`layout::SideRegion`] describes.
    #[allow(clippy::too_many_arguments)] // the spec, the shape and five matrices
    pub fn new_mx(
        cfg: CoreConfig,
        spec: MxSpec,
        pc: &MemPortConfig,
        (m, n, k): (usize, usize, usize),
        a: &[u64],
        b: &[u64],
        c: &[u32],
        (a_scales, b_scales): (&[u8], &[u8]),
    ) -> Result<Self, HwError> {
        check_dense_problem((m, n, k), (a.len(), b.len(), c.len()))?;
        check_mx_problem(&spec, (m, n, k), a_scales.len(), b_scales.len())?;
        let bs = spec.block();
        let lay = WsMemLayout::new_mx(&cfg, m, n, k, bs, pc)?;
        let mut mem = memory_system(pc.params, lay.gmem_bytes, lay.mbars(), lay.descriptors())?;
        host_operand(&mut mem, lay.a, (lay.esa, cfg.fmt_a.width()), (m, k), a);
        host_b(&mut mem, &lay, cfg.fmt_b.width(), (k, n), b);
        host_c(&mut mem, &lay, c);
        // A's scales: a block holds a box of rows' scales of one band; B's: a block holds a
        // pass's `R` K-blocks by `C` columns (zeros past K or N).
        let blocks = k / bs;
        host_side(&mut mem, &lay, lay.xa, |i, band, t| {
            let x = lay.band_k0(band) / bs + t;
            if x < blocks {
                a_scales[i * blocks + x]
            } else {
                0
            }
        });
        if let Some(sb) = lay.xb {
            let s = lay.sched;
            for p in 0..s.col_tiles * s.folds {
                let (col_tile, fold) = (p / s.folds, p % s.folds);
                for r in 0..sb.rows {
                    let x = fold * s.rows + r;
                    let row: Vec<u8> = (0..s.cols)
                        .map(|j| {
                            let col = col_tile * s.cols + j;
                            if x < blocks && col < n {
                                b_scales[x * n + col]
                            } else {
                                0
                            }
                        })
                        .collect();
                    mem.host_write(sb.row_gmem(p, r), &row);
                }
            }
        }
        Self::assemble(cfg, lay, mem, spec)
    }
}

impl<const W: usize, X: WsMemExtras<W>> WsMemoryPort<W, X> {
    /// The supply around a filled memory system.
    fn assemble(
        cfg: CoreConfig,
        lay: WsMemLayout,
        mem: MemorySystem,
        spec: <X as EdgeExtras<W>>::Spec,
    ) -> Result<Self, HwError> {
        let box_bytes = std::array::from_fn(|d| mem.descriptor_box_bytes(d));
        let reg32 = |name: &'static str| Reg::new(name, 32, 0u32);
        let side = |present: bool, name: &'static str| {
            present.then(|| Reg::new(name, 1, false)).transpose()
        };
        Ok(Self {
            lay,
            mem,
            spec,
            box_bytes,
            init_done: Reg::new("init_done", 1, false)?,
            producer: WsProducer {
                w_issued: reg32("w_issued")?,
                a_issued: reg32("a_issued")?,
                c_issued: reg32("c_issued")?,
                w_side: side(lay.xb.is_some(), "w_side")?,
                a_side: side(lay.xa.is_some(), "a_side")?,
            },
            reads: WsReads::new(lay, cfg.fmt_a.width(), cfg.fmt_b.width(), cfg.acc.width())?,
            d_store: WsDStore::new(lay, cfg.acc.width())?,
            arbiter: TmaArbiter::new()?,
            lanes: Vec::with_capacity(64),
            writes: Vec::with_capacity(8),
            mbar_ops: Vec::with_capacity(lay.mbars()),
            extras: PhantomData,
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
                (lay.c_bar(g).0, true),
            )
        })
    }

    /// The weight box of the next pass (then its side box), else the next A box (then its
    /// side box). An operand's box carries the `arrive.expect_tx` of its side box's bytes
    /// too: the stage's barrier completes when both have landed.
    fn operand_load(&self) -> Option<TmaRequest> {
        let lay = &self.lay;
        let p = self.producer.w_issued.q() as usize;
        if WsProducer::pending(&self.producer.w_side) {
            let x = lay.xb_row_addr(p, 0).unwrap_or(0);
            return Some(self.load(
                TmaKind::LoadS,
                DESC_XB,
                lay.xb_coords(p),
                x,
                (lay.w_bar(p).0, false),
            ));
        }
        if p < lay.passes() && p < self.reads.w_passes_read() + lay.w_stages {
            return Some(self.load(
                TmaKind::LoadB,
                DESC_B,
                lay.w_coords(p),
                lay.w_row_addr(p, 0),
                (lay.w_bar(p).0, true),
            ));
        }
        let g = self.producer.a_issued.q() as usize;
        if WsProducer::pending(&self.producer.a_side) {
            let kind = match lay.operands {
                WsOperands::Sparse { .. } => TmaKind::LoadE,
                _ => TmaKind::LoadS,
            };
            return Some(self.load(
                kind,
                DESC_XA,
                lay.xa_coords(g),
                lay.xa_box_addr(g),
                (lay.a_bar(g).0, false),
            ));
        }
        (g < lay.a_boxes() && g < self.reads.a_boxes_read() + lay.a_stages).then(|| {
            self.load(
                TmaKind::LoadA,
                DESC_A,
                lay.a_coords(g),
                lay.a_row_addr(g, 0),
                (lay.a_bar(g).0, true),
            )
        })
    }

    /// A load of descriptor `desc`'s box; `expect`: it posts the `arrive.expect_tx` of its
    /// stage (its own bytes and, for an operand box, its side box's).
    fn load(
        &self,
        kind: TmaKind,
        desc: usize,
        coords: [i32; 5],
        addr: u32,
        (bar, expect): (usize, bool),
    ) -> TmaRequest {
        let side = match desc {
            DESC_A => self.box_bytes[DESC_XA],
            DESC_B => self.box_bytes[DESC_XB],
            _ => 0,
        };
        let mut r = TmaRequest::load(kind, desc, coords, addr, (bar, self.box_bytes[desc] + side));
        if !expect {
            r.expect = None;
        }
        r
    }

    /// The producer's update for a granted load of descriptor `desc`: an operand box with a
    /// side box to follow leaves its count for the side box to advance.
    fn granted(&mut self, desc: usize) {
        let p = &mut self.producer;
        let bump = |r: &mut Reg<u32>| r.set_d(r.q() + 1);
        match desc {
            DESC_B => match p.w_side.as_mut() {
                Some(side) => side.set_d(true),
                None => bump(&mut p.w_issued),
            },
            DESC_XB => {
                if let Some(side) = p.w_side.as_mut() {
                    side.set_d(false);
                }
                bump(&mut p.w_issued);
            }
            DESC_A => match p.a_side.as_mut() {
                Some(side) => side.set_d(true),
                None => bump(&mut p.a_issued),
            },
            DESC_XA => {
                if let Some(side) = p.a_side.as_mut() {
                    side.set_d(false);
                }
                bump(&mut p.a_issued);
            }
            DESC_C => bump(&mut p.c_issued),
            _ => {}
        }
    }

    fn stores_completed(&self) -> u32 {
        self.d_store.stored() - self.mem.stores_outstanding()
    }

    /// How many of step `step`'s `w` lanes of A hold data (0 past K; kept values for a
    /// sparse A).
    fn lanes_at(&self, step: usize) -> usize {
        let s = &self.lay.sched;
        step_lanes::<W>(s.k, s.width, step).1
    }

    /// How many of the lanes of step `step`'s weight row hold data (0 past K): as A's, or
    /// for a sparse A the dense positions of its kept values' groups.
    fn b_lanes_at(&self, step: usize) -> usize {
        match self.lay.operands {
            WsOperands::Sparse { k_dense } => {
                let k0 = self.lay.w_k0(step);
                if k0 >= k_dense {
                    0
                } else {
                    self.lay.w_spans.min(k_dense - k0)
                }
            }
            _ => self.lanes_at(step),
        }
    }
}

impl<const W: usize, X: WsMemExtras<W>> Module for WsMemoryPort<W, X> {
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

impl<const W: usize, X: WsMemExtras<W>> OperandFeeder<W> for WsMemoryPort<W, X> {
    type Extras = X;

    fn dims(&self) -> (usize, usize, usize) {
        let s = &self.lay.sched;
        (s.m, s.n, s.k)
    }

    fn spec(&self) -> <X as EdgeExtras<W>>::Spec {
        self.spec
    }

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
        let lanes = self.b_lanes_at(step);
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

    /// B's side values of the queued weight row and A's of array row `step mod R` of the
    /// queued row of A.
    fn extras(&self, _tile: usize, step: usize, out: &mut X) {
        X::from_queues(&self.reads, self.lay.sched.rows, step, out);
    }

    /// Array row `step mod R`'s side values of the queued row of A.
    fn row_extras(&self, _tile: usize, row: usize, step: usize, out: &mut X) {
        X::row_from_queues(&self.reads, self.lay.sched.rows, row, step, out);
    }
}

impl<const W: usize, X: WsMemExtras<W>> WsSupply<W> for WsMemoryPort<W, X> {
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
        if let Some(g) = grant.filter(|g| g.kind != TmaKind::StoreD) {
            self.granted(g.cmd.desc);
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
