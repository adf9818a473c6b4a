//! Units built for one format: the format row is a compile-time constant, so every field of
//! it (widths, bias, masks, the special encodings) folds into the unit's logic, as it does in
//! a multiplier synthesised for one format pair. The arithmetic is the same function as the
//! format-generic unit's ([`multiply`], [`fma_acc`]): only the row is fixed.
//!
//! A clocked core picks its units once, when it is built ([`lane_multiplier`],
//! [`ieee_chain`]), so no PE reads a format row in the clock loop.

use super::dot::ieee::{fma_acc, fma_acc_bits_by, fma_chain_over};
use super::dot::StepRecord;
use super::flags::{Flags, RoundingMode};
use super::format::{Format, NonFinite, ALL_FORMATS, E4M3, E5M2, FP16, FP32};
use super::multiply::{multiply, Product, ProductClass};

/// One lane's exact multiplier for a fixed format pair: `(a bits, b bits) -> product`.
pub type LaneMultiplier = fn(u64, u64) -> Product;

/// The `ieee` chain of fused multiply-adds for a fixed accumulator format, rounding to
/// nearest even: `(products in lane order, c bits) -> the step's record` (as
/// [`fma_chain_over`]).
pub type IeeeChain = fn(&[Product], u32) -> StepRecord;

/// Row `I` of [`ALL_FORMATS`] as an associated constant: a compile-time value, not a load
/// from the table.
struct Row<const I: usize>;

impl<const I: usize> Row<I> {
    const FORMAT: Format = ALL_FORMATS[I];
}

#[inline(never)]
fn multiply_fixed<const A: usize, const B: usize>(a: u64, b: u64) -> Product {
    multiply(Row::<A>::FORMAT, a, Row::<B>::FORMAT, b)
}

macro_rules! multiplier_row {
    ($a:literal) => {
        [
            multiply_fixed::<$a, 0> as LaneMultiplier,
            multiply_fixed::<$a, 1>,
            multiply_fixed::<$a, 2>,
            multiply_fixed::<$a, 3>,
            multiply_fixed::<$a, 4>,
            multiply_fixed::<$a, 5>,
            multiply_fixed::<$a, 6>,
            multiply_fixed::<$a, 7>,
            multiply_fixed::<$a, 8>,
            multiply_fixed::<$a, 9>,
        ]
    };
}

/// The multiplier of every pair of [`ALL_FORMATS`], indexed by table position.
const MULTIPLIERS: [[LaneMultiplier; ALL_FORMATS.len()]; ALL_FORMATS.len()] = [
    multiplier_row!(0),
    multiplier_row!(1),
    multiplier_row!(2),
    multiplier_row!(3),
    multiplier_row!(4),
    multiplier_row!(5),
    multiplier_row!(6),
    multiplier_row!(7),
    multiplier_row!(8),
    multiplier_row!(9),
];

fn table_index(fmt: Format) -> Option<usize> {
    ALL_FORMATS.iter().position(|f| *f == fmt)
}

/// The FP16 x FP16 multiplier, inlined where it is called: the same unit as
/// [`lane_multiplier`]`(FP16, FP16)` (the format row a constant), for a caller that wants the
/// most common pair without an indirect call.
#[inline(always)]
pub fn multiply_fp16(a: u64, b: u64) -> Product {
    Fp16Pair::multiply(a, b)
}

/// A lane multiplier for one format pair of the table, inlined into the lane loop that uses
/// it: both format rows, and so the lane widths and every field of the unit's logic, are
/// compile-time constants (a multiplier synthesised for the pair). The arithmetic is
/// [`multiply`]'s.
pub trait InlineUnit {
    /// The A operand's format.
    const FMT_A: Format;
    /// The B operand's format.
    const FMT_B: Format;
    /// The exact product of an A and a B encoding (low bits of each, as [`multiply`]):
    /// [`finite_product`] for FP8 inputs when neither is a NaN or infinity, the full unit
    /// otherwise.
    #[inline(always)]
    fn multiply(a: u64, b: u64) -> Product {
        let (fa, fb) = (Self::FMT_A, Self::FMT_B);
        if !(small_fields(fa) && small_fields(fb)) || non_finite(fa, a) || non_finite(fb, b) {
            return multiply(fa, a, fb, b);
        }
        finite_product(fa, a, fb, b)
    }
}

/// True for a format of at most 8 bits with a sign bit, an exponent field and subnormals
/// (the FP8 inputs; not the unsigned E8M0 scale), whose fields [`finite_product`] decodes.
/// (For FP16 the full unit measured faster in the PE's lane loop.)
const fn small_fields(f: Format) -> bool {
    f.signed && f.exp_bits > 0 && f.width() <= 8
}

