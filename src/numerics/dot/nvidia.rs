//! The `nvidia` mode: the block fused multiply-add of NVIDIA tensor cores (after Fasi et al.
//! 2021 and Khattak & Mikaitis 2025), with the Blackwell FP8 rule beside it.
//!
//! Stages of [`BlockRule::Truncating`]:
//! 1. multiply: exact products, significands unnormalised in `[1, 4)` with exponent
//!    `exp_sum = ea + eb` (a subnormal input contributes its format's minimum exponent);
//! 2. align ([`stage_align`]): `max_exp` = the largest `exp_sum` of the nonzero products and
//!    the exponent of a nonzero `c` (a subnormal FP32 `c` counts as -126, a subnormal FP16 `c`
//!    at its true exponent: [`unpack_block_c`]), raised to the preset's floor; every term is truncated (sign-magnitude, toward zero) to the grid
//!    `2^(max_exp - 23 - neab)`, no guard or sticky;
//! 3. add ([`stage_add`]): the aligned integers are summed exactly;
//! 4. normalise-round ([`stage_normalize_round`]): normalised once and truncated (RZ) to FP32,
//!    or to `out_frac_bits` fraction bits (the Hopper FP8 cut, 13), through the shared
//!    [`round_pack`].
//!
//! NaN results (a NaN term, `+Inf` with `-Inf`, or FP16 steps overflowing into opposite
//! infinities) are NVIDIA's canonical NaN, [`nvidia_nan`]: `0x7FFFFFFF` into FP32, `0x7FFF`
//! into FP16 (measured on an H200, docs/numerics.md "Checked on an H200").
//!
//! Zero results: an exactly zero aligned sum (including a block with no nonzero term) gives
//! `+0`, as in the reference MATLAB models; a nonzero sum that truncates to zero keeps its
//! sign. Overflow gives the signed infinity (as the MATLAB models do; RZ in IEEE would give
//! the largest finite value). Flags: `inexact` if alignment dropped a nonzero bit or the
//! final truncation did; `overflow`/`underflow` from the final rounding.

use super::cdna;
use super::mode::{BlockRule, NvidiaParams};
use super::stage::{
    align_term, stage_special_acc, stage_special_of, MultiplyStage, StepRecord, MAX_LANES,
    NO_PRODUCT,
};
use super::wide::WideAcc;
use crate::numerics::add::add;
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::{Class, Format, FP16, FP32};
use crate::numerics::multiply::{Product, ProductClass};
use crate::numerics::round::{round_pack, Overflow, Rounded, Unrounded};
use crate::numerics::unpack::{unpack, Unpacked};

/// Output of the block alignment stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockAlign<const W: usize> {
    /// The alignment exponent (largest term exponent, floored).
    pub max_exp: i32,
    /// Exponent of the aligned grid's LSB: `max_exp - 23 - neab`.
    pub lsb_exp: i32,
    /// Per lane: right shift from the product's LSB to the grid (negative: left shift).
    pub align_shift: [i32; W],
    /// The same for `c`.
    pub c_shift: i32,
    /// Per lane: the aligned, truncated, signed product.
    pub aligned: [i64; W],
    /// The aligned, truncated, signed `c`.
    pub c_aligned: i64,
    /// True if the alignment dropped a nonzero bit of some term.
    pub dropped: bool,
    /// True if at least one term (nonzero product or `c`) takes part.
    pub any_term: bool,
}

/// The accumulator `c` as the block FMA's FP32 datapath reads it: unpacked in `acc`, and an
/// FP16 `c` widened to FP32 on entry (exactly: a leading-zero count shifts a subnormal's
/// significand up to its hidden-bit place), so a subnormal FP16 `c` counts at its true
/// exponent (`0x0002`, 2^-23, at -23, not FP16's minimum -14). An FP32 subnormal keeps -126.
/// Source: the models of Khattak and Mikaitis read every `c` as an FP32 value
/// (north-numerical-computing/MATLAB-tensor-core, `models/tools/Generic_BFMA_TC.m`); no
/// measurement we hold separates the two readings (docs/numerics.md, "FP16 output").
#[inline(always)]
pub fn unpack_block_c(acc: Format, c: u32) -> Unpacked {
    let mut cu = unpack(acc, c as u64);
    if acc != FP32 && cu.class == Class::Subnormal {
        let msb = 63 - cu.sig.leading_zeros();
        let shift = cu.frac_bits - msb;
        cu.sig <<= shift;
        cu.exp -= shift as i32;
    }
    cu
}

