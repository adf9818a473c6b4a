//! The memory-fed operand port (scope `mem`): A, B and C start in global memory, travel by
//! TMA into multi-buffered shared-memory stages, are read from shared memory into the array's
//! skew, and D leaves through shared memory and a TMA store. The memory blocks themselves
//! (global memory, shared memory, TMA engine, mbarriers) are [`crate::hw::memory`]; this port
//! adds the pipeline around them, as CUTLASS's multistage main loop does in software:
//!
//! - **Producer** (`producer_*` registers): walks the operand chunks in order (tile `t`,
//!   K-chunk `q` of `KC` elements; chunk `g = t * chunks + q`) and, while fewer than `S`
//!   stages are in use, issues the chunk's TMA loads into stage `g % S` with one
//!   `arrive.expect_tx` of their bytes on that stage's `full` mbarrier. B is loaded for every
//!   chunk; A is loaded with it (stream mode) or, when a 4-row panel of A fits twice in shared
//!   memory, once per tile row into one of two panels and reused by every tile of the row
//!   (panel mode, the reuse that keeps a GEMM under the bandwidth roofline). C of each tile is
//!   loaded ahead into one of `SC` slots (`c_full` mbarriers); finished D tiles are stored.
//!   One TMA command a cycle, stores first, then C, then operands.
//! - **Consumer** (`rd_*`): reads the next step's lanes from shared memory (one read request:
//!   four A rows and four B columns of `w` elements, swizzled addresses, plus a C row when one
//!   is being fetched) once the stage's `full` barrier has completed the phase of this use
//!   (`try_wait.parity`). The data returns one cycle after the read is accepted and is offered
//!   to the core straight from shared memory's read register (`valid`), or from the hold
//!   registers (`hold_a_<i>`, `hold_b_<j>`) while the core is not ready. A step's read is issued
//!   in the cycle the previous step is taken, so a conflict-free stream feeds one step a cycle.
//!   The stage is released (`released`) when its last step has been read.
//! - **C**: the sixteen words of a tile's C are fetched into one of two register banks
//!   (`c_b<k>_r<i>`), riding along with the operand reads in the banks those leave free (so a
//!   read stays one pass), all at once in a cycle without an operand read; `c_ready(t)` once
//!   all sixteen are there; the window that loads C reads them from registers.
//! - **D**: rows leaving the output register are queued (`dq_*`, 8 rows) and written into one of
//!   `SD` shared-memory slots; once every tile of a slot's box has its fourth row written, the
//!   box's TMA store is issued. `d_ready` reserves a slot and queue room for the next drained
//!   tile; `finished` once every box is stored (`stores_outstanding` = 0).
//!
//! C and D words are as wide as the accumulator: 4 bytes for FP32, 2 for FP16 (the C
//! registers and D queue rows are `4 x 32` or `4 x 16` bits). A TMA box's inner extent must be
//! a multiple of 16 bytes, so the C/D box is 16 bytes wide: one 4 x 4 FP32 tile, or for FP16
//! two neighbouring tiles of a tile row side by side (8 x 4 FP16, the left tile at byte 0 of a
//! box row, the right at byte 8). Either way a box is 64 bytes and fills one 128-byte slot; a
//! box's right tile past N is out of bounds (zeros loaded, nothing stored), so global memory
//! moves exactly `2` (FP16) or `4` (FP32) bytes per element of C and D.
//!
//! Global-memory layout: A is `M x K` row-major (K-major), B is stored transposed (`N x K`,
//! K-major, as tensor cores prefer, the "TN" layout), C and D are `M x N` in the accumulator
//! format (FP32 or FP16); every row starts at a 16-byte-aligned pitch. Shared memory: stage `s`
//! is a 1024-byte block with A (stream mode) in rows 0..3 and B in rows 4..7 of the 128B
//! swizzle pattern, so the eight lanes of a step fall in eight different 16-byte chunks (banks)
//! and a step reads in one pass.
//!
//! **2:4 sparse** ([`MemoryPort::new_sparse`]): A holds the `M x K/2` kept values and E, a fifth
//! region and descriptor, their metadata, 2 bits a kept value (`M x ceil(K/8)` bytes, two
//! nibbles a byte, group `2x` in the low half of byte `x`). A chunk is [`SPARSE_KC`] kept values:
//! one A box, one 16-byte E box row, and the 128 dense B positions they select from in
//! `bytes(B)` boxes of 128 bytes (`load_a`, `load_e`, `load_b`.., counted by `producer_part`,
//! one `expect_tx` for all). A stage is one swizzle atom for E (row 0) and A (from row 2), plus
//! one atom per B box; in panel mode A and E sit in the panels. A step reads `w` kept values
//! per row, `max(2w, 4)` B positions per column, and on a chunk's first step the four E rows
//! (kept in `e_row_<i>` for the chunk's other steps); the selects go beside A in
//! [`StepOperands::meta`] (`hold_e_<i>` while held).

use super::config::CoreConfig;
use super::feeder::{check_problem, LaneGroup};
use super::memory::{
    swizzle, ElemType, MbarOp, MbarOpKind, MemCounters, MemIn, MemParams, MemorySystem, SmemLane,
    SmemWriteLane, Swizzle, TensorMap, TmaCmd, TmaOp,
};
use super::pe::set_lane;
use super::pe::sparse_b_lanes;
use super::port::{OperandPort, PortIo, StepOperands};
use super::schedule::Schedule;
use super::sparse_feeder::check_sparse_problem;
use super::{HwError, COLS, ROWS};
use crate::numerics::format::Format;
use crate::rtl::{Display, Module, Reg, Result as RtlResult, Visitor, Wide, Wire};

/// Every word of a C tile fetched.
const C_ALL: u16 = 0xFFFF;
/// Most lanes in one shared-memory request.
const MAX_REQUEST_LANES: usize = 32;
/// Depth of the D row queue.
const DQ_DEPTH: usize = 8;
/// Bytes of one stage block (A rows 0..3, B rows 4..7 of a 128-byte-row swizzle atom).
const STAGE_BYTES: u32 = 1024;
/// Descriptor slots: A, B, C, D, and E (the 2:4 metadata of a sparse A).
const DESC_A: usize = 0;
const DESC_B: usize = 1;
const DESC_C: usize = 2;
const DESC_D: usize = 3;
const DESC_E: usize = 4;
/// Kept A values a sparse chunk covers: one 16-byte metadata box row (2 bits a value), and
/// twice as many dense K positions of B.
pub const SPARSE_KC: usize = 64;
/// Bytes of one metadata box row (the 16-byte TMA inner extent).
const E_ROW_BYTES: u32 = 16;
/// Bytes of a B sub-box in a sparse stage: four 128-byte rows.
const B_BOX_BYTES: u32 = 512;
/// Offset of a sparse A box in its 1024-byte block (row 2 of the 128B swizzle atom; the
/// metadata box sits in row 0).
const SPARSE_A_OFF: u32 = 256;

/// How the memory-fed port is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemPortConfig {
    /// The memory system's timing and sizes.
    pub params: MemParams,
    /// Operand stages in flight `S` (0: chosen to cover the latency, see
    /// [`MemPortConfig::auto_stages`]).
    pub stages: usize,
    /// Swizzle the operand tiles in shared memory (128B for 128-byte rows); off shows the bank
    /// conflicts an unswizzled layout costs.
    pub swizzle: bool,
}

impl Default for MemPortConfig {
    fn default() -> Self {
        Self {
            params: MemParams::default(),
            stages: 0,
            swizzle: true,
        }
    }
}

/// Bytes of a C or D slot in shared memory (a 64-byte box at a 128-byte boundary, the
/// alignment a TMA destination needs).
const SLOT_BYTES: u32 = 128;
/// Bytes of a row of a C or D box: the 16-byte inner extent a TMA box needs (four FP32
/// words, or eight FP16 words from two tiles).
const BOX_ROW_BYTES: u32 = 16;
/// Most C slots (and D slots) in shared memory.
pub const MAX_TILE_SLOTS: usize = 16;
/// Most operand stages (mbarriers left beside the C slots).
pub const MAX_STAGES: usize = 48;

impl MemPortConfig {
    /// The stage count that covers the latency: one chunk's loads take `latency` plus their
    /// bytes over the bandwidth, the consumer eats a chunk in `chunk_cycles`; two more stages
    /// absorb the jitter of issue. Clamped to 2..=[`MAX_STAGES`].
    pub fn auto_stages(&self, chunk_bytes: u32, chunk_cycles: u32) -> usize {
        let p = &self.params;
        let bw = p.bytes_per_cycle.min(p.request_bytes).max(1);
        let fill = u64::from(p.latency) + u64::from(chunk_bytes.div_ceil(bw));
        let s = fill.div_ceil(u64::from(chunk_cycles.max(1))) as usize + 2;
        s.clamp(2, MAX_STAGES)
    }
}

