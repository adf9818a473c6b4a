//! The fast functional model: every output element is the numerics layer's whole-K dot
//! product (`C` first, `k` ascending, `w` products a step, NVIDIA blocks of `n`) into the
//! configured accumulator format, with no clock; for the weight-stationary dataflow, the
//! `ws` order of [`crate::numerics::dot::ws`] (folds of `R * w`, added to `C` one by one). The clocked tensor core must give exactly these bits.

use super::problem::{Gemm, GemmError, GemmOutput};
use crate::hw::CoreConfig;
use crate::hw::Dataflow;
use crate::numerics::dot::ws::ws_dot_acc;
use crate::numerics::dot::{dot_acc, DotError, DotResult};
use crate::numerics::flags::Flags;
use crate::numerics::flags::RoundingMode;

/// One element of D, `c + row . col`, in the order of `cfg`'s dataflow: [`dot_acc`]'s one
/// chain over K (`os`), or [`ws_dot_acc`]'s folds (`ws`, and `is`, whose columns add the same
/// folds in the same order).
pub fn element(cfg: &CoreConfig, row: &[u64], col: &[u64], c: u32) -> Result<DotResult, DotError> {
    match cfg.dataflow() {
        Dataflow::Os => dot_acc(
            &cfg.mode,
            RoundingMode::NearestEven,
            cfg.acc,
            cfg.fmt_a,
            cfg.fmt_b,
            row,
            col,
            c,
            cfg.width,
        ),
        Dataflow::Ws | Dataflow::Is => ws_dot_acc(
            &cfg.mode,
            cfg.acc,
            cfg.fmt_a,
            cfg.fmt_b,
            row,
            col,
            c,
            cfg.width,
            cfg.rows(),
        ),
    }
}

/// Runs `g` without simulating hardware.
pub fn run_functional(g: &Gemm) -> Result<GemmOutput, GemmError> {
    let mut d = vec![0u32; g.m * g.n];
    let mut flags = Flags::NONE;
    let mut col = vec![0u64; g.k];
    for j in 0..g.n {
        for (p, slot) in col.iter_mut().enumerate() {
            *slot = g.b[p * g.n + j];
        }
        for i in 0..g.m {
            let r = element(&g.cfg, g.a_row(i), &col, g.c[i * g.n + j])?;
            d[i * g.n + j] = r.bits;
            flags |= r.flags;
        }
    }
    Ok(GemmOutput { d, flags })
}
