//! The block-scaled feeder: element codes of A and B in a [`TileBuffer`] plus one scale per
//! K-block of `bs` elements (an E8M0 code per 32 for the MX formats, an E4M3 code per 16 for
//! NVFP4; A: `m x k/bs`, B: `k/bs x n`, row-major), served beside the operands step by step.
//! A step of `w` lanes (`w` divides `bs`) lies in K-block `step * w / bs`; its A row and B
//! column carry that block's scale, which the mesh passes along with the operands
//! (`a_scale`, `b_scale` in every PE). What the core is built for is an [`MxSpec`].

use super::feeder::{LaneGroup, OperandFeeder, TileBuffer};
use super::pe_datapath::CoreConfig;
use super::schedule::tile_origin;
use super::{HwError, COLS};
use crate::numerics::format::{Format, FP32};
use crate::numerics::mx::{BlockFormat, Element};
use crate::numerics::mx_block::ScaleFactor;

/// Elements per MX scale block along K (the MX formats; NVFP4's blocks hold 16).
pub const MX_BLOCK: usize = 32;

/// What a block-scaled core is built for: the block formats of A and B and their FP32
/// tensor scales (NVFP4's second-level scale; `None` is 1).
///
/// A and B share one block size and one scale format, and either both hold MXINT8 integers
/// or both hold floating-point elements (MXFP8/6/4 may be mixed); [`MxSpec::check`] says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MxSpec {
    /// A's block format.
    pub a: BlockFormat,
    /// B's block format.
    pub b: BlockFormat,
    /// A's FP32 tensor scale (bits), if any.
    pub a_tensor: Option<u32>,
    /// B's FP32 tensor scale (bits), if any.
    pub b_tensor: Option<u32>,
}

impl MxSpec {
    /// A spec without tensor scales.
    pub const fn new(a: BlockFormat, b: BlockFormat) -> Self {
        Self {
            a,
            b,
            a_tensor: None,
            b_tensor: None,
        }
    }

    /// The spec with these FP32 tensor scales.
    pub const fn with_tensor_scales(self, a_tensor: Option<u32>, b_tensor: Option<u32>) -> Self {
        Self {
            a_tensor,
            b_tensor,
            ..self
        }
    }

    /// Elements per K-block.
    pub const fn block(&self) -> usize {
        self.a.block_size()
    }

    /// The block scales' format (E8M0, or E4M3 for NVFP4).
    pub const fn scale_format(&self) -> Format {
        self.a.scale_format()
    }

    /// The elements are MXINT8 integers (stage 1 multiplies integers).
    pub const fn int8(&self) -> bool {
        matches!(self.a.element(), Element::Int8)
    }

    /// The format whose lane width carries `f`'s elements on the operand buses (the element
    /// format, or an 8-bit container for MXINT8, as [`crate::numerics::int::IntFormat::container`]).
    pub const fn lane_format(f: BlockFormat) -> Format {
        match f.element() {
            Element::Float(e) => e,
            Element::Int8 => crate::numerics::int::S8.container(),
        }
    }

    /// The product of the two tensor scales (formed once per core, exact: 48-bit
    /// significand), or 1.
    pub fn tensor_product(&self) -> ScaleFactor {
        let t = |x: Option<u32>| {
            x.map_or(ScaleFactor::ONE, |b| {
                ScaleFactor::decode(FP32, u64::from(b))
            })
        };
        t(self.a_tensor) * t(self.b_tensor)
    }

    /// Checks that A and B pair up: one block size, one scale format, integer elements on
    /// both sides or on neither.
    pub fn check(&self) -> Result<(), HwError> {
        let (a, b) = (self.a, self.b);
        if a.block_size() != b.block_size() || a.scale_format() != b.scale_format() {
            return Err(HwError::Unsupported(format!(
                "{a} x {b} (A and B need one block size and one scale format)"
            )));
        }
        if matches!(a.element(), Element::Int8) != matches!(b.element(), Element::Int8) {
            return Err(HwError::Unsupported(format!(
                "{a} x {b} (MXINT8 pairs with MXINT8 only)"
            )));
        }
        Ok(())
    }
}

/// Element codes and their block scales, served tile by tile.
#[derive(Clone, Debug)]
pub struct MxTileBuffer {
    elems: TileBuffer,
    spec: MxSpec,
    m: usize,
    n: usize,
    k: usize,
    width: usize,
    a_scales: Vec<u8>,
    b_scales: Vec<u8>,
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

    fn mx(&self) -> Option<MxSpec> {
        Some(self.spec)
    }

    #[inline]
    fn a_scale(&self, tile: usize, row: usize, step: usize) -> u8 {
        let i = tile_origin(self.n, tile).0 + row;
        let blk = self.block(step);
        let per_row = self.blocks_per_row();
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
        if j < self.n && blk < self.blocks_per_row() {
            self.b_scales[blk * self.n + j]
        } else {
            0
        }
    }
}