/// Where everything lives: global-memory regions, the chunking of K and the shared-memory
/// map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemLayout {
    /// Rows of A, C, D.
    pub m: usize,
    /// Columns of B, C, D.
    pub n: usize,
    /// Inner dimension (dense K positions).
    pub k: usize,
    /// K positions the schedule counts: `k`, or the kept `k / 2` of a 2:4 sparse A.
    pub k_steps: usize,
    /// A 2:4 sparse problem: A holds kept values, E its metadata (see the module docs).
    pub sparse: bool,
    /// Bytes of an A element.
    pub esa: u32,
    /// Bytes of a B element.
    pub esb: u32,
    /// Bytes of a C or D element (the accumulator format: 4 for FP32, 2 for FP16).
    pub esc: u32,
    /// Tiles of a tile row one C or D box covers side by side (1 for FP32, 2 for FP16).
    pub tiles_per_box: usize,
    /// Tiles along N, `ceil(N / 4)`.
    pub tiles_n: usize,
    /// K elements a chunk (one TMA box along K; kept values for a sparse A).
    pub kc: usize,
    /// Chunks per tile `ceil(k_steps / KC)`.
    pub chunks: usize,
    /// B boxes a chunk loads (1 dense; `B element bytes` sparse: 128 dense positions).
    pub b_boxes: usize,
    /// Bytes of one operand stage in shared memory.
    pub stage_bytes: u32,
    /// Global address and row pitch of A, Bᵀ, C and D.
    pub a: (u64, u64),
    /// Bᵀ (`N x K`).
    pub b: (u64, u64),
    /// C.
    pub c: (u64, u64),
    /// D.
    pub d: (u64, u64),
    /// E, the metadata of a sparse A (`M x ceil(K / 8)` bytes; unused when dense).
    pub e: (u64, u64),
    /// Global memory bytes.
    pub gmem_bytes: u64,
    /// A reused across a tile row from one of two panels.
    pub panel: bool,
    /// Operand stages.
    pub stages: usize,
    /// Shared-memory base of the A panels (panel mode).
    pub panel_base: u32,
    /// Shared-memory base of the stages.
    pub stage_base: u32,
    /// Shared-memory base of the C slots.
    pub c_base: u32,
    /// Shared-memory base of the D slots.
    pub d_base: u32,
    /// C slots, and D slots (each).
    pub tile_slots: usize,
    /// Swizzle of A and B boxes.
    pub swz_a: Swizzle,
    /// Swizzle of B boxes.
    pub swz_b: Swizzle,
}

fn pitch(bytes: u64) -> u64 {
    bytes.div_ceil(16) * 16
}

/// The widest swizzle whose span holds a row of `bytes`.
fn swizzle_for(bytes: u32, on: bool) -> Swizzle {
    match (on, bytes) {
        (false, _) => Swizzle::None,
        (true, b) if b > 64 => Swizzle::B128,
        (true, b) if b > 32 => Swizzle::B64,
        (true, _) => Swizzle::B32,
    }
}

impl MemLayout {
    /// The layout of an `m x n x k` problem for `cfg` under `pc`.
    pub fn new(
        cfg: &CoreConfig,
        m: usize,
        n: usize,
        k: usize,
        pc: &MemPortConfig,
    ) -> Result<Self, HwError> {
        Self::build(cfg, m, n, k, pc, false)
    }

    /// The layout of an `m x n x k` 2:4 sparse problem (`k` dense, a multiple of 4): A holds
    /// `m x k/2` kept values, E `m x ceil(k/8)` metadata bytes (module documentation).
    pub fn new_sparse(
        cfg: &CoreConfig,
        m: usize,
        n: usize,
        k: usize,
        pc: &MemPortConfig,
    ) -> Result<Self, HwError> {
        Self::build(cfg, m, n, k, pc, true)
    }

    fn build(
        cfg: &CoreConfig,
        m: usize,
        n: usize,
        k: usize,
        pc: &MemPortConfig,
        sparse: bool,
    ) -> Result<Self, HwError> {
        let (esa, esb) = (container_bytes(cfg.fmt_a), container_bytes(cfg.fmt_b));
        let bytes_wide = |f: &Format| matches!(f.width(), 8 | 16);
        if sparse && !(bytes_wide(&cfg.fmt_a) && bytes_wide(&cfg.fmt_b)) {
            return Err(HwError::Unsupported(
                "2:4 sparse GEMMs through memory: A and B of 1 or 2 bytes an element \
                 (FP8, FP16, BF16)"
                    .into(),
            ));
        }
        let (kc, k_steps, b_boxes) = if sparse {
            (SPARSE_KC, k / 2, esb as usize)
        } else {
            ((128 / esa.max(esb)) as usize, k, 1)
        };
        // One step's read (four A rows, four B columns, and for 2:4 sparsity 2w B lanes and
        // the metadata) must fit one shared-memory request.
        let lanes = |bytes: u32| ROWS * bytes.div_ceil(16) as usize;
        let w = cfg.width;
        let need = if sparse {
            lanes(lane_bytes(esa, w)) + lanes(lane_bytes(esb, sparse_b_lanes(w))) + ROWS
        } else {
            lanes(lane_bytes(esa, w)) + lanes(lane_bytes(esb, w))
        };
        if need > MAX_REQUEST_LANES {
            return Err(HwError::Unsupported(format!(
                "{}GEMMs through memory at w = {w} with {} x {}: a step's read needs {need} \
                 shared-memory lanes (a request has at most {MAX_REQUEST_LANES})",
                if sparse { "2:4 sparse " } else { "" },
                cfg.fmt_a.name,
                cfg.fmt_b.name
            )));
        }
        let chunks = k_steps.div_ceil(kc);
        let stage_bytes = if sparse {
            // One 1024-byte swizzle atom for E and A, one for each B sub-box.
            STAGE_BYTES * (1 + b_boxes as u32)
        } else {
            STAGE_BYTES
        };
        let a = (0u64, pitch((k_steps as u64) * u64::from(esa)));
        let e = (a.0 + a.1 * m as u64, pitch(k.div_ceil(8) as u64));
        let b_addr = if sparse { e.0 + e.1 * m as u64 } else { e.0 };
        let b = (b_addr, pitch((k as u64) * u64::from(esb)));
        let c_addr = b.0 + b.1 * n as u64;
        let esc = cfg.acc.width() / 8;
        let tiles_per_box = (BOX_ROW_BYTES / (COLS as u32 * esc)) as usize;
        let c = (c_addr, pitch(n as u64 * u64::from(esc)));
        let d = (c.0 + c.1 * m as u64, c.1);
        let gmem_bytes = d.0 + d.1 * m as u64;
        let smem = pc.params.smem_bytes;
        // C and D slots: enough tiles ahead (C) and behind (D, until its store completes) to
        // cover the latency at one tile per `steps` cycles.
        let steps = k_steps.div_ceil(cfg.width) as u64;
        let bw = u64::from(
            pc.params
                .bytes_per_cycle
                .min(pc.params.request_bytes)
                .max(1),
        );
        let slot_fill = u64::from(pc.params.latency) + 2 * 64u64.div_ceil(bw) + 16;
        let tile_slots = (slot_fill.div_ceil(steps.max(1)) as usize + 2).clamp(2, MAX_TILE_SLOTS);
        let tail = 2 * tile_slots as u32 * SLOT_BYTES;
        let panel_bytes = 2 * chunks as u64 * u64::from(STAGE_BYTES);
        let panel = n > COLS && panel_bytes <= u64::from(smem / 2);
        let panel_base = 0u32;
        let stage_base = if panel { panel_bytes as u32 } else { 0 };
        let chunk_bytes = if sparse {
            let a_e = if panel {
                0
            } else {
                kc as u32 * esa + kc as u32 / 4
            };
            ROWS as u32 * (a_e + 2 * kc as u32 * esb)
        } else {
            ROWS as u32 * 128 * if panel { 1 } else { 2 }
        };
        let steps_per_chunk = kc.div_ceil(cfg.width) as u32;
        let want = if pc.stages == 0 {
            pc.auto_stages(chunk_bytes, steps_per_chunk)
        } else {
            pc.stages
        };
        if want > MAX_STAGES {
            return Err(HwError::Unsupported(format!(
                "{want} operand stages (at most {MAX_STAGES})"
            )));
        }
        let room = smem.saturating_sub(stage_base + tail) / stage_bytes;
        if room < 2 {
            return Err(HwError::Unsupported(format!(
                "shared memory of {smem} bytes holds fewer than two operand stages"
            )));
        }
        if pc.stages != 0 && want > room as usize {
            return Err(HwError::Unsupported(format!(
                "{want} operand stages need {} bytes of shared memory; {smem} hold {room}",
                want as u32 * stage_bytes + stage_base + tail
            )));
        }
        let stages = want.min(room as usize).max(1);
        let c_base = stage_base + stages as u32 * stage_bytes;
        Ok(Self {
            m,
            n,
            k,
            k_steps,
            sparse,
            esa,
            esb,
            esc,
            tiles_per_box,
            tiles_n: n.div_ceil(COLS),
            kc,
            chunks,
            b_boxes,
            stage_bytes,
            a,
            b,
            c,
            d,
            e,
            gmem_bytes,
            panel,
            stages,
            panel_base,
            stage_base,
            c_base,
            d_base: c_base + tile_slots as u32 * SLOT_BYTES,
            tile_slots,
            swz_a: swizzle_for(kc as u32 * esa, pc.swizzle),
            swz_b: swizzle_for(if sparse { 128 } else { kc as u32 * esb }, pc.swizzle),
        })
    }

