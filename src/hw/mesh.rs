//! The output-stationary mesh (scope `mesh`, PEs `pe_<row>_<col>`; rows and columns from the
//! configuration): wires each PE's A input to its left neighbour's `a_out` register, its B
//! input to its upper neighbour's `b_out` register and its shift input to its upper
//! neighbour's idle accumulator. Values therefore move one PE per cycle: A right, B down, the
//! drained results down. What travels beside A and B moves the same way: in 2:4 sparse mode
//! each PE's metadata input is its left neighbour's `meta_out` register; in MX mode A's block
//! scales move right through each PE's `a_scale` register and B's down through `b_scale`.
//!
//! [`PeArray`] is the array of one datapath; [`Mesh`] holds the array of the datapath the
//! core was built for, chosen once when it is built, so the clock loop branches on it once
//! per cycle, never per PE.

use super::config::{CoreConfig, MxSpec};
use super::pe::{fp, ACtl, Datapath, FpPath, IntPath, MxPath, Pe, PeIn, ShiftIn, Sparse};
use super::HwError;
use crate::numerics::dot::AccMode;
use crate::numerics::flags::Flags;
use crate::rtl::{Module, Result, Visitor, Wide};

/// The PE array of one datapath `D`: `rows x cols` PEs, row-major.
pub struct PeArray<const W: usize, D: Datapath<W>> {
    rows: usize,
    cols: usize,
    pes: Vec<Pe<W, D>>,
}

impl<const W: usize, D: Datapath<W>> PeArray<W, D> {
    /// An array of `cfg.rows() x cfg.cols()` PEs built for `cfg`, each with the datapath
    /// `path` makes for it.
    pub fn new(cfg: &CoreConfig, mut path: impl FnMut() -> Result<D>) -> Result<Self> {
        let (rows, cols) = (cfg.rows(), cfg.cols());
        let mut pes = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            for c in 0..cols {
                pes.push(Pe::new(format!("pe_{r}_{c}"), cfg, path()?)?);
            }
        }
        Ok(Self { rows, cols, pes })
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
        let cols = self.cols;
        for r in 0..self.rows {
            for c in 0..cols {
                let (a, a_ctl, xa) = if c == 0 {
                    (a_edge[r].0, a_edge[r].1, side_a[r])
                } else {
                    let left = &self.pes[r * cols + c - 1];
                    let (a, a_ctl) = left.a_out();
                    (a, a_ctl, left.side_out().0)
                };
                let (b, b_vld, xb, s) = if r == 0 {
                    (b_edge[c].0, b_edge[c].1, side_b[c], shift[c])
                } else {
                    let up = &self.pes[(r - 1) * cols + c];
                    let (b, v) = up.b_out();
                    let s = ShiftIn {
                        value: up.acc_q(shift[c].set),
                        ..shift[c]
                    };
                    (b, v, up.side_out().1, s)
                };
                self.pes[r * cols + c].comb(PeIn {
                    a,
                    a_ctl,
                    side_a: xa,
                    b,
                    b_vld,
                    side_b: xb,
                    shift: s,
                });
            }
        }
    }

    /// The word leaving the bottom of column `c`'s shift path this cycle (the bottom PE's
    /// accumulator of `set`), from register outputs only.
    #[inline]
    pub fn bottom(&self, c: usize, set: bool) -> u32 {
        self.pes[(self.rows - 1) * self.cols + c].acc_q(set)
    }

    fn visit_pes<V: Visitor>(&mut self, v: &mut V) {
        for pe in &mut self.pes {
            v.child(pe);
        }
    }
}

/// The PE array of the datapath the core was built for.
pub enum Mesh<const W: usize> {
    /// `ieee`, `fused` or `nvidia` floating point.
    Fp(PeArray<W, FpPath>),
    /// Integer MMA.
    Int(PeArray<W, IntPath>),
    /// 2:4 sparse floating point (metadata beside A).
    Sparse(PeArray<W, Sparse<W>>),
    /// MX block-scaled (block scales beside A and B).
    Mx(PeArray<W, MxPath>),
}

