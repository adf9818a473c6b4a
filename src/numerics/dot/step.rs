//! The stages every mode shares (multiply, specials) and the step entry points.
//!
//! A step takes up to `W` lanes (`a[k]`, `b[k]`, `k < lanes`) and the FP32 accumulator `c`.
//! Lanes past `lanes` are masked: they hold no data and take part in nothing (no product, no
//! maximum exponent, no zero sign). Stage outputs are plain `Copy` structs sized by `W`, so a
//! clocked model can keep them in pipeline registers; nothing allocates.

use super::fused;
use super::ieee;
use super::mode::{AccMode, MAX_LANES};
use super::nvidia;
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::{Class, Format, FP32};
use crate::numerics::multiply::{multiply, Product, ProductClass};
use crate::numerics::round::RoundTrace;
use crate::numerics::unpack::unpack;

/// The canonical FP32 NaN every mode returns (`0x7FC00000`).
pub const FP32_NAN: u32 = 0x7FC0_0000;

/// A zero product, used for masked lanes of a stage register.
pub const NO_PRODUCT: Product = Product {
    sign: false,
    class: ProductClass::Zero,
    exp_sum: 0,
    sig: 0,
    frac_bits: 0,
    flags: Flags::NONE,
};

/// Output of the multiply stage: per lane the exact product (`sign`, `class`, `exp_sum`,
/// `sig` = the significand product with `frac_bits` fraction bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultiplyStage<const W: usize> {
    /// Valid lanes (`products[lanes..]` are masked).
    pub lanes: usize,
    /// The exact products.
    pub products: [Product; W],
    /// OR of the products' flags (invalid for 0 x Inf or a signaling NaN input).
    pub flags: Flags,
}

/// Multiplies lane by lane: `a[k] * b[k]` exactly for `k < a.len()`.
///
/// `a` and `b` must have the same length, at most `W` (checked in debug builds; extra
/// entries of the longer slice are ignored).
#[inline(always)]
pub fn stage_multiply<const W: usize>(
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
) -> MultiplyStage<W> {
    debug_assert!(a.len() == b.len() && a.len() <= W);
    let lanes = a.len().min(b.len()).min(W);
    let mut products = [NO_PRODUCT; W];
    let mut flags = Flags::NONE;
    for k in 0..lanes {
        let p = multiply(fmt_a, a[k], fmt_b, b[k]);
        flags |= p.flags;
        products[k] = p;
    }
    MultiplyStage {
        lanes,
        products,
        flags,
    }
}

impl<const W: usize> MultiplyStage<W> {
    /// The valid products.
    pub fn valid(&self) -> &[Product] {
        &self.products[..self.lanes]
    }
}

/// Output of the specials stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecialStage {
    /// `Some(bits)` if a NaN or an infinity decides the result.
    pub result: Option<u32>,
    /// `invalid` for +Inf with -Inf, 0 x Inf or a signaling NaN; otherwise empty.
    pub flags: Flags,
}

/// Specials first, over `c` and all valid products at once: any NaN gives NaN; +Inf with
/// -Inf gives NaN (invalid); otherwise any infinity gives that signed infinity.
pub fn stage_special<const W: usize>(m: &MultiplyStage<W>, c: u32) -> SpecialStage {
    stage_special_acc(m, c, FP32)
}

/// [`stage_special`] for an accumulator `c` in format `acc` (FP32 or FP16): the result is
/// `acc`'s canonical NaN or signed infinity.
#[inline(always)]
pub fn stage_special_acc<const W: usize>(
    m: &MultiplyStage<W>,
    c: u32,
    acc: Format,
) -> SpecialStage {
    stage_special_of(m.valid(), m.flags, c, acc)
}

/// [`stage_special_acc`] over the products `products` whose flags OR to `product_flags`.
#[inline(always)]
pub fn stage_special_of(
    products: &[Product],
    product_flags: Flags,
    c: u32,
    acc: Format,
) -> SpecialStage {
    let cu = unpack(acc, c as u64);
    let mut flags = product_flags;
    if acc.is_signaling_nan(c as u64) {
        flags.invalid = true;
    }
    let mut nan = cu.is_nan();
    let (mut pos_inf, mut neg_inf) = (false, false);
    if cu.class == Class::Infinite {
        if cu.sign {
            neg_inf = true
        } else {
            pos_inf = true
        }
    }
    for p in products {
        match p.class {
            ProductClass::Nan => nan = true,
            ProductClass::Infinite if p.sign => neg_inf = true,
            ProductClass::Infinite => pos_inf = true,
            _ => {}
        }
    }
    let nan_bits = acc.canonical_nan() as u32;
    let result = if nan {
        Some(nan_bits)
    } else if pos_inf && neg_inf {
        flags.invalid = true;
        Some(nan_bits)
    } else if pos_inf {
        Some(acc.infinity(false).unwrap_or(acc.canonical_nan()) as u32)
    } else if neg_inf {
        Some(acc.infinity(true).unwrap_or(acc.canonical_nan()) as u32)
    } else {
        None
    };
    SpecialStage { result, flags }
}

