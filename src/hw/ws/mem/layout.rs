//! Where the weight-stationary memory path keeps everything (pure address arithmetic, no
//! registers): the global-memory regions, the TMA descriptors, the shared-memory map of the
//! weight stages, A stages and C and D slots, and the numbering of the boxes each stream
//! moves (`docs/memory.md`, "The weight-stationary memory path").
//!
//! - **Global memory.** A is `M x K` row-major (K-major, as in `os`); B is `K x N` row-major
//!   as the problem gives it (N-major: one row of it is one K position for every column, so
//!   the weight row a cycle loads into the array is `w` contiguous spans); C and D are kept
//!   as column-tile panels, `ceil(N / C)` of them, each `M` rows of the tile's `C` words
//!   padded to a 16-byte pitch (a TMA box's inner extent is a multiple of 16 bytes, so a box
//!   as wide as an arbitrary `C` columns exists only in such a layout: in a row-major D, the
//!   store of one column tile's box would overwrite its neighbour's columns). The host
//!   writes C into the panels and reads D back from them. Every row starts at a
//!   16-byte-aligned pitch.
//! - **Weight stages** (`S_w`, 2 to 8, enough to cover the latency over a pass's rows):
//!   stage `p mod S_w` holds pass `p`'s weight tile, one TMA box of the
//!   `R * w` K positions of its fold by the `C` columns of its column tile (the inner extent
//!   rounded up to 16 bytes: positions past N load as zeros).
//! - **A stages** (`S`): the rows a pass streams arrive in boxes of `A_BOX_ROWS` rows. A
//!   box is as wide as `F` folds (`F * R * w` K positions, up to 128 bytes, its inner extent
//!   rounded up to 16 bytes: positions past K load as zeros): the `F` consecutive passes of
//!   those folds stream the same rows, so the box is loaded once and read `F` times (a row
//!   chunk's *band*), and released after the last. That needs the whole band in the ring
//!   (`S` at least its boxes); where it does not fit, `F = 1`. Wide boxes also make wide
//!   global-memory requests: a fold of one row is only `R * w` elements, and requests of a
//!   few bytes would leave the latency uncovered (Little's law). Box `g` of the run lives in
//!   stage `g mod S`.
//! - **C and D slots** (2 each): boxes of `CD_BOX_ROWS` rows by the `C` columns of a column
//!   tile; C box `g` in slot `g mod 2`, D likewise. C and D boxes share one numbering: by
//!   output block (row chunk, column tile, in the order of the passes), then down the rows.
//!
//! - **Side regions** (a 2:4 sparse or block-scaled problem, [`WsOperands`]): after D, E
//!   (2 bits a kept value, the output-stationary port's packing) or A's scales, and B's
//!   scales, each with a descriptor (`DESC_XA`, `DESC_XB`), kept in blocks ([`SideRegion`]):
//!   one a box of A's rows and band (each row's E bytes from the byte holding the band's
//!   first kept value, or its `F R` scales), one a pass (its `R` K-blocks' rows of `C` scales
//!   of B), so that a side box is one block of a few long TMA rows. An A stage holds, after
//!   its A rows (128-aligned), the block beside them; a weight stage, after its tile, the
//!   block of B's scales. A sparse A's weight tile is the `2 R w` dense rows of B its kept values select
//!   from (`2R + 2` at `w = 1` with `R` odd: a fold may start mid-group, [`WsMemLayout::w_k0`]).
//!
//! Shared-memory reads are whole spans (a row of A, `w` rows of a weight tile's `C`
//! columns, a row of C), so no swizzle is used: a span of up to 128 bytes never meets itself
//! in a bank.

use super::super::schedule::WsSchedule;
use crate::hw::config::CoreConfig;
use crate::hw::memory::{ElemType, SmemLane, TensorMap, MAX_MBARS};
use crate::hw::pe::sparse_b_lanes;
use crate::hw::HwError;
use crate::hw::MemPortConfig;

/// Rows of an A box (one A stage).
pub const A_BOX_ROWS: usize = 32;
/// Rows of a C or D box (one slot).
pub const CD_BOX_ROWS: usize = 32;
/// Most weight stages.
const MAX_W_STAGES: usize = 8;
/// C slots and D slots.
pub const CD_SLOTS: usize = 2;
/// Lanes of one shared-memory read request.
pub const REQUEST_LANES: usize = 32;
/// Most A stages.
const MAX_A_STAGES: usize = 48;

/// Descriptor slots of the weight-stationary path.
pub(super) const DESC_A: usize = 0;
pub(super) const DESC_B: usize = 1;
pub(super) const DESC_C: usize = 2;
pub(super) const DESC_D: usize = 3;
/// Descriptor slots of the side regions: beside A (E, or A's scales), beside B (B's scales).
pub(super) const DESC_XA: usize = 4;
pub(super) const DESC_XB: usize = 5;

