//! The weight-stationary order: the functional model with `Dataflow::Ws` against the
//! independent reference `verify::ws_ref` (each fold through this layer's per-element
//! references from the negative-zero identity, the folds added to C by host arithmetic), bit
//! for bit and flag for flag where the references give flags; over every mode, FP32 and FP16
//! accumulators, every width, arrays of 1..=8, 16 and 32 rows, K of one, two and many folds
//! (partial last folds included) and special values. Also: the host fold addition against
//! the big-integer rounding, one fold = the os chain from -0 then one addition of C, and a
//! problem on which ws and os differ.

use proptest::prelude::*;
use tensorcore_rtl::gemm::{run_functional, Gemm};
use tensorcore_rtl::hw::{CoreConfig, Dataflow};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::flags::Flags;
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32, TF32};
use tensorcore_rtl::numerics::int::{IntFormat, IntMode, IntOverflow, S4, S8, U4, U8};
use tensorcore_rtl::verify::exact::RefFlags;
use tensorcore_rtl::verify::gemm_ref::Reference;
use tensorcore_rtl::verify::ws_ref::{
    fold_add_exact, host_add_fp16, host_add_fp32, host_add_int, FP16_CANONICAL_NAN, FP16_NEG_ZERO,
    FP32_CANONICAL_NAN, FP32_NEG_ZERO,
};

use crate::common::Rng;

/// The arrays' row counts under test: 1..=8, 16 and 32.
const ROWS: [usize; 10] = [1, 2, 3, 4, 5, 6, 7, 8, 16, 32];
/// The PE widths.
const WIDTHS: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// One accumulation setup: the mode (with the preset for nvidia), the operand formats and the
/// accumulator.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Ieee,
    Fused,
    Nvidia(Preset),
    Int(IntFormat, IntFormat, IntOverflow),
}

#[derive(Clone, Copy, Debug)]
struct Setup {
    kind: Kind,
    fa: Format,
    fb: Format,
    acc: Format,
}

impl Setup {
    fn mode(&self) -> AccMode {
        match self.kind {
            Kind::Ieee => AccMode::Ieee,
            Kind::Fused => AccMode::Fused,
            Kind::Nvidia(p) => AccMode::Nvidia(
                p.params_for(self.fa, self.fb, self.acc)
                    .expect("a GPU path"),
            ),
            Kind::Int(a, b, overflow) => AccMode::Int(IntMode { a, b, overflow }),
        }
    }

    fn preset(&self) -> Option<Preset> {
        match self.kind {
            Kind::Nvidia(p) => Some(p),
            _ => None,
        }
    }

    /// The NVIDIA block size (1 otherwise): the ws core needs `width >= n`.
    fn block(&self) -> usize {
        match self.mode() {
            AccMode::Nvidia(p) => p.block,
            _ => 1,
        }
    }
}

/// Every mode under test: ieee and fused on three input pairs into FP32 and FP16; the nvidia
/// presets on each input kind they have, into FP32 and (where the GPU has it) FP16; the
/// integer modes, wrapping and saturating.
fn setups() -> Vec<Setup> {
    let mut v = Vec::new();
    let both = [FP32, FP16];
    for kind in [Kind::Ieee, Kind::Fused] {
        for (fa, fb) in [(FP16, FP16), (BF16, BF16), (E4M3, E5M2)] {
            for acc in both {
                v.push(Setup { kind, fa, fb, acc });
            }
        }
    }
    use Preset::{Ada, Ampere, Blackwell, Hopper, Volta};
    let nv = [
        (Volta, FP16, FP16, &both[..]),
        (Ampere, FP16, FP16, &both[..]),
        (Ampere, BF16, BF16, &[FP32][..]),
        (Ampere, TF32, TF32, &[FP32][..]),
        (Ada, E4M3, E4M3, &both[..]),
        (Hopper, FP16, FP16, &both[..]),
        (Hopper, E4M3, E5M2, &both[..]),
        (Hopper, TF32, TF32, &[FP32][..]),
        (Blackwell, E4M3, E4M3, &both[..]),
        (Blackwell, BF16, BF16, &[FP32][..]),
    ];
    for (p, fa, fb, accs) in nv {
        for &acc in accs {
            v.push(Setup {
                kind: Kind::Nvidia(p),
                fa,
                fb,
                acc,
            });
        }
    }
    for (a, b, o) in [
        (S8, S8, IntOverflow::Wrap),
        (U8, S8, IntOverflow::SatFinite),
        (S4, U4, IntOverflow::Wrap),
        (U4, U4, IntOverflow::SatFinite),
        (S8, U8, IntOverflow::SatFinite),
    ] {
        v.push(Setup {
            kind: Kind::Int(a, b, o),
            fa: a.container(),
            fb: b.container(),
            acc: FP32,
        });
    }
    v
}

