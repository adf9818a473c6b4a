//! The two-term adder: swap by magnitude, align the smaller term with guard/round/sticky,
//! add or subtract, and hand the result to the shared normalize-round-pack. It serves the
//! FP32 adder ([`add`]) and the fused multiply-add of the `ieee` accumulation mode.

use super::flags::{Flags, RoundingMode};
use super::format::{Class, Format};
use super::round::{round_pack, Overflow, Rounded, Unrounded};
use super::unpack::unpack;

/// A finite term `(-1)^sign * sig * 2^lsb_exp` entering the adder (an operand or an exact
/// product).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Term {
    /// Sign.
    pub sign: bool,
    /// Exponent of `sig`'s least significant bit.
    pub lsb_exp: i32,
    /// Integer significand (at most 64 bits wide).
    pub sig: u64,
}

/// The intermediate fields of one two-term addition, as hardware would expose them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AddTrace {
    /// True if the operands were swapped so that the larger magnitude comes first.
    pub swapped: bool,
    /// Exponent of the larger term's leading one (the alignment reference).
    pub max_exp: i32,
    /// Exponent difference between the two terms' leading ones: how far the smaller term
    /// sits below the larger one (the classic alignment distance; 0 if a term is zero).
    pub exp_diff: u32,
    /// Right shift applied to the smaller term's significand to align it (0 if it needed
    /// no shift; saturates at the window width).
    pub align_shift: u32,
    /// OR of the smaller term's bits shifted out of the window.
    pub sticky: bool,
    /// True if the signs differ (the datapath subtracts).
    pub effective_sub: bool,
}

/// Position of the larger term's leading one inside the 128-bit adder window. Two bits stay
/// free above it for the carry and for the jammed sticky bit in [`round_pack`].
const WINDOW_TOP: u32 = 125;

/// Bit length of a nonzero significand.
#[inline(always)]
fn bit_len(sig: u64) -> u32 {
    64 - sig.leading_zeros()
}

/// Adds two finite terms exactly enough for any rounding to at most 64-bit precision: the
/// larger term is placed with its leading one at bit 125 of a 128-bit window, the smaller
/// one is aligned to it, and whatever falls below the window is kept as a sticky bit.
///
/// An exact zero sum is returned with `sign = false`; the caller applies the IEEE sign rule.
#[inline(always)]
pub fn add_terms(x: Term, y: Term) -> (Unrounded, AddTrace) {
    let mut trace = AddTrace::default();
    if x.sig == 0 || y.sig == 0 {
        let t = if x.sig == 0 { y } else { x };
        trace.max_exp = t.lsb_exp + bit_len(t.sig).max(1) as i32 - 1;
        return (
            Unrounded {
                sign: t.sign,
                exp: t.lsb_exp,
                sig: t.sig as u128,
                sticky: false,
            },
            trace,
        );
    }
    let top_x = x.lsb_exp + bit_len(x.sig) as i32 - 1;
    let top_y = y.lsb_exp + bit_len(y.sig) as i32 - 1;
    // Order by magnitude: compare leading-one exponents, then the aligned significands.
    let x_larger = if top_x != top_y {
        top_x > top_y
    } else {
        let lx = bit_len(x.sig);
        let ly = bit_len(y.sig);
        let (ax, ay) = if lx >= ly {
            (x.sig, y.sig << (lx - ly))
        } else {
            (x.sig << (ly - lx), y.sig)
        };
        ax >= ay
    };
    let (big, small) = if x_larger { (x, y) } else { (y, x) };
    trace.swapped = !x_larger;
    let top_big = if x_larger { top_x } else { top_y };
    trace.max_exp = top_big;
    trace.exp_diff = (top_x - top_y).unsigned_abs();
    let window_lsb = top_big - WINDOW_TOP as i32;
    trace.effective_sub = big.sign != small.sign;
    // Offsets of the two terms' LSBs above the window's LSB.
    let big_offset = big.lsb_exp - window_lsb;
    let offset = small.lsb_exp - window_lsb;
    if big_offset.min(offset) >= 64 {
        // Overlapping terms: every bit of both lies in the upper 64 bits of the window (the
        // smaller term needs no right shift, nothing reaches the sticky bit), so only the
        // upper half of the adder is active and the lower half stays zero.
        let big_hi = big.sig << (big_offset - 64) as u32;
        let small_hi = small.sig << (offset - 64) as u32;
        let hi = if trace.effective_sub {
            big_hi - small_hi
        } else {
            big_hi + small_hi
        };
        return (
            Unrounded {
                sign: big.sign,
                exp: window_lsb,
                sig: (hi as u128) << 64,
                sticky: false,
            },
            trace,
        );
    }
    add_aligned_wide(big, small, window_lsb, trace)
}