    fn elem(es: u32) -> ElemType {
        match es {
            1 => ElemType::U8,
            2 => ElemType::U16,
            _ => ElemType::U32,
        }
    }

    /// Dense K positions of a B box (`KC`, or 128 bytes' worth for a sparse chunk's boxes).
    fn b_box_k(&self) -> usize {
        if self.sparse {
            (128 / self.esb) as usize
        } else {
            self.kc
        }
    }

    /// The descriptors: A, B, C, D, and E for a sparse problem.
    pub fn descriptors(&self) -> Vec<TensorMap> {
        let mut a = TensorMap::dense(
            Self::elem(self.esa),
            self.a.0,
            &[self.k_steps as u64, self.m as u64],
            &[self.kc as u32, ROWS as u32],
        );
        a.global_strides[0] = self.a.1;
        a.swizzle = self.swz_a;
        let mut b = TensorMap::dense(
            Self::elem(self.esb),
            self.b.0,
            &[self.k as u64, self.n as u64],
            &[self.b_box_k() as u32, COLS as u32],
        );
        b.global_strides[0] = self.b.1;
        b.swizzle = self.swz_b;
        let mut c = TensorMap::dense(
            if self.esc == 4 {
                ElemType::U32
            } else {
                ElemType::U16
            },
            self.c.0,
            &[self.n as u64, self.m as u64],
            &[(COLS * self.tiles_per_box) as u32, ROWS as u32],
        );
        c.global_strides[0] = self.c.1;
        let mut d = c;
        d.global_address = self.d.0;
        let mut maps = vec![a, b, c, d];
        if self.sparse {
            let mut e = TensorMap::dense(
                ElemType::U8,
                self.e.0,
                &[self.k.div_ceil(8) as u64, self.m as u64],
                &[E_ROW_BYTES, ROWS as u32],
            );
            e.global_strides[0] = self.e.1;
            maps.push(e);
        }
        maps
    }

    /// Bytes a chunk's loads land on its stage's `full` barrier (A, then E and B boxes).
    fn chunk_tx_bytes(&self) -> u32 {
        let box_a = (ROWS * self.kc) as u32 * self.esa;
        if self.sparse {
            box_a + ROWS as u32 * E_ROW_BYTES + self.b_boxes as u32 * B_BOX_BYTES
        } else {
            box_a + (COLS * self.kc) as u32 * self.esb
        }
    }

    /// C and D boxes along N (a tile row's tiles, grouped `tiles_per_box` at a time).
    fn boxes_n(&self) -> usize {
        self.tiles_n.div_ceil(self.tiles_per_box)
    }

    /// C (and D) boxes of the problem: one per tile for FP32, one per pair of tiles of a
    /// tile row for FP16.
    pub fn cd_boxes(&self) -> usize {
        self.m.div_ceil(ROWS) * self.boxes_n()
    }

    /// The C/D box holding tile `t` (tiles and boxes both row-major).
    pub fn box_of(&self, t: usize) -> usize {
        let (tm, tn) = (t / self.tiles_n, t % self.tiles_n);
        tm * self.boxes_n() + tn / self.tiles_per_box
    }

    /// The last tile of box `b` (a box at the end of a tile row may hold fewer tiles).
    fn last_tile_of_box(&self, b: usize) -> usize {
        let (tm, bn) = (b / self.boxes_n(), b % self.boxes_n());
        tm * self.tiles_n + ((bn + 1) * self.tiles_per_box).min(self.tiles_n) - 1
    }

    /// The global (row, column) of box `b`'s first element.
    fn box_origin(&self, b: usize) -> (usize, usize) {
        let (tm, bn) = (b / self.boxes_n(), b % self.boxes_n());
        (tm * ROWS, bn * self.tiles_per_box * COLS)
    }

    /// Bytes of one C or D box (the transaction count of a C load): 64.
    fn cd_box_bytes(&self) -> u32 {
        ROWS as u32 * BOX_ROW_BYTES
    }

    /// Shared-memory byte offset of tile `t`'s first word within a row of its box's slot.
    fn tile_in_box(&self, t: usize) -> u32 {
        ((t % self.tiles_n) % self.tiles_per_box) as u32 * COLS as u32 * self.esc
    }

    /// Shared-memory base of the A box of chunk `q` of tile row `tm` (panel) or stage `s`.
    fn a_base(&self, tm: usize, q: usize, stage: usize) -> u32 {
        let block = if self.panel {
            self.panel_base + ((tm & 1) * self.chunks + q) as u32 * STAGE_BYTES
        } else {
            self.stage_base + stage as u32 * self.stage_bytes
        };
        block + if self.sparse { SPARSE_A_OFF } else { 0 }
    }

    /// Shared-memory base of B sub-box `j` of a sparse stage: swizzle atom `1 + j` of the
    /// stage, from row 2 (16-bit B) or row 1 (8-bit B) of the atom, the rows against which a
    /// step's B lanes and A lanes (row 2 of their atom) share the fewest banks.
    fn b_box_base(&self, stage: usize, j: usize) -> u32 {
        let row = if self.esb == 2 { 2 } else { 1 };
        self.stage_base + stage as u32 * self.stage_bytes + (1 + j as u32) * STAGE_BYTES + row * 128
    }

    /// Shared-memory base of the (first) B box of stage `s`.
    fn b_base(&self, stage: usize) -> u32 {
        self.stage_base + stage as u32 * self.stage_bytes + STAGE_BYTES / 2
    }

    /// Shared-memory base of the metadata box of chunk `q` of tile row `tm` (sparse): row 0 of
    /// A's block (its panel block in panel mode, the stage's first atom otherwise).
    fn e_base(&self, tm: usize, q: usize, stage: usize) -> u32 {
        self.a_base(tm, q, stage) - SPARSE_A_OFF
    }
}

/// The memory-fed operand port (see the module documentation).
pub struct MemoryPort<const W: usize> {
    cfg: CoreConfig,
    lay: MemLayout,
    sched: Schedule,
    mem: MemorySystem,
    mbar_ops: Vec<MbarOp>,
    lanes: Vec<SmemLane>,
    // Setup.
    init_done: Reg<bool>,
    // Producer.
    p_chunk: Reg<u32>,
    p_sub: Reg<bool>,
    p_part: Reg<u8>,
    c_issued: Reg<u32>,
    d_stored: Reg<u32>,
    // Consumer: operand reads.
    rd_tile: Reg<u32>,
    rd_step: Reg<u32>,
    released: Reg<u32>,
    rq_busy: Reg<bool>,
    rq_ops: Reg<bool>,
    rq_cmask: Reg<u16>,
    got_ops: Reg<bool>,
    got_cmask: Reg<u16>,
    off_tile: Reg<u32>,
    off_step: Reg<u32>,
    held: Reg<bool>,
    hold_a: Vec<Reg<Wide<W>>>,
    hold_b: Vec<Reg<Wide<W>>>,
    hold_e: Vec<Reg<u64>>,
    e_row: Vec<Reg<u128>>,
    // C fetch.
    cf_tile: Reg<u32>,
    cf_have: Reg<u16>,
    cf_asked: Reg<u16>,
    c_used: Reg<u32>,
    c_regs: Vec<Reg<u128>>,
    // D path.
    d_claimed: Reg<u32>,
    d_rows_in: Reg<u32>,
    d_rows_written: Reg<u32>,
    dq: Vec<Reg<u128>>,
    dq_head: Reg<u8>,
    dq_count: Reg<u8>,
    overlap: Reg<u64>,
    // Wires.
    valid: Wire<bool>,
    take: Wire<bool>,
    rd_req: Wire<bool>,
    rd_accept: Wire<bool>,
    tma_cmd: Wire<u8>,
}