/// The infinity-or-NaN detector of an input lane: exponent field all ones (IEEE-like
/// rows), exponent and fraction all ones (the NaN-only rows), never (rows without
/// non-finite codes).
#[inline(always)]
fn non_finite(f: Format, x: u64) -> bool {
    let top = f.exp_field_max() << f.frac_bits;
    match f.non_finite {
        NonFinite::Ieee => x & top == top,
        NonFinite::NanOnly => {
            let all = top | f.frac_mask();
            x & all == all
        }
        NonFinite::None => false,
    }
}

/// The exact product of two finite encodings, from their fields: each significand is the
/// fraction with the hidden bit set when the exponent field is nonzero, each exponent the
/// field less the bias (`emin` for a zero or subnormal, whose field is 0); the significands
/// multiply, the exponents add, and the product is zero exactly when a significand is.
/// Equal to [`multiply`] on finite inputs.
#[inline(always)]
pub fn finite_product(fa: Format, a: u64, fb: Format, b: u64) -> Product {
    let decode = |f: Format, x: u64| {
        let e = f.exp_field(x);
        let sig = f.frac_field(x) | (u64::from(e != 0) << f.frac_bits);
        (e.max(1) as i32 - f.bias, sig)
    };
    let (ea, sa) = decode(fa, a);
    let (eb, sb) = decode(fb, b);
    let sig = sa * sb;
    Product {
        sign: fa.sign_of(a) ^ fb.sign_of(b),
        class: if sig == 0 {
            ProductClass::Zero
        } else {
            ProductClass::Finite
        },
        exp_sum: ea + eb,
        sig,
        frac_bits: fa.frac_bits + fb.frac_bits,
        flags: Flags::NONE,
    }
}

/// The unit for rows `A` x `B` of [`ALL_FORMATS`].
pub struct Pair<const A: usize, const B: usize>;

impl<const A: usize, const B: usize> InlineUnit for Pair<A, B> {
    const FMT_A: Format = Row::<A>::FORMAT;
    const FMT_B: Format = Row::<B>::FORMAT;
}

/// Positions of the FP8 formats in [`ALL_FORMATS`], checked when the crate compiles.
const E4M3_AT: usize = 0;
const E5M2_AT: usize = 1;

/// The FP16 x FP16 unit.
pub type Fp16Pair = Pair<FP16_AT, FP16_AT>;
/// The E4M3 x E4M3 unit.
pub type E4m3Pair = Pair<E4M3_AT, E4M3_AT>;
/// The E5M2 x E5M2 unit.
pub type E5m2Pair = Pair<E5M2_AT, E5M2_AT>;
/// The E4M3 x E5M2 unit.
pub type E4m3E5m2Pair = Pair<E4M3_AT, E5M2_AT>;
/// The E5M2 x E4M3 unit.
pub type E5m2E4m3Pair = Pair<E5M2_AT, E4M3_AT>;

/// The format pairs whose lane multiplier a PE inlines ([`InlineUnit`]): FP16 x FP16 and the
/// four FP8 pairs. Every other pair of the table is called through [`lane_multiplier`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InlinedPair {
    /// FP16 x FP16 ([`Fp16Pair`]).
    Fp16,
    /// E4M3 x E4M3 ([`E4m3Pair`]).
    E4m3,
    /// E5M2 x E5M2 ([`E5m2Pair`]).
    E5m2,
    /// E4M3 x E5M2 ([`E4m3E5m2Pair`]).
    E4m3E5m2,
    /// E5M2 x E4M3 ([`E5m2E4m3Pair`]).
    E5m2E4m3,
}

impl InlinedPair {
    /// The inlined unit for `fmt_a x fmt_b`, if the pair has one.
    pub fn of(fmt_a: Format, fmt_b: Format) -> Option<Self> {
        match (table_index(fmt_a)?, table_index(fmt_b)?) {
            (FP16_AT, FP16_AT) => Some(InlinedPair::Fp16),
            (E4M3_AT, E4M3_AT) => Some(InlinedPair::E4m3),
            (E5M2_AT, E5M2_AT) => Some(InlinedPair::E5m2),
            (E4M3_AT, E5M2_AT) => Some(InlinedPair::E4m3E5m2),
            (E5M2_AT, E4M3_AT) => Some(InlinedPair::E5m2E4m3),
            _ => None,
        }
    }

    /// The pair's exact product of `a` and `b` (its unit, for a caller outside a lane loop).
    pub fn multiply(self, a: u64, b: u64) -> Product {
        match self {
            InlinedPair::Fp16 => Fp16Pair::multiply(a, b),
            InlinedPair::E4m3 => E4m3Pair::multiply(a, b),
            InlinedPair::E5m2 => E5m2Pair::multiply(a, b),
            InlinedPair::E4m3E5m2 => E4m3E5m2Pair::multiply(a, b),
            InlinedPair::E5m2E4m3 => E5m2E4m3Pair::multiply(a, b),
        }
    }
}

