//! The `fused` (and `exact`) mode: `c <- RNE32(c + exact sum of the products)`, one rounding.
//! Stages: align (place each term in the wide fixed-point register), add (exact wide sum and
//! leading-one detection), normalise-round (the shared [`round_pack`]).

use super::step::{stage_special, MultiplyStage, StepResult};
use super::wide::{WideAcc, WIDE_LSB_EXP};
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::{Class, FP32};
use crate::numerics::multiply::ProductClass;
use crate::numerics::round::{round_pack, Overflow, Rounded, Unrounded};
use crate::numerics::unpack::unpack;

/// Output of the exact alignment stage: where each term lands in the wide register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FusedAlign<const W: usize> {
    /// Exponent of the largest term's leading one (`i32::MIN` if every term is zero).
    pub max_exp: i32,
    /// Per lane: left shift of the product's significand into the wide register (bit 0 of
    /// the register weighs `2^WIDE_LSB_EXP`); 0 for zero or masked lanes.
    pub align_shift: [u32; W],
    /// The same for `c`.
    pub c_shift: u32,
    /// Sign of an exact zero result: `-0` only if every term (c and each valid product) is
    /// a negative zero (IEEE, round to nearest).
    pub zero_sign: bool,
}

/// Aligns `c` and the finite products for an exact sum (no bit is dropped).
pub fn stage_align<const W: usize>(m: &MultiplyStage<W>, c: u32) -> FusedAlign<W> {
    let cu = unpack(FP32, c as u64);
    let mut max_exp = i32::MIN;
    let mut align_shift = [0u32; W];
    let mut all_neg_zero = cu.class == Class::Zero && cu.sign;
    let mut c_shift = 0;
    if cu.sig != 0 {
        c_shift = (cu.lsb_exp() - WIDE_LSB_EXP) as u32;
        max_exp = cu.lsb_exp() + 63 - cu.sig.leading_zeros() as i32;
        all_neg_zero = false;
    }
    for (k, p) in m.valid().iter().enumerate() {
        if p.class == ProductClass::Finite {
            align_shift[k] = (p.lsb_exp() - WIDE_LSB_EXP) as u32;
            max_exp = max_exp.max(p.lsb_exp() + 63 - p.sig.leading_zeros() as i32);
            all_neg_zero = false;
        } else if !p.sign {
            all_neg_zero = false;
        }
    }
    FusedAlign {
        max_exp,
        align_shift,
        c_shift,
        zero_sign: all_neg_zero,
    }
}

/// Output of the exact add stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FusedSum {
    /// The exact sum, windowed to 126 bits below its leading one plus a sticky bit.
    pub sum: Unrounded,
    /// Leading-zero count of the wide register.
    pub wide_lzc: u32,
}

/// Sums the aligned terms exactly in the wide register.
pub fn stage_add<const W: usize>(m: &MultiplyStage<W>, al: &FusedAlign<W>, c: u32) -> FusedSum {
    let mut acc = WideAcc::new();
    let cu = unpack(FP32, c as u64);
    if cu.sig != 0 {
        acc.add(cu.sign, cu.sig, WIDE_LSB_EXP + al.c_shift as i32);
    }
    for (k, p) in m.valid().iter().enumerate() {
        if p.class == ProductClass::Finite {
            acc.add(p.sign, p.sig, WIDE_LSB_EXP + al.align_shift[k] as i32);
        }
    }
    let (sum, wide_lzc) = acc.to_unrounded(al.zero_sign);
    FusedSum { sum, wide_lzc }
}

/// Normalises and rounds the exact sum to FP32 (round to nearest even).
pub fn stage_normalize_round(s: &FusedSum) -> Rounded {
    round_pack(FP32, s.sum, RoundingMode::NearestEven, Overflow::Ieee)
}

/// The whole `fused` step.
pub fn step<const W: usize>(m: &MultiplyStage<W>, c: u32) -> StepResult {
    let sp = stage_special(m, c);
    if let Some(bits) = sp.result {
        return StepResult::special(bits, sp.flags);
    }
    let al = stage_align(m, c);
    let s = stage_add(m, &al, c);
    let r = stage_normalize_round(&s);
    StepResult {
        bits: r.bits as u32,
        flags: r.flags | sp.flags,
        max_exp: al.max_exp,
        round: r.trace,
    }
}

/// The `exact` reference over any number of products: `RNE32(c + sum of a_k * b_k)` with one
/// rounding (used by [`super::dot`] for `AccMode::Exact`).
pub fn exact_all(
    fmt_a: crate::numerics::format::Format,
    fmt_b: crate::numerics::format::Format,
    a: &[u64],
    b: &[u64],
    c: u32,
) -> StepResult {
    use super::step::{stage_multiply, SpecialStage};
    // Specials over all K, 32 lanes at a time.
    let mut flags = Flags::NONE;
    let mut special: Option<SpecialStage> = None;
    let mut acc = WideAcc::new();
    let cu = unpack(FP32, c as u64);
    let mut all_neg_zero = cu.class == Class::Zero && cu.sign;
    acc.add(cu.sign, cu.sig, cu.lsb_exp());
    if cu.sig != 0 {
        all_neg_zero = false;
    }
    let (mut pos_inf, mut neg_inf, mut nan) = (false, false, false);
    for (ca, cb) in a.chunks(32).zip(b.chunks(32)) {
        let m = stage_multiply::<32>(fmt_a, fmt_b, ca, cb);
        let sp = stage_special(&m, c);
        flags |= sp.flags;
        if let Some(bits) = sp.result {
            nan |= bits == super::step::FP32_NAN;
            pos_inf |= bits == 0x7F80_0000;
            neg_inf |= bits == 0xFF80_0000;
            special = Some(sp);
        }
        for p in m.valid() {
            if p.class == ProductClass::Finite {
                acc.add(p.sign, p.sig, p.lsb_exp());
                all_neg_zero = false;
            } else if !p.sign {
                all_neg_zero = false;
            }
        }
    }
    if special.is_some() {
        let bits = if nan || (pos_inf && neg_inf) {
            if !nan {
                flags.invalid = true;
            }
            super::step::FP32_NAN
        } else if pos_inf {
            0x7F80_0000
        } else {
            0xFF80_0000
        };
        return StepResult::special(bits, flags);
    }
    let (sum, _) = acc.to_unrounded(all_neg_zero);
    let r = round_pack(FP32, sum, RoundingMode::NearestEven, Overflow::Ieee);
    StepResult {
        bits: r.bits as u32,
        flags: r.flags | flags,
        max_exp: r.trace.norm_exp,
        round: r.trace,
    }
}
