//! Reference D for a whole GEMM problem, element by element, from the independent dot
//! references of this layer ([`super::exact`], [`super::nvidia_ref`]); never from the
//! datapath or the functional model under test.

use super::exact::{exact_dot, fused_dot, ieee_dot};
use super::nvidia_ref::{nvidia_ref_dot, ref_params, RefParams};
use crate::gemm::Gemm;
use crate::numerics::dot::AccMode;

/// Which independent reference checks a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference {
    /// [`ieee_dot`]: one rounding per product.
    Ieee,
    /// [`fused_dot`] with the given step width.
    Fused(usize),
    /// [`exact_dot`]: one rounding of everything.
    Exact,
    /// [`nvidia_ref_dot`] with this file's own preset table.
    Nvidia(RefParams),
}

impl Reference {
    /// The reference's name as reported (`ieee_dot`, `fused_dot`, `exact_dot`,
    /// `nvidia_ref_dot`).
    pub fn name(&self) -> &'static str {
        match self {
            Reference::Ieee => "ieee_dot",
            Reference::Fused(_) => "fused_dot",
            Reference::Exact => "exact_dot",
            Reference::Nvidia(_) => "nvidia_ref_dot",
        }
    }

    /// The reference for a problem's mode and width. `nvidia` needs the preset's name
    /// (`volta`, ...), because the reference takes its parameters from its own table, not
    /// from the datapath's.
    pub fn for_problem(g: &Gemm, preset: Option<&str>) -> Result<Reference, String> {
        Ok(match g.cfg.mode {
            AccMode::Ieee => Reference::Ieee,
            AccMode::Fused => Reference::Fused(g.cfg.width),
            AccMode::Exact => Reference::Exact,
            AccMode::Nvidia(_) => {
                let p = preset.ok_or("the nvidia reference needs the preset's name")?;
                let params =
                    ref_params(p, g.cfg.fmt_a.name, g.cfg.fmt_b.name).ok_or_else(|| {
                        format!(
                            "no nvidia reference for preset {p} with {} x {}",
                            g.cfg.fmt_a.name, g.cfg.fmt_b.name
                        )
                    })?;
                Reference::Nvidia(params)
            }
        })
    }

    /// One element: `c + row . col`.
    pub fn dot(&self, g: &Gemm, row: &[u64], col: &[u64], c: u32) -> u32 {
        let (fa, fb) = (g.cfg.fmt_a, g.cfg.fmt_b);
        match self {
            Reference::Ieee => ieee_dot(fa, fb, row, col, c),
            Reference::Fused(w) => fused_dot(fa, fb, row, col, c, *w),
            Reference::Exact => exact_dot(fa, fb, row, col, c),
            Reference::Nvidia(p) => nvidia_ref_dot(p, fa, fb, row, col, c),
        }
    }

    /// The whole of D, `m x n` row-major FP32 bits.
    pub fn gemm(&self, g: &Gemm) -> Vec<u32> {
        let cols: Vec<Vec<u64>> = (0..g.n).map(|j| g.b_col(j)).collect();
        let mut d = Vec::with_capacity(g.m * g.n);
        for i in 0..g.m {
            for (j, col) in cols.iter().enumerate() {
                d.push(self.dot(g, g.a_row(i), col, g.c[i * g.n + j]));
            }
        }
        d
    }
}

/// Indices where `got` and `want` differ bit for bit (a length difference counts the missing
/// elements as mismatches).
pub fn mismatches(got: &[u32], want: &[u32]) -> Vec<usize> {
    let n = got.len().max(want.len());
    (0..n).filter(|&i| got.get(i) != want.get(i)).collect()
}