/// Finds the alignment exponent and truncates every term (the FP32 `c` included) onto its
/// grid.
#[inline(always)]
pub fn stage_align<const W: usize>(
    params: &NvidiaParams,
    m: &MultiplyStage<W>,
    c: u32,
) -> BlockAlign<W> {
    stage_align_acc(params, m, c, FP32)
}

/// [`stage_align`] for an accumulator `c` in format `acc` (FP32 or FP16; a subnormal `c`
/// counts with `acc`'s minimum exponent).
pub fn stage_align_acc<const W: usize>(
    params: &NvidiaParams,
    m: &MultiplyStage<W>,
    c: u32,
    acc: Format,
) -> BlockAlign<W> {
    let cu = unpack_block_c(acc, c);
    let mut max_exp = i32::MIN;
    let mut any_term = false;
    if cu.sig != 0 {
        max_exp = cu.exp;
        any_term = true;
    }
    for p in m.valid() {
        if p.class == ProductClass::Finite {
            max_exp = max_exp.max(p.exp_sum);
            any_term = true;
        }
    }
    let max_exp = max_exp.max(params.exp_floor);
    let lsb_exp = max_exp - 23 - params.neab;
    let mut out = BlockAlign {
        max_exp,
        lsb_exp,
        align_shift: [0; W],
        c_shift: 0,
        aligned: [0; W],
        c_aligned: 0,
        dropped: false,
        any_term,
    };
    if cu.sig != 0 {
        let (s, v, d) = align_term(cu.sig, cu.lsb_exp(), lsb_exp);
        out.c_shift = s;
        out.c_aligned = if cu.sign { -(v as i64) } else { v as i64 };
        out.dropped |= d;
    }
    for (k, p) in m.valid().iter().enumerate() {
        if p.class == ProductClass::Finite {
            let (s, v, d) = align_term(p.sig, p.lsb_exp(), lsb_exp);
            out.align_shift[k] = s;
            out.aligned[k] = if p.sign { -(v as i64) } else { v as i64 };
            out.dropped |= d;
        }
    }
    out
}

/// Output of the block add stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSum {
    /// The exact sum of the aligned terms, in units of `2^lsb_exp`.
    pub sum: i64,
    /// Exponent of the sum's LSB.
    pub lsb_exp: i32,
    /// Carried from the align stage: some bit was dropped.
    pub dropped: bool,
}

/// Sums the aligned terms exactly.
#[inline(always)]
pub fn stage_add<const W: usize>(al: &BlockAlign<W>) -> BlockSum {
    let sum = al.aligned.iter().fold(al.c_aligned, |s, &v| s + v);
    BlockSum {
        sum,
        lsb_exp: al.lsb_exp,
        dropped: al.dropped,
    }
}

/// The output format of a block: the accumulator `acc` with `frac_bits` fraction bits kept.
const fn cut_format(acc: Format, frac_bits: u32) -> Format {
    Format {
        name: "acc-cut",
        frac_bits,
        ..acc
    }
}

/// Normalises the block sum once and rounds it to FP32 (truncating, or to `out_frac_bits`
/// fraction bits re-expanded to an FP32 encoding).
pub fn stage_normalize_round(params: &NvidiaParams, s: &BlockSum) -> Rounded {
    stage_normalize_round_acc(params, s, FP32)
}

/// Normalises the block sum once and rounds it in the preset's direction
/// (`params.out_rounding`) to the accumulator `acc` with `out_frac_bits` fraction bits kept,
/// re-expanded to an `acc` encoding. Overflow gives the signed infinity.
#[inline(always)]
pub fn stage_normalize_round_acc(params: &NvidiaParams, s: &BlockSum, acc: Format) -> Rounded {
    let fmt = cut_format(acc, params.out_frac_bits);
    let x = Unrounded {
        sign: s.sum < 0 && s.sum != 0,
        exp: s.lsb_exp,
        sig: s.sum.unsigned_abs() as u128,
        sticky: false,
    };
    let mut r = round_pack(fmt, x, params.out_rounding, Overflow::Ieee);
    let cut = acc.frac_bits - params.out_frac_bits;
    let sign = fmt.sign_of(r.bits);
    let magnitude = (r.bits & !fmt.sign_bit()) << cut;
    r.bits = acc.with_sign(magnitude, sign);
    if r.flags.overflow {
        r.bits = acc.infinity(sign).unwrap_or(acc.canonical_nan());
    }
    r.flags.inexact |= s.dropped;
    r
}