/// The layout of one weight-stationary problem (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WsMemLayout {
    /// The problem's schedule (passes, folds, chunks).
    pub sched: WsSchedule,
    /// Bytes of an element of A, B and the accumulator format in memory.
    pub esa: u32,
    /// See `esa`.
    pub esb: u32,
    /// See `esa`.
    pub esc: u32,
    /// Global regions `(address, row pitch)`: A, B, C, D (C and D: column-tile panels of `M`
    /// rows each, one after the other).
    pub a: (u64, u64),
    /// See `a`.
    pub b: (u64, u64),
    /// See `a`.
    pub c: (u64, u64),
    /// See `a`.
    pub d: (u64, u64),
    /// Bytes of global memory in use.
    pub gmem_bytes: u64,
    /// Bytes of a weight-stage row (the B box's inner extent) and of a weight stage.
    pub w_pitch: u32,
    /// See `w_pitch`.
    pub w_stage_bytes: u32,
    /// Bytes of an A-stage row (the A box's inner extent) and of an A stage.
    pub a_pitch: u32,
    /// See `a_pitch`.
    pub a_stage_bytes: u32,
    /// A stages.
    pub a_stages: usize,
    /// Weight stages.
    pub w_stages: usize,
    /// Rows of an A box.
    pub a_box_rows: usize,
    /// Folds an A box spans (`F`): its band is read by that many consecutive passes.
    pub a_folds: usize,
    /// Bytes of a C or D slot row (the box's inner extent) and of a slot.
    pub cd_pitch: u32,
    /// See `cd_pitch`.
    pub cd_slot_bytes: u32,
    /// Rows of a C or D box.
    pub cd_box_rows: usize,
    /// Shared-memory bases of the weight stages, the A stages, the C slots and the D slots.
    pub w_base: u32,
    /// See `w_base`.
    pub a_base: u32,
    /// See `w_base`.
    pub c_base: u32,
    /// See `w_base`.
    pub d_base: u32,
    /// What travels beside the operands (dense: nothing).
    pub operands: WsOperands,
    /// Rows of B (dense K positions) a weight box holds: `R * w`, or for a 2:4 sparse A the
    /// dense positions its `R * w` kept values select from.
    pub w_rows: usize,
    /// Spans of `C` columns one weight row reads (the datapath's B lanes: `w`, or for a 2:4
    /// sparse A [`sparse_b_lanes`]`(w)`).
    pub w_spans: usize,
    /// Beside A, in each A stage: a 2:4 sparse A's metadata E, or A's block scales.
    pub xa: Option<SideRegion>,
    /// Beside the weights, in each weight stage: B's block scales (MX only).
    pub xb: Option<SideRegion>,
}

/// What a weight-stationary problem carries beside its operands, and so what its layout adds
/// (`docs/memory.md`, "Sparse and block-scaled problems").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WsOperands {
    /// Dense A and B.
    Dense,
    /// A 2:4 sparse A: its kept values (`M x K/2`) and, beside them, its metadata E
    /// (`M x ceil(K/8)` bytes, 2 bits a kept value); B is dense (`K` rows).
    Sparse {
        /// The dense inner dimension `K` (B's rows).
        k_dense: usize,
    },
    /// Block-scaled A and B with a scale byte every `block` elements of K: A's (`M x K/bs`)
    /// beside A, B's (`K/bs x N`) beside the weights.
    Mx {
        /// The block size `bs` (the width: each PE holds one K-block).
        block: usize,
    },
}

/// A region of side bytes (metadata or scales), kept in global memory as *blocks*, as a
/// sparse kernel keeps its metadata reordered for the loads that fetch it: a block holds the
/// side bytes of one box of the operand's rows (A's side: a box of A's rows in one band; B's
/// scales: one pass's `R` K-blocks by `C` columns), row after row, `row_bytes` a row, so that
/// its TMA box is a few rows of up to 256 bytes rather than one 16-byte row (and global
/// request) for every row of the operand. In a stage the block lands as it is, after the
/// operand's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SideRegion {
    /// Global memory: the address, and the pitch of the region's rows (`q`).
    pub gmem: (u64, u64),
    /// Blocks of the region.
    pub blocks: usize,
    /// Rows of the operand (or K-blocks of B's scales) a block holds.
    pub rows: usize,
    /// Bytes one of them takes in a block.
    pub row_bytes: u32,
    /// Bytes of a box row (its inner extent: a multiple of 16, at most 256).
    pub q: u32,
    /// Bytes of a block (a whole number of box rows).
    pub block_bytes: u32,
    /// Offset of the block in its stage (after the operand's rows, 128-aligned).
    pub offset: u32,
    /// Bytes one read takes (with the row of A, or beside the weight row).
    pub read: u32,
}

impl SideRegion {
    /// `blocks` blocks of `rows` rows of `row_bytes` each, at `offset` in their stage.
    fn new(blocks: usize, rows: usize, row_bytes: u32, offset: u32, read: u32) -> Self {
        let raw = rows as u32 * row_bytes;
        let q = (up16(u64::from(raw)) as u32).min(256);
        SideRegion {
            gmem: (0, u64::from(q)),
            blocks,
            rows,
            row_bytes,
            q,
            block_bytes: raw.div_ceil(q) * q,
            offset,
            read,
        }
    }

