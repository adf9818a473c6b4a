//! An independent reference for the `nvidia` accumulation mode: the block FMA of docs/numerics.md
//! (steps 1-6, the presets table, the Hopper FP8 13-bit cut), the Blackwell FP8 rule
//! `RNE32(c + RZ32(sum))`, and the FP16-output rules ("FP16 output": each block's exact
//! aligned sum rounded once to FP16; Hopper and Blackwell FP8 as two k16 half steps from zero
//! then one FP16 addition of C), written from those rules, not from `crate::numerics`.
//!
//! Everything here works on exact values: inputs are decoded by [`super::exact::decode`]
//! (host `f32`, the `half` crate, the OCP FP8 table), products are exact in `f64`, terms are
//! truncated onto the alignment grid and summed in big integers, and the block result is
//! normalised and truncated by this file's own code. Only a format's name is read from
//! [`Format`]; the block parameters come from this file's own table ([`ref_params`]).
//!
//! Conventions: NaN results are NVIDIA's canonical NaN `0x7FFFFFFF` (FP16 output: `0x7FFF`),
//! as an H200 returns them (docs/numerics.md, "Checked on an H200"); the other conventions are
//! those of the MATLAB models the measurements were taken against: an exactly zero aligned sum (also a block in
//! which no term takes part) gives `+0`; overflow of the truncated FP32 result gives the
//! signed infinity (FP16 output: round to nearest even, overflowing to the infinity).

use super::exact::{
    decode, exact_of_finite, round_fp16_flags, round_fp32, Decoded, ExactValue, RefRounding,
};
use crate::numerics::dot::Preset;
use crate::numerics::format::{Format, BF16, E4M3, E5M2, FP16, TF32};
use num_bigint::{BigInt, BigUint, Sign};

/// The canonical FP32 NaN the reference returns (NVIDIA's, measured on an H200).
pub const REF_NAN: u32 = 0x7FFF_FFFF;

/// How a block combines its products with `c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefRule {
    /// Steps 1-4 of docs/numerics.md, "The block-FMA rule": align to the largest exponent keeping
    /// `23 + neab` fraction bits (truncating), sum exactly, normalise once, truncate to
    /// `out_frac_bits` fraction bits.
    BlockFma,
    /// Blackwell FP8 (inferred from B200 measurements): `RNE32(c + RZ32(exact product sum))`.
    RzSumThenRne,
    /// FP8 through `mma.sync` as the H200 computes it (measured, docs/numerics.md "Checked on an
    /// H200"; also Hopper and Blackwell FP8 into FP16, whose measured rows it reproduces), per
    /// block of 32 into either accumulator: `s1 = block(products with k mod 4 in {0, 1})` from
    /// zero, `s2 = block(s1 and the products with k mod 4 in {2, 3})` (each block with its own
    /// specials, truncated to FP32 or rounded to nearest even to FP16), then
    /// `d = RNE(s2 + c)` in the accumulator, IEEE specials included.
    K16Steps,
    /// AMD CDNA1 (docs/numerics.md, "AMD CDNA matrix cores"): per block, the exact sum of the
    /// products and `c` rounded once to nearest even (an exact zero is `+0`).
    AmdExact,
    /// AMD CDNA2: inputs below their format's smallest normal read as zero, products and `c`
    /// below FP32's smallest normal read as `+0`, the block (padded with zeros to `n`) summed
    /// as a binary tree of FP32 additions rounded to nearest even, then `c` added; every
    /// addition's result below FP32's smallest normal becomes the zero of its sign.
    AmdPairwise,
    /// AMD CDNA3: the products truncated onto the grid of their largest exponent with
    /// `23 + neab` fraction bits and summed; that sum and `c` brought to the larger exponent
    /// (the smaller rounded toward negative infinity, onto a grid 7 bits finer when `c` is the
    /// larger), added, rounded once to nearest even.
    AmdLate,
}

/// The parameters of one preset for one input kind, from the presets table of docs/numerics.md.
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
    /// FP16 output: `c` and each block result are FP16 patterns, each block's exact aligned
    /// sum is rounded once to FP16 with round to nearest even (docs/numerics.md, "FP16 output").
    pub fp16_out: bool,
}

/// The kinds of input the presets table distinguishes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Input {
    Fp8,
    Fp16,
    Bf16,
    Tf32,
}

