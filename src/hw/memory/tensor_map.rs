//! The TMA descriptor ([`TensorMap`], as `cuTensorMapEncodeTiled` takes it), its element types
//! ([`ElemType`]) and its validation ([`TensorMap::validate`], one [`TensorMapError`] variant
//! per rule of docs/memory.md, "Descriptor rules").

use super::swizzle::Swizzle;

/// A tensor element type (`CU_TENSOR_MAP_DATA_TYPE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElemType {
    /// Unsigned 8-bit.
    U8,
    /// Unsigned 16-bit.
    U16,
    /// Unsigned 32-bit.
    U32,
    /// FP8 E4M3.
    E4M3,
    /// FP8 E5M2.
    E5M2,
    /// IEEE binary16.
    Fp16,
    /// bfloat16.
    Bf16,
    /// IEEE binary32.
    Fp32,
    /// TF32 (stored in 4 bytes).
    Tf32,
}

impl ElemType {
    /// Every type, in [`ElemType::name`] order.
    pub const ALL: [ElemType; 9] = [
        ElemType::U8,
        ElemType::U16,
        ElemType::U32,
        ElemType::E4M3,
        ElemType::E5M2,
        ElemType::Fp16,
        ElemType::Bf16,
        ElemType::Fp32,
        ElemType::Tf32,
    ];

    /// Element size in bytes.
    pub fn size(self) -> u32 {
        match self {
            ElemType::U8 | ElemType::E4M3 | ElemType::E5M2 => 1,
            ElemType::U16 | ElemType::Fp16 | ElemType::Bf16 => 2,
            ElemType::U32 | ElemType::Fp32 | ElemType::Tf32 => 4,
        }
    }

    /// Whether it is a floating-point type (a NaN fill is allowed).
    pub fn is_float(self) -> bool {
        !matches!(self, ElemType::U8 | ElemType::U16 | ElemType::U32)
    }

    /// The command-line name (`u8`, `u16`, `u32`, `e4m3`, `e5m2`, `fp16`, `bf16`, `fp32`, `tf32`).
    pub fn name(self) -> &'static str {
        match self {
            ElemType::U8 => "u8",
            ElemType::U16 => "u16",
            ElemType::U32 => "u32",
            ElemType::E4M3 => "e4m3",
            ElemType::E5M2 => "e5m2",
            ElemType::Fp16 => "fp16",
            ElemType::Bf16 => "bf16",
            ElemType::Fp32 => "fp32",
            ElemType::Tf32 => "tf32",
        }
    }

    /// Parses an [`ElemType::name`].
    pub fn parse(s: &str) -> Option<ElemType> {
        ElemType::ALL.into_iter().find(|t| t.name() == s)
    }

    /// The bits of a NaN fill, byte `byte` of an element, little-endian: the 16-bit pattern
    /// `0x7FF7` repeated (`0x7FF7` for FP16 and BF16, `0x7FF77FF7` for FP32 and TF32), as an
    /// H200 writes it (docs/memory.md, "Checked on an H200"). A GPU has no FP8 tensor-map type
    /// (FP8 tensors are mapped as 8-bit integers, which refuse a NaN fill); for E4M3 and E5M2
    /// this model writes `0x7F`, a NaN in both.
    pub fn nan_fill_byte(self, byte: u32) -> u8 {
        nan_fill_byte(self.size(), byte)
    }
}

/// Byte `byte` of a NaN fill of `size`-byte elements ([`ElemType::nan_fill_byte`]).
pub(crate) fn nan_fill_byte(size: u32, byte: u32) -> u8 {
    if size == 1 || byte % 2 == 1 {
        0x7F
    } else {
        0xF7
    }
}

/// Out-of-bounds fill (`CU_TENSOR_MAP_FLOAT_OOB_FILL_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OobFill {
    /// Zeros.
    Zero,
    /// A NaN (float types only).
    Nan,
}

