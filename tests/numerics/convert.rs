//! Conversions, checked against independent references (every conversion mode, ties-away
//! `rna` included):
//! - FP32 -> FP16 in every mode against rustc_apfloat (values and flags, modulo its two
//!   documented flag conventions) and Berkeley SoftFloat (values and flags exactly), RNE also
//!   against `half`;
//! - FP32 -> BF16 in every mode against rustc_apfloat, RNE also against `half`;
//! - satfinite against the non-saturating result;
//! - FP32 -> E4M3/E5M2 and FP16 -> E4M3/E5M2, every mode, both saturation policies, against
//!   the OCP tables of `verify::fp8_table` (nearest table entry per mode), flags included;
//! - proptest properties: widen-then-narrow round trips, and directed-rounding brackets.

use crate::common::{
    apfloat_round, fp32_corner, samples, secs, softfloat_op, softfloat_round, ApfloatDiffs, Rng,
};
use proptest::prelude::*;
use rustc_apfloat::ieee::{BFloat, Half, Single};
use rustc_apfloat::{Float, FloatConvert, Status, StatusAnd};
use softfloat_wrapper::{Float as _, F32};
use tensorcore_rtl::numerics::{
    convert, from_fp32, to_fp32, Flags, Format, Overflow, RoundingMode, BF16, E4M3, E5M2, FP16,
    FP32,
};
use tensorcore_rtl::verify::fp8_table::{round_to_fp8, Fp8Kind};

fn is_fp32_snan(x: u32) -> bool {
    x & 0x7FC0_0000 == 0x7F80_0000 && x & 0x003F_FFFF != 0
}

/// apfloat's conversion of FP32 `x` into `T` under `mode` (round-to-odd derived from
/// round-toward-zero: set the LSB when inexact).
fn apfloat_convert<T: Float>(x: u32, mode: RoundingMode) -> (u64, Status)
where
    Single: FloatConvert<T>,
{
    let mut lost = false;
    let s = Single::from_bits(x as u128);
    match apfloat_round(mode) {
        Some(round) => {
            let r: StatusAnd<T> = s.convert_r(round, &mut lost);
            (r.value.to_bits() as u64, r.status)
        }
        None => {
            let r: StatusAnd<T> = s.convert_r(rustc_apfloat::Round::TowardZero, &mut lost);
            let inexact = r.status.contains(Status::INEXACT);
            (r.value.to_bits() as u64 | inexact as u64, r.status)
        }
    }
}

/// SoftFloat's f32_to_f16 under `mode`, with its flags (after-rounding tininess, its
/// default); round-to-odd derived from toward-zero.
fn softfloat_to_f16(x: u32, mode: RoundingMode) -> (u64, Flags) {
    softfloat_op(mode, || {
        F32::from_bits(x).to_f16(softfloat_round(mode)).to_bits() as u64
    })
}

/// Inputs around each interesting FP32 value: the value and its 8 neighbours either side.
fn around(values: &[f32]) -> Vec<u32> {
    let mut v = Vec::new();
    for &x in values {
        for s in [0u32, 0x8000_0000] {
            let b = x.to_bits();
            for d in 0..=8u32 {
                v.push((b + d) | s);
                if let Some(below) = b.checked_sub(d) {
                    v.push(below | s);
                }
            }
        }
    }
    v
}

