//! The memory-fed operand port (scope `mem`): A, B and C start in global memory, travel by
//! TMA into multi-buffered shared-memory stages, are read from shared memory into the array's
//! skew, and D leaves through shared memory and a TMA store. The memory blocks themselves
//! (global memory, shared memory, TMA engine, mbarriers) are [`crate::hw::memory`]; this port
//! adds the pipeline around them, as CUTLASS's multistage main loop does in software, split
//! by role as Gemmini's `LoopMatmul` splits its loop into load, execute and store units with
//! decoupled commands (`docs/memory.md`, "The port's roles"):
//!
//! - [`layout`]: where everything lives (pure address arithmetic, no registers), the dense
//!   and 2:4 sparse variants, and each chunk's load plan (the boxes it loads).
//! - [`producer`] (`mem.producer`): the operand loads into the stages and the C loads ahead
//!   into the C slots.
//! - [`consumer`] (`mem.consumer`): the step reads from shared memory, the hold registers
//!   and the release of stages.
//! - [`c_fetch`] (`mem.c_fetch`): C words from their slot into the register banks the
//!   shift windows read.
//! - [`d_store`] (`mem.d_store`): the D row queue, the slot writes and the TMA stores.
//! - [`arbiter`] (`mem.arbiter`): one TMA command a cycle, stores first, then C, then
//!   operands.
//!
//! The roles talk only through typed values passed in this block's `comb` (requests,
//! grants, the read's outcome): none reads another's wires or pending register inputs. The
//! `mem` scope keeps what they share: setup (`init_done`), the read request's handshake
//! (`rd_req`, `rd_accept`), the offer (`valid`, `take`), the overlap counter, and the memory
//! system (`mem.gmem`, `mem.smem`, `mem.tma`, `mem.mbar_<i>`).
//!
//! C and D words are as wide as the accumulator: 4 bytes for FP32, 2 for FP16 (the C
//! registers and D queue rows are `C x 32` or `C x 16` bits). A TMA box's inner extent
//! must be a multiple of 16 bytes, so on the 4 x 4 core the C/D box is 16 bytes wide: one
//! 4 x 4 FP32 tile, or for FP16 two neighbouring tiles of a tile row side by side (8 x 4 FP16,
//! the left tile at byte 0 of a box row, the right at byte 8). Either way a box is 64 bytes
//! and fills one 128-byte slot; a box's right tile past N is out of bounds (zeros loaded,
//! nothing stored), so global memory moves exactly `2` (FP16) or `4` (FP32) bytes per element
//! of C and D. On any array a box row is `lcm(C x bytes, 16)` bytes, as many whole tiles as
//! that takes ([`MemLayout::box_row_bytes`]), and a step wider than one request is read in
//! beats (`docs/memory.md`, "Any array size").
//!
//! Global-memory layout: A is `M x K` row-major (K-major), B is stored transposed (`N x K`,
//! K-major, as tensor cores prefer, the "TN" layout), C and D are `M x N` in the accumulator
//! format (FP32 or FP16); every row starts at a 16-byte-aligned pitch. Shared memory: stage `s`
//! is a block of `ceil((R + C) / 8)` 1024-byte swizzle atoms with A (stream mode) in its first
//! `R` rows and B in the next `C` rows of the 128B swizzle pattern, so up to eight lanes of a
//! step fall in eight different 16-byte chunks (banks) and a step reads in one pass. When an `R`-row panel of A fits
//! twice in shared memory, A is loaded once per tile row into one of two panels and reused by
//! every tile of the row (panel mode, the reuse that keeps a GEMM under the bandwidth
//! roofline).
//!
//! **2:4 sparse** ([`MemoryPort::new_sparse`]): A holds the `M x K/2` kept values and E, a fifth
//! region and descriptor, their metadata, 2 bits a kept value (`M x ceil(K/8)` bytes, two
//! nibbles a byte, group `2x` in the low half of byte `x`). A chunk is [`SPARSE_KC`] kept values:
//! one A box, one 16-byte E box row, and the 128 dense B positions they select from in
//! `bytes(B)` boxes of 128 bytes (`load_a`, `load_e`, `load_b`.., counted by `producer_part`,
//! one `expect_tx` for all). A stage is one swizzle atom for E (row 0) and A (from row 2), plus
//! one atom per B box; in panel mode A and E sit in the panels. A step reads `w` kept values
//! per row, `max(2w, 4)` B positions per column, and on a chunk's first step the E rows
//! (kept in `e_row_<i>` for the chunk's other steps); the selects go beside A in the step's
//! extras, [`SparseSelects`] (`hold_e_<i>` while held). The port's type says which:
//! [`MemoryPort::new`] builds a `MemoryPort<W>` (dense, extras `()`),
//! [`MemoryPort::new_sparse`] a `MemoryPort<W, SparseSelects>`, so the core built on it gets
//! the sparse datapath from the type.
//!
//! **Block-scaled** (MX, NVFP4: [`MemoryPort::new_mx`], a `MemoryPort<W, BlockScales>`): A and
//! B as dense (one byte an element, `KC = 128`), and two more regions and descriptors after D,
//! XA (A's scales) and XB (B's), kept in blocks: one block (a row of the region, one box at
//! inner coordinate 0, a 16-byte boundary) per tile row (column) and chunk, holding a 16-byte
//! slot per row (column) of the tile with the chunk's `128 / bs` scales (4, or 8 for NVFP4):
//! A's from byte 0 of the slot, B's from byte 8, so that a step's reads of A's and B's scales
//! never share a bank. A chunk loads A, XA,
//! B, XB (`load_s` for the scale boxes; one `expect_tx` for all); a stage holds the dense
//! operand atoms then the XA box (`R` slots) and the XB box (`C` slots), each at a 128-byte
//! boundary, in whole atoms; in panel mode XA sits in the panel block after A's atoms. A
//! chunk's first step reads each row's and column's scales of the chunk beside its operands
//! (one lane each) into `xa_row_<i>`, `xb_row_<j>`; every step's scales (its K-block's byte)
//! go beside A and B in its extras, [`BlockScales`].

