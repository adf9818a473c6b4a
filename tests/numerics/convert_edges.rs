//! Conversions between formats at their thresholds, specials and TF32 round-to-nearest-away.

use tensorcore_rtl::numerics::convert::{
    from_fp32, tf32_from_container, tf32_from_fp32_rna, tf32_to_container, to_fp32,
};
use tensorcore_rtl::numerics::format::{BF16, E4M3, E5M2, FP16};
use tensorcore_rtl::numerics::{Flags, Overflow, RoundingMode};

const RNE: RoundingMode = RoundingMode::NearestEven;

fn f(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn e4m3_thresholds() {
    let c = |x: f32, s| from_fp32(E4M3, f(x), RNE, s).bits;
    assert_eq!(c(448.0, Overflow::Ieee), 0x7E);
    assert_eq!(c(464.0, Overflow::Ieee), 0x7E, "464 ties to 448");
    assert_eq!(
        c(464.0001, Overflow::Ieee),
        0x7F,
        "just above 464 overflows to NaN"
    );
    assert_eq!(c(-464.0001, Overflow::Saturate), 0xFE);
    assert_eq!(c(f32::INFINITY, Overflow::Saturate), 0x7E);
    assert_eq!(c(f32::NEG_INFINITY, Overflow::Ieee), 0x7F);
    // Half the smallest subnormal (2^-10) goes to zero; just above it rounds up.
    assert_eq!(c(2f32.powi(-10), Overflow::Ieee), 0x00);
    assert_eq!(c(-(2f32.powi(-10)), Overflow::Ieee), 0x80);
    assert_eq!(
        c(2f32.powi(-10) * (1.0 + f32::EPSILON), Overflow::Ieee),
        0x01
    );
}

#[test]
fn e5m2_thresholds() {
    let c = |x: f32, s| from_fp32(E5M2, f(x), RNE, s).bits;
    assert_eq!(c(57344.0, Overflow::Ieee), 0x7B);
    assert_eq!(c(61439.996, Overflow::Ieee), 0x7B);
    assert_eq!(c(61440.0, Overflow::Ieee), 0x7C, "61440 overflows to Inf");
    assert_eq!(c(61440.0, Overflow::Saturate), 0x7B);
    assert_eq!(c(2f32.powi(-17), Overflow::Ieee), 0x00);
    assert_eq!(
        c(2f32.powi(-17) * (1.0 + f32::EPSILON), Overflow::Ieee),
        0x01
    );
    assert_eq!(c(f32::NAN, Overflow::Saturate), 0x7E);
}

#[test]
fn flags_of_specials() {
    let r = from_fp32(E4M3, f(f32::INFINITY), RNE, Overflow::Ieee);
    assert_eq!((r.bits, r.flags), (0x7F, Flags::INVALID));
    let r = from_fp32(FP16, 0x7F80_0001, RNE, Overflow::Ieee);
    assert_eq!((r.bits, r.flags), (0x7E00, Flags::INVALID), "sNaN");
    let r = from_fp32(FP16, 0xFFC0_0001, RNE, Overflow::Ieee);
    assert_eq!((r.bits, r.flags), (0x7E00, Flags::NONE), "qNaN");
    let r = from_fp32(BF16, f(f32::MAX), RNE, Overflow::Ieee);
    assert_eq!(r.bits, 0x7F80, "FP32 max rounds to BF16 Inf");
    assert!(r.flags.overflow && r.flags.inexact);
}

#[test]
fn widening_is_exact() {
    for fmt in [E4M3, E5M2, FP16, BF16] {
        for bits in 0..(1u64 << fmt.width()) {
            let w = to_fp32(fmt, bits);
            if fmt.is_nan(bits) {
                assert_eq!(w, 0x7FC0_0000);
                continue;
            }
            let back = from_fp32(fmt, w, RNE, Overflow::Ieee);
            assert_eq!(back.bits, bits, "{fmt} {bits:#x}");
            assert!(back.flags.is_empty());
        }
    }
}

#[test]
fn tf32_rna_ties_away_and_overflows() {
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties away from zero.
    assert_eq!(tf32_from_fp32_rna(0x3F80_1000), 0x3F80_2000);
    assert_eq!(tf32_from_fp32_rna(0xBF80_1000), 0xBF80_2000);
    // Just below the tie truncates; just above rounds up.
    assert_eq!(tf32_from_fp32_rna(0x3F80_0FFF), 0x3F80_0000);
    assert_eq!(tf32_from_fp32_rna(0x3F80_1001), 0x3F80_2000);
    // The largest FP32 rounds past the largest TF32 (0x7F7FE000) to Inf.
    assert_eq!(tf32_from_fp32_rna(0x7F7F_FFFF), 0x7F80_0000);
    assert_eq!(tf32_from_fp32_rna(0x7F7F_EFFF), 0x7F7F_E000);
    assert_eq!(tf32_from_fp32_rna(0xFF80_0000), 0xFF80_0000);
    assert_eq!(tf32_from_fp32_rna(0x7F80_0001), 0x7FC0_0000);
    // A subnormal tie rounds up onto the next TF32 subnormal.
    assert_eq!(tf32_from_fp32_rna(0x0000_1000), 0x0000_2000);
    assert_eq!(tf32_from_container(0x3F80_2000), Some(0x3F80_2000 >> 13));
    assert_eq!(tf32_from_container(0x3F80_0001), None);
    assert_eq!(tf32_to_container(0x1FC01), 0x3F80_2000);
}