/// NVIDIA's canonical NaN in the accumulator format `acc`: sign clear, exponent and fraction
/// all ones (FP32 `0x7FFFFFFF`, FP16 `0x7FFF`), the pattern an H200 returns for every NaN
/// result of `mma.sync` (scripts/gpu/capture.cu, 2026-12-04).
pub const fn nvidia_nan(acc: Format) -> u32 {
    ((acc.exp_field_max() << acc.frac_bits) | acc.frac_mask()) as u32
}

/// `bits` with any NaN of `acc` replaced by [`nvidia_nan`].
#[inline(always)]
fn nan_canon(bits: u32, acc: Format) -> u32 {
    if acc.is_nan(bits as u64) {
        nvidia_nan(acc)
    } else {
        bits
    }
}

/// One block (`m.lanes <= params.block` products plus the FP32 `c`) under `params`.
pub fn block<const W: usize>(params: &NvidiaParams, m: &MultiplyStage<W>, c: u32) -> StepRecord {
    block_acc(params, m, c, FP32)
}

/// One block into the accumulator format `acc` (FP32 or FP16; `params` from
/// [`super::Preset::params_for`] with the same `acc`).
#[inline(always)]
pub fn block_acc<const W: usize>(
    params: &NvidiaParams,
    m: &MultiplyStage<W>,
    c: u32,
    acc: Format,
) -> StepRecord {
    if params.rule == BlockRule::K16Steps {
        // Each step decides its own specials (an FP16 step may overflow to an infinity).
        let mut r = k16_steps(params, m, c, acc);
        r.bits = nan_canon(r.bits, acc);
        return r;
    }
    let sp = stage_special_acc(m, c, acc);
    if cdna::is_cdna(params.rule) {
        // AMD: the default quiet NaN, not NVIDIA's canonical one.
        if let Some(bits) = sp.result {
            return StepRecord::special(bits, sp.flags);
        }
        return cdna::block(params, m, c, sp.flags);
    }
    if let Some(bits) = sp.result {
        return StepRecord::special(nan_canon(bits, acc), sp.flags);
    }
    let mut r = match params.rule {
        BlockRule::Truncating => {
            let mut r = truncating(params, m, c, acc);
            r.flags |= sp.flags;
            r
        }
        BlockRule::ExactThenRne => exact_then_rne(m, c, sp.flags),
        BlockRule::HalfSteps => half_steps(params, m, c, sp.flags),
        BlockRule::K16Steps
        | BlockRule::ExactRne
        | BlockRule::PairwiseFtz
        | BlockRule::LatePartialSum => unreachable!("decided above"),
    };
    r.bits = nan_canon(r.bits, acc);
    r
}

/// The block FMA of [`BlockRule::Truncating`] (specials already decided).
#[inline(always)]
fn truncating<const W: usize>(
    params: &NvidiaParams,
    m: &MultiplyStage<W>,
    c: u32,
    acc: Format,
) -> StepRecord {
    let al = stage_align_acc(params, m, c, acc);
    let s = stage_add(&al);
    let r = stage_normalize_round_acc(params, &s, acc);
    StepRecord {
        bits: r.bits as u32,
        flags: r.flags,
        special: false,
        max_exp: al.max_exp,
        align_shift: al.align_shift.first().copied().unwrap_or(0),
        sticky: al.dropped,
        lzc: r.trace.lzc,
        round: r.trace,
    }
}