pub mod arbiter;
pub mod c_fetch;
mod config;
pub mod consumer;
pub mod d_store;
pub(crate) mod host;
pub mod layout;
pub mod producer;

pub use arbiter::{TmaArbiter, TmaKind, TmaRequest};
pub use c_fetch::CFetch;
pub use config::{MemPortConfig, MAX_STAGES, MAX_TILE_SLOTS};
pub use consumer::{Consumer, PortExtras};
pub use d_store::DStore;
pub use layout::{LoadPart, LoadPlan, MemLayout, OperandLayout, SPARSE_KC};
pub use producer::Producer;

use super::config::CoreConfig;
use super::config::MxSpec;
use super::extras::{BlockScales, EdgeExtras, SparseSelects};
use super::feeder::check_dense_problem;
use super::memory::{
    MbarOp, MbarOpKind, MemCounters, MemIn, MemorySystem, SmemLane, SmemWriteLane,
};
use super::mx_feeder::check_mx_problem;
use super::port::{OperandPort, PortIo, StepOperands};
use super::schedule::Schedule;
use super::sparse_feeder::check_sparse_problem;
use super::HwError;
use crate::rtl::{Module, Reg, Visitor, Wire};
use config::MAX_REQUEST_LANES;
use host::{container_shift, host_rows};
use producer::ProducerIn;

/// The memory-fed operand port (see the module documentation), serving extras `X`: `()`
/// for a dense problem, [`SparseSelects`] for a 2:4 sparse one, [`BlockScales`] for a
/// block-scaled one.
pub struct MemoryPort<const W: usize, X: PortExtras<W> = ()> {
    cfg: CoreConfig,
    spec: <X as EdgeExtras<W>>::Spec,
    lay: MemLayout,
    mem: MemorySystem,
    mbar_ops: Vec<MbarOp>,
    lanes: Vec<SmemLane>,
    write_lanes: Vec<SmemWriteLane>,
    // Shared state.
    init_done: Reg<bool>,
    overlap: Reg<u64>,
    valid: Wire<bool>,
    take: Wire<bool>,
    rd_req: Wire<bool>,
    rd_accept: Wire<bool>,
    // The roles.
    producer: Producer,
    consumer: Consumer<W, X>,
    c_fetch: CFetch,
    d_store: DStore,
    arbiter: TmaArbiter,
}

