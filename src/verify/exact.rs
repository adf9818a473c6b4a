//! The exact dot-product reference: `c + sum a_k * b_k` summed exactly in big integers and
//! rounded once to FP32 by its own small rounding code (RNE or RZ), plus the `fused` and
//! `ieee` chainings built on it.
//!
//! Decoding: FP32 through host `f32`, FP16/BF16 through the `half` crate, E4M3/E5M2 through
//! [`decode_fp8`] (the OCP tables of `fp8_table`). Every value becomes an `f64`
//! (exact for all five formats) and is split into an integer and a power of two from its
//! `f64` encoding. Only the format's name is read from [`Format`].

use super::fp8_table::Fp8Kind;
use crate::numerics::format::Format;
use num_bigint::{BigInt, BigUint, Sign};

/// A decoded input value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decoded {
    /// NaN.
    Nan,
    /// Signed infinity (`true` = negative).
    Inf(bool),
    /// A finite value (signed zeros included).
    Finite(f64),
}

/// Decodes an OCP FP8 pattern (`e4m3` or `e5m2`) through the OCP tables of
/// [`super::fp8_table`] (one FP8 decoder serves every reference).
pub fn decode_fp8(e4m3: bool, bits: u8) -> Decoded {
    let kind = if e4m3 { Fp8Kind::E4M3 } else { Fp8Kind::E5M2 };
    from_f64(kind.decode(bits))
}

/// A decoded value as `f64` (NaN, signed infinities, finite values exactly).
pub fn as_f64(d: Decoded) -> f64 {
    match d {
        Decoded::Nan => f64::NAN,
        Decoded::Inf(n) => {
            if n {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        Decoded::Finite(v) => v,
    }
}

fn from_f64(v: f64) -> Decoded {
    if v.is_nan() {
        Decoded::Nan
    } else if v.is_infinite() {
        Decoded::Inf(v < 0.0)
    } else {
        Decoded::Finite(v)
    }
}

/// Decodes a bit pattern of the format named `fmt.name` (`e4m3`, `e5m2`, `fp16`, `bf16`,
/// `fp32`). Panics on an unknown name (a programming error in a test).
pub fn decode(fmt: Format, bits: u64) -> Decoded {
    match fmt.name {
        "e4m3" => decode_fp8(true, bits as u8),
        "e5m2" => decode_fp8(false, bits as u8),
        "fp16" => from_f64(half::f16::from_bits(bits as u16).to_f64()),
        "bf16" => from_f64(half::bf16::from_bits(bits as u16).to_f64()),
        "fp32" => from_f64(f32::from_bits(bits as u32) as f64),
        other => panic!("verify::exact: unknown format {other}"),
    }
}

/// Splits a finite nonzero `f64` into `(negative, integer, exponent)` with
/// `|v| = integer * 2^exponent`.
fn split(v: f64) -> (bool, u64, i32) {
    let b = v.to_bits();
    let neg = b >> 63 != 0;
    let e = ((b >> 52) & 0x7FF) as i32;
    let f = b & ((1u64 << 52) - 1);
    if e == 0 {
        (neg, f, -1074)
    } else {
        (neg, f | (1u64 << 52), e - 1075)
    }
}

/// An exact value: `NaN`, a signed infinity, or `(-1)^neg * mag * 2^exp` with a sign for
/// zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExactValue {
    /// NaN (any NaN input, 0 x Inf, or +Inf with -Inf).
    Nan,
    /// Signed infinity (`true` = negative).
    Inf(bool),
    /// Finite: `neg`, `mag`, `exp`.
    Finite(bool, BigUint, i64),
}

/// Rounding direction of the reference rounding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefRounding {
    /// Round to nearest, ties to even.
    NearestEven,
    /// Round toward zero.
    TowardZero,
}

/// The exact value of `c + sum a_k * b_k` (IEEE zero sign under round to nearest: `-0` only
/// if every term is a negative zero). Extra entries of the longer of `a`, `b` are ignored.
pub fn exact_sum(fmt_a: Format, fmt_b: Format, a: &[u64], b: &[u64], c: u32) -> ExactValue {
    let mut finite: Vec<f64> = Vec::with_capacity(a.len() + 1);
    let (mut pinf, mut ninf, mut nan) = (false, false, false);
    let mut take = |d: Decoded| match d {
        Decoded::Nan => nan = true,
        Decoded::Inf(n) => {
            if n {
                ninf = true
            } else {
                pinf = true
            }
        }
        Decoded::Finite(v) => finite.push(v),
    };
    take(decode(crate::numerics::format::FP32, c as u64));
    for (&x, &y) in a.iter().zip(b.iter()) {
        // Every product of two input formats is exact in f64 (at most 22 significand bits,
        // exponents within 2^-266..2^256), and IEEE f64 multiplication gives the product's
        // sign, 0 x Inf = NaN and signed infinities.
        let p = as_f64(decode(fmt_a, x)) * as_f64(decode(fmt_b, y));
        take(from_f64(p));
    }
    if nan || (pinf && ninf) {
        return ExactValue::Nan;
    }
    if pinf || ninf {
        return ExactValue::Inf(ninf);
    }
    exact_of_finite(&finite)
}