/// What enters the mesh's edges in one cycle besides the operands: the side values of every
/// datapath (each datapath reads its own).
#[derive(Clone, Copy, Debug)]
pub struct EdgeSides<'a> {
    /// 2:4 metadata per row.
    pub meta: &'a [u64],
    /// A's block scale per row.
    pub a_scale: &'a [u8],
    /// B's block scale per column.
    pub b_scale: &'a [u8],
}

/// Applies `$body` to the array of whichever datapath the mesh holds.
macro_rules! each_array {
    ($mesh:expr, $a:ident => $body:expr) => {
        match $mesh {
            Mesh::Fp($a) => $body,
            Mesh::Int($a) => $body,
            Mesh::Sparse($a) => $body,
            Mesh::Mx($a) => $body,
        }
    };
}

impl<const W: usize> Mesh<W> {
    /// The mesh of a core built for `cfg`: 2:4 sparse if `sparse`, MX block-scaled if `mx`
    /// names what it is built for, else the datapath of `cfg.mode`.
    pub fn build(
        cfg: &CoreConfig,
        sparse: bool,
        mx: Option<MxSpec>,
    ) -> std::result::Result<Self, HwError> {
        Ok(match (mx, sparse, cfg.mode) {
            (Some(spec), false, _) => Mesh::Mx(PeArray::new(cfg, || MxPath::new(cfg, &spec))?),
            (None, true, m) if fp::is_fp(&m) => {
                Mesh::Sparse(PeArray::new(cfg, || Sparse::new(cfg))?)
            }
            (None, false, AccMode::Int(im)) => Mesh::Int(PeArray::new(cfg, || IntPath::new(im))?),
            (None, false, m) if fp::is_fp(&m) => Mesh::Fp(PeArray::new(cfg, || FpPath::new(cfg))?),
            (mx, sparse, m) => {
                return Err(HwError::Unsupported(format!(
                    "a{}{} core in {} mode",
                    if sparse { " 2:4 sparse" } else { "" },
                    if mx.is_some() { " block-scaled" } else { "" },
                    m.name()
                )))
            }
        })
    }

    /// The combinational phase (see [`PeArray::comb`]).
    #[inline]
    pub fn comb(
        &mut self,
        a_edge: &[(Wide<W>, ACtl)],
        sides: EdgeSides<'_>,
        b_edge: &[(Wide<W>, bool)],
        shift: &[ShiftIn],
    ) {
        const NONE: [(); 64] = [(); 64];
        match self {
            Mesh::Fp(a) => a.comb(a_edge, &NONE, b_edge, &NONE, shift),
            Mesh::Int(a) => a.comb(a_edge, &NONE, b_edge, &NONE, shift),
            Mesh::Sparse(a) => a.comb(a_edge, sides.meta, b_edge, &NONE, shift),
            Mesh::Mx(a) => a.comb(a_edge, sides.a_scale, b_edge, sides.b_scale, shift),
        }
    }

    /// The word leaving the bottom of column `c`'s shift path this cycle (the bottom PE's
    /// accumulator of `set`), from register outputs only.
    #[inline]
    pub fn bottom(&self, c: usize, set: bool) -> u32 {
        each_array!(self, a => a.bottom(c, set))
    }

    /// True if the PE at (`row`, `col`) finished a tile's last step in the last cycle.
    pub fn done(&self, row: usize, col: usize) -> bool {
        each_array!(self, a => a.pe(row, col).done())
    }

    /// OR of the IEEE flags every PE raised.
    pub fn flags(&self) -> Flags {
        each_array!(self, a => a.pes().iter().fold(Flags::NONE, |f, p| f | p.flags()))
    }

    /// The name of a PE that saw an accumulator hazard, if any.
    pub fn hazard(&self) -> Option<String> {
        each_array!(self, a => a
            .pes()
            .iter()
            .find(|p| p.hazard())
            .map(|p| p.name().to_string()))
    }
}

impl<const W: usize> Module for Mesh<W> {
    fn name(&self) -> &str {
        "mesh"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        each_array!(self, a => a.visit_pes(v))
    }
}
