//! Weight-stationary ([`Weights`]): each PE holds `w` elements of B (a 2:4 sparse core's
//! dense groups of four, `2w`; an MX core's B block scale beside them) in its two weight
//! registers; A streams right with what travels beside it (a 2:4 row's selects, A's block
//! scale).

use super::Hold;
use crate::hw::config::{CoreConfig, Dataflow};
use crate::hw::pe::Datapath;
use crate::numerics::format::Format;
use crate::rtl::Wide;

/// The weight-stationary dataflow: B held, A streaming.
#[derive(Clone, Copy, Debug, Default)]
pub struct Weights;

impl<const W: usize> Hold<W> for Weights {
    const DATAFLOW: Dataflow = Dataflow::Ws;
    const STREAM: &'static str = "a";
    const HELD: &'static str = "w";
    const D_COLUMNS: bool = false;
    const STREAM_SKEW: &'static str = "a_skew";
    const HELD_SKEW: &'static str = "w_skew";

    type StreamSide<D: Datapath<W>> = D::SideA;
    type HeldSide = u8;

    #[inline]
    fn stream_fmt(cfg: &CoreConfig) -> Format {
        cfg.fmt_a
    }
    #[inline]
    fn held_fmt(cfg: &CoreConfig) -> Format {
        cfg.fmt_b
    }
    #[inline]
    fn stream_lanes(_b_lanes: usize) -> usize {
        W
    }
    #[inline]
    fn held_lanes(b_lanes: usize) -> usize {
        b_lanes
    }
    #[inline(always)]
    fn holds_side<D: Datapath<W>>() -> bool {
        D::HOLDS_B_SCALE
    }
    fn held_side<D: Datapath<W>>(_cfg: &CoreConfig) -> Option<(&'static str, u32)> {
        // An MX weight's block scale (E8M0 or E4M3 code).
        D::HOLDS_B_SCALE.then_some(("scale", 8))
    }
    #[inline(always)]
    fn held_code(code: u64) -> u8 {
        code as u8
    }
    #[inline(always)]
    fn stream_code<D: Datapath<W>>(code: u64) -> D::SideA {
        D::side_a(code)
    }
    #[inline(always)]
    fn pass<D: Datapath<W>>(path: &mut D, stream: D::SideA, held: u8) {
        path.pass(stream, D::side_b(held));
    }
    #[inline(always)]
    fn stream_out<D: Datapath<W>>(path: &D) -> D::SideA {
        path.side_out().0
    }
    #[inline(always)]
    fn stage1<D: Datapath<W>>(
        path: &mut D,
        stream: &Wide<W>,
        held: &Wide<W>,
        lanes: usize,
        stream_side: D::SideA,
        _held_side: u8,
    ) -> D::Stage1 {
        path.stage1(stream, held, lanes, stream_side)
    }
}
