//! The exact (big-integer) reference: FP8 decoding, rounding landmarks, dot products.

use num_bigint::BigUint;
use tensorcore_rtl::numerics::format::FP32;
use tensorcore_rtl::numerics::format::{E4M3, E5M2, FP16};
use tensorcore_rtl::verify::exact::{
    decode_fp8, exact_dot, exact_dot_acc, fused_dot, fused_dot_acc, ieee_dot_acc, round_fp16_flags,
    round_fp32, Decoded, ExactValue, RefFlags, RefRounding,
};

#[test]
fn fp8_table_landmarks() {
    assert_eq!(decode_fp8(true, 0x7E), Decoded::Finite(448.0));
    assert_eq!(decode_fp8(true, 0x7F), Decoded::Nan);
    assert_eq!(decode_fp8(true, 0x01), Decoded::Finite(2f64.powi(-9)));
    assert_eq!(decode_fp8(true, 0x08), Decoded::Finite(2f64.powi(-6)));
    assert_eq!(decode_fp8(false, 0x7B), Decoded::Finite(57344.0));
    assert_eq!(decode_fp8(false, 0x7C), Decoded::Inf(false));
    assert_eq!(decode_fp8(false, 0xFC), Decoded::Inf(true));
    assert_eq!(decode_fp8(false, 0x7D), Decoded::Nan);
    assert_eq!(decode_fp8(false, 0x01), Decoded::Finite(2f64.powi(-16)));
    let _ = E4M3;
    let _ = E5M2;
}

#[test]
fn rounding_ties_and_subnormals() {
    // 1 + 2^-24 ties to 1; 1 + 3*2^-24 ties up.
    let v = ExactValue::Finite(false, BigUint::from((1u64 << 24) + 1), -24);
    assert_eq!(round_fp32(&v, RefRounding::NearestEven), 0x3F80_0000);
    let v = ExactValue::Finite(false, BigUint::from((1u64 << 24) + 3), -24);
    assert_eq!(round_fp32(&v, RefRounding::NearestEven), 0x3F80_0002);
    assert_eq!(round_fp32(&v, RefRounding::TowardZero), 0x3F80_0001);
    // 2^-150 ties to 0; 3 * 2^-151 rounds to 2^-149.
    let v = ExactValue::Finite(false, BigUint::from(1u8), -150);
    assert_eq!(round_fp32(&v, RefRounding::NearestEven), 0);
    let v = ExactValue::Finite(true, BigUint::from(3u8), -151);
    assert_eq!(round_fp32(&v, RefRounding::NearestEven), 0x8000_0001);
    // Overflow.
    let v = ExactValue::Finite(false, BigUint::from(1u8), 128);
    assert_eq!(round_fp32(&v, RefRounding::NearestEven), 0x7F80_0000);
    assert_eq!(round_fp32(&v, RefRounding::TowardZero), 0x7F7F_FFFF);
}

#[test]
fn fp16_rounding_landmarks() {
    let r = |mag: u64, exp: i64, neg: bool, mode| {
        round_fp16_flags(&ExactValue::Finite(neg, BigUint::from(mag), exp), mode)
    };
    let rne = RefRounding::NearestEven;
    // 1 + 2^-11 ties to 1 (0x3C00); 1 + 3 * 2^-11 ties up to 1 + 2^-9 (0x3C02).
    assert_eq!(r((1 << 11) + 1, -11, false, rne).0, 0x3C00);
    assert_eq!(r((1 << 11) + 3, -11, false, rne).0, 0x3C02);
    assert_eq!(
        r((1 << 11) + 3, -11, false, RefRounding::TowardZero).0,
        0x3C01
    );
    // The smallest subnormal 2^-24 (0x0001); 2^-25 ties to 0 with underflow and inexact.
    assert_eq!(r(1, -24, false, rne), (0x0001, RefFlags::default()));
    let (bits, f) = r(1, -25, true, rne);
    assert_eq!(bits, 0x8000);
    assert!(f.underflow && f.inexact);
    // 2^-14 - 2^-25 (11 bits) ties up to the smallest normal 0x0400, but with an unbounded
    // exponent it is exact and below 2^-14: tiny, so underflow. 2^-14 - 2^-26 (12 bits)
    // rounds to 2^-14 even with an unbounded exponent: no underflow.
    let (bits, f) = r((1 << 11) - 1, -25, false, rne);
    assert_eq!(bits, 0x0400);
    assert!(f.inexact && f.underflow);
    let (bits, f) = r((1 << 12) - 1, -26, false, rne);
    assert_eq!(bits, 0x0400);
    assert!(f.inexact && !f.underflow);
    // 65504 is the largest finite; 65520 rounds to Inf (RNE) or stays 65504 (RTZ).
    assert_eq!(r(65504, 0, false, rne).0, 0x7BFF);
    assert_eq!(r(65520, 0, false, rne).0, 0x7C00);
    assert!(r(65520, 0, false, rne).1.overflow);
    assert_eq!(r(65520, 0, false, RefRounding::TowardZero).0, 0x7BFF);
    assert_eq!(r(65520, 0, true, RefRounding::Up).0, 0xFBFF);
    assert_eq!(round_fp16_flags(&ExactValue::Nan, rne).0, 0x7E00);
    assert_eq!(round_fp16_flags(&ExactValue::Inf(true), rne).0, 0xFC00);
}

#[test]
fn fp16_accumulator_dots() {
    // 2 + (-1) + 2^-11 + 2^-24 (C = 0): exact rounds once, 1 + 2^-11 + 2^-24 -> 1 + 2^-10;
    // the ieee chain ties 1 + 2^-11 to 1 and then 1 + 2^-24 stays 1.
    let (a, b) = ([0x4000, 0xBC00, 0x1000, 0x0001], [0x3C00; 4]);
    assert_eq!(exact_dot_acc(FP16, FP16, FP16, &a, &b, 0), 0x3C01);
    assert_eq!(ieee_dot_acc(FP16, FP16, FP16, &a, &b, 0), 0x3C00);
    // C is an FP16 pattern: 1.5 + 2 * 1 = 3.5.
    assert_eq!(
        exact_dot_acc(FP16, FP16, FP16, &[0x4000], &[0x3C00], 0x3E00),
        0x4300
    );
    // The FP32 entry points are the FP32 accumulator.
    assert_eq!(
        fused_dot_acc(FP32, FP16, FP16, &a, &b, 0, 2),
        fused_dot(FP16, FP16, &a, &b, 0, 2)
    );
}

#[test]
fn small_dot() {
    // 1 * 2 + 1 * 2^-24 with c = 0 under FP16: 2 + 2^-24 rounds to 2.
    let r = exact_dot(FP16, FP16, &[0x3C00, 0x3C00], &[0x4000, 0x0001], 0);
    assert_eq!(r, 0x4000_0000);
    assert_eq!(exact_dot(FP16, FP16, &[], &[], 0x8000_0000), 0x8000_0000);
}