    /// Box rows of a block.
    fn q_rows(&self) -> u32 {
        self.block_bytes / self.q
    }

    /// Bytes the block takes in a stage.
    fn stage_bytes(&self) -> u32 {
        up128(self.block_bytes)
    }

    /// Bytes of the region in global memory.
    fn gmem_bytes(&self) -> u64 {
        self.blocks as u64 * u64::from(self.block_bytes)
    }

    /// The descriptor of the region: bytes, `[q, blocks * q_rows]`, a box one block.
    fn descriptor(&self) -> TensorMap {
        let mut t = TensorMap::dense(
            ElemType::U8,
            self.gmem.0,
            &[
                u64::from(self.q),
                self.blocks as u64 * u64::from(self.q_rows()),
            ],
            &[self.q, self.q_rows()],
        );
        t.global_strides[0] = self.gmem.1;
        t
    }

    /// The TMA coordinates of block `b`.
    pub fn coords(&self, b: usize) -> [i32; 5] {
        [0, (b as u32 * self.q_rows()) as i32, 0, 0, 0]
    }

    /// The global address of row `r` of block `b` (where the host writes it).
    pub fn row_gmem(&self, b: usize, r: usize) -> u64 {
        self.gmem.0
            + b as u64 * u64::from(self.block_bytes)
            + (r as u64) * u64::from(self.row_bytes)
    }
}

/// The most bytes a band of `band_bytes` can start past a 16-byte boundary: band `i` starts
/// at `i * band_bytes`, whose remainder mod 16 is a multiple of `gcd(band_bytes, 16)`.
fn band_skew_max(band_bytes: u32) -> u32 {
    16 - (1u32 << band_bytes.trailing_zeros().min(4))
}

/// Bytes rounded up to a multiple of 16 (a TMA inner extent, a global row pitch).
fn up16(bytes: u64) -> u64 {
    bytes.div_ceil(16) * 16
}

/// Bytes rounded up to a multiple of 128 (a TMA destination's alignment).
fn up128(bytes: u32) -> u32 {
    bytes.div_ceil(128) * 128
}

/// Bytes an element of a format of `bits` bits takes in memory (TF32 in a 4-byte word).
fn container(bits: u32) -> u32 {
    bits.div_ceil(8).next_power_of_two()
}

/// The 16-byte lanes a span of `bytes` at `addr` takes (the 16-byte chunks it touches).
pub(super) fn span_lanes(addr: u32, bytes: u32) -> usize {
    if bytes == 0 {
        return 0;
    }
    ((addr + bytes - 1) / 16 - addr / 16 + 1) as usize
}

/// Pushes the lanes reading `bytes` bytes at `addr`, split at 16-byte chunks.
pub(super) fn push_span(out: &mut Vec<SmemLane>, addr: u32, bytes: u32) {
    let mut at = addr;
    let end = addr + bytes;
    while at < end {
        let len = (end - at).min(16 - at % 16);
        out.push(SmemLane {
            addr: at,
            len: len as u8,
        });
        at += len;
    }
}

/// Where a stream stands after reading row `next - 1` of a unit (a pass's rows, an output
/// block's rows) of `rows` rows in boxes of `box_rows`: whether that row ended its box, and
/// whether it ended the unit.
pub(super) fn row_done(next: usize, rows: usize, box_rows: usize) -> (bool, bool) {
    (next == rows || next.is_multiple_of(box_rows), next == rows)
}

impl WsOperands {
    /// What travels beside A, in words.
    fn xa_name(&self) -> &'static str {
        match self {
            WsOperands::Dense => "nothing",
            WsOperands::Sparse { .. } => "2:4 metadata",
            WsOperands::Mx { .. } => "block scales",
        }
    }
}

impl WsMemLayout {
    /// The layout of an `m x n x k` dense problem for `cfg` (dataflow `ws`) under `pc`, or
    /// the reason it cannot be laid out.
    pub fn new(
        cfg: &CoreConfig,
        m: usize,
        n: usize,
        k: usize,
        pc: &MemPortConfig,
    ) -> Result<Self, HwError> {
        Self::build(cfg, (m, n, k), WsOperands::Dense, pc)
    }

    /// The layout of an `m x n x k` 2:4 sparse problem (`k` dense, a multiple of 4: A holds
    /// `m x k/2` kept values, E their metadata), or the reason it cannot be laid out.
    pub fn new_sparse(
        cfg: &CoreConfig,
        m: usize,
        n: usize,
        k: usize,
        pc: &MemPortConfig,
    ) -> Result<Self, HwError> {
        Self::build(cfg, (m, n, k / 2), WsOperands::Sparse { k_dense: k }, pc)
    }

    /// The layout of an `m x n x k` block-scaled problem with blocks of `block` elements of
    /// K (`k` a multiple of it), or the reason it cannot be laid out.
    pub fn new_mx(
        cfg: &CoreConfig,
        m: usize,
        n: usize,
        k: usize,
        block: usize,
        pc: &MemPortConfig,
    ) -> Result<Self, HwError> {
        Self::build(cfg, (m, n, k), WsOperands::Mx { block }, pc)
    }

