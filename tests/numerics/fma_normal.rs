//! The FMA's normal-range unit (`fma_acc_normal`, through `fma_acc_bits`) against the full
//! unit (`fma_acc`) and, for FP16 operands into FP32, against host `f32` addition of the
//! exact product (IEEE round to nearest even).

use crate::common::Rng;
use half::f16;
use tensorcore_rtl::numerics::dot::ieee::{fma_acc, fma_acc_bits, fma_acc_normal};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32};
use tensorcore_rtl::numerics::multiply::{multiply, Product};
use tensorcore_rtl::numerics::RoundingMode;

/// Accumulators placed around the product's magnitude: every exponent distance from far
/// below to far above it, both signs, near-cancelling values (the rounded product plus or
/// minus a few ULPs, negated), and the special encodings.
fn accumulators(acc: Format, p: &Product, rng: &mut Rng) -> Vec<u32> {
    let frac = acc.frac_bits;
    let bias = acc.bias;
    let mut cs = vec![
        0,
        acc.sign_bit() as u32,
        1,
        (acc.frac_mask() as u32) | acc.sign_bit() as u32,
        (1u32 << frac),
        acc.max_finite(false) as u32,
        acc.max_finite(true) as u32,
        acc.infinity(false).unwrap_or(0) as u32,
        acc.canonical_nan() as u32,
    ];
    let p_top = if p.sig == 0 {
        0
    } else {
        p.lsb_exp() + 63 - p.sig.leading_zeros() as i32
    };
    for d in -45..=45 {
        let e = (p_top + d + bias).clamp(0, acc.exp_field_max() as i32) as u64;
        let f = rng.next_u64() & acc.frac_mask();
        let s = rng.next_u64() & 1 == 1;
        cs.push(acc.with_sign((e << frac) | f, s) as u32);
    }
    // The product rounded into the accumulator, then nudged and negated: sums that cancel.
    let rounded = fma_acc(0, p, RoundingMode::NearestEven, acc).bits;
    for nudge in -3i64..=3 {
        let m = (rounded as u64 & !acc.sign_bit()) as i64 + nudge;
        if m > 0 && (m as u64) < acc.sign_bit() {
            let neg = rounded as u64 & acc.sign_bit() == 0;
            cs.push(acc.with_sign(m as u64, neg) as u32);
        }
    }
    cs
}

fn check(acc: Format, c: u32, p: &Product, answered: &mut u64) {
    let full = fma_acc(c, p, RoundingMode::NearestEven, acc);
    if let Some(r) = fma_acc_normal(c, p, acc) {
        *answered += 1;
        assert_eq!(r, (full.bits, full.flags), "c={c:#x} p={p:?}");
    }
    assert_eq!(
        fma_acc_bits(c, p, acc),
        (full.bits, full.flags.to_bits()),
        "c={c:#x} p={p:?}"
    );
}

/// Random operand pairs of the 16- and 8-bit formats, each against accumulators at every
/// distance: the normal-range unit gives the full unit's bits and flags wherever it answers,
/// and answers a good share of the sums (so the comparison exercises it; random FP16
/// products often leave FP16's range, where the full unit decides).
#[test]
fn normal_unit_matches_the_full_unit() {
    let mut rng = Rng(0x5EED_F00D);
    for acc in [FP32, FP16] {
        for fmt in [FP16, BF16, E4M3, E5M2] {
            let (mut answered, mut total) = (0u64, 0u64);
            for _ in 0..400 {
                let a = rng.next_u64() & fmt.mask();
                let b = rng.next_u64() & fmt.mask();
                let p = multiply(fmt, a, fmt, b);
                for c in accumulators(acc, &p, &mut rng) {
                    check(acc, c, &p, &mut answered);
                    total += 1;
                }
            }
            // BF16 products mostly leave FP16's range: only the full unit sees them there.
            assert!(
                (acc == FP16 && fmt == BF16) || answered * 4 > total,
                "{} into {}: the normal unit answered {answered} of {total}",
                fmt.name,
                acc.name
            );
        }
    }
}

/// Every E4M3 x E4M3 product against accumulators at every distance (FP32 and FP16).
#[test]
fn normal_unit_matches_on_every_e4m3_product() {
    let mut rng = Rng(7);
    let mut answered = 0;
    for acc in [FP32, FP16] {
        for a in 0..=0xFFu64 {
            for b in (0..=0xFFu64).step_by(3) {
                let p = multiply(E4M3, a, E4M3, b);
                let cs = accumulators(acc, &p, &mut rng);
                for c in cs.iter().step_by(7) {
                    check(acc, *c, &p, &mut answered);
                }
            }
        }
    }
    assert!(answered > 0);
}

/// FP16 operands into FP32: the product is exact in `f32` (22 significand bits, exponents
/// within range), so `c + a * b` in host `f32` is the FMA rounded once. Random finite
/// triples, with the accumulator near the product's magnitude half the time.
#[test]
fn fp16_into_fp32_matches_host_f32() {
    let mut rng = Rng(0xFACE);
    for i in 0..200_000u32 {
        let a = f16::from_bits(rng.next_u64() as u16);
        let b = f16::from_bits(rng.next_u64() as u16);
        if !a.is_finite() || !b.is_finite() {
            continue;
        }
        let prod = a.to_f32() * b.to_f32();
        let c = if i % 2 == 0 {
            f32::from_bits(rng.next_u64() as u32)
        } else {
            let scale = f32::from_bits(((rng.next_u64() % 60) as u32 + 97) << 23);
            -prod * scale * (1.0 + (rng.next_u64() % 1024) as f32 / 1024.0)
        };
        if !c.is_finite() {
            continue;
        }
        let want = c + prod;
        let p = multiply(FP16, u64::from(a.to_bits()), FP16, u64::from(b.to_bits()));
        let (bits, _) = fma_acc_bits(c.to_bits(), &p, FP32);
        assert_eq!(
            bits,
            want.to_bits(),
            "{c:e} + {a} * {b}: got {:e}, host {want:e}",
            f32::from_bits(bits)
        );
    }
}
