//! The weight-stationary mesh (scope `mesh`, PEs `pe_<row>_<col>`): each PE's A input is its
//! left neighbour's `a_out`, its partial sum from above its upper neighbour's `psum`, and its
//! weight load its upper neighbour's weight register of the loading set. So A moves right,
//! partial sums and loading weights move down, one PE a cycle; the column's load enable and
//! set (as the output-stationary shift command) reach every PE of the column together.

use super::pe::{WIn, WsPe};
use crate::hw::config::CoreConfig;
use crate::hw::dataflow::ws::Weights;
use crate::hw::dataflow::Hold;
use crate::hw::pe::{fp, ACtl, Datapath, FpPath, IntPath};
use crate::hw::HwError;
use crate::numerics::dot::AccMode;
use crate::numerics::flags::Flags;
use crate::rtl::{Module, Result, Visitor, Wide};

/// The stationary PE array of one datapath `D` (holding what `S` holds): `rows x cols` PEs,
/// row-major.
pub struct WsArray<const W: usize, D: Datapath<W>, S: Hold<W> = Weights> {
    rows: usize,
    cols: usize,
    pes: Vec<WsPe<W, D, S>>,
}

impl<const W: usize, D: Datapath<W>, S: Hold<W>> WsArray<W, D, S> {
    /// An array of `cfg.rows() x cfg.cols()` PEs, each with the datapath `path` makes.
    pub fn new(cfg: &CoreConfig, mut path: impl FnMut() -> Result<D>) -> Result<Self> {
        let (rows, cols) = (cfg.rows(), cfg.cols());
        let mut pes = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            for c in 0..cols {
                pes.push(WsPe::new(format!("pe_{r}_{c}"), cfg, path()?)?);
            }
        }
        Ok(Self { rows, cols, pes })
    }

    /// The PE at (`row`, `col`).
    pub fn pe(&self, row: usize, col: usize) -> &WsPe<W, D, S> {
        &self.pes[row * self.cols + col]
    }

    /// The combinational phase: `a_edge[r]` enters row `r` at the left, beside it
    /// `side_edge(r)` (the row's side value: a sparse row's selects); `w_edge[c]` is column
    /// `c`'s weight load (its value enters the top PE); `top` is the partial sum entering
    /// the top of every column (the identity), carrying a row whenever the top PE's A does.
    #[inline]
    pub fn comb(
        &mut self,
        a_edge: &[(Wide<W>, ACtl)],
        side_edge: impl Fn(usize) -> S::StreamSide<D>,
        w_edge: &[WIn<W, S::HeldSide>],
        top: u32,
    ) {
        let cols = self.cols;
        let mut above: &[WsPe<W, D, S>] = &[];
        let mut rest = &mut self.pes[..];
        for (r, &a_left) in a_edge[..self.rows].iter().enumerate() {
            let (row, below) = std::mem::take(&mut rest).split_at_mut(cols);
            for (c, &wl_top) in w_edge[..cols].iter().enumerate() {
                let (left, here) = row.split_at_mut(c);
                let ((a, ctl), side) = match left.last() {
                    None => (a_left, side_edge(r)),
                    Some(left) => (left.a_out(), left.side_out()),
                };
                let (psum_in, wl) = match above.get(c) {
                    // The top PE: the identity, carrying the row its A carries.
                    None => (top, wl_top),
                    Some(up) => {
                        let (value, valid) = up.weight(wl_top.set);
                        (
                            up.psum().0,
                            WIn {
                                value,
                                valid,
                                side: up.weight_side(wl_top.set),
                                ..wl_top
                            },
                        )
                    }
                };
                here[0].comb(a, ctl, side, psum_in, wl);
            }
            above = row;
            rest = below;
        }
    }

    /// Declares (or not) every PE's energy probes ([`WsPe::set_energy_probes`]).
    pub fn set_energy_probes(&mut self, on: bool) {
        for pe in &mut self.pes {
            pe.set_energy_probes(on);
        }
    }

    /// The partial sum leaving the bottom of column `c` (register outputs).
    #[inline]
    pub fn bottom(&self, c: usize) -> (u32, bool) {
        self.pes[(self.rows - 1) * self.cols + c].psum()
    }

    /// OR of the IEEE flags every PE raised.
    pub fn flags(&self) -> Flags {
        self.pes.iter().fold(Flags::NONE, |f, p| f | p.flags())
    }

    /// The name of a PE whose weight load hit the set in use, if any.
    pub fn hazard(&self) -> Option<String> {
        self.pes
            .iter()
            .find(|p| p.hazard())
            .map(|p| p.name().to_string())
    }
}

impl<const W: usize, D: Datapath<W>, S: Hold<W>> Module for WsArray<W, D, S> {
    fn name(&self) -> &str {
        "mesh"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for pe in &mut self.pes {
            v.child(pe);
        }
    }
}

/// What enters each array row beside the streaming operand, as
/// [`StationaryMesh::comb_edges`] takes it.
#[derive(Clone, Copy, Debug)]
pub enum RowSides<'a> {
    /// Nothing (a dense mesh).
    None,
    /// Each row's 2:4 selects.
    Meta(&'a [u64]),
    /// Each row's block scale code.
    Scale(&'a [u8]),
}

impl RowSides<'_> {
    /// The code entering row `r` (0 for none, or a row past the slice).
    #[inline(always)]
    fn code(&self, r: usize) -> u64 {
        match *self {
            RowSides::None => 0,
            RowSides::Meta(m) => m.get(r).copied().unwrap_or(0),
            RowSides::Scale(x) => x.get(r).map_or(0, |&c| u64::from(c)),
        }
    }
}

