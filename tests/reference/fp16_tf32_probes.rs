//! Probe inputs for TF32 inputs, the `ada` preset and FP16
//! output (`dot_acc` with the FP16 accumulator). Every expected value is worked out by hand
//! from the rules of docs/numerics.md (the derivation is in each test's comment), never taken from
//! the code under test.

use crate::common::{exact_fp16 as h, exact_fp32 as s, p2};
use tensorcore_rtl::numerics::convert::tf32_from_container;
use tensorcore_rtl::numerics::dot::{dot_acc, AccMode, BlockRule, DotError, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32, TF32};
use tensorcore_rtl::numerics::RoundingMode;

const RNE: RoundingMode = RoundingMode::NearestEven;

/// TF32 pattern (19 bits) of an exactly representable value, through its FP32 container.
fn t(v: f64) -> u64 {
    tf32_from_container(s(v)).unwrap_or_else(|| panic!("{v} is not a TF32 value"))
}

/// E4M3 pattern of an exactly representable value (the OCP table of `verify`).
fn e4(v: f64) -> u64 {
    tensorcore_rtl::verify::measurements::encode_exact(E4M3, v)
        .unwrap_or_else(|| panic!("{v} is not an E4M3 value"))
}

fn enc(fmt: Format, v: f64) -> u64 {
    if fmt == TF32 {
        t(v)
    } else if fmt == E4M3 {
        e4(v)
    } else if fmt == FP16 {
        h(v) as u64
    } else {
        panic!("no encoder for {fmt}")
    }
}

/// Runs `mode` on `fmt` vectors padded with zeros to `k` slots, into `acc`.
#[allow(clippy::too_many_arguments)]
fn run(
    mode: &AccMode,
    fmt: Format,
    acc: Format,
    a: &[f64],
    b: &[f64],
    c: u32,
    k: usize,
    width: usize,
) -> u32 {
    let mut av: Vec<u64> = a.iter().map(|&v| enc(fmt, v)).collect();
    let mut bv: Vec<u64> = b.iter().map(|&v| enc(fmt, v)).collect();
    av.resize(k.max(a.len()), enc(fmt, 0.0));
    bv.resize(k.max(b.len()), enc(fmt, 0.0));
    dot_acc(mode, RNE, acc, fmt, fmt, &av, &bv, c, width)
        .unwrap()
        .bits
}

fn nvidia(p: Preset, fmt: Format, acc: Format) -> AccMode {
    AccMode::Nvidia(p.params_for(fmt, fmt, acc).unwrap())
}

/// TF32 presets: n = 4 and one extra alignment bit on Ampere and Ada, n = 8 and two on Hopper
/// and Blackwell (models/H100TC.m, models/B200TC.m: `fma = 8`); floors -132 / -133; Volta has
/// no TF32.
#[test]
fn tf32_preset_rows() {
    for (p, n, neab, floor) in [
        (Preset::Ampere, 4, 1, -132),
        (Preset::Ada, 4, 1, -132),
        (Preset::Hopper, 8, 2, -133),
        (Preset::Blackwell, 8, 2, -133),
        (Preset::H200, 8, 2, -133),
    ] {
        let q = p.params(TF32, TF32).unwrap();
        assert_eq!((q.block, q.neab, q.exp_floor), (n, neab, floor), "{p}");
        assert_eq!(q.rule, BlockRule::Truncating);
    }
    assert!(Preset::Volta.params(TF32, TF32).is_err());
    assert!(Preset::Ampere.params(TF32, FP16).is_err());
}

/// FTTN's two-extra-bits probe in TF32: a0 = 1, b0 = 1.25, c = -(2^-3 + 2^-25). On the
/// grid 2^-24 (one extra bit) c's 2^-25 is dropped: 1.25 - 0.125 = 1.125 = 0x3F900000; on
/// 2^-25 (two) it stays: 1.125 - 2^-25 truncates to 1.125 - 2^-23 = 0x3F8FFFFF.
#[test]
fn tf32_two_extra_bits() {
    let c = s(-(p2(-3) + p2(-25)));
    for (p, want) in [
        (Preset::Ampere, 0x3F90_0000),
        (Preset::Ada, 0x3F90_0000),
        (Preset::Hopper, 0x3F8F_FFFF),
        (Preset::Blackwell, 0x3F8F_FFFF),
    ] {
        let d = run(&nvidia(p, TF32, FP32), TF32, FP32, &[1.0], &[1.25], c, 4, 4);
        assert_eq!(d, want, "{p}");
    }
}

