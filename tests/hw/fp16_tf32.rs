//! The clocked tensor core with FP16 accumulators and TF32 inputs: bit for bit (flags
//! included) against the functional model and (D) the independent `verify` references, for
//! every mode, preset and PE width that takes the pair, on ragged shapes; FP16 output also against the FP16 measurement probes written by
//! hand in `tests/reference/fp16_tf32_probes.rs` (through the mesh), and the accumulator registers are
//! 16 bits wide in the waves.

use tensorcore_rtl::gemm::{run_clocked, run_functional, CoreConfig, Gemm};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32, TF32};
use tensorcore_rtl::verify::gemm_ref::Reference;

/// Every mode a pair can run into `acc`: ieee, fused and each preset with a path.
fn modes(fa: Format, fb: Format, acc: Format) -> Vec<(AccMode, Option<Preset>)> {
    let mut v = vec![(AccMode::Ieee, None), (AccMode::Fused, None)];
    for p in Preset::ALL {
        if let Ok(params) = p.params_for(fa, fb, acc) {
            v.push((AccMode::Nvidia(params), Some(p)));
        }
    }
    v
}

/// The clocked core against the functional model (D and flags) and against the independent
/// `verify` reference of the mode (its own FP32/FP16 rounding and NVIDIA rules).
fn check(g: &Gemm, preset: Option<Preset>) {
    let f = run_functional(g).expect("functional");
    let c = run_clocked(g, None).expect("clocked");
    assert_eq!(
        c.out.d, f.d,
        "D differs: {}x{}x{} {:?}",
        g.m, g.n, g.k, g.cfg
    );
    assert_eq!(c.out.flags, f.flags, "flags differ: {:?}", g.cfg);
    let r = Reference::for_problem(g, preset).expect("an independent reference");
    assert_eq!(c.out.d, r.gemm(g), "{} differs: {:?}", r.name(), g.cfg);
}

#[test]
fn fp16_accumulators_and_tf32_inputs_match_the_functional_model() {
    let cases: [(Format, Format, Format); 6] = [
        (FP16, FP16, FP16),
        (E4M3, E4M3, FP16),
        (E5M2, E4M3, FP16),
        (BF16, BF16, FP16),
        (TF32, TF32, FP32),
        (TF32, TF32, FP16),
    ];
    let mut runs = 0;
    for (fa, fb, acc) in cases {
        for (mode, preset) in modes(fa, fb, acc) {
            for (wi, w) in [1usize, 4, 16, 32].into_iter().enumerate() {
                let (m, n, k) = [(5, 3, 37), (4, 4, 64), (3, 6, 9), (2, 2, 33)][wi];
                let cfg = CoreConfig::new(fa, fb, mode, w).with_acc(acc);
                let g = Gemm::random(m, n, k, cfg, 0xF16 + wi as u64).expect("problem");
                assert!(g.c.iter().all(|&c| c <= acc.mask() as u32));
                check(&g, preset);
                runs += 1;
            }
        }
    }
    assert!(runs >= 80, "{runs} runs");
}

/// The Hopper FP8 FP16-output probe through the mesh, one output element per row of the
/// worked example: products 1 (k = 0), 2^-11 (k = 1) and 2^-11 (k = 2) with C = 0 give 1.0
/// (two half steps each tie to even), so D = 0x3C00; on Ada (blocks of 16, C first) the same
/// products in one block give 1 + 2^-11 + 2^-11 = 1 + 2^-10 = 0x3C01.
#[test]
fn fp16_output_probe_through_the_mesh() {
    let one = 0x38u64; // E4M3 1.0
    let a16 = 0x08u64; // E4M3 2^-6
    let b16 = 0x10u64; // E4M3 2^-5
    for (preset, want) in [(Preset::Hopper, 0x3C00u32), (Preset::Ada, 0x3C01)] {
        for w in [4usize, 32] {
            let cfg = CoreConfig::new(
                E4M3,
                E4M3,
                AccMode::Nvidia(preset.params_for(E4M3, E4M3, FP16).expect("params")),
                w,
            )
            .with_acc(FP16);
            let (m, n, k) = (1, 1, 32);
            let mut a = vec![0u64; m * k];
            let mut b = vec![0u64; k * n];
            a[0] = one;
            b[0] = one;
            for kk in [1, 2] {
                a[kk] = a16;
                b[kk] = b16;
            }
            let g = Gemm::new(m, n, k, cfg, a, b, vec![0]).expect("problem");
            let d = run_clocked(&g, None).expect("clocked").out.d;
            assert_eq!(d, vec![want], "{preset} w = {w}");
        }
    }
}

/// FP16 C values must be FP16 patterns.
#[test]
fn fp16_c_must_fit() {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1).with_acc(FP16);
    assert!(Gemm::new(1, 1, 1, cfg, vec![0], vec![0], vec![0x3F80_0000]).is_err());
    assert!(Gemm::new(1, 1, 1, cfg, vec![0], vec![0], vec![0x3C00]).is_ok());
}
