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
//! Shared-memory reads are whole spans (a row of A, `w` rows of a weight tile's `C`
//! columns, a row of C), so no swizzle is used: a span of up to 128 bytes never meets itself
//! in a bank.

use super::super::schedule::WsSchedule;
use crate::hw::config::CoreConfig;
use crate::hw::memory::{ElemType, SmemLane, TensorMap, MAX_MBARS};
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
}

/// Bytes rounded up to a multiple of 16 (a TMA inner extent, a global row pitch).
fn up16(bytes: u64) -> u64 {
    bytes.div_ceil(16) * 16
}

/// The most bytes a band of `band_bytes` can start past a 16-byte boundary: band `i` starts
/// at `i * band_bytes`, whose remainder mod 16 is a multiple of `gcd(band_bytes, 16)`.
fn band_skew_max(band_bytes: u32) -> u32 {
    let g = (1u32 << band_bytes.trailing_zeros().min(4)).min(16);
    16 - g
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
        let sched = WsSchedule::for_core(cfg, m, n, k);
        let (rows, cols, w) = (sched.rows, sched.cols, sched.width);
        let esa = container(cfg.fmt_a.width());
        let esb = container(cfg.fmt_b.width());
        let esc = container(cfg.acc.width());
        let refuse = |why: String| Err(HwError::Unsupported(format!("{why} (ws, --memory tma)")));
        let fold_k = rows * w;
        if fold_k > 256 {
            return refuse(format!(
                "a weight tile of R x w = {fold_k} K positions exceeds a TMA box's 256 rows"
            ));
        }
        let a_row = fold_k as u32 * esa;
        // A fold's span in a wide box may start anywhere in a 16-byte chunk.
        if span_lanes(15, a_row) > REQUEST_LANES {
            return refuse(format!(
                "one row of A ({a_row} bytes: R x w elements) exceeds a shared-memory \
                 request's {REQUEST_LANES} lanes of 16 bytes"
            ));
        }
        let w_span = cols as u32 * esb;
        let w_lanes = w * span_lanes(0, w_span);
        if w_lanes > REQUEST_LANES {
            return refuse(format!(
                "one weight row ({w} spans of {cols} columns of B: {w_lanes} lanes) exceeds a \
                 shared-memory request's {REQUEST_LANES} lanes"
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
        // A band's start is aligned down to 16 bytes (a TMA box's inner start must be), so
        // the box also holds the bytes between that boundary and the band.
        let band_bytes = a_row * a_folds as u32;
        let a_pitch = up16(u64::from(band_bytes + band_skew_max(band_bytes))) as u32;
        let cd_pitch = up16(u64::from(cols as u32 * esc)) as u32;
        if w_pitch / esb > 256 || a_pitch / esa > 256 {
            return refuse("a box's inner extent exceeds 256 elements".into());
        }
        let cd_box_rows = sched.chunk_rows.min(CD_BOX_ROWS);
        let w_stage_bytes = up128(w_pitch * fold_k as u32);
        let a_stage_bytes = up128(a_pitch * a_box_rows as u32);
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
        let (mu, ku) = (m as u64, k as u64);
        let a = (0u64, up16(ku * u64::from(esa)));
        let panels = sched.col_tiles as u64;
        // B in column-tile panels of `C` columns, each row padded to 16 bytes (so a weight
        // box starts at a 16-byte boundary): panel `t`'s row `k` at `b + (t * K + k) * pitch`.
        let b = (a.0 + mu * a.1, u64::from(w_pitch));
        let c = (b.0 + panels * ku * b.1, u64::from(cd_pitch));
        let d = (c.0 + panels * mu * c.1, c.1);
        Ok(Self {
            sched,
            esa,
            esb,
            esc,
            a,
            b,
            c,
            d,
            gmem_bytes: d.0 + panels * mu * d.1,
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
        })
    }

    fn elem(es: u32) -> ElemType {
        match es {
            1 => ElemType::U8,
            2 => ElemType::U16,
            _ => ElemType::U32,
        }
    }

    /// The four descriptors (inner dimension first): A `[K, M]`; B, C and D in column-tile
    /// panels, `[padded C, K, panel]` and `[padded C, M, panel]`.
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
                s.k as u64,
                s.col_tiles as u64,
            ],
            &[self.w_pitch / self.esb, (s.rows * s.width) as u32, 1],
        );
        b.global_strides[0] = self.b.1;
        b.global_strides[1] = self.b.1 * s.k as u64;
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
        vec![a, b, c, d]
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
        let band_start = (pass.fold / self.a_folds * self.a_folds * s.rows * s.width) as u32;
        let skew = band_start * self.esa % 16;
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
        let k0 = pass.fold * s.rows * s.width;
        [0, k0 as i32, pass.col_tile as i32, 0, 0]
    }

    /// The global address of element `(p, j)` of B (K row `p`, column `j`) in its panel.
    pub fn b_addr(&self, p: usize, j: usize) -> u64 {
        let s = &self.sched;
        let (panel, col) = (j / s.cols, j % s.cols);
        self.b.0 + (panel * s.k + p) as u64 * self.b.1 + (col as u64) * u64::from(self.esb)
    }

    /// The TMA coordinates of A box `g`: `[K, row]`.
    pub fn a_coords(&self, g: usize) -> [i32; 5] {
        let s = &self.sched;
        let bands = self.bands_per_tile();
        let (band, x) = self.locate(g, s.col_tiles * bands, self.a_box_rows);
        let chunk = band / (s.col_tiles * bands);
        let k0 = (band % bands) * self.a_folds * s.rows * s.width;
        // Aligned down to a 16-byte boundary; `a_box`'s offsets add the difference.
        let k0 = k0 - (k0 * self.esa as usize % 16) / self.esa as usize;
        let r0 = chunk * s.chunk_rows + x * self.a_box_rows;
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

    /// mbarriers in use.
    pub fn mbars(&self) -> usize {
        self.w_stages + self.a_stages + CD_SLOTS
    }
}