/// The record of one dot-product step: the new accumulator and the named fields of the
/// stages that produced it, the same for every mode (what a clocked PE registers and traces:
/// see [`crate::hw::pe::fp::stage2_accumulate`]).
///
/// Per mode, "last" means the last FMA of an `ieee` chain, the last block of a chained
/// `nvidia` step; every field is 0/false when the specials stage decided (except `special`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepRecord {
    /// The new accumulator (an FP32 pattern, or an FP16 one in the low 16 bits).
    pub bits: u32,
    /// IEEE flags raised by the step (OR over its FMAs or blocks).
    pub flags: Flags,
    /// True if NaN or Inf decided the (last) result in the specials stage.
    pub special: bool,
    /// Alignment reference exponent of the (last) addition (0 when specials decided).
    pub max_exp: i32,
    /// Alignment shift of lane 0's term (`ieee`: the adder's shift of the last FMA; `fused`:
    /// the left shift into the wide register; `nvidia` truncating blocks: the right shift
    /// onto the block grid; 0 for the Blackwell FP8 rule).
    pub align_shift: i32,
    /// Bits dropped by the alignment: `sticky` of the `ieee` adder or of the `fused` wide
    /// window, `dropped` of a truncating `nvidia` block (false for the Blackwell FP8 rule).
    pub sticky: bool,
    /// Leading-zero count of the normalisation: the wide register's in `fused`/`exact`,
    /// `round.lzc` otherwise.
    pub lzc: u32,
    /// The normalise-round fields of the (last) rounding (`round_inc`, ...).
    pub round: RoundTrace,
}

/// The former name of [`StepRecord`], kept so existing call sites compile.
pub type StepResult = StepRecord;

impl StepRecord {
    /// A result decided by the specials stage.
    pub const fn special(bits: u32, flags: Flags) -> StepRecord {
        StepRecord {
            special: true,
            ..StepRecord::idle(bits, flags)
        }
    }

    /// A step that did no arithmetic (no valid lane in `ieee`): `c` passes through.
    pub const fn idle(bits: u32, flags: Flags) -> StepRecord {
        StepRecord {
            bits,
            flags,
            special: false,
            max_exp: 0,
            align_shift: 0,
            sticky: false,
            lzc: 0,
            round: RoundTrace::IDLE,
        }
    }
}

impl<const W: usize> MultiplyStage<W> {
    /// A multiply stage holding `products` (at most `W`; extra ones are dropped), with their
    /// flags ORed: how a block buffer's products re-enter the datapath.
    pub fn from_products(products: &[Product]) -> MultiplyStage<W> {
        let mut m = MultiplyStage {
            lanes: products.len().min(W),
            products: [NO_PRODUCT; W],
            flags: Flags::NONE,
        };
        for (slot, p) in m.products.iter_mut().zip(products) {
            *slot = *p;
            m.flags |= p.flags;
        }
        m
    }
}

/// Stage 2 of a step, the one composition of the post-multiply stages every mode uses (the
/// functional [`dot`](super::dot) and the clocked PE alike): accumulates the products of `m`
/// into `c` under `mode` (`ieee`: [`ieee::fma_chain_rm`]; `fused`/`exact`:
/// [`fused::step_rm`]; `nvidia`: [`nvidia::step`], chained blocks of `n` when `m` holds more
/// than `n` products, or one block over `gathered ++ m` when a block spans several steps).
///
/// `gathered` is the block buffer of an `nvidia` block gathered over earlier steps (`w < n`);
/// it must be empty otherwise and is ignored by the other modes.
#[inline(always)]
pub fn stage_accumulate<const W: usize>(
    mode: &AccMode,
    rm: RoundingMode,
    m: &MultiplyStage<W>,
    gathered: &[Product],
    c: u32,
) -> StepRecord {
    stage_accumulate_acc(mode, rm, FP32, m, gathered, c)
}

/// [`stage_accumulate`] into the accumulator format `acc` (FP32 or FP16): `c` and the
/// record's `bits` are `acc` patterns and every rounding of the step rounds to `acc` (for
/// `Nvidia`, `mode`'s parameters must be those of [`super::Preset::params_for`] with this
/// `acc`).
#[inline(always)]
pub fn stage_accumulate_acc<const W: usize>(
    mode: &AccMode,
    rm: RoundingMode,
    acc: Format,
    m: &MultiplyStage<W>,
    gathered: &[Product],
    c: u32,
) -> StepRecord {
    match mode {
        AccMode::Ieee => ieee::fma_chain_acc(m, c, rm, acc),
        AccMode::Fused | AccMode::Exact => fused::step_acc(m, c, rm, acc),
        AccMode::Nvidia(p) => nvidia::step_acc(p, m, gathered, c, acc),
        // Integers have their own stages (`numerics::int`, the PE's `pe::int`) and never
        // reach the floating-point accumulator: `c` passes through.
        AccMode::Int(_) => StepRecord::idle(c, Flags::NONE),
    }
}

