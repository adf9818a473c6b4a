//! The block-scaled feeder: element codes of A and B in a [`TileBuffer`] plus one scale per
//! K-block of `bs` elements (an E8M0 code per 32 for the MX formats, an E4M3 code per 16 for
//! NVFP4; A: `m x k/bs`, B: `k/bs x n`, row-major), served beside the operands step by step.
//! A step of `w` lanes (`w` divides `bs`) lies in K-block `step * w / bs`; its A row and B
//! column carry that block's scale (the feeder's extras, [`BlockScales`]), which the mesh
//! passes along with the operands (`a_scale`, `b_scale` in every PE). What the core is built
//! for is an [`MxSpec`].

use super::config::CoreConfig;
pub use super::config::MxSpec;
use super::extras::BlockScales;
use super::feeder::{LaneGroup, OperandFeeder, TileBuffer};
use super::schedule::tile_origin;
use super::HwError;

/// Elements per MX scale block along K (the MX formats; NVFP4's blocks hold 16).
pub const MX_BLOCK: usize = 32;

/// Element codes and their block scales, served tile by tile.
#[derive(Clone, Debug)]
pub struct MxTileBuffer {
    elems: TileBuffer,
    array: (usize, usize),
    spec: MxSpec,
    m: usize,
    n: usize,
    k: usize,
    width: usize,
    a_scales: Vec<u8>,
    b_scales: Vec<u8>,
}

/// Checks a block-scaled problem's spec, `k` (a multiple of the block size) and the lengths
/// of the scales of A (`m x k/bs`) and B (`k/bs x n`). Every block-scaled operand source (this
/// buffer, the memory-fed weight-stationary supply) checks through it.
pub(crate) fn check_mx_problem(
    spec: &MxSpec,
    (m, n, k): (usize, usize, usize),
    a_scales: usize,
    b_scales: usize,
) -> Result<(), HwError> {
    spec.check()?;
    let bs = spec.block();
    if !k.is_multiple_of(bs) {
        return Err(HwError::Unsupported(format!(
            "{} with K = {k} (K must be a multiple of {bs})",
            spec.a
        )));
    }
    let blocks = k / bs;
    for (matrix, expected, len) in [
        ("A scales", m * blocks, a_scales),
        ("B scales", blocks * n, b_scales),
    ] {
        if expected != len {
            return Err(HwError::Shape {
                matrix,
                expected,
                len,
            });
        }
    }
    Ok(())
}

impl MxTileBuffer {
    /// A buffer of A (`m x k` element codes), B (`k x n`), C (`m x n` FP32 bits) and the
    /// scales of A (`m x k/bs`) and B (`k/bs x n`), for a core built for `spec` (block size
    /// `bs`). `k` must be a multiple of `bs`.
    #[allow(clippy::too_many_arguments)] // the spec, the problem's dimensions, five arrays
    pub fn new(
        cfg: CoreConfig,
        spec: MxSpec,
        (m, n, k): (usize, usize, usize),
        a: Vec<u64>,
        b: Vec<u64>,
        c: Vec<u32>,
        a_scales: Vec<u8>,
        b_scales: Vec<u8>,
    ) -> Result<Self, HwError> {
        check_mx_problem(&spec, (m, n, k), a_scales.len(), b_scales.len())?;
        Ok(Self {
            elems: TileBuffer::new(cfg, m, n, k, a, b, c)?,
            array: (cfg.rows(), cfg.cols()),
            spec,
            m,
            n,
            k,
            width: cfg.width,
            a_scales,
            b_scales,
        })
    }

    fn block(&self, step: usize) -> usize {
        step * self.width / self.spec.block()
    }

    fn blocks_per_row(&self) -> usize {
        self.k / self.spec.block()
    }

    /// Block scale beside A: row `row` of tile `tile`, the block of step `step` (0 past M).
    #[inline]
    fn a_scale(&self, tile: usize, row: usize, step: usize) -> u8 {
        let i = tile_origin(self.array, self.n, tile).0 + row;
        let blk = self.block(step);
        let per_row = self.blocks_per_row();
        if i < self.m && blk < per_row {
            self.a_scales[i * per_row + blk]
        } else {
            0
        }
    }

    /// Block scale beside B: column `col` of tile `tile`, the block of step `step` (0 past N).
    #[inline]
    fn b_scale(&self, tile: usize, col: usize, step: usize) -> u8 {
        let j = tile_origin(self.array, self.n, tile).1 + col;
        let blk = self.block(step);
        if j < self.n && blk < self.blocks_per_row() {
            self.b_scales[blk * self.n + j]
        } else {
            0
        }
    }
}

impl<const W: usize> OperandFeeder<W> for MxTileBuffer {
    type Extras = BlockScales;

    fn dims(&self) -> (usize, usize, usize) {
        (self.m, self.n, self.k)
    }

    fn spec(&self) -> MxSpec {
        self.spec
    }

    #[inline]
    fn extras(&self, tile: usize, step: usize, out: &mut BlockScales) {
        for (row, x) in out.a.iter_mut().enumerate() {
            *x = self.a_scale(tile, row, step);
        }
        for (col, x) in out.b.iter_mut().enumerate() {
            *x = self.b_scale(tile, col, step);
        }
    }

    #[inline]
    fn row_extras(&self, tile: usize, row: usize, step: usize, out: &mut BlockScales) {
        out.a[row] = self.a_scale(tile, row, step);
    }

    #[inline]
    fn a(&self, tile: usize, row: usize, step: usize) -> LaneGroup<W> {
        OperandFeeder::<W>::a(&self.elems, tile, row, step)
    }

    #[inline]
    fn b(&self, tile: usize, col: usize, step: usize) -> LaneGroup<W> {
        OperandFeeder::<W>::b(&self.elems, tile, col, step)
    }

    fn c_row(&self, tile: usize, row: usize, out: &mut [u32]) {
        OperandFeeder::<W>::c_row(&self.elems, tile, row, out);
    }
}
