//! Where everything lives (pure address arithmetic, no registers): the global-memory regions
//! of A, Bᵀ, C, D (and E for a 2:4 sparse A, XA and XB for block scales), the chunking of K,
//! the shared-memory map of stages, A panels, C and D slots, the TMA descriptors, and each
//! chunk's load plan (the boxes it loads, in order). The dense, 2:4 sparse and block-scaled
//! problems differ only here, in [`OperandLayout`]; the blocks of the port ask the layout.

use super::config::{MemPortConfig, MAX_REQUEST_LANES, MAX_STAGES, MAX_TILE_SLOTS};
use crate::hw::config::CoreConfig;
use crate::hw::memory::{ElemType, SmemLane, Swizzle, TensorMap, TmaCmd, TmaOp};
use crate::hw::pe::sparse_b_lanes;
use crate::hw::HwError;
use crate::numerics::format::Format;

use super::arbiter::TmaKind;

/// Bytes of one row of the 128B swizzle atom (and of a stage's A or B box row).
pub(super) const ATOM_ROW_BYTES: u32 = 128;
/// Rows of a swizzle atom: a dense stage block holds A's `R` rows, then B's `C` rows, in as
/// many atoms as they take.
const ATOM_ROWS: u32 = 8;
/// Bytes of one stage block (one 128B swizzle atom: A rows `0..R`, B rows `R..R + C`).
const STAGE_BYTES: u32 = ATOM_ROWS * ATOM_ROW_BYTES;
/// Descriptor slots: A, B, C, D, and E (the 2:4 metadata of a sparse A).
pub(super) const DESC_A: usize = 0;
pub(super) const DESC_B: usize = 1;
pub(super) const DESC_C: usize = 2;
pub(super) const DESC_D: usize = 3;
pub(super) const DESC_E: usize = 4;
/// Descriptor slots of a block-scaled problem's scale regions (A's, B's; no E beside them).
pub(super) const DESC_XA: usize = 4;
pub(super) const DESC_XB: usize = 5;
/// Bytes of one row's (column's) slot in a block of scales: a chunk's `KC / bs` scales of the
/// row, A's from byte 0, B's from byte [`XB_SLOT_OFF`] (a block is a tile's slots, `R` or
/// `C` of them, so its box is a multiple of 16 bytes).
pub(super) const X_SLOT_BYTES: u32 = 16;
/// Where B's scales sit in their 16-byte slot: the upper half, so a step's reads of A's and
/// B's scales fall in different banks.
pub(super) const XB_SLOT_OFF: u32 = 8;
/// Kept A values a sparse chunk covers: one 16-byte metadata box row (2 bits a value), and
/// twice as many dense K positions of B.
pub const SPARSE_KC: usize = 64;
/// Bytes of one metadata box row (the 16-byte TMA inner extent).
pub(super) const E_ROW_BYTES: u32 = 16;
/// Offset of a sparse A box in its block in the compact sparse stage (row 2 of the 128B
/// swizzle atom; the metadata box sits in row 0).
const SPARSE_A_OFF: u32 = 2 * ATOM_ROW_BYTES;
/// Bytes of a C or D slot are a multiple of this (a box at a 128-byte boundary, the alignment a
/// TMA destination needs).
pub(super) const SLOT_BYTES: u32 = 128;
/// A C or D box row is a multiple of this: the 16 bytes a TMA box's inner extent is a
/// multiple of.
pub(super) const BOX_ROW_BYTES: u32 = 16;
/// Dense K positions per 2:4 group, and kept values per group.
const GROUP: usize = 4;
const KEPT_PER_GROUP: usize = 2;

/// How A reaches the array: dense, or 2:4 sparse (kept values plus a metadata region E).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandLayout {
    /// A is `M x K`, a chunk is one A box and one B box.
    Dense,
    /// A holds the `M x K/2` kept values, E their 2-bit selects; a chunk is one A box, one
    /// E box and `bytes(B)` B sub-boxes of 128 dense positions (see the module docs).
    Sparse,
    /// Block-scaled A and B (elements of one byte, a scale byte every `block` elements of
    /// K): a chunk is the dense A and B boxes plus a box of A's scales (XA) and one of B's
    /// (XB), each a 16-byte row per A row or B column (see the module docs).
    Mx {
        /// Elements of K a scale covers (32, or 16 for NVFP4).
        block: usize,
    },
}

/// One box of a chunk's load plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadPart {
    /// A's box (dense values, or a sparse A's kept values).
    A,
    /// The metadata box of a sparse A.
    E,
    /// B sub-box `j` (dense: the only one, `j = 0`).
    B(usize),
    /// The box of A's block scales (block-scaled problems).
    Xa,
    /// The box of B's block scales (block-scaled problems).
    Xb,
}

/// What a chunk loads: A (and E for a sparse A) unless a panel already holds them, then its
/// B boxes; the chunk's whole transaction count is expected with its first box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadPlan {
    /// The chunk loads A (and E): stream mode, or the first tile of a tile row in panel mode.
    pub loads_a: bool,
    /// Boxes of the chunk, A and E included.
    pub boxes: usize,
    /// Bytes the chunk's boxes land on the stage's `full` barrier.
    pub tx_bytes: u32,
    operands: OperandLayout,
}

