//! What the weight-stationary core carries beside A, by kind of operand supply (the `ws`
//! counterpart of [`crate::hw::extras`]): nothing for a dense supply; for a 2:4 sparse one,
//! each row's selects, on a skew beside A's (`meta_skew`) and then right through the PEs
//! beside A, as in the output-stationary core.
//!
//! What differs from `os` is where a row's side values come from: in `ws` array row `i`
//! works on step `fold * R + i` of K while the other rows work on other steps, so the row of
//! A fed in one cycle carries, in each array row, the selects of that row's own step
//! ([`WsExtras::gather`]). B needs nothing beside it: in sparse mode each PE's weight
//! register holds the dense group of K positions its kept A values select from
//! ([`WsExtras::b_lanes`] lanes).

use super::mesh::WsMesh;
use crate::hw::config::CoreConfig;
use crate::hw::extras::{EdgeExtras, SideStage, SparseSelects};
use crate::hw::feeder::OperandFeeder;
use crate::hw::pe::sparse_b_lanes;
use crate::hw::HwError;

/// A kind of operand supply the weight-stationary core takes (see the module
/// documentation): dense (`()`) or 2:4 sparse ([`SparseSelects`]).
pub trait WsExtras<const W: usize>: EdgeExtras<W, Spec = ()> {
    /// Lanes of a weight register (the datapath's B bus).
    fn b_lanes() -> usize;

    /// The mesh of a core built for `cfg`.
    fn ws_mesh(cfg: &CoreConfig) -> Result<WsMesh<W>, HwError>;

    /// Writes into `out` the side values of row `row` of A of tile `tile` as the array's rows
    /// take it: array row `i` those of step `first + i` (`scratch` holds one step's extras).
    fn gather<F: OperandFeeder<W, Extras = Self>>(
        feeder: &F,
        tile: usize,
        row: usize,
        first: usize,
        scratch: &mut Self,
        out: &mut Self,
    );

    /// The selects at the mesh's left edge, one per array row (none for a dense supply).
    fn meta(stage: &Self::Stage) -> &[u64];
}

/// A dense supply: nothing beside A or B.
impl<const W: usize> WsExtras<W> for () {
    fn b_lanes() -> usize {
        W
    }

    fn ws_mesh(cfg: &CoreConfig) -> Result<WsMesh<W>, HwError> {
        WsMesh::build(cfg)
    }

    #[inline]
    fn gather<F: OperandFeeder<W, Extras = ()>>(
        _feeder: &F,
        _tile: usize,
        _row: usize,
        _first: usize,
        _scratch: &mut (),
        _out: &mut (),
    ) {
    }

    #[inline]
    fn meta(_stage: &Self::Stage) -> &[u64] {
        &[]
    }
}

/// A 2:4 sparse supply: each row's selects beside A.
impl<const W: usize> WsExtras<W> for SparseSelects {
    fn b_lanes() -> usize {
        sparse_b_lanes(W)
    }

    fn ws_mesh(cfg: &CoreConfig) -> Result<WsMesh<W>, HwError> {
        WsMesh::build_sparse(cfg)
    }

    #[inline]
    fn gather<F: OperandFeeder<W, Extras = SparseSelects>>(
        feeder: &F,
        tile: usize,
        row: usize,
        first: usize,
        scratch: &mut SparseSelects,
        out: &mut SparseSelects,
    ) {
        for (i, m) in out.meta.iter_mut().enumerate() {
            feeder.extras(tile, first + i, scratch);
            *m = scratch.meta[row];
        }
    }

    #[inline]
    fn meta(stage: &Self::Stage) -> &[u64] {
        stage.edge_a()
    }
}
