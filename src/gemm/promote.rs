//! A GEMM with FP32 promotion every `N` products along K (docs/numerics.md, "FP32
//! promotion"), modelled as a real FP8 kernel does it: the tensor core computes each K-chunk
//! of every output tile from a zero accumulator, and an FP32 adder outside the core (the CUDA
//! cores' registers in a kernel) adds each chunk's D into the running D, which starts at C,
//! rounding to nearest even.
//!
//! [`run_clocked_promoted`] runs every chunk on the clocked core (one run per chunk: the
//! chunk's columns of A, rows of B and C = +0) and adds the chunk results with
//! [`promote_add`]; [`run_functional_promoted`] is the same rule over the functional model's
//! elements ([`super::functional::element`]). For `K <= N` both are the unpromoted run.

use super::clocked::{run_clocked_measured, ClockedRun};
use super::functional::element;
use super::problem::{Gemm, GemmError, GemmOutput};
use crate::hw::HwError;
use crate::numerics::dot::promote::{
    check_promotion, chunk_ranges, is_promoted, promote_add, promoted, PromoteError,
};
use crate::numerics::flags::Flags;
use std::ops::Range;

/// Why a promoted GEMM did not run.
#[derive(Debug, thiserror::Error)]
pub enum PromoteRunError {
    /// The promotion interval does not fit the problem's mode or accumulator.
    #[error(transparent)]
    Promote(#[from] PromoteError),
    /// A chunk's problem was refused.
    #[error(transparent)]
    Gemm(#[from] GemmError),
    /// The core refused a chunk or stopped.
    #[error(transparent)]
    Hw(#[from] HwError),
}

/// The K-chunk `range` of `g` as a problem of its own: A's columns and B's rows in `range`,
/// C = +0 (the tensor core's zero accumulator).
pub fn chunk_problem(g: &Gemm, range: Range<usize>) -> Result<Gemm, GemmError> {
    let kc = range.len();
    let a = (0..g.m)
        .flat_map(|i| g.a_row(i)[range.clone()].iter().copied())
        .collect();
    let b = g.b[range.start * g.n..range.end * g.n].to_vec();
    Gemm::new(g.m, g.n, kc, g.cfg, a, b, vec![0; g.m * g.n])
}

/// What a promoted clocked run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct PromotedRun {
    /// D (after the last promotion) and the OR of every chunk's and every addition's flags.
    pub out: GemmOutput,
    /// The promotion interval `N`.
    pub every: usize,
    /// Each chunk's clocked run, in k order (one run, the whole problem, if `K <= N`).
    pub chunks: Vec<ClockedRun>,
}

impl PromotedRun {
    /// The core's cycles over all chunks (the FP32 additions are outside the core and add no
    /// core cycles).
    pub fn cycles(&self) -> u64 {
        self.chunks.iter().map(|r| r.cycles).sum()
    }

    /// Wall-clock seconds of all the chunks' simulations.
    pub fn sim_seconds(&self) -> f64 {
        self.chunks.iter().map(|r| r.sim_seconds).sum()
    }

    /// Useful MAC slots over offered ones, over all chunks.
    pub fn utilization(&self) -> f64 {
        let used: u64 = self.chunks.iter().map(|r| r.mac_slots_used).sum();
        let offered: u64 = self.chunks.iter().map(|r| r.mac_slots_offered).sum();
        if offered == 0 {
            0.0
        } else {
            used as f64 / offered as f64
        }
    }
}

/// Runs `g` on the clocked tensor core promoted to FP32 every `every` products: each K-chunk
/// from a zero accumulator on the core, each chunk's D added into the running D (from C) by
/// the FP32 round-to-nearest-even adder. `K <= every` is one unpromoted run.
pub fn run_clocked_promoted(g: &Gemm, every: usize) -> Result<PromotedRun, PromoteRunError> {
    check_promotion(&g.cfg.mode, g.cfg.acc, every)?;
    if !is_promoted(g.k, every) {
        let run = run_clocked_measured(g, None)?.run;
        return Ok(PromotedRun {
            out: run.out.clone(),
            every,
            chunks: vec![run],
        });
    }
    let mut d = g.c.clone();
    let mut flags = Flags::NONE;
    let mut chunks = Vec::new();
    for range in chunk_ranges(g.k, every) {
        let run = run_clocked_measured(&chunk_problem(g, range)?, None)?.run;
        for (sum, &part) in d.iter_mut().zip(&run.out.d) {
            let (bits, f) = promote_add(*sum, part);
            *sum = bits;
            flags |= f;
        }
        flags |= run.out.flags;
        chunks.push(run);
    }
    Ok(PromotedRun {
        out: GemmOutput { d, flags },
        every,
        chunks,
    })
}

/// The functional model of [`run_clocked_promoted`]: every element is the numerics layer's
/// promoted reduction ([`promoted`]) over the functional model's element
/// ([`super::functional::element`], the core's dataflow order) of each chunk.
pub fn run_functional_promoted(g: &Gemm, every: usize) -> Result<GemmOutput, PromoteRunError> {
    check_promotion(&g.cfg.mode, g.cfg.acc, every)?;
    let mut d = vec![0u32; g.m * g.n];
    let mut flags = Flags::NONE;
    for j in 0..g.n {
        let col = g.b_col(j);
        for i in 0..g.m {
            let row = g.a_row(i);
            let r = promoted(g.k, every, g.c[i * g.n + j], |range, c_in| {
                element(&g.cfg, &row[range.clone()], &col[range], c_in)
            })
            .map_err(|e| PromoteRunError::Gemm(GemmError::Dot(e)))?;
            d[i * g.n + j] = r.bits;
            flags |= r.flags;
        }
    }
    Ok(GemmOutput { d, flags })
}