/// Labels of the `tma_cmd` wire: which command the port presents this cycle.
const CMD_LABELS: crate::rtl::Labels = &[
    (0, "-"),
    (1, "load_a"),
    (2, "load_b"),
    (3, "load_c"),
    (4, "store_d"),
    (5, "load_e"),
];

fn lane_bytes(es: u32, w: usize) -> u32 {
    es * w as u32
}

/// Bytes an element of `fmt` takes in memory: its width in whole bytes, rounded up to a power
/// of two (TF32's 19 bits live in a 4-byte FP32 word, as on the GPU).
fn container_bytes(fmt: Format) -> u32 {
    fmt.width().div_ceil(8).next_power_of_two()
}

/// Where a `bits`-bit pattern sits in its `es`-byte container: at the top (TF32 is an FP32
/// word whose low 13 bits are zero); 0 when the pattern fills the container.
fn container_shift(es: u32, bits: u32) -> u32 {
    8 * es - bits
}

/// `lanes` elements of `es` bytes (little-endian) from `data`, as lanes of `bits` bits.
fn lanes_of<const W: usize>(data: &[u8], es: u32, bits: u32, lanes: usize) -> Wide<W> {
    let shift = container_shift(es, bits);
    let es = es as usize;
    let mut words = Wide::<W>::ZERO;
    for l in 0..lanes {
        set_lane(
            &mut words,
            l,
            bits,
            le_word(&data[l * es..(l + 1) * es]) >> shift,
        );
    }
    words
}

/// Up to eight bytes as a little-endian word.
fn le_word(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
}