/// The exact sum of finite `f64` terms, in big integers (IEEE zero sign under round to
/// nearest: `-0` only if every term is a negative zero; an empty list is `-0`, the neutral
/// element). Every reference in `verify` sums through this one routine.
pub fn exact_of_finite(terms: &[f64]) -> ExactValue {
    let nonzero: Vec<(bool, u64, i64)> = terms
        .iter()
        .filter(|v| **v != 0.0)
        .map(|&v| {
            let (n, m, e) = split(v);
            (n, m, e as i64)
        })
        .collect();
    let Some(min_e) = nonzero.iter().map(|t| t.2).min() else {
        let neg = terms.iter().all(|v| v.is_sign_negative());
        return ExactValue::Finite(neg, BigUint::default(), 0);
    };
    let mut total = BigInt::default();
    for (n, m, e) in nonzero {
        let v = BigInt::from(m) << ((e - min_e) as usize);
        if n {
            total -= v
        } else {
            total += v
        }
    }
    let (sign, mag) = total.into_parts();
    if mag.bits() == 0 {
        return ExactValue::Finite(false, mag, 0);
    }
    ExactValue::Finite(sign == Sign::Minus, mag, min_e)
}

/// Rounds an exact value once to FP32 (canonical NaN `0x7FC00000`; overflow: Inf under
/// RNE, the largest finite value under RZ).
pub fn round_fp32(v: &ExactValue, mode: RefRounding) -> u32 {
    let (neg, mag, exp) = match v {
        ExactValue::Nan => return 0x7FC0_0000,
        ExactValue::Inf(n) => return if *n { 0xFF80_0000 } else { 0x7F80_0000 },
        ExactValue::Finite(n, m, e) => (*n, m, *e),
    };
    let sign = if neg { 0x8000_0000u32 } else { 0 };
    if mag.bits() == 0 {
        return sign;
    }
    let top = exp + mag.bits() as i64 - 1; // exponent of the leading one
    let mut q = top.max(-126) - 23; // exponent of the result's ulp
    let mut mant: BigUint;
    if exp >= q {
        mant = mag << ((exp - q) as usize);
    } else {
        let shift = (q - exp) as usize;
        mant = mag >> shift;
        let rem = mag - (&mant << shift);
        if mode == RefRounding::NearestEven {
            let half = BigUint::from(1u8) << (shift - 1);
            let odd = mant.bit(0);
            if rem > half || (rem == half && odd) {
                mant += 1u8;
            }
        }
    }
    let mut m = u64::try_from(&mant).unwrap_or(u64::MAX);
    if m == 1 << 24 {
        m = 1 << 23;
        q += 1;
    }
    if m < (1 << 23) {
        return sign | m as u32; // subnormal (q == -149)
    }
    let biased = q + 23 + 127;
    if biased >= 255 {
        return match mode {
            RefRounding::NearestEven => sign | 0x7F80_0000,
            RefRounding::TowardZero => sign | 0x7F7F_FFFF,
        };
    }
    sign | ((biased as u32) << 23) | (m as u32 & 0x7F_FFFF)
}

/// `RNE32(c + sum a_k * b_k)` with one rounding.
pub fn exact_dot(fmt_a: Format, fmt_b: Format, a: &[u64], b: &[u64], c: u32) -> u32 {
    round_fp32(&exact_sum(fmt_a, fmt_b, a, b, c), RefRounding::NearestEven)
}

/// The `fused` chaining: `c <- RNE32(c + exact sum of w products)` per group of `width`.
pub fn fused_dot(fmt_a: Format, fmt_b: Format, a: &[u64], b: &[u64], c: u32, width: usize) -> u32 {
    let mut acc = c;
    for (ca, cb) in a.chunks(width.max(1)).zip(b.chunks(width.max(1))) {
        acc = exact_dot(fmt_a, fmt_b, ca, cb, acc);
    }
    acc
}

/// The `ieee` chaining: one rounding per product (a chain of FMAs).
pub fn ieee_dot(fmt_a: Format, fmt_b: Format, a: &[u64], b: &[u64], c: u32) -> u32 {
    fused_dot(fmt_a, fmt_b, a, b, c, 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::format::{E4M3, E5M2, FP16};

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
    fn small_dot() {
        // 1 * 2 + 1 * 2^-24 with c = 0 under FP16: 2 + 2^-24 rounds to 2.
        let r = exact_dot(FP16, FP16, &[0x3C00, 0x3C00], &[0x4000, 0x0001], 0);
        assert_eq!(r, 0x4000_0000);
        assert_eq!(exact_dot(FP16, FP16, &[], &[], 0x8000_0000), 0x8000_0000);
    }
}
