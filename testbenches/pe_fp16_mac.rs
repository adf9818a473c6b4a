//! `pe_fp16_mac`: one processing element as an FP16 multiply-accumulator (w = 1, `ieee`):
//! directed cases (exact product, ties to even in the accumulator, cancellation, subnormal
//! products, long K) and random vectors, each a 1 x 1 x K GEMM, checked bit for bit against
//! `verify::exact::ieee_dot` (exact big-integer sums, one RNE rounding per product), and the
//! PE's latency against HARDWARE.md's fold formula. The problems run on the whole clocked
//! tensor core, where a 1 x 1 problem occupies PE (0, 0) alone; its waveform traces that PE
//! and the controller.

use crate::gemm::{Gemm, GemmConfig};
use crate::numerics::dot::AccMode;
use crate::numerics::format::FP16;
use crate::tb::util::{encode_all, fp32, run_and_check};
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "single PE, FP16 MAC chain (ieee, w = 1) vs verify::exact::ieee_dot";

const CFG: GemmConfig = GemmConfig {
    fmt_a: FP16,
    fmt_b: FP16,
    mode: AccMode::Ieee,
    width: 1,
};

fn p2(e: i32) -> f64 {
    2f64.powi(e)
}

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    // A 1 x 1 problem occupies PE (0, 0) only: the waveform shows that PE and the controller.
    tb.trace_only("mesh.pe_0_0");
    tb.trace_only("controller");
    let x = 1.0 - p2(-11);
    let directed: Vec<(&str, Vec<f64>, Vec<f64>, f64)> = vec![
        ("exact product", vec![x], vec![x], 0.0),
        ("tie to even in acc", vec![p2(-12); 2], vec![p2(-12); 2], 1.0),
        ("tie rounds up", vec![p2(-12), 1.0], vec![p2(-12), p2(-23)], 1.0),
        ("cancellation", vec![1.0, -1.0, 0.5], vec![1.0, 1.0, -1.0], 0.5),
        ("subnormal products", vec![p2(-24), p2(-20)], vec![p2(-24), p2(-14)], 0.0),
        ("signed zeros", vec![-0.0, 0.0], vec![1.0, -1.0], -0.0),
        ("large", vec![65504.0, 65504.0], vec![65504.0, -65504.0], 1.0),
        ("long K", (0..40).map(|i| 1.0 + i as f64 / 64.0).collect(), vec![0.25; 40], -3.0),
    ];
    let mut first = true;
    for (label, a, b, c) in directed {
        let k = a.len();
        let g = Gemm::new(
            1,
            1,
            k,
            CFG,
            encode_all(FP16, &a)?,
            encode_all(FP16, &b)?,
            vec![fp32(c)?],
        )
        .map_err(|e| e.to_string())?;
        run_and_check(tb, label, &g, None, first)?;
        first = false;
    }
    for seed in 0..16u64 {
        let k = 1 + (seed as usize * 7) % 24;
        let g = Gemm::random(1, 1, k, CFG, 0xC0FFEE + seed).map_err(|e| e.to_string())?;
        run_and_check(tb, &format!("random seed {seed} K {k}"), &g, None, false)?;
    }
    Ok(())
}
