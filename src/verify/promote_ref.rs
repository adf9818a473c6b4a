//! The reference of a GEMM promoted to FP32 every `N` products (docs/numerics.md, "FP32
//! promotion"), written from the rule apart from `crate::gemm::promote`: each K-chunk's D from
//! the independent reference of the problem's mode and dataflow ([`Reference`], C = +0), and
//! the chunks added into the running D (from C) with the host's `f32` addition, which rounds
//! to nearest even. `K <= N` is the unpromoted reference.

use super::gemm_ref::Reference;
use crate::gemm::Gemm;
use crate::hw::Dataflow;
use crate::numerics::dot::Preset;

/// D of `g` promoted every `every` products (`every >= 1`; FP32 accumulator), row-major FP32
/// bits; `preset` names an `nvidia` run's GPU. A NaN is left as the host's addition or the
/// chunk reference gives it (compare NaNs by class, [`same_bits_or_nan`]).
pub fn promoted_gemm(g: &Gemm, preset: Option<Preset>, every: usize) -> Result<Vec<u32>, String> {
    if every == 0 {
        return Err("the promotion interval must be at least 1 product".into());
    }
    let r = Reference::for_problem(g, preset)?;
    let whole = |p: &Gemm| match p.cfg.dataflow() {
        Dataflow::Os => Ok(r.gemm(p)),
        Dataflow::Ws | Dataflow::Is => r.ws_gemm(p, p.cfg.rows()),
    };
    if g.k <= every {
        return whole(g);
    }
    let mut d: Vec<f32> = g.c.iter().map(|&w| f32::from_bits(w)).collect();
    let mut start = 0;
    while start < g.k {
        let end = (start + every).min(g.k);
        // The chunk's operands, gathered here: A's columns start..end, B's rows.
        let a: Vec<u64> = (0..g.m)
            .flat_map(|i| g.a[i * g.k + start..i * g.k + end].iter().copied())
            .collect();
        let b = g.b[start * g.n..end * g.n].to_vec();
        let chunk = Gemm::new(g.m, g.n, end - start, g.cfg, a, b, vec![0; g.m * g.n])
            .map_err(|e| e.to_string())?;
        for (sum, part) in d.iter_mut().zip(whole(&chunk)?) {
            *sum += f32::from_bits(part);
        }
        start = end;
    }
    Ok(d.into_iter().map(f32::to_bits).collect())
}

/// True if the FP32 patterns `x` and `y` are equal, or both NaN (of any payload: the
/// references and the datapath each return their own canonical NaN).
pub fn same_bits_or_nan(x: u32, y: u32) -> bool {
    x == y || (f32::from_bits(x).is_nan() && f32::from_bits(y).is_nan())
}

/// Row-major indices where `got` and `want` differ ([`same_bits_or_nan`]; a length difference
/// counts the missing elements).
pub fn promoted_mismatches(got: &[u32], want: &[u32]) -> Vec<usize> {
    let n = got.len().max(want.len());
    (0..n)
        .filter(|&i| match (got.get(i), want.get(i)) {
            (Some(&x), Some(&y)) => !same_bits_or_nan(x, y),
            _ => true,
        })
        .collect()
}
