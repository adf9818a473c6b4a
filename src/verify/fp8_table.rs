//! Independent references for the OCP 8-bit formats: 256-entry decode tables for E4M3 and
//! E5M2 built straight from the OCP OFP8 definition (rev 1.0, 2023), and a rounding
//! reference that picks the nearest table entry per rounding mode.
//!
//! Nothing here calls the `numerics` arithmetic: the decoding is written out from the
//! specification with host `f64` (every FP8 value, every FP32 value and every midpoint
//! between FP8 neighbours is exact in `f64`), and rounding is a search over the table. Only
//! the plain data types [`RoundingMode`] and [`Flags`] are shared, so results compare
//! directly.

use std::sync::OnceLock;

use crate::numerics::flags::{Flags, RoundingMode};

/// The two OCP FP8 encodings, described here independently of `numerics::Format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fp8Kind {
    /// E4M3 ("fn"): bias 7, no infinities, the only NaNs are S.1111.111, max 448.
    E4M3,
    /// E5M2: bias 15, IEEE-style Inf (S.11111.00) and NaNs (S.11111.{01,10,11}), max 57344.
    E5M2,
}

impl Fp8Kind {
    /// The encoding of the largest finite magnitude (`0x7E` = 448, `0x7B` = 57344).
    pub const fn max_code(self) -> u8 {
        match self {
            Fp8Kind::E4M3 => 0x7E,
            Fp8Kind::E5M2 => 0x7B,
        }
    }

    /// The NaN this project produces (sign clear): `0x7F` for E4M3, `0x7E` for E5M2.
    pub const fn nan_code(self) -> u8 {
        match self {
            Fp8Kind::E4M3 => 0x7F,
            Fp8Kind::E5M2 => 0x7E,
        }
    }

    /// The next magnitude above the largest finite one if the exponent range were unbounded
    /// (480 for E4M3, 65536 for E5M2): reaching it is an overflow.
    pub const fn beyond_max(self) -> f64 {
        match self {
            Fp8Kind::E4M3 => 480.0,
            Fp8Kind::E5M2 => 65536.0,
        }
    }

    /// Fraction bits (3 or 2).
    pub const fn frac_bits(self) -> i32 {
        match self {
            Fp8Kind::E4M3 => 3,
            Fp8Kind::E5M2 => 2,
        }
    }

    /// Smallest normal magnitude (2^-6 or 2^-14).
    pub fn min_normal(self) -> f64 {
        match self {
            Fp8Kind::E4M3 => 2f64.powi(-6),
            Fp8Kind::E5M2 => 2f64.powi(-14),
        }
    }

    /// Decodes one encoding to `f64` (exact; NaN for NaN codes, +-Inf for E5M2's infinities).
    pub fn decode(self, bits: u8) -> f64 {
        let sign = if bits & 0x80 != 0 { -1.0 } else { 1.0 };
        let magnitude = match self {
            Fp8Kind::E4M3 => {
                let e = ((bits >> 3) & 0x0F) as i32;
                let m = (bits & 0x07) as f64;
                if e == 0x0F && m == 7.0 {
                    return f64::NAN;
                } else if e == 0 {
                    m / 8.0 * 2f64.powi(-6)
                } else {
                    (1.0 + m / 8.0) * 2f64.powi(e - 7)
                }
            }
            Fp8Kind::E5M2 => {
                let e = ((bits >> 2) & 0x1F) as i32;
                let m = (bits & 0x03) as f64;
                if e == 0x1F {
                    if m == 0.0 {
                        f64::INFINITY
                    } else {
                        return f64::NAN;
                    }
                } else if e == 0 {
                    m / 4.0 * 2f64.powi(-14)
                } else {
                    (1.0 + m / 4.0) * 2f64.powi(e - 15)
                }
            }
        };
        sign * magnitude
    }

    /// The full 256-entry decode table, built once.
    pub fn table(self) -> &'static [f64; 256] {
        static E4M3: OnceLock<[f64; 256]> = OnceLock::new();
        static E5M2: OnceLock<[f64; 256]> = OnceLock::new();
        let cell = match self {
            Fp8Kind::E4M3 => &E4M3,
            Fp8Kind::E5M2 => &E5M2,
        };
        cell.get_or_init(|| std::array::from_fn(|i| self.decode(i as u8)))
    }
}

/// Decodes an E4M3 encoding via the table.
pub fn decode_e4m3(bits: u8) -> f64 {
    Fp8Kind::E4M3.table()[bits as usize]
}

/// Decodes an E5M2 encoding via the table.
pub fn decode_e5m2(bits: u8) -> f64 {
    Fp8Kind::E5M2.table()[bits as usize]
}

/// What the reference says a conversion into FP8 must produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp8Expected {
    /// The encoding (NaN results use [`Fp8Kind::nan_code`]).
    pub bits: u8,
    /// IEEE flags with tininess detected after rounding. `invalid` is raised only for an
    /// infinity converted to E4M3 without saturation; a NaN input raises nothing here (a
    /// signaling NaN is the caller's business, `f64` cannot carry it).
    pub flags: Flags,
}