/// The TF32 block size (4 on Ampere and Ada, 8 on Hopper and Blackwell): c = 1 + 2^-23,
/// a0 = b0 = 1, a_j = 2^-23 at slot j. Inside the first block the sum 2 + 2^-22 is exact;
/// from slot n on, the first block truncates 2 + 2^-23 to 2 and the next block's 2 + 2^-23
/// truncates to 2 again.
#[test]
fn tf32_block_sizes() {
    let c = s(1.0 + p2(-23));
    for (p, n) in [
        (Preset::Ampere, 4),
        (Preset::Ada, 4),
        (Preset::Hopper, 8),
        (Preset::Blackwell, 8),
    ] {
        let mode = nvidia(p, TF32, FP32);
        for j in 1..10 {
            let mut a = vec![0.0; j + 1];
            let b = vec![1.0; j + 1];
            a[0] = 1.0;
            a[j] = p2(-23);
            let d = run(&mode, TF32, FP32, &a, &b, c, 0, n);
            let want = if j < n { 2.0 + p2(-22) } else { 2.0 };
            assert_eq!(d, s(want), "{p}: slot {j}");
        }
    }
}

/// TF32 subnormal products reach 2^-272 (2^-136 squared) and must not be lost: c = 0,
/// products 2^-272, 2^-272 and 2^-126 x 2^-10 = 2^-136. The exact sum 2^-136 + 2^-271
/// rounded up is the next FP32 subnormal 2^-136 + 2^-149 (`fused`, `exact`); `ieee` rounds
/// each FMA up: 2^-272 -> 2^-149, + 2^-272 -> 2^-148, + 2^-136 exactly.
#[test]
fn tf32_tiny_products_are_exact() {
    let a = [p2(-136), p2(-136), p2(-126)];
    let b = [p2(-136), p2(-136), p2(-10)];
    for mode in [AccMode::Fused, AccMode::Exact, AccMode::Ieee] {
        let r = dot_acc(
            &mode,
            RoundingMode::Up,
            FP32,
            TF32,
            TF32,
            &a.map(t),
            &b.map(t),
            0,
            3,
        )
        .unwrap();
        // ieee rounds each FMA up: 2^-272 -> 2^-149, twice -> 2^-148, then + 2^-136.
        let want = match mode {
            AccMode::Ieee => p2(-136) + p2(-148),
            _ => p2(-136) + p2(-149),
        };
        assert_eq!(r.bits, s(want), "{mode:?}");
    }
}

/// Ada: FP16 and BF16 as Ampere; FP8 in blocks of 16 with 13 fraction bits.
#[test]
fn ada_preset_rows() {
    for f in [FP16, BF16, TF32] {
        assert_eq!(
            Preset::Ada.params(f, f).unwrap(),
            Preset::Ampere.params(f, f).unwrap(),
            "{f}"
        );
    }
    for (fa, fb) in [(E4M3, E4M3), (E5M2, E5M2), (E4M3, E5M2)] {
        let q = Preset::Ada.params(fa, fb).unwrap();
        assert_eq!((q.block, q.neab, q.exp_floor), (16, -10, -132));
        assert_eq!(q.out_frac_bits, 13);
    }
}

/// Ada FP8 block size: slot 0 = +1, slot 1 = -1, slot j = 2^-14 (2^-7 x 2^-7). In the
/// block of the two ones the grid is 2^-13 and 2^-14 is dropped (D = 0); once slot j opens a
/// block of its own it is exact (D = 2^-14). Ada starts the second block at 16, Hopper at 32.
#[test]
fn ada_fp8_blocks_of_sixteen() {
    for (p, n) in [(Preset::Ada, 16), (Preset::Hopper, 32)] {
        let mode = nvidia(p, E4M3, FP32);
        for j in [2, n - 1, n] {
            if j >= 32 {
                continue;
            }
            let mut a = vec![0.0; 32];
            let mut b = vec![0.0; 32];
            a[0] = 1.0;
            b[0] = 1.0;
            a[1] = -1.0;
            b[1] = 1.0;
            a[j] = p2(-7);
            b[j] = p2(-7);
            let d = run(&mode, E4M3, FP32, &a, &b, 0, 32, 32);
            let want = if j < n { 0 } else { s(p2(-14)) };
            assert_eq!(d, want, "{p}: slot {j}");
        }
    }
}

