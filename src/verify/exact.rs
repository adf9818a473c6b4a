//! The exact dot-product reference: `c + sum a_k * b_k` summed exactly in big integers and
//! rounded once to FP32, or to FP16 for an FP16 accumulator, by its own small rounding code
//! (RNE, RZ, toward -Inf or +Inf, with the IEEE flags it raises), plus the `fused` and `ieee`
//! chainings built on it. The `*_acc` functions take the accumulator format (FP32 or FP16: `c`
//! and the result are its patterns); the others are FP32.
//!
//! Decoding: FP32 through host `f32`, FP16/BF16 through the `half` crate, E4M3/E5M2 through
//! [`decode_fp8`] (the OCP tables of `fp8_table`). Every value becomes an `f64`
//! (exact for all five formats) and is split into an integer and a power of two from its
//! `f64` encoding. Only the format's name is read from [`Format`].

use super::fp8_table::Fp8Kind;
use crate::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32, TF32};
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

/// Decodes a bit pattern of `fmt` (E4M3, E5M2, FP16, BF16, TF32 as a 19-bit pattern, FP32)
/// through decoders written apart from the datapath (the OCP FP8 table, the `half` crate, the
/// host's `f32`); the format row only says which. Panics on another row (a programming error
/// in a test).
pub fn decode(fmt: Format, bits: u64) -> Decoded {
    if fmt == E4M3 {
        decode_fp8(true, bits as u8)
    } else if fmt == E5M2 {
        decode_fp8(false, bits as u8)
    } else if fmt == FP16 {
        from_f64(half::f16::from_bits(bits as u16).to_f64())
    } else if fmt == BF16 {
        from_f64(half::bf16::from_bits(bits as u16).to_f64())
    } else if fmt == FP32 {
        from_f64(f32::from_bits(bits as u32) as f64)
    } else if fmt == TF32 {
        // A 19-bit TF32 pattern is the top of an FP32 container whose low 13 bits are zero.
        from_f64(f32::from_bits((bits as u32) << 13) as f64)
    } else {
        panic!("verify::exact: no reference decoder for {fmt}")
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
    /// Round toward negative infinity.
    Down,
    /// Round toward positive infinity.
    Up,
}

/// The IEEE flags the reference rounding raises (its own type: this module shares no code
/// with the datapath).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RefFlags {
    /// Invalid operation (a NaN result from Inf - Inf or 0 x Inf, or a signaling NaN input).
    pub invalid: bool,
    /// The rounded magnitude exceeded the largest finite FP32 value.
    pub overflow: bool,
    /// Tiny after rounding (with an unbounded exponent) and inexact.
    pub underflow: bool,
    /// The result differs from the exact value.
    pub inexact: bool,
}

impl std::ops::BitOrAssign for RefFlags {
    fn bitor_assign(&mut self, o: RefFlags) {
        self.invalid |= o.invalid;
        self.overflow |= o.overflow;
        self.underflow |= o.underflow;
        self.inexact |= o.inexact;
    }
}

/// The exact value of `c + sum a_k * b_k` (IEEE zero sign under round to nearest: `-0` only
/// if every term is a negative zero). Extra entries of the longer of `a`, `b` are ignored.
pub fn exact_sum(fmt_a: Format, fmt_b: Format, a: &[u64], b: &[u64], c: u32) -> ExactValue {
    exact_sum_rounding(fmt_a, fmt_b, a, b, c, RefRounding::NearestEven)
}

/// The accumulator formats the reference rounds to, restated from the formats table of
/// docs/numerics.md (not read from the datapath's format rows): total width, fraction bits,
/// exponent bias, and the canonical NaN the datapath returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct AccSpec {
    width: u32,
    frac: u32,
    bias: i64,
    nan: u32,
}

/// IEEE binary32.
const ACC_FP32: AccSpec = AccSpec {
    width: 32,
    frac: 23,
    bias: 127,
    nan: 0x7FC0_0000,
};

/// IEEE binary16.
const ACC_FP16: AccSpec = AccSpec {
    width: 16,
    frac: 10,
    bias: 15,
    nan: 0x7E00,
};

