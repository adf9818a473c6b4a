//! What the weight-stationary core carries beside its operands, by kind of operand supply
//! (the `ws` counterpart of [`crate::hw::extras`]): nothing for a dense supply; for a 2:4
//! sparse one, each row's selects beside A; for a block-scaled (MX) one, each row's A scale
//! beside A and each column's B scale beside the weights it loads.
//!
//! The skews are the output-stationary core's own stages (`meta_skew`; `xa_skew` and
//! `xb_skew`), with A's depths for the rows and B's for the columns. What differs from `os`
//! is where a row's side values come from: in `ws` array row `i` works on step `fold * R + i`
//! of K while the other rows work on other steps, so the row of A fed in one cycle carries, in
//! each array row, the side values of that row's own step ([`WsExtras::gather`]); and B's
//! scale travels down with its weight and stays in the PE with it ([`WsExtras::load`]).

use super::mesh::{RowSides, StationaryMesh, WsArray, WsMesh};
use crate::hw::config::{CoreConfig, MxSpec};
use crate::hw::dataflow::Hold;
use crate::hw::extras::{BlockScales, EdgeExtras, SideStage, SparseSelects};
use crate::hw::feeder::OperandFeeder;
use crate::hw::pe::{sparse_b_lanes, MxPath, Sparse};
use crate::hw::HwError;

/// Where the side values of one cycle's row of A come from: row `row` of tile `tile`, array
/// row `i` at step `first + i`.
#[derive(Clone, Copy, Debug)]
pub struct RowFeed {
    /// The tile of D the row belongs to.
    pub tile: usize,
    /// The row within the tile.
    pub row: usize,
    /// The step of array row 0 (`fold * R`).
    pub first: usize,
}

/// A kind of operand supply the weight-stationary core takes (see the module
/// documentation): dense (`()`), 2:4 sparse ([`SparseSelects`]) or block-scaled
/// ([`BlockScales`]).
pub trait WsExtras<const W: usize>: EdgeExtras<W> {
    /// Lanes of a weight register (the datapath's B bus).
    fn b_lanes() -> usize {
        W
    }

    /// What `ws` adds to the supply's own checks ([`EdgeExtras::check`]).
    fn check_ws(_cfg: &CoreConfig, _spec: &Self::Spec) -> Result<(), HwError> {
        Ok(())
    }

    /// The PE array of a core fed by this kind of supply, its PEs holding what `S` holds.
    type Array<S: Hold<W>>: StationaryMesh<W, S>;

    /// The array of a core built for `cfg` and `spec`.
    fn ws_mesh<S: Hold<W>>(cfg: &CoreConfig, spec: &Self::Spec) -> Result<Self::Array<S>, HwError>;

    /// Writes into `out` the side values beside A of the row `feed` names (zeros if none is
    /// fed this cycle); `scratch` holds one step's extras as the feeder gives them.
    fn gather<F: OperandFeeder<W, Extras = Self>>(
        _feeder: &F,
        _feed: Option<RowFeed>,
        _scratch: &mut Self,
        _out: &mut Self,
    ) {
    }

    /// Writes into `out` the side values beside the weights loaded this cycle, step `step` of
    /// column tile `col_tile` (zeros if none is loaded).
    fn load<F: OperandFeeder<W, Extras = Self>>(
        _feeder: &F,
        _load: Option<(usize, usize)>,
        _scratch: &mut Self,
        _out: &mut Self,
    ) {
    }

    /// Whether the stage's input carries something this cycle (its tag bit).
    fn taken(feed: bool, _load: bool) -> bool {
        feed
    }

    /// What enters each array row beside A (the stage's row outputs).
    fn row_sides(stage: &Self::Stage) -> RowSides<'_>;

    /// The code of the side value reaching the top of column `j` beside its weight (a
    /// block scale; 0 unless MX).
    fn load_side(_stage: &Self::Stage, _j: usize) -> u64 {
        0
    }
}

/// A dense supply: nothing beside A or B.
impl<const W: usize> WsExtras<W> for () {
    type Array<S: Hold<W>> = WsMesh<W, S>;

    fn ws_mesh<S: Hold<W>>(cfg: &CoreConfig, _spec: &()) -> Result<WsMesh<W, S>, HwError> {
        WsMesh::build(cfg)
    }

    #[inline]
    fn row_sides(_stage: &Self::Stage) -> RowSides<'_> {
        RowSides::None
    }
}

/// A 2:4 sparse supply: each row's selects beside A.
impl<const W: usize> WsExtras<W> for SparseSelects {
    fn b_lanes() -> usize {
        sparse_b_lanes(W)
    }

    type Array<S: Hold<W>> = WsArray<W, Sparse<W>, S>;

    fn ws_mesh<S: Hold<W>>(cfg: &CoreConfig, _spec: &()) -> Result<Self::Array<S>, HwError> {
        Ok(WsArray::new(cfg, || Sparse::new(cfg))?)
    }

    #[inline]
    fn gather<F: OperandFeeder<W, Extras = SparseSelects>>(
        feeder: &F,
        feed: Option<RowFeed>,
        scratch: &mut SparseSelects,
        out: &mut SparseSelects,
    ) {
        for (i, m) in out.meta.iter_mut().enumerate() {
            *m = match feed {
                Some(f) => {
                    feeder.row_extras(f.tile, f.row, f.first + i, scratch);
                    scratch.meta[f.row]
                }
                None => 0,
            };
        }
    }

    #[inline]
    fn row_sides(stage: &Self::Stage) -> RowSides<'_> {
        RowSides::Meta(stage.edge_a())
    }
}

/// A block-scaled supply: A's block scale beside each row of A, B's beside each weight.
impl<const W: usize> WsExtras<W> for BlockScales {
    fn check_ws(cfg: &CoreConfig, spec: &MxSpec) -> Result<(), HwError> {
        spec.check_ws_width(cfg.width)
    }

    type Array<S: Hold<W>> = WsArray<W, MxPath, S>;

    fn ws_mesh<S: Hold<W>>(cfg: &CoreConfig, spec: &MxSpec) -> Result<Self::Array<S>, HwError> {
        Ok(WsArray::new(cfg, || MxPath::new(cfg, spec))?)
    }

    #[inline]
    fn gather<F: OperandFeeder<W, Extras = BlockScales>>(
        feeder: &F,
        feed: Option<RowFeed>,
        scratch: &mut BlockScales,
        out: &mut BlockScales,
    ) {
        for (i, x) in out.a.iter_mut().enumerate() {
            *x = match feed {
                Some(f) => {
                    feeder.row_extras(f.tile, f.row, f.first + i, scratch);
                    scratch.a[f.row]
                }
                None => 0,
            };
        }
    }

    #[inline]
    fn load<F: OperandFeeder<W, Extras = BlockScales>>(
        feeder: &F,
        load: Option<(usize, usize)>,
        scratch: &mut BlockScales,
        out: &mut BlockScales,
    ) {
        match load {
            Some((col_tile, step)) => {
                feeder.extras(col_tile, step, scratch);
                out.b.copy_from_slice(&scratch.b);
            }
            None => out.b.fill(0),
        }
    }

    fn taken(feed: bool, load: bool) -> bool {
        feed || load
    }

    #[inline]
    fn row_sides(stage: &Self::Stage) -> RowSides<'_> {
        RowSides::Scale(stage.edge_a())
    }

    #[inline]
    fn load_side(stage: &Self::Stage, j: usize) -> u64 {
        stage.edge_b().get(j).map_or(0, |&c| u64::from(c))
    }
}