/// Rounds `|x|` on the grid of spacing `2^(e - frac_bits)` around it (`e` = exponent of its
/// leading one), i.e. with full precision and an unbounded exponent range; returns the
/// rounded magnitude. Used for tininess only.
fn round_unbounded(kind: Fp8Kind, a: f64, negative: bool, mode: RoundingMode) -> f64 {
    let e = ((a.to_bits() >> 52) & 0x7FF) as i32 - 1023;
    let spacing = 2f64.powi(e - kind.frac_bits());
    let q = a / spacing;
    let lo = q.floor();
    let frac = q - lo;
    let up = if frac == 0.0 {
        false
    } else {
        match mode {
            RoundingMode::NearestEven => frac > 0.5 || (frac == 0.5 && lo % 2.0 == 1.0),
            RoundingMode::NearestAway => frac >= 0.5,
            RoundingMode::TowardZero => false,
            RoundingMode::Up => !negative,
            RoundingMode::Down => negative,
            RoundingMode::ToOdd => lo % 2.0 == 0.0,
        }
    };
    (lo + up as u8 as f64) * spacing
}

/// The reference conversion of a host value `x` into FP8: the table entry chosen per `mode`
/// among the two entries bracketing `|x|` (nearest with ties to the even code, toward zero,
/// up, down, or the odd code for round-to-odd), with an overflow when the choice falls beyond
/// the largest finite entry. `saturate` selects `satfinite` (overflow and Inf give the signed
/// max finite) against the non-saturating rules (overflow gives Inf for E5M2 and NaN for
/// E4M3 when the mode rounds away from zero, max finite when it rounds toward zero).
pub fn round_to_fp8(kind: Fp8Kind, x: f64, mode: RoundingMode, saturate: bool) -> Fp8Expected {
    let table = kind.table();
    let negative = x.is_sign_negative();
    let sign_bit = if negative { 0x80u8 } else { 0 };
    let none = Flags::NONE;
    if x.is_nan() {
        return Fp8Expected {
            bits: kind.nan_code(),
            flags: none,
        };
    }
    let overflow_code = |inexact_overflow: bool| -> Fp8Expected {
        let toward_zero = match mode {
            RoundingMode::NearestEven | RoundingMode::NearestAway => false,
            RoundingMode::TowardZero | RoundingMode::ToOdd => true,
            RoundingMode::Up => negative,
            RoundingMode::Down => !negative,
        };
        let flags = Flags {
            overflow: inexact_overflow,
            inexact: true,
            ..none
        };
        if saturate || toward_zero {
            Fp8Expected {
                bits: sign_bit | kind.max_code(),
                flags,
            }
        } else {
            match kind {
                Fp8Kind::E4M3 => Fp8Expected {
                    bits: kind.nan_code(),
                    flags,
                },
                Fp8Kind::E5M2 => Fp8Expected {
                    bits: sign_bit | 0x7C,
                    flags,
                },
            }
        }
    };
    if x.is_infinite() {
        return if saturate {
            Fp8Expected {
                bits: sign_bit | kind.max_code(),
                flags: Flags {
                    inexact: true,
                    ..none
                },
            }
        } else {
            match kind {
                Fp8Kind::E4M3 => Fp8Expected {
                    bits: kind.nan_code(),
                    flags: Flags::INVALID,
                },
                Fp8Kind::E5M2 => Fp8Expected {
                    bits: sign_bit | 0x7C,
                    flags: none,
                },
            }
        };
    }
    let a = x.abs();
    let max_code = kind.max_code();
    if a >= kind.beyond_max() {
        return overflow_code(true);
    }
    // Codes 0..=max_code are the nonnegative finite values in increasing order; the virtual
    // code max_code + 1 stands for `beyond_max` (overflow).
    let value = |code: u8| {
        if code > max_code {
            kind.beyond_max()
        } else {
            table[code as usize]
        }
    };
    let mut lo = 0u8;
    while lo < max_code && value(lo + 1) <= a {
        lo += 1;
    }
    if value(lo) == a {
        return Fp8Expected {
            bits: sign_bit | lo,
            flags: none,
        };
    }
    let hi = lo + 1;
    let mid = (value(lo) + value(hi)) / 2.0;
    let pick_hi = match mode {
        RoundingMode::NearestEven => a > mid || (a == mid && hi & 1 == 0),
        RoundingMode::NearestAway => a >= mid,
        RoundingMode::TowardZero => false,
        RoundingMode::Up => !negative,
        RoundingMode::Down => negative,
        RoundingMode::ToOdd => hi & 1 == 1,
    };
    if pick_hi && hi > max_code {
        return overflow_code(true);
    }
    let code = if pick_hi { hi } else { lo };
    let tiny =
        a < kind.min_normal() && round_unbounded(kind, a, negative, mode) < kind.min_normal();
    Fp8Expected {
        bits: sign_bit | code,
        flags: Flags {
            inexact: true,
            underflow: tiny,
            ..none
        },
    }
}
