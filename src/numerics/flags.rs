//! Rounding modes, IEEE exception flags, and the discarded-bits summary [`Loss`].

use std::ops::{BitOr, BitOrAssign};

/// Rounding direction used by the shared normalize-round-pack step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoundingMode {
    /// Round to nearest, ties to even (IEEE default, `rn`).
    NearestEven,
    /// Round toward zero (truncate, `rz`).
    TowardZero,
    /// Round toward negative infinity (`rm`).
    Down,
    /// Round toward positive infinity (`rp`).
    Up,
    /// Round to odd (von Neumann jamming): truncate, then set the LSB if anything was lost.
    ToOdd,
    /// Round to nearest, ties away from zero (`rna`: PTX `cvt.rna`, the TF32 conversion,
    /// IEEE 754's roundTiesToAway). Offered by the conversions ([`RoundingMode::CONVERSION`]),
    /// not by the arithmetic units, so it is not in [`RoundingMode::ALL`].
    NearestAway,
}

impl RoundingMode {
    /// All modes, in a fixed order (for sweeps).
    pub const ALL: [RoundingMode; 5] = [
        RoundingMode::NearestEven,
        RoundingMode::TowardZero,
        RoundingMode::Down,
        RoundingMode::Up,
        RoundingMode::ToOdd,
    ];

    /// The modes a format conversion takes: [`RoundingMode::ALL`] and ties-away `rna`.
    pub const CONVERSION: [RoundingMode; 6] = [
        RoundingMode::NearestEven,
        RoundingMode::NearestAway,
        RoundingMode::TowardZero,
        RoundingMode::Down,
        RoundingMode::Up,
        RoundingMode::ToOdd,
    ];

    /// Short name (`rne`, `rna`, `rtz`, `rdn`, `rup`, `rto`).
    pub const fn name(self) -> &'static str {
        match self {
            RoundingMode::NearestEven => "rne",
            RoundingMode::TowardZero => "rtz",
            RoundingMode::Down => "rdn",
            RoundingMode::Up => "rup",
            RoundingMode::ToOdd => "rto",
            RoundingMode::NearestAway => "rna",
        }
    }

    /// Parses the short name of one of the arithmetic units' modes ([`RoundingMode::ALL`];
    /// `rna` is not one: see [`RoundingMode::conversion_by_name`]).
    pub fn by_name(name: &str) -> Option<RoundingMode> {
        Self::ALL
            .iter()
            .copied()
            .find(|m| m.name().eq_ignore_ascii_case(name))
    }

    /// Parses the short name of a conversion mode ([`RoundingMode::CONVERSION`]).
    pub fn conversion_by_name(name: &str) -> Option<RoundingMode> {
        Self::CONVERSION
            .iter()
            .copied()
            .find(|m| m.name().eq_ignore_ascii_case(name))
    }
}

/// What the bits below the rounding point amount to, relative to half an ulp
/// (guard and sticky in one type, after rustc_apfloat's `Loss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Loss {
    /// Nothing was discarded.
    ExactlyZero,
    /// Discarded part is in (0, 1/2) ulp: guard 0, sticky 1.
    LessThanHalf,
    /// Discarded part is exactly 1/2 ulp: guard 1, sticky 0.
    ExactlyHalf,
    /// Discarded part is in (1/2, 1) ulp: guard 1, sticky 1.
    MoreThanHalf,
}

impl Loss {
    /// Builds the loss from a guard bit and a sticky bit.
    pub const fn from_guard_sticky(guard: bool, sticky: bool) -> Loss {
        match (guard, sticky) {
            (false, false) => Loss::ExactlyZero,
            (false, true) => Loss::LessThanHalf,
            (true, false) => Loss::ExactlyHalf,
            (true, true) => Loss::MoreThanHalf,
        }
    }

    /// The guard bit (first discarded bit).
    pub const fn guard(self) -> bool {
        matches!(self, Loss::ExactlyHalf | Loss::MoreThanHalf)
    }

    /// The sticky bit (OR of all discarded bits after the guard).
    pub const fn sticky(self) -> bool {
        matches!(self, Loss::LessThanHalf | Loss::MoreThanHalf)
    }

    /// True if anything nonzero was discarded.
    pub const fn is_inexact(self) -> bool {
        !matches!(self, Loss::ExactlyZero)
    }
}

/// IEEE 754 exception flags raised by one operation (divide-by-zero never arises here).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags {
    /// Invalid operation (e.g. Inf - Inf, 0 x Inf, a NaN that could not be passed on).
    pub invalid: bool,
    /// The rounded result exceeded the largest finite value.
    pub overflow: bool,
    /// Tiny (detected after rounding) and inexact.
    pub underflow: bool,
    /// The result differs from the exact value.
    pub inexact: bool,
}

impl Flags {
    /// No flag raised.
    pub const NONE: Flags = Flags {
        invalid: false,
        overflow: false,
        underflow: false,
        inexact: false,
    };

    /// Only `invalid` raised.
    pub const INVALID: Flags = Flags {
        invalid: true,
        overflow: false,
        underflow: false,
        inexact: false,
    };

    /// True if no flag is raised.
    pub const fn is_empty(self) -> bool {
        !(self.invalid || self.overflow || self.underflow || self.inexact)
    }

    /// The flags as a 4-bit vector `{invalid, overflow, underflow, inexact}` (bit 3 .. bit 0),
    /// the order SoftFloat uses minus divide-by-zero; this is what the RTL traces.
    pub const fn to_bits(self) -> u8 {
        ((self.invalid as u8) << 3)
            | ((self.overflow as u8) << 2)
            | ((self.underflow as u8) << 1)
            | (self.inexact as u8)
    }

    /// The flags of a 4-bit vector written by [`Flags::to_bits`] (higher bits ignored).
    pub const fn from_bits(bits: u8) -> Flags {
        Flags {
            invalid: bits & 8 != 0,
            overflow: bits & 4 != 0,
            underflow: bits & 2 != 0,
            inexact: bits & 1 != 0,
        }
    }

    /// Names of the raised flags, e.g. `["overflow", "inexact"]`.
    pub fn names(self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.invalid {
            v.push("invalid");
        }
        if self.overflow {
            v.push("overflow");
        }
        if self.underflow {
            v.push("underflow");
        }
        if self.inexact {
            v.push("inexact");
        }
        v
    }
}

impl BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        Flags {
            invalid: self.invalid | rhs.invalid,
            overflow: self.overflow | rhs.overflow,
            underflow: self.underflow | rhs.underflow,
            inexact: self.inexact | rhs.inexact,
        }
    }
}

impl BitOrAssign for Flags {
    fn bitor_assign(&mut self, rhs: Flags) {
        *self = *self | rhs;
    }
}

impl std::fmt::Display for Flags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = self.names();
        if names.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&names.join(","))
        }
    }
}