    /// The first dense K position (B's row) the weight row of schedule step `step` reads:
    /// `step * w`, or for a 2:4 sparse A the first position of its kept values' groups,
    /// `4 * floor(step * w / 2)`.
    pub fn w_k0(&self, step: usize) -> usize {
        let w = self.sched.width;
        match self.operands {
            WsOperands::Sparse { .. } => 4 * (step * w / 2),
            _ => step * w,
        }
    }

    /// Rows of B (dense K positions): `K`.
    pub fn b_rows(&self) -> usize {
        match self.operands {
            WsOperands::Sparse { k_dense } => k_dense,
            _ => self.sched.k,
        }
    }

    /// `m x n x k` in the schedule's positions (`k`: kept values for a sparse A).
    fn build(
        cfg: &CoreConfig,
        (m, n, k): (usize, usize, usize),
        operands: WsOperands,
        pc: &MemPortConfig,
    ) -> Result<Self, HwError> {
        let sched = WsSchedule::for_core(cfg, m, n, k);
        let (rows, cols, w) = (sched.rows, sched.cols, sched.width);
        let esa = container(cfg.fmt_a.width());
        let esb = container(cfg.fmt_b.width());
        let esc = container(cfg.acc.width());
        let refuse = |why: String| Err(HwError::Unsupported(format!("{why} (ws, --memory tma)")));
        let fold_k = rows * w;
        // The dense K positions a weight tile spans (a sparse fold's kept values select from
        // twice as many; at w = 1 with R odd a fold may begin mid-group: two more).
        let (w_rows, w_spans) = match operands {
            WsOperands::Sparse { .. } => {
                let bl = sparse_b_lanes(w);
                let k0 = |step: usize| 4 * (step * w / 2);
                let span = |f: usize| k0(f * rows + rows - 1) + bl - k0(f * rows);
                (span(0).max(span(1)), bl)
            }
            _ => (fold_k, w),
        };
        if w_rows > 256 {
            return refuse(match operands {
                WsOperands::Sparse { .. } => format!(
                    "a 2:4 sparse weight tile of {w_rows} dense K positions (the groups of \
                     R x w = {fold_k} kept values) exceeds a TMA box's 256 rows"
                ),
                _ => format!(
                    "a weight tile of R x w = {fold_k} K positions exceeds a TMA box's 256 rows"
                ),
            });
        }
        let a_row = fold_k as u32 * esa;
        // Beside a row of A, the bytes its fold's side values take: E's 2 bits a kept value
        // (a fold starting mid-byte reads one more), or one scale a K-block.
        let xa_read = match operands {
            WsOperands::Dense => 0,
            WsOperands::Sparse { .. } if fold_k.is_multiple_of(4) => (fold_k / 4) as u32,
            WsOperands::Sparse { .. } => (2 * fold_k + 6).div_ceil(8) as u32,
            WsOperands::Mx { block } => (fold_k / block) as u32,
        };
        // A fold's span in a wide box may start anywhere in a 16-byte chunk.
        let a_lanes = span_lanes(15, a_row) + span_lanes(15, xa_read);
        if a_lanes > REQUEST_LANES {
            return refuse(match operands {
                WsOperands::Dense => format!(
                    "one row of A ({a_row} bytes: R x w elements) exceeds a shared-memory \
                     request's {REQUEST_LANES} lanes of 16 bytes"
                ),
                _ => format!(
                    "one row of A ({a_row} bytes: R x w elements) and its {xa_read} bytes of \
                     {} ({a_lanes} lanes) exceed a shared-memory request's {REQUEST_LANES} \
                     lanes of 16 bytes",
                    operands.xa_name()
                ),
            });
        }
        let w_span = cols as u32 * esb;
        let xb_read = match operands {
            WsOperands::Mx { .. } => cols as u32,
            _ => 0,
        };
        // (B's scales are a stream of their own: a row of `C` bytes is one or two lanes.)
        let w_lanes = w_spans * span_lanes(0, w_span);
        if w_lanes > REQUEST_LANES {
            return refuse(format!(
                "one weight row ({w_spans} spans of {cols} columns of B: {w_lanes} lanes) \
                 exceeds a shared-memory request's {REQUEST_LANES} lanes"
            ));
        }
        let w_pitch = up16(u64::from(w_span)) as u32;
        let a_box_rows = sched.chunk_rows.min(A_BOX_ROWS);
        // The boxes of the largest band, which must fit the ring together if `F > 1`.
        let band_boxes = sched.chunk_rows.div_ceil(a_box_rows);
        let ring_max = MAX_A_STAGES.min(MAX_MBARS - MAX_W_STAGES - CD_SLOTS);
        let wide = ((128 / a_row.max(1)) as usize).clamp(1, sched.folds);
        let a_folds = match pc.stages {
            _ if wide == 1 => 1,
            0 if band_boxes <= ring_max => wide,
            s if s > 0 && band_boxes <= s.min(ring_max) => wide,
            _ => 1,
        };
        // A band's start is aligned down to 16 bytes (a TMA box's inner start must be; a GPU
        // traps otherwise), so the box also holds the bytes between that boundary and the band.
        let band_bytes = a_row * a_folds as u32;
        let a_pitch = up16(u64::from(band_bytes + band_skew_max(band_bytes))) as u32;
        let cd_pitch = up16(u64::from(cols as u32 * esc)) as u32;
        let (mu, ku) = (m as u64, k as u64);
        // The side regions' rows and widths (their global places are set below).
        let w_part = up128(w_pitch * w_rows as u32);
        let a_part = up128(a_pitch * a_box_rows as u32);
        // A's side: a block a box of rows and band; B's scales: a block a pass's fold and
        // column tile.
        let bands = sched.folds.div_ceil(a_folds);
        let row_boxes = m.div_ceil(a_box_rows);
        let (xa, xb) = match operands {
            WsOperands::Dense => (None, None),
            // E: a band's bytes start at the byte holding its first kept value; a fold of it
            // starts at most 6 bits into its first byte.
            WsOperands::Sparse { .. } => {
                let last = (6 + 2 * (a_folds - 1) * fold_k) / 8;
                let e = SideRegion::new(
                    row_boxes * bands,
                    a_box_rows,
                    last as u32 + xa_read,
                    a_part,
                    xa_read,
                );
                (Some(e), None)
            }
            WsOperands::Mx { .. } => {
                let sa = SideRegion::new(
                    row_boxes * bands,
                    a_box_rows,
                    (a_folds * rows) as u32,
                    a_part,
                    xa_read,
                );
                let sb = SideRegion::new(
                    sched.col_tiles * sched.folds,
                    rows,
                    cols as u32,
                    w_part,
                    xb_read,
                );
                (Some(sa), Some(sb))
            }
        };
        if w_pitch / esb > 256 || a_pitch / esa > 256 || xa.or(xb).is_some_and(|x| x.q_rows() > 256)
        {
            return refuse("a box's inner extent exceeds 256 elements".into());
        }
        let cd_box_rows = sched.chunk_rows.min(CD_BOX_ROWS);
        let w_stage_bytes = w_part + xb.map_or(0, |x| x.stage_bytes());
        let a_stage_bytes = a_part + xa.map_or(0, |x| x.stage_bytes());
        let cd_slot_bytes = up128(cd_pitch * cd_box_rows as u32);
        let a_stages = match pc.stages {
            // Cover the latency; with bands, two of them (one read, the next loading).
            0 if a_folds > 1 => pc
                .auto_stages(a_stage_bytes, a_box_rows as u32)
                .max(2 * band_boxes),
            0 => pc.auto_stages(a_stage_bytes, a_box_rows as u32),
            s => s,
        }
        .min(ring_max);
        // A pass's weights are read in `R` cycles but the stage is needed again only a pass
        // later: enough stages that the loads in flight cover the latency over the passes'
        // rows (at least the two the array's weight sets double-buffer).
        let w_stages = pc
            .auto_stages(w_stage_bytes, sched.chunk_rows.max(rows) as u32)
            .clamp(2, MAX_W_STAGES);
        if w_stages + a_stages + CD_SLOTS > MAX_MBARS {
            return refuse(format!(
                "{a_stages} A stages need more mbarriers than there are"
            ));
        }
        let w_base = 0;
        let a_base = w_base + w_stages as u32 * w_stage_bytes;
        let c_base = a_base + a_stages as u32 * a_stage_bytes;
        let d_base = c_base + CD_SLOTS as u32 * cd_slot_bytes;
        let smem = d_base + CD_SLOTS as u32 * cd_slot_bytes;
        if smem > pc.params.smem_bytes {
            return refuse(format!(
                "the stages and slots need {smem} bytes of shared memory, more than its {}",
                pc.params.smem_bytes
            ));
        }
        let a = (0u64, up16(ku * u64::from(esa)));
        let b_rows = match operands {
            WsOperands::Sparse { k_dense } => k_dense as u64,
            _ => ku,
        };
        let panels = sched.col_tiles as u64;
        // B in column-tile panels of `C` columns, each row padded to 16 bytes (so a weight
        // box starts at a 16-byte boundary): panel `t`'s K row `k` at `b + (t * K + k) * pitch`.
        let b = (a.0 + mu * a.1, u64::from(w_pitch));
        let c = (b.0 + panels * b_rows * b.1, u64::from(cd_pitch));
        let d = (c.0 + panels * mu * c.1, c.1);
        // The side regions after D: E or A's scales, then B's scales.
        let mut end = d.0 + panels * mu * d.1;
        let mut place = |x: Option<SideRegion>| {
            x.map(|mut x| {
                x.gmem.0 = end;
                end += x.gmem_bytes();
                x
            })
        };
        let (xa, xb) = (place(xa), place(xb));
        Ok(Self {
            sched,
            esa,
            esb,
            esc,
            a,
            b,
            c,
            d,
            gmem_bytes: end,
            w_pitch,
            w_stage_bytes,
            a_pitch,
            a_stage_bytes,
            a_stages,
            w_stages,
            a_box_rows,
            a_folds,
            cd_pitch,
            cd_slot_bytes,
            cd_box_rows,
            w_base,
            a_base,
            c_base,
            d_base,
            operands,
            w_rows,
            w_spans,
            xa,
            xb,
        })
    }