impl LoadPlan {
    /// Box `i` of the plan.
    pub fn part(&self, i: usize) -> LoadPart {
        let i = if self.loads_a { i } else { i + self.a_parts() };
        match (i, self.operands) {
            (0, _) => LoadPart::A,
            (1, OperandLayout::Sparse) => LoadPart::E,
            (i, OperandLayout::Sparse) => LoadPart::B(i - 2),
            (_, OperandLayout::Dense) => LoadPart::B(0),
            (1, OperandLayout::Mx { .. }) => LoadPart::Xa,
            (2, OperandLayout::Mx { .. }) => LoadPart::B(0),
            (_, OperandLayout::Mx { .. }) => LoadPart::Xb,
        }
    }

    /// Boxes of A's side (A, and E for a sparse A, XA for a block-scaled one).
    fn a_parts(&self) -> usize {
        match self.operands {
            OperandLayout::Dense => 1,
            _ => 2,
        }
    }
}

/// Where everything lives: global-memory regions, the chunking of K and the shared-memory
/// map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemLayout {
    /// Rows of the PE array `R` (a tile's rows).
    pub rows: usize,
    /// Columns of the PE array `C` (a tile's columns).
    pub cols: usize,
    /// Rows of A, C, D.
    pub m: usize,
    /// Columns of B, C, D.
    pub n: usize,
    /// Inner dimension (dense K positions).
    pub k: usize,
    /// K positions the schedule counts: `k`, or the kept `k / 2` of a 2:4 sparse A.
    pub k_steps: usize,
    /// Dense or 2:4 sparse A (see the module docs).
    pub operands: OperandLayout,
    /// Bytes of an A element.
    pub esa: u32,
    /// Bytes of a B element.
    pub esb: u32,
    /// Bytes of a C or D element (the accumulator format: 4 for FP32, 2 for FP16).
    pub esc: u32,
    /// Tiles of a tile row one C or D box covers side by side: `box_row_bytes / (C x esc)`
    /// (1 for a 4-column FP32 tile, 2 for a 4-column FP16 one, 4 for a 3-column FP32 one).
    pub tiles_per_box: usize,
    /// Bytes of a C or D box row: the least common multiple of a tile row (`C x esc`) and
    /// the 16 bytes a TMA inner extent is a multiple of, so a box is whole tiles side by side.
    pub box_row_bytes: u32,
    /// Tiles along N, `ceil(N / C)`.
    pub tiles_n: usize,
    /// K elements a chunk (one TMA box along K; kept values for a sparse A).
    pub kc: usize,
    /// Chunks per tile `ceil(k_steps / KC)`.
    pub chunks: usize,
    /// B boxes a chunk loads (1 dense; `B element bytes` sparse: 128 dense positions).
    pub b_boxes: usize,
    /// Bytes of one operand stage in shared memory.
    pub stage_bytes: u32,
    /// Bytes of one A panel block (a chunk of a tile row's A: `ceil(R / 8)` swizzle atoms).
    pub panel_block_bytes: u32,
    /// Bytes of one C or D slot (a box of `R` rows of `box_row_bytes`, at a 128-byte
    /// boundary).
    pub slot_bytes: u32,
    /// Offset of the A box in its block (stage or panel): 0 dense; for a sparse A, after the
    /// metadata box (row 2 of the first atom in the compact stage, the atoms after E's in the
    /// tall one).
    pub a_off: u32,
    /// Offset of B's (first) box in a stage, and between a sparse chunk's B sub-boxes.
    pub b_off: u32,
    /// See `b_off`.
    pub b_stride: u32,
    /// Most shared-memory requests (beats) one step's read takes (1 when every step fits one
    /// request of 32 lanes).
    pub max_beats: usize,
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
    /// A's block scales (block-scaled problems), in blocks: one block per tile row and
    /// chunk (block `tm * chunks + q`, a row of the region), holding the tile row's `R` rows'
    /// 16-byte slots, each the chunk's `KC / bs` scales of its row from byte 0 (after D;
    /// unused otherwise).
    pub xa: (u64, u64),
    /// B's block scales, in blocks likewise: one per tile column and chunk, its `C` columns'
    /// slots, each the chunk's scales of its column from byte 8 (after A's scales).
    pub xb: (u64, u64),
    /// Scale bytes a row (or column) reads per chunk: `KC / bs` (0 without block scales).
    pub x_bytes: u32,
    /// Offset of the XA box in a stage (stream mode) and in a panel block (panel mode), and
    /// of the XB box in a stage (block-scaled problems).
    pub xa_stage_off: u32,
    /// See `xa_stage_off`.
    pub xa_panel_off: u32,
    /// See `xa_stage_off`.
    pub xb_off: u32,
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

