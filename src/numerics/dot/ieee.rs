//! The `ieee` mode: a chain of fused multiply-adds `c <- RNE32(c + a_k * b_k)`, one per lane,
//! k ascending. Each FMA is the shared two-term adder ([`add_terms`]) fed with `c` and the
//! exact product, then the shared [`round_pack`]. The `_rm` entry points take any IEEE
//! rounding direction ([`RoundingMode`]); the plain ones round to nearest even.

use super::stage::{MultiplyStage, StepRecord};
use crate::numerics::add::{add_terms, exact_zero_sign, AddTrace, Term};
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::{Class, Format, FP32};
use crate::numerics::multiply::{Product, ProductClass};
use crate::numerics::round::{round_pack, round_pack_normal, Overflow, RoundTrace, Unrounded};
use crate::numerics::unpack::unpack;

/// The stage fields of one fused multiply-add.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FmaStage {
    /// The rounded FP32 result.
    pub bits: u32,
    /// Its flags (invalid from specials included).
    pub flags: Flags,
    /// True if a NaN or an infinity (of `c` or the product) decided the result.
    pub special: bool,
    /// Alignment stage of the adder (`max_exp`, `align_shift`, `sticky`, `effective_sub`).
    pub align: AddTrace,
    /// The unrounded sum leaving the adder.
    pub sum: Unrounded,
    /// The normalise-round fields (`lzc`, `round_inc`, ...).
    pub round: RoundTrace,
}

const fn special(bits: u32, flags: Flags) -> FmaStage {
    FmaStage {
        bits,
        flags,
        special: true,
        align: AddTrace {
            swapped: false,
            max_exp: 0,
            exp_diff: 0,
            align_shift: 0,
            sticky: false,
            effective_sub: false,
        },
        sum: Unrounded {
            sign: false,
            exp: 0,
            sig: 0,
            sticky: false,
        },
        round: RoundTrace::IDLE,
    }
}

/// One FMA `RNE32(c + p)` with an exact product `p`, with IEEE specials and zero signs.
#[inline(always)]
pub fn fma(c: u32, p: &Product) -> FmaStage {
    fma_rm(c, p, RoundingMode::NearestEven)
}

/// One FMA `round(c + p)` in rounding direction `rm` with an exact product `p`, with IEEE
/// specials, zero signs (an exact zero sum of opposite signs is `-0` only toward negative)
/// and overflow results (Inf or the largest finite value, by direction).
#[inline(always)]
pub fn fma_rm(c: u32, p: &Product, rm: RoundingMode) -> FmaStage {
    fma_acc(c, p, rm, FP32)
}

/// [`fma_rm`] into the accumulator format `acc` (FP32 or FP16): `c` and the result are `acc`
/// bit patterns; NaN results are `acc`'s canonical NaN.
#[inline(always)]
pub fn fma_acc(c: u32, p: &Product, rm: RoundingMode, acc: Format) -> FmaStage {
    let cu = unpack(acc, c as u64);
    let nan = acc.canonical_nan() as u32;
    if cu.is_nan() || p.class == ProductClass::Nan {
        let invalid = p.flags.invalid || acc.is_signaling_nan(c as u64);
        let flags = if invalid { Flags::INVALID } else { Flags::NONE };
        return special(nan, flags);
    }
    if p.class == ProductClass::Infinite {
        if cu.class == Class::Infinite && cu.sign != p.sign {
            return special(nan, Flags::INVALID);
        }
        return special(
            acc.infinity(p.sign).unwrap_or(nan as u64) as u32,
            Flags::NONE,
        );
    }
    if cu.class == Class::Infinite {
        return special(c, Flags::NONE);
    }
    let c_term = Term {
        sign: cu.sign,
        lsb_exp: cu.lsb_exp(),
        sig: cu.sig,
    };
    let p_term = Term {
        sign: p.sign,
        lsb_exp: p.lsb_exp(),
        sig: p.sig,
    };
    let (mut sum, align) = add_terms(c_term, p_term);
    if sum.sig == 0 && !sum.sticky {
        sum.sign = exact_zero_sign(cu.sign, p.sign, rm);
    }
    let r = round_pack(acc, sum, rm, Overflow::Ieee);
    FmaStage {
        bits: r.bits as u32,
        flags: r.flags,
        special: false,
        align,
        sum,
        round: r.trace,
    }
}