/// How a problem's operands are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    /// Finite values with exponents within +-6 of 1, zeros and subnormals mixed in.
    Plain,
    /// Plain, plus a few NaNs, infinities and signed zeros at random places, and C special.
    Specials,
    /// Exponents near the top of the format: fold sums overflow FP16 (and FP32 from BF16 and
    /// TF32 inputs).
    Big,
    /// The second half of K cancels the first (A negated, B repeated): folds cancel.
    Cancel,
}

const STYLES: [Style; 4] = [Style::Plain, Style::Specials, Style::Big, Style::Cancel];

/// One finite value of `fmt` with unbiased exponent in `lo..=hi` (clamped to the format), or
/// 1 in 16 a signed zero, 1 in 16 a subnormal.
fn finite(rng: &mut Rng, fmt: Format, lo: i64, hi: i64) -> u64 {
    let sign = rng.coin();
    let frac = rng.next_u64() & fmt.frac_mask();
    let mag = match rng.below(16) {
        0 => 0,
        1 => frac.max(1),
        _ => {
            let e = lo + rng.below((hi - lo + 1) as u64) as i64 + i64::from(fmt.bias);
            let e = e.clamp(1, fmt.exp_field_max() as i64 - 1) as u64;
            ((e << fmt.frac_bits) | frac).min(fmt.max_finite_magnitude())
        }
    };
    fmt.with_sign(mag, sign)
}

/// A special value of `fmt`: NaN, a signed infinity (the largest finite value where the
/// format has none) or a signed zero.
fn special(rng: &mut Rng, fmt: Format) -> u64 {
    let sign = rng.coin();
    match rng.below(4) {
        0 => fmt.canonical_nan(),
        1 | 2 => fmt.infinity(sign).unwrap_or_else(|| fmt.max_finite(sign)),
        _ => fmt.zero(sign),
    }
}

fn operand(rng: &mut Rng, fmt: Format, style: Style) -> u64 {
    match style {
        Style::Big => {
            let top = fmt.emax() as i64;
            finite(rng, fmt, top - 3, top)
        }
        _ => finite(rng, fmt, -6, 6),
    }
}

