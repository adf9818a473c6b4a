//! The dot-product step of a processing element: `w` products per step (1..=32) plus the
//! accumulator, under one of the accumulation modes of docs/numerics.md ([`AccMode`]).
//!
//! The accumulator format is a value, not a code path: every stage takes the accumulator
//! [`Format`] (FP32, the default, or FP16: [`crate::numerics::format::ACC_FORMATS`]), reads
//! `c` in it and rounds into it through the one shared round-pack. The `_acc` entry points
//! take it; the others are FP32.
//!
//! The step is written as stages with named, `Copy` outputs that a clocked PE can hold in
//! pipeline registers and trace:
//! - [`stage_multiply`] -> [`MultiplyStage`] (per lane `sign`, `class`, `exp_sum`, `sig`);
//! - [`stage_special`] -> [`SpecialStage`] (NaN / Inf decided first);
//! - `ieee`: [`ieee::fma`] per lane -> [`ieee::FmaStage`] (`align` = the adder's
//!   `max_exp`/`align_shift`/`sticky`, `round` = `lzc`/`round_inc`/...);
//! - `fused`/`exact`: [`fused::stage_align`] -> [`fused::stage_add`] ->
//!   [`fused::stage_normalize_round`];
//! - `nvidia`: [`nvidia::stage_align`] (`max_exp`, `align_shift`, `dropped`) ->
//!   [`nvidia::stage_add`] -> [`nvidia::stage_normalize_round`].
//!
//! The stages every mode shares are in [`stage`]; [`step`] dispatches a step to its mode.
//! [`dot_step`] composes them for one step; [`dot`] applies the whole-K contract;
//! [`dot_batch`] computes many rows in parallel.

pub mod batch;
pub mod cdna;
pub mod dmma;
pub mod explain;
pub mod fused;
pub mod gpu;
pub mod ieee;
pub mod mode;
pub mod nvidia;
pub mod promote;
pub mod stage;
pub mod step;
pub mod wide;
pub mod ws;

pub use batch::{
    dot_batch, dot_batch_acc, dot_batch_rows_acc, BatchResult, FlagCounts, RowsResult,
};
pub use gpu::{Gpu, GpuError, GpuRule, Instr, Row as GpuRow, ROWS as GPU_ROWS};
pub use mode::{AccMode, BlockRule, DotError, NvidiaParams, Preset};
pub use promote::{dot_batch_promoted, dot_promoted, PromoteError};
pub use stage::{
    stage_multiply, stage_special, stage_special_acc, MultiplyStage, SpecialStage, StepRecord,
    StepResult, FP32_NAN, MAX_LANES,
};
pub use step::{
    dot_step, dot_step_acc, dot_step_rm, dot_step_w, dot_step_w_acc, dot_step_w_rm,
    stage_accumulate, stage_accumulate_acc,
};
pub use wide::WideAcc;

use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::{Format, ACC_FORMATS, FP32, INPUT_FORMATS};

/// The result of a whole dot product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DotResult {
    /// The result in the accumulator format (FP32, or FP16 in the low 16 bits; int32 bits
    /// for [`AccMode::Int`]).
    pub bits: u32,
    /// OR of every step's flags.
    pub flags: Flags,
    /// Number of steps (blocks for `nvidia`, 1 for `exact`, `ceil(K / width)` otherwise).
    pub steps: usize,
}

/// `d = c + sum_k a_k * b_k` under `mode`, applying the whole-K contract: `c` first, k
/// ascending, grouped `width` products per step (`ieee`, `fused`); `nvidia` groups by its
/// block size `n` whatever the width (blocks chain, each result the next block's `c`);
/// `exact` rounds once. K = 0 returns `c` unchanged (no step). `a` and `b` hold bit patterns
/// of `fmt_a` and `fmt_b`.
pub fn dot(
    mode: &AccMode,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    width: usize,
) -> Result<DotResult, DotError> {
    dot_rounded(
        mode,
        RoundingMode::NearestEven,
        fmt_a,
        fmt_b,
        a,
        b,
        c,
        width,
    )
}

/// [`dot`] with every rounding of the `ieee`, `fused` and `exact` modes in direction `rm`
/// (each FMA, each step, or the one rounding). The `nvidia` presets keep their hardware
/// rounding: any `rm` but round-to-nearest-even is [`DotError::FixedRounding`] for them, as is
/// round-to-odd for every mode (it is no IEEE 754 direction).
#[allow(clippy::too_many_arguments)]
pub fn dot_rounded(
    mode: &AccMode,
    rm: RoundingMode,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    width: usize,
) -> Result<DotResult, DotError> {
    dot_acc(mode, rm, FP32, fmt_a, fmt_b, a, b, c, width)
}

/// [`dot_rounded`] into the accumulator format `acc` (FP32 or FP16): `c` and the result are
/// `acc` bit patterns. `ieee` chains FMAs rounded to `acc`, `fused` rounds each step to `acc`,
/// `exact` rounds once to `acc`; for `nvidia` the parameters must come from
/// [`Preset::params_for`] with the same `acc` (docs/numerics.md, "FP16 output").
#[allow(clippy::too_many_arguments)]
pub fn dot_acc(
    mode: &AccMode,
    rm: RoundingMode,
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    width: usize,
) -> Result<DotResult, DotError> {
    if !ACC_FORMATS.contains(&acc) {
        return Err(DotError::NotAnAccumulator(acc.name));
    }
    if rm == RoundingMode::ToOdd
        || (matches!(mode, AccMode::Nvidia(_)) && rm != RoundingMode::NearestEven)
    {
        return Err(DotError::FixedRounding {
            mode: mode.name(),
            rounding: rm.name(),
        });
    }
    if a.len() != b.len() {
        return Err(DotError::LengthMismatch {
            a: a.len(),
            b: b.len(),
        });
    }
    if width == 0 || width > MAX_LANES {
        return Err(DotError::BadWidth(width));
    }
    if let AccMode::Int(im) = mode {
        // Integers: `fmt_a`/`fmt_b` only give the lane widths; C and D are int32 bits.
        if a.is_empty() {
            return Ok(DotResult {
                bits: c,
                flags: Flags::NONE,
                steps: 0,
            });
        }
        let r = crate::numerics::int::dot_int(im.a, im.b, a, b, c as i32, width, im.overflow);
        return Ok(DotResult {
            bits: r.bits(),
            flags: Flags::NONE,
            steps: r.steps,
        });
    }
    for f in [fmt_a, fmt_b] {
        if !INPUT_FORMATS.contains(&f) {
            return Err(DotError::NotAnInput(f.name));
        }
    }
    if a.is_empty() {
        return Ok(DotResult {
            bits: c,
            flags: Flags::NONE,
            steps: 0,
        });
    }
    if let AccMode::Exact = mode {
        let r = fused::exact_all_acc(fmt_a, fmt_b, a, b, c, rm, acc);
        return Ok(DotResult {
            bits: r.bits,
            flags: r.flags,
            steps: 1,
        });
    }
    let group = match mode {
        AccMode::Nvidia(p) => p.block.clamp(1, MAX_LANES),
        _ => width,
    };
    let mut bits = c;
    let mut flags = Flags::NONE;
    let mut steps = 0;
    for (ca, cb) in a.chunks(group).zip(b.chunks(group)) {
        let r = dot_step_acc(mode, rm, acc, fmt_a, fmt_b, ca, cb, bits);
        bits = r.bits;
        flags |= r.flags;
        steps += 1;
    }
    Ok(DotResult { bits, flags, steps })
}
