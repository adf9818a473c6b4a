//! The block rules of AMD CDNA matrix cores (`v_mfma`), after the published models of Khattak
//! and Mikaitis (north-numerical-computing/MATLAB-tensor-core, `models/MI100MC.m`,
//! `MI210MC.m`, `MI300MC.m` at commit b4bf135, on `models/tools/Generic_BFMA_TC.m`);
//! docs/numerics.md, "AMD CDNA matrix cores", states each rule in full.
//!
//! - [`BlockRule::ExactRne`] (CDNA1): `d = RNE32(c + exact sum of the products)`.
//! - [`BlockRule::PairwiseFtz`] (CDNA2): subnormal inputs and products flushed, a pair-wise
//!   tree of FP32 additions (round to nearest even), `c` added last, every sum's subnormal
//!   result flushed to a zero of its sign.
//! - [`BlockRule::LatePartialSum`] (CDNA3): the products aligned and truncated among
//!   themselves, `c` added to their sum after a round-down alignment, one RNE rounding.
//!
//! Specials are decided before these rules run (`nvidia::block_acc`): any NaN, or `+Inf` with
//! `-Inf`, gives the default quiet NaN `0x7FC00000`; otherwise an infinity passes through with
//! its sign. A finite product of `2^128` or more (BF16, TF32) is an overflow: the signed
//! infinity, NaN if the block holds such products of both signs (the models give `+Inf` for
//! either sign; see the docs).
//!
//! Zero results: an exactly zero sum is `+0` (as in the models); a nonzero sum rounding to
//! zero keeps its sign. Everything works on integer fields; no host float computes a result.

use super::mode::{BlockRule, NvidiaParams};
use super::stage::{align_term, MultiplyStage, StepRecord, MAX_LANES};
use super::wide::WideAcc;
use crate::numerics::add::add;
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::{Class, Format, FP32};
use crate::numerics::multiply::{Product, ProductClass};
use crate::numerics::round::{round_pack, Overflow, Rounded, Unrounded};
use crate::numerics::unpack::unpack;

/// FP32's default quiet NaN, what the AMD presets return for a NaN result (the models return
/// MATLAB's `NaN`, which is this pattern in binary32).
pub const AMD_NAN: u32 = 0x7FC0_0000;

/// FP32's smallest normal exponent.
const FP32_EMIN: i32 = -126;

/// Extra alignment bits the CDNA3 model gives the product sum when `c` is the larger term.
const LATE_C_EXTRA_BITS: i32 = 7;

/// True for the rules of this file.
pub const fn is_cdna(rule: BlockRule) -> bool {
    matches!(
        rule,
        BlockRule::ExactRne | BlockRule::PairwiseFtz | BlockRule::LatePartialSum
    )
}

/// True if the rule reads an input below its format's smallest normal as zero (CDNA2): the
/// multiply stage's products of such lanes are replaced by [`flush_subnormal_operands`].
pub const fn flushes_inputs(rule: BlockRule) -> bool {
    matches!(rule, BlockRule::PairwiseFtz)
}

/// Replaces the finite product of every lane whose A or B operand is subnormal by a `+0`
/// product (the CDNA2 input flush; a subnormal times an infinity stays infinite, as the
/// models decide specials on the inputs as given).
pub fn flush_subnormal_operands(
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    products: &mut [Product],
) {
    for ((p, &x), &y) in products.iter_mut().zip(a).zip(b) {
        let tiny = fmt_a.classify(x) == Class::Subnormal || fmt_b.classify(y) == Class::Subnormal;
        if tiny && p.class == ProductClass::Finite {
            p.class = ProductClass::Zero;
            p.sig = 0;
            p.sign = false;
        }
    }
}

/// One CDNA block (`m` at most `params.block` products, the FP32 `c`), specials already
/// decided (`flags` are theirs).
pub fn block<const W: usize>(
    params: &NvidiaParams,
    m: &MultiplyStage<W>,
    c: u32,
    flags: Flags,
) -> StepRecord {
    let mut r = match params.rule {
        BlockRule::ExactRne => exact_rne(m, c),
        BlockRule::PairwiseFtz => pairwise_ftz(params, m, c),
        _ => late_partial_sum(params, m, c),
    };
    r.flags |= flags;
    r
}