/// Checks one FP32 input converted to FP16 or BF16 in every mode; returns how many
/// apfloat convention differences were accepted.
fn check_fp32_to_16(fmt: Format, x: u32, diffs: &mut ApfloatDiffs) {
    for mode in RoundingMode::CONVERSION {
        let ours = from_fp32(fmt, x, mode, Overflow::Ieee);
        let ctx = format!("fp32 {x:#010x} -> {fmt} {}", mode.name());
        let (want, status) = if fmt == FP16 {
            apfloat_convert::<Half>(x, mode)
        } else {
            apfloat_convert::<BFloat>(x, mode)
        };
        if fmt.is_nan(want) {
            assert_eq!(ours.bits, fmt.canonical_nan(), "{ctx}");
        } else {
            assert_eq!(ours.bits, want, "{ctx}: apfloat");
        }
        diffs
            .check(ours.flags, status, fmt, ours.bits)
            .unwrap_or_else(|e| panic!("{ctx}: {e}"));
        if fmt == FP16 {
            let (sf, sf_flags) = softfloat_to_f16(x, mode);
            if fmt.is_nan(sf) {
                assert!(fmt.is_nan(ours.bits), "{ctx}");
            } else {
                assert_eq!(ours.bits, sf, "{ctx}: softfloat");
            }
            assert_eq!(ours.flags, sf_flags, "{ctx}: softfloat flags");
        }
        if mode == RoundingMode::NearestEven {
            let h = if fmt == FP16 {
                half::f16::from_f32(f32::from_bits(x)).to_bits()
            } else {
                half::bf16::from_f32(f32::from_bits(x)).to_bits()
            } as u64;
            if fmt.is_nan(h) {
                assert!(fmt.is_nan(ours.bits), "{ctx}");
            } else {
                assert_eq!(ours.bits, h, "{ctx}: half");
            }
        }
        // satfinite differs from the IEEE result only where that result is infinite.
        let sat = from_fp32(fmt, x, mode, Overflow::Saturate);
        match fmt.infinity(ours.bits & fmt.sign_bit() != 0) {
            Some(inf) if inf == ours.bits => {
                assert_eq!(
                    sat.bits,
                    fmt.max_finite(fmt.sign_of(ours.bits)),
                    "{ctx} sat"
                )
            }
            _ => assert_eq!(sat.bits, ours.bits, "{ctx} sat"),
        }
    }
}

fn fp32_to_16_sweep(fmt: Format, default_n: u64, seed: u64) {
    let n = samples(default_n);
    let start = std::time::Instant::now();
    let mut rng = Rng(seed);
    let mut diffs = ApfloatDiffs::default();
    let (drop, exps): (u32, &[u32]) = if fmt == FP16 {
        // FP16: min subnormal 2^-24, min normal 2^-14, overflow at 2^16.
        (
            13,
            &[
                127 - 26,
                127 - 25,
                127 - 24,
                127 - 15,
                127 - 14,
                127,
                127 + 15,
                127 + 16,
            ],
        )
    } else {
        (16, &[0, 1, 2, 253, 254, 127])
    };
    let fixed = if fmt == FP16 {
        around(&[
            65504.0,
            65520.0,
            2f32.powi(-24),
            2f32.powi(-25),
            2f32.powi(-14),
            1.0,
        ])
    } else {
        around(&[
            f32::MAX,
            2f32.powi(-126),
            2f32.powi(-133),
            2f32.powi(-134),
            1.0,
        ])
    };
    for &x in &fixed {
        check_fp32_to_16(fmt, x, &mut diffs);
    }
    for _ in 0..n {
        let x = if rng.coin() {
            rng.next_u64() as u32
        } else {
            fp32_corner(&mut rng, exps, drop)
        };
        check_fp32_to_16(fmt, x, &mut diffs);
    }
    println!(
        "fp32 -> {fmt}: {} inputs x 5 modes in {:.2} s; accepted apfloat convention differences: {diffs:?}",
        n + fixed.len() as u64,
        secs(start)
    );
}

#[test]
fn fp32_to_fp16_all_modes() {
    fp32_to_16_sweep(FP16, 250_000, 0xC0F16);
}

#[test]
fn fp32_to_bf16_all_modes() {
    fp32_to_16_sweep(BF16, 250_000, 0xC0BF16);
}

/// Checks FP32 (or FP16, via `from`) input `bits`, whose exact value is `x`, against the
/// OCP-table reference for both FP8 formats, every mode and both saturation policies.
fn check_to_fp8(from: Format, bits: u64, x: f64, snan: bool) {
    for (fmt, kind) in [(E4M3, Fp8Kind::E4M3), (E5M2, Fp8Kind::E5M2)] {
        for mode in RoundingMode::CONVERSION {
            for (policy, saturate) in [(Overflow::Ieee, false), (Overflow::Saturate, true)] {
                let ours = convert(from, fmt, bits, mode, policy);
                let mut want = round_to_fp8(kind, x, mode, saturate);
                want.flags.invalid |= snan;
                assert_eq!(
                    (ours.bits, ours.flags),
                    (want.bits as u64, want.flags),
                    "{from} {bits:#x} ({x:e}) -> {fmt} {} {policy:?}",
                    mode.name()
                );
            }
        }
    }
}