    fn elem(es: u32) -> ElemType {
        match es {
            1 => ElemType::U8,
            2 => ElemType::U16,
            _ => ElemType::U32,
        }
    }

    /// The descriptors (inner dimension first): A `[K, M]`; B, C and D in column-tile panels,
    /// `[padded C, K, panel]` and `[padded C, M, panel]`; then the side regions'.
    pub fn descriptors(&self) -> Vec<TensorMap> {
        let s = &self.sched;
        let mut a = TensorMap::dense(
            Self::elem(self.esa),
            self.a.0,
            &[s.k as u64, s.m as u64],
            &[self.a_pitch / self.esa, self.a_box_rows as u32],
        );
        a.global_strides[0] = self.a.1;
        let mut b = TensorMap::dense(
            Self::elem(self.esb),
            self.b.0,
            &[
                u64::from(self.w_pitch / self.esb),
                self.b_rows() as u64,
                s.col_tiles as u64,
            ],
            &[self.w_pitch / self.esb, self.w_rows as u32, 1],
        );
        b.global_strides[0] = self.b.1;
        b.global_strides[1] = self.b.1 * self.b_rows() as u64;
        let mut c = TensorMap::dense(
            Self::elem(self.esc),
            self.c.0,
            &[
                u64::from(self.cd_pitch / self.esc),
                s.m as u64,
                s.col_tiles as u64,
            ],
            &[self.cd_pitch / self.esc, self.cd_box_rows as u32, 1],
        );
        c.global_strides[0] = self.c.1;
        c.global_strides[1] = self.c.1 * s.m as u64;
        let mut d = c;
        d.global_address = self.d.0;
        let mut maps = vec![a, b, c, d];
        maps.extend(self.xa.iter().chain(&self.xb).map(SideRegion::descriptor));
        maps
    }

