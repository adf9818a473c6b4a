//! FP32 promotion every `N` products, as FP8 GEMM libraries schedule it (docs/numerics.md,
//! "FP32 promotion"): K is split into chunks of `N` products in k order; each chunk is a dot
//! product of the tensor core's own rule (the accumulation mode and preset) from an
//! accumulator of `+0`, and the chunk's FP32 result is added into a running FP32 sum, which
//! starts at C, by one IEEE addition rounded to nearest even (the FP32 adder,
//! [`crate::numerics::add()`]). The last chunk may be shorter; `N >= K` is no promotion at all
//! (C enters the tensor core's accumulator, the same bits as without).
//!
//! [`promoted`] is the one routine that splits K and adds the chunks: [`dot_promoted`] (one
//! dot product), [`dot_batch_promoted`] (many rows) and the GEMM runners
//! (`crate::gemm::promote`) all go through it or through its two parts, [`chunk_ranges`] and
//! [`promote_add`].

use super::mode::{AccMode, DotError};
use super::{dot_acc, DotResult, FlagCounts, RowsResult};
use crate::numerics::add::add;
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::{Format, FP32};
use rayon::prelude::*;
use std::ops::Range;

/// Why a promoted dot product cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PromoteError {
    /// A promotion interval of zero products.
    #[error("the promotion interval must be at least 1 product (got 0)")]
    ZeroInterval,
    /// Promotion adds the chunk results in FP32; an FP16 accumulator has no FP32 register to
    /// promote into.
    #[error("promotion adds each chunk into an FP32 sum: it needs the fp32 accumulator, not {0}")]
    NotFp32(&'static str),
    /// Integer MMA sums exactly in int32: there is nothing to promote.
    #[error("integer formats sum exactly in int32: FP32 promotion does not apply to them")]
    Integer,
    /// The interval would split an NVIDIA block (one MMA instruction's block FMA).
    #[error(
        "promotion every {every} products splits the preset's blocks of {block}: the \
         interval must be a multiple of {block} (the hardware promotes between whole MMA \
         instructions)"
    )]
    SplitsBlock {
        /// The promotion interval `N`.
        every: usize,
        /// The preset's block size `n`.
        block: usize,
    },
    /// The dot product itself refused its configuration or operands.
    #[error(transparent)]
    Dot(#[from] DotError),
}

/// Checks a promotion interval against the mode and the accumulator: `every >= 1`, an FP32
/// accumulator, a floating-point mode, and for `nvidia` a multiple of the block size.
pub fn check_promotion(mode: &AccMode, acc: Format, every: usize) -> Result<(), PromoteError> {
    if every == 0 {
        return Err(PromoteError::ZeroInterval);
    }
    match mode {
        AccMode::Int(_) => return Err(PromoteError::Integer),
        AccMode::Nvidia(p) if !every.is_multiple_of(p.block.max(1)) => {
            return Err(PromoteError::SplitsBlock {
                every,
                block: p.block,
            })
        }
        _ => {}
    }
    if acc != FP32 {
        return Err(PromoteError::NotFp32(acc.name));
    }
    Ok(())
}

/// The chunks of a length-`k` reduction promoted every `every` products (`every >= 1`), in k
/// order: `0..every`, `every..2 every`, ..., the last one shorter. For `k <= every` it is the
/// one range `0..k`, which is not promoted (see [`is_promoted`]); for `k = 0` it is empty.
pub fn chunk_ranges(k: usize, every: usize) -> impl Iterator<Item = Range<usize>> {
    let every = every.max(1);
    (0..k)
        .step_by(every)
        .map(move |start| start..(start + every).min(k))
}

/// True if a length-`k` reduction is promoted at all (more than one chunk).
pub fn is_promoted(k: usize, every: usize) -> bool {
    k > every
}

/// The promotion addition: `sum + chunk` in FP32 rounded to nearest even, IEEE specials
/// included (the CUDA cores' FP32 add); the result's bits and flags.
pub fn promote_add(sum: u32, chunk: u32) -> (u32, Flags) {
    let r = add(
        FP32,
        u64::from(sum),
        u64::from(chunk),
        RoundingMode::NearestEven,
    );
    (r.rounded.bits as u32, r.rounded.flags)
}

