//! [`PeArray`]: the one PE array of every dataflow (scope `mesh`, PEs `pe_<row>_<col>`,
//! row-major). Each PE takes what enters its row from its left neighbour's registers (A, its
//! control bundle and the value beside it) and what enters its column from its upper
//! neighbour's registers, so values move one PE a cycle; the PEs of the left column and the
//! top row take the array's edge inputs instead.
//!
//! What moves down a column, and what the PE keeps, is the dataflow's: a dataflow's PE says
//! it through [`ArrayPe`] (what it passes right, what it hands the PE below given the
//! column's edge input, what the top row takes from the edge), and the array wires any of
//! them the same way. The output-stationary PE passes B and the drained accumulators down
//! (`hw::mesh`); the weight-stationary PE passes partial sums and loading weights down
//! (`hw::ws::mesh`).

use super::config::CoreConfig;
use crate::numerics::flags::Flags;
use crate::rtl::{Module, Result, Visitor};

/// A PE as the array wires it: what it passes right and down, from its registers only.
pub trait ArrayPe: Module {
    /// What enters a row at the left edge and passes right (A, its control bundle, the
    /// datapath's value beside A).
    type Left: Copy;
    /// What enters a column at the top edge and only the top PE takes.
    type Top: Copy;
    /// The column-wide control every PE of a column sees in the same cycle (a shift or
    /// weight-load command, with the set it names).
    type Column: Copy;
    /// What a PE takes from above: the upper PE's [`ArrayPe::down_out`], or in the top row
    /// [`ArrayPe::top_in`] of the column's edge input.
    type Down: Copy;
    /// What leaves to the right (register outputs).
    fn left_out(&self) -> Self::Left;
    /// What leaves downwards (register outputs), given the column's control `column` (its
    /// set selects which register passes down).
    fn down_out(&self, column: &Self::Column) -> Self::Down;
    /// What the top row takes from the column's edge input and control.
    fn top_in(top: &Self::Top, column: &Self::Column) -> Self::Down;
    /// The combinational phase with the settled inputs from the left and from above;
    /// `SHOWS`: whether the array has a wave-only wire anybody observes.
    fn comb_in<const SHOWS: bool>(&mut self, left: Self::Left, down: Self::Down);
    /// Whether any of this PE's wave-only wires is observed (noted when the engine decides).
    fn shows_any(&self) -> bool {
        true
    }
    /// The IEEE flags raised so far (sticky).
    fn pe_flags(&self) -> Flags;
    /// Whether the PE saw a hazard (an accumulator or weight set written while in use).
    fn pe_hazard(&self) -> bool;
}

/// The PE array: `rows x cols` PEs of one kind `P`, row-major (scope `mesh`).
pub struct PeArray<P> {
    rows: usize,
    cols: usize,
    pes: Vec<P>,
    /// Some PE's wave-only wire is observed (noted when the engine decides).
    shows: bool,
}

impl<P: ArrayPe> PeArray<P> {
    /// An array of `cfg.rows() x cfg.cols()` PEs, each built by `make(row, col)`.
    pub fn build(
        cfg: &CoreConfig,
        mut make: impl FnMut(usize, usize) -> Result<P>,
    ) -> Result<Self> {
        let (rows, cols) = (cfg.rows(), cfg.cols());
        let mut pes = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            for c in 0..cols {
                pes.push(make(r, c)?);
            }
        }
        // A wire outside a simulator is observed.
        Ok(Self {
            rows,
            cols,
            pes,
            shows: true,
        })
    }

    /// Rows and columns.
    pub fn dims(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// The PE at (`row`, `col`).
    pub fn pe(&self, row: usize, col: usize) -> &P {
        &self.pes[row * self.cols + col]
    }

    /// Every PE, row-major.
    pub fn pes(&self) -> &[P] {
        &self.pes
    }

    /// Every PE, row-major, for a setting made before elaboration (energy probes).
    pub fn pes_mut(&mut self) -> &mut [P] {
        &mut self.pes
    }

    /// The PE at the bottom of column `c`.
    #[inline]
    pub fn bottom_pe(&self, c: usize) -> &P {
        &self.pes[(self.rows - 1) * self.cols + c]
    }

    /// The combinational phase: `left(r)` enters row `r` at the left edge, `top(c)` the top
    /// PE of column `c`, and `column(c)` is column `c`'s control.
    #[inline]
    pub fn comb_edges(
        &mut self,
        left: impl Fn(usize) -> P::Left,
        top: impl Fn(usize) -> P::Top,
        column: impl Fn(usize) -> P::Column,
    ) {
        // Whether any PE's wave-only wire is observed, decided once for the whole array.
        if self.shows {
            self.comb_rows::<true>(left, top, column);
        } else {
            self.comb_rows::<false>(left, top, column);
        }
    }

    /// [`PeArray::comb_edges`] with every PE's [`ArrayPe::comb_in`] of `SHOWS`.
    #[inline(always)]
    fn comb_rows<const SHOWS: bool>(
        &mut self,
        left: impl Fn(usize) -> P::Left,
        top: impl Fn(usize) -> P::Top,
        column: impl Fn(usize) -> P::Column,
    ) {
        let cols = self.cols;
        // Row by row: the row above (register outputs only) and the row being evaluated, so
        // each PE finds its upper neighbour at its own column and its left one just before it.
        let mut above: &[P] = &[];
        let mut rest = &mut self.pes[..];
        for r in 0..self.rows {
            let (row, below) = std::mem::take(&mut rest).split_at_mut(cols);
            for c in 0..cols {
                let (left_pes, here) = row.split_at_mut(c);
                let l = match left_pes.last() {
                    None => left(r),
                    Some(pe) => pe.left_out(),
                };
                let d = match above.get(c) {
                    None => P::top_in(&top(c), &column(c)),
                    Some(up) => up.down_out(&column(c)),
                };
                here[0].comb_in::<SHOWS>(l, d);
            }
            above = row;
            rest = below;
        }
    }

    /// OR of the IEEE flags every PE raised.
    pub fn flags(&self) -> Flags {
        self.pes.iter().fold(Flags::NONE, |f, p| f | p.pe_flags())
    }

    /// The name of a PE that saw a hazard, if any.
    pub fn hazard(&self) -> Option<String> {
        self.pes
            .iter()
            .find(|p| p.pe_hazard())
            .map(|p| p.name().to_string())
    }
}

impl<P: ArrayPe> Module for PeArray<P> {
    fn name(&self) -> &str {
        "mesh"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for pe in &mut self.pes {
            v.child(pe);
        }
    }
    fn observed(&mut self) {
        // The PEs were told first (each after its own visit).
        self.shows = self.pes.iter().any(P::shows_any);
    }
}