    /// Passes of the run (one weight box each).
    pub fn passes(&self) -> usize {
        self.sched.passes()
    }

    /// Rows a pass of row chunk `chunk` streams.
    fn chunk_rows(&self, chunk: usize) -> usize {
        let s = &self.sched;
        s.chunk_rows.min(s.m - chunk * s.chunk_rows)
    }

    /// Boxes of `rows_per_box` rows a block of row chunk `chunk` takes.
    fn boxes_of(&self, chunk: usize, rows_per_box: usize) -> usize {
        self.chunk_rows(chunk).div_ceil(rows_per_box)
    }

    /// `(unit, box in unit)` of box `g` when every unit of row chunk `c` takes
    /// `boxes_of(c)` boxes and a chunk holds `units` units.
    fn locate(&self, g: usize, units: usize, rows_per_box: usize) -> (usize, usize) {
        let s = &self.sched;
        let full = self.boxes_of(0, rows_per_box);
        let before_last = (s.chunks - 1) * units * full;
        if g < before_last {
            (g / full, g % full)
        } else {
            let last = self.boxes_of(s.chunks - 1, rows_per_box);
            let r = g - before_last;
            ((s.chunks - 1) * units + r / last, r % last)
        }
    }

    /// Bands of a column tile: `ceil(folds / F)`.
    fn bands_per_tile(&self) -> usize {
        self.sched.folds.div_ceil(self.a_folds)
    }

    /// A boxes of the run.
    pub fn a_boxes(&self) -> usize {
        let s = &self.sched;
        let per_chunk = s.col_tiles * self.bands_per_tile();
        (0..s.chunks)
            .map(|c| per_chunk * self.boxes_of(c, self.a_box_rows))
            .sum()
    }

    /// The A box holding row `row` of pass `p`'s stream, and the byte offset of its fold in
    /// the box's rows.
    pub fn a_box(&self, p: usize, row: usize) -> (usize, u32) {
        let s = &self.sched;
        let pass = s.pass(p);
        let units = s.col_tiles * self.bands_per_tile();
        let band = (pass.chunk * s.col_tiles + pass.col_tile) * self.bands_per_tile()
            + pass.fold / self.a_folds;
        let full = self.boxes_of(0, self.a_box_rows);
        let first = if pass.chunk + 1 < s.chunks {
            band * full
        } else {
            let before = (s.chunks - 1) * units;
            before * full + (band - before) * self.boxes_of(s.chunks - 1, self.a_box_rows)
        };
        let skew = self.band_k0(pass.fold / self.a_folds) as u32 * self.esa % 16;
        let offset = skew + (pass.fold % self.a_folds * s.rows * s.width) as u32 * self.esa;
        (first + row / self.a_box_rows, offset)
    }