/// One block's result bits and flags only (as [`block_acc`] gives them), for a PE whose
/// stage-2 wires nobody observes: `products` (at most `params.block`) plus `c` into `acc`.
/// Under [`BlockRule::Truncating`] the align and add stages run as one pass over the
/// products (the largest exponent first, then each term truncated onto the grid and summed),
/// keeping no per-lane alignment record; the other rules run [`block_acc`] itself.
#[inline]
pub fn block_bits_acc(
    params: &NvidiaParams,
    products: &[Product],
    c: u32,
    acc: Format,
) -> (u32, Flags) {
    if params.rule != BlockRule::Truncating || products.len() > MAX_LANES {
        let r = block_acc(
            params,
            &MultiplyStage::<MAX_LANES>::from_products(products),
            c,
            acc,
        );
        return (r.bits, r.flags);
    }
    // One pass over the products: their flags (as a bit vector), whether one is a NaN or an
    // infinity, and the largest exponent of the finite ones.
    let (mut flag_bits, mut special, mut max_product_exp) = (0u8, false, i32::MIN);
    for p in products {
        flag_bits |= p.flags.to_bits();
        special |= matches!(p.class, ProductClass::Nan | ProductClass::Infinite);
        if p.class == ProductClass::Finite {
            max_product_exp = max_product_exp.max(p.exp_sum);
        }
    }
    let product_flags = Flags::from_bits(flag_bits);
    let cu = unpack_block_c(acc, c);
    // The specials stage decides only with a NaN or an infinity among the products and `c`
    // (without one it raises nothing beyond the products' flags).
    let flags = if special || !cu.class.is_finite() {
        let sp = stage_special_of(products, product_flags, c, acc);
        if let Some(bits) = sp.result {
            return (nan_canon(bits, acc), sp.flags);
        }
        sp.flags
    } else {
        product_flags
    };
    // Align: the alignment exponent over `c` and the finite products.
    let c_exp = if cu.sig != 0 { cu.exp } else { i32::MIN };
    let max_exp = c_exp.max(max_product_exp);
    let lsb_exp = max_exp.max(params.exp_floor) - 23 - params.neab;
    // Add: every term truncated onto the grid, summed exactly.
    let (mut sum, mut dropped) = (0i64, false);
    if cu.sig != 0 {
        let (_, v, d) = align_term(cu.sig, cu.lsb_exp(), lsb_exp);
        sum = if cu.sign { -(v as i64) } else { v as i64 };
        dropped = d;
    }
    for p in products {
        if p.class == ProductClass::Finite {
            let (_, v, d) = align_term(p.sig, p.lsb_exp(), lsb_exp);
            sum += if p.sign { -(v as i64) } else { v as i64 };
            dropped |= d;
        }
    }
    let s = BlockSum {
        sum,
        lsb_exp,
        dropped,
    };
    let r = stage_normalize_round_acc(params, &s, acc);
    (r.bits as u32, r.flags | flags)
}

/// The products of lanes `k` with `k mod 4` in `{first, first + 1}`, in k order.
fn k_mod_4_pair<const W: usize>(m: &MultiplyStage<W>, first: usize) -> MultiplyStage<W> {
    let mut out = MultiplyStage {
        lanes: 0,
        products: [NO_PRODUCT; W],
        flags: Flags::NONE,
    };
    for (k, p) in m.valid().iter().enumerate() {
        if k % 4 == first || k % 4 == first + 1 {
            out.products[out.lanes] = *p;
            out.lanes += 1;
            out.flags |= p.flags;
        }
    }
    out
}

/// The whole-block-specials alternative ([`BlockRule::HalfSteps`]): two FP16 k16 steps from
/// zero, `s1` over the products with `k mod 4` in `{0, 1}`, `s2` over `s1` and those with
/// `k mod 4` in `{2, 3}` (each a truncating block rounded to FP16 by `params`), then
/// `d = RNE16(s2 + c)`. Specials are already decided, so every term is finite.
fn half_steps<const W: usize>(
    params: &NvidiaParams,
    m: &MultiplyStage<W>,
    c: u32,
    flags: Flags,
) -> StepRecord {
    let s1 = truncating(params, &k_mod_4_pair(m, 0), 0, FP16);
    let s2 = truncating(params, &k_mod_4_pair(m, 2), s1.bits, FP16);
    let r = add(FP16, c as u64, s2.bits as u64, RoundingMode::NearestEven);
    StepRecord {
        bits: r.rounded.bits as u32,
        flags: r.rounded.flags | s1.flags | s2.flags | flags,
        special: false,
        max_exp: s2.max_exp,
        align_shift: s2.align_shift,
        sticky: s2.sticky,
        lzc: r.rounded.trace.lzc,
        round: r.rounded.trace,
    }
}