/// Writes `rows` rows of `cols` elements of `es` bytes (element `(r, x)` from `at`) into
/// global memory at `region` (address, row pitch), as the host does before a launch.
fn host_rows(
    mem: &mut MemorySystem,
    region: (u64, u64),
    es: u32,
    rows: usize,
    cols: usize,
    at: impl Fn(usize, usize) -> u64,
) {
    let mut row = Vec::with_capacity(cols * es as usize);
    for r in 0..rows {
        row.clear();
        for x in 0..cols {
            row.extend_from_slice(&at(r, x).to_le_bytes()[..es as usize]);
        }
        mem.host_write(region.0 + r as u64 * region.1, &row);
    }
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
        check_problem(
            (m, n, k),
            &[
                ("A", m * k, a.len()),
                ("B", k * n, b.len()),
                ("C", m * n, c.len()),
            ],
        )?;
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
        Self::assemble(cfg, lay, mem)
    }

    /// A port holding an `m x n x k` 2:4 sparse problem (`k` dense, a multiple of 4):
    /// `values` (`m x k/2` kept values), `meta` (`m x k/4` nibbles, one a byte, the PTX
    /// `ordered_metadata` encoding), `b` (`k x n`), `c` (`m x n`), laid out as
    /// [`MemLayout::new_sparse`] says: global memory holds the kept values as A and the
    /// nibbles packed two a byte as E (group `2x` in the low half of byte `x`).
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
        Self::assemble(cfg, lay, mem)
    }

    /// The memory system of `lay`, its descriptors set.
    fn memory(pc: &MemPortConfig, lay: &MemLayout) -> Result<MemorySystem, HwError> {
        let mbars = lay.stages + lay.tile_slots;
        let mut mem = MemorySystem::new(pc.params, lay.gmem_bytes, mbars)
            .map_err(|e| HwError::Unsupported(format!("memory system: {e}")))?;
        for (i, map) in lay.descriptors().into_iter().enumerate() {
            mem.set_descriptor(i, map)
                .map_err(|e| HwError::Unsupported(format!("descriptor {i}: {e}")))?;
        }
        Ok(mem)
    }

    /// The port's registers around a filled memory system.
    fn assemble(cfg: CoreConfig, lay: MemLayout, mem: MemorySystem) -> Result<Self, HwError> {
        let (m, n) = (lay.m, lay.n);
        let mbars = lay.stages + lay.tile_slots;
        let b_lanes = if lay.sparse { sparse_b_lanes(W) } else { W };
        let sched = Schedule::new(m, n, lay.k_steps, cfg.width, cfg.block());
        let reg32 = |name: &'static str| Reg::new(name, 32, 0u32);
        let row_bits = COLS as u32 * cfg.acc.width();
        Ok(Self {
            cfg,
            lay,
            sched,
            mem,
            mbar_ops: Vec::with_capacity(mbars),
            lanes: Vec::with_capacity(2 * (ROWS + COLS) * 4 + 1),
            init_done: Reg::new("init_done", 1, false)?,
            p_chunk: reg32("producer_chunk")?,
            p_sub: Reg::new("producer_sub", 1, false)?,
            p_part: Reg::new("producer_part", 3, 0u8)?,
            c_issued: reg32("producer_c")?,
            d_stored: reg32("producer_stores")?,
            rd_tile: reg32("rd_tile")?,
            rd_step: reg32("rd_step")?,
            released: reg32("released")?,
            rq_busy: Reg::new("rq_busy", 1, false)?,
            rq_ops: Reg::new("rq_ops", 1, false)?,
            rq_cmask: Reg::new("rq_cmask", 16, 0)?,
            got_ops: Reg::new("got_ops", 1, false)?,
            got_cmask: Reg::new("got_cmask", 16, 0)?,
            off_tile: reg32("off_tile")?,
            off_step: reg32("off_step")?,
            held: Reg::new("held", 1, false)?,
            hold_a: (0..ROWS)
                .map(|i| {
                    Reg::new(
                        format!("hold_a_{i}"),
                        cfg.fmt_a.width() * W as u32,
                        Wide::ZERO,
                    )
                })
                .collect::<RtlResult<_>>()?,
            hold_b: (0..COLS)
                .map(|j| {
                    Reg::new(
                        format!("hold_b_{j}"),
                        cfg.fmt_b.width() * b_lanes as u32,
                        Wide::ZERO,
                    )
                })
                .collect::<RtlResult<_>>()?,
            e_row: (0..if lay.sparse { ROWS } else { 0 })
                .map(|i| Reg::new(format!("e_row_{i}"), 8 * E_ROW_BYTES, 0u128))
                .collect::<RtlResult<_>>()?,
            hold_e: (0..if lay.sparse { ROWS } else { 0 })
                .map(|i| {
                    Ok(Reg::new(format!("hold_e_{i}"), 2 * W as u32, 0u64)?
                        .with_display(Display::Filter("meta")))
                })
                .collect::<RtlResult<_>>()?,
            cf_tile: reg32("cf_tile")?,
            cf_have: Reg::new("cf_have", 16, 0)?,
            cf_asked: Reg::new("cf_asked", 16, 0)?,
            c_used: reg32("c_used")?,
            c_regs: (0..2 * ROWS)
                .map(|x| {
                    Ok(
                        Reg::new(format!("c_b{}_r{}", x / ROWS, x % ROWS), row_bits, 0u128)?
                            .with_display(Display::Filter(cfg.acc.name)),
                    )
                })
                .collect::<RtlResult<_>>()?,
            d_claimed: reg32("d_claimed")?,
            d_rows_in: reg32("d_rows_in")?,
            d_rows_written: reg32("d_rows_written")?,
            dq: (0..DQ_DEPTH)
                .map(|x| {
                    Ok(Reg::new(format!("dq_{x}"), row_bits, 0u128)?
                        .with_display(Display::Filter(cfg.acc.name)))
                })
                .collect::<RtlResult<_>>()?,
            dq_head: Reg::new("dq_head", 3, 0)?,
            dq_count: Reg::new("dq_count", 4, 0)?,
            overlap: Reg::new("overlap_count", 64, 0)?,
            valid: Wire::new("valid", 1, false)?,
            take: Wire::new("take", 1, false)?,
            rd_req: Wire::new("rd_req", 1, false)?,
            rd_accept: Wire::new("rd_accept", 1, false)?,
            tma_cmd: Wire::new("tma_cmd", 3, 0u8)?
                .with_labels(CMD_LABELS)
                .in_overview(),
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
            d.extend(bytes.chunks_exact(es).map(|w| {
                w.iter()
                    .rev()
                    .fold(0u32, |acc, &x| (acc << 8) | u32::from(x))
            }));
        }
        d
    }

    fn tiles(&self) -> usize {
        self.sched.tiles()
    }

    fn full_bar(&self, stage: usize) -> usize {
        stage
    }

    fn c_bar(&self, slot: usize) -> usize {
        self.lay.stages + slot
    }

    /// The chunk a step of a tile reads.
    fn chunk_of(&self, tile: usize, step: usize) -> usize {
        tile * self.lay.chunks + (step * self.cfg.width) / self.lay.kc
    }

    /// Whether chunk `g`'s stage has landed (the `full` barrier completed this use's phase).
    fn landed(&self, g: usize) -> bool {
        let s = self.lay.stages;
        self.mem
            .try_wait_parity(self.full_bar(g % s), (g / s) & 1 == 1)
    }

    /// The lane reads of step `step` of tile `tile`, in request order (A rows, then B
    /// columns; rows and columns outside the problem are not read).
    fn step_lanes(&self, tile: usize, step: usize, out: &mut Vec<SmemLane>) {
        if self.lay.sparse {
            return self.sparse_step_lanes(tile, step, out);
        }
        let lay = &self.lay;
        let (r0, c0) = self.sched.tile_origin(tile);
        let g = self.chunk_of(tile, step);
        let q = g % lay.chunks;
        let stage = g % lay.stages;
        let kk = step * self.cfg.width - q * lay.kc;
        let tm = tile / self.sched.tiles_n;
        for (es, base, swz, limit, first) in [
            (lay.esa, lay.a_base(tm, q, stage), lay.swz_a, lay.m, r0),
            (lay.esb, lay.b_base(stage), lay.swz_b, lay.n, c0),
        ] {
            let row_bytes = lay.kc as u32 * es;
            let bytes = lane_bytes(es, self.cfg.width);
            for r in 0..ROWS {
                if first + r >= limit {
                    continue;
                }
                let logical = base + r as u32 * row_bytes + kk as u32 * es;
                Self::push_lanes(out, logical, bytes, swz);
            }
        }
    }

    /// Pushes the lane reads of `bytes` bytes at logical shared-memory address `logical`,
    /// split at 16-byte chunks and swizzled.
    fn push_lanes(out: &mut Vec<SmemLane>, logical: u32, bytes: u32, swz: Swizzle) {
        let mut off = 0;
        while off < bytes {
            let len = (bytes - off).min(16);
            out.push(SmemLane {
                addr: swizzle(logical + off, swz),
                len: len as u8,
            });
            off += len;
        }
    }

    /// Where sparse step `step` sits: its chunk's stage, the kept offset `kk` of its first A
    /// lane within the chunk, and the dense offset of its first B lane within the chunk.
    fn sparse_step_at(&self, tile: usize, step: usize) -> (usize, usize, usize) {
        let g = self.chunk_of(tile, step);
        let kk = step * self.cfg.width - (g % self.lay.chunks) * self.lay.kc;
        (g % self.lay.stages, kk, 4 * (kk / 2))
    }

    /// Bytes of metadata a sparse step reads per A row: the whole 16-byte row of the chunk
    /// (its 64 kept values' selects) on the chunk's first step, nothing on the others (they
    /// take their selects from the `e_row_<i>` registers).
    fn e_step_bytes(&self, step: usize) -> u32 {
        let first = (step * self.cfg.width).is_multiple_of(self.lay.kc);
        if first {
            E_ROW_BYTES
        } else {
            0
        }
    }

    /// The metadata rows a sparse step selects from: those of its read (first step of a chunk)
    /// or the `e_row_<i>` registers, which hold them from the chunk's first step on.
    fn e_rows(&self, tile: usize, step: usize, data: Option<&[u8]>) -> [u128; ROWS] {
        let mut rows = [0u128; ROWS];
        match data {
            Some(data) if self.e_step_bytes(step) > 0 => {
                let (r0, c0) = self.sched.tile_origin(tile);
                let rows_in = (self.lay.m - r0).min(ROWS);
                let cols_in = (self.lay.n - c0).min(COLS);
                let w = self.cfg.width;
                let mut at = rows_in * lane_bytes(self.lay.esa, w) as usize
                    + cols_in * lane_bytes(self.lay.esb, sparse_b_lanes(w)) as usize;
                for row in rows.iter_mut().take(rows_in) {
                    *row = data[at..at + E_ROW_BYTES as usize]
                        .iter()
                        .rev()
                        .fold(0u128, |acc, &x| (acc << 8) | u128::from(x));
                    at += E_ROW_BYTES as usize;
                }
            }
            _ => {
                for (row, reg) in rows.iter_mut().zip(&self.e_row) {
                    *row = reg.q();
                }
            }
        }
        rows
    }

    /// The lane reads of sparse step `step` of tile `tile`: the kept A lanes of each row, the
    /// `sparse_b_lanes(w)` dense B positions of each column, then each row's metadata byte(s).
    fn sparse_step_lanes(&self, tile: usize, step: usize, out: &mut Vec<SmemLane>) {
        let lay = &self.lay;
        let (r0, c0) = self.sched.tile_origin(tile);
        let (stage, kk, pp) = self.sparse_step_at(tile, step);
        let (tm, q) = (
            tile / self.sched.tiles_n,
            self.chunk_of(tile, step) % lay.chunks,
        );
        let w = self.cfg.width;
        let a_row = lay.kc as u32 * lay.esa;
        for r in (0..ROWS).filter(|r| r0 + r < lay.m) {
            let logical = lay.a_base(tm, q, stage) + r as u32 * a_row + kk as u32 * lay.esa;
            Self::push_lanes(out, logical, lane_bytes(lay.esa, w), lay.swz_a);
        }
        let at = pp as u32 * lay.esb;
        let b_box = lay.b_box_base(stage, (at / 128) as usize);
        for c in (0..COLS).filter(|c| c0 + c < lay.n) {
            let logical = b_box + c as u32 * 128 + at % 128;
            Self::push_lanes(
                out,
                logical,
                lane_bytes(lay.esb, sparse_b_lanes(w)),
                lay.swz_b,
            );
        }
        for r in (0..ROWS).filter(|r| r0 + r < lay.m) {
            let logical = lay.e_base(tm, q, stage) + r as u32 * E_ROW_BYTES;
            Self::push_lanes(out, logical, self.e_step_bytes(step), Swizzle::None);
        }
    }

    /// Valid A lanes and B lanes of sparse step `step` (the ideal sparse feeder's counts).
    fn sparse_lanes(&self, step: usize) -> (usize, usize) {
        let k0 = step * self.cfg.width;
        let a = self.cfg.width.min(self.lay.k_steps - k0).min(W);
        let b = sparse_b_lanes(self.cfg.width).min(self.lay.k - 4 * (k0 / 2));
        (a, b)
    }

    /// Decodes the bytes of sparse step `step` of tile `tile` (as laid out by
    /// [`MemoryPort::sparse_step_lanes`]) into lane groups and metadata selects.
    fn decode_sparse(&self, tile: usize, step: usize, data: &[u8]) -> StepOperands<W> {
        let lay = &self.lay;
        let (r0, c0) = self.sched.tile_origin(tile);
        let (_, kk, _) = self.sparse_step_at(tile, step);
        let (la, lb) = self.sparse_lanes(step);
        let mut o = StepOperands::default();
        let mut at = 0usize;
        for (es, bits, lanes, span, limit, first, groups) in [
            (
                lay.esa,
                self.cfg.fmt_a.width(),
                la,
                self.cfg.width,
                lay.m,
                r0,
                &mut o.a,
            ),
            (
                lay.esb,
                self.cfg.fmt_b.width(),
                lb,
                sparse_b_lanes(self.cfg.width),
                lay.n,
                c0,
                &mut o.b,
            ),
        ] {
            for (r, g) in groups.iter_mut().enumerate() {
                if first + r >= limit {
                    continue;
                }
                *g = LaneGroup {
                    bits: lanes_of(&data[at..], es, bits, lanes),
                    lanes,
                };
                at += lane_bytes(es, span) as usize;
            }
        }
        let e_rows = self.e_rows(tile, step, Some(data));
        let mask = if la >= 32 {
            u64::MAX
        } else {
            (1u64 << (2 * la)) - 1
        };
        for (r, m) in o.meta.iter_mut().enumerate() {
            if r0 + r >= lay.m {
                continue;
            }
            *m = (e_rows[r] >> (2 * kk)) as u64 & mask;
        }
        o
    }

    /// Decodes the operand bytes of step `step` of tile `tile` (as laid out by
    /// [`MemoryPort::step_lanes`]) into lane groups.
    fn decode_step(&self, tile: usize, step: usize, data: &[u8]) -> StepOperands<W> {
        if self.lay.sparse {
            return self.decode_sparse(tile, step, data);
        }
        let lay = &self.lay;
        let (r0, c0) = self.sched.tile_origin(tile);
        let lanes = self.cfg.width.min(lay.k - step * self.cfg.width).min(W);
        let mut o = StepOperands::default();
        let mut at = 0usize;
        for (es, bits, limit, first, groups) in [
            (lay.esa, self.cfg.fmt_a.width(), lay.m, r0, &mut o.a),
            (lay.esb, self.cfg.fmt_b.width(), lay.n, c0, &mut o.b),
        ] {
            let bytes = lane_bytes(es, self.cfg.width) as usize;
            for (r, g) in groups.iter_mut().enumerate() {
                if first + r >= limit {
                    continue;
                }
                *g = LaneGroup {
                    bits: lanes_of(&data[at..], es, bits, lanes),
                    lanes,
                };
                at += bytes;
            }
        }
        o
    }

    /// Bytes of operand data a step's read returns (before the optional C row).
    fn step_bytes(&self, tile: usize, step: usize) -> usize {
        let (r0, c0) = self.sched.tile_origin(tile);
        let rows = (self.lay.m - r0).min(ROWS);
        let cols = (self.lay.n - c0).min(COLS);
        let w = self.cfg.width;
        if self.lay.sparse {
            rows * (lane_bytes(self.lay.esa, w) + self.e_step_bytes(step)) as usize
                + cols * lane_bytes(self.lay.esb, sparse_b_lanes(w)) as usize
        } else {
            rows * lane_bytes(self.lay.esa, w) as usize
                + cols * lane_bytes(self.lay.esb, w) as usize
        }
    }

    fn fresh(&self) -> bool {
        self.got_ops.q()
    }

    fn c_fetchable(&self) -> bool {
        let t = self.cf_tile.q() as usize;
        if t >= self.tiles() || self.cf_asked.q() == C_ALL {
            return false;
        }
        // The bank held tile t - 2, whose window must have read it; the slot of the tile's
        // box must have landed.
        let bank_free = t < 2 || self.c_used.q() as usize >= t - 1;
        let b = self.lay.box_of(t);
        bank_free
            && self.mem.try_wait_parity(
                self.c_bar(b % self.lay.tile_slots),
                (b / self.lay.tile_slots) & 1 == 1,
            )
    }

    /// The shared-memory address of word `w` (row `w / 4`, column `w % 4`) of the C tile
    /// being fetched.
    fn c_word_addr(&self, w: usize) -> u32 {
        let t = self.cf_tile.q() as usize;
        self.lay.c_base
            + (self.lay.box_of(t) % self.lay.tile_slots) as u32 * SLOT_BYTES
            + (w / COLS) as u32 * BOX_ROW_BYTES
            + self.lay.tile_in_box(t)
            + (w % COLS) as u32 * self.lay.esc
    }

    /// Whether chunk `g` loads A and its metadata (stream mode, or the first tile of a tile
    /// row in panel mode), and how many TMA loads it takes.
    fn sparse_parts(&self, g: usize) -> (bool, usize) {
        let t = g / self.lay.chunks;
        let load_a = !self.lay.panel || t.is_multiple_of(self.sched.tiles_n);
        (load_a, self.lay.b_boxes + if load_a { 2 } else { 0 })
    }

    /// The producer's next sparse operand load, if a stage is free. A chunk that loads A
    /// (stream mode, or the first tile of a tile row in panel mode) loads A's kept values
    /// first (posting the chunk's whole `expect_tx`), then the metadata box, then the B
    /// sub-boxes (128 bytes of K each) that cover the chunk's dense positions; a panel-mode
    /// chunk of a later tile loads only its B sub-boxes.
    fn sparse_load(&mut self, total_chunks: u32, rt: usize) -> Option<(TmaCmd, u8)> {
        let lay = self.lay;
        let g = self.p_chunk.q();
        if g >= total_chunks || (g - self.released.q()) as usize >= lay.stages {
            return None;
        }
        let g = g as usize;
        let (t, q, stage) = (g / lay.chunks, g % lay.chunks, g % lay.stages);
        let tm = t / self.sched.tiles_n;
        let (r0, c0) = self.sched.tile_origin(t);
        let bar = self.full_bar(stage);
        let (load_a, _) = self.sparse_parts(g);
        let part = usize::from(self.p_part.q()) + if load_a { 0 } else { 2 };
        if part == 0 || (!load_a && part == 2) {
            // A panel for row tm overwrites row tm - 2's: the consumer must be past it.
            if load_a && lay.panel && tm >= 2 && rt < (tm - 1) * self.sched.tiles_n {
                return None;
            }
            let bytes = if load_a {
                lay.chunk_tx_bytes()
            } else {
                lay.b_boxes as u32 * B_BOX_BYTES
            };
            self.mbar_ops.push(MbarOp {
                bar,
                op: MbarOpKind::ArriveExpectTx(bytes),
            });
        }
        let (desc, coords, smem_addr, kind) = match part {
            0 => {
                let kq = (q * lay.kc) as i32;
                (DESC_A, [kq, r0 as i32], lay.a_base(tm, q, stage), 1)
            }
            1 => {
                let kq = (q * lay.kc / 4) as i32;
                (DESC_E, [kq, r0 as i32], lay.e_base(tm, q, stage), 5)
            }
            p => {
                let j = p - 2;
                let kq = (2 * q * lay.kc + j * lay.b_box_k()) as i32;
                let at = lay.b_box_base(stage, j);
                (DESC_B, [kq, c0 as i32], at, 2)
            }
        };
        Some((
            TmaCmd {
                op: TmaOp::Load,
                desc,
                coords: [coords[0], coords[1], 0, 0, 0],
                smem_addr,
                mbar: bar,
            },
            kind,
        ))
    }

    fn stores_completed(&self) -> u32 {
        self.d_stored.q() - self.mem.stores_outstanding()
    }
}

