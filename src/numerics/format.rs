//! Floating-point formats as data: one [`Format`] row per format, and the bit-level helpers
//! (field extraction, classification, special encodings) written once against that row.

/// How a format encodes its non-finite values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NonFinite {
    /// IEEE 754 style: exponent field all ones is Inf (fraction 0) or NaN (fraction != 0).
    Ieee,
    /// OCP E4M3 ("fn") style: no infinities; only exponent and fraction all ones is NaN, and
    /// the rest of the top binade holds ordinary normal numbers. E8M0 (the MX scale) is
    /// NaN-only too: its one NaN is `0xFF`.
    NanOnly,
    /// No infinity and no NaN (OCP FP6 E2M3/E3M2, FP4 E2M1): every encoding is a number,
    /// the top binade included.
    None,
}

/// A binary floating-point format described by a handful of constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    /// Short lower-case name used on the command line and in reports (`e4m3`, `fp16`, ...).
    pub name: &'static str,
    /// Width of the exponent field in bits.
    pub exp_bits: u32,
    /// Width of the fraction (trailing significand) field in bits.
    pub frac_bits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// Encoding of Inf and NaN.
    pub non_finite: NonFinite,
    /// True if the format has a sign bit (every format but the unsigned E8M0 scale).
    pub signed: bool,
}

/// OCP 8-bit E4M3 ("fn": finite, NaN-only), bias 7, max 448.
pub const E4M3: Format = Format {
    name: "e4m3",
    exp_bits: 4,
    frac_bits: 3,
    bias: 7,
    non_finite: NonFinite::NanOnly,
    signed: true,
};
/// OCP 8-bit E5M2 (IEEE-style specials), bias 15, max 57344.
pub const E5M2: Format = Format {
    name: "e5m2",
    exp_bits: 5,
    frac_bits: 2,
    bias: 15,
    non_finite: NonFinite::Ieee,
    signed: true,
};
/// IEEE 754 binary16.
pub const FP16: Format = Format {
    name: "fp16",
    exp_bits: 5,
    frac_bits: 10,
    bias: 15,
    non_finite: NonFinite::Ieee,
    signed: true,
};
/// bfloat16: FP32's exponent range with 7 fraction bits.
pub const BF16: Format = Format {
    name: "bf16",
    exp_bits: 8,
    frac_bits: 7,
    bias: 127,
    non_finite: NonFinite::Ieee,
    signed: true,
};
/// IEEE 754 binary32, the accumulator format.
pub const FP32: Format = Format {
    name: "fp32",
    exp_bits: 8,
    frac_bits: 23,
    bias: 127,
    non_finite: NonFinite::Ieee,
    signed: true,
};

/// TensorFloat-32: FP32's exponent range with FP16's 10 fraction bits (19 bits). Carried in
/// 32-bit containers with the low 13 bits zero.
pub const TF32: Format = Format {
    name: "tf32",
    exp_bits: 8,
    frac_bits: 10,
    bias: 127,
    non_finite: NonFinite::Ieee,
    signed: true,
};
/// OCP FP4 E2M1 (MX element): bias 1, values 0, 0.5, 1, 1.5, 2, 3, 4, 6; no Inf, no NaN.
pub const E2M1: Format = Format {
    name: "e2m1",
    exp_bits: 2,
    frac_bits: 1,
    bias: 1,
    non_finite: NonFinite::None,
    signed: true,
};
/// OCP FP6 E2M3 (MX element): bias 1, max 7.5; no Inf, no NaN.
pub const E2M3: Format = Format {
    name: "e2m3",
    exp_bits: 2,
    frac_bits: 3,
    bias: 1,
    non_finite: NonFinite::None,
    signed: true,
};
/// OCP FP6 E3M2 (MX element): bias 3, max 28; no Inf, no NaN.
pub const E3M2: Format = Format {
    name: "e3m2",
    exp_bits: 3,
    frac_bits: 2,
    bias: 3,
    non_finite: NonFinite::None,
    signed: true,
};
/// OCP E8M0, the MX block scale: 8 exponent bits, bias 127, value `2^(e - 127)`; no sign,
/// no zero, `0xFF` is NaN.
pub const E8M0: Format = Format {
    name: "e8m0",
    exp_bits: 8,
    frac_bits: 0,
    bias: 127,
    non_finite: NonFinite::NanOnly,
    signed: false,
};

