//! Input-stationary ([`Inputs`]; SCALE-Sim's third dataflow): each PE column holds `w`
//! elements of a row of A (the inputs) in its two held registers (`a_0`, `a_1`, loaded down
//! the column as weights are in `ws`); the columns of B stream right through the rows
//! (`b_in`, `b_out`, with B's side value beside them); partial sums move down the columns and
//! the block below the array adds the K-folds and C.
//!
//! The stationary core is the same hardware as `ws` with the operands' roles exchanged: array
//! column `j` of a pass holds row `m = C * t + j` of A, array row `i` takes elements
//! `R * w * fold + w * i ..` of K, and the streamed row `n` of a pass is column `n` of B. The
//! bottom of column `j` therefore delivers `D[m][n]` for one `n` a cycle: the output register
//! holds a column of D ([`Hold::D_COLUMNS`]), and the schedule is `ws`'s for the transposed
//! problem (`M` and `N` exchanged: `D^T = B^T A^T + C^T`). [`IsSupply`] presents an operand
//! store in that view: its rows to stream are B's columns, its columns to hold are A's rows,
//! its C rows are C's columns.
//!
//! Each element of D is computed in `ws`'s order (`crate::numerics::dot::ws`): the partial
//! sum of a fold of `R * w` elements of K down one column, from the identity, then added to
//! C (first fold) or to the running value in the accumulator block, fold by fold in K order.
//! The datapath multiplies A by B as in every dataflow (the held lanes are its A operand).

use std::cell::{Cell, RefCell};

use super::Hold;
use crate::hw::config::{CoreConfig, Dataflow};
use crate::hw::extras::{BlockScales, EdgeExtras};
use crate::hw::feeder::{LaneGroup, OperandFeeder, Traffic};
use crate::hw::pe::Datapath;
use crate::hw::ws::{WsSchedule, WsSupply};
use crate::hw::HwError;
use crate::numerics::format::Format;
use crate::rtl::Wide;

/// The input-stationary dataflow: A held, B streaming.
#[derive(Clone, Copy, Debug, Default)]
pub struct Inputs;

impl<const W: usize> Hold<W> for Inputs {
    const DATAFLOW: Dataflow = Dataflow::Is;
    const STREAM: &'static str = "b";
    const HELD: &'static str = "a";
    const D_COLUMNS: bool = true;
    const STREAM_SKEW: &'static str = "b_skew";
    const HELD_SKEW: &'static str = "a_skew";

    type StreamSide<D: Datapath<W>> = D::SideB;
    type HeldSide = u64;

    #[inline]
    fn stream_fmt(cfg: &CoreConfig) -> Format {
        cfg.fmt_b
    }
    #[inline]
    fn held_fmt(cfg: &CoreConfig) -> Format {
        cfg.fmt_a
    }
    #[inline]
    fn stream_lanes(b_lanes: usize) -> usize {
        b_lanes
    }
    #[inline]
    fn held_lanes(_b_lanes: usize) -> usize {
        W
    }
    #[inline(always)]
    fn holds_side<D: Datapath<W>>() -> bool {
        D::side_a_reg().is_some()
    }
    fn held_side<D: Datapath<W>>(_cfg: &CoreConfig) -> Option<(&'static str, u32)> {
        D::side_a_reg()
    }
    #[inline(always)]
    fn held_code(code: u64) -> u64 {
        code
    }
    #[inline(always)]
    fn stream_code<D: Datapath<W>>(code: u64) -> D::SideB {
        D::side_b(code as u8)
    }
    #[inline(always)]
    fn pass<D: Datapath<W>>(path: &mut D, stream: D::SideB, held: u64) {
        path.pass(D::side_a(held), stream);
    }
    #[inline(always)]
    fn stream_out<D: Datapath<W>>(path: &D) -> D::SideB {
        path.side_out().1
    }
    #[inline(always)]
    fn stage1<D: Datapath<W>>(
        path: &mut D,
        stream: &Wide<W>,
        held: &Wide<W>,
        lanes: usize,
        _stream_side: D::SideB,
        held_side: u64,
    ) -> D::Stage1 {
        path.stage1(held, stream, lanes, D::side_a(held_side))
    }
}