impl<const W: usize> Module for MemoryPort<W> {
    fn name(&self) -> &str {
        "mem"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.init_done);
        v.reg(&mut self.p_chunk);
        v.reg(&mut self.p_sub);
        if self.lay.sparse {
            v.reg(&mut self.p_part);
        }
        v.reg(&mut self.c_issued);
        v.reg(&mut self.d_stored);
        v.reg(&mut self.rd_tile);
        v.reg(&mut self.rd_step);
        v.reg(&mut self.released);
        v.reg(&mut self.rq_busy);
        v.reg(&mut self.rq_ops);
        v.reg(&mut self.rq_cmask);
        v.reg(&mut self.got_ops);
        v.reg(&mut self.got_cmask);
        v.reg(&mut self.off_tile);
        v.reg(&mut self.off_step);
        v.reg(&mut self.held);
        for r in self.hold_a.iter_mut().chain(self.hold_b.iter_mut()) {
            v.reg(r);
        }
        for r in &mut self.hold_e {
            v.reg(r);
        }
        for r in &mut self.e_row {
            v.reg(r);
        }
        v.reg(&mut self.cf_tile);
        v.reg(&mut self.cf_have);
        v.reg(&mut self.cf_asked);
        v.reg(&mut self.c_used);
        for r in &mut self.c_regs {
            v.reg(r);
        }
        v.reg(&mut self.d_claimed);
        v.reg(&mut self.d_rows_in);
        v.reg(&mut self.d_rows_written);
        for r in &mut self.dq {
            v.reg(r);
        }
        v.reg(&mut self.dq_head);
        v.reg(&mut self.dq_count);
        v.reg(&mut self.overlap);
        v.wire(&mut self.valid);
        v.wire(&mut self.take);
        v.wire(&mut self.rd_req);
        v.wire(&mut self.rd_accept);
        v.wire(&mut self.tma_cmd);
        // The memory blocks appear as children of this scope: `mem.gmem`, `mem.smem`, ...
        self.mem.visit(v);
    }
}

