//! FP32 promotion every N products (`numerics::dot::promote`) against an implementation of
//! the rule written here: each chunk's result from an independent reference (host `f32`
//! `mul_add` chains for `ieee`, `verify::exact` for `fused` and `exact`, `verify::nvidia_ref`
//! for the presets), from +0, added into the running sum with the host's `f32` `+` (IEEE,
//! round to nearest even); K <= N is the unpromoted reference from C. Random E4M3, E5M2,
//! FP16 and BF16 rows with specials, several N and K (K not a multiple of N among them);
//! every refusal.

use tensorcore_rtl::gemm::problem::random_operand;
use tensorcore_rtl::gemm::rng::SplitMix64;
use tensorcore_rtl::numerics::dot::promote::{chunk_ranges, dot_promoted, PromoteError};
use tensorcore_rtl::numerics::dot::{dot_acc, dot_batch_promoted, AccMode, DotError, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32};
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow, S8};
use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::verify::exact::{decode, exact_dot, fused_dot, Decoded};
use tensorcore_rtl::verify::nvidia_ref::{nvidia_ref_dot, ref_params};

/// An input pattern's value as a host `f32` (exact for every input format here).
fn host(fmt: Format, bits: u64) -> f32 {
    match decode(fmt, bits) {
        Decoded::Nan => f32::NAN,
        Decoded::Inf(true) => f32::NEG_INFINITY,
        Decoded::Inf(false) => f32::INFINITY,
        Decoded::Finite(v) => v as f32,
    }
}

/// Which mode a case runs, for both sides.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Ieee,
    Fused(usize),
    Exact,
    Nvidia(Preset),
}

impl Mode {
    fn datapath(self, fa: Format, fb: Format) -> (AccMode, usize) {
        match self {
            Mode::Ieee => (AccMode::Ieee, 1),
            Mode::Fused(w) => (AccMode::Fused, w),
            Mode::Exact => (AccMode::Exact, 1),
            Mode::Nvidia(p) => (AccMode::Nvidia(p.params(fa, fb).expect("supported")), 1),
        }
    }

    /// The independent reference of one chunk from the accumulator `c`.
    fn reference(self, fa: Format, fb: Format, a: &[u64], b: &[u64], c: u32) -> u32 {
        match self {
            Mode::Ieee => a
                .iter()
                .zip(b)
                .fold(f32::from_bits(c), |acc, (&x, &y)| {
                    host(fa, x).mul_add(host(fb, y), acc)
                })
                .to_bits(),
            Mode::Fused(w) => fused_dot(fa, fb, a, b, c, w),
            Mode::Exact => exact_dot(fa, fb, a, b, c),
            Mode::Nvidia(p) => {
                nvidia_ref_dot(&ref_params(p, fa, fb).expect("table"), fa, fb, a, b, c)
            }
        }
    }
}

/// The rule, written here: K <= N is one reference dot product from C; otherwise each chunk
/// of N from +0, added into the sum (from C) with host `f32` `+`.
fn rule(mode: Mode, fa: Format, fb: Format, a: &[u64], b: &[u64], c: u32, n: usize) -> u32 {
    if a.len() <= n {
        return mode.reference(fa, fb, a, b, c);
    }
    let mut sum = f32::from_bits(c);
    let mut start = 0;
    while start < a.len() {
        let end = (start + n).min(a.len());
        let part = mode.reference(fa, fb, &a[start..end], &b[start..end], 0);
        sum += f32::from_bits(part);
        start = end;
    }
    sum.to_bits()
}

/// Equal bits, or both NaN (the datapath and the references each have their own NaN).
fn same(x: u32, y: u32) -> bool {
    x == y || (f32::from_bits(x).is_nan() && f32::from_bits(y).is_nan())
}

/// A random operand of `fmt`, one in `1 / special` a NaN or an infinity (where the format
/// has them; E4M3 has no infinity).
fn operand(fmt: Format, rng: &mut SplitMix64, special: u64) -> u64 {
    if special > 0 && rng.below(special) == 0 {
        let sign = rng.next_u64() & 1 == 1;
        return match (rng.below(3), fmt.infinity(sign)) {
            (0, _) | (_, None) => fmt.canonical_nan(),
            (_, Some(inf)) => inf,
        };
    }
    random_operand(fmt, rng)
}