    /// Pass `p` is the last to read its band (its boxes are released as it reads them).
    pub fn releases_band(&self, p: usize) -> bool {
        let fold = self.sched.pass(p).fold;
        fold % self.a_folds == self.a_folds - 1 || fold + 1 == self.sched.folds
    }

    /// C (and D) boxes of the run.
    pub fn cd_boxes(&self) -> usize {
        let s = &self.sched;
        (0..s.chunks)
            .map(|c| s.col_tiles * self.boxes_of(c, self.cd_box_rows))
            .sum()
    }

    /// Rows of D the run stores (every output block's rows).
    pub fn d_rows(&self) -> usize {
        self.sched.m * self.sched.col_tiles
    }

    /// Output blocks (row chunk, column tile) of the run.
    pub fn blocks(&self) -> usize {
        self.sched.chunks * self.sched.col_tiles
    }

    /// Rows of output block `b`.
    pub fn block_rows(&self, b: usize) -> usize {
        self.chunk_rows(b / self.sched.col_tiles)
    }

    /// C or D boxes of output block `b`.
    pub fn cd_boxes_of_block(&self, b: usize) -> usize {
        self.block_rows(b).div_ceil(self.cd_box_rows)
    }

    /// The TMA coordinates of weight box `p` (pass `p`'s tile): `[0, K, panel]`.
    pub fn w_coords(&self, p: usize) -> [i32; 5] {
        let s = &self.sched;
        let pass = s.pass(p);
        let k0 = self.w_k0(pass.fold * s.rows);
        [0, k0 as i32, pass.col_tile as i32, 0, 0]
    }

    /// The global address of element `(p, j)` of B (K row `p`, column `j`) in its panel.
    pub fn b_addr(&self, p: usize, j: usize) -> u64 {
        let s = &self.sched;
        let (panel, col) = (j / s.cols, j % s.cols);
        self.b.0
            + (panel * self.b_rows() + p) as u64 * self.b.1
            + (col as u64) * u64::from(self.esb)
    }

    /// The block of B's scales beside weight box `p` (its column tile and fold; MX only).
    pub fn xb_block(&self, p: usize) -> usize {
        let pass = self.sched.pass(p);
        pass.col_tile * self.sched.folds + pass.fold
    }

    /// The TMA coordinates of the box of B's scales beside weight box `p` (MX only).
    pub fn xb_coords(&self, p: usize) -> [i32; 5] {
        self.xb.map_or([0; 5], |x| x.coords(self.xb_block(p)))
    }

    /// The first K position (kept value for a sparse A) of band `band` of a column tile.
    pub fn band_k0(&self, band: usize) -> usize {
        band * self.a_folds * self.sched.rows * self.sched.width
    }

    /// The block of side bytes beside A box `g`: its box of rows, its band.
    pub fn xa_block(&self, g: usize) -> usize {
        let (band, r0) = self.a_band_rows(g);
        r0 / self.a_box_rows * self.bands_per_tile() + band
    }

    /// The first K position (kept value for a sparse A) of A box `g`'s band.
    fn a_k0(&self, g: usize) -> usize {
        self.band_k0(self.a_band_rows(g).0)
    }

    /// A box `g`'s band (of its column tile) and first row.
    fn a_band_rows(&self, g: usize) -> (usize, usize) {
        let s = &self.sched;
        let bands = self.bands_per_tile();
        let (band, x) = self.locate(g, s.col_tiles * bands, self.a_box_rows);
        let chunk = band / (s.col_tiles * bands);
        (band % bands, chunk * s.chunk_rows + x * self.a_box_rows)
    }

    /// The TMA coordinates of the side box beside A box `g` (its block).
    pub fn xa_coords(&self, g: usize) -> [i32; 5] {
        self.xa.map_or([0; 5], |x| x.coords(self.xa_block(g)))
    }

    /// The TMA coordinates of A box `g`: `[K, row]`.
    pub fn a_coords(&self, g: usize) -> [i32; 5] {
        let (band, r0) = self.a_band_rows(g);
        let k0 = self.band_k0(band);
        // Aligned down to a 16-byte boundary; `a_box`'s offsets add the difference.
        let k0 = k0 - (k0 * self.esa as usize % 16) / self.esa as usize;
        [k0 as i32, r0 as i32, 0, 0, 0]
    }

    /// The TMA coordinates of C or D box `g`: `[word, row, panel]`.
    pub fn cd_coords(&self, g: usize) -> [i32; 5] {
        let s = &self.sched;
        let (b, x) = self.locate(g, s.col_tiles, self.cd_box_rows);
        let (chunk, col_tile) = (b / s.col_tiles, b % s.col_tiles);
        let r0 = chunk * s.chunk_rows + x * self.cd_box_rows;
        [0, r0 as i32, col_tile as i32, 0, 0]
    }

    /// The global address of element `(i, j)` of C (`c = true`) or D in its panel.
    pub fn cd_addr(&self, c: bool, i: usize, j: usize) -> u64 {
        let s = &self.sched;
        let (base, pitch) = if c { self.c } else { self.d };
        let (panel, col) = (j / s.cols, j % s.cols);
        base + (panel * s.m + i) as u64 * pitch + (col as u64) * u64::from(self.esc)
    }