impl<const W: usize> MemoryPort<W> {
    /// A port holding the `m x n x k` problem (`a`: `m x k`, `b`: `k x n`, row-major bit
    /// patterns; `c`: `m x n` in the accumulator format `cfg.acc`, FP32 or FP16 bits) in
    /// global memory, laid out as [`MemLayout`] says.
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
        let lay = MemLayout::new(&cfg, m, n, k, pc)?;
        let mut mem = Self::memory(pc, &lay)?;
        // The host fills global memory: A (K-major), B transposed (K-major), C.
        let (sa, sb) = (
            container_shift(lay.esa, cfg.fmt_a.width()),
            container_shift(lay.esb, cfg.fmt_b.width()),
        );
        host_rows(&mut mem, lay.a, lay.esa, m, k, |i, p| a[i * k + p] << sa);
        host_rows(&mut mem, lay.b, lay.esb, n, k, |j, p| b[p * n + j] << sb);
        host_rows(&mut mem, lay.c, lay.esc, m, n, |i, j| {
            u64::from(c[i * n + j])
        });
        Self::assemble(cfg, (), lay, mem)
    }

    /// A port holding an `m x n x k` 2:4 sparse problem (`k` dense, a multiple of 4):
    /// `values` (`m x k/2` kept values), `meta` (`m x k/4` nibbles, one a byte, the PTX
    /// `ordered_metadata` encoding), `b` (`k x n`), `c` (`m x n`), laid out as
    /// [`MemLayout::new_sparse`] says: global memory holds the kept values as A and the
    /// nibbles packed two a byte as E (group `2x` in the low half of byte `x`). The port
    /// serves the selects beside A: its type is `MemoryPort<W, SparseSelects>`.
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
    ) -> Result<MemoryPort<W, SparseSelects>, HwError> {
        check_sparse_problem((m, n, k), values.len(), meta.len(), b.len(), c.len())?;
        let lay = MemLayout::new_sparse(&cfg, m, n, k, pc)?;
        let mut mem = Self::memory(pc, &lay)?;
        let (kept, groups) = (k / 2, k / 4);
        host_rows(&mut mem, lay.a, lay.esa, m, kept, |i, p| {
            values[i * kept + p]
        });
        host_rows(&mut mem, lay.e, 1, m, k.div_ceil(8), |i, x| {
            let nib = |g: usize| {
                if g < groups {
                    meta[i * groups + g] & 15
                } else {
                    0
                }
            };
            u64::from(nib(2 * x) | nib(2 * x + 1) << 4)
        });
        host_rows(&mut mem, lay.b, lay.esb, n, k, |j, p| b[p * n + j]);
        host_rows(&mut mem, lay.c, lay.esc, m, n, |i, j| {
            u64::from(c[i * n + j])
        });
        MemoryPort::assemble(cfg, (), lay, mem)
    }

    /// A port holding an `m x n x k` block-scaled problem for a core built for `spec` (`k` a
    /// multiple of its block size `bs`): `a` (`m x k` element codes), `b` (`k x n`), `c`
    /// (`m x n` FP32 bits) and the scale codes of A (`m x k/bs`) and B (`k/bs x n`), laid out
    /// as [`MemLayout::new_mx`] says: global memory holds the scales in the regions XA and XB
    /// (module documentation). The port serves the scales beside A and B: its type is
    /// `MemoryPort<W, BlockScales>`.
    #[allow(clippy::too_many_arguments)] // the spec, the shape, and the five matrices
    pub fn new_mx(
        cfg: CoreConfig,
        spec: MxSpec,
        pc: &MemPortConfig,
        (m, n, k): (usize, usize, usize),
        a: &[u64],
        b: &[u64],
        c: &[u32],
        (a_scales, b_scales): (&[u8], &[u8]),
    ) -> Result<MemoryPort<W, BlockScales>, HwError> {
        check_mx_problem(&spec, (m, n, k), a_scales.len(), b_scales.len())?;
        check_dense_problem((m, n, k), (a.len(), b.len(), c.len()))?;
        let bs = spec.block();
        let lay = MemLayout::new_mx(&cfg, bs, (m, n, k), pc)?;
        let mut mem = MemoryPort::<W, BlockScales>::memory(pc, &lay)?;
        let (sa, sb) = (
            container_shift(lay.esa, cfg.fmt_a.width()),
            container_shift(lay.esb, cfg.fmt_b.width()),
        );
        host_rows(&mut mem, lay.a, lay.esa, m, k, |i, p| a[i * k + p] << sa);
        host_rows(&mut mem, lay.b, lay.esb, n, k, |j, p| b[p * n + j] << sb);
        host_rows(&mut mem, lay.c, lay.esc, m, n, |i, j| {
            u64::from(c[i * n + j])
        });
        // The scales, in blocks: block `t * chunks + q` holds tile row (column) `t`'s slots
        // of chunk `q`, each the chunk's `x_bytes` scales of one row (column), A's from byte
        // 0, B's from byte 8; the rest of a slot, rows past M, columns past N and K-blocks
        // past K zero.
        let (blocks, per_chunk, chunks) = (k / bs, lay.x_bytes as usize, lay.chunks);
        let slot = layout::X_SLOT_BYTES as usize;
        let (rows, cols) = (cfg.rows(), cfg.cols());
        // The (line, K-block) byte `x` of block `b` holds, `lines` lines a tile.
        let scale_at = |b: usize, x: usize, lines: usize, off: usize, limit: usize| {
            let o = (x % slot).checked_sub(off)?;
            let line = (b / chunks) * lines + x / slot;
            let blk = (b % chunks) * per_chunk + o;
            (o < per_chunk && line < limit && blk < blocks).then_some((line, blk))
        };
        let a_blocks = m.div_ceil(rows) * chunks;
        host_rows(&mut mem, lay.xa, 1, a_blocks, rows * slot, |b, x| {
            scale_at(b, x, rows, 0, m).map_or(0, |(i, blk)| u64::from(a_scales[i * blocks + blk]))
        });
        let xb_off = layout::XB_SLOT_OFF as usize;
        let b_blocks = n.div_ceil(cols) * chunks;
        host_rows(&mut mem, lay.xb, 1, b_blocks, cols * slot, |b, x| {
            scale_at(b, x, cols, xb_off, n).map_or(0, |(j, blk)| u64::from(b_scales[blk * n + j]))
        });
        MemoryPort::assemble(cfg, spec, lay, mem)
    }
}

