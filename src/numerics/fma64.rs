//! The binary64 fused multiply-add of the FP64 tensor cores (A100 and H100 `DMMA`,
//! [`crate::numerics::dot::dmma`]): `d = RNE64(a * b + c)`, one rounding, written as hardware
//! with integer fields only.
//!
//! Stages: unpack (the shared [`unpack`]); specials; multiply (53 x 53 bits, an exact 106-bit
//! significand in a `u128`); align (the larger term's leading one at bit [`WINDOW_TOP`] of a
//! 128-bit window, the smaller term shifted onto the window with the bits below it ORed into a
//! sticky bit); add or subtract (a sticky smaller term is borrowed from, so the window plus
//! sticky stays exact enough for any rounding); normalise, round and pack (the shared
//! [`round_pack`] into [`FP64`]).
//!
//! Why the window is enough: the larger term has at most 106 significant bits, so at least 19
//! window bits lie below its LSB; a smaller term that reaches below the window lies wholly
//! more than 19 bits below the larger term's LSB, so the result's leading one is within one
//! bit of the larger term's and the 53-bit rounding sees the sticky bit far below its guard bit.

use super::add::exact_zero_sign;
use super::flags::{Flags, RoundingMode};
use super::format::{Class, FP64};
use super::round::{round_pack, Overflow, Unrounded};
use super::unpack::{unpack, Unpacked};

/// Position of the larger term's leading one in the 128-bit adder window: two bits stay free
/// above it for the carry and the sticky bit the normaliser jams.
pub const WINDOW_TOP: u32 = 125;

/// The binary64 default NaN this unit returns for every NaN result (sign clear, quiet bit set).
pub const FP64_NAN: u64 = 0x7FF8_0000_0000_0000;

/// A finite signed term `(-1)^sign * sig * 2^lsb_exp` of the adder (`sig` up to 106 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Term128 {
    sign: bool,
    lsb_exp: i32,
    sig: u128,
}

impl Term128 {
    fn of(u: &Unpacked) -> Term128 {
        Term128 {
            sign: u.sign,
            lsb_exp: u.lsb_exp(),
            sig: u.sig as u128,
        }
    }

    /// Exponent of the leading one (`sig != 0`).
    fn top(&self) -> i32 {
        self.lsb_exp + (127 - self.sig.leading_zeros() as i32)
    }
}

/// Shifts `sig` right by `shift` bits, returning the kept bits and whether a nonzero bit fell
/// off (the sticky bit).
fn shift_right_sticky(sig: u128, shift: u32) -> (u128, bool) {
    if shift == 0 {
        (sig, false)
    } else if shift >= 128 {
        (0, sig != 0)
    } else {
        (sig >> shift, sig & ((1u128 << shift) - 1) != 0)
    }
}

/// The special result of `a * b + c` if an operand is a NaN or an infinity, or the product is
/// 0 x Inf: NaN (with `invalid` for 0 x Inf, Inf - Inf, or a signaling NaN) or the infinity.
fn special(a: &Unpacked, b: &Unpacked, c: &Unpacked) -> Option<(u64, Flags)> {
    let any_nan = a.is_nan() || b.is_nan() || c.is_nan();
    let snan = [a, b, c].iter().any(|u| FP64.is_signaling_nan_class(u));
    let zero_times_inf = (a.is_inf() && b.is_zero()) || (a.is_zero() && b.is_inf());
    if any_nan || zero_times_inf {
        let flags = if snan || zero_times_inf {
            Flags::INVALID
        } else {
            Flags::NONE
        };
        return Some((FP64_NAN, flags));
    }
    let product_inf = a.is_inf() || b.is_inf();
    let product_sign = a.sign ^ b.sign;
    match (product_inf, c.is_inf()) {
        (true, true) if product_sign != c.sign => Some((FP64_NAN, Flags::INVALID)),
        (true, _) => Some((FP64.infinity(product_sign).unwrap_or(FP64_NAN), Flags::NONE)),
        (false, true) => Some((FP64.infinity(c.sign).unwrap_or(FP64_NAN), Flags::NONE)),
        (false, false) => None,
    }
}

