//! Block-scaled GEMM on the clocked tensor core: element codes with their scales per K-block
//! (E8M0 per 32 for MX and MXINT8, E4M3 per 16 plus FP32 tensor scales for NVFP4;
//! [`crate::hw::MxTileBuffer`]), the mesh in MX mode. D follows
//! [`crate::numerics::mx_dot`]'s `fused` mode bit for bit (tested in `tests/mx/core.rs`).

use super::clocked::{run_feeder, run_is_feeder, run_ws_feeder, ClockedRun};
use crate::hw::dataflow::is::IsSupply;
use crate::hw::{CoreConfig, Dataflow, HwError, MxSpec, MxTileBuffer};
use crate::numerics::dot::ws::{fold_add, psum_identity};
use crate::numerics::dot::AccMode;
use crate::numerics::flags::Flags;
use crate::numerics::format::FP32;
use crate::numerics::mx::Quantised;
use crate::numerics::mx_dot::{mx_dot, MxDotError, MxDotMode};
use crate::numerics::round::RoundTrace;
use crate::numerics::round::Rounded;
use crate::rtl::TraceConfig;

/// An MX problem: `m x k` A and `k x n` B element codes (row-major, in the low bits),
/// `m x n` C (FP32 bits), A's scale codes `m x k/bs` and B's `k/bs x n` (`bs` the block size).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MxGemm {
    /// Lane formats, `fused` mode and the PE width.
    pub cfg: CoreConfig,
    /// The block formats of A and B and their tensor scales.
    pub spec: MxSpec,
    /// Rows of A, C, D.
    pub m: usize,
    /// Columns of B, C, D.
    pub n: usize,
    /// Inner dimension (a multiple of the block size).
    pub k: usize,
    /// A's element codes.
    pub a: Vec<u64>,
    /// B's element codes.
    pub b: Vec<u64>,
    /// C (FP32 bits).
    pub c: Vec<u32>,
    /// A's block scale codes (`m x k/bs`).
    pub a_scales: Vec<u8>,
    /// B's block scale codes (`k/bs x n`).
    pub b_scales: Vec<u8>,
}

impl MxGemm {
    /// The problem `A x B + C` from A's rows `qa` (`m x k`) and B's columns given as rows
    /// `qb_t` (`n x k`, as quantising B's transpose along K gives them), for a core of
    /// `width` lanes: B and its scales are laid out `k x n` and `k/bs x n`, the lane formats
    /// and tensor scales follow the block formats.
    pub fn from_quantised(
        qa: &Quantised,
        qb_t: &Quantised,
        c: Vec<u32>,
        width: usize,
    ) -> Result<MxGemm, HwError> {
        let spec = MxSpec::new(qa.format, qb_t.format)
            .with_tensor_scales(qa.tensor_scale, qb_t.tensor_scale);
        spec.check()?;
        let k = qa.row_len;
        if qb_t.row_len != k || k == 0 {
            return Err(HwError::Unsupported(format!(
                "rows of {k} and {} elements do not pair up",
                qb_t.row_len
            )));
        }
        let (m, n) = (qa.elements.len() / k, qb_t.elements.len() / k);
        let blocks = qa.blocks_per_row();
        let mut b = vec![0u64; k * n];
        let mut b_scales = vec![0u8; blocks * n];
        for j in 0..n {
            for i in 0..k {
                b[i * n + j] = qb_t.elements[j * k + i];
            }
            for blk in 0..blocks {
                b_scales[blk * n + j] = qb_t.scales[j * blocks + blk] as u8;
            }
        }
        Ok(MxGemm {
            cfg: CoreConfig::new(
                MxSpec::lane_format(spec.a),
                MxSpec::lane_format(spec.b),
                AccMode::Fused,
                width,
            ),
            spec,
            m,
            n,
            k,
            a: qa.elements.clone(),
            b,
            c,
            a_scales: qa.scales.iter().map(|&s| s as u8).collect(),
            b_scales,
        })
    }

    /// A's rows and B's columns (transposed) as quantised rows of K, each with its block
    /// scales and tensor scale: the operands of [`mx_dot`].
    pub fn rows(&self) -> (Quantised, Quantised) {
        let blocks = self.k / self.spec.block();
        let mut bt = vec![0u64; self.n * self.k];
        let mut st = vec![0u64; self.n * blocks];
        for j in 0..self.n {
            for i in 0..self.k {
                bt[j * self.k + i] = self.b[i * self.n + j];
            }
            for blk in 0..blocks {
                st[j * blocks + blk] = u64::from(self.b_scales[blk * self.n + j]);
            }
        }
        let qa = Quantised {
            format: self.spec.a,
            row_len: self.k,
            elements: self.a.clone(),
            scales: self.a_scales.iter().map(|&s| u64::from(s)).collect(),
            tensor_scale: self.spec.a_tensor,
        };
        let qb = Quantised {
            format: self.spec.b,
            row_len: self.k,
            elements: bt,
            scales: st,
            tensor_scale: self.spec.b_tensor,
        };
        (qa, qb)
    }

    /// D (row-major, with flags) by the functional [`mx_dot`] in `mode`: the reference the
    /// clocked output-stationary core equals in `fused` mode.
    pub fn reference(&self, mode: MxDotMode) -> Result<Vec<Rounded>, MxDotError> {
        let (qa, qb) = self.rows();
        let mut d = Vec::with_capacity(self.m * self.n);
        for i in 0..self.m {
            for j in 0..self.n {
                d.push(mx_dot(&qa, i, &qb, j, self.c[i * self.n + j], mode)?);
            }
        }
        Ok(d)
    }