/// The presets table of docs/numerics.md (FP32 output), restated here apart from the datapath's
/// (`Preset::params`), keyed by the preset and the format rows. FP8 means both operands E4M3
/// or E5M2 (mixed allowed); FP16, BF16 and TF32 need both operands of that format. `None` for
/// a pair the GPU lacks.
pub fn ref_params(preset: Preset, fmt_a: Format, fmt_b: Format) -> Option<RefParams> {
    let fp8 = |f: Format| f == E4M3 || f == E5M2;
    let kind = if fp8(fmt_a) && fp8(fmt_b) {
        Input::Fp8
    } else if fmt_a != fmt_b {
        return None;
    } else if fmt_a == FP16 {
        Input::Fp16
    } else if fmt_a == BF16 {
        Input::Bf16
    } else if fmt_a == TF32 {
        Input::Tf32
    } else {
        return None;
    };
    use Preset::{Ada, Ampere, Blackwell, Cdna1, Cdna2, Cdna3, Hopper, Turing, Volta, H200};
    let floor = match preset {
        Volta | Turing | Cdna1 | Cdna2 | Cdna3 => -1024,
        Ampere | Ada => -132,
        Hopper | Blackwell | H200 => -133,
    };
    let fma = |n, neab, out_frac_bits| RefParams {
        n,
        neab,
        floor,
        out_frac_bits,
        rule: RefRule::BlockFma,
        fp16_out: false,
    };
    let amd = |n, neab, rule| RefParams {
        rule,
        ..fma(n, neab, 23)
    };
    match (preset, kind) {
        (Volta | Turing, Input::Fp16) => Some(fma(4, 0, 23)),
        (Ampere | Ada, Input::Fp16 | Input::Bf16) => Some(fma(8, 1, 23)),
        (Ampere | Ada, Input::Tf32) => Some(fma(4, 1, 23)),
        (Ada, Input::Fp8) => Some(fma(16, -10, 13)),
        (Hopper | Blackwell | H200, Input::Fp16 | Input::Bf16) => Some(fma(16, 2, 23)),
        (Hopper | Blackwell | H200, Input::Tf32) => Some(fma(8, 2, 23)),
        (H200, Input::Fp8) => Some(RefParams {
            rule: RefRule::K16Steps,
            ..fma(32, 2, 23)
        }),
        (Hopper, Input::Fp8) => Some(fma(32, -10, 13)),
        (Blackwell, Input::Fp8) => Some(RefParams {
            rule: RefRule::RzSumThenRne,
            ..fma(32, 2, 23)
        }),
        // The AMD rows: MI100MC.m (fma 4 for FP16, 2 for BF16), MI210MC.m (fma 4),
        // MI300MC.m (fma 8, neab 1; TF32 fma 4).
        (Cdna1, Input::Fp16) => Some(amd(4, 0, RefRule::AmdExact)),
        (Cdna1, Input::Bf16) => Some(amd(2, 0, RefRule::AmdExact)),
        (Cdna2, Input::Fp16 | Input::Bf16) => Some(amd(4, 0, RefRule::AmdPairwise)),
        (Cdna3, Input::Fp16 | Input::Bf16) => Some(amd(8, 1, RefRule::AmdLate)),
        (Cdna3, Input::Tf32) => Some(amd(4, 1, RefRule::AmdLate)),
        _ => None,
    }
}