/// The problem `m x n x k` of `setup` on an array of `rows` rows with `width` products per PE,
/// in the weight-stationary dataflow, operands drawn in `style`.
fn problem(
    rng: &mut Rng,
    s: &Setup,
    width: usize,
    rows: usize,
    (m, n, k): (usize, usize, usize),
    style: Style,
) -> Gemm {
    let cfg = CoreConfig::new(s.fa, s.fb, s.mode(), width)
        .with_acc(s.acc)
        .with_array(rows, 4)
        .expect("an array size in range")
        .with_dataflow(Dataflow::Ws);
    if let Kind::Int(ia, ib, _) = s.kind {
        let a = (0..m * k).map(|_| rng.next_u64() & ia.mask()).collect();
        let b = (0..k * n).map(|_| rng.next_u64() & ib.mask()).collect();
        // C near the int32 limits half the time, so the fold additions wrap or clamp.
        let c = (0..m * n)
            .map(|_| match rng.below(4) {
                0 => (i32::MAX - rng.below(1 << 20) as i32) as u32,
                1 => (i32::MIN + rng.below(1 << 20) as i32) as u32,
                _ => rng.next_u64() as u32,
            })
            .collect();
        return Gemm::new(m, n, k, cfg, a, b, c).expect("a valid problem");
    }
    let mut a: Vec<u64> = (0..m * k).map(|_| operand(rng, s.fa, style)).collect();
    let b: Vec<u64> = (0..k * n).map(|_| operand(rng, s.fb, style)).collect();
    let mut c: Vec<u32> = (0..m * n)
        .map(|_| operand(rng, s.acc, style) as u32)
        .collect();
    match style {
        Style::Specials => {
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(a.len() as u64) as usize;
                a[i] = special(rng, s.fa);
            }
            for x in c.iter_mut() {
                if rng.below(3) == 0 {
                    *x = special(rng, s.acc) as u32;
                }
            }
            // A signaling NaN in C: invalid at the first fold addition.
            if rng.below(4) == 0 {
                c[0] = if s.acc == FP16 { 0x7D00 } else { 0x7F80_0001 };
            }
        }
        Style::Cancel if k >= 2 => {
            // B's rows of the second half repeat the first half's, A's are negated (B is
            // shared, so A's row i mirrors it only where B does: make B symmetric first).
            let h = k / 2;
            let sign = s.fa.sign_bit();
            for i in 0..m {
                for j in 0..h {
                    a[i * k + h + j] = a[i * k + j] ^ sign;
                }
            }
            let mut b = b;
            for p in 0..h {
                for j in 0..n {
                    b[(h + p) * n + j] = b[p * n + j];
                }
            }
            return Gemm::new(m, n, k, cfg, a, b, c).expect("a valid problem");
        }
        _ => {}
    }
    Gemm::new(m, n, k, cfg, a, b, c).expect("a valid problem")
}

fn flags_of(f: RefFlags) -> Flags {
    Flags {
        invalid: f.invalid,
        overflow: f.overflow,
        underflow: f.underflow,
        inexact: f.inexact,
    }
}

/// The functional model in ws against the independent reference: D bit for bit, the flags
/// where the reference has them, and the reference's host additions against its big-integer
/// roundings. Returns D.
fn check(g: &Gemm, s: &Setup, label: &str) -> Vec<u32> {
    let r = Reference::for_problem(g, s.preset()).expect("an independent reference");
    let got = run_functional(g).expect("functional run");
    let rows = g.cfg.rows();
    let want = r.ws_gemm(g, rows).expect("a ws reference");
    assert_eq!(got.d, want, "{label}: functional ws vs verify::ws_ref");
    let (bits, flags) = r.ws_gemm_flags(g, rows).expect("a ws reference");
    assert_eq!(
        bits, want,
        "{label}: host additions vs big-integer roundings"
    );
    if let Some(f) = flags {
        assert_eq!(got.flags, flags_of(f), "{label}: flags");
    }
    got.d
}

/// K for `folds` folds of `fold` elements, the last holding `last` of them (1..=fold).
fn k_for(fold: usize, folds: usize, last: usize) -> usize {
    (folds - 1) * fold + last
}

