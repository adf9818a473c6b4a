//! `--rounding rne|rtz|rdn|rup` for the `ieee`, `fused` and `exact` modes, results and IEEE
//! flags, against independent references:
//! - `ieee`: the FMA chain against Berkeley SoftFloat's `f32_mulAdd` in the same rounding
//!   direction, one SoftFloat FMA per product (every input format widens to FP32 exactly, so
//!   SoftFloat's FMA is the exact product plus `c`, rounded once); the flags are SoftFloat's
//!   accumulated exception flags over the chain;
//! - `fused` and `exact`: the big-integer sum of `verify::exact` rounded in that direction
//!   (`fused_dot_rounding` per step of `w` products, `exact_dot_rounding` once), with its flags;
//!   a one-product `exact` is also checked against SoftFloat's `f32_mulAdd`, which checks the
//!   big-integer reference's directed rounding itself.
//!
//! Default sample counts keep each sweep well under a second; `TCRTL_SAMPLES=10000000` runs
//! 10^7 FMAs (ieee) or 10^7 products in dot products of 1 to 40 (fused, exact) per rounding
//! mode (docs/numerics.md).
//! NaN results: ours is the canonical `0x7FC00000`, SoftFloat's differs, so only NaN-ness is
//! compared for NaN results (flags exactly).

use crate::common::{fp32_corner, half_corner, samples, secs, softfloat_op, softfloat_round, Rng};
use softfloat_wrapper::{Float as _, F32};
use tensorcore_rtl::numerics::dot::{dot_rounded, AccMode, DotError, Preset, MAX_LANES};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16};
use tensorcore_rtl::numerics::{Flags, RoundingMode};
use tensorcore_rtl::verify::exact::{
    decode, exact_dot_rounding, fused_dot_rounding, Decoded, RefFlags, RefRounding,
};

const MODES: [RoundingMode; 4] = [
    RoundingMode::NearestEven,
    RoundingMode::TowardZero,
    RoundingMode::Down,
    RoundingMode::Up,
];

const PAIRS: [(Format, Format); 5] = [
    (FP16, FP16),
    (BF16, BF16),
    (E4M3, E4M3),
    (E5M2, E5M2),
    (E4M3, E5M2),
];

fn ref_rounding(rm: RoundingMode) -> RefRounding {
    match rm {
        RoundingMode::NearestEven => RefRounding::NearestEven,
        RoundingMode::TowardZero => RefRounding::TowardZero,
        RoundingMode::Down => RefRounding::Down,
        RoundingMode::Up => RefRounding::Up,
        RoundingMode::ToOdd | RoundingMode::NearestAway => {
            unreachable!("round-to-odd and ties-away are not offered for dot products")
        }
    }
}

fn flags_of(f: RefFlags) -> Flags {
    Flags {
        invalid: f.invalid,
        overflow: f.overflow,
        underflow: f.underflow,
        inexact: f.inexact,
    }
}

fn is_nan32(x: u32) -> bool {
    x & 0x7FFF_FFFF > 0x7F80_0000
}

/// Widens an input pattern to the FP32 pattern of the same value, bit by bit from the
/// encodings (signaling NaNs stay signaling, so SoftFloat raises invalid on them as we do):
/// BF16 is FP32's top half, E5M2 is FP16's top byte, FP16 re-biases its exponent; E4M3 (no
/// infinity, no signaling NaN) goes through the OCP table of `verify`.
fn widen(fmt: Format, bits: u64) -> u32 {
    match fmt.name {
        "bf16" => (bits as u32) << 16,
        "e5m2" => widen(FP16, bits << 8),
        "fp16" => {
            let h = bits as u32;
            let sign = (h & 0x8000) << 16;
            if h & 0x7C00 == 0x7C00 {
                sign | 0x7F80_0000 | ((h & 0x3FF) << 13)
            } else {
                sign | (half::f16::from_bits(h as u16).to_f32().to_bits() & 0x7FFF_FFFF)
            }
        }
        _ => match decode(fmt, bits) {
            Decoded::Nan => 0x7FC0_0000,
            Decoded::Inf(n) => 0x7F80_0000 | (n as u32) << 31,
            Decoded::Finite(v) => (v as f32).to_bits(),
        },
    }
}

