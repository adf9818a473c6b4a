//! `mesh_ws`: the weight-stationary core (`--dataflow ws`), 4 x 4 by default: FP16 `ieee`
//! (w = 1), E4M3 `fused` (w = 4), FP16 `nvidia` hopper (w = 16, one block a PE step), FP16
//! `fused` into an FP16 accumulator and S8 integers (w = 4), each over K of several folds (the
//! last one partial) and two column tiles. Every element of D is checked against the
//! independent reference in the `ws` order (`verify::ws_ref`: each fold through the per-element
//! references from -0, the folds added to C by host arithmetic), and the cycles against the
//! closed form of `docs/timing.md` for passes of `S >= 2R - 1` rows, which run back to back:
//! `2R + passes * S + L + C`. The waveform traces the FP16 `ieee` run: the first pass's
//! weights loading down the columns for `R` cycles before the first row of A enters, the next
//! pass's weights loading into the other set under compute, partial sums moving down one PE a
//! cycle into the accumulator block.


use crate::hw::Dataflow;
use crate::tb::stationary::run_stationary;
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str =
    "weight-stationary 4x4: preload, folds, accumulator block; 5 modes vs verify::ws_ref";

/// The testbench builds its cores through [`Bench::array`] (`tcrtl tb run --rows R --cols C`).
pub const TAKES_ARRAY: bool = true;

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    run_stationary(tb, Dataflow::Ws, (4, 4), 300)
}