/// Every setup at every width it can be built with (nvidia: `w >= n`), each on a few of the
/// row counts and K of one, two and several folds (full and partial), in all four styles in
/// turn.
#[test]
fn every_mode_width_and_array_matches_the_reference() {
    let mut rng = Rng(0x5753_0001);
    let mut turn = 0usize;
    let (mut cases, mut multi_fold, mut partial) = (0, 0, 0);
    for s in setups() {
        for &w in WIDTHS.iter().filter(|&&w| w >= s.block()) {
            for shape in 0..4 {
                let rows = ROWS[(turn * 7 + shape * 3) % ROWS.len()];
                let fold = rows * w;
                // Keep each problem to a few thousand products.
                let max_folds = (4096 / fold).clamp(2, 5);
                let (folds, last) = match shape {
                    0 => (1, 1 + rng.below(fold as u64) as usize),
                    1 => (2, fold),
                    2 => (2, 1 + rng.below(fold as u64) as usize),
                    _ => (
                        2 + rng.below(max_folds as u64 - 1) as usize,
                        1 + rng.below(fold as u64) as usize,
                    ),
                };
                let k = k_for(fold, folds, last);
                let style = STYLES[turn % STYLES.len()];
                let (m, n) = if k > 512 { (1, 1) } else { (2, 2) };
                let g = problem(&mut rng, &s, w, rows, (m, n, k), style);
                let label = format!(
                    "{s:?} w {w} R {rows} K {k} ({folds} folds) {style:?} a={:x?} b={:x?} c={:x?}",
                    &g.a[..g.a.len().min(8)],
                    &g.b[..g.b.len().min(8)],
                    g.c
                );
                check(&g, &s, &label);
                cases += 1;
                multi_fold += (folds > 1) as usize;
                partial += (last < fold) as usize;
                turn += 1;
            }
        }
    }
    assert!(cases > 300 && multi_fold > cases / 2 && partial > cases / 3);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random setups, widths, arrays, K and styles: the same agreement.
    #[test]
    fn random_problems_match_the_reference(
        si in 0usize..64,
        wi in 0usize..WIDTHS.len(),
        ri in 0usize..ROWS.len(),
        folds in 1usize..=4,
        last_frac in 1usize..=64,
        style in 0usize..STYLES.len(),
        seed in any::<u64>(),
    ) {
        let all = setups();
        let s = all[si % all.len()];
        let w = WIDTHS[wi].max(s.block());
        let rows = ROWS[ri];
        let fold = rows * w;
        let folds = if fold > 1024 { folds.min(2) } else { folds };
        let last = (fold * last_frac).div_ceil(64).max(1);
        let k = k_for(fold, folds, last);
        let mut rng = Rng(seed);
        let (m, n) = if k > 256 { (1, 1) } else { (2, 3) };
        let g = problem(&mut rng, &s, w, rows, (m, n, k), STYLES[style]);
        check(&g, &s, &format!("{s:?} w {w} R {rows} K {k} seed {seed:#x}"));
    }
}

/// The host fold additions (the `f32` sum; FP16 through `f32` and `half`) equal the
/// big-integer exact sum rounded once, on corner operands of both formats: the double
/// rounding of FP16 through `f32` never shows.
#[test]
fn host_fold_additions_equal_one_exact_rounding() {
    let mut rng = Rng(0x5753_0002);
    let corners32 = [
        0u32,
        0x8000_0000,
        0x0000_0001,
        0x8000_0001,
        0x007F_FFFF,
        0x0080_0000,
        0x3F80_0000,
        0xBF80_0000,
        0x3380_0000, // 2^-24: half an ulp of 1
        0x7F7F_FFFF,
        0xFF7F_FFFF,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0x7F80_0001,
    ];
    let corners16 = [
        0u32, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x1000, 0x1400, 0x7BFF,
        0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7D00,
    ];
    let mut pairs32: Vec<(u32, u32)> = Vec::new();
    let mut pairs16: Vec<(u32, u32)> = Vec::new();
    for &x in &corners32 {
        for &y in &corners32 {
            pairs32.push((x, y));
        }
    }
    for &x in &corners16 {
        for &y in &corners16 {
            pairs16.push((x, y));
        }
    }
    for _ in 0..20_000 {
        // Nearby exponents (carries, cancellation, ties) and random patterns.
        let x = rng.next_u64() as u32;
        let y = ((x & 0xFF80_0000) ^ ((rng.below(2) as u32) << 31))
            .wrapping_add((rng.below(1 << 26) as u32).wrapping_sub(1 << 25));
        pairs32.push((x, y));
        pairs32.push((x, rng.next_u64() as u32));
        let x16 = rng.next_u64() as u32 & 0xFFFF;
        let y16 = (x16 ^ ((rng.below(2) as u32) << 15)).wrapping_add(rng.below(64) as u32) & 0xFFFF;
        pairs16.push((x16, y16));
        pairs16.push((x16, rng.next_u64() as u32 & 0xFFFF));
    }
    for &(x, y) in &pairs32 {
        let (bits, _) = fold_add_exact(FP32, x, y);
        assert_eq!(host_add_fp32(x, y), bits, "fp32 {x:#010x} + {y:#010x}");
    }
    // Every FP16 operand with a few corners (zeros, the smallest subnormal, 1, the largest
    // finite value), and the random pairs.
    for x in 0..=0xFFFFu32 {
        for &y in &[0x8000u32, 0x0001, 0x3C00, 0xFBFF] {
            pairs16.push((x, y));
        }
    }
    for &(x, y) in &pairs16 {
        let (bits, _) = fold_add_exact(FP16, x, y);
        assert_eq!(host_add_fp16(x, y), bits, "fp16 {x:#06x} + {y:#06x}");
    }
}

