//! The probe inputs of docs/numerics.md ("Probe inputs that reveal each feature"), FP16 in and
//! FP32 C, one named test per probe, checked for every preset (and, where the probe says so,
//! against the round-to-nearest modes). Unlisted k slots are 0.

use tensorcore_rtl::numerics::dot::{dot, AccMode, Preset};
use tensorcore_rtl::numerics::format::{E4M3, FP16};

const ALL: [Preset; Preset::NVIDIA.len()] = Preset::NVIDIA;

/// FP16 encoding of an exactly representable value (via the `half` crate).
fn h(v: f64) -> u64 {
    if v.is_nan() {
        return 0x7E00;
    }
    let x = half::f16::from_f64(v);
    assert_eq!(x.to_f64(), v, "{v} is not an FP16 value");
    x.to_bits() as u64
}

/// FP32 encoding of an exactly representable value.
fn s(v: f64) -> u32 {
    if v.is_nan() {
        return 0x7FC0_0000;
    }
    let x = v as f32;
    assert_eq!(x as f64, v, "{v} is not an FP32 value");
    x.to_bits()
}

fn p2(e: i32) -> f64 {
    2f64.powi(e)
}

/// Runs `mode` on FP16 vectors (padded with zeros to `k` slots) and returns the FP32 bits.
fn run_mode(mode: &AccMode, a: &[f64], b: &[f64], c: f64, k: usize) -> u32 {
    let mut av: Vec<u64> = a.iter().map(|&v| h(v)).collect();
    let mut bv: Vec<u64> = b.iter().map(|&v| h(v)).collect();
    av.resize(k.max(a.len()), 0);
    bv.resize(k.max(b.len()), 0);
    let width = av.len().clamp(1, 32);
    dot(mode, FP16, FP16, &av, &bv, s(c), width).unwrap().bits
}

fn run(p: Preset, a: &[f64], b: &[f64], c: f64) -> u32 {
    let params = p.params(FP16, FP16).unwrap();
    run_mode(&AccMode::Nvidia(params), a, b, c, params.block)
}

#[test]
fn probe_subnormal_input() {
    for p in ALL {
        assert_eq!(run(p, &[p2(-24)], &[4.0], 0.0), s(p2(-22)), "{p}");
    }
}

#[test]
fn probe_subnormal_c() {
    for p in ALL {
        assert_eq!(run(p, &[], &[], p2(-149)), s(p2(-149)), "{p}");
    }
}

#[test]
fn probe_exact_product() {
    let x = 1.0 - p2(-11);
    for p in ALL {
        assert_eq!(run(p, &[x], &[x], 0.0), s(1.0 - p2(-10) + p2(-22)), "{p}");
    }
}

#[test]
fn probe_truncation() {
    let a = [1.0; 4];
    let b = [2.0, p2(-23) + p2(-24)];
    let nb = [-2.0, -(p2(-23) + p2(-24))];
    for p in ALL {
        assert_eq!(run(p, &a, &b, 0.0), s(2.0), "{p}");
        assert_eq!(run(p, &a, &nb, 0.0), s(-2.0), "{p}");
    }
}

#[test]
fn probe_one_extra_alignment_bit() {
    let c = -(1.0 - p2(-24));
    assert_eq!(run(Preset::Volta, &[1.0], &[1.0], c), s(p2(-23)));
    assert_eq!(run(Preset::Ampere, &[1.0], &[1.0], c), s(p2(-24)));
    assert_eq!(run(Preset::Ada, &[1.0], &[1.0], c), s(p2(-24)));
    assert_eq!(run(Preset::Hopper, &[1.0], &[1.0], c), s(p2(-24)));
    assert_eq!(run(Preset::Blackwell, &[1.0], &[1.0], c), s(p2(-24)));
}

#[test]
fn probe_late_normalisation() {
    for p in ALL {
        let d = run(p, &[1.0; 4], &[p2(-24); 4], 1.0 - p2(-24));
        assert_eq!(d, s(1.0 + p2(-23)), "{p}");
    }
}

#[test]
fn probe_carry_out() {
    let c = 1.0 + p2(-22) + p2(-23);
    for p in ALL {
        assert_eq!(run(p, &[1.0; 4], &[1.0; 4], c), s(5.0), "{p}");
        assert_eq!(run(p, &[1.0; 4], &[-1.0; 4], -c), s(-5.0), "{p}");
        assert_eq!(
            run(p, &[1.0; 4], &[1.0, 1.5, 1.75, 1.875], 1.875),
            s(8.0),
            "{p}"
        );
    }
}

#[test]
fn probe_non_monotonic_sum_volta() {
    let a = [1.0; 4];
    let b = [p2(-24); 4];
    let smaller_c = run(Preset::Volta, &a, &b, 1.0 - p2(-24));
    let larger_c = run(Preset::Volta, &a, &b, 1.0);
    assert!(f32::from_bits(smaller_c) > f32::from_bits(larger_c));
    assert_eq!(larger_c, s(1.0));
    // With an extra alignment bit the sum is monotonic again.
    for p in [
        Preset::Ampere,
        Preset::Ada,
        Preset::Hopper,
        Preset::Blackwell,
    ] {
        let lo = run(p, &a, &b, 1.0 - p2(-24));
        let hi = run(p, &a, &b, 1.0);
        assert!(f32::from_bits(lo) <= f32::from_bits(hi), "{p}");
    }
}