/// The spec of an accumulator format (FP32 or FP16). Panics on another row (a programming
/// error in a caller).
fn acc_spec(acc: Format) -> AccSpec {
    if acc == FP32 {
        ACC_FP32
    } else if acc == FP16 {
        ACC_FP16
    } else {
        panic!("verify::exact: {acc} is not an accumulator format (fp32 or fp16)")
    }
}

/// [`exact_sum`] with the zero sign of rounding direction `mode`: a zero sum is `-0` if every
/// term is a negative zero, `+0` if every term is a positive zero, and otherwise (exact
/// cancellation, zeros of both signs) `-0` only toward negative infinity (IEEE 754 6.3).
pub fn exact_sum_rounding(
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    mode: RefRounding,
) -> ExactValue {
    exact_sum_acc(FP32, fmt_a, fmt_b, a, b, c, mode)
}

/// [`exact_sum_rounding`] with `c` a pattern of the accumulator format `acc` (FP32 or FP16).
pub fn exact_sum_acc(
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    mode: RefRounding,
) -> ExactValue {
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
    take(decode(acc, c as u64));
    for (&x, &y) in a.iter().zip(b.iter()) {
        // Every product of two input formats is exact in f64 (at most 22 significand bits,
        // exponents within 2^-272..2^256), and IEEE f64 multiplication gives the product's
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
    match exact_of_finite(&finite) {
        ExactValue::Finite(_, mag, _) if mag.bits() == 0 => {
            let all_neg = finite.iter().all(|v| *v == 0.0 && v.is_sign_negative());
            let all_pos = finite.iter().all(|v| *v == 0.0 && v.is_sign_positive());
            let neg = all_neg || (!all_pos && mode == RefRounding::Down);
            ExactValue::Finite(neg, mag, 0)
        }
        v => v,
    }
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

/// Rounds an exact value once to FP32 (canonical NaN `0x7FC00000`; overflow: Inf or the
/// largest finite value, by direction).
pub fn round_fp32(v: &ExactValue, mode: RefRounding) -> u32 {
    round_fp32_flags(v, mode).0
}

/// `mag * 2^exp` rounded to an integer multiple of `2^q` in direction `mode` for a value of
/// sign `neg`: the multiple's count and whether anything was discarded.
fn round_at(mag: &BigUint, exp: i64, q: i64, neg: bool, mode: RefRounding) -> (BigUint, bool) {
    if exp >= q {
        return (mag << ((exp - q) as usize), false);
    }
    let shift = (q - exp) as usize;
    let mut mant = mag >> shift;
    let rem = mag - (&mant << shift);
    let inexact = rem.bits() != 0;
    let up = match mode {
        RefRounding::NearestEven => {
            let half = BigUint::from(1u8) << (shift - 1);
            rem > half || (rem == half && mant.bit(0))
        }
        RefRounding::TowardZero => false,
        RefRounding::Down => neg && inexact,
        RefRounding::Up => !neg && inexact,
    };
    if up {
        mant += 1u8;
    }
    (mant, inexact)
}

/// [`round_fp32`] with the IEEE flags of the rounding: inexact, overflow, and underflow
/// (tiny after rounding, as though the exponent range were unbounded, and inexact). A NaN
/// result raises nothing here (the caller knows whether it was invalid).
pub fn round_fp32_flags(v: &ExactValue, mode: RefRounding) -> (u32, RefFlags) {
    round_spec(v, mode, ACC_FP32)
}

/// Rounds an exact value once to FP16 (canonical NaN `0x7E00`; overflow: Inf or the largest
/// finite value `0x7BFF`, by direction), with the IEEE flags as [`round_fp32_flags`] raises
/// them.
pub fn round_fp16_flags(v: &ExactValue, mode: RefRounding) -> (u16, RefFlags) {
    let (bits, flags) = round_spec(v, mode, ACC_FP16);
    (bits as u16, flags)
}

/// Rounds an exact value once to the accumulator format `acc` (FP32 or FP16), with flags.
pub fn round_acc_flags(v: &ExactValue, mode: RefRounding, acc: Format) -> (u32, RefFlags) {
    round_spec(v, mode, acc_spec(acc))
}

/// The one rounding of an exact value to the binary format `f` (`p = frac + 1` significand
/// bits, normal exponents `1 - bias ..= bias`).
fn round_spec(v: &ExactValue, mode: RefRounding, f: AccSpec) -> (u32, RefFlags) {
    let mut flags = RefFlags::default();
    let exp_ones = (1u32 << (f.width - 1 - f.frac)) - 1;
    let inf = exp_ones << f.frac;
    let (neg, mag, exp) = match v {
        ExactValue::Nan => return (f.nan, flags),
        ExactValue::Inf(n) => return (if *n { 1 << (f.width - 1) } else { 0 } | inf, flags),
        ExactValue::Finite(n, m, e) => (*n, m, *e),
    };
    let sign = if neg { 1u32 << (f.width - 1) } else { 0 };
    if mag.bits() == 0 {
        return (sign, flags);
    }
    let frac = i64::from(f.frac);
    let emin = 1 - f.bias;
    let top = exp + mag.bits() as i64 - 1; // exponent of the leading one
    let mut q = top.max(emin) - frac; // exponent of the result's ulp
    let (mant, inexact) = round_at(mag, exp, q, neg, mode);
    flags.inexact = inexact;
    if top < emin && inexact {
        // Tininess after rounding: round to p bits with an unbounded exponent.
        let (full, _) = round_at(mag, exp, top - frac, neg, mode);
        let carried = full.bits() as i64 > frac + 1;
        flags.underflow = top + (carried as i64) < emin;
    }
    let mut m = u64::try_from(&mant).unwrap_or(u64::MAX);
    if m == 1 << (frac + 1) {
        m = 1 << frac;
        q += 1;
    }
    if m < (1 << frac) {
        return (sign | m as u32, flags); // subnormal (q == emin - frac)
    }
    let biased = q + frac + f.bias;
    if biased >= i64::from(exp_ones) {
        flags.overflow = true;
        flags.inexact = true;
        let to_inf = match mode {
            RefRounding::NearestEven => true,
            RefRounding::TowardZero => false,
            RefRounding::Down => neg,
            RefRounding::Up => !neg,
        };
        let max_finite = inf - 1;
        return (sign | if to_inf { inf } else { max_finite }, flags);
    }
    let frac_mask = (1u32 << f.frac) - 1;
    (
        sign | ((biased as u32) << f.frac) | (m as u32 & frac_mask),
        flags,
    )
}

/// `RNE32(c + sum a_k * b_k)` with one rounding.
pub fn exact_dot(fmt_a: Format, fmt_b: Format, a: &[u64], b: &[u64], c: u32) -> u32 {
    round_fp32(&exact_sum(fmt_a, fmt_b, a, b, c), RefRounding::NearestEven)
}

/// `c + sum a_k * b_k` rounded once to nearest even in the accumulator format `acc` (FP32 or
/// FP16; `c` and the result are its patterns).
pub fn exact_dot_acc(
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
) -> u32 {
    let v = exact_sum_acc(acc, fmt_a, fmt_b, a, b, c, RefRounding::NearestEven);
    round_acc_flags(&v, RefRounding::NearestEven, acc).0
}

/// Whether a bit pattern of `fmt` is a signaling NaN (IEEE-style formats: FP16, BF16, FP32
/// and E5M2, whose quiet bit is the top fraction bit; E4M3 has none), read from the patterns
/// themselves.
fn is_signaling(fmt: Format, bits: u64) -> bool {
    // Widths and fraction bits restated from docs/numerics.md ("Formats"), not read from the row.
    let (width, frac) = if fmt == E5M2 {
        (8, 2)
    } else if fmt == FP16 {
        (16, 10)
    } else if fmt == BF16 {
        (16, 7)
    } else if fmt == TF32 {
        (19, 10)
    } else if fmt == FP32 {
        (32, 23)
    } else {
        return false;
    };
    let exp_mask = ((1u64 << (width - 1 - frac)) - 1) << frac;
    let quiet = 1u64 << (frac - 1);
    let frac_mask = (1u64 << frac) - 1;
    bits & exp_mask == exp_mask && bits & frac_mask != 0 && bits & quiet == 0
}

/// `c + sum a_k * b_k` rounded once in direction `mode`, with its IEEE flags: invalid for a
/// signaling NaN input, 0 x Inf or +Inf with -Inf; the rounding's inexact, overflow and
/// underflow otherwise.
pub fn exact_dot_rounding(
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    mode: RefRounding,
) -> (u32, RefFlags) {
    exact_dot_rounding_acc(FP32, fmt_a, fmt_b, a, b, c, mode)
}

/// [`exact_dot_rounding`] into the accumulator format `acc` (FP32 or FP16): `c` and the
/// result are `acc` patterns, the one rounding is to `acc`.
pub fn exact_dot_rounding_acc(
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    mode: RefRounding,
) -> (u32, RefFlags) {
    let v = exact_sum_acc(acc, fmt_a, fmt_b, a, b, c, mode);
    let (bits, mut flags) = round_acc_flags(&v, mode, acc);
    let mut invalid = is_signaling(acc, c as u64);
    let (mut pinf, mut ninf) = (false, false);
    for (&x, &y) in a.iter().zip(b.iter()) {
        invalid |= is_signaling(fmt_a, x) || is_signaling(fmt_b, y);
        let (dx, dy) = (decode(fmt_a, x), decode(fmt_b, y));
        let p = as_f64(dx) * as_f64(dy);
        let zero_times_inf = matches!((dx, dy), (Decoded::Inf(_), Decoded::Finite(z)) | (Decoded::Finite(z), Decoded::Inf(_)) if z == 0.0);
        invalid |= zero_times_inf;
        pinf |= p == f64::INFINITY;
        ninf |= p == f64::NEG_INFINITY;
    }
    let dc = decode(acc, c as u64);
    if let Decoded::Inf(n) = dc {
        pinf |= !n;
        ninf |= n;
    }
    // +Inf with -Inf is invalid unless a NaN operand already decides the result quietly.
    let nan_operand = dc == Decoded::Nan
        || a.iter()
            .zip(b.iter())
            .any(|(&x, &y)| decode(fmt_a, x) == Decoded::Nan || decode(fmt_b, y) == Decoded::Nan);
    invalid |= pinf && ninf && !nan_operand;
    flags.invalid = invalid;
    (bits, flags)
}

/// The `fused` chaining in direction `mode`: `c <- round(c + exact sum of w products)` per
/// group of `width`, with the OR of every step's flags.
pub fn fused_dot_rounding(
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    width: usize,
    mode: RefRounding,
) -> (u32, RefFlags) {
    let mut acc = c;
    let mut flags = RefFlags::default();
    for (ca, cb) in a.chunks(width.max(1)).zip(b.chunks(width.max(1))) {
        let (bits, f) = exact_dot_rounding(fmt_a, fmt_b, ca, cb, acc, mode);
        acc = bits;
        flags |= f;
    }
    (acc, flags)
}

/// The `fused` chaining: `c <- RNE32(c + exact sum of w products)` per group of `width`.
pub fn fused_dot(fmt_a: Format, fmt_b: Format, a: &[u64], b: &[u64], c: u32, width: usize) -> u32 {
    fused_dot_acc(FP32, fmt_a, fmt_b, a, b, c, width)
}

/// The `fused` chaining into the accumulator format `acc` (FP32 or FP16): `c <- RNE(c +
/// exact sum of w products)` per group of `width`, each rounding to `acc`.
pub fn fused_dot_acc(
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    width: usize,
) -> u32 {
    let mut d = c;
    for (ca, cb) in a.chunks(width.max(1)).zip(b.chunks(width.max(1))) {
        d = exact_dot_acc(acc, fmt_a, fmt_b, ca, cb, d);
    }
    d
}

/// The `ieee` chaining: one rounding per product (a chain of FMAs).
pub fn ieee_dot(fmt_a: Format, fmt_b: Format, a: &[u64], b: &[u64], c: u32) -> u32 {
    fused_dot(fmt_a, fmt_b, a, b, c, 1)
}

/// The `ieee` chaining into the accumulator format `acc` (FP32 or FP16): a chain of FMAs each
/// rounded to `acc`.
pub fn ieee_dot_acc(
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
) -> u32 {
    fused_dot_acc(acc, fmt_a, fmt_b, a, b, c, 1)
}
