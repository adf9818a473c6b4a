//! The `verify` layer's FP16-output reference (`verify::exact::*_acc` with FP16: big-integer
//! sums rounded by its own FP16 rounding) against Berkeley SoftFloat (`f16_mulAdd`, one op and
//! chained, every direction, flags included), and against the numerics layer and the clocked
//! core it checks: `Reference::gemm` and `verify::sparse` into FP16 equal the functional
//! models bit for bit in `ieee`, `fused` and `exact`; `nvidia` with FP16 output has no
//! independent reference.

use crate::common::{half_corner, softfloat_op, softfloat_round, Rng};
use softfloat_wrapper::{Float as _, F16};
use tensorcore_rtl::gemm::{run_clocked, run_functional, CoreConfig, Gemm};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16};
use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::sparse::{run_clocked_sparse, run_functional_sparse, SparseGemm};
use tensorcore_rtl::verify::exact::{exact_dot_rounding_acc, ieee_dot_acc, RefRounding};
use tensorcore_rtl::verify::gemm_ref::Reference;
use tensorcore_rtl::verify::sparse::{sparse_reference, SparseRef};

fn is_nan16(x: u32) -> bool {
    x & 0x7FFF > 0x7C00
}

/// An FP16 operand: a corner case (zeros, subnormals, largest finite, Inf, NaN) one time in
/// three, else a value near 1 so that sums carry, cancel and round.
fn operand(rng: &mut Rng) -> u64 {
    match rng.below(3) {
        0 => u64::from(half_corner(rng, 5, 10)),
        _ => ((rng.coin() as u64) << 15) | ((12 + rng.below(7)) << 10) | (rng.next_u64() & 0x3FF),
    }
}

/// One FMA in every direction (results and flags) and 33-long FMA chains (results), against
/// SoftFloat's `f16_mulAdd`. All SoftFloat calls live in this one test (its flags are global).
#[test]
fn fp16_reference_matches_softfloat_fma() {
    let mut rng = Rng(0xF16F);
    let dirs = [
        (RefRounding::NearestEven, RoundingMode::NearestEven),
        (RefRounding::TowardZero, RoundingMode::TowardZero),
        (RefRounding::Down, RoundingMode::Down),
        (RefRounding::Up, RoundingMode::Up),
    ];
    let mut inexact = 0;
    for i in 0..40_000 {
        let (a, b, c) = (
            operand(&mut rng),
            operand(&mut rng),
            operand(&mut rng) as u32,
        );
        let (ours_dir, sf_dir) = dirs[i % 4];
        let (ours, of) = exact_dot_rounding_acc(FP16, FP16, FP16, &[a], &[b], c, ours_dir);
        let (theirs, tf) = softfloat_op(sf_dir, || {
            let r = F16::from_bits(a as u16).fused_mul_add(
                F16::from_bits(b as u16),
                F16::from_bits(c as u16),
                softfloat_round(sf_dir),
            );
            u64::from(r.to_bits())
        });
        let theirs = theirs as u32;
        let ctx = format!("{a:04x} * {b:04x} + {c:04x} {sf_dir:?}");
        if is_nan16(theirs) {
            assert_eq!(ours, 0x7E00, "{ctx}: canonical NaN");
        } else {
            assert_eq!(ours, theirs, "{ctx}");
        }
        assert_eq!(
            (of.invalid, of.overflow, of.underflow, of.inexact),
            (tf.invalid, tf.overflow, tf.underflow, tf.inexact),
            "{ctx}: flags"
        );
        inexact += u32::from(of.inexact);
    }
    assert!(inexact > 10_000, "{inexact} inexact");
    for _ in 0..3_000 {
        let k = 33;
        let a: Vec<u64> = (0..k).map(|_| operand(&mut rng)).collect();
        let b: Vec<u64> = (0..k).map(|_| operand(&mut rng)).collect();
        let c = operand(&mut rng) as u32;
        let ours = ieee_dot_acc(FP16, FP16, FP16, &a, &b, c);
        let (theirs, _) = softfloat_op(RoundingMode::NearestEven, || {
            let mut acc = F16::from_bits(c as u16);
            for (&x, &y) in a.iter().zip(&b) {
                acc = F16::from_bits(x as u16).fused_mul_add(
                    F16::from_bits(y as u16),
                    acc,
                    softfloat_round(RoundingMode::NearestEven),
                );
            }
            u64::from(acc.to_bits())
        });
        if is_nan16(theirs as u32) {
            assert_eq!(ours, 0x7E00);
        } else {
            assert_eq!(ours, theirs as u32, "{a:x?} . {b:x?} + {c:04x}");
        }
    }
}