/// Ada FP8's 13-bit cut: c = 1 + 2^-20 with no products is aligned to the grid 2^-13 and
/// truncated to 1; Ampere-style FP16 alignment (24 bits) would keep it.
#[test]
fn ada_fp8_cut() {
    let d = run(
        &nvidia(Preset::Ada, E4M3, FP32),
        E4M3,
        FP32,
        &[0.0],
        &[0.0],
        s(1.0 + p2(-20)),
        16,
        16,
    );
    assert_eq!(d, s(1.0));
}

/// FP16 output with FP16 inputs rounds the exact aligned sum once: 2 - 1 + 2^-11 + 2^-24 =
/// 1 + 2^-11 + 2^-24 lies above the midpoint 1 + 2^-11, so RNE16 gives 1 + 2^-10 (0x3C01),
/// where truncating to FP32 first (dropping 2^-24) would tie and give 1.0. The grid is
/// 2^(1 - 23 - neab): Hopper/Blackwell (2^-24) and Ampere/Ada (2^-23 drops 2^-24: tie, 1.0),
/// Volta (2^-22: tie, 1.0). ieee chains RNE16 FMAs: 1 + 2^-11 ties to 1.0; fused rounds once.
#[test]
fn fp16_output_rounds_once() {
    let a = [2.0, -1.0, p2(-11), p2(-24)];
    let b = [1.0; 4];
    for (p, want) in [
        (Preset::Volta, 0x3C00),
        (Preset::Ampere, 0x3C00),
        (Preset::Ada, 0x3C00),
        (Preset::Hopper, 0x3C01),
        (Preset::Blackwell, 0x3C01),
    ] {
        let d = run(&nvidia(p, FP16, FP16), FP16, FP16, &a, &b, 0, 0, 4);
        assert_eq!(d, want, "{p}");
    }
    assert_eq!(run(&AccMode::Ieee, FP16, FP16, &a, &b, 0, 0, 4), 0x3C00);
    assert_eq!(run(&AccMode::Fused, FP16, FP16, &a, &b, 0, 0, 4), 0x3C01);
    assert_eq!(run(&AccMode::Exact, FP16, FP16, &a, &b, 0, 0, 1), 0x3C01);
    // fused with one product a step rounds after each product, as ieee does.
    assert_eq!(run(&AccMode::Fused, FP16, FP16, &a, &b, 0, 0, 1), 0x3C00);
}

/// C is an FP16 accumulator: a subnormal FP16 c (2^-24) passes through an empty block, and
/// a block of a tiny product keeps FP16's subnormal grid: 2^-24 x 0.5 rounds (tie) to even 0.
#[test]
fn fp16_output_c_and_subnormals() {
    for p in [Preset::Volta, Preset::Ampere, Preset::Hopper] {
        let mode = nvidia(p, FP16, FP16);
        assert_eq!(run(&mode, FP16, FP16, &[0.0], &[0.0], h(p2(-24)), 0, 4), 1);
        assert_eq!(run(&mode, FP16, FP16, &[p2(-24)], &[0.5], 0, 0, 4), 0);
        assert_eq!(run(&mode, FP16, FP16, &[p2(-24)], &[1.5], 0, 0, 4), 2);
        // Overflow of the FP16 accumulator gives +Inf; NaN is NVIDIA's canonical 0x7FFF.
        assert_eq!(run(&mode, FP16, FP16, &[65504.0], &[2.0], 0, 0, 4), 0x7C00);
        assert_eq!(run(&mode, FP16, FP16, &[1.0], &[1.0], 0x7C01, 0, 4), 0x7FFF);
    }
}

/// Ada FP8 into FP16: blocks of 16, each rounded once to FP16. Slot 0 = 1, slots 1 and 16 =
/// 2^-11 (2^-6 x 2^-5): each block's 1 + 2^-11 ties to 1.0, so D = 1.0 (0x3C00); one block of
/// 32 (or an exact sum) would give 1 + 2^-10 (0x3C01).
#[test]
fn ada_fp8_fp16_output_blocks() {
    let mut a = vec![0.0; 32];
    let mut b = vec![0.0; 32];
    a[0] = 1.0;
    b[0] = 1.0;
    for k in [1, 16] {
        a[k] = p2(-6);
        b[k] = p2(-5);
    }
    let ada = run(
        &nvidia(Preset::Ada, E4M3, FP16),
        E4M3,
        FP16,
        &a,
        &b,
        0,
        32,
        32,
    );
    assert_eq!(ada, 0x3C00);
    assert_eq!(run(&AccMode::Exact, E4M3, FP16, &a, &b, 0, 32, 32), 0x3C01);
}

