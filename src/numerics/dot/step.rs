//! The step entry points: a dot-product step's accumulation dispatched to its mode (`ieee`,
//! `fused`/`exact`, `nvidia`), over the shared stages of [`super::stage`].
//!
//! A step takes up to `W` lanes (`a[k]`, `b[k]`, `k < lanes`) and the FP32 accumulator `c`.
//! Lanes past `lanes` are masked: they hold no data and take part in nothing (no product, no
//! maximum exponent, no zero sign). Stage outputs are plain `Copy` structs sized by `W`, so a
//! clocked model can keep them in pipeline registers; nothing allocates.

use super::fused;
use super::ieee;
use super::mode::AccMode;
use super::nvidia;
use super::stage::MAX_LANES;
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::{Format, FP32};
use crate::numerics::multiply::Product;

/// The shared stages, also at their former paths (`dot::step::NO_PRODUCT`, ...).
pub use super::stage::{
    stage_multiply, stage_special, stage_special_acc, stage_special_of, MultiplyStage,
    SpecialStage, StepRecord, StepResult, FP32_NAN, NO_PRODUCT,
};

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