/// Runs `count` random vectors of one case against the rule, for every interval in `ns`.
fn check_case(mode: Mode, fa: Format, fb: Format, ns: &[usize], count: usize, seed: u64) {
    let mut rng = SplitMix64::new(seed);
    let (dmode, width) = mode.datapath(fa, fb);
    for i in 0..count {
        let n = ns[i % ns.len()];
        // K from 0 to about 5 N: below, at and above N, rarely a multiple of it.
        let k = rng.below(5 * n as u64 + 2) as usize;
        // Specials in one vector of eight (one operand in 64 then).
        let special = if i % 8 == 7 { 64 } else { 0 };
        let a: Vec<u64> = (0..k).map(|_| operand(fa, &mut rng, special)).collect();
        let b: Vec<u64> = (0..k).map(|_| operand(fb, &mut rng, special)).collect();
        let c = match i % 5 {
            0 => 0,
            1 => 0x8000_0000,
            _ => random_operand(FP32, &mut rng) as u32,
        };
        let want = rule(mode, fa, fb, &a, &b, c, n);
        let got = dot_promoted(
            &dmode,
            RoundingMode::NearestEven,
            FP32,
            fa,
            fb,
            &a,
            &b,
            c,
            width,
            n,
        )
        .expect("promoted dot")
        .bits;
        assert!(
            same(got, want),
            "{mode:?} {fa}x{fb} N={n} K={k}: got {got:#010x}, rule {want:#010x}\n\
             a={a:x?}\nb={b:x?}\nc={c:#x}"
        );
    }
}

#[test]
fn ieee_chains_match_the_rule() {
    for (i, fmt) in [E4M3, E5M2, FP16, BF16].into_iter().enumerate() {
        check_case(
            Mode::Ieee,
            fmt,
            fmt,
            &[1, 3, 16, 40],
            200,
            0x1000 + i as u64,
        );
    }
    check_case(Mode::Ieee, E4M3, E5M2, &[7, 32], 100, 0x1010);
}

#[test]
fn fused_and_exact_match_the_rule() {
    for (i, fmt) in [E4M3, E5M2, FP16, BF16].into_iter().enumerate() {
        check_case(
            Mode::Fused(4),
            fmt,
            fmt,
            &[5, 16, 33],
            120,
            0x2000 + i as u64,
        );
        check_case(Mode::Exact, fmt, fmt, &[2, 24], 120, 0x2100 + i as u64);
    }
}

#[test]
fn nvidia_presets_match_the_rule() {
    let cases: [(Preset, Format, Format, &[usize]); 8] = [
        (Preset::Hopper, E4M3, E4M3, &[32, 64]),
        (Preset::Hopper, E5M2, E5M2, &[32, 96]),
        (Preset::Hopper, E4M3, E5M2, &[64]),
        (Preset::Hopper, FP16, FP16, &[16, 48]),
        (Preset::Hopper, BF16, BF16, &[16, 32]),
        (Preset::Blackwell, E4M3, E4M3, &[32, 64]),
        (Preset::Ampere, FP16, FP16, &[8, 24]),
        (Preset::Volta, FP16, FP16, &[4, 12]),
    ];
    for (i, (p, fa, fb, ns)) in cases.into_iter().enumerate() {
        check_case(Mode::Nvidia(p), fa, fb, ns, 120, 0x3000 + i as u64);
    }
}

/// N >= K is no promotion: the same bits as the unpromoted dot product, C inside the chain.
#[test]
fn an_interval_of_k_or_more_changes_nothing() {
    let mut rng = SplitMix64::new(0x4000);
    let mode = AccMode::Nvidia(Preset::Hopper.params(E4M3, E4M3).expect("fp8"));
    for _ in 0..50 {
        let k = 1 + rng.below(128) as usize;
        let a: Vec<u64> = (0..k).map(|_| random_operand(E4M3, &mut rng)).collect();
        let b: Vec<u64> = (0..k).map(|_| random_operand(E4M3, &mut rng)).collect();
        let c = random_operand(FP32, &mut rng) as u32;
        let rm = RoundingMode::NearestEven;
        let plain = dot_acc(&mode, rm, FP32, E4M3, E4M3, &a, &b, c, 1).expect("dot");
        for n in [128, 160, 4096] {
            let p = dot_promoted(&mode, rm, FP32, E4M3, E4M3, &a, &b, c, 1, n).expect("dot");
            assert_eq!(p, plain, "K={k} N={n}");
        }
    }
}

