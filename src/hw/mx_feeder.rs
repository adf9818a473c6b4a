//! The MX block-scaled feeder: element codes of A and B in a [`TileBuffer`] plus one E8M0
//! scale per K-block of [`MX_BLOCK`] (A: `m x k/32`, B: `k/32 x n`, row-major), served beside
//! the operands step by step. A step of `w` lanes (`w` divides 32) lies in K-block
//! `step * w / 32`; its A row and B column carry that block's scale, which the mesh passes
//! along with the operands (`a_scale`, `b_scale` in every PE).

use super::feeder::{LaneGroup, OperandFeeder, TileBuffer};
use super::pe_datapath::CoreConfig;
use super::schedule::tile_origin;
use super::{HwError, COLS};

/// Elements per MX scale block along K.
pub const MX_BLOCK: usize = 32;

/// Element codes and their E8M0 block scales, served tile by tile.
#[derive(Clone, Debug)]
pub struct MxTileBuffer {
    elems: TileBuffer,
    m: usize,
    n: usize,
    k: usize,
    width: usize,
    a_scales: Vec<u8>,
    b_scales: Vec<u8>,
}

impl MxTileBuffer {
    /// A buffer of A (`m x k` element codes), B (`k x n`), C (`m x n` FP32 bits) and the
    /// scales of A (`m x k/32`) and B (`k/32 x n`). `k` must be a multiple of 32.
    #[allow(clippy::too_many_arguments)] // the problem's three dimensions and five arrays
    pub fn new(
        cfg: CoreConfig,
        (m, n, k): (usize, usize, usize),
        a: Vec<u64>,
        b: Vec<u64>,
        c: Vec<u32>,
        a_scales: Vec<u8>,
        b_scales: Vec<u8>,
    ) -> Result<Self, HwError> {
        if !k.is_multiple_of(MX_BLOCK) {
            return Err(HwError::Unsupported(format!(
                "MX with K = {k} (K must be a multiple of {MX_BLOCK})"
            )));
        }
        let blocks = k / MX_BLOCK;
        for (matrix, expected, len) in [
            ("A scales", m * blocks, a_scales.len()),
            ("B scales", blocks * n, b_scales.len()),
        ] {
            if expected != len {
                return Err(HwError::Shape {
                    matrix,
                    expected,
                    len,
                });
            }
        }
        Ok(Self {
            elems: TileBuffer::new(cfg, m, n, k, a, b, c)?,
            m,
            n,
            k,
            width: cfg.width,
            a_scales,
            b_scales,
        })
    }

    fn block(&self, step: usize) -> usize {
        step * self.width / MX_BLOCK
    }
}

impl<const W: usize> OperandFeeder<W> for MxTileBuffer {
    fn dims(&self) -> (usize, usize, usize) {
        (self.m, self.n, self.k)
    }

    #[inline]
    fn a(&self, tile: usize, row: usize, step: usize) -> LaneGroup<W> {
        OperandFeeder::<W>::a(&self.elems, tile, row, step)
    }

    #[inline]
    fn b(&self, tile: usize, col: usize, step: usize) -> LaneGroup<W> {
        OperandFeeder::<W>::b(&self.elems, tile, col, step)
    }

    fn c_row(&self, tile: usize, row: usize) -> [u32; COLS] {
        OperandFeeder::<W>::c_row(&self.elems, tile, row)
    }

    fn mx(&self) -> bool {
        true
    }

    #[inline]
    fn a_scale(&self, tile: usize, row: usize, step: usize) -> u8 {
        let i = tile_origin(self.n, tile).0 + row;
        let blk = self.block(step);
        let per_row = self.k / MX_BLOCK;
        if i < self.m && blk < per_row {
            self.a_scales[i * per_row + blk]
        } else {
            0
        }
    }

    #[inline]
    fn b_scale(&self, tile: usize, col: usize, step: usize) -> u8 {
        let j = tile_origin(self.n, tile).1 + col;
        let blk = self.block(step);
        if j < self.n && blk < self.k / MX_BLOCK {
            self.b_scales[blk * self.n + j]
        } else {
            0
        }
    }
}