/// Interleave (`CU_TENSOR_MAP_INTERLEAVE_*`); only `None` is supported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Interleave {
    /// No interleave.
    None,
    /// 16-byte interleave (refused as unsupported).
    B16,
    /// 32-byte interleave (refused as unsupported).
    B32,
}

/// Tensor-map mode: tiled (`cuTensorMapEncodeTiled`) or im2col (refused as unsupported).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MapMode {
    /// Tile mode.
    Tiled,
    /// Im2col mode (refused as unsupported).
    Im2col,
}

/// A TMA descriptor: the tensor in global memory and the box one command moves.
///
/// Dimension 0 is the fastest varying (CUDA's order). Entries at index `>= rank` are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TensorMap {
    /// Element type.
    pub dtype: ElemType,
    /// Rank, 1..=5.
    pub rank: u32,
    /// Global byte address of element (0, .., 0); a multiple of 16.
    pub global_address: u64,
    /// Global dimensions in elements, each 1..=2^32.
    pub global_dims: [u64; 5],
    /// Global strides in bytes of dimensions 1..rank (`global_strides[i - 1]` is dimension
    /// `i`'s); each a multiple of 16 and below 2^40. Dimension 0 is dense.
    pub global_strides: [u64; 4],
    /// Box dimensions in elements (the traversal range of each dimension), each 1..=256.
    pub box_dims: [u32; 5],
    /// Element (traversal) strides, each 1..=8: an outer dimension (1..) of box `b` and
    /// stride `s` loads `ceil(b / s)` elements. Dimension 0's stride is checked but does not
    /// thin the row: an H200 moves all `box_dims[0]` elements of every row and counts them in
    /// the transaction bytes (docs/memory.md, "Checked on an H200").
    pub element_strides: [u32; 5],
    /// Interleave (only `None` supported).
    pub interleave: Interleave,
    /// Swizzle mode.
    pub swizzle: Swizzle,
    /// Out-of-bounds fill.
    pub oob_fill: OobFill,
    /// Tiled or im2col (only tiled supported).
    pub mode: MapMode,
}

impl TensorMap {
    /// A tiled, unswizzled, zero-filled map of `dtype` at `global_address` with dense strides
    /// for `dims` (at most 5) and box `box_dims` (same length), element strides 1.
    pub fn dense(dtype: ElemType, global_address: u64, dims: &[u64], box_dims: &[u32]) -> Self {
        let rank = dims.len().min(5);
        let mut gd = [1u64; 5];
        let mut gs = [0u64; 4];
        let mut bd = [1u32; 5];
        let mut stride = u64::from(dtype.size());
        for i in 0..rank {
            gd[i] = dims[i];
            bd[i] = box_dims.get(i).copied().unwrap_or(1);
            if i > 0 {
                gs[i - 1] = stride;
            }
            stride = stride.saturating_mul(dims[i]);
        }
        TensorMap {
            dtype,
            rank: rank as u32,
            global_address,
            global_dims: gd,
            global_strides: gs,
            box_dims: bd,
            element_strides: [1; 5],
            interleave: Interleave::None,
            swizzle: Swizzle::None,
            oob_fill: OobFill::Zero,
            mode: MapMode::Tiled,
        }
    }

    /// Elements loaded along dimension `i`: `box_dims[0]` for dimension 0, and
    /// `ceil(box_dims[i] / element_strides[i])` for the outer ones (1 for `i >= rank`).
    pub fn box_elems(&self, i: usize) -> u32 {
        if i as u32 >= self.rank {
            return 1;
        }
        self.box_dims[i].div_ceil(self.traversal_stride(i))
    }

    /// The stride between consecutive loaded elements of dimension `i`: `element_strides[i]`
    /// for the outer dimensions, 1 for dimension 0 (see [`TensorMap::element_strides`]).
    pub fn traversal_stride(&self, i: usize) -> u32 {
        if i == 0 {
            1
        } else {
            self.element_strides[i].max(1)
        }
    }

