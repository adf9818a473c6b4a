//! An independent reference for the `nvidia` accumulation mode: the block FMA of NUMERICS.md
//! (steps 1-6, the presets table, the Hopper FP8 13-bit cut) and the Blackwell FP8 rule
//! `RNE32(c + RZ32(sum))`, written from the document, not from `crate::numerics`.
//!
//! Everything here works on exact values: inputs are decoded by [`super::exact::decode`]
//! (host `f32`, the `half` crate, the OCP FP8 table), products are exact in `f64`, terms are
//! truncated onto the alignment grid and summed in big integers, and the block result is
//! normalised and truncated by this file's own code. Only a format's name is read from
//! [`Format`]; the block parameters come from this file's own table ([`ref_params`]).
//!
//! Conventions (those of the MATLAB models the measurements were taken against): NaN results
//! are `0x7FC00000`; an exactly zero aligned sum (also a block in which no term takes part)
//! gives `+0`; overflow of the truncated FP32 result gives the signed infinity.

use super::exact::{decode, exact_of_finite, round_fp32, Decoded, RefRounding};
use crate::numerics::format::Format;
use num_bigint::{BigInt, BigUint, Sign};

/// The canonical FP32 NaN the reference returns.
pub const REF_NAN: u32 = 0x7FC0_0000;

/// How a block combines its products with `c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefRule {
    /// NUMERICS.md steps 1-4: align to the largest exponent keeping `23 + neab` fraction bits
    /// (truncating), sum exactly, normalise once, truncate to `out_frac_bits` fraction bits.
    BlockFma,
    /// Blackwell FP8 (inferred from B200 measurements): `RNE32(c + RZ32(exact product sum))`.
    RzSumThenRne,
}

/// The parameters of one preset for one input kind, from NUMERICS.md's presets table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefParams {
    /// Products per block `n`.
    pub n: usize,
    /// Extra alignment bits beyond FP32's 23 (may be negative).
    pub neab: i32,
    /// Floor of the alignment exponent (FP32 output).
    pub floor: i32,
    /// Fraction bits kept in each block result (23, or 13 for Hopper FP8).
    pub out_frac_bits: u32,
    /// The block rule.
    pub rule: RefRule,
}

/// NUMERICS.md's presets table (FP32 output): `preset` is `volta`, `ampere`, `ada`, `hopper`
/// or `blackwell`; `fmt_a`/`fmt_b` are format names. FP8 means both operands E4M3 or E5M2
/// (mixed allowed); FP16, BF16 and TF32 need both operands of that format. `None` for a pair
/// the GPU lacks.
pub fn ref_params(preset: &str, fmt_a: &str, fmt_b: &str) -> Option<RefParams> {
    let fp8 = |f: &str| f == "e4m3" || f == "e5m2";
    let kind = if fp8(fmt_a) && fp8(fmt_b) {
        "fp8"
    } else if fmt_a == fmt_b && (fmt_a == "fp16" || fmt_a == "bf16" || fmt_a == "tf32") {
        fmt_a
    } else {
        return None;
    };
    let floor = match preset {
        "volta" => -1024,
        "ampere" | "ada" => -132,
        "hopper" | "blackwell" => -133,
        _ => return None,
    };
    let fma = |n, neab, out_frac_bits| RefParams {
        n,
        neab,
        floor,
        out_frac_bits,
        rule: RefRule::BlockFma,
    };
    match (preset, kind) {
        ("volta", "fp16") => Some(fma(4, 0, 23)),
        ("ampere" | "ada", "fp16" | "bf16") => Some(fma(8, 1, 23)),
        ("ampere" | "ada", "tf32") => Some(fma(4, 1, 23)),
        ("ada", "fp8") => Some(fma(16, -10, 13)),
        ("hopper" | "blackwell", "fp16" | "bf16") => Some(fma(16, 2, 23)),
        ("hopper" | "blackwell", "tf32") => Some(fma(4, 2, 23)),
        ("hopper", "fp8") => Some(fma(32, -10, 13)),
        ("blackwell", "fp8") => Some(RefParams {
            rule: RefRule::RzSumThenRne,
            ..fma(32, 2, 23)
        }),
        _ => None,
    }
}

