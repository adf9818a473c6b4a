//! Reference D for a whole GEMM problem, element by element, from the independent dot
//! references of this layer ([`super::exact`], [`super::nvidia_ref`]); never from the
//! datapath or the functional model under test.

use super::exact::{exact_dot_acc, fused_dot_acc, ieee_dot_acc};
use super::nvidia_ref::{nvidia_ref_dot, ref_params_acc, RefParams};
use crate::gemm::Gemm;
use crate::numerics::dot::{AccMode, Preset};
use crate::numerics::int::{IntMode, IntOverflow};

/// Which independent reference checks a run. Each rounds to the problem's accumulator format
/// (FP32 or FP16): [`super::exact`]'s own rounding, and for `Nvidia` the FP32- or
/// FP16-output rules of [`super::nvidia_ref`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference {
    /// [`ieee_dot_acc`]: one rounding per product.
    Ieee,
    /// [`fused_dot_acc`] with the given step width.
    Fused(usize),
    /// [`exact_dot_acc`]: one rounding of everything.
    Exact,
    /// [`nvidia_ref_dot`] with this file's own preset table.
    Nvidia(RefParams),
    /// [`int_ref_dot`]: exact i64 sums, wrapped or clamped per step of the given width.
    Int(IntMode, usize),
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
            Reference::Int(..) => "int_ref_dot",
        }
    }

    /// The reference's name in the weight-stationary order ([`Reference::ws_gemm`]):
    /// `ws_ref` over the per-fold reference (`ws_ref(ieee_dot)`, ...).
    pub fn ws_name(&self) -> &'static str {
        match self {
            Reference::Ieee => "ws_ref(ieee_dot)",
            Reference::Fused(_) => "ws_ref(fused_dot)",
            Reference::Exact => "ws_ref(exact_dot)",
            Reference::Nvidia(_) => "ws_ref(nvidia_ref_dot)",
            Reference::Int(..) => "ws_ref(int_ref_dot)",
        }
    }

    /// The reference for a problem's mode and width. `nvidia` needs the preset's name
    /// (`volta`, ...), because the reference takes its parameters from its own table, not
    /// from the datapath's.
    pub fn for_problem(g: &Gemm, preset: Option<Preset>) -> Result<Reference, String> {
        Ok(match g.cfg.mode {
            AccMode::Ieee => Reference::Ieee,
            AccMode::Fused => Reference::Fused(g.cfg.width),
            AccMode::Exact => Reference::Exact,
            AccMode::Int(im) => Reference::Int(im, g.cfg.width),
            AccMode::Nvidia(_) => {
                let p = preset.ok_or("the nvidia reference needs the preset's name")?;
                let params =
                    ref_params_acc(p, g.cfg.fmt_a, g.cfg.fmt_b, g.cfg.acc).ok_or_else(|| {
                        format!(
                            "no nvidia reference for preset {p} with {} x {} into {}",
                            g.cfg.fmt_a.name, g.cfg.fmt_b.name, g.cfg.acc.name
                        )
                    })?;
                Reference::Nvidia(params)
            }
        })
    }

    /// One element: `c + row . col` (`c` and the result in the problem's accumulator format).
    pub fn dot(&self, g: &Gemm, row: &[u64], col: &[u64], c: u32) -> u32 {
        let (fa, fb, acc) = (g.cfg.fmt_a, g.cfg.fmt_b, g.cfg.acc);
        match self {
            Reference::Ieee => ieee_dot_acc(acc, fa, fb, row, col, c),
            Reference::Fused(w) => fused_dot_acc(acc, fa, fb, row, col, c, *w),
            Reference::Exact => exact_dot_acc(acc, fa, fb, row, col, c),
            Reference::Nvidia(p) => nvidia_ref_dot(p, fa, fb, row, col, c),
            Reference::Int(im, w) => int_ref_dot(im, *w, row, col, c),
        }
    }

    /// The whole of D, `m x n` row-major bits of the accumulator format.
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

/// An integer lane's value by the host's own casts (`i8`/`u8`, and an arithmetic shift for
/// the 4-bit sign extension), independent of `numerics::int`.
fn int_lane(bits: u32, signed: bool, w: u64) -> i64 {
    let byte = w as u8;
    i64::from(match (bits, signed) {
        (8, true) => i32::from(byte as i8),
        (8, false) => i32::from(byte),
        (4, true) => i32::from(((byte << 4) as i8) >> 4),
        _ => i32::from(byte & 0xF),
    })
}

/// The integer reference: `c` (int32 bits) plus each chunk of `w` products summed exactly in
/// i64, then wrapped modulo 2^32 or clamped to the int32 range after the chunk. Returns int32
/// bits.
pub fn int_ref_dot(im: &IntMode, w: usize, row: &[u64], col: &[u64], c: u32) -> u32 {
    let mut acc = i64::from(c as i32);
    let prods: Vec<i64> = row
        .iter()
        .zip(col)
        .map(|(&x, &y)| int_lane(im.a.bits, im.a.signed, x) * int_lane(im.b.bits, im.b.signed, y))
        .collect();
    for chunk in prods.chunks(w.max(1)) {
        acc += chunk.iter().sum::<i64>();
        acc = match im.overflow {
            IntOverflow::Wrap => {
                let m = acc.rem_euclid(1 << 32);
                if m >= 1 << 31 {
                    m - (1 << 32)
                } else {
                    m
                }
            }
            IntOverflow::SatFinite => acc.clamp(-(1 << 31), (1 << 31) - 1),
        };
    }
    acc as u32
}