    /// Bytes of one box's data (the transaction count of one load).
    pub fn box_bytes(&self) -> u64 {
        (0..5)
            .map(|i| u64::from(self.box_elems(i)))
            .product::<u64>()
            * u64::from(self.dtype.size())
    }

    /// Bytes from one box row to the next in shared memory: the row's own bytes without a
    /// swizzle, the swizzle's span with one (a row narrower than the span is padded to it, as
    /// an H200 lays it out; docs/memory.md, "Checked on an H200").
    pub fn smem_row_pitch(&self) -> u32 {
        let row = self.box_elems(0) * self.dtype.size();
        self.swizzle.span().map_or(row, |span| span.max(row))
    }

    /// Bytes one box spans in shared memory, from its first row to the end of its last
    /// ([`TensorMap::smem_row_pitch`] times the rows).
    pub fn smem_box_bytes(&self) -> u64 {
        (1..5)
            .map(|i| u64::from(self.box_elems(i)))
            .product::<u64>()
            * u64::from(self.smem_row_pitch())
    }

    /// Whether a load or store may start at inner coordinate `c0`: its byte offset must be a
    /// multiple of 16 (an H200 stops the kernel with an illegal-instruction error otherwise).
    pub fn inner_coord_aligned(&self, c0: i32) -> bool {
        (i64::from(c0) * i64::from(self.dtype.size())) % 16 == 0
    }

    /// The global byte address one past the highest element of the tensor.
    pub fn global_end(&self) -> u64 {
        let es = u64::from(self.dtype.size());
        let mut end = self.global_address + es;
        for i in 0..self.rank as usize {
            let stride = if i == 0 {
                es
            } else {
                self.global_strides[i - 1]
            };
            end = end.saturating_add(self.global_dims[i].saturating_sub(1).saturating_mul(stride));
        }
        end
    }

    /// Checks every descriptor rule; the first broken one is the error.
    pub fn validate(&self) -> Result<(), TensorMapError> {
        if self.mode == MapMode::Im2col {
            return Err(TensorMapError::Im2colUnsupported);
        }
        if self.interleave != Interleave::None {
            return Err(TensorMapError::InterleaveUnsupported(self.interleave));
        }
        if self.swizzle.mask().is_none() {
            return Err(TensorMapError::SwizzleUnsupported(self.swizzle.name()));
        }
        if !(1..=5).contains(&self.rank) {
            return Err(TensorMapError::Rank(self.rank));
        }
        if !self.global_address.is_multiple_of(16) {
            return Err(TensorMapError::GlobalAddress(self.global_address));
        }
        let rank = self.rank as usize;
        for i in 0..rank {
            let d = self.global_dims[i];
            if !(1..=1u64 << 32).contains(&d) {
                return Err(TensorMapError::GlobalDim { dim: i, value: d });
            }
        }
        for i in 1..rank {
            let s = self.global_strides[i - 1];
            if !s.is_multiple_of(16) {
                return Err(TensorMapError::GlobalStrideAlign { dim: i, value: s });
            }
            if s >= 1 << 40 {
                return Err(TensorMapError::GlobalStrideRange { dim: i, value: s });
            }
        }
        for i in 0..rank {
            let b = self.box_dims[i];
            if !(1..=256).contains(&b) {
                return Err(TensorMapError::BoxDim { dim: i, value: b });
            }
        }
        let inner = self.box_dims[0] * self.dtype.size();
        if !inner.is_multiple_of(16) {
            return Err(TensorMapError::BoxInnerBytes { bytes: inner });
        }
        for i in 0..rank {
            let e = self.element_strides[i];
            if !(1..=8).contains(&e) {
                return Err(TensorMapError::ElementStride { dim: i, value: e });
            }
        }
        if let Some(span) = self.swizzle.span() {
            if inner > span {
                return Err(TensorMapError::SwizzleSpan {
                    swizzle: self.swizzle.name(),
                    bytes: inner,
                    span,
                });
            }
        }
        if self.oob_fill == OobFill::Nan && !self.dtype.is_float() {
            return Err(TensorMapError::NanFill(self.dtype.name()));
        }
        Ok(())
    }

