//! The one normalize-round-pack step that every unit calls (multiplier, adder, dot-product
//! unit, conversions): leading-zero count, normalize shift, guard/sticky, round increment,
//! overflow and underflow handling, pack.

use super::flags::{Flags, Loss, RoundingMode};
use super::format::Format;

/// What to do when the rounded magnitude exceeds the largest finite value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Overflow {
    /// IEEE 754: Inf or max-finite depending on the rounding direction; formats without an
    /// infinity (E4M3) give NaN where IEEE would give Inf (OCP non-saturating rule).
    Ieee,
    /// `satfinite`: every overflow becomes the signed largest finite value.
    Saturate,
}

/// An exact-or-sticky magnitude waiting to be rounded: `sig * 2^exp`, plus `sticky` if
/// nonzero bits lie strictly below `sig`'s least significant bit.
///
/// Contract when `sticky` is set: `sig`'s LSB must lie at or below the guard position of the
/// target format (keep at least `precision + 1` bits below the leading one), otherwise the
/// rounding cannot be decided; `sig` must also leave its top bit free.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Unrounded {
    /// Sign of the value (also the sign of a zero result).
    pub sign: bool,
    /// Exponent of `sig`'s least significant bit.
    pub exp: i32,
    /// Integer significand, not normalized.
    pub sig: u128,
    /// OR of all bits already discarded below `sig`.
    pub sticky: bool,
}

/// The intermediate fields of one normalize-round-pack, as hardware would expose them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RoundTrace {
    /// Leading-zero count of the 128-bit significand entering the normalizer.
    pub lzc: u32,
    /// Unbiased exponent of the leading one (before rounding).
    pub norm_exp: i32,
    /// Right shift applied to reach the result's ulp (negative: left shift).
    pub shift: i32,
    /// True if the result was denormalized (exponent below `emin`).
    pub subnormal: bool,
    /// Guard bit (first discarded bit).
    pub guard: bool,
    /// Sticky bit (OR of the discarded bits after the guard, and of the input sticky).
    pub sticky: bool,
    /// 1 if the rounding added an ulp to the truncated significand.
    pub round_inc: bool,
}

/// Result of [`round_pack`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rounded {
    /// The packed encoding in the target format.
    pub bits: u64,
    /// IEEE flags (invalid is never raised here).
    pub flags: Flags,
    /// The stage fields, for tracing.
    pub trace: RoundTrace,
}

/// Shifts `sig` right by `shift` (any size) and reports what fell off as a [`Loss`].
#[inline]
pub fn shift_right_loss(sig: u128, shift: u32) -> (u128, Loss) {
    match shift {
        0 => (sig, Loss::ExactlyZero),
        1..=127 => {
            // The discarded bits, moved to the top: the guard is bit 127, the rest is sticky.
            let rem = sig << (128 - shift);
            (
                sig >> shift,
                Loss::from_guard_sticky(rem >> 127 != 0, rem << 1 != 0),
            )
        }
        128 => (0, Loss::from_guard_sticky(sig >> 127 != 0, sig << 1 != 0)),
        _ => (0, Loss::from_guard_sticky(false, sig != 0)),
    }
}

/// Whether `mode` adds one ulp to a truncated magnitude `kept` of sign `sign` given `loss`.
#[inline]
pub const fn round_increment(mode: RoundingMode, sign: bool, kept: u128, loss: Loss) -> bool {
    match mode {
        RoundingMode::NearestEven => match loss {
            Loss::MoreThanHalf => true,
            Loss::ExactlyHalf => kept & 1 == 1,
            _ => false,
        },
        RoundingMode::TowardZero | RoundingMode::ToOdd => false,
        RoundingMode::Down => sign && loss.is_inexact(),
        RoundingMode::Up => !sign && loss.is_inexact(),
    }
}

/// Rounds `kept` (truncated significand) per mode; round-to-odd sets the LSB when inexact.
#[inline]
const fn apply_rounding(mode: RoundingMode, sign: bool, kept: u128, loss: Loss) -> (u128, bool) {
    let inc = round_increment(mode, sign, kept, loss);
    let mut out = kept + inc as u128;
    if matches!(mode, RoundingMode::ToOdd) && loss.is_inexact() {
        out |= 1;
    }
    (out, inc)
}

/// The value an overflow produces under `mode` and `policy`.
#[inline]
pub const fn overflow_result(fmt: Format, sign: bool, mode: RoundingMode, policy: Overflow) -> u64 {
    let to_max = match policy {
        Overflow::Saturate => true,
        Overflow::Ieee => match mode {
            RoundingMode::NearestEven => false,
            RoundingMode::TowardZero | RoundingMode::ToOdd => true,
            RoundingMode::Down => !sign,
            RoundingMode::Up => sign,
        },
    };
    if to_max {
        fmt.max_finite(sign)
    } else {
        fmt.overflow_value(sign)
    }
}