/// The identity and the canonical NaNs the reference restates are the format table's, and
/// agree with the `half` crate's and the host's own; `-0 + x = x` for every `x`, `+0` and NaN
/// payloads aside, and `+0` would not be an identity (`+0 + -0 = +0`).
#[test]
fn identity_and_canonical_nans() {
    assert_eq!(u64::from(FP32_CANONICAL_NAN), FP32.canonical_nan());
    assert_eq!(u64::from(FP16_CANONICAL_NAN), FP16.canonical_nan());
    assert_eq!(u32::from(half::f16::NAN.to_bits()), FP16_CANONICAL_NAN);
    assert_eq!(u64::from(FP32_NEG_ZERO), FP32.zero(true));
    assert_eq!(u64::from(FP16_NEG_ZERO), FP16.zero(true));
    assert_eq!((-0.0f32).to_bits(), FP32_NEG_ZERO);
    for x in (0..=0xFFFFu32).filter(|&x| x & 0x7FFF <= 0x7C00) {
        assert_eq!(host_add_fp16(FP16_NEG_ZERO, x), x, "-0 + {x:#06x}");
    }
    let mut rng = Rng(3);
    for x in [0u32, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 1, 0x8000_0001]
        .into_iter()
        .chain((0..10_000).map(|_| rng.next_u64() as u32))
        .filter(|x| x & 0x7FFF_FFFF <= 0x7F80_0000)
    {
        assert_eq!(host_add_fp32(FP32_NEG_ZERO, x), x, "-0 + {x:#010x}");
    }
    assert_eq!(host_add_fp32(0, FP32_NEG_ZERO), 0, "+0 is no identity");
    assert_eq!(host_add_fp32(0x3F80_0000, 0xBF80_0000), 0, "x - x = +0");
    assert_eq!(
        host_add_int(i32::MAX as u32, 1, IntOverflow::Wrap),
        i32::MIN as u32
    );
    assert_eq!(
        host_add_int(i32::MAX as u32, 1, IntOverflow::SatFinite),
        i32::MAX as u32
    );
    assert_eq!(
        host_add_int(i32::MIN as u32, u32::MAX, IntOverflow::SatFinite),
        i32::MIN as u32
    );
}

/// A 1 x 1 problem on `rows` rows with `width` products per PE, ws: A `a`, B `b` (both of
/// format `fa`, K = a.len()), C `c`.
#[allow(clippy::too_many_arguments)]
fn hand(
    mode: AccMode,
    acc: Format,
    fa: Format,
    width: usize,
    rows: usize,
    a: &[u64],
    b: &[u64],
    c: u32,
) -> Gemm {
    let cfg = CoreConfig::new(fa, fa, mode, width)
        .with_acc(acc)
        .with_array(rows, 1)
        .expect("array")
        .with_dataflow(Dataflow::Ws);
    Gemm::new(1, 1, a.len(), cfg, a.to_vec(), b.to_vec(), vec![c]).expect("problem")
}

fn ieee_setup(fa: Format, acc: Format) -> Setup {
    Setup {
        kind: Kind::Ieee,
        fa,
        fb: fa,
        acc,
    }
}

