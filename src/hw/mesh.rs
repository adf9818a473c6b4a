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

use super::array::{ArrayPe, PeArray};
use super::config::CoreConfig;
use super::pe::{fp, ACtl, Datapath, FpPath, IntPath, Pe, PeIn, PeLinks, ShiftIn};
use super::HwError;
use crate::numerics::dot::AccMode;
use crate::numerics::flags::Flags;
use crate::rtl::{Module, Result, Visitor, Wide};

/// The output-stationary array of one datapath (see [`PeArray`]).
pub type OsArray<const W: usize, D> = PeArray<Pe<W, D>>;

/// The output-stationary PE as the array wires it: A (with its control bundle and the
/// datapath's side value) moves right; B (with its valid bit and side value) moves down, and
/// beside it the column's shift path, whose word is the upper PE's idle accumulator of the
/// set the column's shift command names.
impl<const W: usize, D: Datapath<W>> ArrayPe for Pe<W, D> {
    type Left = (Wide<W>, ACtl, D::SideA);
    /// B, its valid bit and its side value.
    type Top = (Wide<W>, bool, D::SideB);
    /// The column's shift command (its `value` is the C word entering the top PE).
    type Column = ShiftIn;
    type Down = (Wide<W>, bool, D::SideB, ShiftIn);

    #[inline(always)]
    fn left_out(&self) -> Self::Left {
        let (a, a_ctl) = self.a_out();
        (a, a_ctl, self.side_out().0)
    }

    #[inline(always)]
    fn down_out(&self, shift: &ShiftIn) -> Self::Down {
        let (b, v) = self.b_out();
        let shift = ShiftIn {
            value: self.acc_q(shift.set),
            ..*shift
        };
        (b, v, self.side_out().1, shift)
    }

    #[inline(always)]
    fn top_in(top: &Self::Top, shift: &ShiftIn) -> Self::Down {
        (top.0, top.1, top.2, *shift)
    }

    #[inline(always)]
    fn comb_in<const SHOWS: bool>(&mut self, left: Self::Left, down: Self::Down) {
        self.comb_as::<SHOWS>(PeIn {
            a: left.0,
            a_ctl: left.1,
            side_a: left.2,
            b: down.0,
            b_vld: down.1,
            side_b: down.2,
            shift: down.3,
        });
    }

    fn shows_any(&self) -> bool {
        Pe::shows_any(self)
    }

    fn pe_flags(&self) -> Flags {
        self.flags()
    }

    fn pe_hazard(&self) -> bool {
        self.hazard()
    }
}

impl<const W: usize, D: Datapath<W>> PeArray<Pe<W, D>> {
    /// An output-stationary array of `cfg.rows() x cfg.cols()` PEs built for `cfg`, each with
    /// the datapath `path` makes for it.
    pub fn new(cfg: &CoreConfig, mut path: impl FnMut() -> Result<D>) -> Result<Self> {
        let cols = cfg.cols();
        PeArray::build(cfg, |r, c| {
            // A moves right and B down through the operand registers.
            let links = PeLinks::in_array(r, c, cols);
            Ok(Pe::new(format!("pe_{r}_{c}"), cfg, path()?)?.with_links(links))
        })
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
        self.comb_edges(
            |r| (a_edge[r].0, a_edge[r].1, side_a[r]),
            |c| (b_edge[c].0, b_edge[c].1, side_b[c]),
            |c| shift[c],
        );
    }

    /// The word leaving the bottom of column `c`'s shift path this cycle (the bottom PE's
    /// accumulator of `set`), from register outputs only.
    #[inline]
    pub fn bottom(&self, c: usize, set: bool) -> u32 {
        self.bottom_pe(c).acc_q(set)
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

impl<const W: usize, D: Datapath<W>> Mesh<W> for OsArray<W, D> {
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
        OsArray::comb(self, a_edge, side_a, b_edge, side_b, shift);
    }

    #[inline]
    fn bottom(&self, c: usize, set: bool) -> u32 {
        OsArray::bottom(self, c, set)
    }

    fn done(&self, row: usize, col: usize) -> bool {
        self.pe(row, col).done()
    }

    fn flags(&self) -> Flags {
        PeArray::flags(self)
    }

    fn hazard(&self) -> Option<String> {
        PeArray::hazard(self)
    }
}

/// The mesh of a dense core: the floating-point or the integer array, chosen from the mode
/// when the core is built.
pub enum DenseMesh<const W: usize> {
    /// `ieee`, `fused` or `nvidia` floating point.
    Fp(OsArray<W, FpPath>),
    /// The same with the AMD CDNA2 input flush (subnormal A and B read as zero).
    FpFlush(OsArray<W, FpPath<true>>),
    /// Integer MMA.
    Int(OsArray<W, IntPath>),
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