/// IEEE 754 binary64: a host input format only (values given to `convert` as float64), not a
/// datapath format, so it is not in [`ALL_FORMATS`].
pub const FP64: Format = Format {
    name: "fp64",
    exp_bits: 11,
    frac_bits: 52,
    bias: 1023,
    non_finite: NonFinite::Ieee,
    signed: true,
};

/// Every floating-point format the project knows, in table order.
pub const ALL_FORMATS: [Format; 10] = [E4M3, E5M2, FP16, BF16, TF32, FP32, E2M1, E2M3, E3M2, E8M0];

/// The multiplier input formats (the tensor core's A and B operands). TF32 operands are held
/// as 19-bit patterns (FP32 containers shifted right by 13).
pub const INPUT_FORMATS: [Format; 5] = [E4M3, E5M2, FP16, BF16, TF32];

/// The accumulator (output) formats of a dot product: FP32 (the default) and FP16.
pub const ACC_FORMATS: [Format; 2] = [FP32, FP16];

impl Format {
    /// Looks a format up by its name (case-insensitive); `None` if unknown.
    pub fn by_name(name: &str) -> Option<Format> {
        ALL_FORMATS
            .iter()
            .copied()
            .find(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// Total width in bits (sign + exponent + fraction).
    #[inline]
    pub const fn width(&self) -> u32 {
        self.signed as u32 + self.exp_bits + self.frac_bits
    }

    /// Precision in bits, hidden bit included.
    #[inline]
    pub const fn precision(&self) -> u32 {
        self.frac_bits + 1
    }

    /// Mask of all `width()` bits.
    #[inline]
    pub const fn mask(&self) -> u64 {
        if self.width() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width()) - 1
        }
    }

    /// Position of the sign bit (0, no bit, for an unsigned format).
    #[inline]
    pub const fn sign_bit(&self) -> u64 {
        if self.signed {
            1u64 << (self.exp_bits + self.frac_bits)
        } else {
            0
        }
    }

    /// Largest exponent-field value (all ones).
    #[inline]
    pub const fn exp_field_max(&self) -> u64 {
        (1u64 << self.exp_bits) - 1
    }

    /// Mask of the fraction field.
    #[inline]
    pub const fn frac_mask(&self) -> u64 {
        (1u64 << self.frac_bits) - 1
    }

    /// Smallest normal exponent (unbiased); subnormals share it.
    #[inline]
    pub const fn emin(&self) -> i32 {
        1 - self.bias
    }

    /// Largest finite exponent (unbiased).
    #[inline]
    pub const fn emax(&self) -> i32 {
        match self.non_finite {
            NonFinite::Ieee => self.exp_field_max() as i32 - 1 - self.bias,
            // E8M0: the all-ones field is the NaN, so the top exponent is one below it.
            NonFinite::NanOnly if self.frac_bits == 0 => {
                self.exp_field_max() as i32 - 1 - self.bias
            }
            NonFinite::NanOnly | NonFinite::None => self.exp_field_max() as i32 - self.bias,
        }
    }

    /// Magnitude bits (sign clear) of the largest finite value.
    #[inline]
    pub const fn max_finite_magnitude(&self) -> u64 {
        match self.non_finite {
            NonFinite::Ieee => ((self.exp_field_max() - 1) << self.frac_bits) | self.frac_mask(),
            NonFinite::NanOnly if self.frac_bits == 0 => {
                (self.exp_field_max() - 1) << self.frac_bits
            }
            NonFinite::NanOnly => (self.exp_field_max() << self.frac_bits) | (self.frac_mask() - 1),
            NonFinite::None => (self.exp_field_max() << self.frac_bits) | self.frac_mask(),
        }
    }

    /// The signed largest finite value.
    #[inline]
    pub const fn max_finite(&self, sign: bool) -> u64 {
        self.with_sign(self.max_finite_magnitude(), sign)
    }

    /// The signed zero.
    #[inline]
    pub const fn zero(&self, sign: bool) -> u64 {
        self.with_sign(0, sign)
    }

    /// The signed infinity, or `None` for formats without one (E4M3).
    #[inline]
    pub const fn infinity(&self, sign: bool) -> Option<u64> {
        match self.non_finite {
            NonFinite::Ieee => Some(self.with_sign(self.exp_field_max() << self.frac_bits, sign)),
            NonFinite::NanOnly | NonFinite::None => None,
        }
    }

    /// True if the format encodes NaN (every format but FP6 and FP4).
    #[inline]
    pub const fn has_nan(&self) -> bool {
        !matches!(self.non_finite, NonFinite::None)
    }