/// H200 FP8 ([`BlockRule::K16Steps`]): `s1` = one truncating block over the products with
/// `k mod 4` in `{0, 1}` from `+0`, `s2` = one over `s1` and those with `k mod 4` in
/// `{2, 3}` (each rounded to `acc` by `params`, each with its own specials stage), then
/// `d = RNE(c + s2)` in `acc` (IEEE, specials included: `+Inf` from an overflowing FP16 step
/// plus a `c` of `-Inf` is a NaN).
fn k16_steps<const W: usize>(
    params: &NvidiaParams,
    m: &MultiplyStage<W>,
    c: u32,
    acc: Format,
) -> StepRecord {
    let step = NvidiaParams {
        rule: BlockRule::Truncating,
        ..*params
    };
    let s1 = block_acc(&step, &k_mod_4_pair(m, 0), 0, acc);
    let s2 = block_acc(&step, &k_mod_4_pair(m, 2), s1.bits, acc);
    let r = add(acc, c as u64, s2.bits as u64, RoundingMode::NearestEven);
    StepRecord {
        bits: r.rounded.bits as u32,
        flags: r.rounded.flags | s1.flags | s2.flags | m.flags,
        special: s2.special || !acc.classify(c as u64).is_finite(),
        max_exp: r.align.max_exp,
        align_shift: s2.align_shift,
        sticky: s2.sticky,
        lzc: r.rounded.trace.lzc,
        round: r.rounded.trace,
    }
}

/// Blackwell FP8: `RNE32(c + RZ32(exact sum of the products))`. Zero signs follow IEEE
/// through both roundings (an all-negative-zero product sum, or a block without products,
/// is `-0`, so `c` passes through unchanged).
fn exact_then_rne<const W: usize>(m: &MultiplyStage<W>, c: u32, flags: Flags) -> StepRecord {
    let mut acc = WideAcc::new();
    let mut all_neg_zero = true;
    for p in m.valid() {
        if p.class == ProductClass::Finite {
            acc.add(p.sign, p.sig, p.lsb_exp());
            all_neg_zero = false;
        } else if !p.sign {
            all_neg_zero = false;
        }
    }
    let (sum, _) = acc.to_unrounded(all_neg_zero);
    let products = round_pack(FP32, sum, RoundingMode::TowardZero, Overflow::Ieee);
    let r = add(FP32, c as u64, products.bits, RoundingMode::NearestEven);
    StepRecord {
        bits: r.rounded.bits as u32,
        flags: r.rounded.flags | products.flags | flags,
        special: false,
        max_exp: r.align.max_exp,
        align_shift: 0,
        sticky: false,
        lzc: r.rounded.trace.lzc,
        round: r.rounded.trace,
    }
}

/// One `nvidia` step of a PE (or of [`super::dot`]): the block FMAs of its products.
///
/// - `gathered` empty and `m.lanes <= n`: one block over `m` ([`block`]).
/// - `gathered` empty and `m.lanes > n` (`w >= n`): the products in chunks of `n`, chained
///   (each block's result is the next block's `c`); the record is the last block's, with the
///   flags ORed over all blocks.
/// - `gathered` not empty (`w < n`, a block spanning several steps): one block over the block
///   buffer's products followed by this step's (at most [`MAX_LANES`] in all).
pub fn step<const W: usize>(
    params: &NvidiaParams,
    m: &MultiplyStage<W>,
    gathered: &[Product],
    c: u32,
) -> StepRecord {
    step_acc(params, m, gathered, c, FP32)
}

/// [`step`] into the accumulator format `acc` (FP32 or FP16; `params` from
/// [`super::Preset::params_for`] with the same `acc`).
#[inline(always)]
pub fn step_acc<const W: usize>(
    params: &NvidiaParams,
    m: &MultiplyStage<W>,
    gathered: &[Product],
    c: u32,
    acc: Format,
) -> StepRecord {
    if !gathered.is_empty() {
        let mut all = [NO_PRODUCT; MAX_LANES];
        let g = gathered.len().min(MAX_LANES);
        all[..g].copy_from_slice(&gathered[..g]);
        let v = m.valid();
        let t = (g + v.len()).min(MAX_LANES);
        all[g..t].copy_from_slice(&v[..t - g]);
        return block_acc(
            params,
            &MultiplyStage::<MAX_LANES>::from_products(&all[..t]),
            c,
            acc,
        );
    }
    let n = params.block.clamp(1, MAX_LANES);
    if n >= m.lanes {
        return block_acc(params, m, c, acc);
    }
    let mut out = StepRecord::idle(c, Flags::NONE);
    let mut flags = Flags::NONE;
    for chunk in m.valid().chunks(n) {
        out = block_acc(
            params,
            &MultiplyStage::<W>::from_products(chunk),
            out.bits,
            acc,
        );
        flags |= out.flags;
    }
    out.flags = flags;
    out
}
