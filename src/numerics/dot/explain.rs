//! A dot product taken apart stage by stage, for `tcrtl dot --explain`: the same stage
//! functions [`super::dot_rounded`] composes ([`stage_multiply`], [`stage_special`],
//! [`ieee::fma_rm`], [`fused::stage_align`] / [`fused::stage_add_rm`] /
//! [`fused::stage_normalize_round_rm`], [`nvidia::stage_align`] / [`nvidia::stage_add`] /
//! [`nvidia::stage_normalize_round`]), called one by one with their outputs kept. Nothing is
//! computed here that the stages do not compute, except the bits each NVIDIA alignment cut off
//! (read from the stage's own shift and kept value).

use super::fused::{self, FusedAlign, FusedSum};
use super::ieee::{self, FmaStage};
use super::mode::{AccMode, BlockRule, DotError, MAX_LANES};
use super::nvidia::{self, BlockAlign, BlockSum};
use super::step::{stage_multiply, stage_special, MultiplyStage, SpecialStage};
use super::{dot_rounded, DotResult};
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::{Format, FP32};
use crate::numerics::round::Rounded;

/// What the mode-specific stages of one step produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepStages {
    /// A NaN or an infinity decided the step in the specials stage.
    Special,
    /// `ieee`: one fused multiply-add per lane, in lane order (accumulator before each).
    Ieee(Vec<(u32, FmaStage)>),
    /// `fused` / `exact`: exact alignment, exact sum, one rounding.
    Fused {
        /// Where each term landed in the wide register.
        align: Box<FusedAlign<MAX_LANES>>,
        /// The exact sum.
        sum: FusedSum,
        /// Normalisation and rounding.
        round: Rounded,
    },
    /// `nvidia` truncating block FMA: alignment on a truncation grid, integer sum, one
    /// normalisation with truncation.
    Nvidia {
        /// The grid and each term's shift and kept value.
        align: Box<BlockAlign<MAX_LANES>>,
        /// Per lane: the product's significand bits the alignment cut off (0 if none).
        dropped: Box<[u64; MAX_LANES]>,
        /// The same for `c`.
        c_dropped: u64,
        /// The integer sum on the grid.
        sum: BlockSum,
        /// Normalisation and truncation to FP32.
        round: Rounded,
    },
    /// `nvidia` Blackwell FP8 block (exact product sum, truncated, then one RNE addition of
    /// `c`): only the result is broken out.
    NvidiaExactThenRne,
    /// `nvidia` H200 FP8 block ([`BlockRule::K16Steps`]: two truncating k16 steps, then one
    /// RNE addition of `c`): only the result is broken out.
    NvidiaK16Steps,
}

/// One step (one block for `nvidia`, one rounding for `fused`/`exact`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepExplained {
    /// Index of the step's first product in K.
    pub first: usize,
    /// The accumulator entering the step.
    pub c: u32,
    /// The step's A and B bit patterns.
    pub a: Vec<u64>,
    /// The step's B bit patterns.
    pub b: Vec<u64>,
    /// The multiply stage (exact products).
    pub multiply: MultiplyStage<MAX_LANES>,
    /// The specials stage (not run by `ieee`, whose FMAs decide specials one by one).
    pub special: Option<SpecialStage>,
    /// The mode's stages.
    pub stages: StepStages,
    /// The accumulator leaving the step.
    pub bits: u32,
    /// The step's flags.
    pub flags: Flags,
}

/// The whole dot product, step by step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explained {
    /// The steps, in order.
    pub steps: Vec<StepExplained>,
    /// The result, as [`dot_rounded`] returns it.
    pub result: DotResult,
}

/// The bits of `sig` a right shift by `shift` dropped, given the kept magnitude `kept`.
fn cut_bits(sig: u64, shift: i32, kept: i64) -> u64 {
    match shift {
        s if s <= 0 => 0,
        s if s >= 64 => sig,
        s => sig - (kept.unsigned_abs() << s),
    }
}