#[test]
fn probe_two_extra_bits() {
    let c = -(p2(-3) + p2(-25));
    assert_eq!(run(Preset::Volta, &[1.0], &[1.25], c), 0x3F90_0000);
    assert_eq!(run(Preset::Ampere, &[1.0], &[1.25], c), 0x3F90_0000);
    assert_eq!(run(Preset::Ada, &[1.0], &[1.25], c), 0x3F90_0000);
    assert_eq!(run(Preset::Hopper, &[1.0], &[1.25], c), 0x3F8F_FFFF);
    assert_eq!(run(Preset::Blackwell, &[1.0], &[1.25], c), 0x3F8F_FFFF);
}

#[test]
fn probe_block_size() {
    let c = 1.0 + p2(-23);
    for p in ALL {
        let n = p.params(FP16, FP16).unwrap().block;
        let probe = |j: usize| {
            let mut a = vec![0.0; j + 1];
            let mut b = vec![0.0; j + 1];
            a[0] = 1.0;
            b[0] = 1.0;
            a[j] = p2(-23);
            b[j] = 1.0;
            run_mode(
                &AccMode::Nvidia(p.params(FP16, FP16).unwrap()),
                &a,
                &b,
                c,
                0,
            )
        };
        for j in 1..n {
            assert_eq!(probe(j), s(2.0 + p2(-22)), "{p}: slot {j}");
        }
        assert_ne!(
            probe(n),
            s(2.0 + p2(-22)),
            "{p}: slot {n} should start a new block"
        );
    }
}

#[test]
fn probe_final_rounding() {
    let c = 1.0 + p2(-23) + p2(-22);
    let a = [1.0; 3];
    for p in ALL {
        assert_eq!(run(p, &a, &a, c), s(4.0), "{p}: truncation");
    }
    for mode in [AccMode::Ieee, AccMode::Fused, AccMode::Exact] {
        assert_eq!(run_mode(&mode, &a, &a, c, 3), s(4.0 + p2(-21)), "{mode:?}");
    }
}

#[test]
fn specials_first() {
    let inf = f64::INFINITY;
    for p in ALL {
        assert_eq!(run(p, &[inf], &[1.0], 1.0), 0x7F80_0000, "{p}");
        assert_eq!(run(p, &[-inf], &[1.0], 1.0), 0xFF80_0000, "{p}");
        assert_eq!(run(p, &[inf, inf], &[1.0, -1.0], 0.0), 0x7FFF_FFFF, "{p}");
        assert_eq!(run(p, &[inf], &[0.0], 0.0), 0x7FFF_FFFF, "{p}");
        assert_eq!(run(p, &[1.0], &[1.0], f64::NAN), 0x7FFF_FFFF, "{p}");
        assert_eq!(run(p, &[1.0], &[1.0], -inf), 0xFF80_0000, "{p}");
    }
}

/// Zero results of the block FMA are +0, whatever the signs of the zero terms (as in the
/// MATLAB reference models).
#[test]
fn nvidia_zero_is_positive() {
    for p in ALL {
        assert_eq!(run(p, &[-0.0], &[1.0], -0.0), 0, "{p}");
        assert_eq!(run(p, &[1.0], &[1.0], -1.0), 0, "{p}");
    }
}

/// Hopper FP8 keeps 13 fraction bits in each block result (neab = -10).
#[test]
fn hopper_fp8_cuts_to_13_fraction_bits() {
    let params = Preset::Hopper.params(E4M3, E4M3).unwrap();
    assert_eq!(
        (params.block, params.neab, params.out_frac_bits),
        (32, -10, 13)
    );
    // 1 + 2^-13 survives, 1 + 2^-14 does not (c = 1 + 2^-14 alone is cut too).
    let one = 0x38u64; // E4M3 1.0
    let c = s(1.0 + p2(-14));
    let d = dot(&AccMode::Nvidia(params), E4M3, E4M3, &[one], &[one], c, 32).unwrap();
    assert_eq!(d.bits, s(2.0));
    let c = s(p2(-13));
    let d = dot(&AccMode::Nvidia(params), E4M3, E4M3, &[one], &[one], c, 32).unwrap();
    assert_eq!(d.bits, s(1.0 + p2(-13)));
}

/// Blackwell FP8: d = RNE32(c + RZ32(sum of products)); c is added with rounding to nearest.
#[test]
fn blackwell_fp8_rounds_c_to_nearest() {
    let params = Preset::Blackwell.params(E4M3, E4M3).unwrap();
    let one = 0x38u64;
    // c = 1 + 2^-23 + 2^-22, plus one 1 x 1 product: 2 + 3 * 2^-23 ties? ulp at 2 is 2^-22,
    // 3 * 2^-23 = 1.5 ulp -> nearest even is 2 + 2^-21.
    let c = s(1.0 + p2(-23) + p2(-22));
    let d = dot(&AccMode::Nvidia(params), E4M3, E4M3, &[one], &[one], c, 32).unwrap();
    assert_eq!(d.bits, s(2.0 + p2(-21)));
}

#[test]
fn unsupported_presets_are_errors() {
    use tensorcore_rtl::numerics::format::{BF16, E5M2};
    assert!(Preset::Volta.params(BF16, BF16).is_err());
    assert!(Preset::Volta.params(E4M3, E4M3).is_err());
    assert!(Preset::Ampere.params(E5M2, E5M2).is_err());
    assert!(Preset::Hopper.params(FP16, BF16).is_err());
    assert_eq!(
        Preset::Hopper.params(E4M3, E5M2).unwrap(),
        Preset::Hopper.params(E5M2, E5M2).unwrap()
    );
}