impl<const W: usize, X: PortExtras<W>> MemoryPort<W, X> {
    /// The memory system of `lay`, its descriptors set.
    fn memory(pc: &MemPortConfig, lay: &MemLayout) -> Result<MemorySystem, HwError> {
        let mbars = lay.stages + lay.tile_slots;
        host::memory_system(pc.params, lay.gmem_bytes, mbars, lay.descriptors())
    }

    /// The port's roles around a filled memory system.
    fn assemble(
        cfg: CoreConfig,
        spec: <X as EdgeExtras<W>>::Spec,
        lay: MemLayout,
        mem: MemorySystem,
    ) -> Result<Self, HwError> {
        let mbars = lay.stages + lay.tile_slots;
        let block = match lay.operands {
            layout::OperandLayout::Mx { block } => block,
            _ => cfg.block(),
        };
        let sched = Schedule::for_core(&cfg, lay.m, lay.n, lay.k_steps, block);
        let tiles = sched.tiles();
        Ok(Self {
            cfg,
            spec,
            lay,

            mem,
            mbar_ops: Vec::with_capacity(mbars),
            lanes: Vec::with_capacity(MAX_REQUEST_LANES + 1),
            write_lanes: Vec::with_capacity(MAX_REQUEST_LANES),
            init_done: Reg::new("init_done", 1, false)?,
            overlap: Reg::new("overlap_count", 64, 0)?,
            valid: Wire::new("valid", 1, false)?,
            take: Wire::new("take", 1, false)?,
            rd_req: Wire::new("rd_req", 1, false)?,
            rd_accept: Wire::new("rd_accept", 1, false)?,
            producer: Producer::new(lay, tiles)?,
            consumer: Consumer::new(&cfg, lay, sched)?,
            c_fetch: CFetch::new(&cfg, lay, tiles)?,
            d_store: DStore::new(&cfg, lay)?,
            arbiter: TmaArbiter::new()?,
        })
    }

