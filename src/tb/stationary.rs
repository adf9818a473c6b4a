//! Helpers of the stationary-dataflow testbenches (`mesh_ws`, `mesh_is`): five modes (FP16
//! `ieee` w = 1, E4M3 `fused` w = 4, FP16 `nvidia` hopper w = 16, FP16 `fused` w = 4 into
//! FP16, S8 satfinite w = 4) over K of two and a half folds, a streamed dimension long enough
//! for passes back to back (`S = 2R + 4 >= 2R - 1`) and a held dimension of two tiles (the
//! second partial): `ws` streams M rows of A and holds N columns of B, `is` streams N columns
//! of B and holds M rows of A. Every element of D is checked against the independent
//! reference in the `ws` order (`verify::ws_ref`; `is` adds in the same order), and the cycles
//! against `docs/timing.md`'s closed form for passes back to back, `2R + passes * S + L + C`
//! with `passes = folds * ceil(held / C)`. The first case is traced.

use super::Bench;
use crate::dispatch::Problem;
use crate::gemm::Gemm;
use crate::hw::{CoreConfig, Dataflow, PIPELINE_LATENCY};
use crate::numerics::dot::{AccMode, Preset};
use crate::numerics::format::{Format, E4M3, FP16, FP32};
use crate::numerics::int::{IntMode, IntOverflow, S8};
use crate::verify::gemm_ref::Reference;

/// One case: its name, the operand format, the mode, the width, the accumulator format and
/// the GPU preset of an `nvidia` mode.
type Case = (&'static str, Format, AccMode, usize, Format, Option<Preset>);

/// Runs the five cases on a stationary core of `dataflow` (`array` its default size, which
/// [`Bench::array`] may override), the problems drawn from seeds `seed, seed + 1, ..`.
pub fn run_stationary(
    tb: &mut Bench,
    dataflow: Dataflow,
    array: (usize, usize),
    seed: u64,
) -> Result<(), String> {
    let hopper = Preset::Hopper
        .params(FP16, FP16)
        .map(AccMode::Nvidia)
        .map_err(|e| e.to_string())?;
    let s8 = IntMode {
        a: S8,
        b: S8,
        overflow: IntOverflow::SatFinite,
    };
    let cases: [Case; 5] = [
        ("fp16 ieee", FP16, AccMode::Ieee, 1, FP32, None),
        ("e4m3 fused w4", E4M3, AccMode::Fused, 4, FP32, None),
        (
            "fp16 nvidia hopper w16",
            FP16,
            hopper,
            16,
            FP32,
            Some(Preset::Hopper),
        ),
        ("fp16 fused w4 -> fp16", FP16, AccMode::Fused, 4, FP16, None),
        (
            "s8 satfinite w4",
            S8.container(),
            AccMode::Int(s8),
            4,
            FP32,
            None,
        ),
    ];
    for (c, &(name, fmt, mode, width, acc, preset)) in cases.iter().enumerate() {
        let base = CoreConfig::new(fmt, fmt, mode, width);
        let base = if acc == FP16 {
            base.with_acc(acc)
        } else {
            base
        };
        let sized = base
            .with_array(array.0, array.1)
            .map_err(|e| e.to_string())?;
        let cfg = tb.array(sized)?.with_dataflow(dataflow);
        let (r, cols) = (cfg.rows(), cfg.cols());
        let streamed = 2 * r + 4;
        let k = 2 * r * width + r * width / 2 + 1;
        let held = cols + cols.div_ceil(2);
        let (m, n) = match dataflow {
            Dataflow::Is => (held, streamed),
            _ => (streamed, held),
        };
        let g = Gemm::random(m, n, k, cfg, seed + c as u64).map_err(|e| e.to_string())?;
        let label = format!("{name} {m}x{n}x{k} on {r}x{cols}");
        let trace = (c == 0).then(|| tb.trace());
        let done = tb
            .run_gemm(Problem::Dense(&g), None, trace.as_ref())
            .map_err(|e| format!("{label}: {e}"))?;
        let run = done.run;
        tb.add_cycles(run.cycles);
        tb.check_waveform(&label, trace.as_ref());

        let folds = k.div_ceil(r * width);
        let passes = (folds * held.div_ceil(cols)) as u64;
        let want_cycles = 2 * r as u64 + passes * streamed as u64 + PIPELINE_LATENCY + cols as u64;
        tb.check_eq(
            format!("{label}: cycles 2R + passes * S + L + C"),
            run.cycles,
            want_cycles,
        );

        let reference = Reference::for_problem(&g, preset)?;
        let want = reference.ws_gemm(&g, r)?;
        if run.out.d.len() != want.len() {
            return Err(format!("{label}: D has {} elements", run.out.d.len()));
        }
        for (i, (&got, &w)) in run.out.d.iter().zip(&want).enumerate() {
            let what = format!(
                "{label}: D[{}][{}] vs {}",
                i / n,
                i % n,
                reference.ws_name()
            );
            tb.check_bits(what, got, w);
        }
    }
    Ok(())
}
