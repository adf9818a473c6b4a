//! The output-stationary mesh (scope `mesh`, PEs `pe_<row>_<col>`; rows and columns from the
//! configuration): wires each PE's A input to its left neighbour's `a_out` register, its B
//! input to its upper neighbour's `b_out` register and its shift input to its upper
//! neighbour's idle accumulator. Values therefore move one PE per cycle: A right, B down, the
//! drained results down. What travels beside A and B moves the same way: in 2:4 sparse mode
//! each PE's metadata input is its left neighbour's `meta_out` register; in MX mode A's block
//! scales move right through each PE's `a_scale` register and B's down through `b_scale`.
//!
//! [`PeArray`] is the array of one datapath. Which datapath a core has follows from the type
//! of what travels beside its operands ([`crate::hw::extras::EdgeExtras::Mesh`]): a 2:4
//! sparse or MX supply gets the array of its datapath, a dense supply a [`DenseMesh`] (floating
//! point or integer, chosen once from the mode when the core is built, so the clock loop
//! branches on it once per cycle, never per PE). [`Mesh`] is what the core asks of any of them.

use super::config::CoreConfig;
use super::pe::{fp, ACtl, Datapath, FpPath, IntPath, Pe, PeIn, PeLinks, ShiftIn};
use super::HwError;
use crate::numerics::dot::AccMode;
use crate::numerics::flags::Flags;
use crate::rtl::{Module, Result, Visitor, Wide};

/// The PE array of one datapath `D`: `rows x cols` PEs, row-major.
pub struct PeArray<const W: usize, D: Datapath<W>> {
    rows: usize,
    cols: usize,
    pes: Vec<Pe<W, D>>,
    /// Some PE's wave-only wire is observed (noted when the engine decides).
    shows: bool,
}

impl<const W: usize, D: Datapath<W>> PeArray<W, D> {
    /// An array of `cfg.rows() x cfg.cols()` PEs built for `cfg`, each with the datapath
    /// `path` makes for it.
    pub fn new(cfg: &CoreConfig, mut path: impl FnMut() -> Result<D>) -> Result<Self> {
        let (rows, cols) = (cfg.rows(), cfg.cols());
        let mut pes = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            for c in 0..cols {
                // A moves right and B down through the operand registers.
                let links = PeLinks::in_array(r, c, cols);
                pes.push(Pe::new(format!("pe_{r}_{c}"), cfg, path()?)?.with_links(links));
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

    /// The PE at (`row`, `col`).
    pub fn pe(&self, row: usize, col: usize) -> &Pe<W, D> {
        &self.pes[row * self.cols + col]
    }

    /// Every PE, row-major.
    pub fn pes(&self) -> &[Pe<W, D>] {
        &self.pes
    }

    /// The combinational phase. `a_edge[r]` (with `side_a[r]`) enters row `r` at the left,
    /// `b_edge[c]` (with `side_b[c]`) and `shift[c]` enter column `c` at the top (the shift
    /// command is a column-wide enable; its `value` is the C word entering the top PE).
    #[inline]
    pub fn comb(
        &mut self,
        a_edge: &[(Wide<W>, ACtl)],
        side_a: &[D::SideA],
        b_edge: &[(Wide<W>, bool)],
        side_b: &[D::SideB],
        shift: &[ShiftIn],
    ) {
        // Whether any PE's wave-only wire is observed, decided once for the whole array.
        if self.shows {
            self.comb_rows::<true>(a_edge, side_a, b_edge, side_b, shift);
        } else {
            self.comb_rows::<false>(a_edge, side_a, b_edge, side_b, shift);
        }
    }

    /// [`PeArray::comb`] with every PE's [`Pe::comb_as`] of `SHOWS`.
    #[inline(always)]
    fn comb_rows<const SHOWS: bool>(
        &mut self,
        a_edge: &[(Wide<W>, ACtl)],
        side_a: &[D::SideA],
        b_edge: &[(Wide<W>, bool)],
        side_b: &[D::SideB],
        shift: &[ShiftIn],
    ) {
        let cols = self.cols;
        // Row by row: the row above (register outputs only) and the row being evaluated, so
        // each PE finds its upper neighbour at its own column and its left one just before it.
        let mut above: &[Pe<W, D>] = &[];
        let mut rest = &mut self.pes[..];
        for r in 0..self.rows {
            let (row, below) = std::mem::take(&mut rest).split_at_mut(cols);
            for c in 0..cols {
                let (left, here) = row.split_at_mut(c);
                let (a, a_ctl, xa) = match left.last() {
                    None => (a_edge[r].0, a_edge[r].1, side_a[r]),
                    Some(left) => {
                        let (a, a_ctl) = left.a_out();
                        (a, a_ctl, left.side_out().0)
                    }
                };
                let (b, b_vld, xb, s) = match above.get(c) {
                    None => (b_edge[c].0, b_edge[c].1, side_b[c], shift[c]),
                    Some(up) => {
                        let (b, v) = up.b_out();
                        let s = ShiftIn {
                            value: up.acc_q(shift[c].set),
                            ..shift[c]
                        };
                        (b, v, up.side_out().1, s)
                    }
                };
                here[0].comb_as::<SHOWS>(PeIn {
                    a,
                    a_ctl,
                    side_a: xa,
                    b,
                    b_vld,
                    side_b: xb,
                    shift: s,
                });
            }
            above = row;
            rest = below;
        }
    }

    /// The word leaving the bottom of column `c`'s shift path this cycle (the bottom PE's
    /// accumulator of `set`), from register outputs only.
    #[inline]
    pub fn bottom(&self, c: usize, set: bool) -> u32 {
        self.pes[(self.rows - 1) * self.cols + c].acc_q(set)
    }
}

impl<const W: usize, D: Datapath<W>> Module for PeArray<W, D> {
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
        self.shows = self.pes.iter().any(Pe::shows_any);
    }
}

/// The PE array as the tensor core sees it (scope `mesh`), whatever its datapath: operands
/// and their side values in at the edges, the drained words out of the bottom row.
pub trait Mesh<const W: usize>: Module {
    /// What enters each row beside A (`()` if nothing).
    type SideA: Copy;
    /// What enters each column beside B (`()` if nothing).
    type SideB: Copy;
    /// Lanes of the B bus (`W`, or more for a B-side select).
    fn b_lanes() -> usize;
    /// The combinational phase (see [`PeArray::comb`]).
    fn comb(
        &mut self,
        a_edge: &[(Wide<W>, ACtl)],
        side_a: &[Self::SideA],
        b_edge: &[(Wide<W>, bool)],
        side_b: &[Self::SideB],
        shift: &[ShiftIn],
    );
    /// The word leaving the bottom of column `c`'s shift path this cycle (the bottom PE's
    /// accumulator of `set`), from register outputs only.
    fn bottom(&self, c: usize, set: bool) -> u32;
    /// True if the PE at (`row`, `col`) finished a tile's last step in the last cycle.
    fn done(&self, row: usize, col: usize) -> bool;
    /// OR of the IEEE flags every PE raised.
    fn flags(&self) -> Flags;
    /// The name of a PE that saw an accumulator hazard, if any.
    fn hazard(&self) -> Option<String>;
}

impl<const W: usize, D: Datapath<W>> Mesh<W> for PeArray<W, D> {
    type SideA = D::SideA;
    type SideB = D::SideB;