/// Special values worked by hand: overflow to Inf in a fold addition (FP16 and FP32),
/// +Inf and -Inf in different folds, a signaling NaN C, cancellation across folds to +0, and
/// the signs of zero sums; each also against the reference.
#[test]
fn special_values_by_hand() {
    let one = 0x3C00u64; // FP16 1.0
                         // FP16 accumulator: folds of one product, 256 x 128 = 32768 each; 32768 + 32768 = 65536
                         // rounds to +Inf (RNE: above 65520), overflow and inexact.
    let s16 = ieee_setup(FP16, FP16);
    let g = hand(
        AccMode::Ieee,
        FP16,
        FP16,
        1,
        1,
        &[0x5C00, 0x5C00],
        &[0x5800, 0x5800],
        0,
    );
    let got = run_functional(&g).unwrap();
    assert_eq!(got.d, vec![0x7C00]);
    assert!(got.flags.overflow && got.flags.inexact && !got.flags.invalid);
    check(&g, &s16, "fp16 overflow in the fold add");
    // FP32 accumulator from BF16: 2^64 x 2^63 = 2^127 per fold; 2^127 + 2^127 overflows.
    let s32 = ieee_setup(BF16, FP32);
    let g = hand(
        AccMode::Ieee,
        FP32,
        BF16,
        1,
        1,
        &[0x5F80, 0x5F80],
        &[0x5F00, 0x5F00],
        0,
    );
    let got = run_functional(&g).unwrap();
    assert_eq!(got.d, vec![0x7F80_0000]);
    assert!(got.flags.overflow);
    check(&g, &s32, "fp32 overflow in the fold add");
    // +Inf in fold 0, -Inf in fold 1 (w = 2, R = 1): NaN, invalid, at the fold addition.
    let sf = ieee_setup(FP16, FP32);
    let g = hand(
        AccMode::Ieee,
        FP32,
        FP16,
        2,
        1,
        &[0x7C00, one, 0x7C00, one],
        &[one, one, 0xBC00, one],
        0,
    );
    let got = run_functional(&g).unwrap();
    assert_eq!(got.d, vec![FP32_CANONICAL_NAN]);
    assert!(got.flags.invalid);
    check(&g, &sf, "inf - inf across folds");
    // A signaling-NaN C: the canonical NaN, invalid (FP32 and FP16).
    for (acc, snan, qnan) in [
        (FP32, 0x7F80_0001, FP32_CANONICAL_NAN),
        (FP16, 0x7D00, 0x7E00),
    ] {
        let g = hand(AccMode::Fused, acc, FP16, 2, 2, &[one; 5], &[one; 5], snan);
        let got = run_functional(&g).unwrap();
        assert_eq!(got.d, vec![qnan], "{acc}");
        assert!(got.flags.invalid);
        check(
            &g,
            &Setup {
                kind: Kind::Fused,
                fa: FP16,
                fb: FP16,
                acc,
            },
            "snan c",
        );
    }
    // Cancellation across folds: C = -0, fold 0 = 1, fold 1 = -1: -0 + 1 - 1 = +0.
    let g = hand(
        AccMode::Ieee,
        FP32,
        FP16,
        1,
        1,
        &[one, one],
        &[one, 0xBC00],
        FP32_NEG_ZERO,
    );
    assert_eq!(run_functional(&g).unwrap().d, vec![0]);
    check(&g, &sf, "cancellation to +0");
    // Zero signs: products -0 and C = -0 give -0 (the identity -0 keeps a fold of -0
    // products at -0); C = +0 gives +0; products +0 with C = -0 give +0.
    for (b, c, want) in [
        (0x8000u64, FP32_NEG_ZERO, FP32_NEG_ZERO),
        (0x8000, 0, 0),
        (0x0000, FP32_NEG_ZERO, 0),
    ] {
        let g = hand(AccMode::Ieee, FP32, FP16, 1, 2, &[one; 5], &[b; 5], c);
        assert_eq!(
            run_functional(&g).unwrap().d,
            vec![want],
            "b {b:#x} c {c:#x}"
        );
        check(&g, &sf, "zero signs");
    }
}