/// An input pattern: corner encodings (zeros, subnormals, extremes, Inf, NaN) for the 16-bit
/// formats, any byte for FP8 (256 patterns; every corner is one of them), and values near 1
/// half the time so that products carry and cancel against each other and against `c`.
fn operand(rng: &mut Rng, fmt: Format) -> u64 {
    let sign = (rng.coin() as u64) << (fmt.width() - 1);
    let frac = rng.next_u64() & fmt.frac_mask();
    match rng.below(8) {
        0..=3 => {
            let e = (fmt.bias as u64 + rng.below(5)).saturating_sub(2);
            return sign | (e << fmt.frac_bits) | frac;
        }
        4 => {
            // Small: exponents in the lower half of the range (BF16 products then fall
            // below FP32's normals, so sums underflow).
            let e = 1 + rng.below(fmt.bias as u64 / 2);
            return sign | (e << fmt.frac_bits) | frac;
        }
        _ => {}
    }
    match fmt.name {
        "fp16" => half_corner(rng, 5, 10) as u64,
        "bf16" => half_corner(rng, 8, 7) as u64,
        _ => rng.next_u64() & 0xFF,
    }
}

/// The accumulator: a TestFloat-style FP32 corner (overflow near the largest finite value,
/// underflow among subnormals, ties in the low bits), or a value near 1.
fn accumulator(rng: &mut Rng) -> u32 {
    match rng.below(6) {
        0 => rng.next_u64() as u32 & 0x80FF_FFFF, // subnormal or just above
        1 => (0x3F00_0000 + (rng.next_u64() as u32 & 0x00FF_FFFF)) | ((rng.coin() as u32) << 31),
        _ => fp32_corner(rng, &[1, 100, 127, 150, 254], 8),
    }
}

/// One random vector of K products and its C.
fn case(rng: &mut Rng, fa: Format, fb: Format, max_k: u64) -> (Vec<u64>, Vec<u64>, u32) {
    let k = 1 + rng.below(max_k) as usize;
    let a = (0..k).map(|_| operand(rng, fa)).collect();
    let b = (0..k).map(|_| operand(rng, fb)).collect();
    (a, b, accumulator(rng))
}

/// A BF16 vector whose products and sums lie near FP32's subnormal range (2^-140 and below)
/// with a subnormal `c`: results round among subnormals and raise underflow.
fn tiny_case(rng: &mut Rng) -> (Vec<u64>, Vec<u64>, u32) {
    let k = 1 + rng.below(8) as usize;
    let tiny = |rng: &mut Rng| {
        let e = 55 + rng.below(20); // 2^-72 .. 2^-53
        ((rng.coin() as u64) << 15) | (e << 7) | (rng.next_u64() & 0x7F)
    };
    let a = (0..k).map(|_| tiny(rng)).collect();
    let b = (0..k).map(|_| tiny(rng)).collect();
    let c = (rng.next_u64() as u32) & 0x8000_FFFF;
    (a, b, c)
}

/// SoftFloat's FMA chain `c <- f32_mulAdd(a_k, b_k, c)`, flags accumulated over the chain.
fn softfloat_chain(
    fa: Format,
    fb: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    rm: RoundingMode,
) -> (u32, Flags) {
    let (r, flags) = softfloat_op(rm, || {
        let mut acc = F32::from_bits(c);
        for (&x, &y) in a.iter().zip(b) {
            let (x, y) = (F32::from_bits(widen(fa, x)), F32::from_bits(widen(fb, y)));
            acc = x.fused_mul_add(y, acc, softfloat_round(rm));
        }
        acc.to_bits() as u64
    });
    (r as u32, flags)
}

fn assert_bits(ours: u32, theirs: u32, ctx: &dyn Fn() -> String) {
    if is_nan32(theirs) {
        assert_eq!(ours, 0x7FC0_0000, "{}", ctx());
    } else {
        assert_eq!(ours, theirs, "{}", ctx());
    }
}