/// Runs one step through the stages, keeping every stage output.
fn step(
    mode: &AccMode,
    rm: RoundingMode,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
) -> (
    MultiplyStage<MAX_LANES>,
    Option<SpecialStage>,
    StepStages,
    u32,
    Flags,
) {
    let m = stage_multiply::<MAX_LANES>(fmt_a, fmt_b, a, b);
    if let AccMode::Ieee = mode {
        let mut acc = c;
        let mut flags = Flags::NONE;
        let mut fmas = Vec::with_capacity(m.lanes);
        for p in m.valid() {
            let f = ieee::fma_rm(acc, p, rm);
            fmas.push((acc, f));
            acc = f.bits;
            flags |= f.flags;
        }
        return (m, None, StepStages::Ieee(fmas), acc, flags);
    }
    let sp = stage_special(&m, c);
    if let Some(mut bits) = sp.result {
        if matches!(mode, AccMode::Nvidia(_)) && FP32.is_nan(u64::from(bits)) {
            // The nvidia mode returns NVIDIA's canonical NaN.
            bits = nvidia::nvidia_nan(FP32);
        }
        return (m, Some(sp), StepStages::Special, bits, sp.flags);
    }
    match mode {
        AccMode::Nvidia(p) if p.rule == BlockRule::Truncating => {
            let align = nvidia::stage_align(p, &m, c);
            let mut dropped = [0u64; MAX_LANES];
            for (k, prod) in m.valid().iter().enumerate() {
                dropped[k] = cut_bits(prod.sig, align.align_shift[k], align.aligned[k]);
            }
            let cu = crate::numerics::unpack::unpack(crate::numerics::format::FP32, c as u64);
            let c_dropped = cut_bits(cu.sig, align.c_shift, align.c_aligned);
            let sum = nvidia::stage_add(&align);
            let round = nvidia::stage_normalize_round(p, &sum);
            let bits = round.bits as u32;
            let flags = round.flags | sp.flags;
            let stages = StepStages::Nvidia {
                align: Box::new(align),
                dropped: Box::new(dropped),
                c_dropped,
                sum,
                round,
            };
            (m, Some(sp), stages, bits, flags)
        }
        AccMode::Nvidia(p) if p.rule == BlockRule::K16Steps => {
            let r = nvidia::block(p, &m, c);
            (m, Some(sp), StepStages::NvidiaK16Steps, r.bits, r.flags)
        }
        AccMode::Nvidia(p) => {
            let r = nvidia::block(p, &m, c);
            (m, Some(sp), StepStages::NvidiaExactThenRne, r.bits, r.flags)
        }
        _ => {
            let align = fused::stage_align(&m, c);
            let sum = fused::stage_add_rm(&m, &align, c, rm);
            let round = fused::stage_normalize_round_rm(&sum, rm);
            let (bits, flags) = (round.bits as u32, round.flags | sp.flags);
            (
                m,
                Some(sp),
                StepStages::Fused {
                    align: Box::new(align),
                    sum,
                    round,
                },
                bits,
                flags,
            )
        }
    }
}

/// [`dot_rounded`] stage by stage: the same grouping (`width` products a step for `ieee` and
/// `fused`, the block size for `nvidia`, one rounding for `exact`) and the same result. The
/// `exact` mode is explained for K up to [`MAX_LANES`] (one step of the fused datapath).
#[allow(clippy::too_many_arguments)]
pub fn explain(
    mode: &AccMode,
    rm: RoundingMode,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    width: usize,
) -> Result<Explained, DotError> {
    // Every argument check (lengths, width, formats, rounding) is dot_rounded's own.
    let result = dot_rounded(mode, rm, fmt_a, fmt_b, a, b, c, width)?;
    let group = match mode {
        AccMode::Nvidia(p) => p.block.clamp(1, MAX_LANES),
        AccMode::Exact if a.len() > MAX_LANES => return Err(DotError::BadWidth(a.len())),
        AccMode::Exact => MAX_LANES,
        _ => width,
    };
    let mut steps = Vec::new();
    let mut acc = c;
    for (i, (ca, cb)) in a.chunks(group).zip(b.chunks(group)).enumerate() {
        let (multiply, special, stages, bits, flags) = step(mode, rm, fmt_a, fmt_b, ca, cb, acc);
        steps.push(StepExplained {
            first: i * group,
            c: acc,
            a: ca.to_vec(),
            b: cb.to_vec(),
            multiply,
            special,
            stages,
            bits,
            flags,
        });
        acc = bits;
    }
    Ok(Explained { steps, result })
}