/// The multiplier built for `fmt_a x fmt_b`, if both are formats of the table
/// ([`ALL_FORMATS`]); `None` for any other row (the caller then uses [`multiply`] itself).
pub fn lane_multiplier(fmt_a: Format, fmt_b: Format) -> Option<LaneMultiplier> {
    Some(MULTIPLIERS[table_index(fmt_a)?][table_index(fmt_b)?])
}

#[inline(never)]
fn chain_fixed<const ACC: usize>(products: &[Product], c: u32) -> StepRecord {
    chain_record_fixed::<ACC>(products, c)
}

/// The `ieee` chain for the fixed format with its trace record: the FMAs of [`fma_acc`] in
/// order ([`fma_chain_over`]), inlined into the caller.
#[inline(always)]
fn chain_record_fixed<const ACC: usize>(products: &[Product], c: u32) -> StepRecord {
    fma_chain_over(products, c, RoundingMode::NearestEven, Row::<ACC>::FORMAT)
}

/// The FMAs of [`ieee_chain_bits`]: each is [`fma_acc_bits_by`] (the normal-range unit where
/// it answers, the full unit otherwise) for the fixed format.
#[inline(always)]
fn chain_bits_fixed<const ACC: usize>(products: &[Product], c: u32) -> (u32, u8) {
    let mut bits = c;
    let mut flags = 0;
    for p in products {
        let (b, f) = fma_acc_bits_by(bits, p, Row::<ACC>::FORMAT, fma_rare_fixed::<ACC>);
        bits = b;
        flags |= f;
    }
    (bits, flags)
}

/// The full unit for the sums the normal-range unit leaves, out of line and with its format
/// fixed (no format row passed to it).
#[cold]
#[inline(never)]
fn fma_rare_fixed<const ACC: usize>(c: u32, p: &Product) -> (u32, u8) {
    let r = fma_acc(c, p, RoundingMode::NearestEven, Row::<ACC>::FORMAT);
    (r.bits, r.flags.to_bits())
}

/// Positions of the accumulator formats in [`ALL_FORMATS`], checked when the crate compiles.
const FP32_AT: usize = 5;
const FP16_AT: usize = 2;

const fn same_row(a: Format, b: Format) -> bool {
    a.exp_bits == b.exp_bits
        && a.frac_bits == b.frac_bits
        && a.bias == b.bias
        && a.signed == b.signed
}
const _: () = assert!(
    same_row(ALL_FORMATS[FP32_AT], FP32)
        && same_row(ALL_FORMATS[FP16_AT], FP16)
        && same_row(ALL_FORMATS[E4M3_AT], E4M3)
        && same_row(ALL_FORMATS[E5M2_AT], E5M2)
);

/// The round-to-nearest-even `ieee` chain built for accumulator format `acc` (FP32 or
/// FP16); `None` for any other format.
pub fn ieee_chain(acc: Format) -> Option<IeeeChain> {
    if acc == FP32 {
        Some(chain_fixed::<FP32_AT>)
    } else if acc == FP16 {
        Some(chain_fixed::<FP16_AT>)
    } else {
        None
    }
}

/// An accumulator format the `ieee` chain is built for, chosen once when a core is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IeeeAcc {
    /// FP32.
    Fp32,
    /// FP16.
    Fp16,
}

impl IeeeAcc {
    /// The chain's format for `acc`; `None` for a format other than FP32 or FP16.
    pub fn of(acc: Format) -> Option<Self> {
        if acc == FP32 {
            Some(IeeeAcc::Fp32)
        } else if acc == FP16 {
            Some(IeeeAcc::Fp16)
        } else {
            None
        }
    }
}

/// [`ieee_chain`] for the format `acc` names, inlined into the caller (a PE whose stage-2
/// wires are observed: the trace record is needed); the branch on `acc` is taken the same way
/// every cycle.
#[inline(always)]
pub fn ieee_chain_record(acc: IeeeAcc, products: &[Product], c: u32) -> StepRecord {
    match acc {
        IeeeAcc::Fp32 => chain_record_fixed::<FP32_AT>(products, c),
        IeeeAcc::Fp16 => chain_record_fixed::<FP16_AT>(products, c),
    }
}

/// [`ieee_chain`] without the trace fields, for a PE none of whose stage-2 wires is observed:
/// `(result bits, flags raised as` [`Flags::to_bits`]`)`. Each FMA is [`fma_acc_bits_by`] (the
/// normal-range unit where it answers, the full [`fma_acc`] otherwise: the same bits and
/// flags). Inlined into the caller: the branch on `acc` is taken the same way every cycle.
#[inline(always)]
pub fn ieee_chain_bits(acc: IeeeAcc, products: &[Product], c: u32) -> (u32, u8) {
    match acc {
        IeeeAcc::Fp32 => chain_bits_fixed::<FP32_AT>(products, c),
        IeeeAcc::Fp16 => chain_bits_fixed::<FP16_AT>(products, c),
    }
}