/// A hand-worked case: 256 products 1 x 2^-5 (E4M3) into C = 2^12 on Hopper. Unpromoted,
/// every block aligns to C's exponent keeping 13 fraction bits (a grid of 2^-1), so each
/// 2^-5 term is cut and D stays 4096; promoted every 32, each chunk from +0 sums to
/// 32 x 2^-5 = 1 exactly, and the FP32 sum is 4096 + 8 x 1 = 4104 exactly.
#[test]
fn promotion_keeps_what_the_13_bit_cut_drops() {
    let mode = AccMode::Nvidia(Preset::Hopper.params(E4M3, E4M3).expect("fp8"));
    let rm = RoundingMode::NearestEven;
    let one = 0x38; // E4M3 1.0
    let small = 0x10; // E4M3 2^-5 (exponent field 2, bias 7)
    assert_eq!(host(E4M3, small), 2f32.powi(-5));
    let a = vec![one; 256];
    let b = vec![small; 256];
    let c = 4096f32.to_bits();
    let plain = dot_acc(&mode, rm, FP32, E4M3, E4M3, &a, &b, c, 1).expect("dot");
    let promoted = dot_promoted(&mode, rm, FP32, E4M3, E4M3, &a, &b, c, 1, 32).expect("dot");
    assert_eq!(f32::from_bits(plain.bits), 4096.0);
    assert_eq!(f32::from_bits(promoted.bits), 4104.0);
    assert_eq!(promoted.steps, 8);
}

#[test]
fn batch_rows_equal_single_rows() {
    let mut rng = SplitMix64::new(0x5000);
    let mode = AccMode::Nvidia(Preset::Hopper.params(E5M2, E5M2).expect("fp8"));
    let (rows, k, n) = (37, 200, 64);
    let a: Vec<u64> = (0..rows * k)
        .map(|_| operand(E5M2, &mut rng, 500))
        .collect();
    let b: Vec<u64> = (0..rows * k)
        .map(|_| operand(E5M2, &mut rng, 500))
        .collect();
    let c: Vec<u32> = (0..rows)
        .map(|_| random_operand(FP32, &mut rng) as u32)
        .collect();
    let rm = RoundingMode::NearestEven;
    let got = dot_batch_promoted(&mode, rm, FP32, E5M2, E5M2, &a, &b, &c, k, 1, n).expect("batch");
    for r in 0..rows {
        let one = dot_promoted(
            &mode,
            rm,
            FP32,
            E5M2,
            E5M2,
            &a[r * k..(r + 1) * k],
            &b[r * k..(r + 1) * k],
            c[r],
            1,
            n,
        )
        .expect("row");
        assert_eq!((got.d[r], got.flags[r]), (one.bits, one.flags), "row {r}");
        let want = rule(
            Mode::Nvidia(Preset::Hopper),
            E5M2,
            E5M2,
            &a[r * k..(r + 1) * k],
            &b[r * k..(r + 1) * k],
            c[r],
            n,
        );
        assert!(same(got.d[r], want), "row {r}");
    }
}

#[test]
fn chunks_cover_k_in_order() {
    let r: Vec<_> = chunk_ranges(300, 128).collect();
    assert_eq!(r, vec![0..128, 128..256, 256..300]);
    assert_eq!(chunk_ranges(0, 4).count(), 0);
    assert_eq!(chunk_ranges(4, 4).collect::<Vec<_>>(), vec![0..4]);
}

#[test]
fn refusals() {
    let rm = RoundingMode::NearestEven;
    let ones = [0x3C00u64; 4];
    let hopper = AccMode::Nvidia(Preset::Hopper.params(E4M3, E4M3).expect("fp8"));
    let run = |mode: &AccMode, acc: Format, fmt: Format, every: usize| {
        dot_promoted(mode, rm, acc, fmt, fmt, &ones, &ones, 0, 1, every)
    };
    assert_eq!(
        run(&AccMode::Ieee, FP32, FP16, 0),
        Err(PromoteError::ZeroInterval)
    );
    assert_eq!(
        run(&AccMode::Ieee, FP16, FP16, 2),
        Err(PromoteError::NotFp32("fp16"))
    );
    let e = run(&hopper, FP32, E4M3, 48).expect_err("48 splits blocks of 32");
    assert_eq!(
        e,
        PromoteError::SplitsBlock {
            every: 48,
            block: 32
        }
    );
    let msg = e.to_string();
    assert!(msg.contains("48") && msg.contains("32"), "{msg}");
    let int = AccMode::Int(IntMode {
        a: S8,
        b: S8,
        overflow: IntOverflow::Wrap,
    });
    let s8 = S8.container();
    assert_eq!(
        dot_promoted(&int, rm, FP32, s8, s8, &[1], &[1], 0, 1, 4),
        Err(PromoteError::Integer)
    );
    assert_eq!(
        dot_promoted(
            &AccMode::Ieee,
            rm,
            FP32,
            FP16,
            FP16,
            &ones,
            &ones[..3],
            0,
            1,
            2
        ),
        Err(PromoteError::Dot(DotError::LengthMismatch { a: 4, b: 3 }))
    );
    // The dot product's own refusals pass through.
    assert!(matches!(
        run(&AccMode::Ieee, FP32, FP32, 2),
        Err(PromoteError::Dot(DotError::NotAnInput(_)))
    ));
}