/// Hopper and Blackwell FP8 into FP16: s1 over k mod 4 in {0, 1}, s2 over s1 and k mod 4 in
/// {2, 3}, then RNE16(s2 + c).
/// - Products 1 (k=0), 2^-11 (k=1), 2^-11 (k=2), c = 0: s1 = RNE16(1 + 2^-11) = 1 (tie to
///   even), s2 = RNE16(1 + 2^-11) = 1, D = 1.0 (0x3C00); contiguous halves would hold all
///   three in one block: 1 + 2^-10 (0x3C01).
/// - Products 1 (k=0), 2^-11 (k=1), c = 2^-11: s1 = 1, s2 = 1, D = RNE16(1 + 2^-11) = 1;
///   with C in the first block: 1 + 2^-10.
#[test]
fn hopper_fp8_fp16_output_half_steps() {
    for p in [Preset::Hopper, Preset::Blackwell] {
        let mode = nvidia(p, E4M3, FP16);
        let mut a = vec![0.0; 32];
        let mut b = vec![0.0; 32];
        a[0] = 1.0;
        b[0] = 1.0;
        for k in [1, 2] {
            a[k] = p2(-6);
            b[k] = p2(-5);
        }
        assert_eq!(run(&mode, E4M3, FP16, &a, &b, 0, 32, 32), 0x3C00, "{p}");
        a[2] = 0.0;
        assert_eq!(
            run(&mode, E4M3, FP16, &a, &b, h(p2(-11)), 32, 32),
            0x3C00,
            "{p}"
        );
        // c joins at the end: s2 = 1, D = RNE16(1 + 2^-10) = 1 + 2^-10 exactly.
        assert_eq!(
            run(&mode, E4M3, FP16, &[1.0], &[1.0], h(p2(-10)), 32, 32),
            0x3C01,
            "{p}"
        );
    }
}

/// Outputs the GPUs lack are refused: BF16 and TF32 accumulate into FP32 only, and BF16 is
/// no accumulator format.
#[test]
fn unsupported_outputs() {
    for p in [Preset::Ampere, Preset::Hopper] {
        for f in [BF16, TF32] {
            assert!(matches!(
                p.params_for(f, f, FP16),
                Err(DotError::UnsupportedOutput { .. })
            ));
        }
    }
    assert!(matches!(
        Preset::Hopper.params_for(FP16, FP16, BF16),
        Err(DotError::NotAnAccumulator(_))
    ));
    assert!(matches!(
        dot_acc(&AccMode::Ieee, RNE, BF16, FP16, FP16, &[0], &[0], 0, 1),
        Err(DotError::NotAnAccumulator(_))
    ));
}

/// `cvt.rna.tf32.f32` against a host reference: |x| / ulp rounded half away from zero by
/// `f64::round`, times the TF32 ulp of x's binade (2^-136 for subnormals), in f64 (exact),
/// then to f32 (a value past the largest TF32 lands on 2^128, which f32 makes Inf). Random
/// FP32 words (every class) and words at or next to the ties.
#[test]
fn tf32_rna_matches_host_rounding() {
    use tensorcore_rtl::numerics::convert::tf32_from_fp32_rna;
    let reference = |w: u32| -> u32 {
        let x = f32::from_bits(w);
        if x.is_nan() {
            return 0x7FC0_0000;
        }
        if x.is_infinite() || x == 0.0 {
            return w;
        }
        let e = (((w >> 23) & 0xFF) as i32 - 127).max(-126);
        let ulp = 2f64.powi(e - 10);
        let y = (x as f64 / ulp).round() * ulp;
        (y as f32).to_bits()
    };
    let mut state = 0x7F32_u64;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as u32
    };
    for i in 0..1_000_000u32 {
        let r = next();
        let w = match i % 4 {
            0 => r,
            // A tie (low 13 bits 0x1000) or one either side of it.
            1 => (r & !0x1FFF) | 0x1000,
            2 => (r & !0x1FFF) | 0x0FFF,
            _ => (r & !0x1FFF) | 0x1001,
        };
        assert_eq!(tf32_from_fp32_rna(w), reference(w), "{w:#010x}");
    }
}
