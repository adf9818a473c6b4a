//! Layers of real networks on the clocked core: SCALE-Sim's topology files ([`topology`]),
//! each layer's seed, the check of a layer's D against the independent references of
//! `verify`, whole or on a seeded sample of its elements, the run of a whole topology
//! ([`run()`], sharded, resumable) and its report ([`report`]) (`docs/workloads.md`).
//!
//! This module sits above `gemm`, `verify` and `energy`: it imports them, and none imports it.

pub mod analytic;
pub mod report;
pub mod run;
pub mod shard;
pub mod topology;

pub use analytic::{
    analytic, scalesim_cycles, scalesim_mapping, scalesim_mapping_efficiency, Analytic,
};
pub use run::{
    run, Conflict, EnergyOptions, LayerDone, LayerOperands, Observer, Quiet, Refusal, RunError,
    RunOptions, RunStart, Split, Timing, Workload,
};
pub use shard::Shard;
pub use topology::{parse, ConvLayer, Layer, LayerKind, Topology, TopologyError, TopologyFormat};

use crate::dispatch::Problem;
use crate::gemm::rng::SplitMix64;
use crate::gemm::Gemm;
use crate::numerics::dot::Preset;
use crate::verify::gemm_ref::Reference;
use std::collections::BTreeSet;

/// The seed of layer `index` (0-based) of a run seeded with `seed`: one SplitMix64 output
/// of `seed` mixed with the index, so layers differ and a run is reproducible.
pub fn layer_seed(seed: u64, index: usize) -> u64 {
    SplitMix64::new(seed ^ (index as u64).wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64()
}

/// `count` distinct row-major indices below `total` (all of them when `count >= total`),
/// chosen by `seed`, in increasing order.
pub fn sample_indices(total: usize, count: usize, seed: u64) -> Vec<usize> {
    if count >= total {
        return (0..total).collect();
    }
    let mut rng = SplitMix64::new(seed);
    let mut picked = BTreeSet::new();
    while picked.len() < count {
        picked.insert(rng.below(total as u64) as usize);
    }
    picked.into_iter().collect()
}

/// How a layer's D was checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerCheck {
    /// The reference D was compared with.
    pub reference: &'static str,
    /// Elements of D compared.
    pub checked: usize,
    /// Elements of D (`M * N`).
    pub total: usize,
    /// Row-major indices of the compared elements that differ.
    pub mismatches: Vec<usize>,
}

impl LayerCheck {
    /// No check: a layer that was not simulated (`--analytic`).
    pub fn none() -> LayerCheck {
        LayerCheck {
            reference: "none",
            checked: 0,
            total: 0,
            mismatches: Vec::new(),
        }
    }

    /// Whether every element was compared.
    pub fn complete(&self) -> bool {
        self.checked == self.total
    }
}

/// Checks `d`, the clocked core's D of dense problem `g`: the whole of it by
/// [`crate::verify::check::check`] when `M * N * K <= max_check_macs`, otherwise `samples` elements
/// chosen by `seed`, each by the per-element reference of the core's dataflow
/// ([`Reference::dot`], or [`Reference::ws_dot`] for weight-stationary). `preset` is an
/// `nvidia` run's preset. An error when no independent reference covers the problem.
pub fn check_layer(
    g: &Gemm,
    preset: Option<Preset>,
    d: &[u32],
    max_check_macs: u64,
    samples: usize,
    seed: u64,
) -> Result<LayerCheck, String> {
    let total = g.m * g.n;
    if g.macs() <= max_check_macs {
        let c =
            crate::verify::check(Problem::Dense(g), preset, d)?.ok_or_else(|| no_reference(g))?;
        return Ok(LayerCheck {
            reference: c.reference,
            checked: total,
            total,
            mismatches: c.mismatches,
        });
    }
    let picked = sample_indices(total, samples, seed);
    check_elements(g, preset, d, &picked)
}

/// Checks the elements `picked` (row-major indices into `g`'s D, increasing) of `d` by the
/// per-element reference of the core's dataflow.
fn check_elements(
    g: &Gemm,
    preset: Option<Preset>,
    d: &[u32],
    picked: &[usize],
) -> Result<LayerCheck, String> {
    let r = Reference::for_problem(g, preset).map_err(|_| no_reference(g))?;
    let ws = g.cfg.dataflow().folds_k();
    let mut mismatches = Vec::new();
    for &i in picked {
        let (row, col) = (i / g.n, i % g.n);
        let (a, b, c) = (g.a_row(row), g.b_col(col), g.c[i]);
        let want = if ws {
            r.ws_dot(g, g.cfg.rows(), a, &b, c)?
        } else {
            r.dot(g, a, &b, c)
        };
        if d.get(i) != Some(&want) {
            mismatches.push(i);
        }
    }
    Ok(LayerCheck {
        reference: if ws { r.ws_name() } else { r.name() },
        checked: picked.len(),
        total: g.m * g.n,
        mismatches,
    })
}

/// Rows `rows` (increasing, each below `m`) of an `m`-row problem `g`: A's and C's rows,
/// all of B, as a problem of its own. Each element of D depends on its row of A and C and
/// its column of B alone, so the part's D is those rows of the whole problem's D.
pub fn rows_of(g: &Gemm, rows: &[usize]) -> Result<Gemm, String> {
    let (n, k) = (g.n, g.k);
    let mut a = Vec::with_capacity(rows.len() * k);
    let mut c = Vec::with_capacity(rows.len() * n);
    for &r in rows {
        a.extend_from_slice(g.a_row(r));
        c.extend_from_slice(&g.c[r * n..(r + 1) * n]);
    }
    Gemm::new(rows.len(), n, k, g.cfg, a, g.b.clone(), c).map_err(|e| e.to_string())
}

/// Checks `d`, the clocked core's D of `part`, which holds rows `rows` (increasing) of a
/// layer of `m` rows, as [`check_layer`] checks the whole layer: all of the part's elements
/// when the whole layer's `M * N * K` is at most `max_check_macs`, otherwise those of the
/// whole layer's `samples` elements chosen by `seed` that lie in these rows. So the checks of
/// parts that cover the layer's rows once add up to the whole layer's (`checked`,
/// mismatches), and `total` is the part's elements.
#[allow(clippy::too_many_arguments)]
pub fn check_layer_rows(
    part: &Gemm,
    rows: &[usize],
    m: usize,
    preset: Option<Preset>,
    d: &[u32],
    max_check_macs: u64,
    samples: usize,
    seed: u64,
) -> Result<LayerCheck, String> {
    let n = part.n;
    if (m * n * part.k) as u64 <= max_check_macs {
        return check_layer(part, preset, d, u64::MAX, samples, seed);
    }
    let picked: Vec<usize> = sample_indices(m * n, samples, seed)
        .into_iter()
        .filter_map(|i| {
            let at = rows.binary_search(&(i / n)).ok()?;
            Some(at * n + i % n)
        })
        .collect();
    check_elements(part, preset, d, &picked)
}

fn no_reference(g: &Gemm) -> String {
    format!(
        "no independent reference covers {} x {} {} into {}",
        g.cfg.fmt_a.name,
        g.cfg.fmt_b.name,
        g.cfg.mode.name(),
        g.cfg.acc.name
    )
}