/// With K within one fold (K <= R * w) ws is the os chain of the same mode started from the
/// identity -0, then one addition of C: for random problems of every setup, ws's D equals
/// `C + D_os(C = -0)`, the os run by the functional model and the addition by the host.
#[test]
fn one_fold_is_the_os_chain_from_minus_zero_then_c() {
    let mut rng = Rng(0x5753_0003);
    for (i, s) in setups().into_iter().enumerate() {
        let w = WIDTHS[i % WIDTHS.len()].max(s.block());
        let rows = ROWS[i % ROWS.len()];
        let k = 1 + rng.below((rows * w) as u64) as usize;
        let style = if i % 2 == 0 {
            Style::Plain
        } else {
            Style::Specials
        };
        let ws = problem(&mut rng, &s, w, rows, (2, 2, k), style);
        let identity = match s.kind {
            Kind::Int(..) => 0,
            _ if s.acc == FP16 => FP16_NEG_ZERO,
            _ => FP32_NEG_ZERO,
        };
        let os = Gemm {
            cfg: ws.cfg.with_dataflow(Dataflow::Os),
            c: vec![identity; ws.c.len()],
            ..ws.clone()
        };
        let chain = run_functional(&os).unwrap().d;
        let want: Vec<u32> =
            ws.c.iter()
                .zip(&chain)
                .map(|(&c, &f)| match s.kind {
                    Kind::Int(_, _, o) => host_add_int(c, f, o),
                    _ if s.acc == FP16 => host_add_fp16(c, f),
                    _ => host_add_fp32(c, f),
                })
                .collect();
        assert_eq!(
            run_functional(&ws).unwrap().d,
            want,
            "{s:?} w {w} R {rows} K {k}"
        );
    }
}

/// The order difference is real: FP16 inputs, FP32 accumulator, `ieee`, C = 1 and two
/// products of 2^-24 (half an ulp of 1 each). os: `(1 + 2^-24) + 2^-24`, each FMA a tie
/// rounded to even, gives 1.0 (0x3F800000). ws on a 2-row array with w = 1 (one fold of two):
/// the fold sums `2^-24 + 2^-24 = 2^-23` exactly, then `1 + 2^-23` = 0x3F800001, which is
/// also the exact result. Both against the references of their order.
#[test]
fn ws_and_os_differ_on_a_concrete_problem() {
    let tiny = 0x0001u64; // FP16 2^-24 (the smallest subnormal)
    let one = 0x3C00u64;
    let ws = hand(
        AccMode::Ieee,
        FP32,
        FP16,
        1,
        2,
        &[tiny, tiny],
        &[one, one],
        0x3F80_0000,
    );
    let os = Gemm {
        cfg: ws.cfg.with_dataflow(Dataflow::Os),
        ..ws.clone()
    };
    let d_ws = run_functional(&ws).unwrap().d;
    let d_os = run_functional(&os).unwrap().d;
    assert_eq!(d_os, vec![0x3F80_0000]);
    assert_eq!(d_ws, vec![0x3F80_0001]);
    let r = Reference::for_problem(&ws, None).unwrap();
    assert_eq!(r.gemm(&os), d_os, "os reference");
    assert_eq!(r.ws_gemm(&ws, 2).unwrap(), d_ws, "ws reference");
    // On a one-row array (one product per fold) the orders coincide for exact products.
    let one_row = Gemm {
        cfg: ws.cfg.with_array(1, 1).unwrap(),
        ..ws.clone()
    };
    assert_eq!(run_functional(&one_row).unwrap().d, d_os);
}

/// The reference refuses what the ws core cannot build: nvidia with blocks wider than a PE,
/// and zero rows.
#[test]
fn the_reference_refuses_split_blocks() {
    let s = Setup {
        kind: Kind::Nvidia(Preset::Hopper),
        fa: FP16,
        fb: FP16,
        acc: FP32,
    };
    let g = hand(s.mode(), FP32, FP16, 8, 2, &[0x3C00; 4], &[0x3C00; 4], 0);
    let r = Reference::for_problem(&g, s.preset()).unwrap();
    let e = r.ws_gemm(&g, 2).unwrap_err();
    assert!(e.contains("whole blocks of 16"), "{e}");
    let g = hand(AccMode::Ieee, FP32, FP16, 1, 2, &[0x3C00], &[0x3C00], 0);
    assert!(Reference::Ieee.ws_gemm(&g, 0).is_err());
}
