//! FP16 accumulation (`dot_acc` with the FP16 accumulator) in every IEEE rounding direction,
//! results and flags, against Berkeley SoftFloat:
//! - `ieee`: the chain `c <- f16_mulAdd(a_k, b_k, c)` in the same direction (FP16, E5M2 and
//!   E4M3 values are all FP16 values, so SoftFloat's F16 FMA is the exact product plus `c`
//!   rounded once to FP16);
//! - `fused` and `exact`: the products and `c` summed in SoftFloat's F128, which is exact here
//!   (FP16 and FP8 products are multiples of 2^-48 below 2^33, so a sum of at most 24 terms
//!   needs fewer than 90 of F128's 113 bits), then `f128_to_f16` in the same direction, per
//!   step of `w` products (`fused`) or once (`exact`).
//!
//! NaN results: ours is the canonical `0x7E00`, SoftFloat's may differ, so only NaN-ness is
//! compared for NaN results (flags exactly). `TCRTL_SAMPLES=N` raises the sample count.

use crate::common::{half_corner, samples, softfloat_op, softfloat_round, Rng};
use softfloat_wrapper::{Float as _, F128, F16};
use tensorcore_rtl::numerics::dot::{dot_acc, AccMode};
use tensorcore_rtl::numerics::format::{Format, E4M3, E5M2, FP16};
use tensorcore_rtl::numerics::{Flags, RoundingMode};
use tensorcore_rtl::verify::exact::{decode, Decoded};

const MODES: [RoundingMode; 4] = [
    RoundingMode::NearestEven,
    RoundingMode::TowardZero,
    RoundingMode::Down,
    RoundingMode::Up,
];

const PAIRS: [(Format, Format); 4] = [(FP16, FP16), (E5M2, E5M2), (E4M3, E4M3), (E4M3, E5M2)];

/// The FP16 pattern of the same value, from the encodings: E5M2 is FP16's top byte (so a
/// signaling NaN stays signaling); E4M3 (no infinity, no signaling NaN) goes through the OCP
/// table of `verify` and the `half` crate.
fn widen16(fmt: Format, bits: u64) -> u16 {
    if fmt == FP16 {
        bits as u16
    } else if fmt == E5M2 {
        (bits as u16) << 8
    } else {
        match decode(fmt, bits) {
            Decoded::Nan => 0x7E00,
            Decoded::Inf(n) => 0x7C00 | (n as u16) << 15,
            Decoded::Finite(v) => {
                let h = half::f16::from_f64(v);
                assert_eq!(h.to_f64(), v, "{fmt} value {v} is not an FP16 value");
                h.to_bits()
            }
        }
    }
}

fn operand(rng: &mut Rng, fmt: Format) -> u64 {
    if fmt == FP16 {
        match rng.below(3) {
            0 => half_corner(rng, 5, 10) as u64,
            // Near 1, so that products carry and cancel against each other and against c.
            _ => {
                let e = 13 + rng.below(5);
                ((rng.coin() as u64) << 15) | (e << 10) | (rng.next_u64() & 0x3FF)
            }
        }
    } else {
        rng.next_u64() & 0xFF
    }
}

fn accumulator(rng: &mut Rng) -> u32 {
    half_corner(rng, 5, 10) as u32
}

fn is_nan16(x: u32) -> bool {
    x & 0x7FFF > 0x7C00
}

fn check(ours: (u32, Flags), theirs: (u32, Flags), ctx: &dyn Fn() -> String) {
    if is_nan16(theirs.0) {
        assert_eq!(ours.0, 0x7E00, "{}", ctx());
    } else {
        assert_eq!(ours.0, theirs.0, "{}", ctx());
    }
    assert_eq!(ours.1, theirs.1, "{}: flags", ctx());
}

/// SoftFloat's F16 FMA chain.
fn softfloat_chain(
    fa: Format,
    fb: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    rm: RoundingMode,
) -> (u32, Flags) {
    let (r, f) = softfloat_op(rm, || {
        let mut acc = F16::from_bits(c as u16);
        for (&x, &y) in a.iter().zip(b) {
            let x = F16::from_bits(widen16(fa, x));
            let y = F16::from_bits(widen16(fb, y));
            acc = x.fused_mul_add(y, acc, softfloat_round(rm));
        }
        acc.to_bits() as u64
    });
    (r as u32, f)
}