/// `RNE64(a * b + c)` of three binary64 encodings: the bits and IEEE flags.
pub fn fma64(a: u64, b: u64, c: u64) -> (u64, Flags) {
    fma64_rm(a, b, c, RoundingMode::NearestEven)
}

/// [`fma64`] rounded in direction `rm`.
pub fn fma64_rm(a: u64, b: u64, c: u64, rm: RoundingMode) -> (u64, Flags) {
    let (ua, ub, uc) = (unpack(FP64, a), unpack(FP64, b), unpack(FP64, c));
    if let Some(s) = special(&ua, &ub, &uc) {
        return s;
    }
    // Multiply: exact 106-bit significand.
    let product = Term128 {
        sign: ua.sign ^ ub.sign,
        lsb_exp: ua.lsb_exp() + ub.lsb_exp(),
        sig: ua.sig as u128 * ub.sig as u128,
    };
    let addend = Term128::of(&uc);
    let Some(sum) = add_aligned(product, addend) else {
        // Both terms zero, or an exact cancellation: the IEEE sign of an exact zero sum.
        let sign = exact_zero_sign(product.sign, addend.sign, rm);
        return (FP64.zero(sign), Flags::NONE);
    };
    let r = round_pack(FP64, sum, rm, Overflow::Ieee);
    (r.bits, r.flags)
}

/// Adds two finite terms in the 128-bit window with a sticky bit; `None` for an exactly zero
/// sum (both terms zero, or equal magnitudes of opposite signs).
fn add_aligned(x: Term128, y: Term128) -> Option<Unrounded> {
    let (big, small) = match (x.sig == 0, y.sig == 0) {
        (true, true) => return None,
        (true, false) => return Some(exact(y)),
        (false, true) => return Some(exact(x)),
        (false, false) => {
            if larger(&x, &y) {
                (x, y)
            } else {
                (y, x)
            }
        }
    };
    let window_lsb = big.top() - WINDOW_TOP as i32;
    // The larger term moves up to the window top (a left shift: it has at most 106 bits).
    let big_sig = big.sig << (big.lsb_exp - window_lsb) as u32;
    let (small_sig, sticky) = if small.lsb_exp >= window_lsb {
        (small.sig << (small.lsb_exp - window_lsb) as u32, false)
    } else {
        shift_right_sticky(small.sig, (window_lsb - small.lsb_exp) as u32)
    };
    let (sig, sticky) = if big.sign == small.sign {
        (big_sig + small_sig, sticky)
    } else if sticky {
        // big - (small_sig + e), 0 < e < 1: one borrowed unit below, the rest as sticky.
        (big_sig - small_sig - 1, true)
    } else {
        (big_sig - small_sig, false)
    };
    if sig == 0 && !sticky {
        return None;
    }
    Some(Unrounded {
        sign: big.sign,
        exp: window_lsb,
        sig,
        sticky,
    })
}

/// A single term, exact.
fn exact(t: Term128) -> Unrounded {
    Unrounded {
        sign: t.sign,
        exp: t.lsb_exp,
        sig: t.sig,
        sticky: false,
    }
}

/// True if `|x| >= |y|` (both nonzero): leading-one exponents first, then the significands
/// aligned at their leading ones.
fn larger(x: &Term128, y: &Term128) -> bool {
    let (tx, ty) = (x.top(), y.top());
    if tx != ty {
        return tx > ty;
    }
    let (lx, ly) = (x.sig.leading_zeros(), y.sig.leading_zeros());
    (x.sig << lx) >= (y.sig << ly)
}

/// The class of a binary64 encoding (for callers that screen operands).
pub fn class64(bits: u64) -> Class {
    FP64.classify(bits)
}
