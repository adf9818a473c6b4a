//! Accumulation modes, the NVIDIA block-FMA parameters and the per-GPU presets.

use crate::numerics::format::{Format, BF16, E4M3, E5M2, FP16};
pub use crate::numerics::int::IntMode;

/// The largest number of products one dot-product step takes (`w` or the block size `n`).
pub const MAX_LANES: usize = 32;

/// How a dot-product unit accumulates its products into the FP32 accumulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccMode {
    /// A chain of fused multiply-adds, `c <- RNE32(c + a_k * b_k)`, k ascending.
    Ieee,
    /// Per step, `c <- RNE32(c + exact sum of the w products)`: one rounding per step.
    Fused,
    /// Reference only: one rounding of `c` plus all K products.
    Exact,
    /// NVIDIA block FMA with the given parameters (see [`Preset::params`]).
    Nvidia(NvidiaParams),
    /// Integer MMA (`crate::numerics::int`): exact products into an int32 accumulator that
    /// wraps or clamps per step. The accumulator's 32 bits are int32, not FP32, and the
    /// configuration's `Format`s only give the lane widths (see
    /// [`crate::numerics::int::IntFormat::container`]).
    Int(IntMode),
}

impl AccMode {
    /// Short name (`ieee`, `fused`, `exact`, `nvidia`).
    pub const fn name(&self) -> &'static str {
        match self {
            AccMode::Ieee => "ieee",
            AccMode::Fused => "fused",
            AccMode::Exact => "exact",
            AccMode::Nvidia(_) => "nvidia",
            AccMode::Int(_) => "int",
        }
    }
}

/// How one NVIDIA block combines its products with `c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockRule {
    /// The block FMA of NUMERICS.md: align every nonzero term (products and `c`) to the
    /// largest exponent keeping `23 + neab` fraction bits (truncating), sum exactly, normalise
    /// once and truncate to FP32 (or to `out_frac_bits`).
    Truncating,
    /// Blackwell FP8 (inferred from B200 measurements): `d = RNE32(c + RZ32(exact sum of the
    /// products))`.
    ExactThenRne,
}

/// Parameters of the NVIDIA block FMA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NvidiaParams {
    /// Block size `n`: products per block FMA (1..=32). K longer than `n` chains blocks.
    pub block: usize,
    /// Extra alignment bits beyond FP32's 23 fraction bits (may be negative).
    pub neab: i32,
    /// Floor of the alignment exponent (the largest exponent is raised to at least this).
    pub exp_floor: i32,
    /// Fraction bits kept in each block's (truncated) FP32 result: 23, or 13 for the
    /// Hopper FP8 cut.
    pub out_frac_bits: u32,
    /// Which block rule applies.
    pub rule: BlockRule,
}

/// A GPU generation whose tensor-core arithmetic is modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preset {
    /// V100 (FP16 only).
    Volta,
    /// A100 (FP16, BF16).
    Ampere,
    /// H100 (FP16, BF16, E4M3, E5M2).
    Hopper,
    /// B200 (FP16, BF16, E4M3, E5M2).
    Blackwell,
}

/// Errors of the dot-product unit's configuration and inputs.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DotError {
    /// The preset has no tensor-core path for this input format pair.
    #[error("preset {preset} does not support {fmt_a} x {fmt_b} inputs")]
    Unsupported {
        /// Preset name.
        preset: &'static str,
        /// Format of A.
        fmt_a: &'static str,
        /// Format of B.
        fmt_b: &'static str,
    },
    /// A and B hold different numbers of lanes.
    #[error("A has {a} values but B has {b}")]
    LengthMismatch {
        /// Lanes of A.
        a: usize,
        /// Lanes of B.
        b: usize,
    },
    /// The step width is outside 1..=32.
    #[error("width {0} is outside 1..=32")]
    BadWidth(usize),
    /// A format that is not an input format (A and B must be E4M3, E5M2, FP16 or BF16).
    #[error("{0} is not a multiplier input format")]
    NotAnInput(&'static str),
    /// A rounding direction the mode does not take: the `nvidia` presets keep the GPU's own
    /// rounding (only `rne`, the default, is accepted), and round-to-odd is no IEEE direction.
    #[error(
        "rounding {rounding} does not apply to {mode} (nvidia keeps the GPU's own rounding; \
         ieee, fused and exact take rne, rtz, rdn or rup)"
    )]
    FixedRounding {
        /// The accumulation mode's name.
        mode: &'static str,
        /// The rounding direction asked for.
        rounding: &'static str,
    },
}

impl Preset {
    /// All presets, oldest first.
    pub const ALL: [Preset; 4] = [
        Preset::Volta,
        Preset::Ampere,
        Preset::Hopper,
        Preset::Blackwell,
    ];

    /// Short name (`volta`, `ampere`, `hopper`, `blackwell`).
    pub const fn name(self) -> &'static str {
        match self {
            Preset::Volta => "volta",
            Preset::Ampere => "ampere",
            Preset::Hopper => "hopper",
            Preset::Blackwell => "blackwell",
        }
    }

    /// Looks a preset up by name (case-insensitive).
    pub fn by_name(name: &str) -> Option<Preset> {
        Self::ALL
            .iter()
            .copied()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// The exponent floor of the FP32-output block FMA on this GPU.
    pub const fn exp_floor(self) -> i32 {
        match self {
            Preset::Volta => -1024,
            Preset::Ampere => -132,
            Preset::Hopper | Preset::Blackwell => -133,
        }
    }

    /// The block-FMA parameters for A in `fmt_a` and B in `fmt_b` (FP32 output). Mixed
    /// E4M3 x E5M2 uses the FP8 parameters; any other mixed pair, and a format the GPU lacks
    /// (Volta with BF16 or FP8, Ampere with FP8), is an error.
    pub fn params(self, fmt_a: Format, fmt_b: Format) -> Result<NvidiaParams, DotError> {
        let fp8 = |f: Format| f == E4M3 || f == E5M2;
        let unsupported = DotError::Unsupported {
            preset: self.name(),
            fmt_a: fmt_a.name,
            fmt_b: fmt_b.name,
        };
        let kind = if fp8(fmt_a) && fp8(fmt_b) {
            InputKind::Fp8
        } else if fmt_a == fmt_b && fmt_a == FP16 {
            InputKind::Fp16
        } else if fmt_a == fmt_b && fmt_a == BF16 {
            InputKind::Bf16
        } else {
            return Err(unsupported);
        };
        let block_fma = |block: usize, neab: i32| NvidiaParams {
            block,
            neab,
            exp_floor: self.exp_floor(),
            out_frac_bits: 23,
            rule: BlockRule::Truncating,
        };
        match (self, kind) {
            (Preset::Volta, InputKind::Fp16) => Ok(block_fma(4, 0)),
            (Preset::Ampere, InputKind::Fp16 | InputKind::Bf16) => Ok(block_fma(8, 1)),
            (Preset::Hopper | Preset::Blackwell, InputKind::Fp16 | InputKind::Bf16) => {
                Ok(block_fma(16, 2))
            }
            (Preset::Hopper, InputKind::Fp8) => Ok(NvidiaParams {
                out_frac_bits: 13,
                ..block_fma(32, -10)
            }),
            (Preset::Blackwell, InputKind::Fp8) => Ok(NvidiaParams {
                rule: BlockRule::ExactThenRne,
                ..block_fma(32, 2)
            }),
            _ => Err(unsupported),
        }
    }
}

impl std::fmt::Display for Preset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Copy)]
enum InputKind {
    Fp8,
    Fp16,
    Bf16,
}