#[test]
fn fp8_conversions_against_ocp_table() {
    let start = std::time::Instant::now();
    let mut count = 0u64;
    // Every FP16 value, converted directly from FP16 and from its FP32 widening.
    for h in 0..=u16::MAX {
        let v = half::f16::from_bits(h).to_f32();
        let snan = FP16.is_signaling_nan(h as u64);
        check_to_fp8(FP16, h as u64, v as f64, snan);
        check_to_fp8(FP32, v.to_bits() as u64, v as f64, false);
        count += 2;
    }
    // Every BF16 value as FP32 (all FP32 exponents, Inf and NaNs).
    for b in 0..=u16::MAX {
        let x = (b as u32) << 16;
        check_to_fp8(FP32, x as u64, f32::from_bits(x) as f64, is_fp32_snan(x));
        count += 1;
    }
    // Every midpoint between neighbouring table entries (and beyond the largest), with
    // its FP32 neighbours.
    for kind in [Fp8Kind::E4M3, Fp8Kind::E5M2] {
        let t = kind.table();
        let mut points = Vec::new();
        for c in 0..kind.max_code() as usize {
            points.push(((t[c] + t[c + 1]) / 2.0) as f32);
            points.push(t[c] as f32);
        }
        points.push(((t[kind.max_code() as usize] + kind.beyond_max()) / 2.0) as f32);
        points.push(kind.beyond_max() as f32);
        for x in around(&points) {
            check_to_fp8(FP32, x as u64, f32::from_bits(x) as f64, is_fp32_snan(x));
            count += 1;
        }
    }
    // Random and corner FP32 inputs.
    let n = samples(250_000);
    let mut rng = Rng(0xF8);
    let exps = [
        127 - 17,
        127 - 16,
        127 - 10,
        127 - 9,
        127 - 6,
        127 + 8,
        127 + 15,
        127 + 16,
    ];
    for _ in 0..n {
        let x = if rng.coin() {
            rng.next_u64() as u32
        } else {
            {
                let drop = rng.pick(&[20, 21]);
                fp32_corner(&mut rng, &exps, drop)
            }
        };
        check_to_fp8(FP32, x as u64, f32::from_bits(x) as f64, is_fp32_snan(x));
    }
    count += n;
    println!(
        "-> e4m3/e5m2: {count} inputs x 5 modes x 2 policies x 2 formats in {:.2} s",
        secs(start)
    );
}

