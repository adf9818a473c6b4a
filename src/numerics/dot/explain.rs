//! A dot product taken apart stage by stage, for `tcrtl dot --explain`: the same stage
//! functions [`super::dot_acc`] composes ([`stage_multiply`], [`stage_special_acc`],
//! [`ieee::fma_acc`], [`fused::stage_align_acc`] / [`fused::stage_add_acc`] /
//! [`fused::stage_normalize_round_acc`], [`nvidia::stage_align_acc`] / [`nvidia::stage_add`] /
//! [`nvidia::stage_normalize_round_acc`], and the adder [`add`] that adds `c` after the two
//! k16 steps of [`BlockRule::K16Steps`]), called one by one with their outputs kept, into
//! either accumulator format (FP32 or FP16). Nothing is computed here that the stages do not
//! compute, except the bits each NVIDIA alignment cut off (read from the stage's own shift and
//! kept value) and the choice of each k16 step's products (`k mod 4`, as the rule states).

use super::fused::{self, FusedAlign, FusedSum};
use super::ieee::{self, FmaStage};
use super::mode::{AccMode, BlockRule, DotError, NvidiaParams};
use super::nvidia::{self, BlockAlign, BlockSum};
use super::stage::{stage_multiply, stage_special_acc, MultiplyStage, SpecialStage, MAX_LANES};
use super::{dot_acc, dot_step_acc, DotResult};
use crate::numerics::add::{add, AddResult};
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::{Format, FP16, FP32};
use crate::numerics::round::Rounded;
use crate::numerics::unpack::unpack;

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
    /// normalisation and rounding in the preset's direction (toward zero into FP32, to
    /// nearest even into FP16).
    Nvidia {
        /// The grid and each term's shift and kept value.
        align: Box<BlockAlign<MAX_LANES>>,
        /// Per lane: the product's significand bits the alignment cut off (0 if none).
        dropped: Box<[u64; MAX_LANES]>,
        /// The same for `c`.
        c_dropped: u64,
        /// The integer sum on the grid.
        sum: BlockSum,
        /// Normalisation and rounding to the accumulator (`params.out_rounding`, keeping
        /// `params.out_frac_bits` fraction bits).
        round: Rounded,
    },
    /// `nvidia` Blackwell FP8 block (exact product sum, truncated, then one RNE addition of
    /// `c`): only the result is broken out.
    NvidiaExactThenRne,
    /// `nvidia` block under a rule not broken out here (its specials, alignment and rounding
    /// are the rule's own): only the result is shown.
    NvidiaResultOnly(BlockRule),
    /// `nvidia` FP8 block of [`BlockRule::K16Steps`] (and of [`BlockRule::HalfSteps`], whose
    /// specials are decided for the whole block first and whose steps are FP16): two
    /// truncating k16 steps from zero, each rounded to the step format, then `c` added once
    /// with round to nearest even.
    NvidiaK16Steps {
        /// `s1`: the products with `k mod 4` in {0, 1}, from `+0`.
        s1: Box<K16Step>,
        /// `s2`: `s1` and the products with `k mod 4` in {2, 3}.
        s2: Box<K16Step>,
        /// `d = RNE(c + s2)` in the step format: the adder's alignment and rounding.
        add: AddResult,
    },
}

/// One k16 step of [`StepStages::NvidiaK16Steps`]: a truncating block over some of the
/// block's products and the step's accumulator, with its own specials stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct K16Step {
    /// The format the step rounds into (the accumulator; FP16 for [`BlockRule::HalfSteps`]).
    pub fmt: Format,
    /// The lanes of the block (indices into the step's products) the k16 step takes, in k
    /// order.
    pub lanes: Vec<usize>,
    /// The accumulator entering the k16 step (`+0` for `s1`, `s1` for `s2`).
    pub c: u32,
    /// The k16 step's specials stage (`None` where the whole block's decided first).
    pub special: Option<SpecialStage>,
    /// [`StepStages::Special`] or [`StepStages::Nvidia`] (the truncating block).
    pub stages: StepStages,
    /// The k16 step's result in `fmt`.
    pub bits: u32,
    /// The k16 step's flags.
    pub flags: Flags,
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
    /// The accumulator format of `c`, every step's result and the result (FP32 or FP16).
    pub acc: Format,
    /// The steps, in order.
    pub steps: Vec<StepExplained>,
    /// The result, as [`dot_acc`] returns it.
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