/// The least common multiple of `a` and `b` (both positive).
fn lcm(a: u32, b: u32) -> u32 {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

/// Packs a step's lane groups (each an A row, a B column or a metadata row, given by its
/// lanes, in request order) into beats of at most [`MAX_REQUEST_LANES`] lanes, greedily and in
/// order: the group ranges `start..end` of the beats.
fn pack_beats(groups: impl Iterator<Item = usize>) -> impl Iterator<Item = (usize, usize)> {
    let mut groups = groups.enumerate().peekable();
    std::iter::from_fn(move || {
        let (start, _) = *groups.peek()?;
        let mut end = start;
        let mut lanes = 0;
        while let Some(&(i, l)) = groups.peek() {
            if lanes > 0 && lanes + l > MAX_REQUEST_LANES {
                break;
            }
            lanes += l;
            end = i + 1;
            groups.next();
        }
        Some((start, end))
    })
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

/// Bytes of `w` lanes of `es`-byte elements.
pub(super) fn lane_bytes(es: u32, w: usize) -> u32 {
    es * w as u32
}

/// Bytes an element of `fmt` takes in memory: its width in whole bytes, rounded up to a power
/// of two (TF32's 19 bits live in a 4-byte FP32 word, as on the GPU).
pub(super) fn container_bytes(fmt: Format) -> u32 {
    fmt.width().div_ceil(8).next_power_of_two()
}

/// Pushes the lane reads of `bytes` bytes at logical shared-memory address `logical`, split at
/// 16-byte chunks and swizzled.
pub(super) fn push_lanes(out: &mut Vec<SmemLane>, logical: u32, bytes: u32, swz: Swizzle) {
    let mut off = 0;
    while off < bytes {
        let len = (bytes - off).min(16);
        out.push(SmemLane {
            addr: crate::hw::memory::swizzle(logical + off, swz),
            len: len as u8,
        });
        off += len;
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
        Self::build(cfg, m, n, k, pc, OperandLayout::Dense)
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
        Self::build(cfg, m, n, k, pc, OperandLayout::Sparse)
    }

    /// The layout of an `m x n x k` block-scaled problem with a scale every `block` elements
    /// of K (elements of at most 8 bits, one byte each in memory): the dense layout plus the
    /// scale regions XA and XB and their boxes beside A's and B's in every chunk (module
    /// documentation).
    pub fn new_mx(
        cfg: &CoreConfig,
        block: usize,
        (m, n, k): (usize, usize, usize),
        pc: &MemPortConfig,
    ) -> Result<Self, HwError> {
        Self::build(cfg, m, n, k, pc, OperandLayout::Mx { block })
    }

    /// A 2:4 sparse A.
    pub fn is_sparse(&self) -> bool {
        self.operands == OperandLayout::Sparse
    }

    /// Block-scaled A and B.
    pub fn is_mx(&self) -> bool {
        matches!(self.operands, OperandLayout::Mx { .. })
    }

    /// A chunk's plan has more than the dense two boxes (sparse or block-scaled).
    pub(super) fn multi_part(&self) -> bool {
        self.operands != OperandLayout::Dense
    }

    fn build(
        cfg: &CoreConfig,
        m: usize,
        n: usize,
        k: usize,
        pc: &MemPortConfig,
        operands: OperandLayout,
    ) -> Result<Self, HwError> {
        let sparse = operands == OperandLayout::Sparse;
        let mx_block = match operands {
            OperandLayout::Mx { block } => Some(block),
            _ => None,
        };
        let (rows, cols) = (cfg.rows(), cfg.cols());
        let esc = cfg.acc.width() / 8;
        // A dense stage holds A's rows then B's, in as many swizzle atoms as they take. A C/D
        // box row is one TMA inner extent (a multiple of 16 bytes) holding whole tile rows
        // side by side: the least common multiple of a tile row and 16 bytes.
        let atom_rows = ATOM_ROWS as usize;
        let tile_row = cols as u32 * esc;
        let box_row_bytes = lcm(tile_row, BOX_ROW_BYTES);
        let (esa, esb) = (container_bytes(cfg.fmt_a), container_bytes(cfg.fmt_b));
        let bytes_wide = |f: &Format| matches!(f.width(), 8 | 16);
        if sparse && !(bytes_wide(&cfg.fmt_a) && bytes_wide(&cfg.fmt_b)) {
            return Err(HwError::Unsupported(
                "2:4 sparse GEMMs through memory: A and B of 1 or 2 bytes an element \
                 (FP8, FP16, BF16)"
                    .into(),
            ));
        }
        if mx_block.is_some() && (esa, esb) != (1, 1) {
            return Err(HwError::Unsupported(
                "block-scaled GEMMs through memory: elements of at most 8 bits (one byte each)"
                    .into(),
            ));
        }
        let (kc, k_steps, b_boxes) = if sparse {
            (SPARSE_KC, k / KEPT_PER_GROUP, esb as usize)
        } else {
            ((ATOM_ROW_BYTES / esa.max(esb)) as usize, k, 1)
        };
        // One step's read (the A rows, the B columns, and for 2:4 sparsity 2w B lanes and
        // the metadata) is one shared-memory request where it fits one, else several beats.
        let w = cfg.width;
        let chunks = k_steps.div_ceil(kc);
        let atoms = |r: usize| r.div_ceil(atom_rows) as u32 * STAGE_BYTES;
        let bytes_atoms = |b: u32| b.div_ceil(STAGE_BYTES) * STAGE_BYTES;
        // The compact sparse stage (E in row 0 and A from row 2 of the first atom, each B
        // sub-box from row 2 (16-bit B) or 1 (8-bit B) of its own atom) holds A's and B's rows
        // when `R + C <= 8` and B's rows stay in their atom; otherwise the tall one: E, A and
        // each B sub-box in whole atoms of their own.
        let b_row0 = if esb == 2 { 2 } else { 1 };
        let compact = rows + cols <= atom_rows && b_row0 + cols <= atom_rows;
        let a_row_bytes = kc as u32 * esa;
        // Block scales: a chunk's `KC / bs` scales of each row (column) in a 16-byte slot;
        // the XA box (`R` slots) and XB box (`C` slots) after the stage's operand atoms, each
        // at a 128-byte boundary (the TMA destination's alignment), in whole atoms; in panel
        // mode XA after A's atoms in the panel block.
        let x_bytes = mx_block.map_or(0, |b| (kc / b) as u32);
        let x_box = |n: usize| (n as u32 * X_SLOT_BYTES).div_ceil(SLOT_BYTES) * SLOT_BYTES;
        let (xa_stage_off, xa_panel_off, xb_off) = if mx_block.is_some() {
            let ops = atoms(rows + cols);
            (ops, atoms(rows), ops + x_box(rows))
        } else {
            (0, 0, 0)
        };
        let (stage_bytes, panel_block_bytes, a_off, b_off, b_stride) = if mx_block.is_some() {
            let b_off = rows as u32 * ATOM_ROW_BYTES;
            (
                atoms(rows + cols) + bytes_atoms(x_box(rows) + x_box(cols)),
                atoms(rows) + bytes_atoms(x_box(rows)),
                0,
                b_off,
                0,
            )
        } else if !sparse {
            // A's rows then B's, one 128-byte row each, in whole swizzle atoms.
            let b_off = rows as u32 * ATOM_ROW_BYTES;
            (atoms(rows + cols), atoms(rows), 0, b_off, 0)
        } else if compact {
            // One swizzle atom for E and A, one for each B sub-box. Seven 128-byte A rows
            // from row 2 end in the next atom's row 0, which a stage leaves free (its B
            // sub-box starts at row 1 or 2) but a panel block must hold: two atoms then.
            let b_off = STAGE_BYTES + b_row0 as u32 * ATOM_ROW_BYTES;
            let stage = STAGE_BYTES * (1 + b_boxes as u32);
            let block = bytes_atoms(SPARSE_A_OFF + rows as u32 * a_row_bytes);
            (stage, block, SPARSE_A_OFF, b_off, STAGE_BYTES)
        } else {
            let e_bytes = bytes_atoms(rows as u32 * E_ROW_BYTES);
            let block = e_bytes + bytes_atoms(rows as u32 * a_row_bytes);
            let b_stride = atoms(cols);
            (
                block + b_boxes as u32 * b_stride,
                block,
                e_bytes,
                block,
                b_stride,
            )
        };
        let slot_bytes = (rows as u32 * box_row_bytes).div_ceil(SLOT_BYTES) * SLOT_BYTES;
        let a = (0u64, pitch((k_steps as u64) * u64::from(esa)));
        let e = (a.0 + a.1 * m as u64, pitch(k.div_ceil(2 * GROUP) as u64));
        let b_addr = if sparse { e.0 + e.1 * m as u64 } else { e.0 };
        let b = (b_addr, pitch((k as u64) * u64::from(esb)));
        let c_addr = b.0 + b.1 * n as u64;
        let tiles_per_box = (box_row_bytes / tile_row) as usize;
        let c = (c_addr, pitch(n as u64 * u64::from(esc)));
        let d = (c.0 + c.1 * m as u64, c.1);
        // The scale regions after D (block-scaled problems only): a block (row) per tile row
        // (column) and chunk, `R` (`C`) slots of 16 bytes.
        let slots = |lines: usize| u64::from(lines as u32 * X_SLOT_BYTES);
        let xa = (d.0 + d.1 * m as u64, slots(rows));
        let xb = (
            xa.0 + xa.1 * (m.div_ceil(rows) * chunks) as u64,
            slots(cols),
        );
        let gmem_bytes = if mx_block.is_some() {
            xb.0 + xb.1 * (n.div_ceil(cols) * chunks) as u64
        } else {
            d.0 + d.1 * m as u64
        };
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
        let box_bytes = u64::from(rows as u32 * box_row_bytes);
        let slot_fill = u64::from(pc.params.latency) + 2 * box_bytes.div_ceil(bw) + 16;
        let mut tile_slots =
            (slot_fill.div_ceil(steps.max(1)) as usize + 2).clamp(2, MAX_TILE_SLOTS);
        let panel_bytes = 2 * chunks as u64 * u64::from(panel_block_bytes);
        let panel = n > cols && panel_bytes <= u64::from(smem / 2);
        let panel_base = 0u32;
        let stage_base = if panel { panel_bytes as u32 } else { 0 };
        // Large slots (a wide or tall array's C and D boxes) give way to two operand stages:
        // fewer slots (at least two each), where all of them would not leave room for two.
        let slots_need = |s: usize| 2 * u64::from(s as u32 * slot_bytes);
        while tile_slots > 2
            && u64::from(stage_base) + slots_need(tile_slots) + 2 * u64::from(stage_bytes)
                > u64::from(smem)
        {
            tile_slots -= 1;
        }
        let tail = 2 * tile_slots as u32 * slot_bytes;
        let chunk_bytes = if sparse {
            let a_e = if panel {
                0
            } else {
                kc as u32 * esa + kc as u32 / (8 / 2)
            };
            rows as u32 * (a_e + KEPT_PER_GROUP as u32 * kc as u32 * esb)
        } else {
            rows as u32 * ATOM_ROW_BYTES * if panel { 1 } else { 2 }
                + if mx_block.is_some() {
                    (rows + cols) as u32 * X_SLOT_BYTES
                } else {
                    0
                }
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
        // The beats of the largest step: every row and column inside the problem, and the
        // metadata rows of a chunk's first step.
        let group_lanes = |bytes: u32| bytes.div_ceil(16) as usize;
        let (la, lb) = (
            group_lanes(lane_bytes(esa, w)),
            group_lanes(lane_bytes(esb, if sparse { sparse_b_lanes(w) } else { w })),
        );
        let groups = std::iter::repeat_n(la, rows)
            .chain(std::iter::repeat_n(lb, cols))
            .chain(std::iter::repeat_n(1, if sparse { rows } else { 0 }))
            .chain(std::iter::repeat_n(
                1,
                if mx_block.is_some() { rows + cols } else { 0 },
            ));
        let max_beats = pack_beats(groups).count();
        Ok(Self {
            rows,
            cols,
            m,
            n,
            k,
            k_steps,
            operands,
            esa,
            esb,
            esc,
            tiles_per_box,
            box_row_bytes,
            tiles_n: n.div_ceil(cols),
            kc,
            chunks,
            b_boxes,
            stage_bytes,
            panel_block_bytes,
            slot_bytes,
            a_off,
            b_off,
            b_stride,
            max_beats,
            a,
            b,
            c,
            d,
            e,
            xa,
            xb,
            x_bytes,
            xa_stage_off,
            xa_panel_off,
            xb_off,
            gmem_bytes,
            panel,
            stages,
            panel_base,
            stage_base,
            c_base,
            d_base: c_base + tile_slots as u32 * slot_bytes,
            tile_slots,
            swz_a: swizzle_for(kc as u32 * esa, pc.swizzle),
            swz_b: swizzle_for(
                if sparse {
                    ATOM_ROW_BYTES
                } else {
                    kc as u32 * esb
                },
                pc.swizzle,
            ),
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
        match self.operands {
            OperandLayout::Sparse => (ATOM_ROW_BYTES / self.esb) as usize,
            OperandLayout::Dense | OperandLayout::Mx { .. } => self.kc,
        }
    }

    /// The descriptors: A, B, C, D, and E for a sparse problem.
    pub fn descriptors(&self) -> Vec<TensorMap> {
        let mut a = TensorMap::dense(
            Self::elem(self.esa),
            self.a.0,
            &[self.k_steps as u64, self.m as u64],
            &[self.kc as u32, self.rows as u32],
        );
        a.global_strides[0] = self.a.1;
        a.swizzle = self.swz_a;
        let mut b = TensorMap::dense(
            Self::elem(self.esb),
            self.b.0,
            &[self.k as u64, self.n as u64],
            &[self.b_box_k() as u32, self.cols as u32],
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
            &[(self.cols * self.tiles_per_box) as u32, self.rows as u32],
        );
        c.global_strides[0] = self.c.1;
        let mut d = c;
        d.global_address = self.d.0;
        let mut maps = vec![a, b, c, d];
        if self.is_sparse() {
            let mut e = TensorMap::dense(
                ElemType::U8,
                self.e.0,
                &[self.k.div_ceil(2 * GROUP) as u64, self.m as u64],
                &[E_ROW_BYTES, self.rows as u32],
            );
            e.global_strides[0] = self.e.1;
            maps.push(e);
        }
        if self.is_mx() {
            // A's scales then B's: a box is one block (a row of the region: `R` or `C` slots
            // of 16 bytes, moved as 4-byte words), at inner coordinate 0.
            for ((addr, pitch), blocks) in [
                (self.xa, self.m.div_ceil(self.rows)),
                (self.xb, self.tiles_n),
            ] {
                let words = (pitch / 4) as u32;
                let mut x = TensorMap::dense(
                    ElemType::U32,
                    addr,
                    &[u64::from(words), (blocks * self.chunks) as u64],
                    &[words, 1],
                );
                x.global_strides[0] = pitch;
                maps.push(x);
            }
        }
        maps
    }

    /// Bytes of a chunk's A side: the A box, and the E box of a sparse A.
    fn a_side_bytes(&self) -> u32 {
        let box_a = (self.rows * self.kc) as u32 * self.esa;
        match self.operands {
            OperandLayout::Sparse => box_a + self.rows as u32 * E_ROW_BYTES,
            OperandLayout::Dense => box_a,
            OperandLayout::Mx { .. } => box_a + self.rows as u32 * X_SLOT_BYTES,
        }
    }

    /// Bytes of a chunk's B boxes.
    fn b_side_bytes(&self) -> u32 {
        match self.operands {
            // A B sub-box is `C` rows of one atom row each.
            OperandLayout::Sparse => self.b_boxes as u32 * self.cols as u32 * ATOM_ROW_BYTES,
            OperandLayout::Dense => (self.cols * self.kc) as u32 * self.esb,
            OperandLayout::Mx { .. } => {
                (self.cols * self.kc) as u32 * self.esb + self.cols as u32 * X_SLOT_BYTES
            }
        }
    }

    /// The load plan of chunk `g` (`g = t * chunks + q`).
    pub fn load_plan(&self, g: usize) -> LoadPlan {
        let t = g / self.chunks;
        let loads_a = !self.panel || t.is_multiple_of(self.tiles_n);
        let a_parts = if self.multi_part() { 2 } else { 1 };
        let b_parts = self.b_boxes + usize::from(self.is_mx());
        LoadPlan {
            loads_a,
            boxes: b_parts + if loads_a { a_parts } else { 0 },
            tx_bytes: self.b_side_bytes() + if loads_a { self.a_side_bytes() } else { 0 },
            operands: self.operands,
        }
    }

    /// The TMA load of `part` of chunk `g` into stage `g % stages`, its completion on the
    /// stage's `full` barrier `bar`.
    pub fn load_cmd(&self, g: usize, part: LoadPart, bar: usize) -> (TmaCmd, TmaKind) {
        let (t, q, stage) = (g / self.chunks, g % self.chunks, g % self.stages);
        let (tm, tn) = (t / self.tiles_n, t % self.tiles_n);
        let (r0, c0) = (tm * self.rows, tn * self.cols);
        let (desc, coords, smem_addr, kind) = match part {
            LoadPart::A => (
                DESC_A,
                [(q * self.kc) as i32, r0 as i32],
                self.a_base(tm, q, stage),
                TmaKind::LoadA,
            ),
            LoadPart::E => (
                DESC_E,
                [(q * self.kc / GROUP) as i32, r0 as i32],
                self.e_base(tm, q, stage),
                TmaKind::LoadE,
            ),
            LoadPart::B(j) => {
                let (kq, at) = match self.operands {
                    OperandLayout::Sparse => (
                        KEPT_PER_GROUP * q * self.kc + j * self.b_box_k(),
                        self.b_box_base(stage, j),
                    ),
                    OperandLayout::Dense | OperandLayout::Mx { .. } => {
                        (q * self.kc, self.b_base(stage))
                    }
                };
                (DESC_B, [kq as i32, c0 as i32], at, TmaKind::LoadB)
            }
            LoadPart::Xa => (
                DESC_XA,
                [0, (tm * self.chunks + q) as i32],
                self.xa_base(tm, q, stage),
                TmaKind::LoadS,
            ),
            LoadPart::Xb => (
                DESC_XB,
                [0, (tn * self.chunks + q) as i32],
                self.xb_base(stage),
                TmaKind::LoadS,
            ),
        };
        (
            TmaCmd {
                op: TmaOp::Load,
                desc,
                coords: [coords[0], coords[1], 0, 0, 0],
                smem_addr,
                mbar: bar,
            },
            kind,
        )
    }

    /// C and D boxes along N (a tile row's tiles, grouped `tiles_per_box` at a time).
    fn boxes_n(&self) -> usize {
        self.tiles_n.div_ceil(self.tiles_per_box)
    }

    /// C (and D) boxes of the problem: one per tile for FP32, one per pair of tiles of a
    /// tile row for FP16.
    pub fn cd_boxes(&self) -> usize {
        self.m.div_ceil(self.rows) * self.boxes_n()
    }

    /// The C/D box holding tile `t` (tiles and boxes both row-major).
    pub fn box_of(&self, t: usize) -> usize {
        let (tm, tn) = (t / self.tiles_n, t % self.tiles_n);
        tm * self.boxes_n() + tn / self.tiles_per_box
    }

    /// The last tile of box `b` (a box at the end of a tile row may hold fewer tiles).
    pub(super) fn last_tile_of_box(&self, b: usize) -> usize {
        let (tm, bn) = (b / self.boxes_n(), b % self.boxes_n());
        tm * self.tiles_n + ((bn + 1) * self.tiles_per_box).min(self.tiles_n) - 1
    }

    /// The global (row, column) of box `b`'s first element.
    pub(super) fn box_origin(&self, b: usize) -> (usize, usize) {
        let (tm, bn) = (b / self.boxes_n(), b % self.boxes_n());
        (tm * self.rows, bn * self.tiles_per_box * self.cols)
    }

    /// Bytes of one C or D box (the transaction count of a C load).
    pub(super) fn cd_box_bytes(&self) -> u32 {
        self.rows as u32 * self.box_row_bytes
    }

    /// Shared-memory byte offset of tile `t`'s first word within a row of its box's slot.
    pub(super) fn tile_in_box(&self, t: usize) -> u32 {
        ((t % self.tiles_n) % self.tiles_per_box) as u32 * self.cols as u32 * self.esc
    }

    /// Shared-memory address of row `row` of tile `t` in its box's C slot.
    pub(super) fn c_row_addr(&self, t: usize, row: usize) -> u32 {
        self.c_base
            + (self.box_of(t) % self.tile_slots) as u32 * self.slot_bytes
            + row as u32 * self.box_row_bytes
            + self.tile_in_box(t)
    }

    /// Shared-memory address of row `row` of tile `t` in its box's D slot.
    pub(super) fn d_row_addr(&self, t: usize, row: usize) -> u32 {
        self.d_base
            + (self.box_of(t) % self.tile_slots) as u32 * self.slot_bytes
            + row as u32 * self.box_row_bytes
            + self.tile_in_box(t)
    }

    /// Shared-memory base of the A box of chunk `q` of tile row `tm` (panel) or stage `s`.
    fn a_base(&self, tm: usize, q: usize, stage: usize) -> u32 {
        let block = if self.panel {
            self.panel_base + ((tm & 1) * self.chunks + q) as u32 * self.panel_block_bytes
        } else {
            self.stage_base + stage as u32 * self.stage_bytes
        };
        block + self.a_off
    }

    /// Shared-memory base of B sub-box `j` of a sparse stage. Compact stage: swizzle atom
    /// `1 + j` of the stage, from row 2 (16-bit B) or row 1 (8-bit B) of the atom, the rows
    /// against which a step's B lanes and A lanes (row 2 of their atom) share the fewest
    /// banks. Tall stage: the `ceil(C / 8)` atoms of sub-box `j` after E's and A's.
    fn b_box_base(&self, stage: usize, j: usize) -> u32 {
        self.b_base(stage) + j as u32 * self.b_stride
    }

    /// Shared-memory base of the B box of a dense stage (the atom's rows after A's), or of
    /// a sparse stage's first B sub-box.
    fn b_base(&self, stage: usize) -> u32 {
        self.stage_base + stage as u32 * self.stage_bytes + self.b_off
    }

    /// Shared-memory base of the box of A's scales of chunk `q` of tile row `tm`: after A's
    /// atoms in its panel block (panel mode) or after the operand atoms of stage `stage`.
    fn xa_base(&self, tm: usize, q: usize, stage: usize) -> u32 {
        let block = self.a_base(tm, q, stage) - self.a_off;
        block
            + if self.panel {
                self.xa_panel_off
            } else {
                self.xa_stage_off
            }
    }

    /// Shared-memory base of the box of B's scales in stage `stage`.
    fn xb_base(&self, stage: usize) -> u32 {
        self.stage_base + stage as u32 * self.stage_bytes + self.xb_off
    }

    /// Shared-memory base of the metadata box of chunk `q` of tile row `tm` (sparse): the
    /// start of A's block (its panel block in panel mode, the stage otherwise).
    fn e_base(&self, tm: usize, q: usize, stage: usize) -> u32 {
        self.a_base(tm, q, stage) - self.a_off
    }

    /// The chunk step `step` of tile `tile` reads at width `w`.
    pub(super) fn chunk_of(&self, tile: usize, step: usize, w: usize) -> usize {
        tile * self.chunks + (step * w) / self.kc
    }

    /// B lanes a step reads per column at width `w` (`w`, or the `sparse_b_lanes(w)` dense
    /// positions a sparse step selects from).
    pub(super) fn b_step_lanes(&self, w: usize) -> usize {
        match self.operands {
            OperandLayout::Sparse => sparse_b_lanes(w),
            OperandLayout::Dense | OperandLayout::Mx { .. } => w,
        }
    }

    /// Bytes of metadata a step reads per A row: for a sparse A the whole 16-byte row of the
    /// chunk (its 64 kept values' selects) on the chunk's first step, nothing on the others
    /// (they take their selects from the `e_row_<i>` registers); nothing for a dense A.
    /// For a block-scaled problem, the chunk's `KC / bs` scales of each row of A (its XA
    /// slot) on the chunk's first step, kept in `xa_row_<i>` for its other steps.
    pub(super) fn e_step_bytes(&self, step: usize, w: usize) -> u32 {
        match self.operands {
            OperandLayout::Sparse if (step * w).is_multiple_of(self.kc) => E_ROW_BYTES,
            OperandLayout::Mx { .. } if (step * w).is_multiple_of(self.kc) => self.x_bytes,
            _ => 0,
        }
    }

    /// Bytes of B's scales a step reads per B column: the chunk's `KC / bs` scales (its XB
    /// slot) on a block-scaled chunk's first step, kept in `xb_row_<j>` for its other
    /// steps; nothing otherwise.
    pub(super) fn xb_step_bytes(&self, step: usize, w: usize) -> u32 {
        match self.operands {
            OperandLayout::Mx { .. } if (step * w).is_multiple_of(self.kc) => self.x_bytes,
            _ => 0,
        }
    }

    /// Side registers of a tile (metadata rows, or A's and B's scale rows): `R` for a
    /// sparse A, `R + C` for a block-scaled problem, none for a dense one.
    pub(super) fn side_slots(&self) -> (usize, usize) {
        match self.operands {
            OperandLayout::Dense => (0, 0),
            OperandLayout::Sparse => (self.rows, 0),
            OperandLayout::Mx { .. } => (self.rows, self.cols),
        }
    }

    /// Valid A lanes and B lanes of step `step` at width `w` (at most `max`).
    pub(super) fn step_valid_lanes(&self, step: usize, w: usize, max: usize) -> (usize, usize) {
        let k0 = step * w;
        match self.operands {
            OperandLayout::Sparse => (
                w.min(self.k_steps - k0).min(max),
                sparse_b_lanes(w).min(self.k - GROUP * (k0 / KEPT_PER_GROUP)),
            ),
            OperandLayout::Dense | OperandLayout::Mx { .. } => {
                let lanes = w.min(self.k - k0).min(max);
                (lanes, lanes)
            }
        }
    }

    /// Bytes of one lane group of step `step` at width `w`: an A row, a B column, a
    /// metadata row or row of A's scales, a column's B scales (0 on a step that reads none).
    pub(super) fn group_bytes(&self, step: usize, w: usize) -> (u32, u32, u32, u32) {
        (
            lane_bytes(self.esa, w),
            lane_bytes(self.esb, self.b_step_lanes(w)),
            self.e_step_bytes(step, w),
            self.xb_step_bytes(step, w),
        )
    }

    /// The lane groups of step `step` of a tile with `rows` rows and `cols` columns inside
    /// the problem, in request order (the A rows, the B columns, the metadata rows of a
    /// sparse chunk's first step), as their lane counts.
    fn groups(
        &self,
        (rows, cols): (usize, usize),
        step: usize,
        w: usize,
    ) -> impl Iterator<Item = usize> {
        let (a, b, e, x) = self.group_bytes(step, w);
        let lanes = |bytes: u32| bytes.div_ceil(16) as usize;
        let e_rows = if e > 0 { rows } else { 0 };
        let x_cols = if x > 0 { cols } else { 0 };
        std::iter::repeat_n(lanes(a), rows)
            .chain(std::iter::repeat_n(lanes(b), cols))
            .chain(std::iter::repeat_n(lanes(e), e_rows))
            .chain(std::iter::repeat_n(lanes(x), x_cols))
    }

    /// Shared-memory requests (beats) step `step` of a tile with `inside` = (rows, columns)
    /// in the problem takes: 1 when its lanes fit one request, else its lane groups packed
    /// greedily, in request order, into requests of at most [`MAX_REQUEST_LANES`] lanes.
    pub(super) fn beats(&self, inside: (usize, usize), step: usize, w: usize) -> usize {
        if self.max_beats == 1 {
            return 1;
        }
        pack_beats(self.groups(inside, step, w)).count()
    }

    /// The lane groups (`start..end` in request order) of beat `beat` of step `step`
    /// (everything for a one-beat step).
    pub(super) fn beat_groups(
        &self,
        inside: (usize, usize),
        step: usize,
        w: usize,
        beat: usize,
    ) -> (usize, usize) {
        if self.max_beats == 1 {
            let (_, _, e, x) = self.group_bytes(step, w);
            let e_rows = if e > 0 { inside.0 } else { 0 };
            let x_cols = if x > 0 { inside.1 } else { 0 };
            return (0, inside.0 + inside.1 + e_rows + x_cols);
        }
        pack_beats(self.groups(inside, step, w))
            .nth(beat)
            .unwrap_or((0, 0))
    }

    /// The lane reads of beat `beat` of step `step` of tile `tile` (origin `(r0, c0)`) at
    /// width `w`, in request order: the A rows, then the B columns, then (sparse) each row's
    /// metadata, those of the beat's groups ([`MemLayout::beat_groups`]; all of them for a
    /// one-beat step); rows and columns outside the problem are not read.
    pub(super) fn step_lanes(
        &self,
        tile: usize,
        (r0, c0): (usize, usize),
        step: usize,
        w: usize,
        beat: usize,
        out: &mut Vec<SmemLane>,
    ) {
        let g = self.chunk_of(tile, step, w);
        let (q, stage) = (g % self.chunks, g % self.stages);
        let tm = tile / self.tiles_n;
        let kk = step * w - q * self.kc;
        let rows_in = (self.m - r0).min(self.rows);
        let cols_in = (self.n - c0).min(self.cols);
        let (g0, g1) = self.beat_groups((rows_in, cols_in), step, w, beat);
        let in_beat = |x: usize| (g0..g1).contains(&x);
        let a_row = self.kc as u32 * self.esa;
        let a_base = self.a_base(tm, q, stage);
        for r in (0..rows_in).filter(|&r| in_beat(r)) {
            let logical = a_base + r as u32 * a_row + kk as u32 * self.esa;
            push_lanes(out, logical, lane_bytes(self.esa, w), self.swz_a);
        }
        let b_bytes = lane_bytes(self.esb, self.b_step_lanes(w));
        let b_cols = (0..cols_in).filter(|&c| in_beat(rows_in + c));
        match self.operands {
            OperandLayout::Dense | OperandLayout::Mx { .. } => {
                let b_row = self.kc as u32 * self.esb;
                let base = self.b_base(stage);
                for c in b_cols {
                    let logical = base + c as u32 * b_row + kk as u32 * self.esb;
                    push_lanes(out, logical, b_bytes, self.swz_b);
                }
                // A block-scaled chunk's first step: each row's scales of the chunk (its XA
                // slot), then each column's (its XB slot, from byte 8).
                let x_bytes = self.e_step_bytes(step, w);
                if x_bytes > 0 {
                    let xa = self.xa_base(tm, q, stage);
                    let side = rows_in + cols_in;
                    for r in (0..rows_in).filter(|&r| in_beat(side + r)) {
                        let logical = xa + r as u32 * X_SLOT_BYTES;
                        push_lanes(out, logical, x_bytes, Swizzle::None);
                    }
                    let xb = self.xb_base(stage) + XB_SLOT_OFF;
                    for c in (0..cols_in).filter(|&c| in_beat(side + rows_in + c)) {
                        let logical = xb + c as u32 * X_SLOT_BYTES;
                        push_lanes(out, logical, x_bytes, Swizzle::None);
                    }
                }
            }
            OperandLayout::Sparse => {
                let at = (GROUP * (kk / KEPT_PER_GROUP)) as u32 * self.esb;
                let b_box = self.b_box_base(stage, (at / ATOM_ROW_BYTES) as usize);
                for c in b_cols {
                    let logical = b_box + c as u32 * ATOM_ROW_BYTES + at % ATOM_ROW_BYTES;
                    push_lanes(out, logical, b_bytes, self.swz_b);
                }
                let e_base = self.e_base(tm, q, stage);
                let e_bytes = self.e_step_bytes(step, w);
                for r in (0..rows_in).filter(|&r| in_beat(rows_in + cols_in + r)) {
                    let logical = e_base + r as u32 * E_ROW_BYTES;
                    push_lanes(out, logical, e_bytes, Swizzle::None);
                }
            }
        }
    }

    /// Bytes of operand data beat `beat` of step `step` of a tile with `inside` = (rows,
    /// columns) in the problem returns (before any C words); for a one-beat step, the step's.
    pub(super) fn beat_bytes(
        &self,
        inside: (usize, usize),
        step: usize,
        w: usize,
        beat: usize,
    ) -> usize {
        let (a, b, e, xb) = self.group_bytes(step, w);
        let (g0, g1) = self.beat_groups(inside, step, w, beat);
        let (rows, cols) = inside;
        (g0..g1)
            .map(|x| {
                if x < rows {
                    a
                } else if x < rows + cols {
                    b
                } else if x < 2 * rows + cols {
                    e
                } else {
                    xb
                }
            })
            .sum::<u32>() as usize
    }

    /// The kept offset of step `step`'s first A lane within its chunk (width `w`).
    pub(super) fn kept_offset(&self, step: usize, w: usize) -> usize {
        step * w - ((step * w) / self.kc) * self.kc
    }
}
