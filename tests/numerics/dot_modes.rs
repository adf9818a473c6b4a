//! The `ieee`, `fused` and `exact` modes against independent references: host `f32` for all
//! 65,536 FP8 operand pairs, and the wide-integer reference `verify::exact` for random
//! vectors of every format; plus properties (fused with w = 1 is ieee; masked lanes change
//! nothing).

use proptest::prelude::*;
use tensorcore_rtl::numerics::dot::{dot, dot_step_w, AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16};
use tensorcore_rtl::verify::exact::{decode, exact_dot, fused_dot, ieee_dot, Decoded};

/// Host value of an input pattern, through the reference decoders (own FP8 table, `half`).
fn host(fmt: Format, bits: u64) -> f32 {
    match decode(fmt, bits) {
        Decoded::Nan => f32::NAN,
        Decoded::Inf(n) => {
            if n {
                f32::NEG_INFINITY
            } else {
                f32::INFINITY
            }
        }
        Decoded::Finite(v) => v as f32,
    }
}

/// Accumulators for the exhaustive sweeps: zeros, ones, a subnormal, a large value, a value
/// whose sums tie (2^20 + 2^-3: ulp 2^-3, so a product of 2^-4 ties), and the largest
/// finite value (overflow).
const ACCUMULATORS: [u32; 9] = [
    0x0000_0000,
    0x8000_0000,
    0x3F80_0000,
    0xBF80_0000,
    0x0000_0003,
    0x4B80_0001,
    0x4980_0001,
    0x7F7F_FFFF,
    0xC680_0000,
];

fn exhaustive_ieee_vs_host(fa: Format, fb: Format) {
    let mode = AccMode::Ieee;
    // How many cases had a finite, an infinite and a NaN host result: finite and NaN results
    // must occur (every FP8 format has NaNs), infinite ones whenever an input format has
    // infinities, or the sweep would miss the datapath's special-value paths.
    let (mut finite, mut infinite, mut nan) = (0u32, 0u32, 0u32);
    for a in 0u64..256 {
        let ha = host(fa, a);
        for b in 0u64..256 {
            let hb = host(fb, b);
            for &c in &ACCUMULATORS {
                let ours = dot_step_w::<1>(&mode, fa, fb, &[a], &[b], c).bits;
                // Host f32: the product is exact, then one RNE addition.
                let want = f32::from_bits(c) + ha * hb;
                if want.is_nan() {
                    nan += 1;
                    assert_eq!(ours, 0x7FC0_0000, "{fa} {a:#x} x {fb} {b:#x} + {c:#x}");
                } else {
                    if want.is_finite() {
                        finite += 1;
                    } else {
                        infinite += 1;
                    }
                    assert_eq!(
                        ours,
                        want.to_bits(),
                        "{fa} {a:#x} x {fb} {b:#x} + {c:#x}: ours {ours:#x}, host {:#x}",
                        want.to_bits()
                    );
                }
            }
        }
    }
    assert!(
        finite > 0
            && nan > 0
            && (infinite > 0 || (fa.infinity(false).is_none() && fb.infinity(false).is_none())),
        "{fa} x {fb}: finite {finite}, infinite {infinite}, NaN {nan}"
    );
}

#[test]
fn all_e4m3_pairs_ieee_match_host_f32() {
    exhaustive_ieee_vs_host(E4M3, E4M3);
}

#[test]
fn all_e5m2_pairs_ieee_match_host_f32() {
    exhaustive_ieee_vs_host(E5M2, E5M2);
}

#[test]
fn all_e4m3_e5m2_pairs_ieee_match_host_f32() {
    exhaustive_ieee_vs_host(E4M3, E5M2);
}

/// A small deterministic generator (xorshift64*), biased towards interesting encodings.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A pattern of `fmt`: mostly finite values near 1 (so products cancel and carry), some
    /// uniform patterns (subnormals, extremes), rarely a special.
    fn operand(&mut self, fmt: Format, specials: bool) -> u64 {
        let r = self.next();
        let bits = match r % 16 {
            0..=9 => {
                // Exponent within +-4 of the bias, random fraction and sign.
                let e = (fmt.bias as u64).wrapping_add((r >> 8) % 9).wrapping_sub(4);
                let frac = (r >> 20) & fmt.frac_mask();
                ((r >> 40) & 1) << (fmt.width() - 1) | (e << fmt.frac_bits) | frac
            }
            10 => (r >> 8) & fmt.frac_mask() | ((r >> 30) & 1) << (fmt.width() - 1),
            _ => (r >> 8) & fmt.mask(),
        };
        if !specials && matches!(decode(fmt, bits), Decoded::Nan | Decoded::Inf(_)) {
            bits & !(1u64 << (fmt.width() - 2)) // clear the exponent MSB: finite
        } else {
            bits
        }
    }
    fn fp32(&mut self) -> u32 {
        let r = self.next();
        match r % 8 {
            0 => (r >> 32) as u32 & 0x807F_FFFF, // subnormal or zero
            1..=5 => ((r >> 32) as u32 & 0x81FF_FFFF) | 0x3C00_0000, // near 1
            _ => (r >> 32) as u32,
        }
    }
}

