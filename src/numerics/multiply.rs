//! The exact multiplier: exponent add and significand multiply for any pair of input
//! formats (mixed FP8 included). The product is never rounded here: it leaves as
//! sign, exponent sum and an integer significand with `frac_a + frac_b` fraction bits, which
//! is exact for every format pair (BF16 x BF16 keeps its full exponent range).

use super::flags::{Flags, RoundingMode};
use super::format::{Class, Format};
use super::round::{round_pack, Overflow, RoundTrace, Rounded, Unrounded};
use super::unpack::{unpack, Unpacked};

/// The class of a product.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProductClass {
    /// Exactly zero (one input was a zero and neither was Inf/NaN).
    Zero,
    /// A finite nonzero product.
    Finite,
    /// An infinite product.
    Infinite,
    /// NaN: a NaN input, or 0 x Inf (which also raises `invalid`).
    Nan,
}

/// An exact, unrounded product `(-1)^sign * sig * 2^(exp_sum - frac_bits)`.
///
/// For normal inputs `sig` lies in `[1, 4)` in units of `2^frac_bits`; a subnormal input
/// contributes its format's minimum exponent and no hidden bit, so `sig` may be smaller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Product {
    /// Sign (XOR of the input signs; also for zero and infinite products).
    pub sign: bool,
    /// Zero, finite, infinite or NaN.
    pub class: ProductClass,
    /// `exp_a + exp_b`: the exponent adder's output (unbiased).
    pub exp_sum: i32,
    /// `sig_a * sig_b`: the significand multiplier's output.
    pub sig: u64,
    /// Fraction bits of `sig` (`frac_a + frac_b`).
    pub frac_bits: u32,
    /// `invalid` for 0 x Inf or a signaling NaN input; otherwise empty.
    pub flags: Flags,
}

impl Product {
    /// Exponent of `sig`'s least significant bit.
    pub const fn lsb_exp(&self) -> i32 {
        self.exp_sum - self.frac_bits as i32
    }

    /// True for a NaN product.
    pub const fn is_nan(&self) -> bool {
        matches!(self.class, ProductClass::Nan)
    }
}

/// Multiplies two unpacked operands exactly.
#[inline(always)]
pub fn multiply_unpacked(a: &Unpacked, fmt_a: Format, b: &Unpacked, fmt_b: Format) -> Product {
    let sign = a.sign ^ b.sign;
    let exp_sum = a.exp + b.exp;
    let frac_bits = a.frac_bits + b.frac_bits;
    if a.class.is_finite() && b.class.is_finite() {
        // Both finite: the significand multiplier's output is zero exactly when an input is
        // a zero (subnormals and normals have nonzero significands).
        let sig = a.sig * b.sig;
        return Product {
            sign,
            class: if sig == 0 {
                ProductClass::Zero
            } else {
                ProductClass::Finite
            },
            exp_sum,
            sig,
            frac_bits,
            flags: Flags::NONE,
        };
    }
    let (class, flags) = special_product_class(
        a.class,
        fmt_a.is_signaling_nan_class(a),
        b.class,
        fmt_b.is_signaling_nan_class(b),
    );
    Product {
        sign,
        class,
        exp_sum,
        sig: 0,
        frac_bits,
        flags,
    }
}

/// The class and flags of a product with an infinite or NaN input.
#[cold]
#[inline(never)]
fn special_product_class(
    class_a: Class,
    snan_a: bool,
    class_b: Class,
    snan_b: bool,
) -> (ProductClass, Flags) {
    let signaling = snan_a || snan_b;
    match (class_a, class_b) {
        (Class::Nan, _) | (_, Class::Nan) => (
            ProductClass::Nan,
            if signaling {
                Flags::INVALID
            } else {
                Flags::NONE
            },
        ),
        (Class::Infinite, Class::Zero) | (Class::Zero, Class::Infinite) => {
            (ProductClass::Nan, Flags::INVALID)
        }
        _ => (ProductClass::Infinite, Flags::NONE),
    }
}

/// Unpacks and multiplies two encodings exactly.
#[inline(always)]
pub fn multiply(fmt_a: Format, a_bits: u64, fmt_b: Format, b_bits: u64) -> Product {
    multiply_unpacked(&unpack(fmt_a, a_bits), fmt_a, &unpack(fmt_b, b_bits), fmt_b)
}

/// Rounds an exact product into `to` through the shared normalize-round-pack (a NaN product
/// gives `to`'s canonical NaN, an infinite one the signed infinity, or NaN for formats
/// without one). `invalid` from the multiplier is carried into the result's flags.
///
/// Every FP8 x FP8 and FP16 x FP16 product is exact in FP32; BF16 x BF16 products may
/// overflow or underflow FP32 and are rounded like any other value.
pub fn round_product(p: &Product, to: Format, mode: RoundingMode, policy: Overflow) -> Rounded {
    let special = |bits: u64| Rounded {
        bits,
        flags: p.flags,
        trace: RoundTrace::default(),
    };
    match p.class {
        ProductClass::Nan => special(to.canonical_nan()),
        ProductClass::Infinite => special(to.overflow_value(p.sign)),
        ProductClass::Zero => special(to.zero(p.sign)),
        ProductClass::Finite => {
            let mut r = round_pack(
                to,
                Unrounded {
                    sign: p.sign,
                    exp: p.lsb_exp(),
                    sig: p.sig as u128,
                    sticky: false,
                },
                mode,
                policy,
            );
            r.flags |= p.flags;
            r
        }
    }
}