fn ieee_sweep(rm: RoundingMode, seed: u64) {
    let fmas = samples(200_000);
    let start = std::time::Instant::now();
    let mut rng = Rng(seed);
    let (mut done, mut vectors) = (0u64, 0u64);
    let mut raised = [0u64; 4];
    while done < fmas {
        let (fa, fb) = rng.pick(&PAIRS);
        let (a, b, c) = case(&mut rng, fa, fb, 8);
        let ours = dot_rounded(&AccMode::Ieee, rm, fa, fb, &a, &b, c, 1).expect("valid shape");
        let (sf, sf_flags) = softfloat_chain(fa, fb, &a, &b, c, rm);
        let ctx = || format!("ieee {} {fa}x{fb} a={a:x?} b={b:x?} c={c:#010x}", rm.name());
        assert_bits(ours.bits, sf, &ctx);
        assert_eq!(ours.flags, sf_flags, "{}: flags", ctx());
        for (n, f) in raised.iter_mut().zip([
            sf_flags.invalid,
            sf_flags.overflow,
            sf_flags.underflow,
            sf_flags.inexact,
        ]) {
            *n += f as u64;
        }
        done += a.len() as u64;
        vectors += 1;
    }
    println!(
        "ieee {}: {done} FMAs ({vectors} chains) match SoftFloat f32_mulAdd in {:.2} s; \
         chains raising invalid/overflow/underflow/inexact: {raised:?}",
        rm.name(),
        secs(start)
    );
    // The sweep must reach every flag, or it proves little about them.
    assert!(raised.iter().all(|&n| n > 0), "{raised:?}");
}

fn fused_exact_sweep(rm: RoundingMode, seed: u64) {
    let products = samples(200_000);
    let start = std::time::Instant::now();
    let mut rng = Rng(seed);
    let (mut single, mut done, mut n) = (0u64, 0u64, 0u64);
    let mut raised = [0u64; 4];
    while done < products {
        let i = n;
        let ((fa, fb), (a, b, c)) = if rng.below(8) == 0 {
            ((BF16, BF16), tiny_case(&mut rng))
        } else {
            let (fa, fb) = rng.pick(&PAIRS);
            ((fa, fb), case(&mut rng, fa, fb, 40))
        };
        let width = 1 + rng.below(MAX_LANES as u64) as usize;
        let ctx = |m: &str| {
            format!(
                "{m} {} w={width} {fa}x{fb} a={a:x?} b={b:x?} c={c:#010x}",
                rm.name()
            )
        };
        let (mode, (rb, rf)) = if i % 2 == 0 {
            (
                AccMode::Fused,
                fused_dot_rounding(fa, fb, &a, &b, c, width, ref_rounding(rm)),
            )
        } else {
            (
                AccMode::Exact,
                exact_dot_rounding(fa, fb, &a, &b, c, ref_rounding(rm)),
            )
        };
        let ours = dot_rounded(&mode, rm, fa, fb, &a, &b, c, width).expect("valid shape");
        assert_bits(ours.bits, rb, &|| ctx(mode.name()));
        assert_eq!(ours.flags, flags_of(rf), "{}: flags", ctx(mode.name()));
        for (n, f) in raised
            .iter_mut()
            .zip([rf.invalid, rf.overflow, rf.underflow, rf.inexact])
        {
            *n += f as u64;
        }
        // One product: the big-integer reference's rounding against SoftFloat's FMA.
        let (ra, rb1) = (&a[..1], &b[..1]);
        let (eb, ef) = exact_dot_rounding(fa, fb, ra, rb1, c, ref_rounding(rm));
        let (sf, sf_flags) = softfloat_chain(fa, fb, ra, rb1, c, rm);
        assert_bits(eb, sf, &|| ctx("exact vs softfloat"));
        assert_eq!(
            flags_of(ef),
            sf_flags,
            "{}: flags",
            ctx("exact vs softfloat")
        );
        single += 1;
        done += a.len() as u64;
        n += 1;
    }
    println!(
        "fused/exact {}: {n} dot products ({done} products) match the big-integer reference, \
         {single} single \
         FMAs of the reference match SoftFloat, in {:.2} s; \
         invalid/overflow/underflow/inexact raised: {raised:?}",
        rm.name(),
        secs(start)
    );
    assert!(raised.iter().all(|&n| n > 0), "{raised:?}");
}

#[test]
fn ieee_rne_matches_softfloat() {
    ieee_sweep(MODES[0], 11);
}

#[test]
fn ieee_rtz_matches_softfloat() {
    ieee_sweep(MODES[1], 12);
}

#[test]
fn ieee_rdn_matches_softfloat() {
    ieee_sweep(MODES[2], 13);
}

