//! The independent reference of a 2:4-sparse GEMM: reads the metadata bytes by its own means
//! (low two bits = first index, next two bits = second index, as PTX `ordered_metadata`
//! defines them), gathers B's rows, and sums through [`super::exact`] (exact sums in big
//! integers, rounded once per step by its own rounding code). Nothing here calls the `sparse`
//! or `numerics` code it checks.

use super::exact::{exact_dot_acc, fused_dot_acc, ieee_dot_acc};
use crate::numerics::format::Format;
use crate::sparse::SparseGemm;

/// Which chaining of exact sums the reference applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SparseRef {
    /// One rounding per kept product (a chain of FMAs).
    Ieee,
    /// One rounding per step of `width` kept products.
    Fused {
        /// Kept products per step.
        width: usize,
    },
    /// One rounding of C plus every kept product.
    Exact,
}

/// The shape and data of a sparse problem, as plain slices: `values` is `m x k/2` kept
/// values, `meta` is `m x k/4` metadata bytes, `b` is `k x n`, `c` is `m x n` bits of the
/// accumulator format `acc` (FP32 or FP16).
#[derive(Clone, Copy, Debug)]
pub struct SparseOperands<'a> {
    /// Rows of A.
    pub m: usize,
    /// Columns of B.
    pub n: usize,
    /// The dense K (a multiple of 4).
    pub k: usize,
    /// Format of A's values.
    pub fmt_a: Format,
    /// Format of B.
    pub fmt_b: Format,
    /// The accumulator format (FP32 or FP16): C's and D's.
    pub acc: Format,
    /// Kept values of A, `m x k/2`.
    pub values: &'a [u64],
    /// Metadata, `m x k/4`.
    pub meta: &'a [u8],
    /// B, `k x n`.
    pub b: &'a [u64],
    /// C, `m x n`.
    pub c: &'a [u32],
}

/// Built here, in the reference's layer: `sparse` knows nothing of `verify`.
impl SparseGemm {
    /// The problem as the independent reference ([`crate::verify::sparse`]) takes it: raw
    /// kept values, metadata nibbles, B and C, nothing derived by the code under test.
    pub fn reference_operands(&self) -> SparseOperands<'_> {
        SparseOperands {
            m: self.m,
            n: self.n,
            k: self.k,
            fmt_a: self.cfg.fmt_a,
            fmt_b: self.cfg.fmt_b,
            acc: self.cfg.acc,
            values: self.a.values(),
            meta: self.a.meta(),
            b: &self.b,
            c: &self.c,
        }
    }
}

/// `D` (`m x n` bits of the accumulator format) over the kept values only.
pub fn sparse_reference(ops: &SparseOperands<'_>, how: SparseRef) -> Vec<u32> {
    let SparseOperands {
        m,
        n,
        k,
        fmt_a,
        fmt_b,
        acc,
        values,
        meta,
        b,
        c,
    } = *ops;
    let mut d = Vec::with_capacity(m * n);
    for i in 0..m {
        let a_row = &values[i * k / 2..(i + 1) * k / 2];
        let mut rows = Vec::with_capacity(k / 2);
        for (g, &byte) in meta[i * k / 4..(i + 1) * k / 4].iter().enumerate() {
            rows.push(4 * g + (byte & 0b11) as usize);
            rows.push(4 * g + ((byte >> 2) & 0b11) as usize);
        }
        for j in 0..n {
            let b_sel: Vec<u64> = rows.iter().map(|&p| b[p * n + j]).collect();
            let cij = c[i * n + j];
            d.push(match how {
                SparseRef::Ieee => ieee_dot_acc(acc, fmt_a, fmt_b, a_row, &b_sel, cij),
                SparseRef::Fused { width } => {
                    fused_dot_acc(acc, fmt_a, fmt_b, a_row, &b_sel, cij, width)
                }
                SparseRef::Exact => exact_dot_acc(acc, fmt_a, fmt_b, a_row, &b_sel, cij),
            });
        }
    }
    d
}
