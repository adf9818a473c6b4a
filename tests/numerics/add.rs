//! The FP32 adder (two-term aligned adder plus the shared normalize-round-pack), checked on
//! random and TestFloat-style corner pairs in every rounding mode against Berkeley SoftFloat
//! (`f32_add`, values and flags exactly; round-to-odd derived from its toward-zero result),
//! against rustc_apfloat (values and flags, modulo its documented overflow-flag convention),
//! and in RNE against host `f32`. NaN results: we return the canonical `0x7FC00000`,
//! SoftFloat (x86 specialisation) propagates a quieted payload or its default NaN
//! `0xFFC00000`, so only NaN-ness and the `invalid` flag are compared.

use crate::common::{
    apfloat_round, fp32_corner, samples, secs, softfloat_op, softfloat_round, ApfloatDiffs, Rng,
};
use proptest::prelude::*;
use rustc_apfloat::ieee::Single;
use rustc_apfloat::{Float, Status};
use softfloat_wrapper::{Float as _, F32};
use tensorcore_rtl::numerics::{add, Flags, RoundingMode, FP32};

fn softfloat_add(a: u32, b: u32, mode: RoundingMode) -> (u32, Flags) {
    let (r, flags) = softfloat_op(mode, || {
        F32::from_bits(a)
            .add(F32::from_bits(b), softfloat_round(mode))
            .to_bits() as u64
    });
    (r as u32, flags)
}

fn apfloat_add(a: u32, b: u32, mode: RoundingMode) -> (u32, Status) {
    let (x, y) = (Single::from_bits(a as u128), Single::from_bits(b as u128));
    match apfloat_round(mode) {
        Some(round) => {
            let r = x.add_r(y, round);
            (r.value.to_bits() as u32, r.status)
        }
        None => {
            let r = x.add_r(y, rustc_apfloat::Round::TowardZero);
            let inexact = r.status.contains(Status::INEXACT);
            (r.value.to_bits() as u32 | inexact as u32, r.status)
        }
    }
}

fn is_nan(x: u32) -> bool {
    x & 0x7FFF_FFFF > 0x7F80_0000
}

/// A second operand related to `a`: nearby exponents (carries, cancellation, sticky at the
/// edge of the 24-bit window), its negation, or its negation one ulp away.
fn partner(rng: &mut Rng, a: u32) -> u32 {
    match rng.below(6) {
        0 => a ^ 0x8000_0000,
        1 => (a ^ 0x8000_0000).wrapping_add(1),
        2 => (a ^ 0x8000_0000).wrapping_sub(1),
        3 => a,
        _ => {
            let ea = ((a >> 23) & 0xFF) as i64;
            let delta = rng.below(61) as i64 - 30;
            let eb = (ea + delta).clamp(0, 254) as u32;
            let frac = match rng.below(3) {
                0 => 0,
                1 => 0x7F_FFFF,
                _ => rng.next_u64() as u32 & 0x7F_FFFF,
            };
            ((rng.coin() as u32) << 31) | (eb << 23) | frac
        }
    }
}

fn operand_pair(rng: &mut Rng) -> (u32, u32) {
    match rng.below(3) {
        0 => (rng.next_u64() as u32, rng.next_u64() as u32),
        1 => {
            let a = fp32_corner(rng, &[1, 127, 150, 254], 0);
            (a, fp32_corner(rng, &[1, 127, 150, 254], 0))
        }
        _ => {
            let a = if rng.coin() {
                rng.next_u64() as u32
            } else {
                fp32_corner(rng, &[1, 127, 254], 0)
            };
            let b = partner(rng, a);
            if rng.coin() {
                (a, b)
            } else {
                (b, a)
            }
        }
    }
}

fn check_pair(a: u32, b: u32, mode: RoundingMode, diffs: &mut ApfloatDiffs) {
    let ours = add(FP32, a as u64, b as u64, mode).rounded;
    let ctx = format!("{a:#010x} + {b:#010x} {}", mode.name());
    let (sf, sf_flags) = softfloat_add(a, b, mode);
    if is_nan(sf) {
        assert_eq!(ours.bits, 0x7FC0_0000, "{ctx}");
    } else {
        assert_eq!(ours.bits, sf as u64, "{ctx}: softfloat");
    }
    assert_eq!(ours.flags, sf_flags, "{ctx}: softfloat flags");
    let (ap, status) = apfloat_add(a, b, mode);
    if is_nan(ap) {
        assert!(is_nan(ours.bits as u32), "{ctx}");
    } else {
        assert_eq!(ours.bits, ap as u64, "{ctx}: apfloat");
    }
    diffs
        .check(ours.flags, status, FP32, ours.bits)
        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
    if mode == RoundingMode::NearestEven {
        let host = (f32::from_bits(a) + f32::from_bits(b)).to_bits();
        if is_nan(host) {
            assert!(is_nan(ours.bits as u32), "{ctx}");
        } else {
            assert_eq!(ours.bits, host as u64, "{ctx}: host f32");
        }
    }
}

