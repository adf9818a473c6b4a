//! Stage 1 of every unit: unpack an encoding into sign, unbiased exponent and integer
//! significand (hidden bit made explicit).

use super::format::{Class, Format, NonFinite};

/// An unpacked operand. For finite values the magnitude is
/// `sig * 2^(exp - frac_bits)`: `sig` carries the hidden bit for normals and none for
/// subnormals, whose `exp` is the format's minimum exponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Unpacked {
    /// Sign bit.
    pub sign: bool,
    /// Class of the input.
    pub class: Class,
    /// Unbiased exponent of the hidden-bit position (`emin` for zeros and subnormals).
    pub exp: i32,
    /// Integer significand with `frac_bits` fraction bits (0 for zeros; undefined payload for
    /// Inf and NaN, which is kept as the raw fraction).
    pub sig: u64,
    /// Fraction bits of `sig` (the format's `frac_bits`).
    pub frac_bits: u32,
}

/// Unpacks `bits` (only the low `fmt.width()` bits are looked at).
#[inline(always)]
pub fn unpack(fmt: Format, bits: u64) -> Unpacked {
    let sign = fmt.sign_of(bits);
    let class = fmt.classify(bits);
    let exp_field = fmt.exp_field(bits);
    let frac = fmt.frac_field(bits);
    let (exp, sig) = match class {
        Class::Zero | Class::Subnormal => (fmt.emin(), frac),
        Class::Normal => (exp_field as i32 - fmt.bias, frac | (1u64 << fmt.frac_bits)),
        Class::Infinite | Class::Nan => (exp_field as i32 - fmt.bias, frac),
    };
    Unpacked {
        sign,
        class,
        exp,
        sig,
        frac_bits: fmt.frac_bits,
    }
}

impl Unpacked {
    /// True for zeros.
    pub const fn is_zero(&self) -> bool {
        matches!(self.class, Class::Zero)
    }

    /// True for NaNs.
    pub const fn is_nan(&self) -> bool {
        matches!(self.class, Class::Nan)
    }

    /// True for infinities.
    pub const fn is_inf(&self) -> bool {
        matches!(self.class, Class::Infinite)
    }

    /// The exponent of the significand's least significant bit: for finite values the
    /// magnitude is `sig * 2^lsb_exp()`.
    pub const fn lsb_exp(&self) -> i32 {
        self.exp - self.frac_bits as i32
    }
}

/// The test on an unpacked operand, here beside [`Unpacked`] (the format's file knows nothing
/// of unpacking).
impl Format {
    /// [`Format::is_signaling_nan`] for an already unpacked operand.
    #[inline]
    pub const fn is_signaling_nan_class(&self, u: &Unpacked) -> bool {
        matches!(self.non_finite, NonFinite::Ieee)
            && matches!(u.class, Class::Nan)
            && u.sig & (1u64 << (self.frac_bits - 1)) == 0
    }
}
