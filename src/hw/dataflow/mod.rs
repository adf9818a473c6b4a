//! The stationary-operand dataflows as implementations of one trait, [`Hold`]: what a PE of
//! the stationary core ([`crate::hw::ws`]: PE shell, array, controller, accumulator block,
//! top) keeps in its registers while the other operand streams through it, and how the two
//! meet the datapath ([`crate::hw::pe::Datapath`]), which multiplies A by B whichever of them
//! stands still.
//!
//! | dataflow | marker          | held in the PE (`<held>_0`, `<held>_1`) | streams right (`<stream>_out`) |
//! |----------|-----------------|-----------------------------------------|--------------------------------|
//! | `ws`     | [`ws::Weights`] | B (`w_*`), an MX B scale beside it      | A, a 2:4 row's selects or A's MX scale beside it |
//! | `is`     | [`is::Inputs`]  | A (`a_*`), a 2:4 row's selects or A's MX scale beside it | B (`b_*`), B's MX scale beside it |
//!
//! Partial sums move down the columns in both; the block below the array adds the K-folds
//! and C. The choice is a type, made once when the core is built (as the lane count `W` is),
//! so no PE tests its dataflow in the clock loop.

pub mod is;
pub mod ws;

use crate::hw::config::{CoreConfig, Dataflow};
use crate::hw::pe::Datapath;
use crate::numerics::format::Format;
use crate::rtl::{Value, Wide};

/// What a stationary PE keeps and what streams through it (see the module documentation).
/// `D` is the PE's datapath.
pub trait Hold<const W: usize>: Sized + 'static {
    /// The dataflow this is.
    const DATAFLOW: Dataflow;
    /// The streaming operand's name in the waves: its input `<stream>_in`, its register to
    /// the right `<stream>_out`, its control bundle `<stream>_ctl`.
    const STREAM: &'static str;
    /// The held operand's name in the waves: its two registers `<held>_0`, `<held>_1`, their
    /// valid bits `<held>v_0`, `<held>v_1`.
    const HELD: &'static str;
    /// Whether the array's output rows are columns of D (the array holds rows of A in its
    /// columns and computes `D^T`; [`crate::hw::CoreTop::d_columns`]).
    const D_COLUMNS: bool;
    /// The skew buffer feeding the streaming operand into the array's rows.
    const STREAM_SKEW: &'static str;
    /// The skew buffer feeding the held operand's loads into the array's columns.
    const HELD_SKEW: &'static str;

    /// What travels right beside the streaming operand.
    type StreamSide<D: Datapath<W>>: Copy + Default;
    /// What a PE holds beside each held operand set (a register of the waves where
    /// [`Hold::held_side`] names one), as its code.
    type HeldSide: Value + Copy + Default + std::fmt::Debug + PartialEq;

    /// The streaming operand's format.
    fn stream_fmt(cfg: &CoreConfig) -> Format;
    /// The held operand's format.
    fn held_fmt(cfg: &CoreConfig) -> Format;
    /// Lanes of the streaming bus, given the datapath's B bus lanes `b_lanes`.
    fn stream_lanes(b_lanes: usize) -> usize;
    /// Lanes of a held register, given the datapath's B bus lanes `b_lanes`.
    fn held_lanes(b_lanes: usize) -> usize;
    /// Whether datapath `D` has a side value held with each set (constant for a datapath).
    fn holds_side<D: Datapath<W>>() -> bool;
    /// The name and width of the side register held with each set (`<held>_<name>_<set>`),
    /// if datapath `D` holds one.
    fn held_side<D: Datapath<W>>(cfg: &CoreConfig) -> Option<(&'static str, u32)>;
    /// The held side value of a load's side code.
    fn held_code(code: u64) -> Self::HeldSide;
    /// The streaming side value of an edge's side code.
    fn stream_code<D: Datapath<W>>(code: u64) -> Self::StreamSide<D>;
    /// The datapath's side registers take this cycle's values: the streaming side from the
    /// left and the side held with the set the row multiplies by.
    fn pass<D: Datapath<W>>(path: &mut D, stream: Self::StreamSide<D>, held: Self::HeldSide);
    /// What leaves to the right beside the streaming operand (a register output).
    fn stream_out<D: Datapath<W>>(path: &D) -> Self::StreamSide<D>;
    /// Stage 1: the streaming lanes times the held set's lanes, A first as the datapath
    /// takes them.
    fn stage1<D: Datapath<W>>(
        path: &mut D,
        stream: &Wide<W>,
        held: &Wide<W>,
        lanes: usize,
        stream_side: Self::StreamSide<D>,
        held_side: Self::HeldSide,
    ) -> D::Stage1;
}