    /// The shared-memory alignment a destination needs: 128 B, the launch-time rule of
    /// docs/memory.md ("Descriptor rules"), for every swizzle. The swizzle is a function of the
    /// *absolute* address, so a box at a 128-byte (not 1024-byte) boundary lands exactly where the
    /// formula says; 1024 B is only the alignment at which a 128B-swizzled box starts the pattern
    /// at its row 0 (CUTLASS's choice), which the memory-fed GEMM deliberately does not use for B.
    pub fn smem_alignment(&self) -> u32 {
        128
    }
}

/// A broken descriptor rule, naming the field and the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TensorMapError {
    /// Rank outside 1..=5.
    #[error("tensor map rank: {0} (must be 1..=5)")]
    Rank(u32),
    /// Global address not a multiple of 16.
    #[error("tensor map global_address: {0:#x} (must be a multiple of 16)")]
    GlobalAddress(u64),
    /// A global dimension outside 1..=2^32.
    #[error("tensor map global_dims[{dim}]: {value} (must be 1..=2^32)")]
    GlobalDim {
        /// The dimension.
        dim: usize,
        /// Its value.
        value: u64,
    },
    /// A global stride not a multiple of 16.
    #[error(
        "tensor map global_strides of dimension {dim}: {value} bytes (must be a multiple of 16)"
    )]
    GlobalStrideAlign {
        /// The dimension (1..rank).
        dim: usize,
        /// Its stride in bytes.
        value: u64,
    },
    /// A global stride of 2^40 or more.
    #[error("tensor map global_strides of dimension {dim}: {value} bytes (must be below 2^40)")]
    GlobalStrideRange {
        /// The dimension (1..rank).
        dim: usize,
        /// Its stride in bytes.
        value: u64,
    },
    /// A box dimension outside 1..=256.
    #[error("tensor map box_dims[{dim}]: {value} (must be 1..=256)")]
    BoxDim {
        /// The dimension.
        dim: usize,
        /// Its value.
        value: u32,
    },
    /// Box dimension 0 times the element size not a multiple of 16 bytes.
    #[error("tensor map box_dims[0] x element size: {bytes} bytes (must be a multiple of 16)")]
    BoxInnerBytes {
        /// Box dimension 0 in bytes.
        bytes: u32,
    },
    /// An element stride outside 1..=8.
    #[error("tensor map element_strides[{dim}]: {value} (must be 1..=8)")]
    ElementStride {
        /// The dimension.
        dim: usize,
        /// Its value.
        value: u32,
    },
    /// Box dimension 0 in bytes wider than the swizzle span.
    #[error("tensor map swizzle {swizzle}: box_dims[0] x element size = {bytes} bytes exceeds the {span}-byte span")]
    SwizzleSpan {
        /// The swizzle mode's name.
        swizzle: &'static str,
        /// Box dimension 0 in bytes.
        bytes: u32,
        /// The span.
        span: u32,
    },
    /// A NaN fill requested for an integer type.
    #[error("tensor map oob_fill: nan requested for the integer type {0} (float types only)")]
    NanFill(&'static str),
    /// Im2col mode.
    #[error("tensor map mode: im2col is unsupported")]
    Im2colUnsupported,
    /// An interleave other than none.
    #[error("tensor map interleave: {0:?} is unsupported (only none)")]
    InterleaveUnsupported(Interleave),
    /// A 128B_ATOM swizzle.
    #[error("tensor map swizzle: {0} is unsupported")]
    SwizzleUnsupported(&'static str),
}
