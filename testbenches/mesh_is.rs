//! `mesh_is`: the input-stationary core (`--dataflow is`), 3 x 5 by default: FP16 `ieee`
//! (w = 1), E4M3 `fused` (w = 4), FP16 `nvidia` hopper (w = 16, one block a PE step), FP16
//! `fused` into an FP16 accumulator and S8 integers (w = 4), each over K of several folds (the
//! last one partial) and two tiles of A's rows. Every element of D is checked against the
//! independent reference in the `ws` order (`verify::ws_ref`: each fold through the per-element
//! references from -0, the folds added to C by host arithmetic), which the input-stationary
//! core computes each element in; the cycles against the closed form of `docs/timing.md` for
//! the transposed problem (the stationary schedule with the `N` columns of B streamed and `M`
//! rows of A held), passes of `S = N >= 2R - 1` streamed rows back to back:
//! `2R + passes * N + L + C` with `passes = folds * ceil(M / C)`.
//!
//! The waveform traces the FP16 `ieee` run. In each PE the held registers `a_0`/`av_0` and
//! `a_1`/`av_1` are the two sets of A (column `j` of the array holds row `m = C t + j` of A, PE
//! `(i, j)` its `w` elements of the fold): the first pass's set loads down the columns in the
//! `R` cycles before the first column of B enters, then stays constant for the whole pass while
//! the next pass's loads into the other set under compute. The columns of B stream right
//! through `b_in` to `b_out` of each row (a new element every cycle, `b_skew` delaying row `i`
//! by `i` cycles, as `a_skew` delays column `j`'s loads by `j`), the partial sums move down one
//! PE a cycle (`psum_in` of `pe_<i>_<j>` is `psum` of `pe_<i-1>_<j>`, `psum_vld` beside it)
//! into the accumulator block below the array (`accum`, a memory `col_<j>` a column), which
//! adds the folds and C; the output registers `d_out_<j>` then hold a column of D, `D[m][n]`
//! for the held rows `m` and one `n` a cycle (the run loop transposes it).


use crate::hw::Dataflow;
use crate::tb::stationary::run_stationary;
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str =
    "input-stationary 3x5: held A, streamed B, folds, accumulator block; 5 modes vs verify::ws_ref";

/// The testbench builds its cores through [`Bench::array`] (`tcrtl tb run --rows R --cols C`).
pub const TAKES_ARRAY: bool = true;

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    run_stationary(tb, Dataflow::Is, (3, 5), 500)
}