/// What the stationary core asks of its PE array, whatever datapath the array's PEs have:
/// the combinational phase from the array's edges, the partial sums leaving the bottom, and
/// the sticky flags and hazard. Each kind of operand supply builds the array it needs
/// ([`super::WsExtras::Array`]): the dense datapaths' [`WsMesh`], or one [`WsArray`] of the
/// 2:4 sparse or block-scaled datapath, so a core is never built with an array it cannot feed.
pub trait StationaryMesh<const W: usize, S: Hold<W>>: Module {
    /// The combinational phase: `a_edge[r]` enters row `r` at the left with `sides`' code for
    /// row `r` beside it (a row past the slice, or a kind the array does not take, enters 0);
    /// `w_edge[c]` is column `c`'s load; `top` enters the top of every column.
    fn comb_edges(
        &mut self,
        a_edge: &[(Wide<W>, ACtl)],
        sides: RowSides<'_>,
        w_edge: &[WIn<W, S::HeldSide>],
        top: u32,
    );
    /// The partial sum leaving the bottom of column `c` and whether it carries a row.
    fn bottom_psum(&self, c: usize) -> (u32, bool);
    /// Declares (or not) every PE's energy probes.
    fn energy_probes(&mut self, on: bool);
    /// OR of the IEEE flags every PE raised.
    fn pe_flags(&self) -> Flags;
    /// The name of a PE whose load hit the set in use, if any.
    fn pe_hazard(&self) -> Option<String>;
}

impl<const W: usize, D: Datapath<W>, S: Hold<W>> StationaryMesh<W, S> for WsArray<W, D, S> {
    #[inline]
    fn comb_edges(
        &mut self,
        a_edge: &[(Wide<W>, ACtl)],
        sides: RowSides<'_>,
        w_edge: &[WIn<W, S::HeldSide>],
        top: u32,
    ) {
        self.comb(a_edge, |r| S::stream_code(sides.code(r)), w_edge, top)
    }
    #[inline]
    fn bottom_psum(&self, c: usize) -> (u32, bool) {
        self.bottom(c)
    }
    fn energy_probes(&mut self, on: bool) {
        self.set_energy_probes(on)
    }
    fn pe_flags(&self) -> Flags {
        self.flags()
    }
    fn pe_hazard(&self) -> Option<String> {
        self.hazard()
    }
}

/// The dense stationary mesh (holding what `S` holds): floating point, with or without the
/// CDNA2 input flush, or integer, chosen from the mode when the core is built.
pub enum WsMesh<const W: usize, S: Hold<W> = Weights> {
    /// `ieee`, `fused` or `nvidia` floating point.
    Fp(WsArray<W, FpPath, S>),
    /// The same with the AMD CDNA2 input flush (subnormal A and B read as zero).
    FpFlush(WsArray<W, FpPath<true>, S>),
    /// Integer MMA.
    Int(WsArray<W, IntPath, S>),
}

macro_rules! each_ws_array {
    ($mesh:expr, $a:ident => $body:expr) => {
        match $mesh {
            WsMesh::Fp($a) => $body,
            WsMesh::FpFlush($a) => $body,
            WsMesh::Int($a) => $body,
        }
    };
}

impl<const W: usize, S: Hold<W>> WsMesh<W, S> {
    /// The mesh of a dense core built for `cfg`: the datapath of `cfg.mode`.
    pub fn build(cfg: &CoreConfig) -> std::result::Result<Self, HwError> {
        Ok(match cfg.mode {
            AccMode::Int(im) => WsMesh::Int(WsArray::new(cfg, || IntPath::new(im))?),
            _ if fp::flushes_inputs(cfg) => {
                WsMesh::FpFlush(WsArray::new(cfg, || FpPath::new(cfg))?)
            }
            m if fp::is_fp(&m) => WsMesh::Fp(WsArray::new(cfg, || FpPath::new(cfg))?),
            m => return Err(HwError::Unsupported(format!("a core in {} mode", m.name()))),
        })
    }
}

impl<const W: usize, S: Hold<W>> StationaryMesh<W, S> for WsMesh<W, S> {
    #[inline]
    fn comb_edges(
        &mut self,
        a_edge: &[(Wide<W>, ACtl)],
        sides: RowSides<'_>,
        w_edge: &[WIn<W, S::HeldSide>],
        top: u32,
    ) {
        each_ws_array!(self, a => a.comb_edges(a_edge, sides, w_edge, top))
    }
    #[inline]
    fn bottom_psum(&self, c: usize) -> (u32, bool) {
        each_ws_array!(self, a => a.bottom(c))
    }
    fn energy_probes(&mut self, on: bool) {
        each_ws_array!(self, a => a.set_energy_probes(on))
    }
    fn pe_flags(&self) -> Flags {
        each_ws_array!(self, a => a.flags())
    }
    fn pe_hazard(&self) -> Option<String> {
        each_ws_array!(self, a => a.hazard())
    }
}

impl<const W: usize, S: Hold<W>> Module for WsMesh<W, S> {
    fn name(&self) -> &str {
        "mesh"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        each_ws_array!(self, a => a.visit(v))
    }
}