impl<const W: usize> OperandPort<W> for MemoryPort<W> {
    fn dims(&self) -> (usize, usize, usize) {
        (self.lay.m, self.lay.n, self.lay.k_steps)
    }

    fn sparse(&self) -> bool {
        self.lay.sparse
    }

    #[inline]
    fn valid(&self) -> bool {
        self.fresh() || self.held.q()
    }

    fn operands(&self) -> StepOperands<W> {
        if self.fresh() {
            let (t, s) = (self.off_tile.q() as usize, self.off_step.q() as usize);
            return self.decode_step(t, s, self.mem.smem_read_data());
        }
        let mut o = StepOperands::default();
        let (r0, c0) = self.sched.tile_origin(self.off_tile.q() as usize);
        let s = self.off_step.q() as usize;
        let (la, lb) = if self.lay.sparse {
            self.sparse_lanes(s)
        } else {
            let lanes = self.cfg.width.min(self.lay.k - s * self.cfg.width).min(W);
            (lanes, lanes)
        };
        for (i, g) in o.a.iter_mut().enumerate() {
            if r0 + i < self.lay.m {
                *g = LaneGroup {
                    bits: self.hold_a[i].q(),
                    lanes: la,
                };
                if let Some(e) = self.hold_e.get(i) {
                    o.meta[i] = e.q();
                }
            }
        }
        for (j, g) in o.b.iter_mut().enumerate() {
            if c0 + j < self.lay.n {
                *g = LaneGroup {
                    bits: self.hold_b[j].q(),
                    lanes: lb,
                };
            }
        }
        o
    }

    fn c_ready(&self, tile: usize) -> bool {
        // All four rows of the tile's C are in their bank.
        (self.cf_tile.q() as usize) > tile
    }

    fn c_row(&self, tile: usize, row: usize) -> [u32; COLS] {
        let v = self.c_regs[(tile & 1) * ROWS + row].q();
        let bits = self.cfg.acc.width();
        let mask = (1u128 << bits) - 1;
        let mut out = [0u32; COLS];
        for (j, o) in out.iter_mut().enumerate() {
            *o = ((v >> (bits as usize * j)) & mask) as u32;
        }
        out
    }

    fn d_ready(&self) -> bool {
        // The next drained tile's box needs a slot (one already claimed, or a free one).
        let in_use = (self.lay.box_of(self.d_claimed.q() as usize) as u32)
            .saturating_sub(self.stores_completed());
        let coming = ROWS as u32 * self.d_claimed.q() - self.d_rows_in.q();
        (in_use as usize) < self.lay.tile_slots
            && usize::from(self.dq_count.q()) + coming as usize + ROWS <= DQ_DEPTH
    }

    fn finished(&self) -> bool {
        self.d_stored.q() as usize == self.lay.cd_boxes()
            && self.dq_count.q() == 0
            && self.mem.stores_outstanding() == 0
    }

    fn overlap_cycles(&self) -> u64 {
        self.overlap.q()
    }

    fn error(&self) -> Option<String> {
        self.mem.error().map(|e| e.to_string())
    }

