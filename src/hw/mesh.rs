//! The 4 x 4 output-stationary mesh (scope `mesh`, PEs `pe_<row>_<col>`): wires each PE's
//! A input to its left neighbour's `a_out` register, its B input to its upper neighbour's
//! `b_out` register and its shift input to its upper neighbour's idle accumulator. Values
//! therefore move one PE per cycle: A right, B down, the drained results down. In 2:4 sparse
//! mode ([`Mesh::with_mode`]) each PE's metadata input is its left neighbour's `meta_out`
//! register, so the metadata moves right with its A values. In MX mode
//! ([`Mesh::with_fronts`]) the block scales move the same way: A's right through each
//! PE's `a_scale` register, B's down through `b_scale`.

use super::mx_feeder::MxSpec;
use super::pe::{Pe, ShiftIn};
use super::pe_datapath::CoreConfig;
use super::{COLS, ROWS};
use crate::rtl::{Module, Result, Visitor, Wide};

/// The PE array.
pub struct Mesh<const W: usize> {
    pes: Vec<Pe<W>>,
}

impl<const W: usize> Mesh<W> {
    /// A mesh of `ROWS x COLS` PEs built for `cfg`.
    pub fn new(cfg: CoreConfig) -> Result<Self> {
        Self::with_mode(cfg, false)
    }

    /// A mesh of `ROWS x COLS` PEs built for `cfg`, in 2:4 sparse mode if `sparse`.
    pub fn with_mode(cfg: CoreConfig, sparse: bool) -> Result<Self> {
        Self::with_fronts(cfg, sparse, None)
    }

    /// A mesh of `ROWS x COLS` PEs built for `cfg`, in 2:4 sparse mode if `sparse`, in MX
    /// block-scaled mode if `mx` names what the core is built for.
    pub fn with_fronts(cfg: CoreConfig, sparse: bool, mx: Option<MxSpec>) -> Result<Self> {
        let mut pes = Vec::with_capacity(ROWS * COLS);
        for r in 0..ROWS {
            for c in 0..COLS {
                pes.push(Pe::with_fronts(format!("pe_{r}_{c}"), cfg, sparse, mx)?);
            }
        }
        Ok(Self { pes })
    }

    /// The PE at (`row`, `col`).
    pub fn pe(&self, row: usize, col: usize) -> &Pe<W> {
        &self.pes[row * COLS + col]
    }

    /// Every PE, row-major.
    pub fn pes(&self) -> &[Pe<W>] {
        &self.pes
    }

    /// The combinational phase. `a_edge[r]` enters row `r` at the left, `b_edge[c]` and
    /// `shift[c]` enter column `c` at the top (the shift command is a column-wide enable; its
    /// `value` is the C word entering the top PE). Returns, per column, the word leaving the
    /// bottom of the shift path this cycle (the bottom PE's accumulator of the shifting set).
    #[inline]
    pub fn comb(
        &mut self,
        a_edge: &[(Wide<W>, u16); ROWS],
        b_edge: &[(Wide<W>, bool); COLS],
        shift: &[ShiftIn; COLS],
    ) -> [u32; COLS] {
        self.comb_with_meta(a_edge, &[0; ROWS], b_edge, shift)
    }

    /// The words leaving the bottom of each column's shift path this cycle (the bottom PE's
    /// accumulator of the set `shift[c]` names), from register outputs only.
    #[inline]
    pub fn bottom(&self, shift: &[ShiftIn; COLS]) -> [u32; COLS] {
        let mut bottom = [0u32; COLS];
        for (c, out) in bottom.iter_mut().enumerate() {
            *out = self.pes[(ROWS - 1) * COLS + c].acc_q(shift[c].set);
        }
        bottom
    }

    /// [`Mesh::comb`] with the 2:4 metadata entering each row at the left beside A
    /// (`meta_edge[r]`; ignored by a dense mesh).
    #[inline]
    pub fn comb_with_meta(
        &mut self,
        a_edge: &[(Wide<W>, u16); ROWS],
        meta_edge: &[u64; ROWS],
        b_edge: &[(Wide<W>, bool); COLS],
        shift: &[ShiftIn; COLS],
    ) -> [u32; COLS] {
        self.comb_full(a_edge, meta_edge, &[0; ROWS], b_edge, &[0; COLS], shift)
    }

    /// [`Mesh::comb_with_meta`] with the block scale codes entering each row at the left
    /// beside A (`a_scale_edge[r]`) and each column at the top beside B (`b_scale_edge[c]`);
    /// ignored unless the mesh is in MX mode.
    #[inline]
    #[allow(clippy::needless_range_loop)] // (r, c) index the array: clearer as coordinates
    pub fn comb_full(
        &mut self,
        a_edge: &[(Wide<W>, u16); ROWS],
        meta_edge: &[u64; ROWS],
        a_scale_edge: &[u8; ROWS],
        b_edge: &[(Wide<W>, bool); COLS],
        b_scale_edge: &[u8; COLS],
        shift: &[ShiftIn; COLS],
    ) -> [u32; COLS] {
        let bottom = self.bottom(shift);
        for r in 0..ROWS {
            for c in 0..COLS {
                let (a, a_ctl, meta, xa) = if c == 0 {
                    (a_edge[r].0, a_edge[r].1, meta_edge[r], a_scale_edge[r])
                } else {
                    let left = &self.pes[r * COLS + c - 1];
                    let (a, a_ctl) = left.a_out();
                    (a, a_ctl, left.meta_out(), left.scales_out().0)
                };
                let (b, b_vld, xb, s) = if r == 0 {
                    (b_edge[c].0, b_edge[c].1, b_scale_edge[c], shift[c])
                } else {
                    let up = &self.pes[(r - 1) * COLS + c];
                    let (b, v) = up.b_out();
                    let s = ShiftIn {
                        value: up.acc_q(shift[c].set),
                        ..shift[c]
                    };
                    (b, v, up.scales_out().1, s)
                };
                self.pes[r * COLS + c].comb_full(a, a_ctl, meta, xa, b, b_vld, xb, s);
            }
        }
        bottom
    }
}

impl<const W: usize> Module for Mesh<W> {
    fn name(&self) -> &str {
        "mesh"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for pe in &mut self.pes {
            v.child(pe);
        }
    }
}
