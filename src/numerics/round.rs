//! The one normalize-round-pack step that every unit calls (multiplier, adder, dot-product
//! unit, conversions): leading-zero count, normalize shift, guard/sticky, round increment,
//! overflow and underflow handling, pack.

use super::flags::{Flags, Loss, RoundingMode};
use super::format::Format;
use std::ops::{Add, BitOr, Shl, Shr};

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

impl RoundTrace {
    /// All fields zero: what a stage that did not round (a special result) shows.
    pub const IDLE: RoundTrace = RoundTrace {
        lzc: 0,
        norm_exp: 0,
        shift: 0,
        subnormal: false,
        guard: false,
        sticky: false,
        round_inc: false,
    };
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

/// The significand register of the normalizer. The rounding logic is written once against
/// this trait and instantiated for a 64-bit and a 128-bit register: [`round_pack`] picks the
/// 64-bit one whenever every nonzero bit of the input fits in one half of the 128-bit word,
/// which is the common case (narrow products, and sums whose terms overlap).
trait Register:
    Copy
    + PartialEq
    + PartialOrd
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
    + BitOr<Output = Self>
    + Add<Output = Self>
{
    /// Width in bits.
    const BITS: u32;
    /// The value 0.
    const ZERO: Self;
    /// The value 1.
    const ONE: Self;
    /// Leading-zero count.
    fn lzc(self) -> u32;
    /// The low 64 bits (the rounded significand always fits).
    fn low(self) -> u64;
}

macro_rules! impl_register {
    ($($t:ty),*) => {$(
        impl Register for $t {
            const BITS: u32 = <$t>::BITS;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)]
            fn lzc(self) -> u32 {
                self.leading_zeros()
            }
            #[inline(always)]
            fn low(self) -> u64 {
                self as u64
            }
        }
    )*};
}
impl_register!(u64, u128);

/// [`shift_right_loss`] for either register width.
#[inline(always)]
fn shift_right_loss_reg<R: Register>(sig: R, shift: u32) -> (R, Loss) {
    if shift == 0 {
        (sig, Loss::ExactlyZero)
    } else if shift < R::BITS {
        // The discarded bits, moved to the top: the guard is the top bit, the rest is sticky.
        let rem = sig << (R::BITS - shift);
        (
            sig >> shift,
            Loss::from_guard_sticky(rem >> (R::BITS - 1) != R::ZERO, rem << 1 != R::ZERO),
        )
    } else if shift == R::BITS {
        (
            R::ZERO,
            Loss::from_guard_sticky(sig >> (R::BITS - 1) != R::ZERO, sig << 1 != R::ZERO),
        )
    } else {
        (R::ZERO, Loss::from_guard_sticky(false, sig != R::ZERO))
    }
}

/// Shifts `sig` right by `shift` (any size) and reports what fell off as a [`Loss`].
#[inline]
pub fn shift_right_loss(sig: u128, shift: u32) -> (u128, Loss) {
    shift_right_loss_reg(sig, shift)
}

/// Whether `mode` adds one ulp to a truncated magnitude `kept` of sign `sign` given `loss`.
#[inline]
pub const fn round_increment(mode: RoundingMode, sign: bool, kept: u128, loss: Loss) -> bool {
    match mode {
        // Half an ulp or more was discarded (the guard bit), and more than half (the sticky
        // bit) or exactly half with an odd kept LSB (ties to even): a few gates on the guard,
        // sticky and LSB bits, as the hardware's round stage is.
        // (Gates, not branches: `&` and `|` evaluate both sides, so no outcome is predicted.)
        RoundingMode::NearestEven => loss.guard() & (loss.sticky() | (kept & 1 == 1)),
        RoundingMode::NearestAway => loss.guard(),
        RoundingMode::TowardZero | RoundingMode::ToOdd => false,
        RoundingMode::Down => sign && loss.is_inexact(),
        RoundingMode::Up => !sign && loss.is_inexact(),
    }
}

