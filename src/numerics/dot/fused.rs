//! The `fused` (and `exact`) mode: `c <- RNE32(c + exact sum of the products)`, one rounding.
//! Stages: align (place each term in the wide fixed-point register), add (exact wide sum and
//! leading-one detection), normalise-round (the shared [`round_pack`]). The `_rm` entry
//! points round in any IEEE direction ([`RoundingMode`]); the plain ones to nearest even.

use super::stage::{stage_special_acc, MultiplyStage, StepRecord};
use super::wide::{WideAcc, WIDE_LSB_EXP};
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::{Class, Format, FP32};
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
    /// True if every term (c and each valid product) is a positive zero: then an exact zero
    /// sum is `+0` in every rounding direction (see [`FusedAlign::zero_sign_rm`]).
    pub all_pos_zero: bool,
}

impl<const W: usize> FusedAlign<W> {
    /// Sign of an exact zero sum rounded in direction `rm`: the common sign when every term
    /// is a zero of one sign, else (cancellation, or zeros of both signs) `-0` only toward
    /// negative (IEEE 754 section 6.3, extended to many terms).
    pub const fn zero_sign_rm(&self, rm: RoundingMode) -> bool {
        if self.zero_sign {
            true
        } else if self.all_pos_zero {
            false
        } else {
            matches!(rm, RoundingMode::Down)
        }
    }
}

/// Aligns the FP32 `c` and the finite products for an exact sum (no bit is dropped).
pub fn stage_align<const W: usize>(m: &MultiplyStage<W>, c: u32) -> FusedAlign<W> {
    stage_align_acc(m, c, FP32)
}