/// The FP16-output rules of docs/numerics.md ("FP16 output"), restated: FP16 inputs on every GPU
/// keep their FP32-output block (`n`, `neab`, floor) and round each block to FP16; Ada FP8 keeps
/// its blocks of 16 with the 13-bit alignment; Hopper and Blackwell FP8 take the half steps with
/// the FP16 preset's alignment (two extra bits). BF16 and TF32 have no FP16 output (`None`). With
/// `acc` FP32 this is [`ref_params`].
pub fn ref_params_acc(
    preset: Preset,
    fmt_a: Format,
    fmt_b: Format,
    acc: Format,
) -> Option<RefParams> {
    let fp32 = ref_params(preset, fmt_a, fmt_b)?;
    if acc == crate::numerics::format::FP32 {
        return Some(fp32);
    }
    if acc != FP16 || preset.is_amd() {
        // The AMD models return binary32 only.
        return None;
    }
    let fp8 = |f: Format| f == E4M3 || f == E5M2;
    let fp16 = RefParams {
        out_frac_bits: 10,
        fp16_out: true,
        ..fp32
    };
    // FP16 in, FP16 out: the alignment exponent's floor of the published models
    // (`min_exp_limit` for FP16 output in models/V100TC.m, A100TC.m, AdaTC.m, H100TC.m,
    // B200TC.m of north-numerical-computing/MATLAB-tensor-core).
    let fp16_floor = match preset {
        Preset::Cdna1 | Preset::Cdna2 | Preset::Cdna3 => return None,
        Preset::Volta | Preset::Turing => -19,
        Preset::Ampere | Preset::Ada => -20,
        Preset::Hopper | Preset::Blackwell | Preset::H200 => -21,
    };
    match preset {
        _ if fmt_a == FP16 && fmt_b == FP16 => Some(RefParams {
            floor: fp16_floor,
            ..fp16
        }),
        Preset::Ada | Preset::H200 if fp8(fmt_a) && fp8(fmt_b) => Some(fp16),
        Preset::Hopper | Preset::Blackwell if fp8(fmt_a) && fp8(fmt_b) => Some(RefParams {
            n: 32,
            neab: 2,
            rule: RefRule::K16Steps,
            ..fp16
        }),
        _ => None,
    }
}