/// The minimum (normal) exponent of an input format, by name: a subnormal input counts with
/// this exponent (step 1).
fn min_exp(name: &str) -> i64 {
    match name {
        "e4m3" => -6,
        "e5m2" | "fp16" => -14,
        _ => -126, // bf16, tf32, fp32
    }
}

/// `floor(log2 |v|)` of a finite nonzero `f64` that is normal in `f64` (every value of the
/// five formats is).
fn log2_floor(v: f64) -> i64 {
    ((v.to_bits() >> 52) & 0x7FF) as i64 - 1023
}

/// `|v| = mag * 2^exp` for a finite nonzero `f64` normal in `f64`.
fn split(v: f64) -> (BigUint, i64) {
    let b = v.to_bits();
    let e = ((b >> 52) & 0x7FF) as i64;
    (
        BigUint::from((b & ((1u64 << 52) - 1)) | (1u64 << 52)),
        e - 1075,
    )
}

/// `trunc(|v| / 2^lsb)` as a signed big integer (sign of `v`).
fn truncate_to_grid(v: f64, lsb: i64) -> BigInt {
    let (mag, e) = split(v);
    let q = if e >= lsb {
        mag << (e - lsb) as usize
    } else {
        mag >> (lsb - e) as usize
    };
    BigInt::from_biguint(if v < 0.0 { Sign::Minus } else { Sign::Plus }, q)
}

fn to_f64(d: Decoded) -> f64 {
    match d {
        Decoded::Nan => f64::NAN,
        Decoded::Inf(true) => f64::NEG_INFINITY,
        Decoded::Inf(false) => f64::INFINITY,
        Decoded::Finite(v) => v,
    }
}

/// Step 6: the special result of a block, if any (NaN, or a signed infinity).
fn special(products: &[f64], c: f64) -> Option<u32> {
    let mut pinf = false;
    let mut ninf = false;
    for &v in products.iter().chain(std::iter::once(&c)) {
        if v.is_nan() {
            return Some(REF_NAN);
        }
        if v.is_infinite() {
            if v > 0.0 {
                pinf = true
            } else {
                ninf = true
            }
        }
    }
    match (pinf, ninf) {
        (true, true) => Some(REF_NAN),
        (true, false) => Some(0x7F80_0000),
        (false, true) => Some(0xFF80_0000),
        _ => None,
    }
}

/// Normalises `sum * 2^lsb` and truncates it to `frac_bits` fraction bits (and to the FP32
/// subnormal grid), giving an FP32 encoding; overflow gives the signed infinity.
fn truncate_pack(sum: &BigInt, lsb: i64, frac_bits: u32) -> u32 {
    let (sign, mag) = sum.clone().into_parts();
    let sbit = if sign == Sign::Minus {
        0x8000_0000u32
    } else {
        0
    };
    if mag.bits() == 0 {
        return 0;
    }
    let top = lsb + mag.bits() as i64 - 1;
    // The result's ulp: frac_bits below the leading one, never finer than 2^-149.
    let ulp = (top - frac_bits as i64).max(-149);
    let q = if lsb >= ulp {
        mag << (lsb - ulp) as usize
    } else {
        mag >> (ulp - lsb) as usize
    };
    if q.bits() == 0 {
        return sbit;
    }
    // q * 2^ulp, truncated. Re-express on FP32's grid (23 fraction bits).
    let qtop = ulp + q.bits() as i64 - 1;
    if qtop > 127 {
        return sbit | 0x7F80_0000;
    }
    let e32 = qtop.max(-126);
    let ulp32 = e32 - 23;
    let m = (q << (ulp - ulp32) as usize)
        .iter_u64_digits()
        .next()
        .unwrap_or(0);
    if qtop < -126 {
        return sbit | m as u32; // subnormal
    }
    sbit | (((e32 + 127) as u32) << 23) | (m as u32 & 0x7F_FFFF)
}