    /// The shared-memory address of weight stage `p mod S_w`'s K row `r` (of `R * w`).
    pub fn w_row_addr(&self, p: usize, r: usize) -> u32 {
        self.w_base + (p % self.w_stages) as u32 * self.w_stage_bytes + r as u32 * self.w_pitch
    }

    /// The shared-memory address of A box `g`'s row `r`.
    pub fn a_row_addr(&self, g: usize, r: usize) -> u32 {
        self.a_base + (g % self.a_stages) as u32 * self.a_stage_bytes + r as u32 * self.a_pitch
    }

    /// The K row of pass `fold`'s weight tile where array row `i`'s weight row starts (`i *
    /// w`; for a sparse A the row of its kept values' first group).
    pub fn w_tile_row(&self, fold: usize, i: usize) -> usize {
        let first = fold * self.sched.rows;
        self.w_k0(first + i) - self.w_k0(first)
    }

    /// The shared-memory address of the side row beside row `r` of weight stage `p mod S_w`
    /// (B's scales of K-block `r` of the fold), if any.
    pub fn xb_row_addr(&self, p: usize, r: usize) -> Option<u32> {
        self.xb.map(|x| {
            self.w_base
                + (p % self.w_stages) as u32 * self.w_stage_bytes
                + x.offset
                + r as u32 * x.row_bytes
        })
    }

    /// The shared-memory address of the side box beside A box `g` (its stage's side rows).
    pub fn xa_box_addr(&self, g: usize) -> u32 {
        self.a_row_addr(g, 0) + self.xa.map_or(0, |x| x.offset)
    }

    /// The shared-memory address and first bit of the side values beside the row of A that
    /// pass `p` reads at row `r` of A box `g` (E bits of the fold's kept values, or the
    /// fold's scales), if any.
    pub fn xa_read_at(&self, g: usize, r: usize, p: usize) -> Option<(u32, u32)> {
        self.xa.map(|x| {
            let s = &self.sched;
            let fold_k = s.rows * s.width;
            let row = self.a_base
                + (g % self.a_stages) as u32 * self.a_stage_bytes
                + x.offset
                + r as u32 * x.row_bytes;
            let kf = self.a_k0(g) + s.pass(p).fold % self.a_folds * fold_k;
            match self.operands {
                WsOperands::Mx { block } => (row + ((kf - self.a_k0(g)) / block) as u32, 0),
                _ => {
                    let bit = 2 * kf - 8 * (self.a_k0(g) / 4);
                    (row + (bit / 8) as u32, (bit % 8) as u32)
                }
            }
        })
    }

    /// The shared-memory address of C box `g`'s row `r`.
    pub fn c_row_addr(&self, g: usize, r: usize) -> u32 {
        self.c_base + (g % CD_SLOTS) as u32 * self.cd_slot_bytes + r as u32 * self.cd_pitch
    }

    /// The shared-memory address of D box `g`'s row `r`.
    pub fn d_row_addr(&self, g: usize, r: usize) -> u32 {
        self.d_base + (g % CD_SLOTS) as u32 * self.cd_slot_bytes + r as u32 * self.cd_pitch
    }

    /// Bytes of one weight span (`C` columns of B), one row of A (`R * w` elements), one
    /// row of C or D (`C` words).
    pub fn w_span(&self) -> u32 {
        self.sched.cols as u32 * self.esb
    }

    /// See [`WsMemLayout::w_span`].
    pub fn a_span(&self) -> u32 {
        (self.sched.rows * self.sched.width) as u32 * self.esa
    }

    /// See [`WsMemLayout::w_span`].
    pub fn cd_span(&self) -> u32 {
        self.sched.cols as u32 * self.esc
    }

    /// The mbarrier of weight stage `p mod S_w`, and the phase parity of its use by pass
    /// `p`; likewise for A stage `g mod S` and C slot `g mod 2`.
    pub fn w_bar(&self, p: usize) -> (usize, bool) {
        (p % self.w_stages, (p / self.w_stages) & 1 == 1)
    }

    /// See [`WsMemLayout::w_bar`].
    pub fn a_bar(&self, g: usize) -> (usize, bool) {
        (
            self.w_stages + g % self.a_stages,
            (g / self.a_stages) & 1 == 1,
        )
    }

    /// See [`WsMemLayout::w_bar`].
    pub fn c_bar(&self, g: usize) -> (usize, bool) {
        (
            self.w_stages + self.a_stages + g % CD_SLOTS,
            (g / CD_SLOTS) & 1 == 1,
        )
    }

    /// Lanes one weight row's read takes (its spans of B).
    pub fn w_read_lanes(&self) -> usize {
        self.w_spans * span_lanes(0, self.w_span())
    }

    /// mbarriers in use.
    pub fn mbars(&self) -> usize {
        self.w_stages + self.a_stages + CD_SLOTS
    }
}
