//! `specials`: NaN, infinities, subnormals and signed zeros through the 4x4 mesh. A 4 x 4 x 4
//! tile whose rows and columns each carry one kind of special value, in FP16 and BF16
//! (`ieee` w = 1, `fused` w = 4, `nvidia` hopper) and E5M2 / E4M3 (`ieee`), checked against
//! the independent references, plus values stated by IEEE 754 / docs/numerics.md: any NaN gives
//! the canonical NaN `0x7FC00000` (the `nvidia` mode: NVIDIA's `0x7FFFFFFF`, measured on an
//! H200), Inf x 0 and +Inf + -Inf give NaN, an all-negative-zero sum
//! with C = -0 is -0 under `ieee`/`fused` (round to nearest), a lone +Inf product gives +Inf.

use crate::gemm::Problem;
use crate::gemm::{Gemm, CoreConfig};
use crate::numerics::dot::{AccMode, Preset};
use crate::numerics::format::{Format, BF16, E4M3, E5M2, FP16};
use crate::tb::util::{encode_all, fp32, run_and_check};
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str =
    "NaN, Inf, subnormals, signed zeros through the mesh vs references and IEEE facts";

const NAN: u32 = 0x7FC0_0000;

/// The NaN of the `nvidia` mode: NVIDIA's canonical NaN (docs/numerics.md, "Checked on an
/// H200").
const NVIDIA_NAN: u32 = 0x7FFF_FFFF;

/// A (4 x 4, row-major) and B (4 x 4) for `fmt`: row 0 of A holds a NaN (an Inf-less,
/// NaN-only E4M3 too), row 1 +Inf (E4M3: its largest value), row 2 subnormals, row 3 negative
/// zeros; column 0 of B ones, column 1 a zero beside -Inf (E4M3: -448), column 2 negative
/// zeros, column 3 subnormals and +-1.
fn operands(fmt: Format) -> Result<(Vec<u64>, Vec<u64>), String> {
    let has_inf = fmt.name != "e4m3";
    let inf = if has_inf { f64::INFINITY } else { 448.0 };
    let (sub_min, min_normal) = match fmt.name {
        "fp16" => (2f64.powi(-24), 2f64.powi(-14)),
        "bf16" => (2f64.powi(-133), 2f64.powi(-126)),
        "e5m2" => (2f64.powi(-16), 2f64.powi(-14)),
        _ => (2f64.powi(-9), 2f64.powi(-6)),
    };
    let a = [
        [f64::NAN, 1.0, 1.0, 1.0],
        [inf, 1.0, 0.0, 0.0],
        [sub_min, 3.0 * sub_min, -min_normal, sub_min],
        [-0.0, -0.0, -0.0, -0.0],
    ];
    // B is K x N: b[p][j].
    let b = [
        [1.0, 0.0, -0.0, 3.0 * sub_min],
        [1.0, -inf, -0.0, sub_min],
        [1.0, 1.0, -0.0, 1.0],
        [1.0, 1.0, -0.0, -1.0],
    ];
    let flat = |m: [[f64; 4]; 4]| m.iter().flatten().copied().collect::<Vec<f64>>();
    Ok((encode_all(fmt, &flat(a))?, encode_all(fmt, &flat(b))?))
}

/// `tcrtl tb run NAME --rows R --cols C` runs it on an R x C array (`Bench::array`).
pub const TAKES_ARRAY: bool = true;

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    let c_vals = [
        -0.0,
        2f64.powi(-149),
        -2f64.powi(-149),
        0.0,
        1.0,
        -0.0,
        2f64.powi(-126),
        f64::NAN,
        -0.0,
        0.0,
        -0.0,
        1.0e-40_f32 as f64,
        -0.0,
        0.0,
        -0.0,
        2.0,
    ];
    let c: Vec<u32> = c_vals
        .iter()
        .map(|&v| if v.is_nan() { Ok(NAN) } else { fp32(v) })
        .collect::<Result<_, _>>()?;
    let mut cases: Vec<(Format, AccMode, usize, Option<Preset>)> = vec![
        (FP16, AccMode::Ieee, 1, None),
        (FP16, AccMode::Fused, 4, None),
        (BF16, AccMode::Ieee, 1, None),
        (BF16, AccMode::Fused, 4, None),
        (E5M2, AccMode::Ieee, 1, None),
        (E4M3, AccMode::Ieee, 1, None),
    ];
    for fmt in [FP16, BF16] {
        let p = Preset::Hopper.params(fmt, fmt).map_err(|e| e.to_string())?;
        cases.push((fmt, AccMode::Nvidia(p), 1, Some(Preset::Hopper)));
    }
    for (i, &(fmt, mode, width, preset)) in cases.iter().enumerate() {
        let (a, b) = operands(fmt)?;
        let cfg = tb.array(CoreConfig::new(fmt, fmt, mode, width))?;
        let g = Gemm::new(4, 4, 4, cfg, a, b, c.clone()).map_err(|e| e.to_string())?;
        let label = format!(
            "{fmt} {}{}",
            mode.name(),
            preset.map(|p| format!(" {p}")).unwrap_or_default()
        );
        run_and_check(tb, &label, &g, preset, i == 0)?;
        // Stated facts, independent of any reference code.
        let run = tb
        .run_gemm(Problem::Dense(&g), None, None)?
        .run;
        let d = |i: usize, j: usize| run.out.d[i * 4 + j];
        let nan = if matches!(mode, AccMode::Nvidia(_)) {
            NVIDIA_NAN
        } else {
            NAN
        };
        for j in 0..4 {
            tb.check_bits(format!("{label}: NaN row D[0][{j}]"), d(0, j), nan);
        }
        tb.check_bits(format!("{label}: NaN in C, D[1][3]"), d(1, 3), nan);
        if fmt.name != "e4m3" {
            tb.check_bits(
                format!("{label}: Inf x 0 + 1 x -Inf, D[1][1]"),
                d(1, 1),
                nan,
            );
            tb.check_bits(format!("{label}: Inf x 1, D[1][0]"), d(1, 0), 0x7F80_0000);
        }
        // (-0) x (-0) = +0, and -0 + +0 = +0 under round to nearest.
        tb.check_bits(format!("{label}: +0 products + C -0, D[3][2]"), d(3, 2), 0);
        if !matches!(mode, AccMode::Nvidia(_)) {
            // IEEE: a sum of negative zeros is -0 (the nvidia block FMA drops zero terms and
            // gives +0, the MATLAB models' convention, so it is not stated for nvidia).
            tb.check_bits(
                format!("{label}: -0 products + C -0, D[3][0]"),
                d(3, 0),
                0x8000_0000,
            );
        }
    }
    Ok(())
}