    /// The layout in use.
    pub fn layout(&self) -> &MemLayout {
        &self.lay
    }

    /// The memory system's counters.
    pub fn counters(&self) -> MemCounters {
        self.mem.counters()
    }

    /// D as stored in global memory (`m x n` bit patterns of the accumulator format,
    /// row-major).
    pub fn read_d(&self) -> Vec<u32> {
        let (m, n) = (self.lay.m, self.lay.n);
        let es = self.lay.esc as usize;
        let mut d = Vec::with_capacity(m * n);
        for i in 0..m {
            let bytes = self
                .mem
                .host_read(self.lay.d.0 + i as u64 * self.lay.d.1, n * es);
            d.extend(bytes.chunks_exact(es).map(|w| host::le_word(w) as u32));
        }
        d
    }

    /// The `full` barrier of operand stage `stage`.
    fn full_bar(stage: usize) -> usize {
        stage
    }

    /// The `c_full` barrier of C slot `slot` (after the stages' barriers).
    fn c_bar(stages: usize, slot: usize) -> usize {
        stages + slot
    }

    fn stores_completed(&self) -> u32 {
        self.d_store.stored() - self.mem.stores_outstanding()
    }
}

impl<const W: usize, X: PortExtras<W>> Module for MemoryPort<W, X> {
    fn name(&self) -> &str {
        "mem"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.init_done);
        v.reg(&mut self.overlap);
        v.wire(&mut self.valid);
        v.wire(&mut self.take);
        v.wire(&mut self.rd_req);
        v.wire(&mut self.rd_accept);
        // The memory blocks appear as children of this scope (`mem.gmem`, `mem.smem`, ...),
        // then the port's roles (`mem.producer`, ...).
        self.mem.visit(v);
        v.child(&mut self.producer);
        v.child(&mut self.consumer);
        v.child(&mut self.c_fetch);
        v.child(&mut self.d_store);
        v.child(&mut self.arbiter);
    }
}

impl<const W: usize, X: PortExtras<W>> OperandPort<W> for MemoryPort<W, X> {
    type Extras = X;

    fn dims(&self) -> (usize, usize, usize) {
        (self.lay.m, self.lay.n, self.lay.k_steps)
    }

    fn spec(&self) -> <X as EdgeExtras<W>>::Spec {
        self.spec
    }

    #[inline]
    fn valid(&self) -> bool {
        self.consumer.valid()
    }

    fn operands(&self, out: &mut StepOperands<W, X>) {
        self.consumer.operands(self.mem.smem_read_data(), out);
    }

    fn c_ready(&self, tile: usize) -> bool {
        // All rows of the tile's C are in their bank.
        self.c_fetch.tile() > tile
    }

    fn c_row(&self, tile: usize, row: usize, out: &mut [u32]) {
        let v = self.c_fetch.row(tile, row);
        let bits = self.cfg.acc.width() as usize;
        for (j, o) in out.iter_mut().enumerate() {
            *o = v.field(bits * j, bits) as u32;
        }
    }

    fn d_ready(&self) -> bool {
        self.d_store.ready(self.stores_completed())
    }