/// `c` plus the products of one step summed exactly in F128, then rounded to F16 once.
/// (F128 products of FP16 values are exact, so the direction passed to them is moot.)
fn softfloat_exact_step(
    fa: Format,
    fb: Format,
    a: &[u64],
    b: &[u64],
    c: u16,
    rm: RoundingMode,
) -> u16 {
    let r = softfloat_round(rm);
    let mut acc = F16::from_bits(c).to_f128(r);
    let products: Vec<F128> = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| {
            let x = F16::from_bits(widen16(fa, x)).to_f128(r);
            let y = F16::from_bits(widen16(fb, y)).to_f128(r);
            x.mul(y, r)
        })
        .collect();
    // The contract decides specials first: a NaN among `c` and the products gives NaN
    // (invalid only from a signaling NaN or 0 x Inf, raised above), so +Inf with -Inf
    // beside a NaN is no invalid addition.
    if acc.is_nan() || products.iter().any(|p| p.is_nan()) {
        return 0x7E00;
    }
    for p in products {
        acc = acc.add(p, r);
    }
    acc.to_f16(r).to_bits()
}

/// `fused` with `width` products a step (`exact` when `width >= K`).
fn softfloat_fused(
    fa: Format,
    fb: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    width: usize,
    rm: RoundingMode,
) -> (u32, Flags) {
    let (r, f) = softfloat_op(rm, || {
        let mut acc = c as u16;
        for (ca, cb) in a.chunks(width).zip(b.chunks(width)) {
            acc = softfloat_exact_step(fa, fb, ca, cb, acc, rm);
        }
        acc as u64
    });
    (r as u32, f)
}

fn sweep(mode: AccMode, seed: u64) {
    let n = samples(20_000);
    let mut rng = Rng(seed);
    let mut inexact = 0u64;
    for i in 0..n {
        let rm = MODES[(i % 4) as usize];
        let (fa, fb) = rng.pick(&PAIRS);
        let k = 1 + rng.below(16) as usize;
        let a: Vec<u64> = (0..k).map(|_| operand(&mut rng, fa)).collect();
        let b: Vec<u64> = (0..k).map(|_| operand(&mut rng, fb)).collect();
        let c = accumulator(&mut rng);
        let width = 1 + rng.below(8) as usize;
        let ours = dot_acc(&mode, rm, FP16, fa, fb, &a, &b, c, width).expect("valid shape");
        let theirs = match mode {
            AccMode::Ieee => softfloat_chain(fa, fb, &a, &b, c, rm),
            AccMode::Fused => softfloat_fused(fa, fb, &a, &b, c, width, rm),
            _ => softfloat_fused(fa, fb, &a, &b, c, k, rm),
        };
        inexact += theirs.1.inexact as u64;
        let ctx = || {
            format!(
                "{} {} {fa}x{fb} w={width} a={a:x?} b={b:x?} c={c:#06x}",
                mode.name(),
                rm.name()
            )
        };
        check((ours.bits, ours.flags), theirs, &ctx);
    }
    // The sweep must exercise rounding, not only exact sums.
    assert!(
        inexact > n / 10,
        "only {inexact} of {n} results were inexact"
    );
}

#[test]
fn ieee_fp16_output_matches_softfloat_f16_fma_chain() {
    sweep(AccMode::Ieee, 0x16E1);
}

#[test]
fn fused_fp16_output_matches_softfloat_exact_steps() {
    sweep(AccMode::Fused, 0x16F5);
}

#[test]
fn exact_fp16_output_matches_softfloat_one_rounding() {
    sweep(AccMode::Exact, 0x16EA);
}

/// Directed ties and the overflow threshold, written out: 1 + 2^-11 (a tie) and 65504 + 16
/// (half an ulp above the largest FP16) in each direction.
#[test]
fn fp16_output_directed_landmarks() {
    let one = 0x3C00u64;
    let tie = 0x1000u64; // 2^-11
    for (rm, want) in [
        (RoundingMode::NearestEven, 0x3C00),
        (RoundingMode::TowardZero, 0x3C00),
        (RoundingMode::Down, 0x3C00),
        (RoundingMode::Up, 0x3C01),
    ] {
        let d = dot_acc(
            &AccMode::Exact,
            rm,
            FP16,
            FP16,
            FP16,
            &[one, tie],
            &[one, one],
            0,
            2,
        )
        .unwrap();
        assert_eq!(d.bits, want, "{}", rm.name());
        assert!(d.flags.inexact);
    }
    // 65504 + 16 (c = 0x4C00): RNE ties to even, past 65504 (odd significand) to Inf; RZ and
    // RDN keep 65504 (no overflow: the rounded value is finite); RUP overflows to Inf.
    let max = 0x7BFFu64;
    for (rm, want, overflow) in [
        (RoundingMode::NearestEven, 0x7C00, true),
        (RoundingMode::TowardZero, 0x7BFF, false),
        (RoundingMode::Down, 0x7BFF, false),
        (RoundingMode::Up, 0x7C00, true),
    ] {
        let d = dot_acc(
            &AccMode::Ieee,
            rm,
            FP16,
            FP16,
            FP16,
            &[max],
            &[one],
            0x4C00,
            1,
        )
        .unwrap();
        assert_eq!(d.bits, want, "{}", rm.name());
        assert_eq!(d.flags.overflow, overflow, "{}", rm.name());
        assert!(d.flags.inexact, "{}", rm.name());
    }
}