/// An operand store seen as the input-stationary core reads it: the transposed problem
/// (`n x m x k`), whose rows to stream are the columns of B, whose columns to hold are the
/// rows of A and whose rows of C are the columns of C (see the module documentation). Only
/// index arithmetic: every lane still comes from the store `F` (so its traffic counts A and B
/// as they are), and C from the problem's own C.
pub struct IsSupply<F, X = ()> {
    inner: F,
    /// One step's extras as the store gives them (a scratch the side lookups fill).
    scratch: RefCell<X>,
    /// The array `(R, C)`.
    array: (usize, usize),
    /// The problem's `(m, n, k)`.
    dims: (usize, usize, usize),
    /// C, row-major `m x n`, as the problem gives it.
    c: Vec<u32>,
    c_bits: u32,
    c_bits_read: Cell<u64>,
}

impl<F, X> IsSupply<F, X> {
    /// The input-stationary view of `inner`, the store of an `m x n x k` problem built for
    /// `cfg` (serving `X` beside its operands), with its C (row-major `m x n`).
    pub fn new<const W: usize>(
        cfg: &CoreConfig,
        inner: F,
        (m, n, k): (usize, usize, usize),
        c: Vec<u32>,
    ) -> Self
    where
        X: EdgeExtras<W>,
    {
        Self {
            inner,
            scratch: RefCell::new(X::sized(cfg.rows(), cfg.cols())),
            array: (cfg.rows(), cfg.cols()),
            dims: (m, n, k),
            c,
            c_bits: cfg.acc.width(),
            c_bits_read: Cell::new(0),
        }
    }

    /// The store behind the view.
    pub fn inner(&self) -> &F {
        &self.inner
    }

    /// Column tiles of the transposed problem (`ceil(M / C)`: blocks of A's rows held).
    fn held_tiles(&self) -> usize {
        self.dims.0.div_ceil(self.array.1).max(1)
    }

    /// The row of the transposed problem (a column `n` of B) of row `row` of output tile
    /// `tile` (the stationary schedule's numbering).
    fn stream_index(&self, tile: usize, row: usize) -> usize {
        (tile / self.held_tiles()) * self.array.0 + row
    }

    /// The column of B streamed as row `row` of output tile `tile`, if inside N.
    fn stream_column(&self, tile: usize, row: usize) -> Option<usize> {
        Some(self.stream_index(tile, row)).filter(|&n| n < self.dims.1)
    }

    /// The row of A held in column `col` of column tile `tile`, if inside M.
    fn held_row(&self, tile: usize, col: usize) -> Option<usize> {
        Some(tile * self.array.1 + col).filter(|&m| m < self.dims.0)
    }

    /// Where the store serves column `n` of B: its tile of the first block row, and the
    /// column within it.
    fn b_at(&self, n: usize) -> (usize, usize) {
        (n / self.array.1, n % self.array.1)
    }

    /// Where the store serves row `m` of A: the first tile of its block row, and the row
    /// within it.
    fn a_at(&self, m: usize) -> (usize, usize) {
        let tiles_n = self.dims.1.div_ceil(self.array.1).max(1);
        ((m / self.array.0) * tiles_n, m % self.array.0)
    }
}

/// What an operand store of the input-stationary view serves beside the operands, by kind of
/// store: nothing (dense), or block scales (MX): B's scale beside each streamed column of B
/// (the row lanes of the scales' stage, `xa_skew`, carry the streaming operand's scales) and
/// A's beside each held row of A (the column lanes, `xb_skew`, carry the held operand's,
/// loaded with it into `a_scale_0`/`a_scale_1`).
pub trait IsSides<const W: usize>: EdgeExtras<W> {
    /// Writes into row `row` of `out` the side value beside streamed column `n` of B (`None`
    /// past N) at step `step`; `scratch` is a whole step's extras as the store gives them.
    fn stream<F: OperandFeeder<W, Extras = Self>>(
        _view: &IsSupply<F, Self>,
        _n: Option<usize>,
        _row: usize,
        _step: usize,
        _scratch: &mut Self,
        _out: &mut Self,
    ) {
    }
    /// Writes into column `j` of `out` the side value beside held row `m` of A (`None` past
    /// M), for every column of a load at step `step`.
    fn held<F: OperandFeeder<W, Extras = Self>>(
        _view: &IsSupply<F, Self>,
        _rows: &mut dyn Iterator<Item = (usize, Option<usize>)>,
        _step: usize,
        _scratch: &mut Self,
        _out: &mut Self,
    ) {
    }
}

/// A dense store: nothing beside the operands.
impl<const W: usize> IsSides<W> for () {}

/// A block-scaled store: each operand's block scale travels or stays with it.
impl<const W: usize> IsSides<W> for BlockScales {
    fn stream<F: OperandFeeder<W, Extras = Self>>(
        view: &IsSupply<F, Self>,
        n: Option<usize>,
        row: usize,
        step: usize,
        scratch: &mut Self,
        out: &mut Self,
    ) {
        out.a[row] = match n {
            Some(n) => {
                let (t, col) = view.b_at(n);
                view.inner.extras(t, step, scratch);
                scratch.b[col]
            }
            None => 0,
        };
    }

