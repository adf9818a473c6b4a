//! A sparse GEMM problem `D = A x B + C` whose A is 2:4-compressed, and the sparse functional
//! model.
//!
//! Contract: `D[i][j]` is the numerics layer's
//! [`dot_acc`](crate::numerics::dot::dot_acc) (in the weight-stationary dataflow its `ws`
//! order, [`ws_dot_acc`](crate::numerics::dot::ws::ws_dot_acc)) over the kept values only, with
//! products `a_kept[t] * b[4g + idx_t][j]` in ascending dense `k` (`g` the group, `idx_t` the
//! index the metadata names), `C` first, into the configured accumulator format (FP32 or FP16),
//! under the configuration's accumulation mode, preset and width (`w` kept products a step;
//! NVIDIA blocks of `n` kept products). Dropped positions take no part at all: an `Inf` or
//! `NaN` in B at a dropped position does not reach D. For `ieee` (and finite B) this equals the
//! dense run on the decompressed A up to the sign of an exact zero; `fused` and `nvidia` group
//! kept products, so their steps differ from the dense run's.

use super::compress::{compress, Compressed, Prune, SparseError};
use crate::gemm::functional::element;
use crate::gemm::problem::random_operand;
use crate::gemm::rng::SplitMix64;
use crate::gemm::{CoreConfig, Gemm, GemmOutput};
use crate::numerics::flags::Flags;

/// A checked sparse GEMM: `a` is the compressed `m x k` A, `b` is `k x n` (dense K), `c` is
/// `m x n` in the accumulator format (`cfg.acc`: FP32 or FP16 bits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparseGemm {
    /// Rows of A, C and D.
    pub m: usize,
    /// Columns of B, C and D.
    pub n: usize,
    /// The dense inner dimension (a multiple of 4).
    pub k: usize,
    /// Formats, mode and width (the width counts kept products per step).
    pub cfg: CoreConfig,
    /// The compressed A.
    pub a: Compressed,
    /// B, `k x n`, row-major bit patterns.
    pub b: Vec<u64>,
    /// C, `m x n`, row-major bits of the accumulator format.
    pub c: Vec<u32>,
}

/// Refuses, before the core is built, a 2:4 sparse configuration whose B bus does not fit
/// the lane storage of its width: a step presents `max(2w, 4)` B values per column
/// (docs/sparsity.md) in `w` 64-bit words (docs/architecture.md, `Wide<W>`), so at `w = 1`
/// (the nvidia presets, or width 1) four B values must fit 64 bits, which a TF32 B (19 bits)
/// does not.
pub fn check_b_bus(cfg: &CoreConfig) -> Result<(), SparseError> {
    let width = cfg.width;
    let lanes = crate::hw::pe::sparse_b_lanes(width);
    let bits = cfg.fmt_b.width() as usize * lanes;
    let bus = 64 * width;
    if bits > bus {
        return Err(SparseError::BBusTooNarrow {
            width,
            lanes,
            format: cfg.fmt_b.name,
            bits,
            bus,
        });
    }
    Ok(())
}

impl SparseGemm {
    /// Checks and builds a sparse problem from a compressed A (its shape gives `m` and `k`).
    pub fn new(
        cfg: CoreConfig,
        a: Compressed,
        n: usize,
        b: Vec<u64>,
        c: Vec<u32>,
    ) -> Result<SparseGemm, SparseError> {
        if a.format() != cfg.fmt_a {
            return Err(SparseError::FormatMismatch {
                found: a.format().name,
                expected: cfg.fmt_a.name,
            });
        }
        let (m, k) = (a.m(), a.k());
        // The dense problem's checks cover B, C, the formats, the width and the mode.
        let dense = Gemm::new(m, n, k, cfg, vec![0; m * k], b, c)?;
        Ok(SparseGemm {
            m,
            n,
            k,
            cfg,
            a,
            b: dense.b,
            c: dense.c,
        })
    }

    /// The sparse problem of a dense one: A is compressed (an A that violates 2:4 is an
    /// error unless `prune` keeps the two largest magnitudes per group).
    pub fn from_dense(g: &Gemm, prune: Prune) -> Result<SparseGemm, SparseError> {
        let a = compress(g.cfg.fmt_a, g.m, g.k, &g.a, prune)?;
        SparseGemm::new(g.cfg, a, g.n, g.b.clone(), g.c.clone())
    }

    /// A reproducible random sparse problem: every group's nibble is drawn uniformly from the
    /// six valid ones and its two kept values (and B and C, in the accumulator format) as in
    /// [`Gemm::random`].
    pub fn random(
        m: usize,
        n: usize,
        k: usize,
        cfg: CoreConfig,
        seed: u64,
    ) -> Result<SparseGemm, SparseError> {
        if !k.is_multiple_of(4) {
            return Err(SparseError::KNotMultipleOf4 { k });
        }
        crate::gemm::problem::check_dims(m, n, k)?;
        let mut rng = SplitMix64::new(seed);
        let meta = (0..m * k / 4)
            .map(|_| super::meta::VALID_NIBBLES[rng.below(6) as usize])
            .collect();
        let values = (0..m * k / 2)
            .map(|_| random_operand(cfg.fmt_a, &mut rng))
            .collect();
        let b = (0..k * n)
            .map(|_| random_operand(cfg.fmt_b, &mut rng))
            .collect();
        let c = (0..m * n)
            .map(|_| random_operand(cfg.acc, &mut rng) as u32)
            .collect();
        let a = Compressed::new(cfg.fmt_a, m, k, values, meta)?;
        SparseGemm::new(cfg, a, n, b, c)
    }

    /// The dense problem on the decompressed A (zeros at dropped positions).
    pub fn dense(&self) -> Gemm {
        Gemm {
            m: self.m,
            n: self.n,
            k: self.k,
            cfg: self.cfg,
            a: self.a.decompress(),
            b: self.b.clone(),
            c: self.c.clone(),
        }
    }

    /// The B operands that meet row `i`'s kept values in column `j`: `b[col][j]` for each
    /// kept column, in order (what the selection multiplexers pick).
    pub fn gathered_b(&self, i: usize, j: usize) -> Vec<u64> {
        self.a
            .kept_columns(i)
            .iter()
            .map(|&p| self.b[p * self.n + j])
            .collect()
    }

    /// Useful multiply-accumulates: `m * n * k / 2` (kept products only).
    pub fn macs(&self) -> u64 {
        (self.m * self.n * self.k / 2) as u64
    }
}

/// The sparse functional model: every output element is the dense functional model's
/// [`element`] (its dataflow's order) over row `i`'s kept values and the B values its
/// metadata selects (see the module documentation).
pub fn run_functional_sparse(g: &SparseGemm) -> Result<GemmOutput, SparseError> {
    let mut d = vec![0u32; g.m * g.n];
    let mut flags = Flags::NONE;
    let mut col = vec![0u64; g.a.kept()];
    for i in 0..g.m {
        let kept = g.a.kept_columns(i);
        let a = g.a.values_row(i);
        for j in 0..g.n {
            for (slot, &p) in col.iter_mut().zip(&kept) {
                *slot = g.b[p * g.n + j];
            }
            // In `ws` the folds are of `R * w` kept values, as the array's rows hold them.
            let r =
                element(&g.cfg, a, &col, g.c[i * g.n + j]).map_err(crate::gemm::GemmError::from)?;
            d[i * g.n + j] = r.bits;
            flags |= r.flags;
        }
    }
    Ok(GemmOutput { d, flags })
}