/// The bits of `c` (in `acc`) the block alignment cut off, on the significand the stage
/// aligned (an FP16 subnormal `c` enters the block with its leading one at the hidden-bit
/// place, so its significand is shifted up to the stage's LSB first).
fn c_cut_bits<const W: usize>(acc: Format, c: u32, al: &BlockAlign<W>) -> u64 {
    let cu = unpack(acc, c as u64);
    if cu.sig == 0 {
        return 0;
    }
    let up = cu.lsb_exp() - (al.lsb_exp - al.c_shift);
    let sig = if (0..64).contains(&up) {
        cu.sig << up
    } else {
        cu.sig
    };
    cut_bits(sig, al.c_shift, al.c_aligned)
}

/// What one explained step (or k16 step) produced: its specials stage (if run), the mode's
/// stages, the result and the flags.
type Staged = (Option<SpecialStage>, StepStages, u32, Flags);

/// A truncating block over `m` and `c` into `acc`, stage by stage (specials already
/// decided): the stages, the result and the flags of the rounding and alignment.
fn truncating_block(
    p: &NvidiaParams,
    m: &MultiplyStage<MAX_LANES>,
    c: u32,
    acc: Format,
) -> (StepStages, u32, Flags) {
    let align = nvidia::stage_align_acc(p, m, c, acc);
    let mut dropped = [0u64; MAX_LANES];
    for (k, prod) in m.valid().iter().enumerate() {
        dropped[k] = cut_bits(prod.sig, align.align_shift[k], align.aligned[k]);
    }
    let c_dropped = c_cut_bits(acc, c, &align);
    let sum = nvidia::stage_add(&align);
    let round = nvidia::stage_normalize_round_acc(p, &sum, acc);
    let (bits, flags) = (round.bits as u32, round.flags);
    let stages = StepStages::Nvidia {
        align: Box::new(align),
        dropped: Box::new(dropped),
        c_dropped,
        sum,
        round,
    };
    (stages, bits, flags)
}

/// `bits` with a NaN of `acc` replaced by NVIDIA's canonical NaN.
fn nvidia_canon(bits: u32, acc: Format) -> u32 {
    if acc.is_nan(u64::from(bits)) {
        nvidia::nvidia_nan(acc)
    } else {
        bits
    }
}

/// One k16 step: the products of `m` with `k mod 4` in {`first`, `first + 1`} and `c`, one
/// truncating block into `fmt`; with `specials`, deciding its own NaN and infinities first.
fn k16_step(
    p: &NvidiaParams,
    m: &MultiplyStage<MAX_LANES>,
    first: usize,
    c: u32,
    fmt: Format,
    specials: bool,
) -> K16Step {
    let lanes: Vec<usize> = (0..m.lanes)
        .filter(|k| k % 4 == first || k % 4 == first + 1)
        .collect();
    let products: Vec<_> = lanes.iter().map(|&k| m.products[k]).collect();
    let sub = MultiplyStage::<MAX_LANES>::from_products(&products);
    let inner = NvidiaParams {
        rule: BlockRule::Truncating,
        ..*p
    };
    let sp = specials.then(|| stage_special_acc(&sub, c, fmt));
    let (stages, bits, flags) = match sp.and_then(|s| s.result) {
        Some(bits) => (
            StepStages::Special,
            nvidia_canon(bits, fmt),
            sp.map_or(Flags::NONE, |s| s.flags),
        ),
        None => {
            let (stages, bits, flags) = truncating_block(&inner, &sub, c, fmt);
            (stages, bits, flags | sp.map_or(Flags::NONE, |s| s.flags))
        }
    };
    K16Step {
        fmt,
        lanes,
        c,
        special: sp,
        stages,
        bits,
        flags,
    }
}

/// The two k16 steps and the addition of `c` ([`BlockRule::K16Steps`] into `acc`, or
/// [`BlockRule::HalfSteps`] into FP16 with the whole block's specials decided by the caller).
fn k16_steps(
    p: &NvidiaParams,
    m: &MultiplyStage<MAX_LANES>,
    c: u32,
    acc: Format,
) -> (StepStages, u32, Flags) {
    let (fmt, specials) = match p.rule {
        BlockRule::HalfSteps => (FP16, false),
        _ => (acc, true),
    };
    let s1 = k16_step(p, m, 0, 0, fmt, specials);
    let s2 = k16_step(p, m, 2, s1.bits, fmt, specials);
    let r = add(fmt, c as u64, s2.bits as u64, RoundingMode::NearestEven);
    let bits = nvidia_canon(r.rounded.bits as u32, acc);
    let flags = r.rounded.flags | s1.flags | s2.flags | m.flags;
    let stages = StepStages::NvidiaK16Steps {
        s1: Box::new(s1),
        s2: Box::new(s2),
        add: r,
    };
    (stages, bits, flags)
}

