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

use crate::gemm::{Gemm, Problem};
use crate::hw::{CoreConfig, Dataflow, PIPELINE_LATENCY};
use crate::numerics::dot::{AccMode, Preset};
use crate::numerics::format::{Format, E4M3, FP16, FP32};
use crate::numerics::int::{IntMode, IntOverflow, S8};
use crate::tb::Bench;
use crate::verify::gemm_ref::Reference;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str =
    "input-stationary 3x5: held A, streamed B, folds, accumulator block; 5 modes vs verify::ws_ref";

/// The testbench builds its cores through [`Bench::array`] (`tcrtl tb run --rows R --cols C`).
pub const TAKES_ARRAY: bool = true;

/// One case: its name, the operand format, the mode, the width, the accumulator format and
/// the GPU preset of an `nvidia` mode.
type IsCase = (&'static str, Format, AccMode, usize, Format, Option<Preset>);

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    let hopper = Preset::Hopper
        .params(FP16, FP16)
        .map(AccMode::Nvidia)
        .map_err(|e| e.to_string())?;
    let s8 = IntMode {
        a: S8,
        b: S8,
        overflow: IntOverflow::SatFinite,
    };
    let cases: [IsCase; 5] = [
        ("fp16 ieee", FP16, AccMode::Ieee, 1, FP32, None),
        ("e4m3 fused w4", E4M3, AccMode::Fused, 4, FP32, None),
        ("fp16 nvidia hopper w16", FP16, hopper, 16, FP32, Some(Preset::Hopper)),
        ("fp16 fused w4 -> fp16", FP16, AccMode::Fused, 4, FP16, None),
        ("s8 satfinite w4", S8.container(), AccMode::Int(s8), 4, FP32, None),
    ];
    for (c, &(name, fmt, mode, width, acc, preset)) in cases.iter().enumerate() {
        let base = CoreConfig::new(fmt, fmt, mode, width);
        let base = if acc == FP16 { base.with_acc(acc) } else { base };
        let cfg = tb.array(base.with_array(3, 5).map_err(|e| e.to_string())?)?;
        let cfg = cfg.with_dataflow(Dataflow::Is);
        let (r, cols) = (cfg.rows(), cfg.cols());
        // Columns of B enough for passes back to back (N >= 2R - 1 streamed), K of two and a
        // half folds, M of two tiles of held rows (the second partial).
        let n = 2 * r + 4;
        let k = 2 * r * width + r * width / 2 + 1;
        let m = cols + cols.div_ceil(2);
        let g = Gemm::random(m, n, k, cfg, 500 + c as u64).map_err(|e| e.to_string())?;
        let label = format!("{name} {m}x{n}x{k} on {r}x{cols}");
        let trace = (c == 0).then(|| tb.trace());
        let done = tb
            .run_gemm(Problem::Dense(&g), None, trace.as_ref())
            .map_err(|e| format!("{label}: {e}"))?;
        let run = done.run;
        tb.add_cycles(run.cycles);
        tb.check_waveform(&label, trace.as_ref());

        // docs/timing.md for the transposed problem (N x M x K): passes of S = N streamed
        // columns of B, one per fold and tile of held rows of A, back to back from F_0 = R.
        let folds = k.div_ceil(r * width);
        let passes = (folds * m.div_ceil(cols)) as u64;
        let want_cycles = 2 * r as u64 + passes * n as u64 + PIPELINE_LATENCY + cols as u64;
        tb.check_eq(
            format!("{label}: cycles 2R + passes * N + L + C"),
            run.cycles,
            want_cycles,
        );

        let reference = Reference::for_problem(&g, preset)?;
        let want = reference.ws_gemm(&g, r)?;
        if run.out.d.len() != want.len() {
            return Err(format!("{label}: D has {} elements", run.out.d.len()));
        }
        for (i, (&got, &w)) in run.out.d.iter().zip(&want).enumerate() {
            let what = format!("{label}: D[{}][{}] vs {}", i / n, i % n, reference.ws_name());
            tb.check_bits(what, got, w);
        }
    }
    Ok(())
}