/// [`stage_align`] for an accumulator `c` in format `acc` (FP32 or FP16).
pub fn stage_align_acc<const W: usize>(m: &MultiplyStage<W>, c: u32, acc: Format) -> FusedAlign<W> {
    let cu = unpack(acc, c as u64);
    let mut max_exp = i32::MIN;
    let mut align_shift = [0u32; W];
    let mut all_neg_zero = cu.class == Class::Zero && cu.sign;
    let mut all_pos_zero = cu.class == Class::Zero && !cu.sign;
    let mut c_shift = 0;
    if cu.sig != 0 {
        c_shift = (cu.lsb_exp() - WIDE_LSB_EXP) as u32;
        max_exp = cu.lsb_exp() + 63 - cu.sig.leading_zeros() as i32;
        all_neg_zero = false;
        all_pos_zero = false;
    }
    for (k, p) in m.valid().iter().enumerate() {
        if p.class == ProductClass::Finite {
            align_shift[k] = (p.lsb_exp() - WIDE_LSB_EXP) as u32;
            max_exp = max_exp.max(p.lsb_exp() + 63 - p.sig.leading_zeros() as i32);
            all_neg_zero = false;
            all_pos_zero = false;
        } else if p.sign {
            all_pos_zero = false;
        } else {
            all_neg_zero = false;
        }
    }
    FusedAlign {
        max_exp,
        align_shift,
        c_shift,
        zero_sign: all_neg_zero,
        all_pos_zero,
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

/// Sums the aligned terms exactly in the wide register (zero sign for round to nearest).
pub fn stage_add<const W: usize>(m: &MultiplyStage<W>, al: &FusedAlign<W>, c: u32) -> FusedSum {
    stage_add_rm(m, al, c, RoundingMode::NearestEven)
}

/// [`stage_add`] with the sign of an exact zero sum chosen for rounding direction `rm`.
pub fn stage_add_rm<const W: usize>(
    m: &MultiplyStage<W>,
    al: &FusedAlign<W>,
    c: u32,
    rm: RoundingMode,
) -> FusedSum {
    stage_add_acc(m, al, c, rm, FP32)
}

/// [`stage_add_rm`] for an accumulator `c` in format `acc` (FP32 or FP16).
pub fn stage_add_acc<const W: usize>(
    m: &MultiplyStage<W>,
    al: &FusedAlign<W>,
    c: u32,
    rm: RoundingMode,
    acc: Format,
) -> FusedSum {
    let mut wide = WideAcc::new();
    let cu = unpack(acc, c as u64);
    if cu.sig != 0 {
        wide.add(cu.sign, cu.sig, WIDE_LSB_EXP + al.c_shift as i32);
    }
    for (k, p) in m.valid().iter().enumerate() {
        if p.class == ProductClass::Finite {
            wide.add(p.sign, p.sig, WIDE_LSB_EXP + al.align_shift[k] as i32);
        }
    }
    let (sum, wide_lzc) = wide.to_unrounded(al.zero_sign_rm(rm));
    FusedSum { sum, wide_lzc }
}

/// Normalises and rounds the exact sum to FP32 (round to nearest even).
pub fn stage_normalize_round(s: &FusedSum) -> Rounded {
    stage_normalize_round_rm(s, RoundingMode::NearestEven)
}

/// Normalises and rounds the exact sum to FP32 in direction `rm`.
pub fn stage_normalize_round_rm(s: &FusedSum, rm: RoundingMode) -> Rounded {
    stage_normalize_round_acc(s, rm, FP32)
}

/// Normalises and rounds the exact sum to the accumulator format `acc` in direction `rm`.
pub fn stage_normalize_round_acc(s: &FusedSum, rm: RoundingMode, acc: Format) -> Rounded {
    round_pack(acc, s.sum, rm, Overflow::Ieee)
}

/// The whole `fused` step.
pub fn step<const W: usize>(m: &MultiplyStage<W>, c: u32) -> StepRecord {
    step_rm(m, c, RoundingMode::NearestEven)
}

/// The whole `fused` step, rounded in direction `rm`.
pub fn step_rm<const W: usize>(m: &MultiplyStage<W>, c: u32, rm: RoundingMode) -> StepRecord {
    step_acc(m, c, rm, FP32)
}

/// The whole `fused` step into the accumulator format `acc` (FP32 or FP16), rounded in
/// direction `rm`.
pub fn step_acc<const W: usize>(
    m: &MultiplyStage<W>,
    c: u32,
    rm: RoundingMode,
    acc: Format,
) -> StepRecord {
    let sp = stage_special_acc(m, c, acc);
    if let Some(bits) = sp.result {
        return StepRecord::special(bits, sp.flags);
    }
    let al = stage_align_acc(m, c, acc);
    let s = stage_add_acc(m, &al, c, rm, acc);
    let r = stage_normalize_round_acc(&s, rm, acc);
    StepRecord {
        bits: r.bits as u32,
        flags: r.flags | sp.flags,
        special: false,
        max_exp: al.max_exp,
        align_shift: al.align_shift.first().map_or(0, |&s| s as i32),
        sticky: s.sum.sticky,
        lzc: s.wide_lzc,
        round: r.trace,
    }
}

/// The `exact` reference over any number of products: `RNE32(c + sum of a_k * b_k)` with one
/// rounding (used by [`super::dot`] for `AccMode::Exact`).
pub fn exact_all(fmt_a: Format, fmt_b: Format, a: &[u64], b: &[u64], c: u32) -> StepRecord {
    exact_all_rm(fmt_a, fmt_b, a, b, c, RoundingMode::NearestEven)
}

/// [`exact_all`] with the one rounding in direction `rm`.
pub fn exact_all_rm(
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    rm: RoundingMode,
) -> StepRecord {
    exact_all_acc(fmt_a, fmt_b, a, b, c, rm, FP32)
}

/// [`exact_all_rm`] into the accumulator format `acc` (FP32 or FP16): `c` and the result are
/// `acc` bit patterns, and the one rounding is to `acc`.
pub fn exact_all_acc(
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    rm: RoundingMode,
    acc: Format,
) -> StepRecord {
    use super::stage::stage_multiply;
    // Specials over all K at once (32 lanes of multipliers at a time): any NaN gives NaN;
    // +Inf with -Inf anywhere gives an invalid NaN unless a NaN decides the result.
    let cu = unpack(acc, c as u64);
    let mut flags = Flags::NONE;
    if acc.is_signaling_nan(c as u64) {
        flags.invalid = true;
    }
    let mut nan = cu.is_nan();
    let mut pos_inf = cu.class == Class::Infinite && !cu.sign;
    let mut neg_inf = cu.class == Class::Infinite && cu.sign;
    let mut wide = WideAcc::new();
    let mut all_neg_zero = cu.class == Class::Zero && cu.sign;
    let mut all_pos_zero = cu.class == Class::Zero && !cu.sign;
    if cu.class != Class::Infinite && !nan {
        wide.add(cu.sign, cu.sig, cu.lsb_exp());
    }
    if cu.sig != 0 {
        all_neg_zero = false;
        all_pos_zero = false;
    }
    for (ca, cb) in a.chunks(32).zip(b.chunks(32)) {
        let m = stage_multiply::<32>(fmt_a, fmt_b, ca, cb);
        flags |= m.flags;
        for p in m.valid() {
            match p.class {
                ProductClass::Finite => {
                    wide.add(p.sign, p.sig, p.lsb_exp());
                    all_neg_zero = false;
                    all_pos_zero = false;
                }
                ProductClass::Zero if p.sign => all_pos_zero = false,
                ProductClass::Zero => all_neg_zero = false,
                ProductClass::Nan => nan = true,
                ProductClass::Infinite if p.sign => neg_inf = true,
                ProductClass::Infinite => pos_inf = true,
            }
        }
    }
    if nan || pos_inf || neg_inf {
        let nan_bits = acc.canonical_nan();
        let bits = if nan {
            nan_bits
        } else if pos_inf && neg_inf {
            flags.invalid = true;
            nan_bits
        } else {
            acc.infinity(neg_inf).unwrap_or(nan_bits)
        };
        return StepRecord::special(bits as u32, flags);
    }
    let zero_sign = if all_neg_zero {
        true
    } else if all_pos_zero {
        false
    } else {
        matches!(rm, RoundingMode::Down)
    };
    let (sum, wide_lzc) = wide.to_unrounded(zero_sign);
    let r = round_pack(acc, sum, rm, Overflow::Ieee);
    StepRecord {
        bits: r.bits as u32,
        flags: r.flags | flags,
        special: false,
        max_exp: r.trace.norm_exp,
        align_shift: 0,
        sticky: sum.sticky,
        lzc: wide_lzc,
        round: r.trace,
    }
}
