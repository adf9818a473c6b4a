//! Many independent dot products at once: row `r` is `d[r] = c[r] + sum_k a[r][k] * b[r][k]`
//! under one mode and rounding, exactly as [`super::dot_rounded`] computes it for that row
//! ([`super::dot_acc`] for an FP16 accumulator, [`dot_batch_acc`]).
//! Rows are spread over the rayon thread pool in fixed-size groups; every row depends only on
//! its own operands and the flag counts are integer sums, so the results and counts are the
//! same whatever the thread count.

use super::mode::{AccMode, DotError};
use super::stage::MAX_LANES;
use super::{dot_acc, dot_step_w_acc, fused};
use crate::numerics::convert::tf32_from_container;
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::{Format, FP16, FP32};
use rayon::prelude::*;

/// Rows per rayon task: large enough that scheduling costs nothing next to the arithmetic,
/// small enough that two cores share the work evenly.
const ROWS_PER_TASK: usize = 4096;

/// How many rows raised each IEEE flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlagCounts {
    /// Rows whose result raised `invalid`.
    pub invalid: u64,
    /// Rows whose result raised `overflow`.
    pub overflow: u64,
    /// Rows whose result raised `underflow`.
    pub underflow: u64,
    /// Rows whose result raised `inexact`.
    pub inexact: u64,
}

impl FlagCounts {
    fn count(&mut self, f: Flags) {
        self.invalid += f.invalid as u64;
        self.overflow += f.overflow as u64;
        self.underflow += f.underflow as u64;
        self.inexact += f.inexact as u64;
    }

    fn merge(mut self, o: FlagCounts) -> FlagCounts {
        self.invalid += o.invalid;
        self.overflow += o.overflow;
        self.underflow += o.underflow;
        self.inexact += o.inexact;
        self
    }
}

/// The outcome of [`dot_batch`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchResult {
    /// The result of every row: FP32 bits, or FP16 bits (low 16) for [`dot_batch_acc`] into
    /// FP16.
    pub d: Vec<u32>,
    /// The OR of every row's flags, per row, counted.
    pub flags: FlagCounts,
}

/// Computes `rows = c.len()` dot products of length `k`: `a` and `b` hold the rows' bit
/// patterns row-major (`rows * k` each), `c` one FP32 accumulator per row. Width, mode and
/// rounding are as for [`super::dot_rounded`], whose result every row equals bit for bit.
#[allow(clippy::too_many_arguments)]
pub fn dot_batch(
    mode: &AccMode,
    rm: RoundingMode,
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
    c: &[u32],
    k: usize,
    width: usize,
) -> Result<BatchResult, DotError> {
    dot_batch_acc(mode, rm, FP32, fmt_a, fmt_b, a, b, c, k, width)
}

/// [`dot_batch`] into the accumulator format `acc` (FP32 or FP16): `c` and the results are
/// `acc` bit patterns, and every row equals [`super::dot_acc`] with this `acc` bit for bit
/// (for `nvidia`, `mode`'s parameters must come from [`super::Preset::params_for`] with the
/// same `acc`).
#[allow(clippy::too_many_arguments)]
pub fn dot_batch_acc(
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
) -> Result<BatchResult, DotError> {
    let job = Job::checked(mode, rm, acc, fmt_a, fmt_b, a, b, c, k, width)?;
    let mut d = vec![0u32; c.len()];
    // One monomorphised row loop per register width and accumulator: the step's lane
    // registers have the smallest power-of-two size that holds a group, fixed for the whole
    // batch, and the accumulator format is a constant inside the loop.
    let flags = if acc == FP16 {
        job.run_acc::<true>(&mut d)
    } else {
        job.run_acc::<false>(&mut d)
    };
    Ok(BatchResult { d, flags })
}

/// A word of a TF32 operand batch that holds no TF32 value: an FP32 container whose low 13
/// bits are not all zero (or a word wider than 32 bits). Row and column count from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "row {row}, column {col}: {word:#010x} is not a TF32 value (an FP32 word whose low 13 bits \
     are zero)"
)]
pub struct NotTf32 {
    /// The row (0-based).
    pub row: usize,
    /// The column, the index in K (0-based).
    pub col: usize,
    /// The word found there.
    pub word: u64,
}

/// A row-major `rows x k` batch of TF32 values given as FP32 containers (the words whose
/// low 13 bits are zero, as the GPUs' TF32 operands travel and as the single-value operand
/// parser takes them) as the 19-bit TF32 patterns [`dot_batch_acc`] takes; the first word
/// that is no such container is an error naming its row and column. `k = 0` gives an empty
/// batch.
pub fn tf32_patterns(containers: &[u64], k: usize) -> Result<Vec<u64>, NotTf32> {
    containers
        .iter()
        .enumerate()
        .map(|(i, &word)| {
            u32::try_from(word)
                .ok()
                .and_then(tf32_from_container)
                .ok_or(NotTf32 {
                    row: i / k.max(1),
                    col: i % k.max(1),
                    word,
                })
        })
        .collect()
}

/// The outcome of [`dot_batch_rows_acc`]: every row's result and its own flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowsResult {
    /// The result of every row (as [`BatchResult::d`]).
    pub d: Vec<u32>,
    /// The flags every row raised (the OR of its steps' flags), in row order.
    pub flags: Vec<Flags>,
}

/// [`dot_batch_acc`] keeping each row's flags instead of counting them: the same rows, the
/// same results bit for bit, the same checks; for front doors that report flags per row (the
/// Python package).
#[allow(clippy::too_many_arguments)]
pub fn dot_batch_rows_acc(
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
) -> Result<RowsResult, DotError> {
    let job = Job::checked(mode, rm, acc, fmt_a, fmt_b, a, b, c, k, width)?;
    let mut d = vec![0u32; c.len()];
    let mut flags = vec![Flags::NONE; c.len()];
    if acc == FP16 {
        job.run_rows_acc::<true>(&mut d, &mut flags)
    } else {
        job.run_rows_acc::<false>(&mut d, &mut flags)
    };
    Ok(RowsResult { d, flags })
}

