//! The accumulation order of the weight-stationary dataflow (`docs/numerics.md`,
//! "Weight-stationary order"): what a `ws` tensor core computes for one element of D.
//!
//! In `ws` an `R x C` array holds `R * w` elements of K per column (each PE `w` of them), so
//! K is cut into *folds* of `R * w`. Within a fold the partial sum runs down a column: it
//! enters the top PE as the accumulator format's negative zero (the additive identity: `-0 +
//! x = x` for every `x`, zeros included, under round-to-nearest-even), and each PE applies
//! the mode's own step to it (the same step as an output-stationary PE applies to its
//! accumulator: `w` products, `ieee` chains, `fused` rounds once, `nvidia` block FMAs,
//! integer wrap or saturation). The bottom row delivers the fold's partial sum to the
//! accumulator block, which adds the folds in K order after C with one rounding each
//! ([`fold_add`]):
//!
//! `D = (((C + F_0) + F_1) + ... + F_last)`.
//!
//! So `ws` rounds in a different order from `os` (`C` first, one chain over all of K)
//! whenever K spans more than one fold; for one fold it differs only by the final `C + F_0`.

use super::mode::{AccMode, DotError};
use super::{dot_acc, DotResult};
use crate::numerics::add::add;
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::Format;
use crate::numerics::int::{narrow, IntOverflow};

/// The partial sum entering the top of a column: the accumulator format's negative zero
/// (sign bit only), or integer 0.
pub fn psum_identity(mode: &AccMode, acc: Format) -> u32 {
    match mode {
        AccMode::Int(_) => 0,
        _ => 1u32 << (acc.width() - 1),
    }
}

/// The accumulator block's adder: `x + y` in the accumulator format `acc` with one rounding
/// (IEEE 754 addition, round to nearest even, the canonical NaN) for the floating-point
/// modes; the int32 sum wrapped or clamped by the mode's overflow rule for the integer mode.
/// Returns the sum's bits and the flags raised (none for integers).
#[inline]
pub fn fold_add(mode: &AccMode, acc: Format, x: u32, y: u32) -> (u32, Flags) {
    match mode {
        AccMode::Int(im) => (int_add(x, y, im.overflow), Flags::NONE),
        _ => {
            let r = add(acc, u64::from(x), u64::from(y), RoundingMode::NearestEven).rounded;
            (r.bits as u32, r.flags)
        }
    }
}

/// Two int32 words added exactly and narrowed by `overflow`.
#[inline]
fn int_add(x: u32, y: u32, overflow: IntOverflow) -> u32 {
    let sum = i64::from(x as i32) + i64::from(y as i32);
    narrow::<i32>(sum, overflow).0 as u32
}

/// Elements of K one fold of an array of `rows` rows with `width` products per PE holds.
pub const fn fold_len(rows: usize, width: usize) -> usize {
    rows * width
}

/// `d = c + sum_k a_k * b_k` in the weight-stationary order of an array of `rows` rows with
/// `width` products per PE (see the module): each fold's partial sum from the identity
/// through [`dot_acc`]'s steps, then the folds added to `c` one by one with [`fold_add`].
/// `steps` counts the PE steps and the accumulator additions. For `nvidia` the width must
/// hold whole blocks (`width >= n`, else [`DotError::BlockSpansPes`]), as the clocked `ws`
/// core requires: then the blocks of a fold chain exactly as its PEs do.
#[allow(clippy::too_many_arguments)]
pub fn ws_dot_acc(
    mode: &AccMode,
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: u32,
    width: usize,
    rows: usize,
) -> Result<DotResult, DotError> {
    if a.len() != b.len() {
        return Err(DotError::LengthMismatch {
            a: a.len(),
            b: b.len(),
        });
    }
    if width == 0 || width > super::MAX_LANES {
        return Err(DotError::BadWidth(width));
    }
    if let AccMode::Nvidia(p) = mode {
        if width < p.block {
            return Err(DotError::BlockSpansPes {
                block: p.block,
                width,
            });
        }
    }
    let fold = fold_len(rows.max(1), width);
    let identity = psum_identity(mode, acc);
    let mut bits = c;
    let mut flags = Flags::NONE;
    let mut steps = 0;
    for (fa, fb) in a.chunks(fold).zip(b.chunks(fold)) {
        let psum = dot_acc(
            mode,
            RoundingMode::NearestEven,
            acc,
            fmt_a,
            fmt_b,
            fa,
            fb,
            identity,
            width,
        )?;
        let (sum, add_flags) = fold_add(mode, acc, bits, psum.bits);
        bits = sum;
        flags |= psum.flags | add_flags;
        steps += psum.steps + 1;
    }
    Ok(DotResult { bits, flags, steps })
}
