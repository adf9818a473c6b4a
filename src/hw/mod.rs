//! `hw`: the hardware blocks of the tensor core, built on the cycle engine ([`crate::rtl`])
//! and computing through the numerics stage functions ([`crate::numerics`]).
//!
//! Hierarchy (Gemmini-style, see `docs/hardware.md`):
//! - [`pe::Pe`]: one processing element: operands in from the left (A) and top (B), passed on
//!   through registers; a two-stage dot-product datapath ([`pe::Datapath`]: floating point,
//!   integer, 2:4 sparse, MX; chosen when the core is built) of width `W` into one
//!   of two FP32 accumulators (double buffering); a column shift path for C preload and drain.
//! - [`mesh::Mesh`]: the output-stationary array (`pe_<row>_<col>`; 4 x 4 today), wiring
//!   neighbours.
//! - [`skew::Skew`]: shift registers of per-lane depth: A-row and B-column skew at the edges,
//!   the skew of the column shift commands and the de-skew of the drained results.
//! - [`controller::Controller`]: the explicit FSM (Idle, Preload, Compute, Drain, Done).
//! - [`port`]: the operand port, a clocked block with a valid/ready handshake
//!   ([`port::OperandPort`]); [`port::IdealPort`] is its zero-latency implementation over any
//!   [`feeder::OperandFeeder`] (an addressable operand store such as [`feeder::TileBuffer`]).
//! - [`sparse_feeder::SparseTileBuffer`]: the 2:4 sparse feeder (compressed A, its metadata,
//!   `2w` positions of B a step); with it the mesh runs in sparse mode (metadata registers
//!   beside A, B-side multiplexers in every PE; `docs/sparsity.md`).
//! - [`mx_feeder::MxTileBuffer`]: the MX block-scaled feeder (element codes plus E8M0 scales
//!   per K-block of 32); with it the mesh runs in MX mode (scale registers beside A and B,
//!   the block-sum registers of [`pe::MxPath`] in every PE).
//! - [`schedule::Schedule`]: the tiling arithmetic (periods, window starts, the cycle formulas).
//! - [`tensor_core::TensorCore`]: the top (scope `tensor_core`).
//! - [`pe::harness::PeHarness`]: one bare PE under a testbench top (`pe_harness`), driven
//!   cycle by cycle from inputs, for PE-level testbenches and coursework.
//!
//! # Building and stepping the tensor core directly (testbench recipe)
//! ```
//! use tensorcore_rtl::hw::{CoreConfig, TensorCore, TileBuffer};
//! use tensorcore_rtl::numerics::dot::AccMode;
//! use tensorcore_rtl::numerics::format::{FP16, FP32};
//! use tensorcore_rtl::rtl::Simulator;
//!
//! # fn main() -> Result<(), tensorcore_rtl::hw::HwError> {
//! let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
//! // D = A x B + C with M = N = K = 4: A = B = 1.0 everywhere, C = 0.
//! let buf = TileBuffer::new(cfg, 4, 4, 4, vec![0x3C00; 16], vec![0x3C00; 16], vec![0; 16])?;
//! let core = TensorCore::<1>::new(cfg, buf)?;
//! let mut sim = Simulator::new(core)?;
//! sim.reset(1)?;
//! sim.top_mut().start();
//! let mut d = [0u32; 16];
//! while !sim.top().is_done() {
//!     sim.step()?;
//!     if let Some(row) = sim.top().d_row() {
//!         // row.tile, row.row and four FP32 results, one per column
//!         d[row.row * 4..row.row * 4 + 4].copy_from_slice(&row.values);
//!     }
//! }
//! assert_eq!(d, [0x4080_0000; 16]); // 4.0
//! # Ok(()) }
//! ```
//! `gemm::run_clocked` wraps exactly this loop for any M x N x K.

pub mod config;
pub mod controller;
pub mod core;
pub mod dataflow;
pub mod extras;
pub mod feeder;
pub mod mem_port;
pub mod memory;
pub mod mesh;
pub mod mx_feeder;
pub mod pe;
pub mod port;
pub mod schedule;
pub mod skew;
pub mod sparse_feeder;
pub mod tensor_core;
pub mod wave_filter;
pub mod ws;