/// The minimum (normal) exponent of an input format (the formats table of docs/numerics.md,
/// restated): a subnormal input counts with this exponent (step 1).
fn min_exp(fmt: Format) -> i64 {
    if fmt == E4M3 {
        -6
    } else if fmt == E5M2 || fmt == FP16 {
        -14
    } else {
        -126 // bf16, tf32, fp32
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

/// An FP32 special result as the FP16 pattern of the same class (NaN `0x7FFF`, `+-Inf`).
fn special16(s: u32) -> u32 {
    match s {
        0x7F80_0000 => 0x7C00,
        0xFF80_0000 => 0xFC00,
        _ => 0x7FFF,
    }
}

/// The accumulator value `c` as an `f64` and the least exponent it counts with in the
/// alignment: an FP32 subnormal counts with FP32's minimum exponent -126; an FP16 `c` is read
/// as the FP32 value it equals, so every FP16 value (subnormals included) counts at its own
/// exponent (docs/numerics.md, "FP16 output").
fn acc_value(p: &RefParams, c: u32) -> (f64, i64) {
    if p.fp16_out {
        (half::f16::from_bits(c as u16).to_f64(), -126)
    } else {
        (f32::from_bits(c) as f64, -126)
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

/// One block of the block FMA (docs/numerics.md, "The block-FMA rule", steps 1-4 and 6): at
/// most `p.n` products.
fn block_fma(p: &RefParams, fa: Format, fb: Format, a: &[u64], b: &[u64], c: u32) -> u32 {
    let av: Vec<f64> = a.iter().map(|&x| to_f64(decode(fa, x))).collect();
    let bv: Vec<f64> = b.iter().map(|&x| to_f64(decode(fb, x))).collect();
    let products: Vec<f64> = av.iter().zip(&bv).map(|(x, y)| x * y).collect();
    let (cf, c_min_exp) = acc_value(p, c);
    if let Some(s) = special(&products, cf) {
        return if p.fp16_out { special16(s) } else { s };
    }
    // Step 2: every nonzero term with its exponent (product: ea + eb, each at least the
    // format's minimum exponent; c: its own exponent, at least the accumulator's minimum).
    let mut terms: Vec<(f64, i64)> = Vec::new();
    for ((&x, &y), &prod) in av.iter().zip(&bv).zip(&products) {
        if prod != 0.0 {
            let e = log2_floor(x).max(min_exp(fa)) + log2_floor(y).max(min_exp(fb));
            terms.push((prod, e));
        }
    }
    if cf != 0.0 {
        terms.push((cf, log2_floor(cf).max(c_min_exp)));
    }
    let Some(max_e) = terms.iter().map(|t| t.1).max() else {
        return 0;
    };
    let max_e = max_e.max(p.floor as i64);
    let lsb = max_e - 23 - p.neab as i64;
    // Step 3: exact sum of the truncated terms.
    let sum: BigInt = terms.iter().map(|&(v, _)| truncate_to_grid(v, lsb)).sum();
    // Step 4: normalise once, truncate (FP32 output) or round once to FP16 (FP16 output).
    if p.fp16_out {
        let (sign, mag) = sum.into_parts();
        if mag.bits() == 0 {
            return 0;
        }
        let v = ExactValue::Finite(sign == Sign::Minus, mag, lsb);
        return u32::from(round_fp16_flags(&v, RefRounding::NearestEven).0);
    }
    truncate_pack(&sum, lsb, p.out_frac_bits)
}

/// One H200 FP8 block ([`RefRule::K16Steps`]): two truncating k16 blocks (the products with
/// `k mod 4` in `{0, 1}` from zero, then those in `{2, 3}` onto the first's result), each
/// deciding its own specials, then `c` added once with round to nearest even in the
/// accumulator (specials first: `+Inf` and `-Inf` give the NaN).
fn k16_steps(p: &RefParams, fa: Format, fb: Format, a: &[u64], b: &[u64], c: u32) -> u32 {
    let pick = |first: usize| -> (Vec<u64>, Vec<u64>) {
        (0..a.len().min(b.len()))
            .filter(|k| k % 4 == first || k % 4 == first + 1)
            .map(|k| (a[k], b[k]))
            .unzip()
    };
    let (a1, b1) = pick(0);
    let (a2, b2) = pick(2);
    let s1 = block_fma(p, fa, fb, &a1, &b1, 0);
    let s2 = block_fma(p, fa, fb, &a2, &b2, s1);
    let (s2f, _) = acc_value(p, s2);
    let (cf, _) = acc_value(p, c);
    if let Some(s) = special(&[s2f], cf) {
        return if p.fp16_out { special16(s) } else { s };
    }
    let sum = exact_of_finite(&[cf, s2f]);
    if p.fp16_out {
        u32::from(round_fp16_flags(&sum, RefRounding::NearestEven).0)
    } else {
        round_fp32(&sum, RefRounding::NearestEven)
    }
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
/// block's result is the next block's `c`; K = 0 returns `c`). `a` and `b` hold bit patterns
/// of `fmt_a` and `fmt_b`; `c` and the result are FP32 patterns, or FP16 ones with
/// `p.fp16_out`.
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
            RefRule::K16Steps => k16_steps(p, fmt_a, fmt_b, ca, cb, acc),
            RefRule::AmdExact | RefRule::AmdPairwise | RefRule::AmdLate => {
                amd_block(p, fmt_a, fmt_b, ca, cb, acc)
            }
        };
    }
    acc
}

/// The FP32 NaN the AMD rules return: binary32's default quiet NaN (the models return MATLAB's
/// `NaN`).
pub const REF_AMD_NAN: u32 = 0x7FC0_0000;

/// `v` (a multiple of `2^e` for `|v| = mag * 2^e`) moved onto the grid `2^lsb` rounding toward
/// negative infinity, as a signed count of `2^lsb`.
fn floor_to_grid(neg: bool, mag: &BigUint, e: i64, lsb: i64) -> BigInt {
    let q = if e >= lsb {
        mag << (e - lsb) as usize
    } else {
        let q = mag >> (lsb - e) as usize;
        let exact = (&q << (lsb - e) as usize) == *mag;
        if neg && !exact {
            q + 1u8
        } else {
            q
        }
    };
    BigInt::from_biguint(if neg { Sign::Minus } else { Sign::Plus }, q)
}

/// Rounds `sum * 2^lsb` once to FP32, to nearest even; an exact zero is `+0`.
fn rne32_or_plus_zero(sum: BigInt, lsb: i64) -> u32 {
    let (sign, mag) = sum.into_parts();
    if mag.bits() == 0 {
        return 0;
    }
    round_fp32(
        &ExactValue::Finite(sign == Sign::Minus, mag, lsb),
        RefRounding::NearestEven,
    )
}

/// One FP32 addition of the CDNA2 tree: round to nearest even (IEEE zero signs), then a
/// result below `2^-126` in magnitude becomes the zero of its sign.
fn add_flush(x: f64, y: f64) -> f64 {
    let r = f32::from_bits(round_fp32(
        &exact_of_finite(&[x, y]),
        RefRounding::NearestEven,
    )) as f64;
    if r.abs() < 2f64.powi(-126) {
        0.0f64.copysign(r)
    } else {
        r
    }
}

/// The CDNA2 pair-wise tree over `t` (a power of two long).
fn pair_tree(t: &[f64]) -> f64 {
    if t.len() == 1 {
        return t[0];
    }
    let (lo, hi) = t.split_at(t.len() / 2);
    add_flush(pair_tree(lo), pair_tree(hi))
}

/// One block of an AMD rule (docs/numerics.md, "AMD CDNA matrix cores"): at most `p.n`
/// products and the FP32 `c`.
fn amd_block(p: &RefParams, fa: Format, fb: Format, a: &[u64], b: &[u64], c: u32) -> u32 {
    let mut av: Vec<f64> = a.iter().map(|&x| to_f64(decode(fa, x))).collect();
    let mut bv: Vec<f64> = b.iter().map(|&x| to_f64(decode(fb, x))).collect();
    let products: Vec<f64> = av.iter().zip(&bv).map(|(x, y)| x * y).collect();
    let cf = f32::from_bits(c) as f64;
    if let Some(s) = special(&products, cf) {
        return if s == REF_NAN { REF_AMD_NAN } else { s };
    }
    // A product of 2^128 or more: the infinity of its sign, NaN with both signs.
    let big = 2f64.powi(128);
    let (pos, neg) = (
        products.iter().any(|&v| v >= big),
        products.iter().any(|&v| v <= -big),
    );
    if pos || neg {
        return match (pos, neg) {
            (true, true) => REF_AMD_NAN,
            (true, false) => 0x7F80_0000,
            _ => 0xFF80_0000,
        };
    }
    match p.rule {
        RefRule::AmdExact => {
            let mut terms = products.clone();
            terms.push(cf);
            let ExactValue::Finite(neg, mag, e) = exact_of_finite(&terms) else {
                unreachable!("finite terms")
            };
            rne32_or_plus_zero(
                BigInt::from_biguint(if neg { Sign::Minus } else { Sign::Plus }, mag),
                e,
            )
        }
        RefRule::AmdPairwise => {
            let tiny_in = |v: f64, f: Format| v.abs() < 2f64.powi(min_exp(f) as i32);
            for (x, y) in av.iter_mut().zip(bv.iter_mut()) {
                if tiny_in(*x, fa) || tiny_in(*y, fb) {
                    *x = 0.0;
                    *y = 0.0;
                }
            }
            let min_normal = 2f64.powi(-126);
            let mut t: Vec<f64> = av
                .iter()
                .zip(&bv)
                .map(|(x, y)| x * y)
                .map(|v| if v.abs() < min_normal { 0.0 } else { v })
                .collect();
            t.resize(p.n.max(t.len()).next_power_of_two(), 0.0);
            let c_in = if cf.abs() < min_normal { 0.0 } else { cf };
            (add_flush(c_in, pair_tree(&t)) as f32).to_bits()
        }
        _ => {
            // Step 1: the products alone, truncated onto the grid of their largest exponent.
            let mut terms: Vec<(f64, i64)> = Vec::new();
            for ((&x, &y), &v) in av.iter().zip(&bv).zip(&products) {
                if v != 0.0 {
                    let e = log2_floor(x).max(min_exp(fa)) + log2_floor(y).max(min_exp(fb));
                    terms.push((v, e));
                }
            }
            let Some(e_p) = terms.iter().map(|t| t.1).max() else {
                return if cf == 0.0 { 0 } else { c };
            };
            let frac = 23 + p.neab as i64;
            let p_lsb = e_p - frac;
            let psum: BigInt = terms.iter().map(|&(v, _)| truncate_to_grid(v, p_lsb)).sum();
            // Step 2: c's exponent (at least -126; a zero c counts at -126).
            let e_c = if cf == 0.0 {
                -126
            } else {
                log2_floor(cf).max(-126)
            };
            let (p_neg, p_mag) = {
                let (sg, m) = psum.into_parts();
                (sg == Sign::Minus, m)
            };
            let (c_neg, c_mag, c_e) = if cf == 0.0 {
                (false, BigUint::default(), 0)
            } else {
                let (m, e) = split(cf);
                (cf < 0.0, m, e)
            };
            let (sum, lsb) = if e_p < e_c {
                let lsb = e_c - frac - 7;
                let pv = floor_to_grid(p_neg, &p_mag, p_lsb, lsb);
                let cv = floor_to_grid(c_neg, &c_mag, c_e, lsb);
                (pv + cv, lsb)
            } else {
                let pv = BigInt::from_biguint(if p_neg { Sign::Minus } else { Sign::Plus }, p_mag);
                let cv = floor_to_grid(c_neg, &c_mag, c_e, p_lsb);
                (pv + cv, p_lsb)
            };
            rne32_or_plus_zero(sum, lsb)
        }
    }
}
