//! The tiling arithmetic of the weight-stationary core (`docs/timing.md`, "Weight-stationary
//! timing"): how an M x N x K problem maps onto passes of the `R x C` array, and when each
//! pass is preloaded and fed.
//!
//! A *pass* holds one weight tile in the array: the `R * w` elements of K of one *fold*
//! (`f`) for the `C` columns of one *column tile* (`n`), while the rows of one *row chunk*
//! of A (at most [`ACC_ROWS`] rows, the accumulator block's depth) stream through, one row
//! a cycle. Passes run chunk by chunk, column tile by column tile, fold by fold (the folds
//! of one output block back to back, so the accumulator block adds them in K order).
//!
//! Times are in cycles after the controller leaves `Idle`. Pass `p` with `S_p` rows is
//! preloaded in the `R` cycles from `P_p` and fed in the `S_p` cycles from `F_p`:
//! - `P_0 = 0`, `P_1 = R`, `P_p = max(P_{p-1} + R, F_{p-2} + S_{p-2} + R - 1)`: one
//!   preload at a time, and the weight set of pass `p` (its parity) free only once the last
//!   row of pass `p - 2`, which used it, has passed the bottom row's multipliers;
//! - `F_0 = R`, `F_p = max(P_p + R, F_{p-1} + S_{p-1})`: weights in place, rows in order.
//!
//! With every pass of `S` rows, two consecutive passes take `max(2S, S + 2R - 1)` cycles:
//! `2S` (no bubble) once `S >= 2R - 1`.

use crate::hw::config::CoreConfig;
use crate::hw::schedule::tile_origin;
use crate::hw::PIPELINE_LATENCY;

/// The accumulator block's depth: the rows of A a pass streams at most (one partial sum a
/// column for each). Longer M is cut into row chunks of this many rows.
pub const ACC_ROWS: usize = 1024;

/// One pass of the weight-stationary schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    /// The row chunk: rows `chunk * ACC_ROWS ..` of A.
    pub chunk: usize,
    /// The column tile: columns `C * n ..` of B and D.
    pub col_tile: usize,
    /// The fold: elements `R * w * fold ..` of K.
    pub fold: usize,
    /// Rows the pass streams (`S_p`).
    pub rows: usize,
    /// The first fold of its output block (the accumulator block adds C).
    pub first: bool,
    /// The last fold of its output block (D leaves).
    pub last: bool,
}

/// A problem's weight-stationary schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WsSchedule {
    /// Rows of the PE array `R`.
    pub rows: usize,
    /// Columns of the PE array `C`.
    pub cols: usize,
    /// Rows of A, C, D.
    pub m: usize,
    /// Columns of B, C, D.
    pub n: usize,
    /// Inner dimension.
    pub k: usize,
    /// Products per PE step `w`.
    pub width: usize,
    /// Folds of K: `ceil(K / (R * w))`.
    pub folds: usize,
    /// Column tiles: `ceil(N / C)`.
    pub col_tiles: usize,
    /// Rows per chunk: `min(M, ACC_ROWS)`.
    pub chunk_rows: usize,
    /// Row chunks: `ceil(M / chunk_rows)`.
    pub chunks: usize,
}

impl WsSchedule {
    /// The schedule of an `m x n x k` problem on a core built for `cfg`.
    pub fn for_core(cfg: &CoreConfig, m: usize, n: usize, k: usize) -> WsSchedule {
        let (rows, cols, width) = (cfg.rows(), cfg.cols(), cfg.width.max(1));
        let chunk_rows = m.clamp(1, ACC_ROWS);
        WsSchedule {
            rows,
            cols,
            m,
            n,
            k,
            width,
            folds: k.div_ceil(rows * width).max(1),
            col_tiles: n.div_ceil(cols).max(1),
            chunk_rows,
            chunks: m.div_ceil(chunk_rows).max(1),
        }
    }

    /// Passes in the run: `chunks * col_tiles * folds`.
    pub fn passes(&self) -> usize {
        self.chunks * self.col_tiles * self.folds
    }

    /// Pass `p`.
    pub fn pass(&self, p: usize) -> Pass {
        let fold = p % self.folds;
        let col_tile = (p / self.folds) % self.col_tiles;
        let chunk = p / (self.folds * self.col_tiles);
        let start = chunk * self.chunk_rows;
        Pass {
            chunk,
            col_tile,
            fold,
            rows: self.chunk_rows.min(self.m - start),
            first: fold == 0,
            last: fold + 1 == self.folds,
        }
    }

    /// The output-stationary tile numbering D rows leave under (`R x C` tiles, row-major):
    /// the tile and the row in it of row `i` of column tile `col_tile`.
    pub fn d_tile(&self, i: usize, col_tile: usize) -> (usize, usize) {
        ((i / self.rows) * self.col_tiles + col_tile, i % self.rows)
    }

    /// Output tiles in that numbering (`ceil(M / R) * ceil(N / C)`).
    pub fn d_tiles(&self) -> usize {
        self.m.div_ceil(self.rows) * self.col_tiles
    }

    /// The first row and column of output tile `t` (in [`WsSchedule::d_tile`]'s numbering).
    pub fn tile_origin(&self, t: usize) -> (usize, usize) {
        tile_origin((self.rows, self.cols), self.n, t)
    }

    /// `(P_p, F_p)` of every pass: the preload and feed starts of the module's rules.
    pub fn starts(&self) -> Vec<(u64, u64)> {
        let r = self.rows as u64;
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(self.passes());
        for p in 0..self.passes() {
            let pl = match p {
                0 => 0,
                1 => r,
                _ => {
                    let (_, f2) = out[p - 2];
                    let s2 = self.pass(p - 2).rows as u64;
                    (out[p - 1].0 + r).max(f2 + s2 + r - 1)
                }
            };
            let feed = if p == 0 {
                r
            } else {
                let s1 = self.pass(p - 1).rows as u64;
                (pl + r).max(out[p - 1].1 + s1)
            };
            out.push((pl, feed));
        }
        out
    }

    /// The cycles two consecutive passes of `s` rows take: `max(2S, S + 2R - 1)`.
    pub fn pair_cycles(&self, s: usize) -> usize {
        (2 * s).max(s + 2 * self.rows - 1)
    }

    /// The whole run, from leaving `Idle` to entering `Done`: the last pass's last row is
    /// fed in cycle `F_last + S_last - 1`; its partial sum leaves the bottom of column 0
    /// `R + L` cycles later and that of column `C - 1` `C - 1` more, where the accumulator
    /// block adds it and the de-skew completes the row; one cycle in the output register and
    /// the controller enters `Done`: `F_last + S_last + R + L + C`.
    pub fn total_cycles(&self) -> u64 {
        let starts = self.starts();
        let last = self.passes() - 1;
        let (_, f) = starts[last];
        f + (self.pass(last).rows + self.rows + self.cols) as u64 + PIPELINE_LATENCY
    }
}