    fn finished(&self) -> bool {
        self.d_store.drained() && self.mem.stores_outstanding() == 0
    }

    fn overlap_cycles(&self) -> u64 {
        self.overlap.q()
    }

    fn smem_read_bytes(&self) -> u64 {
        self.mem.smem_read_data().len() as u64
    }

    fn error(&self) -> Option<String> {
        self.mem.error().map(|e| e.to_string())
    }

    fn comb(&mut self, io: &PortIo<'_>) {
        let lay = self.lay;
        self.mbar_ops.clear();
        self.lanes.clear();
        let valid = self.consumer.valid();
        self.valid.set(valid);
        self.take.set(io.take);
        // Performance counter: steps taken while TMA work is in flight (loads overlapping
        // compute).
        if io.take && !self.mem.tma_idle() {
            self.overlap.set_d(self.overlap.q() + 1);
        }

        // Setup: every mbarrier expects one arrival per phase.
        if !self.init_done.q() {
            for bar in 0..lay.stages + lay.tile_slots {
                self.mbar_ops.push(MbarOp {
                    bar,
                    op: MbarOpKind::Init(1),
                });
            }
            self.init_done.set_d(true);
        }
        let ready_to_work = self.init_done.q();

        // Last cycle's read: C words into their bank; the offered step's hold.
        let data = self.mem.smem_read_data();
        let consumer = &self.consumer;
        let c_complete = self.c_fetch.absorb(data, || consumer.returned_step_bytes());
        let slot_free = self.consumer.hold(io.take, data);

        // This cycle's read: the next step's lanes, C words, or both.
        let mem = &self.mem;
        let stages = lay.stages;
        let busy = self.consumer.busy();
        let want_ops = self.consumer.request(
            ready_to_work,
            slot_free,
            |g| mem.try_wait_parity(Self::full_bar(g % stages), (g / stages) & 1 == 1),
            &mut self.lanes,
        );
        let slots = lay.tile_slots;
        let cmask = self.c_fetch.request(
            busy,
            ready_to_work,
            want_ops,
            io.c_next,
            |b| mem.try_wait_parity(Self::c_bar(stages, b % slots), (b / slots) & 1 == 1),
            &mut self.lanes,
        );
        let rd_req = want_ops || cmask != c_fetch::WordMask::ZERO;
        self.rd_req.set(rd_req);

        // The D queue's oldest row to its slot.
        self.write_lanes.clear();
        let write = self.d_store.write_request(&mut self.write_lanes);

        // The TMA command: a store, else a C load, else an operand load.
        let pin = ProducerIn {
            released: self.consumer.released(),
            read_tile: self.consumer.read_tile(),
            c_fetch_tile: self.c_fetch.tile(),
        };
        let producer = &self.producer;
        let grant = self.arbiter.comb(
            ready_to_work && self.mem.tma_ready(),
            || self.d_store.store_request(),
            || producer.c_request(&pin, |slot| Self::c_bar(stages, slot)),
            || producer.operand_request(&pin),
        );
        if let Some(op) = grant.and_then(|g| g.expect) {
            self.mbar_ops.push(op);
        }

        // The memory system's cycle.
        let out = self.mem.comb(&MemIn {
            tma_cmd: grant.map(|g| g.cmd),
            smem_read: rd_req.then_some(&self.lanes[..]),
            smem_write: write.then_some(&self.write_lanes[..]),
            mbar_ops: &self.mbar_ops,
        });

        // Grants back to the roles (the command was accepted: tma_ready was high).
        let kind = grant.map(|g| g.kind);
        if let Some(kind) = kind {
            self.producer.granted(kind);
        }
        let accepted = rd_req && out.smem_read_ready;
        self.rd_accept.set(accepted);
        self.consumer.commit(rd_req, accepted, want_ops);
        self.c_fetch.commit(accepted, cmask, c_complete, io.c_read);
        self.d_store.commit(
            kind == Some(TmaKind::StoreD),
            write && out.smem_write_ready,
            io.d_claim.is_some(),
            io.d_row.as_ref(),
        );
    }
}