/// The promoted reduction of length `k` from C = `c` (FP32 bits), promoted every `every`
/// products: `chunk(range, c_in)` computes the tensor core's dot product over `range` from the
/// accumulator `c_in`. For `k <= every` that is one call with `c` (no promotion); otherwise
/// one call per chunk from `+0`, each result added into the running sum by [`promote_add`].
/// The flags are the OR of every chunk's and every addition's; the steps, the chunks'.
pub fn promoted<E>(
    k: usize,
    every: usize,
    c: u32,
    mut chunk: impl FnMut(Range<usize>, u32) -> Result<DotResult, E>,
) -> Result<DotResult, E> {
    if !is_promoted(k, every) {
        return chunk(0..k, c);
    }
    let mut sum = c;
    let mut flags = Flags::NONE;
    let mut steps = 0;
    for range in chunk_ranges(k, every) {
        let part = chunk(range, 0)?;
        let (bits, f) = promote_add(sum, part.bits);
        sum = bits;
        flags |= part.flags | f;
        steps += part.steps;
    }
    Ok(DotResult {
        bits: sum,
        flags,
        steps,
    })
}

/// [`super::dot_acc`] promoted to FP32 every `every` products ([`promoted`] over
/// [`super::dot_acc`]'s chunks, each from `+0`). `acc` must be FP32; the `nvidia` parameters
/// come from [`super::Preset::params_for`] with FP32, and `every` must be a multiple of their
/// block size. The checks of [`super::dot_acc`] apply as they are.
#[allow(clippy::too_many_arguments)]
pub fn dot_promoted(
    mode: &AccMode,
    rm: RoundingMode,
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    width: usize,
    every: usize,
) -> Result<DotResult, PromoteError> {
    // The dot product's own checks first (formats, width, rounding, lengths), then the
    // promotion's.
    dot_acc(mode, rm, acc, fmt_a, fmt_b, &[], &[], 0, width)?;
    if a.len() != b.len() {
        return Err(DotError::LengthMismatch {
            a: a.len(),
            b: b.len(),
        }
        .into());
    }
    check_promotion(mode, acc, every)?;
    promoted(a.len(), every, c, |r, c_in| {
        dot_acc(
            mode,
            rm,
            acc,
            fmt_a,
            fmt_b,
            &a[r.clone()],
            &b[r],
            c_in,
            width,
        )
    })
    .map_err(PromoteError::from)
}

/// Many promoted dot products: row `r` of `a` and `b` (row-major, `k` each) from `c[r]`, each
/// equal to [`dot_promoted`] bit for bit, computed in parallel; every row's result and flags.
#[allow(clippy::too_many_arguments)]
pub fn dot_batch_promoted(
    mode: &AccMode,
    rm: RoundingMode,
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: &[u32],
    k: usize,
    width: usize,
    every: usize,
) -> Result<RowsResult, PromoteError> {
    let rows = c.len();
    if a.len() != rows * k || b.len() != rows * k {
        return Err(DotError::LengthMismatch {
            a: a.len(),
            b: b.len(),
        }
        .into());
    }
    // The checks once, on an empty row.
    dot_promoted(mode, rm, acc, fmt_a, fmt_b, &[], &[], 0, width, every)?;
    let out: Result<Vec<(u32, Flags)>, PromoteError> = (0..rows)
        .into_par_iter()
        .map(|r| {
            let (ra, rb) = (&a[r * k..(r + 1) * k], &b[r * k..(r + 1) * k]);
            dot_promoted(mode, rm, acc, fmt_a, fmt_b, ra, rb, c[r], width, every)
                .map(|d| (d.bits, d.flags))
        })
        .collect();
    let (d, flags) = out?.into_iter().unzip();
    Ok(RowsResult { d, flags })
}

/// How many rows raised each flag (the counts of [`super::dot_batch_acc`]).
pub fn count_flags(flags: &[Flags]) -> FlagCounts {
    let mut n = FlagCounts::default();
    for f in flags {
        n.invalid += f.invalid as u64;
        n.overflow += f.overflow as u64;
        n.underflow += f.underflow as u64;
        n.inexact += f.inexact as u64;
    }
    n
}