    fn b_lanes() -> usize {
        D::b_lanes()
    }

    #[inline]
    fn comb(
        &mut self,
        a_edge: &[(Wide<W>, ACtl)],
        side_a: &[D::SideA],
        b_edge: &[(Wide<W>, bool)],
        side_b: &[D::SideB],
        shift: &[ShiftIn],
    ) {
        PeArray::comb(self, a_edge, side_a, b_edge, side_b, shift);
    }

    #[inline]
    fn bottom(&self, c: usize, set: bool) -> u32 {
        PeArray::bottom(self, c, set)
    }

    fn done(&self, row: usize, col: usize) -> bool {
        self.pe(row, col).done()
    }

    fn flags(&self) -> Flags {
        self.pes.iter().fold(Flags::NONE, |f, p| f | p.flags())
    }

    fn hazard(&self) -> Option<String> {
        self.pes
            .iter()
            .find(|p| p.hazard())
            .map(|p| p.name().to_string())
    }
}

/// The mesh of a dense core: the floating-point or the integer array, chosen from the mode
/// when the core is built.
pub enum DenseMesh<const W: usize> {
    /// `ieee`, `fused` or `nvidia` floating point.
    Fp(PeArray<W, FpPath>),
    /// The same with the AMD CDNA2 input flush (subnormal A and B read as zero).
    FpFlush(PeArray<W, FpPath<true>>),
    /// Integer MMA.
    Int(PeArray<W, IntPath>),
}

/// Applies `$body` to the array of whichever datapath the dense mesh holds.
macro_rules! each_array {
    ($mesh:expr, $a:ident => $body:expr) => {
        match $mesh {
            DenseMesh::Fp($a) => $body,
            DenseMesh::FpFlush($a) => $body,
            DenseMesh::Int($a) => $body,
        }
    };
}

impl<const W: usize> DenseMesh<W> {
    /// The mesh of a dense core built for `cfg`: the datapath of `cfg.mode`.
    pub fn build(cfg: &CoreConfig) -> std::result::Result<Self, HwError> {
        Ok(match cfg.mode {
            AccMode::Int(im) => DenseMesh::Int(PeArray::new(cfg, || IntPath::new(im))?),
            _ if fp::flushes_inputs(cfg) => {
                DenseMesh::FpFlush(PeArray::new(cfg, || FpPath::new(cfg))?)
            }
            m if fp::is_fp(&m) => DenseMesh::Fp(PeArray::new(cfg, || FpPath::new(cfg))?),
            m => return Err(HwError::Unsupported(format!("a core in {} mode", m.name()))),
        })
    }
}

impl<const W: usize> Mesh<W> for DenseMesh<W> {
    type SideA = ();
    type SideB = ();

    fn b_lanes() -> usize {
        W
    }

    #[inline]
    fn comb(
        &mut self,
        a_edge: &[(Wide<W>, ACtl)],
        side_a: &[()],
        b_edge: &[(Wide<W>, bool)],
        side_b: &[()],
        shift: &[ShiftIn],
    ) {
        each_array!(self, a => a.comb(a_edge, side_a, b_edge, side_b, shift))
    }

    #[inline]
    fn bottom(&self, c: usize, set: bool) -> u32 {
        each_array!(self, a => a.bottom(c, set))
    }

    fn done(&self, row: usize, col: usize) -> bool {
        each_array!(self, a => Mesh::done(a, row, col))
    }

    fn flags(&self) -> Flags {
        each_array!(self, a => Mesh::flags(a))
    }

    fn hazard(&self) -> Option<String> {
        each_array!(self, a => Mesh::hazard(a))
    }
}

impl<const W: usize> Module for DenseMesh<W> {
    fn name(&self) -> &str {
        "mesh"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        each_array!(self, a => a.visit(v))
    }
    fn observed(&mut self) {
        each_array!(self, a => a.observed())
    }
}