/// Runs one step through the stages into `acc`, keeping every stage output.
#[allow(clippy::too_many_arguments)]
fn step(
    mode: &AccMode,
    rm: RoundingMode,
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
) -> (MultiplyStage<MAX_LANES>, Staged) {
    let m = stage_multiply::<MAX_LANES>(fmt_a, fmt_b, a, b);
    if let AccMode::Ieee = mode {
        let mut bits = c;
        let mut flags = Flags::NONE;
        let mut fmas = Vec::with_capacity(m.lanes);
        for p in m.valid() {
            let f = ieee::fma_acc(bits, p, rm, acc);
            fmas.push((bits, f));
            bits = f.bits;
            flags |= f.flags;
        }
        return (m, (None, StepStages::Ieee(fmas), bits, flags));
    }
    if let AccMode::Nvidia(p) = mode {
        if p.rule == BlockRule::K16Steps {
            // Each k16 step decides its own specials: no whole-block specials stage.
            let (stages, bits, flags) = k16_steps(p, &m, c, acc);
            return (m, (None, stages, bits, flags));
        }
        let shown = [
            BlockRule::Truncating,
            BlockRule::HalfSteps,
            BlockRule::ExactThenRne,
        ];
        if !shown.contains(&p.rule) {
            // A rule not broken out here: the step as `dot_acc` runs it (the rule's own
            // operand handling, specials and block), its result only.
            let r = dot_step_acc(mode, rm, acc, fmt_a, fmt_b, a, b, c);
            return (
                m,
                (None, StepStages::NvidiaResultOnly(p.rule), r.bits, r.flags),
            );
        }
    }
    let sp = stage_special_acc(&m, c, acc);
    if let Some(mut bits) = sp.result {
        if matches!(mode, AccMode::Nvidia(_)) {
            // The nvidia mode returns NVIDIA's canonical NaN.
            bits = nvidia_canon(bits, acc);
        }
        return (m, (Some(sp), StepStages::Special, bits, sp.flags));
    }
    let (stages, bits, flags) = match mode {
        AccMode::Nvidia(p) if p.rule == BlockRule::Truncating => truncating_block(p, &m, c, acc),
        AccMode::Nvidia(p) if p.rule == BlockRule::HalfSteps => k16_steps(p, &m, c, acc),
        AccMode::Nvidia(p) => {
            let r = nvidia::block_acc(p, &m, c, acc);
            (StepStages::NvidiaExactThenRne, r.bits, r.flags)
        }
        _ => {
            let align = fused::stage_align_acc(&m, c, acc);
            let sum = fused::stage_add_acc(&m, &align, c, rm, acc);
            let round = fused::stage_normalize_round_acc(&sum, rm, acc);
            let (bits, flags) = (round.bits as u32, round.flags);
            let stages = StepStages::Fused {
                align: Box::new(align),
                sum,
                round,
            };
            (stages, bits, flags)
        }
    };
    (m, (Some(sp), stages, bits, flags | sp.flags))
}

/// [`super::dot_rounded`] stage by stage: the same grouping (`width` products a step for
/// `ieee` and `fused`, the block size for `nvidia`, one rounding for `exact`) and the same
/// result. The `exact` mode is explained for K up to [`MAX_LANES`] (one step of the fused
/// datapath).
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
    explain_acc(mode, rm, FP32, fmt_a, fmt_b, a, b, c, width)
}

/// [`explain`] into the accumulator format `acc` (FP32 or FP16): [`dot_acc`] stage by stage,
/// `c`, every step's result and the result `acc` patterns, every rounding into `acc` (for
/// `nvidia`, `mode`'s parameters must come from [`super::Preset::params_for`] with the same
/// `acc`).
#[allow(clippy::too_many_arguments)]
pub fn explain_acc(
    mode: &AccMode,
    rm: RoundingMode,
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    width: usize,
) -> Result<Explained, DotError> {
    // Every argument check (accumulator, lengths, width, formats, rounding) is dot_acc's own.
    let result = dot_acc(mode, rm, acc, fmt_a, fmt_b, a, b, c, width)?;
    let group = match mode {
        AccMode::Nvidia(p) => p.block.clamp(1, MAX_LANES),
        AccMode::Exact if a.len() > MAX_LANES => return Err(DotError::BadWidth(a.len())),
        AccMode::Exact => MAX_LANES,
        _ => width,
    };
    let mut steps = Vec::new();
    let mut bits_in = c;
    for (i, (ca, cb)) in a.chunks(group).zip(b.chunks(group)).enumerate() {
        let (multiply, (special, stages, bits, flags)) =
            step(mode, rm, acc, fmt_a, fmt_b, ca, cb, bits_in);
        steps.push(StepExplained {
            first: i * group,
            c: bits_in,
            a: ca.to_vec(),
            b: cb.to_vec(),
            multiply,
            special,
            stages,
            bits,
            flags,
        });
        bits_in = bits;
    }
    Ok(Explained { acc, steps, result })
}