#[test]
fn fp8_thresholds_explicit() {
    let c = |fmt, x: f32, mode, policy| from_fp32(fmt, x.to_bits(), mode, policy);
    let rne = RoundingMode::NearestEven;
    let ieee = Overflow::Ieee;
    let sat = Overflow::Saturate;
    let up = |x: f32| f32::from_bits(x.to_bits() + 1);
    let down = |x: f32| f32::from_bits(x.to_bits() - 1);
    // E4M3: 448 is the largest finite value, 464 ties to it, anything above overflows.
    assert_eq!(c(E4M3, 448.0, rne, ieee).bits, 0x7E);
    let r = c(E4M3, 464.0, rne, ieee);
    assert_eq!(
        (r.bits, r.flags.overflow, r.flags.inexact),
        (0x7E, false, true)
    );
    let r = c(E4M3, up(464.0), rne, ieee);
    assert_eq!(
        (r.bits, r.flags.overflow),
        (0x7F, true),
        "NaN, non-saturating"
    );
    let r = c(E4M3, -up(464.0), rne, sat);
    assert_eq!((r.bits, r.flags.overflow), (0xFE, true), "-448, satfinite");
    assert_eq!(c(E4M3, 464.0, RoundingMode::Up, ieee).bits, 0x7F);
    assert_eq!(c(E4M3, 1e30, RoundingMode::TowardZero, ieee).bits, 0x7E);
    // E5M2: 57344 is the largest finite value, 61440 (the midpoint to 2^16) overflows.
    assert_eq!(c(E5M2, down(61440.0), rne, ieee).bits, 0x7B);
    let r = c(E5M2, 61440.0, rne, ieee);
    assert_eq!((r.bits, r.flags.overflow), (0x7C, true));
    assert_eq!(c(E5M2, -61440.0, rne, ieee).bits, 0xFC);
    assert_eq!(c(E5M2, 61440.0, rne, sat).bits, 0x7B);
    assert_eq!(c(E5M2, f32::INFINITY, rne, sat).bits, 0x7B);
    assert_eq!(c(E5M2, f32::NEG_INFINITY, rne, ieee).bits, 0xFC);
    // Half the smallest subnormal goes to signed zero under RNE; the next FP32 above it
    // rounds to the smallest subnormal.
    for (fmt, half_min) in [(E4M3, 2f32.powi(-10)), (E5M2, 2f32.powi(-17))] {
        let r = c(fmt, half_min, rne, ieee);
        assert_eq!(
            (r.bits, r.flags.underflow, r.flags.inexact),
            (0x00, true, true)
        );
        assert_eq!(c(fmt, -half_min, rne, ieee).bits, 0x80);
        assert_eq!(c(fmt, up(half_min), rne, ieee).bits, 0x01);
        assert_eq!(c(fmt, -up(half_min), rne, ieee).bits, 0x81);
        assert_eq!(c(fmt, half_min, RoundingMode::Up, ieee).bits, 0x01);
        assert_eq!(c(fmt, half_min, RoundingMode::ToOdd, ieee).bits, 0x01);
        assert_eq!(c(fmt, -half_min, RoundingMode::Down, ieee).bits, 0x81);
        assert_eq!(c(fmt, half_min, RoundingMode::TowardZero, ieee).bits, 0x00);
    }
}

fn narrow_formats() -> impl Strategy<Value = Format> {
    prop::sample::select(vec![E4M3, E5M2, FP16, BF16])
}

fn modes() -> impl Strategy<Value = RoundingMode> {
    prop::sample::select(RoundingMode::ALL.to_vec())
}

proptest! {
    // No regression files: the tests directory has no lib.rs for proptest to anchor them to,
    // and shrinking prints the minimal counterexample in hex.
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    /// Every non-NaN value of a narrow format (infinities only without satfinite) survives widening to FP32 and narrowing back,
    /// in every mode and policy, exactly and without flags.
    #[test]
    fn widen_then_narrow_round_trips(fmt in narrow_formats(), bits in 0u64..0x1_0000, mode in modes(), sat in any::<bool>()) {
        let bits = bits & fmt.mask();
        prop_assume!(!fmt.is_nan(bits));
        // satfinite maps infinities to the largest finite value, so they do not round trip.
        prop_assume!(!(sat && fmt.classify(bits) == tensorcore_rtl::numerics::Class::Infinite));
        let policy = if sat { Overflow::Saturate } else { Overflow::Ieee };
        let wide = to_fp32(fmt, bits);
        let back = from_fp32(fmt, wide, mode, policy);
        prop_assert_eq!(back.bits, bits, "wide {:#010x}", wide);
        prop_assert!(back.flags.is_empty());
    }

    /// Directed roundings bracket the input, toward-zero never grows it, and round-to-odd
    /// lies between toward-zero and away-from-zero.
    #[test]
    fn directed_roundings_bracket(fmt in narrow_formats(), x in any::<u32>()) {
        let v = f32::from_bits(x);
        prop_assume!(v.is_finite());
        let get = |m| f32::from_bits(to_fp32(fmt, from_fp32(fmt, x, m, Overflow::Saturate).bits));
        let (dn, upv, rz) = (get(RoundingMode::Down), get(RoundingMode::Up), get(RoundingMode::TowardZero));
        let max = f32::from_bits(to_fp32(fmt, fmt.max_finite(false)));
        if v.abs() <= max {
            prop_assert!(dn <= v && v <= upv, "{} <= {} <= {}", dn, v, upv);
        }
        prop_assert!(rz.abs() <= v.abs());
        let rne = get(RoundingMode::NearestEven);
        prop_assert!(rne == dn || rne == upv);
    }
}