fn cfg(fa: Format, fb: Format, mode: AccMode, width: usize) -> CoreConfig {
    CoreConfig::new(fa, fb, mode, width).with_acc(FP16)
}

/// The references the GEMM check uses agree with the functional model and the clocked core
/// on FP16 output (ieee, fused at several widths, exact for the functional model only).
#[test]
fn fp16_gemm_reference_equals_the_models() {
    let mut seed = 0xACC;
    let mut checked = 0;
    for (fa, fb) in [(FP16, FP16), (E4M3, E4M3), (E5M2, E4M3), (BF16, BF16)] {
        for (mode, w) in [
            (AccMode::Ieee, 1),
            (AccMode::Fused, 4),
            (AccMode::Fused, 16),
            (AccMode::Exact, 8),
        ] {
            seed += 1;
            let g = Gemm::random(5, 7, 45, cfg(fa, fb, mode, w), seed).expect("problem");
            let r = Reference::for_problem(&g, None).expect("reference");
            let want = r.gemm(&g);
            assert!(want.iter().all(|&d| d <= 0xFFFF));
            assert_eq!(
                run_functional(&g).expect("functional").d,
                want,
                "{fa} x {fb} {mode:?}"
            );
            if mode != AccMode::Exact {
                assert_eq!(run_clocked(&g, None).expect("clocked").out.d, want);
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 16);
    // nvidia with FP16 output: the reference's own FP16-output rules; BF16 has none.
    let params = Preset::Hopper
        .params_for(FP16, FP16, FP16)
        .expect("hopper fp16 output");
    let g = Gemm::random(5, 7, 45, cfg(FP16, FP16, AccMode::Nvidia(params), 8), 1).expect("g");
    let r = Reference::for_problem(&g, Some(Preset::Hopper)).expect("nvidia fp16 reference");
    assert_eq!(r.name(), "nvidia_ref_dot");
    assert_eq!(run_clocked(&g, None).expect("clocked").out.d, r.gemm(&g));
    let mut bf = g.clone();
    bf.cfg.fmt_a = BF16;
    bf.cfg.fmt_b = BF16;
    let e = Reference::for_problem(&bf, Some(Preset::Hopper)).expect_err("no bf16 fp16 rule");
    assert!(e.contains("fp16"), "{e}");
}

#[test]
fn fp16_sparse_reference_equals_the_models() {
    let mut seed = 0x5AC;
    for (fa, fb) in [(FP16, FP16), (E4M3, E5M2), (BF16, BF16)] {
        for (mode, how, w) in [
            (AccMode::Ieee, SparseRef::Ieee, 1),
            (AccMode::Fused, SparseRef::Fused { width: 4 }, 4),
            (AccMode::Exact, SparseRef::Exact, 8),
        ] {
            seed += 1;
            let g = SparseGemm::random(6, 5, 24, cfg(fa, fb, mode, w), seed).expect("problem");
            let ops = g.reference_operands();
            assert_eq!(ops.acc, FP16);
            let want = sparse_reference(&ops, how);
            assert_eq!(run_functional_sparse(&g).expect("functional").d, want);
            if mode != AccMode::Exact {
                assert_eq!(run_clocked_sparse(&g, None).expect("clocked").out.d, want);
            }
        }
    }
}