    fn held<F: OperandFeeder<W, Extras = Self>>(
        view: &IsSupply<F, Self>,
        rows: &mut dyn Iterator<Item = (usize, Option<usize>)>,
        step: usize,
        scratch: &mut Self,
        out: &mut Self,
    ) {
        for (j, m) in rows {
            out.b[j] = match m {
                Some(m) => {
                    let (t, row) = view.a_at(m);
                    view.inner.row_extras(t, row, step, scratch);
                    scratch.a[row]
                }
                None => 0,
            };
        }
    }
}

impl<const W: usize, F: OperandFeeder<W>> OperandFeeder<W> for IsSupply<F, F::Extras>
where
    F::Extras: IsSides<W>,
{
    type Extras = F::Extras;

    fn dims(&self) -> (usize, usize, usize) {
        let (m, n, k) = self.dims;
        (n, m, k)
    }

    fn spec(&self) -> <F::Extras as EdgeExtras<W>>::Spec {
        self.inner.spec()
    }

    /// Streamed row `row` of tile `tile`: column `n` of B (0 lanes past N).
    #[inline]
    fn a(&self, tile: usize, row: usize, step: usize) -> LaneGroup<W> {
        match self.stream_column(tile, row) {
            Some(n) => {
                let (t, col) = self.b_at(n);
                self.inner.b(t, col, step)
            }
            None => LaneGroup::default(),
        }
    }

    /// Held column `col` of column tile `tile`: row `m` of A (0 lanes past M).
    #[inline]
    fn b(&self, tile: usize, col: usize, step: usize) -> LaneGroup<W> {
        match self.held_row(tile, col) {
            Some(m) => {
                let (t, row) = self.a_at(m);
                self.inner.a(t, row, step)
            }
            None => LaneGroup::default(),
        }
    }

    /// Row `row` of output tile `tile` of `D^T`: column `n` of C at the tile's rows of A.
    fn c_row(&self, tile: usize, row: usize, out: &mut [u32]) {
        let (m, n_dim, _) = self.dims;
        let n = self.stream_index(tile, row);
        let m0 = (tile % self.held_tiles()) * self.array.1;
        let mut words = 0u64;
        for (j, w) in out.iter_mut().enumerate() {
            *w = if n < n_dim && m0 + j < m {
                words += 1;
                self.c[(m0 + j) * n_dim + n]
            } else {
                0
            };
        }
        self.c_bits_read
            .set(self.c_bits_read.get() + words * u64::from(self.c_bits));
    }

    /// The side values beside the held rows of A of a load of column tile `tile`.
    fn extras(&self, tile: usize, step: usize, out: &mut F::Extras) {
        let mut rows = (0..self.array.1).map(|j| (j, self.held_row(tile, j)));
        <F::Extras as IsSides<W>>::held(self, &mut rows, step, &mut self.scratch.borrow_mut(), out);
    }

    /// The side value beside streamed row `row` of tile `tile` (a column of B).
    fn row_extras(&self, tile: usize, row: usize, step: usize, out: &mut F::Extras) {
        let n = self.stream_column(tile, row);
        <F::Extras as IsSides<W>>::stream(self, n, row, step, &mut self.scratch.borrow_mut(), out);
    }

    fn traffic(&self) -> Option<Traffic> {
        self.inner.traffic().map(|t| Traffic {
            c_read_bits: self.c_bits_read.get(),
            ..t
        })
    }
}

impl<const W: usize, F: OperandFeeder<W>> WsSupply<W> for IsSupply<F, F::Extras> where
    F::Extras: IsSides<W>
{
}

/// The schedule of an `m x n x k` problem on an input-stationary core built for `cfg`: the
/// stationary schedule of the transposed problem (`n` rows to stream, `m` columns to hold;
/// `docs/timing.md`, "Input-stationary timing").
pub fn is_schedule(cfg: &CoreConfig, m: usize, n: usize, k: usize) -> WsSchedule {
    WsSchedule::for_core(cfg, n, m, k)
}

/// The refusal of a kind of run the input-stationary core does not take yet (`what`: 2:4
/// sparse, the TMA memory path).
pub fn unsupported(what: &str) -> HwError {
    HwError::Unsupported(format!(
        "{what} in the input-stationary dataflow (is runs dense and block-scaled GEMMs on the \
         ideal store; use ws or os for this run)"
    ))
}
