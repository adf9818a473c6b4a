//! The check of a block-scaled D that `tcrtl gemm --check` and the Python package run: the
//! independent `verify::mx_ref` and the functional `mx_dot` in `fused` mode, both in the
//! core's dataflow's order. It sits above `gemm` and `verify`, which it calls, beside the
//! other checks the front doors share (`io::arith`); `gemm::mx_input` re-exports it.

use crate::dispatch::Problem;
use crate::gemm::MxGemm;
use crate::hw::Dataflow;
use crate::verify::Check;

/// What the check of a block-scaled D compares it with, by dataflow.
pub fn check_reference(g: &MxGemm) -> &'static str {
    match g.cfg.dataflow() {
        Dataflow::Os => "verify::mx_ref and mx_dot fused",
        Dataflow::Ws | Dataflow::Is => "verify::mx_ref and mx_dot fused, in the ws order",
    }
}

/// The check of `tcrtl gemm --check` on a block-scaled D: the elements that differ from the
/// independent `verify::mx_ref` or from the functional `mx_dot` in `fused` mode (both in the
/// core's dataflow's order).
pub fn check_fused(g: &MxGemm, d: &[u32]) -> Result<Check, String> {
    let functional = g.functional().map_err(|e| e.to_string())?;
    let independent = crate::verify::check(Problem::Mx(g), None, d)?
        .ok_or("no independent reference for this block-scaled problem")?;
    let mut bad = vec![false; d.len()];
    for &i in &independent.mismatches {
        if let Some(b) = bad.get_mut(i) {
            *b = true;
        }
    }
    Ok(Check {
        reference: check_reference(g),
        mismatches: (0..d.len())
            .filter(|&i| functional.get(i).is_none_or(|f| f.bits as u32 != d[i]) || bad[i])
            .collect(),
    })
}
