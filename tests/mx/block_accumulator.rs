//! The MX block accumulator: its sum register, scale factors and the fire stage.

use tensorcore_rtl::numerics::format::FP32;
use tensorcore_rtl::numerics::mx_block::{
    block_accumulate, block_fire, BlockState, ScaleClass, ScaleFactor,
};
use tensorcore_rtl::numerics::{Flags, Product, ProductClass};

fn e8m0(xa: u64, xb: u64) -> ScaleFactor {
    let f = |x| ScaleFactor::decode(tensorcore_rtl::numerics::format::E8M0, x);
    f(xa) * f(xb)
}

fn zero_prod(sign: bool) -> Product {
    Product {
        class: ProductClass::Zero,
        ..prod(sign, 0, 0)
    }
}

fn prod(sign: bool, sig: u64, lsb: i32) -> Product {
    Product {
        sign,
        class: ProductClass::Finite,
        exp_sum: lsb,
        sig,
        frac_bits: 0,
        flags: Flags::NONE,
    }
}

/// The register round-trips negative sums through its 72 bits.
#[test]
fn sum_bits_round_trip() {
    for v in [0i128, 1, -1, (1 << 70) - 1, -(1 << 70), -12345] {
        let s = BlockState {
            sum: v,
            ..BlockState::default()
        };
        assert_eq!(BlockState::sum_from_bits(s.sum_bits()), v);
    }
}

/// An FP8 code's value, decoded here from its fields (an independent decoder: OCP E4M3 has
/// no infinities and one NaN magnitude, E5M2 is IEEE-like); `None` for a non-finite code.
fn fp8_value(e4m3: bool, code: u64) -> Option<f64> {
    let (exp_bits, frac_bits, bias) = if e4m3 { (4, 3, 7) } else { (5, 2, 15) };
    let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((code >> frac_bits) & ((1 << exp_bits) - 1)) as i32;
    let f = (code & ((1 << frac_bits) - 1)) as f64 / f64::from(1 << frac_bits);
    let e_max = (1 << exp_bits) - 1;
    if (e4m3 && code & 0x7F == 0x7F) || (!e4m3 && e == e_max) {
        return None;
    }
    Some(if e == 0 {
        sign * f * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + f) * 2f64.powi(e - bias)
    })
}

/// The block-sum adder's lane aligners take every finite product of every FP8 pair
/// exactly: one product's sum is its value times `2^32` (computed from the decoded values
/// above in `f64`, exact for these products), and 32 of the largest products (E5M2's
/// `57344^2`) fill the 72-bit register without wrapping, for both signs.
#[test]
fn aligner_takes_every_fp8_product() {
    use tensorcore_rtl::numerics::format::{E4M3, E5M2};
    use tensorcore_rtl::numerics::multiply::multiply;
    for (fa, ea) in [(E4M3, true), (E5M2, false)] {
        for (fb, eb) in [(E4M3, true), (E5M2, false)] {
            for a in 0..=0xFFu64 {
                for b in 0..=0xFFu64 {
                    let (Some(va), Some(vb)) = (fp8_value(ea, a), fp8_value(eb, b)) else {
                        continue;
                    };
                    let s = block_accumulate(BlockState::default(), &[multiply(fa, a, fb, b)]);
                    let want = va * vb * 2f64.powi(32);
                    assert_eq!(want.fract(), 0.0);
                    assert_eq!(
                        s.sum, want as i128,
                        "{} {a:#x} x {} {b:#x}",
                        fa.name, fb.name
                    );
                    assert_eq!(BlockState::sum_from_bits(s.sum_bits()), s.sum);
                }
            }
        }
    }
    for code in [0x7Bu64, 0xFB] {
        let p = multiply(E5M2, code, E5M2, 0x7B);
        let s = block_accumulate(BlockState::default(), &[p; 32]);
        let one = 57344i128 * 57344 * (1i128 << 32);
        let want = if code == 0x7B { 32 * one } else { -32 * one };
        assert_eq!(s.sum, want);
        assert_eq!(BlockState::sum_from_bits(s.sum_bits()), want);
    }
}

/// Scales 2^(127+127-254) = 1: 3 * 2^-32 + 1.0 rounds to 1.0; 1.5 * 2^3 exact.
#[test]
fn fire_basic() {
    let s = block_accumulate(BlockState::default(), &[prod(false, 3, -32)]);
    let r = block_fire(&s, e8m0(127, 127), 1.0f32.to_bits());
    assert_eq!(r.out.bits as u32, 1.0f32.to_bits());
    assert!(r.out.flags.inexact);
    let s = block_accumulate(BlockState::default(), &[prod(false, 3, -1)]);
    let r = block_fire(&s, e8m0(130, 127), 0);
    assert_eq!(f32::from_bits(r.out.bits as u32), 12.0);
    assert_eq!(r.scale_exp, 3);
    let r = block_fire(&s, e8m0(0xFF, 127), 0);
    assert!(f32::from_bits(r.out.bits as u32).is_nan());
}