const PAIRS: [(Format, Format); 5] = [
    (E4M3, E4M3),
    (E5M2, E5M2),
    (E4M3, E5M2),
    (FP16, FP16),
    (BF16, BF16),
];

#[test]
fn random_vectors_match_the_exact_reference() {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    for &(fa, fb) in &PAIRS {
        for case in 0..3000 {
            let k = 1 + (rng.next() % 40) as usize;
            let specials = case % 10 == 0;
            let a: Vec<u64> = (0..k).map(|_| rng.operand(fa, specials)).collect();
            let b: Vec<u64> = (0..k).map(|_| rng.operand(fb, specials)).collect();
            let c = rng.fp32();
            let ctx = || format!("{fa} x {fb} a={a:x?} b={b:x?} c={c:#x}");
            let ieee = dot(&AccMode::Ieee, fa, fb, &a, &b, c, 1).unwrap().bits;
            assert_eq!(ieee, ieee_dot(fa, fb, &a, &b, c), "ieee {}", ctx());
            let exact = dot(&AccMode::Exact, fa, fb, &a, &b, c, 1).unwrap().bits;
            assert_eq!(exact, exact_dot(fa, fb, &a, &b, c), "exact {}", ctx());
            for w in [1usize, 4, 16, 32] {
                let fused = dot(&AccMode::Fused, fa, fb, &a, &b, c, w).unwrap().bits;
                assert_eq!(
                    fused,
                    fused_dot(fa, fb, &a, &b, c, w),
                    "fused w={w} {}",
                    ctx()
                );
            }
        }
    }
}

/// IEEE sign of exact zeros: +0 unless every term is -0.
#[test]
fn zero_signs_follow_ieee() {
    let nz = 0x8000u64; // FP16 -0
    let one = 0x3C00u64;
    let neg_one = 0xBC00u64;
    for mode in [AccMode::Ieee, AccMode::Fused, AccMode::Exact] {
        let d = |a: &[u64], b: &[u64], c: u32| dot(&mode, FP16, FP16, a, b, c, 4).unwrap().bits;
        assert_eq!(
            d(&[nz, nz], &[one, one], 0x8000_0000),
            0x8000_0000,
            "{mode:?}"
        );
        assert_eq!(d(&[nz, 0], &[one, one], 0x8000_0000), 0, "{mode:?}");
        assert_eq!(d(&[nz], &[one], 0), 0, "{mode:?}");
        assert_eq!(d(&[one], &[neg_one], 0x3F80_0000), 0, "{mode:?}");
        assert_eq!(d(&[], &[], 0x8000_0000), 0x8000_0000, "{mode:?}");
    }
}

#[test]
fn dot_rejects_bad_shapes() {
    assert!(dot(&AccMode::Ieee, FP16, FP16, &[0], &[], 0, 1).is_err());
    assert!(dot(&AccMode::Fused, FP16, FP16, &[0], &[0], 0, 0).is_err());
    assert!(dot(&AccMode::Fused, FP16, FP16, &[0], &[0], 0, 33).is_err());
}

fn fmt_pair() -> impl Strategy<Value = (Format, Format)> {
    prop::sample::select(PAIRS.to_vec())
}

fn case() -> impl Strategy<Value = ((Format, Format), Vec<(u64, u64)>, u32)> {
    (
        fmt_pair(),
        prop::collection::vec((any::<u64>(), any::<u64>()), 0..40),
        any::<u32>(),
    )
        .prop_map(|((fa, fb), v, c)| {
            let v = v
                .into_iter()
                .map(|(x, y)| (x & fa.mask(), y & fb.mask()))
                .collect();
            ((fa, fb), v, c)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// `fused` with one product per step is exactly a chain of FMAs (specials included).
    #[test]
    fn fused_w1_equals_ieee(((fa, fb), v, c) in case()) {
        let (a, b): (Vec<u64>, Vec<u64>) = v.into_iter().unzip();
        let fused = dot(&AccMode::Fused, fa, fb, &a, &b, c, 1).unwrap();
        let ieee = dot(&AccMode::Ieee, fa, fb, &a, &b, c, 1).unwrap();
        prop_assert_eq!(fused.bits, ieee.bits);
        prop_assert_eq!(fused.flags, ieee.flags);
    }

    /// Masked lanes never count: a step of k lanes gives the same bits and flags in a
    /// register of 4 or of 32 lanes, in every mode (nvidia included: its maximum exponent
    /// and zero sign must not see the masked lanes).
    #[test]
    fn masked_lanes_change_nothing(((fa, fb), v, c) in case()) {
        let v = &v[..v.len().min(4)];
        let (a, b): (Vec<u64>, Vec<u64>) = v.iter().copied().unzip();
        let mut modes = vec![AccMode::Ieee, AccMode::Fused, AccMode::Exact];
        for p in Preset::ALL {
            if let Ok(params) = p.params(fa, fb) {
                modes.push(AccMode::Nvidia(params));
            }
        }
        for mode in modes {
            let r4 = dot_step_w::<4>(&mode, fa, fb, &a, &b, c);
            let r32 = dot_step_w::<32>(&mode, fa, fb, &a, &b, c);
            prop_assert_eq!(r4, r32);
        }
    }
}