#[test]
fn ieee_rup_matches_softfloat() {
    ieee_sweep(MODES[3], 14);
}

#[test]
fn fused_exact_rne_match_big_integer_sums() {
    fused_exact_sweep(MODES[0], 21);
}

#[test]
fn fused_exact_rtz_match_big_integer_sums() {
    fused_exact_sweep(MODES[1], 22);
}

#[test]
fn fused_exact_rdn_match_big_integer_sums() {
    fused_exact_sweep(MODES[2], 23);
}

#[test]
fn fused_exact_rup_match_big_integer_sums() {
    fused_exact_sweep(MODES[3], 24);
}

#[test]
fn directed_rounding_landmarks() {
    // 1 + 2^-24 (FP16: 1 x 2^-24 is the smallest subnormal times one) lies between 1 and
    // 1 + 2^-23: down and toward zero give 1, up gives 1 + 2^-23, nearest ties to even 1.
    let one = 0x3C00u64;
    let tiny = 0x0001u64;
    let c = 0x3F80_0000;
    let expect = [
        (RoundingMode::NearestEven, 0x3F80_0000),
        (RoundingMode::TowardZero, 0x3F80_0000),
        (RoundingMode::Down, 0x3F80_0000),
        (RoundingMode::Up, 0x3F80_0001),
    ];
    for mode in [AccMode::Ieee, AccMode::Fused, AccMode::Exact] {
        for (rm, bits) in expect {
            let r = dot_rounded(&mode, rm, FP16, FP16, &[one], &[tiny], c, 1).expect("shape");
            assert_eq!(r.bits, bits, "{} {}", mode.name(), rm.name());
            assert!(r.flags.inexact);
        }
    }
    // Exact cancellation: 1 - 1 is +0 except toward negative infinity.
    for (rm, bits) in [
        (RoundingMode::NearestEven, 0u32),
        (RoundingMode::Down, 0x8000_0000),
        (RoundingMode::Up, 0),
    ] {
        for mode in [AccMode::Ieee, AccMode::Fused, AccMode::Exact] {
            let r = dot_rounded(&mode, rm, FP16, FP16, &[one], &[0xBC00], c, 4).expect("shape");
            assert_eq!(r.bits, bits, "{} {}", mode.name(), rm.name());
        }
    }
    // Overflow: the largest finite value plus 2^104 (BF16 2^52 x 2^52): Inf to nearest and up,
    // the largest finite value toward zero and down.
    let big = 0x5980u64; // BF16 2^52
    for (rm, bits) in [
        (RoundingMode::NearestEven, 0x7F80_0000u32),
        (RoundingMode::TowardZero, 0x7F7F_FFFF),
        (RoundingMode::Down, 0x7F7F_FFFF),
        (RoundingMode::Up, 0x7F80_0000),
    ] {
        let r = dot_rounded(
            &AccMode::Fused,
            rm,
            BF16,
            BF16,
            &[big],
            &[big],
            0x7F7F_FFFF,
            1,
        )
        .expect("shape");
        assert_eq!(r.bits, bits, "{}", rm.name());
        assert!(r.flags.overflow && r.flags.inexact, "{}", rm.name());
    }
}

#[test]
fn nvidia_keeps_its_rounding() {
    let p = Preset::Hopper.params(FP16, FP16).expect("hopper fp16");
    let mode = AccMode::Nvidia(p);
    let ok = dot_rounded(
        &mode,
        RoundingMode::NearestEven,
        FP16,
        FP16,
        &[0x3C00],
        &[0x3C00],
        0,
        1,
    );
    assert_eq!(ok.map(|r| r.bits), Ok(0x3F80_0000));
    for rm in [
        RoundingMode::TowardZero,
        RoundingMode::Down,
        RoundingMode::Up,
    ] {
        let e = dot_rounded(&mode, rm, FP16, FP16, &[0x3C00], &[0x3C00], 0, 1);
        assert!(
            matches!(e, Err(DotError::FixedRounding { .. })),
            "{}",
            rm.name()
        );
    }
    let e = dot_rounded(
        &AccMode::Ieee,
        RoundingMode::ToOdd,
        FP16,
        FP16,
        &[0],
        &[0],
        0,
        1,
    );
    assert!(matches!(e, Err(DotError::FixedRounding { .. })));
}
