//! One check of a clocked GEMM's D against the independent references of this layer
//! (`tcrtl gemm --check`, the testbenches, any binding): [`check`] picks the reference for the
//! problem's mode (and, for a dense problem, its dataflow's order) and returns the
//! reference's name and the mismatching elements of D.
//!
//! It never calls the arithmetic it checks: every reference here decodes the operands by its
//! own means and sums exactly (`gemm_ref`, `sparse`, `nvidia_ref`, `mx_ref`). Where no
//! independent reference covers a problem (a format and preset pair the GPU references lack),
//! [`check`] says so with `Ok(None)`, and the caller chooses another oracle.

use super::gemm_ref::{mismatches, Reference};
use super::mx_ref;
use super::sparse::{sparse_reference, SparseRef};
use crate::dispatch::Problem;
use crate::hw::Dataflow;
use crate::numerics::dot::{AccMode, Preset};
use crate::sparse::SparseGemm;

/// The outcome of one check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// The reference D was compared with.
    pub reference: &'static str,
    /// Row-major indices of the elements of D that differ from it.
    pub mismatches: Vec<usize>,
}

/// Compares `d` (row-major bits of the accumulator format) with the independent reference of
/// `problem`; `preset` is the GPU preset of an `nvidia` run. `Ok(None)` when no independent
/// reference covers a dense floating-point problem; `Err` when the problem is outside every
/// reference (an integer problem the references refuse).
pub fn check(
    problem: Problem<'_>,
    preset: Option<Preset>,
    d: &[u32],
) -> Result<Option<Check>, String> {
    match problem {
        Problem::Dense(g) => match (Reference::for_problem(g, preset), g.cfg.mode) {
            (Ok(r), _) => {
                // A stationary core (`ws`, `is`) rounds in its own order (`ws_ref`).
                let (want, reference) = match g.cfg.dataflow() {
                    Dataflow::Os => (r.gemm(g), r.name()),
                    Dataflow::Ws | Dataflow::Is => (r.ws_gemm(g, g.cfg.rows())?, r.ws_name()),
                };
                Ok(Some(Check {
                    reference,
                    mismatches: mismatches(d, &want),
                }))
            }
            (Err(e), AccMode::Int(_)) => Err(e),
            (Err(_), _) => Ok(None),
        },
        Problem::Sparse(s) => sparse(s, preset, d).map(Some),
        Problem::Mx(g) => Ok(Some(match g.cfg.dataflow() {
            Dataflow::Os => Check {
                reference: "verify::mx_ref",
                mismatches: mismatches(d, &mx_ref::gemm(g)),
            },
            Dataflow::Ws | Dataflow::Is => Check {
                reference: "verify::mx_ref ws order",
                mismatches: mismatches(d, &mx_ref::ws_gemm(g, g.cfg.rows(), g.cfg.width)),
            },
        })),
    }
}

/// A sparse D against `verify::sparse` for ieee, fused and exact; for nvidia the block-FMA
/// reference over the B rows gathered by the raw metadata bits. Both round to the
/// accumulator format (FP32 or FP16; for nvidia the FP16-output rules of `nvidia_ref`).
fn sparse(g: &SparseGemm, preset: Option<Preset>, d: &[u32]) -> Result<Check, String> {
    if g.cfg.dataflow().folds_k() {
        return sparse_ws(g, preset, d);
    }
    let how = match g.cfg.mode {
        AccMode::Ieee => Some(SparseRef::Ieee),
        AccMode::Fused => Some(SparseRef::Fused { width: g.cfg.width }),
        AccMode::Exact => Some(SparseRef::Exact),
        AccMode::Nvidia(_) | AccMode::Int(_) => None,
    };
    let want = match how {
        Some(how) => sparse_reference(&g.reference_operands(), how),
        None => {
            let dense = g.dense();
            let r = Reference::for_problem(&dense, preset)?;
            over_kept_products(g, |row, col, c| Ok(r.dot(&dense, row, col, c)))?
        }
    };
    let reference = match how {
        Some(SparseRef::Ieee) => "sparse_reference ieee",
        Some(SparseRef::Fused { .. }) => "sparse_reference fused",
        Some(SparseRef::Exact) => "sparse_reference exact",
        None => "nvidia_ref_dot over the kept products",
    };
    Ok(Check {
        reference,
        mismatches: mismatches(d, &want),
    })
}

/// The rows of B that row `i`'s kept values multiply, decoded here from the raw metadata
/// nibbles (two 2-bit positions within each group of four), not by the model's decoder.
fn kept_rows(g: &SparseGemm, i: usize) -> Vec<usize> {
    g.a.meta()[i * g.k / 4..(i + 1) * g.k / 4]
        .iter()
        .enumerate()
        .flat_map(|(q, &byte)| {
            [
                4 * q + (byte & 3) as usize,
                4 * q + ((byte >> 2) & 3) as usize,
            ]
        })
        .collect()
}

/// D of `g` by `element` over each output's kept products: row `i`'s kept values, the B
/// values their metadata selects in column `j`, and C.
fn over_kept_products(
    g: &SparseGemm,
    mut element: impl FnMut(&[u64], &[u64], u32) -> Result<u32, String>,
) -> Result<Vec<u32>, String> {
    let mut want = Vec::with_capacity(g.m * g.n);
    for i in 0..g.m {
        let row = &g.a.values()[i * g.k / 2..(i + 1) * g.k / 2];
        let rows = kept_rows(g, i);
        for j in 0..g.n {
            let col: Vec<u64> = rows.iter().map(|&p| g.b[p * g.n + j]).collect();
            want.push(element(row, &col, g.c[i * g.n + j])?);
        }
    }
    Ok(want)
}

/// A weight-stationary sparse D against the `ws` reference of its mode over the kept
/// products (each row's kept values and the B values their metadata selects: folds of
/// `R * w` kept values, as the array's rows hold them).
fn sparse_ws(g: &SparseGemm, preset: Option<Preset>, d: &[u32]) -> Result<Check, String> {
    let dense = g.dense();
    let r = Reference::for_problem(&dense, preset)?;
    let rows = g.cfg.rows();
    let want = over_kept_products(g, |row, col, c| r.ws_dot(&dense, rows, row, col, c))?;
    let reference = match r {
        Reference::Ieee => "ws_ref(ieee_dot) over the kept products",
        Reference::Fused(_) => "ws_ref(fused_dot) over the kept products",
        Reference::Exact => "ws_ref(exact_dot) over the kept products",
        Reference::Nvidia(_) => "ws_ref(nvidia_ref_dot) over the kept products",
        Reference::Int(..) => "ws_ref(int_ref_dot) over the kept products",
    };
    Ok(Check {
        reference,
        mismatches: mismatches(d, &want),
    })
}