/// Normalizes, rounds and packs `x` into `fmt`.
///
/// Underflow is signalled with tininess detected after rounding (as though the exponent
/// range were unbounded), and only when the result is also inexact (IEEE default handling).
/// An exact zero keeps `x.sign`; the caller decides the sign of exact zero sums.
#[inline]
pub fn round_pack(fmt: Format, x: Unrounded, mode: RoundingMode, policy: Overflow) -> Rounded {
    let mut trace = RoundTrace::default();
    // Jam the input sticky into one extra bit below the LSB (see the contract on `Unrounded`).
    let (sig, lsb_exp) = if x.sticky {
        ((x.sig << 1) | 1, x.exp - 1)
    } else {
        (x.sig, x.exp)
    };
    trace.lzc = sig.leading_zeros();
    if sig == 0 {
        return Rounded {
            bits: fmt.zero(x.sign),
            flags: Flags::NONE,
            trace,
        };
    }
    let frac_bits = fmt.frac_bits as i32;
    let msb = 127 - trace.lzc as i32;
    let norm_exp = lsb_exp + msb;
    trace.norm_exp = norm_exp;
    let subnormal = norm_exp < fmt.emin();
    trace.subnormal = subnormal;
    let ulp_exp = norm_exp.max(fmt.emin()) - frac_bits;
    let shift = ulp_exp - lsb_exp;
    trace.shift = shift;

    let (kept, loss) = if shift <= 0 {
        (sig << (-shift) as u32, Loss::ExactlyZero)
    } else {
        shift_right_loss(sig, shift as u32)
    };
    trace.guard = loss.guard();
    trace.sticky = loss.sticky();
    let (rounded, inc) = apply_rounding(mode, x.sign, kept, loss);
    trace.round_inc = inc;
    let inexact = loss.is_inexact();

    // Tininess after rounding: round at full precision with an unbounded exponent and see
    // whether the magnitude still lies below 2^emin.
    let tiny = if !subnormal {
        false
    } else if norm_exp < fmt.emin() - 1 {
        true
    } else {
        let full_shift = norm_exp - frac_bits - lsb_exp;
        let (k, l) = if full_shift <= 0 {
            (sig << (-full_shift) as u32, Loss::ExactlyZero)
        } else {
            shift_right_loss(sig, full_shift as u32)
        };
        let (r, _) = apply_rounding(mode, x.sign, k, l);
        r < (1u128 << (frac_bits + 1))
    };

    // Pack: the hidden bit of a normal carries into the exponent field, so a significand
    // that rounds up to the next binade (or a subnormal that rounds up to the smallest
    // normal) increments the exponent by itself.
    let exp_base: i64 = if subnormal {
        0
    } else {
        (norm_exp + fmt.bias - 1) as i64
    };
    let magnitude = ((exp_base as u128) << frac_bits) + rounded;
    let mut flags = Flags {
        inexact,
        underflow: tiny && inexact,
        ..Flags::NONE
    };
    let bits = if magnitude > fmt.max_finite_magnitude() as u128 {
        flags.overflow = true;
        flags.inexact = true;
        overflow_result(fmt, x.sign, mode, policy)
    } else {
        fmt.with_sign(magnitude as u64, x.sign)
    };
    Rounded { bits, flags, trace }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_right_loss_edges() {
        let top = 1u128 << 127;
        assert_eq!(shift_right_loss(0b1011, 0), (0b1011, Loss::ExactlyZero));
        assert_eq!(shift_right_loss(0b1011, 1), (0b101, Loss::ExactlyHalf));
        assert_eq!(shift_right_loss(0b1011, 2), (0b10, Loss::MoreThanHalf));
        assert_eq!(shift_right_loss(0b1001, 3), (0b1, Loss::LessThanHalf));
        assert_eq!(shift_right_loss(0b1000, 3), (0b1, Loss::ExactlyZero));
        assert_eq!(shift_right_loss(top | 1, 127), (1, Loss::LessThanHalf));
        assert_eq!(shift_right_loss(top, 128), (0, Loss::ExactlyHalf));
        assert_eq!(shift_right_loss(top | 1, 128), (0, Loss::MoreThanHalf));
        assert_eq!(shift_right_loss(1, 128), (0, Loss::LessThanHalf));
        assert_eq!(shift_right_loss(top, 129), (0, Loss::LessThanHalf));
        assert_eq!(shift_right_loss(0, 200), (0, Loss::ExactlyZero));
    }
}