/// The full-width alignment of [`add_terms`]: the smaller term may reach into the lower half
/// of the window or below it (into the sticky bit). Inlined, so that the sum stays in
/// registers on both paths.
#[inline(always)]
fn add_aligned_wide(
    big: Term,
    small: Term,
    window_lsb: i32,
    mut trace: AddTrace,
) -> (Unrounded, AddTrace) {
    let big_sig = (big.sig as u128) << (big.lsb_exp - window_lsb) as u32;
    let offset = small.lsb_exp - window_lsb;
    let (small_sig, sticky) = if offset >= 0 {
        ((small.sig as u128) << offset as u32, false)
    } else {
        let shift = (-offset) as u32;
        trace.align_shift = shift.min(128);
        if shift >= 64 {
            (0, true)
        } else {
            let s = small.sig as u128;
            (s >> shift, s & ((1u128 << shift) - 1) != 0)
        }
    };
    trace.sticky = sticky;
    let sig = if trace.effective_sub {
        // big - (small_sig + f) with 0 < f < 1 when sticky: borrow one and keep the sticky.
        big_sig - small_sig - sticky as u128
    } else {
        big_sig + small_sig
    };
    (
        Unrounded {
            sign: big.sign,
            exp: window_lsb,
            sig,
            sticky,
        },
        trace,
    )
}

/// The sign of an exact zero sum under IEEE 754: operands of equal sign keep it; opposite
/// signs give `+0`, except `-0` when rounding down.
#[inline]
pub const fn exact_zero_sign(sign_x: bool, sign_y: bool, mode: RoundingMode) -> bool {
    if sign_x == sign_y {
        sign_x
    } else {
        matches!(mode, RoundingMode::Down)
    }
}

/// Result of [`add`], with the adder's stage fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AddResult {
    /// The rounded, packed sum and its flags.
    pub rounded: Rounded,
    /// The alignment stage.
    pub align: AddTrace,
}

/// Adds two encodings of format `fmt` with rounding `mode` (IEEE 754 addition, including
/// specials: NaN in gives the canonical NaN, Inf - Inf is invalid).
#[inline(always)]
pub fn add(fmt: Format, a_bits: u64, b_bits: u64, mode: RoundingMode) -> AddResult {
    let a = unpack(fmt, a_bits);
    let b = unpack(fmt, b_bits);
    let special = |bits: u64, flags: Flags| AddResult {
        rounded: Rounded {
            bits,
            flags,
            trace: Default::default(),
        },
        align: AddTrace::default(),
    };
    if a.is_nan() || b.is_nan() {
        let signaling = fmt.is_signaling_nan(a_bits) || fmt.is_signaling_nan(b_bits);
        return special(
            fmt.canonical_nan(),
            if signaling {
                Flags::INVALID
            } else {
                Flags::NONE
            },
        );
    }
    match (a.class, b.class) {
        (Class::Infinite, Class::Infinite) if a.sign != b.sign => {
            return special(fmt.canonical_nan(), Flags::INVALID)
        }
        (Class::Infinite, _) => return special(a_bits & fmt.mask(), Flags::NONE),
        (_, Class::Infinite) => return special(b_bits & fmt.mask(), Flags::NONE),
        _ => {}
    }
    let (sum, align) = add_terms(
        Term {
            sign: a.sign,
            lsb_exp: a.lsb_exp(),
            sig: a.sig,
        },
        Term {
            sign: b.sign,
            lsb_exp: b.lsb_exp(),
            sig: b.sig,
        },
    );
    let sum = if sum.sig == 0 && !sum.sticky {
        Unrounded {
            sign: exact_zero_sign(a.sign, b.sign, mode),
            ..sum
        }
    } else {
        sum
    };
    AddResult {
        rounded: round_pack(fmt, sum, mode, Overflow::Ieee),
        align,
    }
}
