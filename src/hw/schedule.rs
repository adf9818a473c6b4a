//! The tiling arithmetic of the tensor core: how an M x N x K problem maps onto the `R x C`
//! mesh (4 x 4 today; the geometry is a value of the schedule), when each tile is fed, when
//! each column shift window (C preload and result drain) runs, and the cycle formulas
//! (`docs/timing.md`).
//!
//! Tiles are the `R x C` output blocks, row-major: tile `t` covers rows `R * (t / tiles_n)..`
//! and columns `C * (t % tiles_n)..`; rows and columns past M, N are masked. Each tile takes
//! `T = ceil(K / w)` steps; step `s` carries k = `s*w .. s*w + lanes`, the lanes past K masked.
//!
//! Times are in cycles after the controller leaves `Idle` (cycle 0 = first `Preload` cycle):
//! - tile `t` is fed (step 0 at the array's corner) at `F_t = F_0 + t * P`, `F_0 = R - L`;
//! - the period is `P = max(T, ceil((T + 2R - 1) / 2))`: `T` when `T >= 2R - 1 = 7`,
//!   otherwise bubbles keep the drain of tile `t` (which loads C of tile `t + 2` into the same
//!   accumulator set) finished before tile `t + 2` starts;
//! - shift window 0 loads C of tile 0 into set 0 at cycle 0, window 1 loads C of tile 1 into
//!   set 1 at cycle `R`, window `t + 2` drains tile `t` (and loads C of tile `t + 2`) from
//!   `F_t + T + R - 1 + L`, the first cycle after the last PE of column 0 finished tile `t`.
//!   Column `j` runs each window `j` cycles later (skewed commands).

use super::config::CoreConfig;
use super::{COLS, PIPELINE_LATENCY, ROWS};

/// The first row and column of output tile `tile` of a `rows x cols` array (tiles numbered
/// row-major over an `? x n` output): the one tile-origin computation of every feeder, port
/// and runner.
pub fn tile_origin((rows, cols): (usize, usize), n: usize, tile: usize) -> (usize, usize) {
    let tn = n.div_ceil(cols).max(1);
    ((tile / tn) * rows, (tile % tn) * cols)
}

/// A problem's tile schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Rows of the PE mesh `R`.
    pub rows: usize,
    /// Columns of the PE mesh `C`.
    pub cols: usize,
    /// Rows of A, C, D.
    pub m: usize,
    /// Columns of B, C, D.
    pub n: usize,
    /// Inner dimension.
    pub k: usize,
    /// Products per step `w`.
    pub width: usize,
    /// NVIDIA block size `n` (0 for other modes).
    pub block: usize,
    /// Steps per tile `T = ceil(K / w)`.
    pub steps: usize,
    /// Tile rows `ceil(M / R)`.
    pub tiles_m: usize,
    /// Tile columns `ceil(N / C)`.
    pub tiles_n: usize,
    /// Cycles between the starts of consecutive tiles.
    pub period: usize,
}

/// The control fields of one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepCtl {
    /// Valid lanes (`min(w, K - s*w)`).
    pub lanes: usize,
    /// Last step of the tile.
    pub last: bool,
    /// Last step of an NVIDIA block (the block FMA fires).
    pub fire: bool,
}

impl Schedule {
    /// The schedule of an `m x n x k` problem with `width` products per step and NVIDIA
    /// block size `block` (0 if not NVIDIA) on the default 4 x 4 array (the geometry every
    /// [`CoreConfig`] has today; [`Schedule::for_core`] takes it from the configuration).
    pub fn new(m: usize, n: usize, k: usize, width: usize, block: usize) -> Schedule {
        Schedule::on_array((ROWS, COLS), m, n, k, width, block)
    }

    /// The schedule of an `m x n x k` problem on a core built for `cfg` (its array and
    /// width), with the `fire` bit marking blocks of `block` elements (0: none).
    pub fn for_core(cfg: &CoreConfig, m: usize, n: usize, k: usize, block: usize) -> Schedule {
        Schedule::on_array((cfg.rows(), cfg.cols()), m, n, k, cfg.width, block)
    }

    /// The schedule of an `m x n x k` problem on a `rows x cols` array.
    pub fn on_array(
        (rows, cols): (usize, usize),
        m: usize,
        n: usize,
        k: usize,
        width: usize,
        block: usize,
    ) -> Schedule {
        let width = width.max(1);
        let steps = k.div_ceil(width).max(1);
        let period = steps.max((steps + 2 * rows - 1).div_ceil(2));
        Schedule {
            rows,
            cols,
            m,
            n,
            k,
            width,
            block,
            steps,
            tiles_m: m.div_ceil(rows),
            tiles_n: n.div_ceil(cols),
            period,
        }
    }

    /// Number of tiles.
    pub fn tiles(&self) -> usize {
        self.tiles_m * self.tiles_n
    }

    /// First output row and column of tile `t`.
    pub fn tile_origin(&self, t: usize) -> (usize, usize) {
        tile_origin(self.array(), self.n, t)
    }

    /// The array's `(rows, cols)`.
    pub fn array(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// The cycle tile 0 is fed: `R - L`.
    pub fn feed_start(&self) -> u64 {
        self.rows as u64 - PIPELINE_LATENCY
    }

    /// The cycle tile `t` is fed.
    pub fn tile_start(&self, t: usize) -> u64 {
        self.feed_start() + (t * self.period) as u64
    }

    /// The start (column 0) of shift window `idx` (0: C of tile 0; 1: C of tile 1;
    /// `t + 2`: drain of tile `t` with C of tile `t + 2`).
    pub fn window_start(&self, idx: usize) -> u64 {
        match idx {
            0 => 0,
            1 => self.rows as u64,
            _ => {
                self.tile_start(idx - 2) + self.steps as u64 + self.rows as u64 - 1
                    + PIPELINE_LATENCY
            }
        }
    }

    /// Number of shift windows (`tiles + 2`).
    pub fn windows(&self) -> usize {
        self.tiles() + 2
    }

    /// The control fields of step `s` (of any tile).
    pub fn step_ctl(&self, s: usize) -> StepCtl {
        let lanes = self.width.min(self.k.saturating_sub(s * self.width));
        let last = s + 1 == self.steps;
        let fire = last || (self.block > 0 && ((s + 1) * self.width).is_multiple_of(self.block));
        StepCtl { lanes, last, fire }
    }

    /// One tile's compute latency: `T + R + C - 2 + L`, from feeding step 0 to the last
    /// accumulator write of the bottom-right PE, inclusive (SCALE-Sim's output-stationary fold
    /// `T + R + C - 2` plus the PE pipeline latency).
    pub fn tile_cycles(&self) -> u64 {
        (self.steps + self.rows + self.cols - 2) as u64 + PIPELINE_LATENCY
    }

    /// The whole run, from leaving `Idle` to entering `Done`:
    /// `(R - L) + (tiles - 1) * P + tile_cycles + R + 1` (C preload before the first tile,
    /// back-to-back tiles, then the last drain through the de-skew to the output register).
    pub fn total_cycles(&self) -> u64 {
        self.feed_start()
            + ((self.tiles() - 1) * self.period) as u64
            + self.tile_cycles()
            + self.rows as u64
            + 1
    }
}