/// Rounds `kept` (truncated significand, at most `precision` bits, so it fits in 64 bits)
/// per mode; round-to-odd sets the LSB when inexact.
#[inline(always)]
const fn apply_rounding(mode: RoundingMode, sign: bool, kept: u64, loss: Loss) -> (u64, bool) {
    let inc = round_increment(mode, sign, kept as u128, loss);
    let mut out = kept + inc as u64;
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
            RoundingMode::NearestEven | RoundingMode::NearestAway => false,
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
///
/// The normalizer is 128 bits wide (the trace reports its leading-zero count and shift). When
/// every nonzero bit of the input lies in one 64-bit half of that word (a narrow product or
/// conversion input in the low half; a sum of overlapping terms from [`add_terms`] in the high
/// half) the same logic runs on a 64-bit register, with the trace fields offset so that they
/// read exactly as the 128-bit normalizer's.
///
/// [`add_terms`]: super::add::add_terms
#[inline(always)]
pub fn round_pack(fmt: Format, x: Unrounded, mode: RoundingMode, policy: Overflow) -> Rounded {
    let hi = (x.sig >> 64) as u64;
    let lo = x.sig as u64;
    if hi == 0 && (lo >> 63 == 0 || !x.sticky) {
        // Low half: the 128-bit word has 64 more leading zeros.
        let (sig, lsb_exp) = jam_sticky(lo, x.exp, x.sticky);
        normalize_round::<u64, false>(fmt, x.sign, sig, lsb_exp, 64, 0, mode, policy)
    } else if lo == 0 && !x.sticky {
        // High half: the register's LSB sits 64 bits above the word's, so the word's shift is
        // 64 more.
        normalize_round::<u64, false>(fmt, x.sign, hi, x.exp + 64, 0, 64, mode, policy)
    } else {
        normalize_round_wide(fmt, x, mode, policy)
    }
}

/// The full 128-bit normalizer, for inputs with nonzero bits in both halves (far-apart or
/// wide terms, the sticky-jammed results of long alignments). Inlined like the rest: an
/// out-of-line call returning `Rounded` through memory would make every path merge its
/// result through the stack (measured: +50% instructions on the FP32 add).
#[inline(always)]
fn normalize_round_wide(
    fmt: Format,
    x: Unrounded,
    mode: RoundingMode,
    policy: Overflow,
) -> Rounded {
    let (sig, lsb_exp) = jam_sticky(x.sig, x.exp, x.sticky);
    normalize_round::<u128, false>(fmt, x.sign, sig, lsb_exp, 0, 0, mode, policy)
}

/// [`round_pack`] of a nonzero 64-bit significand `sig` (sign `sign`, LSB exponent
/// `lsb_exp`, no sticky below it) that the caller has shown to round to a normal, finite
/// number of `fmt`: its leading one's exponent lies in `[emin, emax)`, so the rounded value
/// cannot reach the subnormal range or overflow (a carry out of the significand lands at most
/// on `emax`). The same normalize-round-pack logic, with the subnormal, tininess and
/// overflow paths left out; debug builds check the caller's claim.
#[inline(always)]
pub fn round_pack_normal(
    fmt: Format,
    sign: bool,
    sig: u64,
    lsb_exp: i32,
    mode: RoundingMode,
) -> Rounded {
    normalize_round::<u64, true>(fmt, sign, sig, lsb_exp, 64, 0, mode, Overflow::Ieee)
}

/// Jams the input sticky into one extra bit below the LSB (see the contract on [`Unrounded`]):
/// returns the significand register and the exponent of its LSB.
#[inline(always)]
fn jam_sticky<R: Register>(sig: R, exp: i32, sticky: bool) -> (R, i32) {
    if sticky {
        ((sig << 1) | R::ONE, exp - 1)
    } else {
        (sig, exp)
    }
}

/// The normalize-round-pack logic on a register `sig` whose LSB has exponent `lsb_exp`.
/// `lzc_extra` and `shift_extra` translate the register's leading-zero count and shift into
/// those of the 128-bit normalizer word for the trace. With `NORMAL` the caller guarantees a
/// normal, finite result ([`round_pack_normal`]).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn normalize_round<R: Register, const NORMAL: bool>(
    fmt: Format,
    sign: bool,
    sig: R,
    lsb_exp: i32,
    lzc_extra: u32,
    shift_extra: i32,
    mode: RoundingMode,
    policy: Overflow,
) -> Rounded {
    let mut trace = RoundTrace::default();
    let lzc = sig.lzc();
    trace.lzc = lzc + lzc_extra;
    if sig == R::ZERO {
        return Rounded {
            bits: fmt.zero(sign),
            flags: Flags::NONE,
            trace,
        };
    }
    let frac_bits = fmt.frac_bits as i32;
    let msb = (R::BITS - 1 - lzc) as i32;
    let norm_exp = lsb_exp + msb;
    trace.norm_exp = norm_exp;
    debug_assert!(!NORMAL || (norm_exp >= fmt.emin() && norm_exp < fmt.emax()));
    let subnormal = !NORMAL && norm_exp < fmt.emin();
    trace.subnormal = subnormal;
    let ulp_exp = if NORMAL {
        norm_exp
    } else {
        norm_exp.max(fmt.emin())
    } - frac_bits;
    let shift = ulp_exp - lsb_exp;
    trace.shift = shift + shift_extra;

    // The kept significand has at most `precision` bits, so it fits in 64 bits.
    let (kept, loss) = if shift <= 0 {
        ((sig << (-shift) as u32).low(), Loss::ExactlyZero)
    } else {
        let (k, l) = shift_right_loss_reg(sig, shift as u32);
        (k.low(), l)
    };
    trace.guard = loss.guard();
    trace.sticky = loss.sticky();
    let (rounded, inc) = apply_rounding(mode, sign, kept, loss);
    trace.round_inc = inc;
    let inexact = loss.is_inexact();

    // Tininess after rounding: round at full precision with an unbounded exponent and see
    // whether the magnitude still lies below 2^emin.
    // (The check takes the two fields it needs, not the format row: a row passed by value
    // to an out-of-line function is stored to the stack on every path.)
    let tiny = subnormal
        && tiny_after_rounding(
            (fmt.emin(), fmt.frac_bits),
            sign,
            sig,
            lsb_exp,
            norm_exp,
            mode,
        );

    // Pack: the hidden bit of a normal carries into the exponent field, so a significand
    // that rounds up to the next binade (or a subnormal that rounds up to the smallest
    // normal) increments the exponent by itself.
    let exp_base: u64 = if subnormal {
        0
    } else {
        (norm_exp + fmt.bias - 1) as u64
    };
    let magnitude = (exp_base << frac_bits) + rounded;
    let mut flags = Flags {
        inexact,
        underflow: tiny && inexact,
        ..Flags::NONE
    };
    let bits = if !NORMAL && magnitude > fmt.max_finite_magnitude() {
        flags.overflow = true;
        flags.inexact = true;
        overflow_result(fmt, sign, mode, policy)
    } else {
        fmt.with_sign(magnitude, sign)
    };
    Rounded { bits, flags, trace }
}

/// Tininess of a subnormal-range result, detected after rounding: rounds `sig` to the
/// format's full precision as though the exponent range were unbounded and checks whether the
/// result still lies below `2^emin`.
#[cold]
#[inline(never)]
fn tiny_after_rounding<R: Register>(
    (emin, frac_bits): (i32, u32),
    sign: bool,
    sig: R,
    lsb_exp: i32,
    norm_exp: i32,
    mode: RoundingMode,
) -> bool {
    if norm_exp < emin - 1 {
        return true;
    }
    let frac_bits = frac_bits as i32;
    let full_shift = norm_exp - frac_bits - lsb_exp;
    let (k, l) = if full_shift <= 0 {
        ((sig << (-full_shift) as u32).low(), Loss::ExactlyZero)
    } else {
        let (k, l) = shift_right_loss_reg(sig, full_shift as u32);
        (k.low(), l)
    };
    let (r, _) = apply_rounding(mode, sign, k, l);
    r < (1u64 << (frac_bits + 1))
}
