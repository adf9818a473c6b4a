//! Format conversions: narrowing (FP32 -> FP16, BF16, TF32, E4M3, E5M2, FP6, FP4, E8M0, or any pair) with every
//! rounding mode and an explicit saturation policy, and exact widenings to FP32.
//!
//! Every finite input goes through the shared [`round_pack`]; only the special classes (NaN
//! and infinity) are decided here.
//!
//! Policies:
//! - NaN in gives the target's canonical NaN ([`Format::canonical_nan`]: FP32 `0x7FC00000`,
//!   FP16 `0x7E00`, BF16 `0x7FC0`, E5M2 `0x7E`, E4M3 `0x7F`), sign and payload dropped;
//!   `invalid` is raised only for an IEEE signaling NaN input.
//! - [`Overflow::Ieee`] (non-saturating): a finite overflow follows the IEEE
//!   rounding-direction rules (Inf, or the largest finite value when the mode rounds toward
//!   it); E4M3, which has no infinity, gives its NaN where IEEE would give Inf. An infinite
//!   input stays infinite, or becomes NaN with `invalid` for E4M3.
//! - Formats without Inf and NaN (FP6 E2M3/E3M2, FP4 E2M1) always clamp, as the OCP MX
//!   specification says: a finite overflow gives the signed largest finite value (with
//!   `overflow` and `inexact`) and an infinity the signed largest finite value (`inexact`),
//!   under either policy. A NaN has no encoding there: the result is the positive largest
//!   finite value ([`Format::canonical_nan`]) with `invalid`, and callers that must not
//!   invent a value (the `convert` command) refuse NaN inputs for these formats instead.
//! - E8M0 (the MX scale: unsigned powers of two, no zero) has its own rounder: see
//!   [`super::e8m0`].
//! - [`Overflow::Saturate`] (PTX `satfinite`): every finite overflow gives the signed largest
//!   finite value (with `overflow` and `inexact`), and an infinite input also gives the signed
//!   largest finite value, raising `inexact` only (the operand did not overflow; the result
//!   merely differs from it). NaN stays NaN.

use super::e8m0::{is_exponent_only, round_to_e8m0};
use super::flags::{Flags, RoundingMode};
use super::format::{Class, Format, FP32};
use super::round::{round_pack, Overflow, RoundTrace, Rounded, Unrounded};
use super::unpack::unpack;

/// Converts the encoding `bits` of format `from` into format `to`, rounding with `mode` and
/// handling overflow and infinities per `saturation` (see the module documentation).
///
/// Widening conversions (every format to FP32, E4M3/E5M2 to FP16 or BF16 where the range
/// fits) are exact and raise no flag.
pub fn convert(
    from: Format,
    to: Format,
    bits: u64,
    mode: RoundingMode,
    saturation: Overflow,
) -> Rounded {
    let u = unpack(from, bits);
    if is_exponent_only(to) {
        return round_to_e8m0(&u, from.is_signaling_nan(bits), mode, saturation);
    }
    let special = |bits: u64, flags: Flags| Rounded {
        bits,
        flags,
        trace: RoundTrace::default(),
    };
    match u.class {
        // A format without NaN (FP6, FP4) has nothing to give: see the module documentation.
        Class::Nan if !to.has_nan() => special(to.canonical_nan(), Flags::INVALID),
        Class::Nan => special(
            to.canonical_nan(),
            if from.is_signaling_nan(bits) {
                Flags::INVALID
            } else {
                Flags::NONE
            },
        ),
        Class::Infinite => match (saturation, to.infinity(u.sign)) {
            (Overflow::Saturate, _) => special(
                to.max_finite(u.sign),
                Flags {
                    inexact: true,
                    ..Flags::NONE
                },
            ),
            (Overflow::Ieee, Some(inf)) => special(inf, Flags::NONE),
            (Overflow::Ieee, None) if !to.has_nan() => special(
                to.max_finite(u.sign),
                Flags {
                    inexact: true,
                    ..Flags::NONE
                },
            ),
            (Overflow::Ieee, None) => special(to.canonical_nan(), Flags::INVALID),
        },
        Class::Zero | Class::Subnormal | Class::Normal => round_pack(
            to,
            Unrounded {
                sign: u.sign,
                exp: u.lsb_exp(),
                sig: u.sig as u128,
                sticky: false,
            },
            mode,
            saturation,
        ),
    }
}

/// Narrows an FP32 encoding into `to` ([`convert`] with `from = FP32`).
pub fn from_fp32(to: Format, bits: u32, mode: RoundingMode, saturation: Overflow) -> Rounded {
    convert(FP32, to, bits as u64, mode, saturation)
}

/// Widens an encoding of `from` to FP32 exactly (every format in the table fits in FP32:
/// E4M3, E5M2, FP16 and BF16 values are all FP32 values). NaN gives FP32's canonical NaN.
pub fn to_fp32(from: Format, bits: u64) -> u32 {
    // Exact, so the rounding mode and the overflow policy are irrelevant.
    convert(from, FP32, bits, RoundingMode::NearestEven, Overflow::Ieee).bits as u32
}

// TF32 (FP32 containers with the low 13 bits zero; PTX `cvt.rna.tf32.f32`).

/// The low 13 bits of an FP32 container that a TF32 value leaves zero.
pub const TF32_CONTAINER_LOW: u32 = (1 << 13) - 1;

/// PTX `cvt.rna.tf32.f32`: rounds the FP32 encoding `bits` to TF32's 10 fraction bits, to
/// nearest with ties away from zero, and returns the FP32 container (low 13 bits zero). A
/// finite value that rounds past the largest TF32 magnitude becomes the signed infinity;
/// infinities pass unchanged; NaN gives the canonical NaN `0x7FC00000`. Subnormals round on
/// the same grid (TF32 keeps FP32's exponent range).
pub const fn tf32_from_fp32_rna(bits: u32) -> u32 {
    let sign = bits & 0x8000_0000;
    let magnitude = bits & 0x7FFF_FFFF;
    if magnitude > 0x7F80_0000 {
        return 0x7FC0_0000;
    }
    if magnitude == 0x7F80_0000 {
        return bits;
    }
    // Half an ulp of TF32 added to the magnitude, then truncated: a tie rounds up in
    // magnitude (away from zero), and a carry out of the top binade lands on Inf.
    sign | ((magnitude + (1 << 12)) & !TF32_CONTAINER_LOW)
}

/// The 19-bit TF32 pattern held in an FP32 container, or `None` if the container's low 13
/// bits are not zero (it holds no TF32 value).
pub const fn tf32_from_container(container: u32) -> Option<u64> {
    if container & TF32_CONTAINER_LOW != 0 {
        None
    } else {
        Some((container >> 13) as u64)
    }
}

/// The FP32 container of a 19-bit TF32 pattern (low 13 bits zero).
pub const fn tf32_to_container(bits: u64) -> u32 {
    ((bits as u32) & 0x7_FFFF) << 13
}