/// E4M3 scales decode to a 4-bit significand: 1.5 = 0x3C is 12 * 2^-3, the subnormal
/// 0x01 is 1 * 2^-9; their product 12 * 2^-12. E8M0 0x80 is 1 * 2^1.
#[test]
fn scale_factors() {
    use tensorcore_rtl::numerics::format::{E4M3, E8M0};
    let x = ScaleFactor::decode(E4M3, 0x3C);
    assert_eq!((x.class, x.sig, x.exp), (ScaleClass::Finite, 12, -3));
    let y = ScaleFactor::decode(E4M3, 0x01);
    assert_eq!((y.sig, y.exp), (1, -9));
    let p = x * y;
    assert_eq!((p.sig, p.exp, p.neg), (12, -12, false));
    let e = ScaleFactor::decode(E8M0, 0x80);
    assert_eq!((e.sig, e.exp), (1, 1));
    let zero = ScaleFactor::decode(E4M3, 0x00);
    let inf = ScaleFactor::decode(FP32, 0x7F80_0000);
    assert_eq!(zero.class, ScaleClass::Zero);
    assert_eq!((zero * inf).class, ScaleClass::Nan);
    assert_eq!((inf * x).class, ScaleClass::Inf);
    assert_eq!(ScaleFactor::decode(E4M3, 0x7F).class, ScaleClass::Nan);
    let neg = ScaleFactor::decode(FP32, (-2.0f32).to_bits() as u64);
    assert!((neg * x).neg);
}

/// Zero and infinite scales (hand-worked): a zero scale turns every product into a
/// zero term whose sign is the product's times the scale's; an infinite scale makes a
/// zero product NaN and a finite one an infinity.
#[test]
fn zero_and_infinite_scales() {
    use tensorcore_rtl::numerics::format::E4M3;
    let zero = ScaleFactor::decode(E4M3, 0x00);
    let neg_zero = ScaleFactor::decode(FP32, 0x8000_0000);
    let inf = ScaleFactor::decode(FP32, 0x7F80_0000);
    let neg_c = 0x8000_0000u32;
    // Products -3 and -1 (negative), c = -0: with a +0 scale both terms are -0: -0.
    let s = block_accumulate(BlockState::default(), &[prod(true, 3, 0), prod(true, 1, 0)]);
    assert_eq!(block_fire(&s, zero, neg_c).out.bits, 0x8000_0000);
    // The same with a -0 scale: terms +0, so +0.
    assert_eq!(block_fire(&s, neg_zero, neg_c).out.bits, 0);
    // c nonzero survives a zero scale exactly.
    assert_eq!(block_fire(&s, zero, 0x4000_0000).out.bits, 0x4000_0000);
    // Infinite scale: negative products give -Inf.
    assert_eq!(block_fire(&s, inf, 0).out.bits, 0xFF80_0000);
    // With a zero product, NaN.
    let z = block_accumulate(s, &[zero_prod(false)]);
    assert!(f32::from_bits(block_fire(&z, inf, 0).out.bits as u32).is_nan());
    // Mixed signs under an infinite scale: +Inf + -Inf is NaN.
    let mixed = block_accumulate(s, &[prod(false, 1, 0)]);
    assert!(f32::from_bits(block_fire(&mixed, inf, 0).out.bits as u32).is_nan());
}

/// A scaled block wider than 64 bits: the NVFP4 extreme (block sum 16 * 36 in units of
/// 2^-32 times 2^56 - 1) still rounds exactly: 576 * 2^-32 * (2^56 - 1) * 2^-40 is just
/// below 576 * 2^-16, which rounds to it.
#[test]
fn wide_scaled_block() {
    let s = block_accumulate(BlockState::default(), &[prod(false, 576, -32)]);
    let scale = ScaleFactor {
        class: ScaleClass::Finite,
        neg: false,
        sig: (1 << 56) - 1,
        exp: -40,
    };
    let r = block_fire(&s, scale, 0);
    assert_eq!(f32::from_bits(r.out.bits as u32), 576.0 * 2f32.powi(-16));
    assert!(r.out.flags.inexact);
}