    /// The project's one canonical NaN for this format: sign clear, quiet. IEEE-style
    /// formats set the exponent field and the fraction MSB only (FP32 `0x7FC00000`, FP16
    /// `0x7E00`, BF16 `0x7FC0`, E5M2 `0x7E`); E4M3 has a single NaN magnitude, `0x7F`, and
    /// E8M0 `0xFF`. Formats without NaN (FP6, FP4; see [`Format::has_nan`]) have none: for
    /// them this is the largest finite magnitude, the value their conversions clamp NaN to
    /// never arises because callers check [`Format::has_nan`] first.
    #[inline]
    pub const fn canonical_nan(&self) -> u64 {
        match self.non_finite {
            NonFinite::Ieee => {
                (self.exp_field_max() << self.frac_bits) | (1u64 << (self.frac_bits - 1))
            }
            NonFinite::NanOnly => (self.exp_field_max() << self.frac_bits) | self.frac_mask(),
            NonFinite::None => self.max_finite_magnitude(),
        }
    }

    /// Overflow beyond the largest finite value: signed Inf, or NaN where the format has no
    /// infinity (the OCP non-saturating rule for E4M3), or the signed largest finite value
    /// where it has neither (FP6, FP4 clamp, as the OCP MX specification says).
    #[inline]
    pub const fn overflow_value(&self, sign: bool) -> u64 {
        match (self.infinity(sign), self.non_finite) {
            (Some(inf), _) => inf,
            (None, NonFinite::None) => self.max_finite(sign),
            (None, _) => self.canonical_nan(),
        }
    }

    /// Sets or clears the sign bit of a magnitude.
    #[inline]
    pub const fn with_sign(&self, magnitude: u64, sign: bool) -> u64 {
        if sign {
            magnitude | self.sign_bit()
        } else {
            magnitude
        }
    }

    /// Sign bit of an encoding.
    #[inline]
    pub const fn sign_of(&self, bits: u64) -> bool {
        bits & self.sign_bit() != 0
    }

    /// Exponent field of an encoding.
    #[inline]
    pub const fn exp_field(&self, bits: u64) -> u64 {
        (bits >> self.frac_bits) & self.exp_field_max()
    }

    /// Fraction field of an encoding.
    #[inline]
    pub const fn frac_field(&self, bits: u64) -> u64 {
        bits & self.frac_mask()
    }

    /// Classifies an encoding (bits above `width()` are ignored).
    #[inline]
    pub const fn classify(&self, bits: u64) -> Class {
        let e = self.exp_field(bits);
        let f = self.frac_field(bits);
        if e == 0 && self.frac_bits == 0 && !self.signed {
            // E8M0 has no zero: exponent field 0 is 2^-127.
            Class::Normal
        } else if e == 0 {
            if f == 0 {
                Class::Zero
            } else {
                Class::Subnormal
            }
        } else if e == self.exp_field_max() {
            match self.non_finite {
                NonFinite::Ieee => {
                    if f == 0 {
                        Class::Infinite
                    } else {
                        Class::Nan
                    }
                }
                NonFinite::NanOnly => {
                    if f == self.frac_mask() {
                        Class::Nan
                    } else {
                        Class::Normal
                    }
                }
                NonFinite::None => Class::Normal,
            }
        } else {
            Class::Normal
        }
    }

    /// True if the encoding is a NaN.
    #[inline]
    pub const fn is_nan(&self, bits: u64) -> bool {
        matches!(self.classify(bits), Class::Nan)
    }

    /// True for an IEEE signaling NaN (fraction MSB clear). E4M3's single NaN is quiet.
    #[inline]
    pub const fn is_signaling_nan(&self, bits: u64) -> bool {
        matches!(self.non_finite, NonFinite::Ieee)
            && self.is_nan(bits)
            && bits & (1u64 << (self.frac_bits - 1)) == 0
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// The class of an encoded value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// +0 or -0.
    Zero,
    /// Nonzero with exponent field 0 (no hidden bit).
    Subnormal,
    /// Ordinary normal number.
    Normal,
    /// +Inf or -Inf.
    Infinite,
    /// Any NaN.
    Nan,
}

impl Class {
    /// Zero, subnormal or normal.
    #[inline]
    pub const fn is_finite(self) -> bool {
        matches!(self, Class::Zero | Class::Subnormal | Class::Normal)
    }
}
