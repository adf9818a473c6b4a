//! The fast functional model: every output element is the numerics layer's whole-K dot
//! product (`C` first, `k` ascending, `w` products a step, NVIDIA blocks of `n`) into the
//! configured accumulator format, with no clock. The clocked tensor core must give exactly these bits.

use super::problem::{Gemm, GemmError, GemmOutput};
use crate::numerics::dot::dot_acc;
use crate::numerics::flags::Flags;
use crate::numerics::flags::RoundingMode;

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
            let r = dot_acc(
                &g.cfg.mode,
                RoundingMode::NearestEven,
                g.cfg.acc,
                g.cfg.fmt_a,
                g.cfg.fmt_b,
                g.a_row(i),
                &col,
                g.c[i * g.n + j],
                g.cfg.width,
            )?;
            d[i * g.n + j] = r.bits;
            flags |= r.flags;
        }
    }
    Ok(GemmOutput { d, flags })
}