    #[allow(clippy::too_many_lines)]
    fn comb(&mut self, io: &PortIo) {
        let lay = self.lay;
        let tiles = self.tiles();
        let total_chunks = (tiles * lay.chunks) as u32;
        self.mbar_ops.clear();
        self.lanes.clear();
        let valid = self.valid();
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

        // ---- C bank writes from the previous cycle's read; the offered step's hold. ----
        let fresh = self.fresh();
        let got = self.got_cmask.q();
        let mut c_complete = false;
        if got != 0 {
            // The C words of last cycle's read follow the operand bytes, in word order.
            let data = self.mem.smem_read_data();
            let mut at = if fresh {
                self.step_bytes(self.off_tile.q() as usize, self.off_step.q() as usize)
            } else {
                0
            };
            let t = self.cf_tile.q() as usize;
            let mut rows = [0u128; ROWS];
            for (r, v) in rows.iter_mut().enumerate() {
                *v = self.c_regs[(t & 1) * ROWS + r].q();
            }
            let es = lay.esc as usize;
            let bits = 8 * es;
            let mask = (1u128 << bits) - 1;
            for w in (0..16).filter(|w| got >> w & 1 == 1) {
                let word = data[at..at + es]
                    .iter()
                    .rev()
                    .fold(0u128, |acc, &x| (acc << 8) | u128::from(x));
                let (r, col) = (w / COLS, w % COLS);
                rows[r] = (rows[r] & !(mask << (bits * col))) | (word << (bits * col));
                at += es;
            }
            for (r, v) in rows.iter().enumerate() {
                self.c_regs[(t & 1) * ROWS + r].set_d(*v);
            }
            let have = self.cf_have.q() | got;
            if have == C_ALL {
                c_complete = true;
                self.cf_have.set_d(0);
                self.cf_tile.set_d(t as u32 + 1);
            } else {
                self.cf_have.set_d(have);
            }
        }
        if fresh && lay.sparse {
            // The chunk's metadata rows, read on its first step, stay for its later steps.
            let (t, s) = (self.off_tile.q() as usize, self.off_step.q() as usize);
            if self.e_step_bytes(s) > 0 {
                let rows = self.e_rows(t, s, Some(self.mem.smem_read_data()));
                for (reg, v) in self.e_row.iter_mut().zip(rows) {
                    reg.set_d(v);
                }
            }
        }
        if fresh && !io.take {
            let ops = self.operands();
            for (r, g) in self.hold_a.iter_mut().zip(&ops.a) {
                r.set_d(g.bits);
            }
            for (r, g) in self.hold_b.iter_mut().zip(&ops.b) {
                r.set_d(g.bits);
            }
            for (r, m) in self.hold_e.iter_mut().zip(&ops.meta) {
                r.set_d(*m);
            }
        }
        let slot_free = io.take || !valid;
        self.held.set_d(valid && !io.take);

        // ---- Consumer read request: the next step's lanes, a C row, or both. ----
        // A request that did not finish its passes is presented again unchanged.
        let (rt, rs) = (self.rd_tile.q() as usize, self.rd_step.q() as usize);
        let busy = self.rq_busy.q();
        let want_ops = if busy {
            self.rq_ops.q()
        } else {
            ready_to_work && rt < tiles && slot_free && self.landed(self.chunk_of(rt, rs))
        };
        if want_ops {
            let mut lanes = std::mem::take(&mut self.lanes);
            self.step_lanes(rt, rs, &mut lanes);
            self.lanes = lanes;
        }
        // C words (4 or 2 bytes each) ride along in the banks the operand lanes leave free, so the
        // read stays one pass; without an operand read every word left goes. Only when the
        // next shift window waits for this C do words share a bank with an operand (a
        // conflict). A request that did not finish its passes is presented again unchanged.
        let cmask = if busy {
            self.rq_cmask.q()
        } else if ready_to_work && self.c_fetchable() {
            let urgent = io.c_next.is_some_and(|t| t >= self.cf_tile.q() as usize);
            let mut used = 0u32;
            for l in &self.lanes {
                for w in (l.addr >> 2)..=((l.addr + u32::from(l.len) - 1) >> 2) {
                    used |= 1 << (w % 32);
                }
            }
            let mut m = 0u16;
            let mut room = MAX_REQUEST_LANES.saturating_sub(self.lanes.len());
            for w in (0..16).filter(|w| self.cf_asked.q() >> w & 1 == 0) {
                let bank = (self.c_word_addr(w) >> 2) % 32;
                if room > 0 && (!want_ops || urgent || used >> bank & 1 == 0) {
                    m |= 1 << w;
                    room -= 1;
                }
            }
            m
        } else {
            0
        };
        for w in (0..16).filter(|w| cmask >> w & 1 == 1) {
            self.lanes.push(SmemLane {
                addr: self.c_word_addr(w),
                len: lay.esc as u8,
            });
        }
        let want_c = cmask != 0;
        let rd_req = want_ops || want_c;
        self.rd_req.set(rd_req);

        // ---- D queue: rows in from the output register, the oldest row out to its slot. ----
        // Rows of a tile drain in the order 3, 2, 1, 0 (the shift path's bottom row first).
        let mut count = usize::from(self.dq_count.q());
        let head = usize::from(self.dq_head.q());
        let written = self.d_rows_written.q() as usize;
        let wl;
        let write_req = if count > 0 {
            let v = self.dq[head].q();
            let mut data = [0u8; 16];
            for (x, b) in data.iter_mut().enumerate() {
                *b = (v >> (8 * x)) as u8;
            }
            let tile = written / ROWS;
            let row = ROWS - 1 - written % ROWS;
            wl = [SmemWriteLane {
                addr: lay.d_base
                    + (lay.box_of(tile) % lay.tile_slots) as u32 * SLOT_BYTES
                    + row as u32 * BOX_ROW_BYTES
                    + lay.tile_in_box(tile),
                len: (COLS as u32 * lay.esc) as u8,
                data,
            }];
            Some(&wl[..])
        } else {
            None
        };

        // ---- TMA command: a store, else a C load, else an operand load. ----
        let mut cmd: Option<(TmaCmd, u8)> = None;
        // Box `ds` is ready to store once the last of its tiles has all four rows written.
        let tiles_written = self.d_rows_written.q() as usize / ROWS;
        let ds = self.d_stored.q() as usize;
        let store_ready = ds < lay.cd_boxes() && lay.last_tile_of_box(ds) < tiles_written;
        if ready_to_work && self.mem.tma_ready() {
            if store_ready {
                let (r0, c0) = lay.box_origin(ds);
                cmd = Some((
                    TmaCmd {
                        op: TmaOp::Store,
                        desc: DESC_D,
                        coords: [c0 as i32, r0 as i32, 0, 0, 0],
                        smem_addr: lay.d_base + (ds % lay.tile_slots) as u32 * SLOT_BYTES,
                        mbar: 0,
                    },
                    4,
                ));
            } else {
                // Box `ct` may load once the box `tile_slots` before it (the slot's last
                // occupant) is fetched: every box before the one being fetched is.
                let ct = self.c_issued.q() as usize;
                let cf = self.cf_tile.q() as usize;
                let boxes_fetched = if cf < tiles {
                    lay.box_of(cf)
                } else {
                    lay.cd_boxes()
                };
                if ct < lay.cd_boxes() && ct.saturating_sub(boxes_fetched) < lay.tile_slots {
                    let (r0, c0) = lay.box_origin(ct);
                    let slot = ct % lay.tile_slots;
                    cmd = Some((
                        TmaCmd {
                            op: TmaOp::Load,
                            desc: DESC_C,
                            coords: [c0 as i32, r0 as i32, 0, 0, 0],
                            smem_addr: lay.c_base + slot as u32 * SLOT_BYTES,
                            mbar: self.c_bar(slot),
                        },
                        3,
                    ));
                    self.mbar_ops.push(MbarOp {
                        bar: self.c_bar(slot),
                        op: MbarOpKind::ArriveExpectTx(lay.cd_box_bytes()),
                    });
                } else if lay.sparse {
                    cmd = self.sparse_load(total_chunks, rt);
                } else {
                    let g = self.p_chunk.q();
                    let in_use = g - self.released.q();
                    if g < total_chunks && (in_use as usize) < lay.stages {
                        let g = g as usize;
                        let t = g / lay.chunks;
                        let q = g % lay.chunks;
                        let stage = g % lay.stages;
                        let tm = t / self.sched.tiles_n;
                        let tn = t % self.sched.tiles_n;
                        let load_a = !lay.panel || tn == 0;
                        // A panel for row tm overwrites row tm - 2's: the consumer must be past it.
                        let panel_safe =
                            !lay.panel || tm < 2 || rt >= (tm - 1) * self.sched.tiles_n;
                        let (r0, c0) = self.sched.tile_origin(t);
                        let kq = (q * lay.kc) as i32;
                        let sub = self.p_sub.q();
                        if load_a && !sub && panel_safe {
                            let box_a = (ROWS * lay.kc) as u32 * lay.esa;
                            let box_b = (COLS * lay.kc) as u32 * lay.esb;
                            cmd = Some((
                                TmaCmd {
                                    op: TmaOp::Load,
                                    desc: DESC_A,
                                    coords: [kq, r0 as i32, 0, 0, 0],
                                    smem_addr: lay.a_base(tm, q, stage),
                                    mbar: self.full_bar(stage),
                                },
                                1,
                            ));
                            self.mbar_ops.push(MbarOp {
                                bar: self.full_bar(stage),
                                op: MbarOpKind::ArriveExpectTx(box_a + box_b),
                            });
                        } else if !load_a || sub {
                            let box_b = (COLS * lay.kc) as u32 * lay.esb;
                            cmd = Some((
                                TmaCmd {
                                    op: TmaOp::Load,
                                    desc: DESC_B,
                                    coords: [kq, c0 as i32, 0, 0, 0],
                                    smem_addr: lay.b_base(stage),
                                    mbar: self.full_bar(stage),
                                },
                                2,
                            ));
                            if !load_a {
                                self.mbar_ops.push(MbarOp {
                                    bar: self.full_bar(stage),
                                    op: MbarOpKind::ArriveExpectTx(box_b),
                                });
                            }
                        }
                    }
                }
            }
        }
        self.tma_cmd.set(cmd.map_or(0, |c| c.1));

        // ---- The memory system's cycle. ----
        let lanes = std::mem::take(&mut self.lanes);
        let ops = std::mem::take(&mut self.mbar_ops);
        let out = self.mem.comb(&MemIn {
            tma_cmd: cmd.map(|c| c.0),
            smem_read: rd_req.then_some(&lanes[..]),
            smem_write: write_req,
            mbar_ops: &ops,
        });
        self.lanes = lanes;
        self.mbar_ops = ops;

        // ---- Producer bookkeeping (the command was accepted: tma_ready was high). ----
        if let Some((_, kind)) = cmd {
            match kind {
                1 | 2 | 5 if lay.sparse => {
                    let part = self.p_part.q() + 1;
                    if usize::from(part) == self.sparse_parts(self.p_chunk.q() as usize).1 {
                        self.p_part.set_d(0);
                        self.p_chunk.set_d(self.p_chunk.q() + 1);
                    } else {
                        self.p_part.set_d(part);
                    }
                }
                1 => self.p_sub.set_d(true),
                2 => {
                    self.p_sub.set_d(false);
                    self.p_chunk.set_d(self.p_chunk.q() + 1);
                }
                3 => self.c_issued.set_d(self.c_issued.q() + 1),
                _ => self.d_stored.set_d(self.d_stored.q() + 1),
            }
        }

        // ---- Consumer bookkeeping. ----
        let accepted = rd_req && out.smem_read_ready;
        self.rd_accept.set(accepted);
        self.rq_busy.set_d(rd_req && !accepted);
        self.rq_ops.set_d(want_ops);
        self.rq_cmask.set_d(cmask);
        self.got_ops.set_d(accepted && want_ops);
        self.got_cmask.set_d(if accepted { cmask } else { 0 });
        if c_complete {
            self.cf_asked.set_d(0);
        } else if accepted {
            self.cf_asked.set_d(self.cf_asked.q() | cmask);
        }
        if accepted && want_ops {
            self.off_tile.set_d(rt as u32);
            self.off_step.set_d(rs as u32);
            let g = self.chunk_of(rt, rs);
            let last_of_chunk = rs + 1 == self.sched.steps || self.chunk_of(rt, rs + 1) != g;
            if last_of_chunk {
                self.released.set_d(self.released.q() + 1);
            }
            if rs + 1 == self.sched.steps {
                self.rd_step.set_d(0);
                self.rd_tile.set_d(rt as u32 + 1);
            } else {
                self.rd_step.set_d(rs as u32 + 1);
            }
        }
        if let Some((_, row)) = io.c_read {
            if row == 0 {
                self.c_used.set_d(self.c_used.q() + 1);
            }
        }

        // ---- D bookkeeping: claims, rows in, rows written. ----
        if io.d_claim.is_some() {
            self.d_claimed.set_d(self.d_claimed.q() + 1);
        }
        let mut head = head;
        if write_req.is_some() && out.smem_write_ready {
            head = (head + 1) % DQ_DEPTH;
            count -= 1;
            self.d_rows_written.set_d(self.d_rows_written.q() + 1);
        }
        if let Some(row) = io.d_row {
            let mut v = 0u128;
            let bits = self.cfg.acc.width() as usize;
            for (j, w) in row.values.iter().enumerate() {
                v |= u128::from(*w) << (bits * j);
            }
            let tail = (usize::from(self.dq_head.q()) + usize::from(self.dq_count.q())) % DQ_DEPTH;
            self.dq[tail].set_d(v);
            count += 1;
            self.d_rows_in.set_d(self.d_rows_in.q() + 1);
        }
        self.dq_head.set_d(head as u8);
        self.dq_count.set_d(count as u8);
    }
}