/// A record of one rounding into FP32.
fn record(r: Rounded, max_exp: i32, sticky: bool) -> StepRecord {
    StepRecord {
        bits: r.bits as u32,
        flags: r.flags,
        special: false,
        max_exp,
        align_shift: 0,
        sticky,
        lzc: r.trace.lzc,
        round: r.trace,
    }
}

/// The exponent of a finite nonzero product's leading one.
fn top_exp(p: &Product) -> i32 {
    p.lsb_exp() + 63 - p.sig.leading_zeros() as i32
}

/// The overflow decision of a block: `Some(bits)` if a finite product reaches `2^128`.
fn product_overflow(products: &[Product]) -> Option<u32> {
    let (mut pos, mut neg) = (false, false);
    for p in products {
        if p.class == ProductClass::Finite && top_exp(p) >= 128 {
            if p.sign {
                neg = true
            } else {
                pos = true
            }
        }
    }
    match (pos, neg) {
        (true, true) => Some(AMD_NAN),
        (true, false) => Some(0x7F80_0000),
        (false, true) => Some(0xFF80_0000),
        _ => None,
    }
}

/// CDNA1 ([`BlockRule::ExactRne`]): the exact sum of the products and `c`, rounded once to
/// nearest even (an exact zero is `+0`).
fn exact_rne<const W: usize>(m: &MultiplyStage<W>, c: u32) -> StepRecord {
    let mut acc = WideAcc::new();
    let cu = unpack(FP32, c as u64);
    acc.add(cu.sign, cu.sig, cu.lsb_exp());
    for p in m.valid() {
        if p.class == ProductClass::Finite {
            acc.add(p.sign, p.sig, p.lsb_exp());
        }
    }
    let (sum, lzc) = acc.to_unrounded(false);
    let mut r = record(
        round_pack(FP32, sum, RoundingMode::NearestEven, Overflow::Ieee),
        0,
        false,
    );
    r.lzc = lzc;
    r
}

/// An FP32 result with a subnormal magnitude flushed to the zero of its sign.
fn ftz(bits: u32, flags: &mut Flags) -> u32 {
    if FP32.classify(bits as u64) == Class::Subnormal {
        flags.underflow = true;
        flags.inexact = true;
        bits & 0x8000_0000
    } else {
        bits
    }
}

/// `RNE32(x + y)` with a subnormal result flushed (one adder of the CDNA2 tree).
fn add_ftz(x: u32, y: u32, flags: &mut Flags) -> u32 {
    let r = add(FP32, x as u64, y as u64, RoundingMode::NearestEven);
    *flags |= r.rounded.flags;
    ftz(r.rounded.bits as u32, flags)
}

/// The pair-wise tree over `terms` (a power of two long): the halves summed recursively, then
/// added.
fn tree(terms: &[u32], flags: &mut Flags) -> u32 {
    if terms.len() == 1 {
        return terms[0];
    }
    let (lo, hi) = terms.split_at(terms.len() / 2);
    let l = tree(lo, flags);
    let h = tree(hi, flags);
    add_ftz(l, h, flags)
}

/// CDNA2 ([`BlockRule::PairwiseFtz`]): each product (its subnormal operands already read as
/// zero) as an FP32 value, flushed to `+0` below FP32's smallest normal; the block padded
/// with `+0` to `params.block` (a power of two) and summed pair-wise; `c` (a subnormal `c`
/// read as `+0`) added last.
fn pairwise_ftz<const W: usize>(params: &NvidiaParams, m: &MultiplyStage<W>, c: u32) -> StepRecord {
    let mut flags = Flags::NONE;
    if let Some(bits) = product_overflow(m.valid()) {
        return StepRecord::special(bits, Flags::NONE);
    }
    let n = params.block.max(m.lanes).next_power_of_two();
    let mut terms = [0u32; MAX_LANES];
    for (t, p) in terms.iter_mut().zip(m.valid()) {
        if p.class == ProductClass::Finite && top_exp(p) >= FP32_EMIN {
            let x = Unrounded {
                sign: p.sign,
                exp: p.lsb_exp(),
                sig: p.sig as u128,
                sticky: false,
            };
            *t = round_pack(FP32, x, RoundingMode::NearestEven, Overflow::Ieee).bits as u32;
        }
    }
    let sum = tree(&terms[..n.min(terms.len())], &mut flags);
    let c_in = match FP32.classify(c as u64) {
        Class::Zero | Class::Subnormal => 0,
        _ => c,
    };
    let r = add(FP32, c_in as u64, sum as u64, RoundingMode::NearestEven);
    flags |= r.rounded.flags;
    let bits = ftz(r.rounded.bits as u32, &mut flags);
    StepRecord {
        bits,
        flags,
        special: false,
        max_exp: r.align.max_exp,
        align_shift: 0,
        sticky: r.align.sticky,
        lzc: r.rounded.trace.lzc,
        round: r.rounded.trace,
    }
}

