//! Block-scaled MX GEMM on the clocked tensor core: element codes with their E8M0 scales per
//! K-block of 32 ([`crate::hw::MxTileBuffer`]), the mesh in MX mode. D follows
//! [`crate::numerics::mx_dot`]'s `fused` mode bit for bit (tested in `tests/mx_core.rs`).

use super::clocked::{run_feeder, ClockedRun};
use crate::hw::{CoreConfig, HwError, MxTileBuffer};
use crate::rtl::TraceConfig;

/// An MX problem: `m x k` A and `k x n` B element codes (row-major, in the low bits),
/// `m x n` C (FP32 bits), A's scales `m x k/32` and B's `k/32 x n` (E8M0 codes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MxGemm {
    /// Element formats, `fused` mode and the PE width.
    pub cfg: CoreConfig,
    /// Rows of A, C, D.
    pub m: usize,
    /// Columns of B, C, D.
    pub n: usize,
    /// Inner dimension (a multiple of 32).
    pub k: usize,
    /// A's element codes.
    pub a: Vec<u64>,
    /// B's element codes.
    pub b: Vec<u64>,
    /// C (FP32 bits).
    pub c: Vec<u32>,
    /// A's E8M0 scales (`m x k/32`).
    pub a_scales: Vec<u8>,
    /// B's E8M0 scales (`k/32 x n`).
    pub b_scales: Vec<u8>,
}

/// Runs `g` on the clocked tensor core in MX mode, optionally tracing.
pub fn run_clocked_mx(g: &MxGemm, trace: Option<&TraceConfig>) -> Result<ClockedRun, HwError> {
    crate::hw::dispatch_width!(g.cfg.width, W => run_w::<W>(g, trace))
}

fn run_w<const W: usize>(g: &MxGemm, trace: Option<&TraceConfig>) -> Result<ClockedRun, HwError> {
    let buf = MxTileBuffer::new(
        g.cfg,
        (g.m, g.n, g.k),
        g.a.clone(),
        g.b.clone(),
        g.c.clone(),
        g.a_scales.clone(),
        g.b_scales.clone(),
    )?;
    let macs = (g.m * g.n * g.k) as u64;
    run_feeder::<W, _>(g.cfg, buf, macs, trace).map(|r| r.run)
}