fn sweep(mode: RoundingMode, seed: u64) {
    let n = samples(250_000);
    let start = std::time::Instant::now();
    let mut rng = Rng(seed);
    let mut diffs = ApfloatDiffs::default();
    for _ in 0..n {
        let (a, b) = operand_pair(&mut rng);
        check_pair(a, b, mode, &mut diffs);
    }
    println!(
        "fp32 add {}: {n} pairs in {:.2} s; accepted apfloat convention differences: {diffs:?}",
        mode.name(),
        secs(start)
    );
}

#[test]
fn fp32_add_rne() {
    sweep(RoundingMode::NearestEven, 1);
}

#[test]
fn fp32_add_rtz() {
    sweep(RoundingMode::TowardZero, 2);
}

#[test]
fn fp32_add_rdn() {
    sweep(RoundingMode::Down, 3);
}

#[test]
fn fp32_add_rup() {
    sweep(RoundingMode::Up, 4);
}

#[test]
fn fp32_add_rto() {
    sweep(RoundingMode::ToOdd, 5);
}

#[test]
fn stage_fields_are_visible() {
    // 1 + 1.5 * 2^-24 in RNE: the addend sits 24 binades below, so the round step sees
    // guard 1, sticky 1 and increments.
    let r = add(FP32, 0x3F80_0000, 0x33C0_0000, RoundingMode::NearestEven);
    assert_eq!(r.align.exp_diff, 24);
    assert!(!r.align.effective_sub && !r.align.swapped);
    assert_eq!(r.align.max_exp, 0);
    assert!(r.rounded.trace.guard && r.rounded.trace.sticky && r.rounded.trace.round_inc);
    assert_eq!(r.rounded.bits, 0x3F80_0001);
    // Cancellation: 1 - (1 - 2^-24) = 2^-24 needs a long normalizing shift (large lzc).
    let r = add(FP32, 0x3F80_0000, 0xBF7F_FFFF, RoundingMode::NearestEven);
    assert!(r.align.effective_sub);
    assert_eq!(r.align.exp_diff, 1);
    assert_eq!(r.rounded.bits, 0x3380_0000);
    assert_eq!(r.rounded.trace.norm_exp, -24);
    assert!(!r.rounded.trace.round_inc && r.rounded.flags.is_empty());
    // An addend far below the window only reaches the sticky bit.
    let r = add(FP32, 0x7F00_0000, 0x0000_0001, RoundingMode::Up);
    assert!(r.align.sticky && r.align.align_shift > 0);
    assert_eq!(r.rounded.bits, 0x7F00_0001);
}

proptest! {
    // No regression files: the tests directory has no lib.rs for proptest to anchor them to,
    // and shrinking prints the minimal counterexample in hex.
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    /// Addition commutes, bits and flags, in every mode.
    #[test]
    fn add_commutes(a in any::<u32>(), b in any::<u32>(), m in 0usize..5) {
        let mode = RoundingMode::ALL[m];
        let x = add(FP32, a as u64, b as u64, mode).rounded;
        let y = add(FP32, b as u64, a as u64, mode).rounded;
        prop_assert_eq!((x.bits, x.flags), (y.bits, y.flags), "{:#010x} + {:#010x} {}", a, b, mode.name());
    }

    /// x + (-x) is +0 (or -0 when rounding down) for every finite x, exactly.
    #[test]
    fn add_negation_is_zero(a in any::<u32>(), m in 0usize..5) {
        prop_assume!(a & 0x7F80_0000 != 0x7F80_0000);
        let mode = RoundingMode::ALL[m];
        let r = add(FP32, a as u64, (a ^ 0x8000_0000) as u64, mode).rounded;
        let want = if mode == RoundingMode::Down { 0x8000_0000 } else { 0 };
        prop_assert_eq!(r.bits, want);
        prop_assert!(r.flags.is_empty());
    }
}