/// `(magnitude >> shift)` rounded toward negative infinity for a value of sign `negative`,
/// and whether bits were dropped.
fn shift_floor(magnitude: u128, shift: i32, negative: bool) -> (u128, bool) {
    let (q, dropped) = if shift <= 0 {
        (magnitude << (-shift) as u32, false)
    } else if shift >= 128 {
        (0, magnitude != 0)
    } else {
        (magnitude >> shift, magnitude & ((1u128 << shift) - 1) != 0)
    };
    (q + u128::from(negative && dropped), dropped)
}

/// CDNA3 ([`BlockRule::LatePartialSum`]): the nonzero products aligned to their largest
/// exponent `e_p` and truncated to the grid `2^(e_p - 23 - neab)`, summed exactly into `P`;
/// `c` (exponent `e_c`, at least -126; a zero `c` counts at -126) then meets `P`: if
/// `e_p < e_c`, `P` is moved to the grid `2^(e_c - 23 - neab - 7)` rounding toward negative
/// infinity; if `e_c < e_p`, `c` is moved to `P`'s grid rounding toward negative infinity;
/// the two are added exactly and the sum rounded once to nearest even into FP32. A block with
/// no nonzero product returns `c` (a zero `c` as `+0`).
fn late_partial_sum<const W: usize>(
    params: &NvidiaParams,
    m: &MultiplyStage<W>,
    c: u32,
) -> StepRecord {
    if let Some(bits) = product_overflow(m.valid()) {
        return StepRecord::special(bits, Flags::NONE);
    }
    let cu = unpack(FP32, c as u64);
    let finite = || m.valid().iter().filter(|p| p.class == ProductClass::Finite);
    let Some(e_p) = finite().map(|p| p.exp_sum).max() else {
        let bits = if cu.sig == 0 { 0 } else { c };
        return StepRecord::idle(bits, Flags::NONE);
    };
    let frac = 23 + params.neab;
    let p_lsb = e_p - frac;
    let (mut p_sum, mut dropped) = (0i64, false);
    for p in finite() {
        let (_, v, d) = align_term(p.sig, p.lsb_exp(), p_lsb);
        p_sum += if p.sign { -(v as i64) } else { v as i64 };
        dropped |= d;
    }
    // c on its own grid 2^(e_c - 23 - neab): FP32's significand, `neab` bits up.
    let e_c = cu.exp.max(FP32_EMIN);
    let c_mag = u128::from(cu.sig) << params.neab as u32;
    let p_mag = u128::from(p_sum.unsigned_abs());
    let (p_neg, c_neg) = (p_sum < 0, cu.sign);
    let (p_al, c_al, lsb, max_exp) = if e_p < e_c {
        let extra = LATE_C_EXTRA_BITS as u32;
        let (q, d) = shift_floor(p_mag << extra, e_c - e_p, p_neg);
        dropped |= d;
        (q, c_mag << extra, e_c - frac - LATE_C_EXTRA_BITS, e_c)
    } else {
        let (q, d) = shift_floor(c_mag, e_p - e_c, c_neg && cu.sig != 0);
        dropped |= d;
        (p_mag, q, p_lsb, e_p)
    };
    let signed = |v: u128, neg: bool| if neg { -(v as i128) } else { v as i128 };
    let s = signed(p_al, p_neg) + signed(c_al, c_neg);
    let x = Unrounded {
        sign: s < 0,
        exp: lsb,
        sig: s.unsigned_abs(),
        sticky: false,
    };
    let mut r = record(
        round_pack(FP32, x, RoundingMode::NearestEven, Overflow::Ieee),
        max_exp,
        dropped,
    );
    r.flags.inexact |= dropped;
    r
}
