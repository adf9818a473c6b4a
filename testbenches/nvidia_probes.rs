//! `nvidia_probes`: the probe inputs of docs/numerics.md ("Probe inputs that reveal each
//! feature", FP16 in, FP32 C, unlisted k slots 0) through the 4x4 mesh in `nvidia` mode for
//! every preset. Every PE of the tile gets the same probe (all rows of A equal, all columns
//! of B equal, C constant), so each probe is checked 16 times. The expected results are the
//! values docs/numerics.md states, typed in here, not computed by any code; the independent
//! `nvidia_ref_dot` is checked as well by `run_and_check`.

use crate::gemm::Problem;
use crate::gemm::{Gemm, CoreConfig};
use crate::numerics::dot::{AccMode, Preset};
use crate::numerics::format::FP16;
use crate::tb::util::{encode_all, fp32, run_and_check};
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str =
    "docs/numerics.md probes through the mesh, nvidia mode, every preset, stated values";

fn p2(e: i32) -> f64 {
    2f64.powi(e)
}

/// What a probe must give.
enum Want {
    /// Exactly these FP32 bits.
    Bits(u32),
    /// Anything but these bits.
    Not(u32),
}

/// Runs one probe on a 4 x 4 x K tile (K = the listed slots, padded with zeros to at least
/// `k_min`) and checks all 16 outputs. Returns D[0][0].
#[allow(clippy::too_many_arguments)]
fn probe(
    tb: &mut Bench,
    preset: Preset,
    label: &str,
    a: &[f64],
    b: &[f64],
    c: f64,
    k_min: usize,
    want: Want,
    trace: bool,
) -> Result<u32, String> {
    let params = preset.params(FP16, FP16).map_err(|e| e.to_string())?;
    let k = a.len().max(b.len()).max(k_min).max(1);
    let mut av = a.to_vec();
    let mut bv = b.to_vec();
    av.resize(k, 0.0);
    bv.resize(k, 0.0);
    let row = encode_all(FP16, &av)?;
    let col = encode_all(FP16, &bv)?;
    let a_mat: Vec<u64> = (0..4).flat_map(|_| row.iter().copied()).collect();
    let b_mat: Vec<u64> = col.iter().flat_map(|&x| [x; 4]).collect();
    let cfg = tb.array(CoreConfig::new(FP16, FP16, AccMode::Nvidia(params), 1))?;
    let g = Gemm::new(4, 4, k, cfg, a_mat, b_mat, vec![fp32(c)?; 16]).map_err(|e| e.to_string())?;
    let label = format!("{preset} {label}");
    run_and_check(tb, &label, &g, Some(preset), trace)?;
    let run = tb
        .run_gemm(Problem::Dense(&g), None, None)?
        .run;
    for (i, &d) in run.out.d.iter().enumerate() {
        let what = format!("{label} (stated) D[{}][{}]", i / 4, i % 4);
        match want {
            Want::Bits(w) => {
                tb.check_bits(what, d, w);
            }
            Want::Not(w) => {
                tb.check(
                    format!("{what} = 0x{d:08x} must differ from 0x{w:08x}"),
                    d != w,
                );
            }
        }
    }
    Ok(run.out.d[0])
}

/// `tcrtl tb run NAME --rows R --cols C` runs it on an R x C array (`Bench::array`).
pub const TAKES_ARRAY: bool = true;

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    let s = fp32;
    let mut first = true;
    for p in Preset::NVIDIA {
        let n = p.params(FP16, FP16).map_err(|e| e.to_string())?.block;
        let mut go = |tb: &mut Bench, l: &str, a: &[f64], b: &[f64], c: f64, want: Want| {
            let r = probe(tb, p, l, a, b, c, n, want, first);
            first = false;
            r
        };
        go(
            tb,
            "subnormal input",
            &[p2(-24)],
            &[4.0],
            0.0,
            Want::Bits(s(p2(-22))?),
        )?;
        go(
            tb,
            "subnormal C",
            &[],
            &[],
            p2(-149),
            Want::Bits(s(p2(-149))?),
        )?;
        let x = 1.0 - p2(-11);
        let want = Want::Bits(s(1.0 - p2(-10) + p2(-22))?);
        go(tb, "exact product", &[x], &[x], 0.0, want)?;
        let b = [2.0, p2(-23) + p2(-24)];
        go(tb, "truncation", &[1.0; 4], &b, 0.0, Want::Bits(s(2.0)?))?;
        let nb = [-2.0, -(p2(-23) + p2(-24))];
        go(
            tb,
            "truncation, negated",
            &[1.0; 4],
            &nb,
            0.0,
            Want::Bits(s(-2.0)?),
        )?;
        let volta_rule = matches!(p, Preset::Volta | Preset::Turing);
        let extra = if volta_rule { p2(-23) } else { p2(-24) };
        let c = -(1.0 - p2(-24));
        go(
            tb,
            "one extra alignment bit",
            &[1.0],
            &[1.0],
            c,
            Want::Bits(s(extra)?),
        )?;
        let late = Want::Bits(s(1.0 + p2(-23))?);
        let d_late = go(
            tb,
            "late normalisation",
            &[1.0; 4],
            &[p2(-24); 4],
            1.0 - p2(-24),
            late,
        )?;
        let c = 1.0 + p2(-22) + p2(-23);
        go(
            tb,
            "carry-out",
            &[1.0; 4],
            &[1.0; 4],
            c,
            Want::Bits(s(5.0)?),
        )?;
        go(
            tb,
            "carry-out, negated",
            &[1.0; 4],
            &[-1.0; 4],
            -c,
            Want::Bits(s(-5.0)?),
        )?;
        let b = [1.0, 1.5, 1.75, 1.875];
        go(tb, "carry-out 2", &[1.0; 4], &b, 1.875, Want::Bits(s(8.0)?))?;
        let c = 1.0 + p2(-23) + p2(-22);
        go(
            tb,
            "final rounding (truncation)",
            &[1.0; 3],
            &[1.0; 3],
            c,
            Want::Bits(s(4.0)?),
        )?;
        if volta_rule {
            // Non-monotonic sum: c = 1 - 2^-24 gives a larger D than c = 1.
            let d_one = go(
                tb,
                "non-monotonic (c = 1)",
                &[1.0; 4],
                &[p2(-24); 4],
                1.0,
                Want::Not(d_late),
            )?;
            tb.check(
                "volta non-monotonic: D(c = 1 - 2^-24) > D(c = 1)",
                f32::from_bits(d_late) > f32::from_bits(d_one),
            );
        } else {
            // Two extra bits (FTTN): >= 2 bits 0x3F8FFFFF, one bit (Ampere, Ada) 0x3F900000.
            let want = if matches!(p, Preset::Ampere | Preset::Ada) {
                0x3F90_0000
            } else {
                0x3F8F_FFFF
            };
            let c = -(p2(-3) + p2(-25));
            go(tb, "two extra bits", &[1.0], &[1.25], c, Want::Bits(want))?;
        }
        // Block size: D = 2 + 2^-22 while j < n, and differs at j = n.
        let two = s(2.0 + p2(-22))?;
        for j in [1, n - 1, n] {
            let mut a = vec![0.0; j + 1];
            let mut b = vec![0.0; j + 1];
            a[0] = 1.0;
            b[0] = 1.0;
            a[j] = p2(-23);
            b[j] = 1.0;
            let want = if j < n {
                Want::Bits(two)
            } else {
                Want::Not(two)
            };
            go(
                tb,
                &format!("block size, j = {j}"),
                &a,
                &b,
                1.0 + p2(-23),
                want,
            )?;
        }
    }
    Ok(())
}