/// A validated batch: the operands and the step grouping.
struct Job<'a> {
    mode: &'a AccMode,
    rm: RoundingMode,
    fmt_a: Format,
    fmt_b: Format,
    a: &'a [u64],
    b: &'a [u64],
    c: &'a [u32],
    k: usize,
    group: usize,
}

impl<'a> Job<'a> {
    /// The job of a batch after the checks of [`dot_batch_acc`]: the lengths, and the
    /// whole-K contract once on an empty row (or the first row).
    #[allow(clippy::too_many_arguments)]
    fn checked(
        mode: &'a AccMode,
        rm: RoundingMode,
        acc: Format,
        fmt_a: Format,
        fmt_b: Format,
        a: &'a [u64],
        b: &'a [u64],
        c: &'a [u32],
        k: usize,
        width: usize,
    ) -> Result<Self, DotError> {
        let rows = c.len();
        if a.len() != rows * k || b.len() != rows * k {
            return Err(DotError::LengthMismatch {
                a: a.len(),
                b: b.len(),
            });
        }
        // The whole-K contract and its checks, once, on an empty row (or the first row).
        let (a0, b0) = if rows == 0 {
            (&a[..0], &b[..0])
        } else {
            (&a[..k], &b[..k])
        };
        dot_acc(mode, rm, acc, fmt_a, fmt_b, a0, b0, 0, width)?;
        let group = match mode {
            AccMode::Nvidia(p) => p.block.clamp(1, MAX_LANES),
            _ => width,
        };
        Ok(Job {
            mode,
            rm,
            fmt_a,
            fmt_b,
            a,
            b,
            c,
            k,
            group,
        })
    }
}

impl Job<'_> {
    /// Every row into `d` with the accumulator FP16 (`HALF`) or FP32.
    fn run_acc<const HALF: bool>(&self, d: &mut [u32]) -> FlagCounts {
        match self.group {
            0..=1 => self.run::<1, HALF>(d),
            2 => self.run::<2, HALF>(d),
            3..=4 => self.run::<4, HALF>(d),
            5..=8 => self.run::<8, HALF>(d),
            9..=16 => self.run::<16, HALF>(d),
            _ => self.run::<32, HALF>(d),
        }
    }

    /// Row `r` with `W`-lane step registers (`group <= W`) into FP16 (`HALF`) or FP32: the
    /// whole-K contract of [`super::dot_acc`].
    #[inline(always)]
    fn row<const W: usize, const HALF: bool>(&self, r: usize) -> (u32, Flags) {
        let acc_fmt = if HALF { FP16 } else { FP32 };
        let k = self.k;
        let (ra, rb) = (&self.a[r * k..(r + 1) * k], &self.b[r * k..(r + 1) * k]);
        if k == 0 {
            return (self.c[r], Flags::NONE);
        }
        if let AccMode::Exact = self.mode {
            let s =
                fused::exact_all_acc(self.fmt_a, self.fmt_b, ra, rb, self.c[r], self.rm, acc_fmt);
            return (s.bits, s.flags);
        }
        let mut acc = self.c[r];
        let mut flags = Flags::NONE;
        for (ca, cb) in ra.chunks(self.group).zip(rb.chunks(self.group)) {
            let s = dot_step_w_acc::<W>(
                self.mode, self.rm, acc_fmt, self.fmt_a, self.fmt_b, ca, cb, acc,
            );
            acc = s.bits;
            flags |= s.flags;
        }
        (acc, flags)
    }

    /// Every row into `d` and its flags into `flags`, FP16 (`HALF`) or FP32.
    fn run_rows_acc<const HALF: bool>(&self, d: &mut [u32], flags: &mut [Flags]) {
        match self.group {
            0..=1 => self.run_rows::<1, HALF>(d, flags),
            2 => self.run_rows::<2, HALF>(d, flags),
            3..=4 => self.run_rows::<4, HALF>(d, flags),
            5..=8 => self.run_rows::<8, HALF>(d, flags),
            9..=16 => self.run_rows::<16, HALF>(d, flags),
            _ => self.run_rows::<32, HALF>(d, flags),
        }
    }

    /// Every row into `d` and `flags`, in parallel tasks of [`ROWS_PER_TASK`] rows.
    fn run_rows<const W: usize, const HALF: bool>(&self, d: &mut [u32], flags: &mut [Flags]) {
        d.par_chunks_mut(ROWS_PER_TASK)
            .zip(flags.par_chunks_mut(ROWS_PER_TASK))
            .enumerate()
            .for_each(|(t, (out, fl))| {
                for (i, (slot, f)) in out.iter_mut().zip(fl.iter_mut()).enumerate() {
                    (*slot, *f) = self.row::<W, HALF>(t * ROWS_PER_TASK + i);
                }
            });
    }

    /// Every row into `d`, in parallel tasks of [`ROWS_PER_TASK`] rows; the flag counts.
    fn run<const W: usize, const HALF: bool>(&self, d: &mut [u32]) -> FlagCounts {
        d.par_chunks_mut(ROWS_PER_TASK)
            .enumerate()
            .map(|(t, out)| {
                let mut counts = FlagCounts::default();
                for (i, slot) in out.iter_mut().enumerate() {
                    let (bits, f) = self.row::<W, HALF>(t * ROWS_PER_TASK + i);
                    *slot = bits;
                    counts.count(f);
                }
                counts
            })
            .reduce(FlagCounts::default, FlagCounts::merge)
    }
}