    /// D (row-major, with flags) in the order of the core's dataflow: [`MxGemm::reference`]
    /// in `fused` mode for `os`; for `ws` the folds of `R` K-blocks (`docs/numerics.md`,
    /// "Weight-stationary order"), which the clocked `ws` core equals. That order takes the
    /// width the `ws` core takes, the block size ([`MxSpec::check_ws_width`]: a fold of
    /// another width would split a block); callers check it first, as the core does.
    pub fn functional(&self) -> Result<Vec<Rounded>, MxDotError> {
        if self.cfg.dataflow() == Dataflow::Os {
            return self.reference(MxDotMode::Fused);
        }
        let (qa, qb) = self.rows();
        let mut d = Vec::with_capacity(self.m * self.n);
        for i in 0..self.m {
            for j in 0..self.n {
                let c = self.c[i * self.n + j];
                let fold = self.cfg.rows() * self.cfg.width;
                d.push(ws_element((&qa, i), (&qb, j), c, fold)?);
            }
        }
        Ok(d)
    }
}

/// Runs `g` on the clocked tensor core in MX mode, optionally tracing.
pub fn run_clocked_mx(g: &MxGemm, trace: Option<&TraceConfig>) -> Result<ClockedRun, HwError> {
    crate::hw::dispatch_width!(g.cfg.width, W => run_w::<W>(g, trace))
}

fn run_w<const W: usize>(g: &MxGemm, trace: Option<&TraceConfig>) -> Result<ClockedRun, HwError> {
    if g.cfg.dataflow() != Dataflow::Os {
        return stationary_width(
            g,
            |g| crate::hw::dispatch_block_width!(g.cfg.width, B => run_stationary::<B>(g, trace)),
        );
    }
    let macs = (g.m * g.n * g.k) as u64;
    run_feeder::<W, _>(g.cfg, tile_buffer(g)?, macs, trace).map(|r| r.run)
}

/// The block-scaled operand store of `g`.
fn tile_buffer(g: &MxGemm) -> Result<MxTileBuffer, HwError> {
    MxTileBuffer::new(
        g.cfg,
        g.spec,
        (g.m, g.n, g.k),
        g.a.clone(),
        g.b.clone(),
        g.c.clone(),
        g.a_scales.clone(),
        g.b_scales.clone(),
    )
}

/// Runs `run` on `g` if its width is one a stationary core takes for its block format (one
/// K-block a PE step: [`MxSpec::check_ws_width`]), so that the stationary cores are built only
/// at the two widths a block can have (`crate::hw::dispatch_block_width!`).
pub(crate) fn stationary_width<T>(
    g: &MxGemm,
    run: impl FnOnce(&MxGemm) -> Result<T, HwError>,
) -> Result<T, HwError> {
    g.spec.check_ws_width(g.cfg.width)?;
    run(g)
}

/// A stationary (`ws` or `is`) block-scaled run at a block's width `B`.
fn run_stationary<const B: usize>(
    g: &MxGemm,
    trace: Option<&TraceConfig>,
) -> Result<ClockedRun, HwError> {
    let (buf, macs) = (tile_buffer(g)?, (g.m * g.n * g.k) as u64);
    match g.cfg.dataflow() {
        Dataflow::Is => {
            let supply = IsSupply::new::<B>(&g.cfg, buf, (g.m, g.n, g.k), g.c.clone());
            run_is_feeder::<B, _>(g.cfg, supply, macs, trace).map(|r| r.run)
        }
        _ => run_ws_feeder::<B, _>(g.cfg, buf, macs, trace).map(|r| r.run),
    }
}

/// One element of D in the weight-stationary order, folds of `fold` elements of K (`R * w`;
/// the `ws` core takes `w` = the block size, one K-block a PE): each fold chained block by
/// block from the identity (-0) by [`mx_dot`] in `fused` mode, then C plus the folds in K
/// order, each one IEEE FP32 addition ([`fold_add`]).
fn ws_element(
    (qa, i): (&Quantised, usize),
    (qb, j): (&Quantised, usize),
    c: u32,
    fold: usize,
) -> Result<Rounded, MxDotError> {
    let bs = qa.format.block_size();
    let (k, blocks) = (qa.row_len, qa.blocks_per_row());
    let mut d = c;
    let mut flags = Flags::NONE;
    let mut last = None;
    for f0 in (0..k).step_by(fold) {
        let len = fold.min(k - f0);
        let slice = |q: &Quantised, r: usize| Quantised {
            format: q.format,
            row_len: len,
            elements: q.elements[r * k + f0..r * k + f0 + len].to_vec(),
            scales: q.scales[r * blocks + f0 / bs..r * blocks + (f0 + len).div_ceil(bs)].to_vec(),
            tensor_scale: q.tensor_scale,
        };
        let identity = psum_identity(&AccMode::Fused, FP32);
        let psum = mx_dot(
            &slice(qa, i),
            0,
            &slice(qb, j),
            0,
            identity,
            MxDotMode::Fused,
        )?;
        let (sum, f) = fold_add(&AccMode::Fused, FP32, d, psum.bits as u32);
        flags |= psum.flags | f;
        d = sum;
        last = Some(psum.trace);
    }
    Ok(Rounded {
        bits: u64::from(d),
        flags,
        trace: last.unwrap_or(RoundTrace::IDLE),
    })
}