pub use self::core::{CoreTop, DRow};
pub use config::MxSpec;
pub use config::{CoreConfig, Dataflow, MAX_ARRAY};
pub use extras::{BlockScales, EdgeExtras, SparseSelects};
pub use feeder::{LaneGroup, OperandFeeder, TileBuffer, Traffic};
pub use mem_port::{MemLayout, MemPortConfig, MemoryPort};
pub use mx_feeder::{MxTileBuffer, MX_BLOCK};
pub use port::{IdealPort, OperandPort, PortIo, StepOperands};
pub use schedule::Schedule;
pub use sparse_feeder::SparseTileBuffer;
pub use tensor_core::{Block, TensorCore, BLOCKS};

use crate::rtl::RtlError;

/// Evaluates `$body` with the const generic `$W` bound to the runtime PE width `$w`
/// (1, 2, 4, 8, 16 or 32): the one place where a configured width becomes a compile-time lane
/// count. Any other width gives `Err(HwError::Unsupported)`.
macro_rules! dispatch_width {
    ($w:expr, $W:ident => $body:expr) => {
        $crate::hw::dispatch_widths!($w, $W => $body; 1, 2, 4, 8, 16, 32)
    };
}

/// As [`dispatch_width!`], for the widths a block-scaled block can have (16: NVFP4; 32: the
/// MX formats): the stationary cores hold one K-block a PE step, so a block-scaled stationary
/// core is built at these two widths only (any other is an error, as there).
macro_rules! dispatch_block_width {
    ($w:expr, $W:ident => $body:expr) => {
        $crate::hw::dispatch_widths!($w, $W => $body; 16, 32)
    };
}

/// The body of [`dispatch_width!`] and [`dispatch_block_width!`]: `$body` with `$W` bound to
/// whichever of the listed widths `$w` is, `Err(HwError::Unsupported)` for any other.
macro_rules! dispatch_widths {
    ($w:expr, $W:ident => $body:expr; $($n:literal),+) => {
        match $w {
            $(
                $n => {
                    const $W: usize = $n;
                    $body
                }
            )+
            w => Err($crate::hw::HwError::Unsupported(format!("width {w}"))),
        }
    };
}

pub(crate) use dispatch_block_width;
pub(crate) use dispatch_width;
pub(crate) use dispatch_widths;

/// Rows of the PE mesh.
pub const ROWS: usize = 4;
/// Columns of the PE mesh.
pub const COLS: usize = 4;

/// The PE pipeline latency `L`: clock cycles a step spends in the PE beyond the single cycle
/// of a classic systolic MAC. The PE has two stages (1: multiply, registered; 2: align, add,
/// normalise and round into the accumulator), so `L = 1`. A tile of `T` steps finishes in
/// `T + R + C - 2 + L` cycles (see [`schedule::Schedule::tile_cycles`]).
pub const PIPELINE_LATENCY: u64 = 1;

/// Errors of the hardware model.
#[derive(Debug, thiserror::Error)]
pub enum HwError {
    /// The cycle engine failed (elaboration, watchdog, trace I/O).
    #[error(transparent)]
    Rtl(#[from] RtlError),
    /// The configuration cannot be built in hardware.
    #[error("unsupported on the tensor core: {0}")]
    Unsupported(String),
    /// A problem's matrices do not match its shape.
    #[error("{matrix} must hold {expected} elements but holds {len}")]
    Shape {
        /// `A`, `B` or `C`.
        matrix: &'static str,
        /// Elements expected.
        expected: usize,
        /// Elements found.
        len: usize,
    },
    /// A PE saw the column shift and its own accumulation write the same accumulator set in
    /// one cycle (a schedule bug; never expected).
    #[error("accumulator hazard in {pe}")]
    Hazard {
        /// The PE's instance name.
        pe: String,
    },
    /// The memory system stopped the run (an mbarrier misuse, a refused TMA command...), at
    /// the cycle the message names.
    #[error("{0}")]
    Memory(String),
    /// The run did not finish in the expected number of cycles.
    #[error("tensor core did not finish within {0} cycles")]
    Timeout(u64),
}
