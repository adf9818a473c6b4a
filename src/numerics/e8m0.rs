//! Rounding into E8M0, the MX block scale: an unsigned power of two `2^(e - 127)` for
//! exponent fields `e` = 0..254, `0xFF` NaN, no zero, no sign.
//!
//! The shared [`round_pack`](super::round::round_pack) assumes a signed format whose exponent
//! field 0 holds zero and the subnormals; E8M0's field 0 is the ordinary value `2^-127`, so the
//! conversion has its own small rounder. The rules (those of ml_dtypes' `float8_e8m0fnu` for
//! round-to-nearest-even, extended to every mode):
//! - a positive finite `x` rounds to a power of two: the kept significand is the single digit
//!   1, so a tie (`x = 1.5 * 2^k`) rounds up under both `rne` and `rna` (the kept digit is
//!   odd), and `rto` is the same as `rtz` (the kept digit is already odd);
//! - below `2^-127` (the smallest value; there is no zero to round to) the result is `0x00`,
//!   with `underflow` and `inexact`;
//! - above `2^127` after rounding: the overflow rule of the other formats
//!   ([`super::round::overflow_result`]): NaN for `rne`/`rna`/`rup` when not
//!   saturating, else the largest value `0xFE` (`2^127`);
//! - zero, any negative value and -Inf have no encoding: NaN with `invalid`; +Inf is NaN with
//!   `invalid`, or `0xFE` with `inexact` when saturating; NaN stays NaN.

use super::flags::{Flags, Loss, RoundingMode};
use super::format::{Class, Format, E8M0};
use super::round::{overflow_result, round_increment, Overflow, RoundTrace, Rounded};
use super::unpack::Unpacked;

/// True for the exponent-only scale format (unsigned, no fraction bits): E8M0.
pub const fn is_exponent_only(fmt: Format) -> bool {
    !fmt.signed && fmt.frac_bits == 0
}

/// Rounds the unpacked value `u` (any class) into E8M0 under `mode` and `policy` (see the
/// module documentation). `signaling` says whether a NaN input was a signaling one.
pub fn round_to_e8m0(
    u: &Unpacked,
    signaling: bool,
    mode: RoundingMode,
    policy: Overflow,
) -> Rounded {
    let nan = E8M0.canonical_nan();
    let special = |bits: u64, flags: Flags| Rounded {
        bits,
        flags,
        trace: RoundTrace::IDLE,
    };
    match u.class {
        Class::Nan if signaling => return special(nan, Flags::INVALID),
        Class::Nan => return special(nan, Flags::NONE),
        Class::Infinite if !u.sign && policy == Overflow::Saturate => {
            return special(
                E8M0.max_finite(false),
                Flags {
                    inexact: true,
                    ..Flags::NONE
                },
            )
        }
        Class::Infinite | Class::Zero => return special(nan, Flags::INVALID),
        _ if u.sign => return special(nan, Flags::INVALID),
        _ => {}
    }
    // Positive finite: sig * 2^lsb, sig != 0.
    let sig = u.sig;
    let msb = 63 - sig.leading_zeros() as i32;
    let norm_exp = u.lsb_exp() + msb;
    let below = sig & ((1u64 << msb) - 1);
    let loss = if msb == 0 {
        Loss::ExactlyZero
    } else {
        let half = 1u64 << (msb - 1);
        Loss::from_guard_sticky(below & half != 0, below & (half - 1) != 0)
    };
    let inc = round_increment(mode, false, 1, loss);
    let exp = norm_exp + inc as i32;
    let mut trace = RoundTrace {
        norm_exp,
        guard: loss.guard(),
        sticky: loss.sticky(),
        round_inc: inc,
        ..RoundTrace::IDLE
    };
    let inexact = loss.is_inexact();
    let min_exp = -E8M0.bias;
    let max_exp = E8M0.emax(); // 127: the field 0xFF is the NaN
    if exp < min_exp {
        trace.subnormal = true;
        return Rounded {
            bits: 0,
            flags: Flags {
                underflow: true,
                inexact: true,
                ..Flags::NONE
            },
            trace,
        };
    }
    if exp > max_exp {
        return Rounded {
            bits: overflow_result(E8M0, false, mode, policy),
            flags: Flags {
                overflow: true,
                inexact: true,
                ..Flags::NONE
            },
            trace,
        };
    }
    Rounded {
        bits: (exp + E8M0.bias) as u64,
        flags: Flags {
            inexact,
            ..Flags::NONE
        },
        trace,
    }
}