/// One dot-product step with a compile-time lane count `W`: `c` and `a.len() <= W` products
/// under `mode` (for `Exact` a step is one rounding of `c` plus these products, as `Fused`;
/// for `Nvidia` a step is one block FMA over all its lanes, so `a.len()` should not exceed
/// the block size; [`stage_accumulate`] chains blocks instead).
#[inline(always)]
pub fn dot_step_w<const W: usize>(
    mode: &AccMode,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
) -> StepRecord {
    dot_step_w_rm::<W>(mode, RoundingMode::NearestEven, fmt_a, fmt_b, a, b, c)
}

/// [`dot_step_w`] with the `ieee`, `fused` and `exact` roundings in direction `rm`. The
/// `nvidia` block FMA keeps its hardware rounding whatever `rm` says ([`super::dot_rounded`]
/// refuses any other direction for it).
#[inline(always)]
pub fn dot_step_w_rm<const W: usize>(
    mode: &AccMode,
    rm: RoundingMode,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
) -> StepRecord {
    dot_step_w_acc::<W>(mode, rm, FP32, fmt_a, fmt_b, a, b, c)
}

/// [`dot_step_w_rm`] into the accumulator format `acc` (FP32 or FP16): `c` and the result are
/// `acc` bit patterns, and every rounding of the step rounds to `acc` (for `Nvidia`, `mode`'s
/// parameters must be those of [`super::Preset::params_for`] with this `acc`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn dot_step_w_acc<const W: usize>(
    mode: &AccMode,
    rm: RoundingMode,
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
) -> StepRecord {
    if let AccMode::Int(im) = mode {
        // One integer step: exact products and sum, narrowed into the int32 accumulator.
        let r = crate::numerics::int::dot_int(im.a, im.b, a, b, c as i32, W, im.overflow);
        return StepRecord::idle(r.bits(), Flags::NONE);
    }
    let mut m = stage_multiply::<W>(fmt_a, fmt_b, a, b);
    if let AccMode::Nvidia(p) = mode {
        if super::cdna::flushes_inputs(p.rule) {
            let lanes = m.lanes;
            super::cdna::flush_subnormal_operands(fmt_a, fmt_b, a, b, &mut m.products[..lanes]);
        }
    }
    match mode {
        // One block over every lane, as documented (the recorded trace digests hold this).
        AccMode::Nvidia(p) if m.lanes > p.block => nvidia::block_acc(p, &m, c, acc),
        _ => stage_accumulate_acc(mode, rm, acc, &m, &[], c),
    }
}

/// One dot-product step with the lane count taken from `a.len()` (at most 32): dispatches to
/// [`dot_step_w`] with the smallest of 1, 2, 4, 8, 16, 32 lanes that fits.
pub fn dot_step(
    mode: &AccMode,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
) -> StepRecord {
    dot_step_rm(mode, RoundingMode::NearestEven, fmt_a, fmt_b, a, b, c)
}

/// [`dot_step`] with the `ieee`, `fused` and `exact` roundings in direction `rm` (see
/// [`dot_step_w_rm`]).
pub fn dot_step_rm(
    mode: &AccMode,
    rm: RoundingMode,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
) -> StepRecord {
    dot_step_acc(mode, rm, FP32, fmt_a, fmt_b, a, b, c)
}

/// [`dot_step_rm`] into the accumulator format `acc` (see [`dot_step_w_acc`]).
#[allow(clippy::too_many_arguments)]
pub fn dot_step_acc(
    mode: &AccMode,
    rm: RoundingMode,
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
) -> StepRecord {
    debug_assert!(a.len() <= MAX_LANES);
    match a.len() {
        0..=1 => dot_step_w_acc::<1>(mode, rm, acc, fmt_a, fmt_b, a, b, c),
        2 => dot_step_w_acc::<2>(mode, rm, acc, fmt_a, fmt_b, a, b, c),
        3..=4 => dot_step_w_acc::<4>(mode, rm, acc, fmt_a, fmt_b, a, b, c),
        5..=8 => dot_step_w_acc::<8>(mode, rm, acc, fmt_a, fmt_b, a, b, c),
        9..=16 => dot_step_w_acc::<16>(mode, rm, acc, fmt_a, fmt_b, a, b, c),
        _ => dot_step_w_acc::<32>(mode, rm, acc, fmt_a, fmt_b, a, b, c),
    }
}
