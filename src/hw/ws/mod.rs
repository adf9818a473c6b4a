//! The weight-stationary dataflow (`docs/hardware.md`, "Weight-stationary"): the same PE
//! datapaths as the output-stationary core, arranged so that the weights (B) stay in the PEs
//! and the partial sums move.
//!
//! - [`pe::WsPe`]: A from the left, passed on; double-buffered weight registers loaded
//!   down the column; the partial sum from above plus this PE's products, passed down.
//! - [`mesh::WsMesh`]: the `R x C` array (`pe_<row>_<col>`).
//! - [`controller::WsController`]: the FSM loading weights and feeding rows.
//! - [`accum::Accumulator`]: the block below the array adding the K-folds and C.
//! - [`schedule::WsSchedule`]: passes, their starts, the cycle formula (`docs/timing.md`).
//! - [`extras::WsExtras`]: what a supply carries beside A (nothing, or a 2:4 sparse row's
//!   selects).
//! - [`core::WsCore`]: the top.
//!
//! What it computes is [`crate::numerics::dot::ws`]'s order, bit for bit.

pub mod accum;
pub mod controller;
pub mod core;
pub mod extras;
pub mod mem;
pub mod mesh;
pub mod pe;
pub mod schedule;
pub mod supply;

pub use self::core::{WsBlock, WsCore, WS_BLOCKS};
pub use crate::hw::core::check_ws_config;
pub use extras::WsExtras;
pub use schedule::{WsSchedule, ACC_ROWS};
pub use supply::{WsIo, WsSupply};
