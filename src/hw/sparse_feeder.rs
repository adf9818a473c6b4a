//! The 2:4 sparse operand feeder: a tile buffer holding a compressed A (kept values plus
//! metadata nibbles, PTX `mma.sp::ordered_metadata` encoding), B and C.
//!
//! Per step `s` of a tile (`w` kept values a step, `T = ceil((K / 2) / w)` steps):
//! - A row `i`: kept values `s*w .. s*w + lanes` of row `i` (`lanes = min(w, K/2 - s*w)`);
//! - metadata beside it ([`SparseSelects`], the feeder's extras): for each kept lane `t` the 2-bit index, within its group of four,
//!   of kept value `s*w + t`, at bits `2t..2t+2`. For even `w` this is exactly the
//!   concatenation of the step's `w / 2` nibbles (low two bits of a nibble: its first kept
//!   value); for `w = 1` the feeder presents one half of the group's nibble per step;
//! - B column `j`: the dense K positions of the step's groups, `4 * floor(s*w / 2) ..`, as a
//!   bus of [`sparse_b_lanes`]`(w)` lanes (`2w`, or 4 for `w = 1`, whose two steps per group
//!   see the same four positions); positions past K are zero.
//!
//! The schedule counts kept positions ([`OperandFeeder::dims`] returns `K / 2` as its `k`),
//! so the controller feeds half the steps of the dense problem. No nibble is checked here:
//! the problem builders (`sparse::Compressed::new`, `sparse::compress`) validate them.

use super::config::CoreConfig;
use super::extras::SparseSelects;
use super::feeder::{
    c_tile_row, check_problem, column_lanes, tile_origin, LaneGroup, OperandFeeder,
};
use super::pe::set_lane;
use super::pe::sparse_b_lanes;
use super::HwError;
use crate::rtl::Wide;

/// A compressed A, B and C in a buffer, served tile by tile in 2:4 sparse mode.
#[derive(Clone, Debug)]
pub struct SparseTileBuffer {
    array: (usize, usize),
    m: usize,
    n: usize,
    k: usize,
    width: usize,
    bits_a: u32,
    bits_b: u32,
    values: Vec<u64>,
    meta: Vec<u8>,
    b: Vec<u64>,
    c: Vec<u32>,
}

/// Checks a 2:4 sparse problem's shape: `k` a multiple of 4 and the lengths of the kept A
/// values (`m x k/2`), the metadata nibbles (`m x k/4`), B (`k x n`) and C (`m x n`). Every
/// sparse operand source (this buffer, the memory-fed port) checks through it.
pub(crate) fn check_sparse_problem(
    (m, n, k): (usize, usize, usize),
    values: usize,
    meta: usize,
    b: usize,
    c: usize,
) -> Result<(), HwError> {
    if !k.is_multiple_of(4) {
        return Err(HwError::Unsupported(format!(
            "2:4 sparsity with K = {k} (a multiple of 4 is required)"
        )));
    }
    check_problem(
        (m, n, k),
        &[
            ("A values", m * k / 2, values),
            ("A metadata", m * k / 4, meta),
            ("B", k * n, b),
            ("C", m * n, c),
        ],
    )
}

impl SparseTileBuffer {
    /// A buffer for `D = A x B + C` with the dense inner dimension `k` (a multiple of 4):
    /// `values` (`m x k/2` kept values), `meta` (`m x k/4` nibbles, one a byte), `b`
    /// (`k x n`), `c` (`m x n` in the accumulator format), all row-major bit patterns.
    #[allow(clippy::too_many_arguments)] // the shape and the four matrices of the problem
    pub fn new(
        cfg: CoreConfig,
        m: usize,
        n: usize,
        k: usize,
        values: Vec<u64>,
        meta: Vec<u8>,
        b: Vec<u64>,
        c: Vec<u32>,
    ) -> Result<Self, HwError> {
        check_sparse_problem((m, n, k), values.len(), meta.len(), b.len(), c.len())?;
        Ok(Self {
            array: (cfg.rows(), cfg.cols()),
            m,
            n,
            k,
            width: cfg.width,
            bits_a: cfg.fmt_a.width(),
            bits_b: cfg.fmt_b.width(),
            values,
            meta,
            b,
            c,
        })
    }

    fn origin(&self, tile: usize) -> (usize, usize) {
        tile_origin(self.array, self.n, tile)
    }

    /// Row `i` of A and the first kept index and valid lanes of step `step`, if any.
    fn a_step(&self, tile: usize, row: usize, step: usize) -> Option<(usize, usize, usize)> {
        let i = self.origin(tile).0 + row;
        let kept = self.k / 2;
        let k0 = step * self.width;
        (i < self.m && k0 < kept).then(|| (i, k0, self.width.min(kept - k0)))
    }

    /// The selects beside row `row` of tile `tile` at step `step`: for each of the step's kept
    /// lanes `t` (at most `W`) the 2-bit index within its group, at bits `2t..2t+2`.
    #[inline]
    fn selects<const W: usize>(&self, tile: usize, row: usize, step: usize) -> u64 {
        let Some((i, k0, lanes)) = self.a_step(tile, row, step) else {
            return 0;
        };
        let mut out = 0u64;
        for t in 0..lanes.min(W) {
            let kept = k0 + t;
            let nibble = self.meta[i * self.k / 4 + kept / 2];
            let index = (nibble >> (2 * (kept % 2))) & 3;
            out |= u64::from(index) << (2 * t);
        }
        out
    }
}

impl<const W: usize> OperandFeeder<W> for SparseTileBuffer {
    type Extras = SparseSelects;

    fn dims(&self) -> (usize, usize, usize) {
        (self.m, self.n, self.k / 2)
    }

    fn spec(&self) {}

    #[inline]
    fn extras(&self, tile: usize, step: usize, out: &mut SparseSelects) {
        for (row, m) in out.meta.iter_mut().enumerate() {
            *m = self.selects::<W>(tile, row, step);
        }
    }

    #[inline]
    fn row_extras(&self, tile: usize, row: usize, step: usize, out: &mut SparseSelects) {
        out.meta[row] = self.selects::<W>(tile, row, step);
    }

    #[inline]
    fn a(&self, tile: usize, row: usize, step: usize) -> LaneGroup<W> {
        let Some((i, k0, lanes)) = self.a_step(tile, row, step) else {
            return LaneGroup::default();
        };
        let lanes = lanes.min(W);
        let mut words = Wide::<W>::ZERO;
        for l in 0..lanes {
            set_lane(
                &mut words,
                l,
                self.bits_a,
                self.values[i * self.k / 2 + k0 + l],
            );
        }
        LaneGroup { bits: words, lanes }
    }

    #[inline]
    fn b(&self, tile: usize, col: usize, step: usize) -> LaneGroup<W> {
        let j = self.origin(tile).1 + col;
        let p0 = 4 * (step * self.width / 2);
        if j >= self.n || p0 >= self.k {
            return LaneGroup::default();
        }
        let lanes = sparse_b_lanes(self.width).min(self.k - p0);
        column_lanes(&self.b, self.n, self.bits_b, j, p0, lanes)
    }

    fn c_row(&self, tile: usize, row: usize, out: &mut [u32]) {
        c_tile_row(&self.c, self.array, (self.m, self.n), (tile, row), out);
    }
}