/// Bits a product's significand may have for [`fma_acc_normal`]: every product of two
/// operands of at most 16 significand bits (FP16, BF16, TF32 and the 8- and 6-bit formats).
pub const NORMAL_PRODUCT_BITS: u32 = 32;

/// The FMA's normal-range unit, rounding to nearest even: `c + p` into the accumulator
/// format `acc` when `c` is normal or zero, `p` is zero or a finite product of at most
/// [`NORMAL_PRODUCT_BITS`] significand bits, and the sum rounds to a normal number below the
/// top binade. `None` otherwise: zeros of the sum, subnormal, overflowing and special results
/// are the full unit's ([`fma_acc`]), which the caller then runs. Where it answers it gives
/// the full unit's bits and flags (only `inexact` can be raised here); it builds none of the
/// trace fields, for a PE whose stage-2 wires nobody observes.
///
/// The datapath: both significands left-aligned with their leading one at bit 61 of a 64-bit
/// window, the smaller shifted right by the exponent difference with everything shifted out
/// jammed into bit 0, a 64-bit add or subtract, then the shared [`round_pack`] (one round to
/// `acc`'s precision). Bits are lost to the jam only when the exponents differ by more than
/// 29, so the sum's leading one stays at bit 60 or above and the kept LSB at bit 37 or
/// above: the jam bit then only decides `sticky`, as the guard-round-sticky argument needs.
#[inline(always)]
pub fn fma_acc_normal(c: u32, p: &Product, acc: Format) -> Option<(u32, Flags)> {
    const TOP: i32 = 61;
    let frac = acc.frac_bits;
    let exp_field = ((c as u64) >> frac) & acc.exp_field_max();
    let c_sign = (c as u64) & acc.sign_bit() != 0;
    let c_zero = exp_field == 0 && (c as u64) & acc.frac_mask() == 0;
    if p.class == ProductClass::Zero && !c_zero && exp_field != acc.exp_field_max() {
        // A zero product leaves a finite nonzero `c` unchanged (`c + 0 = c`, exact).
        return Some((c, Flags::NONE));
    }
    if p.class != ProductClass::Finite || p.sig == 0 || p.sig >> NORMAL_PRODUCT_BITS != 0 {
        return None;
    }
    let p_len = 64 - p.sig.leading_zeros() as i32;
    let p_top = p.lsb_exp() + p_len - 1;
    let p_win = p.sig << (TOP + 1 - p_len) as u32;
    let (top, sign, sum) = if c_zero {
        (p_top, p.sign, p_win)
    } else {
        if exp_field == 0 || exp_field == acc.exp_field_max() {
            return None;
        }
        let c_top = exp_field as i32 - acc.bias;
        let c_win = (((c as u64) & acc.frac_mask()) | (1u64 << frac)) << (TOP as u32 - frac);
        let d = c_top - p_top;
        let (big, big_sign, top, small, small_sign, d) = if d >= 0 {
            (c_win, c_sign, c_top, p_win, p.sign, d as u32)
        } else {
            (p_win, p.sign, p_top, c_win, c_sign, (-d) as u32)
        };
        let aligned = if d == 0 {
            small
        } else if d <= TOP as u32 {
            (small >> d) | u64::from(small << (64 - d) != 0)
        } else {
            1
        };
        // The adder and its sign, as selects (no branch on the data's signs and magnitudes):
        // like signs add; unlike ones subtract the smaller magnitude from the larger.
        let same = big_sign == small_sign;
        let small_wins = !same & (aligned > big);
        let magnitude = if same {
            big.wrapping_add(aligned)
        } else {
            big.abs_diff(aligned)
        };
        let sign = if small_wins { small_sign } else { big_sign };
        (top, sign, magnitude)
    };
    if sum == 0 {
        return None;
    }
    let msb = 63 - sum.leading_zeros() as i32;
    let exp = top - TOP + msb;
    if exp < acc.emin() || exp >= acc.emax() {
        return None;
    }
    // One round to the accumulator's precision through the shared normalize-round-pack, on
    // its 64-bit register, told that the result is normal and finite (checked just above).
    // The jam bit is an ordinary bit there, below the kept LSB and the guard bit, where it
    // only decides `sticky`.
    let r = round_pack_normal(acc, sign, sum, top - TOP, RoundingMode::NearestEven);
    // Below the top binade and above the subnormal range, `inexact` is the only flag the
    // rounding can raise: said as a constant, so the caller's flag vector is one bit.
    debug_assert!(!r.flags.invalid && !r.flags.overflow && !r.flags.underflow);
    let flags = Flags {
        inexact: r.flags.inexact,
        ..Flags::NONE
    };
    Some((r.bits as u32, flags))
}