/// One block of the block FMA (NUMERICS.md steps 1-4 and 6): at most `p.n` products.
fn block_fma(p: &RefParams, fa: Format, fb: Format, a: &[u64], b: &[u64], c: u32) -> u32 {
    let av: Vec<f64> = a.iter().map(|&x| to_f64(decode(fa, x))).collect();
    let bv: Vec<f64> = b.iter().map(|&x| to_f64(decode(fb, x))).collect();
    let products: Vec<f64> = av.iter().zip(&bv).map(|(x, y)| x * y).collect();
    let cf = f32::from_bits(c) as f64;
    if let Some(s) = special(&products, cf) {
        return s;
    }
    // Step 2: every nonzero term with its exponent (product: ea + eb, each at least the
    // format's minimum exponent; c: its FP32 exponent, at least -126).
    let mut terms: Vec<(f64, i64)> = Vec::new();
    for ((&x, &y), &prod) in av.iter().zip(&bv).zip(&products) {
        if prod != 0.0 {
            let e = log2_floor(x).max(min_exp(fa.name)) + log2_floor(y).max(min_exp(fb.name));
            terms.push((prod, e));
        }
    }
    if cf != 0.0 {
        terms.push((cf, log2_floor(cf).max(-126)));
    }
    let Some(max_e) = terms.iter().map(|t| t.1).max() else {
        return 0;
    };
    let max_e = max_e.max(p.floor as i64);
    let lsb = max_e - 23 - p.neab as i64;
    // Step 3: exact sum of the truncated terms.
    let sum: BigInt = terms.iter().map(|&(v, _)| truncate_to_grid(v, lsb)).sum();
    // Step 4: normalise once, truncate.
    truncate_pack(&sum, lsb, p.out_frac_bits)
}

/// One Blackwell FP8 block: `RNE32(c + RZ32(exact sum of the products))`, specials first.
fn block_rz_then_rne(fa: Format, fb: Format, a: &[u64], b: &[u64], c: u32) -> u32 {
    let products: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| to_f64(decode(fa, x)) * to_f64(decode(fb, y)))
        .collect();
    let cf = f32::from_bits(c) as f64;
    if let Some(s) = special(&products, cf) {
        return s;
    }
    let s = round_fp32(&exact_of_finite(&products), RefRounding::TowardZero);
    let sf = f32::from_bits(s) as f64;
    round_fp32(&exact_of_finite(&[cf, sf]), RefRounding::NearestEven)
}

/// The `nvidia` reference dot product: `c + sum a_k * b_k` in blocks of `p.n` (step 5: each
/// block's FP32 result is the next block's `c`; K = 0 returns `c`). `a` and `b` hold bit
/// patterns of `fmt_a` and `fmt_b`.
pub fn nvidia_ref_dot(
    p: &RefParams,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
) -> u32 {
    let n = p.n.max(1);
    let mut acc = c;
    for (ca, cb) in a.chunks(n).zip(b.chunks(n)) {
        acc = match p.rule {
            RefRule::BlockFma => block_fma(p, fmt_a, fmt_b, ca, cb, acc),
            RefRule::RzSumThenRne => block_rz_then_rne(fmt_a, fmt_b, ca, cb, acc),
        };
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::format::FP16;

    fn h(v: f64) -> u64 {
        half::f16::from_f64(v).to_bits() as u64
    }

    #[test]
    fn table() {
        let v = ref_params("volta", "fp16", "fp16").map(|p| (p.n, p.neab));
        assert_eq!(v, Some((4, 0)));
        assert_eq!(ref_params("volta", "bf16", "bf16"), None);
        assert_eq!(ref_params("ampere", "e4m3", "e4m3"), None);
        assert_eq!(
            ref_params("hopper", "e4m3", "e5m2").map(|p| p.out_frac_bits),
            Some(13)
        );
        assert_eq!(ref_params("hopper", "fp16", "bf16"), None);
    }

    #[test]
    fn one_extra_bit_probe() {
        // a0 = b0 = 1, c = -(1 - 2^-24): volta -> 2^-23, ampere -> 2^-24.
        let c = (-(1.0f32 - 2f32.powi(-24))).to_bits();
        let a = [h(1.0), 0, 0, 0];
        let b = [h(1.0), 0, 0, 0];
        let volta = ref_params("volta", "fp16", "fp16").unwrap_or(RefParams {
            n: 0,
            neab: 0,
            floor: 0,
            out_frac_bits: 0,
            rule: RefRule::BlockFma,
        });
        assert_eq!(
            nvidia_ref_dot(&volta, FP16, FP16, &a, &b, c),
            2f32.powi(-23).to_bits()
        );
    }
}
