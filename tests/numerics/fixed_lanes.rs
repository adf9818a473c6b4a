//! The fixed-format lane multipliers and `ieee` chains against the format-generic units.

use tensorcore_rtl::numerics::dot::ieee::fma_chain_over;
use tensorcore_rtl::numerics::fixed::{
    ieee_chain, ieee_chain_bits, ieee_chain_record, lane_multiplier, multiply_fp16, IeeeAcc,
    InlinedPair,
};
use tensorcore_rtl::numerics::format::{Format, ALL_FORMATS, BF16, E4M3, E5M2, FP16, FP32, FP64};
use tensorcore_rtl::numerics::multiply::multiply;
use tensorcore_rtl::numerics::RoundingMode;

/// Every fixed multiplier agrees with the format-generic one on a sweep of encodings
/// (every 8-bit pattern pair for the FP8 pairs, a strided sample for the wider formats).
#[test]
fn fixed_multipliers_match_the_generic_one() {
    for fa in ALL_FORMATS {
        for fb in ALL_FORMATS {
            let mul = lane_multiplier(fa, fb).expect("table format");
            let step = |f: Format| (f.mask() / 251).max(1);
            let mut a = 0u64;
            while a <= fa.mask() {
                let mut b = 0u64;
                while b <= fb.mask() {
                    assert_eq!(
                        mul(a, b),
                        multiply(fa, a, fb, b),
                        "{} {a:#x} x {} {b:#x}",
                        fa.name,
                        fb.name
                    );
                    b += step(fb);
                }
                a += step(fa);
            }
        }
    }
    for f in [E4M3, E5M2] {
        let mul = lane_multiplier(f, f).expect("table format");
        for a in 0..=0xFFu64 {
            for b in 0..=0xFFu64 {
                assert_eq!(mul(a, b), multiply(f, a, f, b));
            }
        }
    }
    assert!(lane_multiplier(FP64, FP16).is_none());
}

/// The inlined FP16 x FP16 multiplier (the PE's fast path) agrees with the format-generic one:
/// every FP16 encoding times every 257th encoding and times the zeros, subnormal and normal
/// edges, infinities and NaNs.
#[test]
fn inlined_fp16_multiplier_matches_the_generic_one() {
    let specials = [
        0x0000u64, 0x8000, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7D00,
    ];
    for a in 0..=0xFFFFu64 {
        let others = (0..=0xFFFFu64).step_by(0x101).chain(specials);
        for b in others {
            assert_eq!(
                multiply_fp16(a, b),
                multiply(FP16, a, FP16, b),
                "{a:#06x} x {b:#06x}"
            );
        }
    }
}

/// The inlined FP8 units (the PE's lane loops for the FP8 pairs) agree with the
/// format-generic multiplier on every pair of 8-bit encodings, and exactly the FP16 and FP8
/// pairs have one.
#[test]
fn inlined_fp8_multipliers_match_the_generic_one() {
    let pairs = [
        (E4M3, E4M3, InlinedPair::E4m3),
        (E5M2, E5M2, InlinedPair::E5m2),
        (E4M3, E5M2, InlinedPair::E4m3E5m2),
        (E5M2, E4M3, InlinedPair::E5m2E4m3),
    ];
    for (fa, fb, pair) in pairs {
        assert_eq!(InlinedPair::of(fa, fb), Some(pair));
        for a in 0..=0xFFu64 {
            for b in 0..=0xFFu64 {
                assert_eq!(
                    pair.multiply(a, b),
                    multiply(fa, a, fb, b),
                    "{} {a:#04x} x {} {b:#04x}",
                    fa.name,
                    fb.name
                );
            }
        }
    }
    assert_eq!(InlinedPair::of(FP16, FP16), Some(InlinedPair::Fp16));
    assert_eq!(
        InlinedPair::Fp16.multiply(0x3C01, 0xC000),
        multiply(FP16, 0x3C01, FP16, 0xC000)
    );
    for (fa, fb) in [
        (FP16, E4M3),
        (BF16, BF16),
        (E4M3, FP16),
        (FP32, FP32),
        (FP64, FP64),
    ] {
        assert_eq!(InlinedPair::of(fa, fb), None, "{} x {}", fa.name, fb.name);
    }
}

/// The fixed chains agree with the format-generic FMA chain over products of FP16 and
/// BF16 operand pairs and a spread of accumulators (specials, subnormals, both signs),
/// one to three lanes long.
#[test]
fn fixed_chains_match_the_generic_one() {
    let cs32 = [
        0u32,
        0x8000_0000,
        1,
        0x0080_0000,
        0x3F80_0000,
        0xC2F6_E979,
        0x7F7F_FFFF,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0x7FA0_0000,
    ];
    let cs16 = [
        0u32, 0x8000, 1, 0x0400, 0x3C00, 0xC7B4, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7D00,
    ];
    for (acc, cs) in [(FP32, &cs32[..]), (FP16, &cs16[..])] {
        let chain = ieee_chain(acc).expect("accumulator format");
        for fmt in [FP16, BF16] {
            let mut a = 0u64;
            while a <= 0xFFFF {
                let b = (0x3C00 ^ a.rotate_left(3)) & 0xFFFF;
                let ps = [
                    multiply(fmt, a, fmt, b),
                    multiply(fmt, b, fmt, a ^ 0x8000),
                    multiply(fmt, a ^ 0x0155, fmt, 0x3C01),
                ];
                for n in 1..=ps.len() {
                    for &c in cs {
                        // The chain with the accumulator format a run-time value.
                        let generic = fma_chain_over(&ps[..n], c, RoundingMode::NearestEven, acc);
                        assert_eq!(chain(&ps[..n], c), generic, "{} c={c:#x}", fmt.name);
                        // The inlined forms a PE runs: with the trace record, and bits only.
                        let unit = IeeeAcc::of(acc).expect("accumulator format");
                        assert_eq!(ieee_chain_record(unit, &ps[..n], c), generic);
                        assert_eq!(
                            ieee_chain_bits(unit, &ps[..n], c),
                            (generic.bits, generic.flags.to_bits()),
                            "{} c={c:#x}",
                            fmt.name
                        );
                    }
                }
                a += 97;
            }
        }
    }
    assert!(ieee_chain(BF16).is_none());
}