/// [`fma_acc`] rounding to nearest even, result bits and flags only (as their 4-bit vector,
/// [`Flags::to_bits`]): the normal-range unit ([`fma_acc_normal`]) where it answers, the full
/// unit otherwise.
#[inline(always)]
pub fn fma_acc_bits(c: u32, p: &Product, acc: Format) -> (u32, u8) {
    fma_acc_bits_by(c, p, acc, |c, p| fma_acc_rare(c, p, acc))
}

/// [`fma_acc_bits`] with `rare` the full unit for the sums the normal-range unit leaves (a
/// unit built for one format passes its own, so no format row is handed to it). Both paths
/// give the flags as their 4-bit vector, so they join on a byte.
#[inline(always)]
pub fn fma_acc_bits_by(
    c: u32,
    p: &Product,
    acc: Format,
    rare: impl FnOnce(u32, &Product) -> (u32, u8),
) -> (u32, u8) {
    match fma_acc_normal(c, p, acc) {
        Some((bits, flags)) => (bits, flags.to_bits()),
        None => rare(c, p),
    }
}

/// The full unit for the sums the normal-range unit leaves (zeros, subnormals, overflow,
/// specials): out of line, so the common path inlined into every PE stays small.
#[cold]
#[inline(never)]
fn fma_acc_rare(c: u32, p: &Product, acc: Format) -> (u32, u8) {
    let r = fma_acc(c, p, RoundingMode::NearestEven, acc);
    (r.bits, r.flags.to_bits())
}

/// The `ieee` step: the FMAs of all valid lanes in order, starting from `c`. The trace
/// fields of the result are those of the last FMA.
#[inline(always)]
pub fn fma_chain<const W: usize>(m: &MultiplyStage<W>, c: u32) -> StepRecord {
    fma_chain_rm(m, c, RoundingMode::NearestEven)
}

/// [`fma_chain`] with every FMA rounded in direction `rm`.
#[inline(always)]
pub fn fma_chain_rm<const W: usize>(m: &MultiplyStage<W>, c: u32, rm: RoundingMode) -> StepRecord {
    fma_chain_acc(m, c, rm, FP32)
}

/// [`fma_chain_rm`] into the accumulator format `acc` (FP32 or FP16).
#[inline(always)]
pub fn fma_chain_acc<const W: usize>(
    m: &MultiplyStage<W>,
    c: u32,
    rm: RoundingMode,
    acc: Format,
) -> StepRecord {
    fma_chain_over(m.valid(), c, rm, acc)
}

/// The `ieee` chain over `products`: the FMAs of [`fma_acc`] (rounding `rm`, accumulator
/// format `acc`: a constant where the caller fixes it) in order, starting from `c`; the
/// record's trace fields are those of the last FMA. The unit is called directly, not through
/// a closure, so it inlines into the chain (a closure's call was left out of line, its whole
/// trace record returned through memory).
#[inline(always)]
pub fn fma_chain_over(products: &[Product], c: u32, rm: RoundingMode, acc: Format) -> StepRecord {
    let mut acc_bits = c;
    let mut flags = Flags::NONE;
    let mut last = special(c, Flags::NONE);
    for p in products {
        last = fma_acc(acc_bits, p, rm, acc);
        acc_bits = last.bits;
        flags |= last.flags;
    }
    // With no valid lane `last` is the idle pass-through of `c`: no stage decided anything.
    StepRecord {
        bits: acc_bits,
        flags,
        special: last.special && !products.is_empty(),
        max_exp: last.align.max_exp,
        align_shift: last.align.align_shift as i32,
        sticky: last.align.sticky,
        lzc: last.round.lzc,
        round: last.round,
    }
}
