//! Accumulation modes, the NVIDIA block-FMA parameters and the per-GPU presets.

use crate::numerics::flags::RoundingMode;
use crate::numerics::format::{Format, ACC_FORMATS, BF16, E4M3, E5M2, FP16, FP32, TF32};
pub use crate::numerics::int::IntMode;

/// The largest number of products one dot-product step takes, also at its former path.
pub use super::stage::MAX_LANES;

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
    /// The block FMA (docs/numerics.md, "The block-FMA rule"): align every nonzero term (products
    /// and `c`) to the largest exponent keeping `23 + neab` fraction bits (truncating), sum
    /// exactly, normalise once and truncate to FP32 (or to `out_frac_bits`).
    Truncating,
    /// Blackwell FP8 (inferred from B200 measurements): `d = RNE32(c + RZ32(exact sum of the
    /// products))`.
    ExactThenRne,
    /// The FP16-output FP8 rule inferred from the H100/B200 measurements before the H200's,
    /// kept as a selectable alternative (no preset uses it: the H200 data rule it out, see
    /// [`BlockRule::K16Steps`]): the whole block's specials decided first, then per block of
    /// 32 products two FP16 k16 steps from zero and one FP16 addition of `c`:
    /// `s1 = RNE16(block(products with k mod 4 in {0, 1}))`, `s2 = RNE16(block(s1 and the
    /// products with k mod 4 in {2, 3}))`, `d = RNE16(s2 + c)`; each inner block is the
    /// truncating alignment with `neab` extra bits.
    HalfSteps,
    /// FP8 through `mma.sync` (H200 into both accumulators, Hopper and Blackwell into FP16;
    /// measured on an H200, docs/numerics.md "Checked on an
    /// H200"): per block of 32 products two k16 steps into the accumulator from zero, then
    /// `c` added last, each step deciding its own NaN and infinities (IEEE):
    /// `s1 = R(block(products with k mod 4 in {0, 1}))`, `s2 = R(block(s1 and the products
    /// with k mod 4 in {2, 3}))`, `d = RNE(s2 + c)` in the accumulator format, where each
    /// inner block is the truncating alignment with `neab` extra bits and `R` rounds it to
    /// the accumulator per `out_rounding` (toward zero into FP32, to nearest even into FP16).
    /// It is the code CUDA 13.0 emits for FP8 `mma.sync` on sm_90a: FP8-to-FP16 conversions
    /// (`F2FP.F16.E4M3.UNPACK_B`), two `HMMA.16816` steps, then `FADD` (or `HADD2`) of `c`.
    K16Steps,
    /// AMD CDNA1 (MI100, after the published model `MI100MC.m`): the block's products and `c`
    /// summed exactly and rounded once to nearest even into FP32, subnormals kept
    /// (docs/numerics.md, "AMD CDNA matrix cores"). Implemented in `dot::cdna`.
    ExactRne,
    /// AMD CDNA2 (MI210/MI250, after `MI210MC.m`): inputs below their format's smallest normal
    /// flushed to zero, products below FP32's smallest normal flushed, a subnormal `c` read as
    /// zero; the block's products summed pair-wise (a binary tree of FP32 additions rounded to
    /// nearest even), then `c` added to the tree's sum, each addition flushing a subnormal
    /// result to a zero of its sign. Implemented in `dot::cdna`.
    PairwiseFtz,
    /// AMD CDNA3 (MI300X/MI300A, after `MI300MC.m`) FP16, BF16 and TF32: the products alone
    /// aligned to their largest exponent keeping `23 + neab` fraction bits (truncating) and
    /// summed; that sum and `c` then brought to the larger of the two exponents, the smaller
    /// rounded toward negative infinity (7 extra bits when `c` is the larger), added, and
    /// rounded once to nearest even into FP32. Implemented in `dot::cdna`.
    LatePartialSum,
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
    /// Fraction bits kept in each block's result: the accumulator's own (23 for FP32, 10 for
    /// FP16), or 13 for the Hopper and Ada FP8 cut of an FP32 result.
    pub out_frac_bits: u32,
    /// How each block's exact aligned sum is rounded to the accumulator: toward zero for FP32
    /// output, to nearest even for FP16 output.
    pub out_rounding: RoundingMode,
    /// Which block rule applies.
    pub rule: BlockRule,
}

/// A GPU generation whose tensor-core arithmetic is modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preset {
    /// V100 (FP16 only).
    Volta,
    /// T4 (Turing, FP16 only): Volta's block FMA. Fasi, Higham, Mikaitis and Pranesh
    /// ("Numerical behavior of NVIDIA tensor cores", PeerJ CS 2021) found the T4's binary16
    /// tensor cores to behave as the V100's in every directed test.
    Turing,
    /// A100 (FP16, BF16, TF32).
    Ampere,
    /// Ada (RTX 4000-class, L40S): FP16, BF16 and TF32 as Ampere; FP8 in blocks of 16.
    Ada,
    /// H100 (FP16, BF16, TF32, E4M3, E5M2).
    Hopper,
    /// B200 (FP16, BF16, TF32, E4M3, E5M2).
    Blackwell,
    /// H200 through `mma.sync` built with CUDA 13.0 (measured by this project, 2026-12-04):
    /// Hopper's FP16, BF16 and TF32 blocks (TF32 in blocks of 8, one `m16n8k8`), FP8 per
    /// [`BlockRule::K16Steps`].
    H200,
    /// AMD CDNA1 (MI100) matrix cores, `v_mfma` (FP16 and BF16 into FP32): blocks of 4 (FP16)
    /// or 2 (BF16) per [`BlockRule::ExactRne`], after the published model of Khattak and
    /// Mikaitis (north-numerical-computing/MATLAB-tensor-core, `models/MI100MC.m`).
    Cdna1,
    /// AMD CDNA2 (MI210, MI250) matrix cores (FP16 and BF16 into FP32): blocks of 4 per
    /// [`BlockRule::PairwiseFtz`], after `models/MI210MC.m` (which `MI250MC.m` calls).
    Cdna2,
    /// AMD CDNA3 (MI300X, MI300A) matrix cores (FP16, BF16 in blocks of 8, TF32 (xf32) in
    /// blocks of 4, into FP32) per [`BlockRule::LatePartialSum`] with one extra alignment bit,
    /// after `models/MI300MC.m` (commit b4bf135; `MI300XMC.m` and `MI300AMC.m` call it).
    Cdna3,
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
    /// In the weight-stationary order an NVIDIA block must fit one PE step (`w >= n`): a
    /// block spanning several PEs down a column has no block FMA that sees all its products.
    #[error("nvidia blocks of {block} at width {width} in ws (the width must hold a whole block)")]
    BlockSpansPes {
        /// The block size `n`.
        block: usize,
        /// The step width `w`.
        width: usize,
    },
    /// A format that is not an input format (A and B must be E4M3, E5M2, FP16, BF16 or TF32).
    #[error("{0} is not a multiplier input format")]
    NotAnInput(&'static str),
    /// A format that is not an accumulator format (FP32 or FP16).
    #[error("{0} is not an accumulator format (expected fp32 or fp16)")]
    NotAnAccumulator(&'static str),
    /// The preset has no path from these inputs to this accumulator (e.g. BF16 or TF32 into
    /// FP16: the GPUs accumulate those in FP32 only).
    #[error("preset {preset} does not accumulate {fmt_a} x {fmt_b} into {acc}")]
    UnsupportedOutput {
        /// Preset name.
        preset: &'static str,
        /// Format of A.
        fmt_a: &'static str,
        /// Format of B.
        fmt_b: &'static str,
        /// The accumulator format.
        acc: &'static str,
    },
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
    /// All presets, in the order the project added them (the first six keep their places, so
    /// an index into this list names the same preset as before a preset was added).
    pub const ALL: [Preset; 10] = [
        Preset::Volta,
        Preset::Ampere,
        Preset::Ada,
        Preset::Hopper,
        Preset::Blackwell,
        Preset::H200,
        Preset::Turing,
        Preset::Cdna1,
        Preset::Cdna2,
        Preset::Cdna3,
    ];

    /// The AMD CDNA presets, oldest first.
    pub const AMD: [Preset; 3] = [Preset::Cdna1, Preset::Cdna2, Preset::Cdna3];

    /// The NVIDIA presets (every preset of [`Preset::ALL`] whose rule is an NVIDIA tensor
    /// core's), in the same order: what the probes of NVIDIA's features run on.
    pub const NVIDIA: [Preset; 7] = [
        Preset::Volta,
        Preset::Ampere,
        Preset::Ada,
        Preset::Hopper,
        Preset::Blackwell,
        Preset::H200,
        Preset::Turing,
    ];

    /// Short name (`volta`, `turing`, `ampere`, `ada`, `hopper`, `blackwell`, `h200`, `cdna1`,
    /// `cdna2`, `cdna3`).
    pub const fn name(self) -> &'static str {
        match self {
            Preset::Volta => "volta",
            Preset::Turing => "turing",
            Preset::Ampere => "ampere",
            Preset::Ada => "ada",
            Preset::Hopper => "hopper",
            Preset::Blackwell => "blackwell",
            Preset::H200 => "h200",
            Preset::Cdna1 => "cdna1",
            Preset::Cdna2 => "cdna2",
            Preset::Cdna3 => "cdna3",
        }
    }

    /// Looks a preset up by name (case-insensitive).
    pub fn by_name(name: &str) -> Option<Preset> {
        Self::ALL
            .iter()
            .copied()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// True for the AMD CDNA presets ([`Preset::AMD`]).
    pub const fn is_amd(self) -> bool {
        matches!(self, Preset::Cdna1 | Preset::Cdna2 | Preset::Cdna3)
    }

    /// The exponent floor of the FP32-output block FMA on this GPU (the CDNA models set no
    /// floor: `min_exp_limit = -1024`).
    pub const fn exp_floor(self) -> i32 {
        match self {
            Preset::Volta | Preset::Turing => -1024,
            Preset::Cdna1 | Preset::Cdna2 | Preset::Cdna3 => -1024,
            Preset::Ampere | Preset::Ada => -132,
            Preset::Hopper | Preset::Blackwell | Preset::H200 => -133,
        }
    }

    /// The exponent floor of the FP16-input, FP16-output block FMA: the alignment exponent
    /// is raised to at least -19 on Volta, -20 on Ampere and Ada, -21 on Hopper and Blackwell,
    /// so a product below `2^(floor - 23 - neab)` never reaches the FP16 rounding. Source: the
    /// models of Khattak and Mikaitis (north-numerical-computing/MATLAB-tensor-core,
    /// `models/V100TC.m`, `A100TC.m`, `AdaTC.m`, `H100TC.m`, `B200TC.m`, `min_exp_limit` for
    /// FP16 output, set in August 2026); Turing takes Volta's (not measured). The CDNA presets
    /// have no FP16 output (their models always return binary32); they report -1024.
    pub const fn fp16_out_exp_floor(self) -> i32 {
        match self {
            Preset::Cdna1 | Preset::Cdna2 | Preset::Cdna3 => -1024,
            Preset::Volta | Preset::Turing => -19,
            Preset::Ampere | Preset::Ada => -20,
            Preset::Hopper | Preset::Blackwell | Preset::H200 => -21,
        }
    }

    /// The block-FMA parameters for A in `fmt_a` and B in `fmt_b` with FP32 output
    /// ([`Preset::params_for`] with `acc = FP32`).
    pub fn params(self, fmt_a: Format, fmt_b: Format) -> Result<NvidiaParams, DotError> {
        self.params_for(fmt_a, fmt_b, FP32)
    }

    /// The block-FMA parameters for A in `fmt_a` and B in `fmt_b` accumulating into `acc`
    /// (FP32 or FP16). Mixed E4M3 x E5M2 uses the FP8 parameters; any other mixed pair, a
    /// format the GPU lacks (Volta with BF16, TF32 or FP8; Ampere with FP8) and an output
    /// the GPU lacks (BF16 or TF32 into FP16) are errors.
    ///
    /// FP32 output truncates each block (the FP8 blocks of Hopper and Ada to 13 fraction
    /// bits; Blackwell FP8 follows [`BlockRule::ExactThenRne`]). FP16 output rounds each
    /// block's exact aligned sum once to FP16, to nearest even, with the same `n`, `neab` and
    /// floor; Hopper and Blackwell FP8 into FP16 follow [`BlockRule::K16Steps`] with the FP16
    /// preset's alignment (two extra bits), as H200 FP8 does into either accumulator.
    ///
    /// The AMD CDNA presets take FP16 and BF16 (CDNA3 also TF32), FP32 output only, and round
    /// to nearest even ([`BlockRule::ExactRne`], [`BlockRule::PairwiseFtz`],
    /// [`BlockRule::LatePartialSum`]); CDNA3 FP8 (FNUZ formats) is not modelled.
    pub fn params_for(
        self,
        fmt_a: Format,
        fmt_b: Format,
        acc: Format,
    ) -> Result<NvidiaParams, DotError> {
        let fp8 = |f: Format| f == E4M3 || f == E5M2;
        let unsupported = DotError::Unsupported {
            preset: self.name(),
            fmt_a: fmt_a.name,
            fmt_b: fmt_b.name,
        };
        if !ACC_FORMATS.contains(&acc) {
            return Err(DotError::NotAnAccumulator(acc.name));
        }
        let kind = if fp8(fmt_a) && fp8(fmt_b) {
            InputKind::Fp8
        } else if fmt_a != fmt_b {
            return Err(unsupported);
        } else if fmt_a == FP16 {
            InputKind::Fp16
        } else if fmt_a == BF16 {
            InputKind::Bf16
        } else if fmt_a == TF32 {
            InputKind::Tf32
        } else {
            return Err(unsupported);
        };
        let block_fma = |block: usize, neab: i32| NvidiaParams {
            block,
            neab,
            exp_floor: self.exp_floor(),
            out_frac_bits: 23,
            out_rounding: RoundingMode::TowardZero,
            rule: BlockRule::Truncating,
        };
        let amd = |block: usize, neab: i32, rule: BlockRule| NvidiaParams {
            out_rounding: RoundingMode::NearestEven,
            rule,
            ..block_fma(block, neab)
        };
        let fp32 = match (self, kind) {
            (Preset::Volta | Preset::Turing, InputKind::Fp16) => block_fma(4, 0),
            (Preset::Ampere | Preset::Ada, InputKind::Fp16 | InputKind::Bf16) => block_fma(8, 1),
            (Preset::Ampere | Preset::Ada, InputKind::Tf32) => block_fma(4, 1),
            (
                Preset::Hopper | Preset::Blackwell | Preset::H200,
                InputKind::Fp16 | InputKind::Bf16,
            ) => block_fma(16, 2),
            (Preset::Hopper | Preset::Blackwell | Preset::H200, InputKind::Tf32) => block_fma(8, 2),
            (Preset::Ada, InputKind::Fp8) => NvidiaParams {
                out_frac_bits: 13,
                ..block_fma(16, -10)
            },
            (Preset::Hopper, InputKind::Fp8) => NvidiaParams {
                out_frac_bits: 13,
                ..block_fma(32, -10)
            },
            (Preset::Blackwell, InputKind::Fp8) => NvidiaParams {
                rule: BlockRule::ExactThenRne,
                ..block_fma(32, 2)
            },
            (Preset::H200, InputKind::Fp8) => NvidiaParams {
                rule: BlockRule::K16Steps,
                ..block_fma(32, 2)
            },
            // AMD CDNA (docs/numerics.md, "AMD CDNA matrix cores"); `neab` is unused by the
            // exact and pair-wise rules (their models align without limit: `neab = Inf`).
            (Preset::Cdna1, InputKind::Fp16) => amd(4, 0, BlockRule::ExactRne),
            (Preset::Cdna1, InputKind::Bf16) => amd(2, 0, BlockRule::ExactRne),
            (Preset::Cdna2, InputKind::Fp16 | InputKind::Bf16) => amd(4, 0, BlockRule::PairwiseFtz),
            (Preset::Cdna3, InputKind::Fp16 | InputKind::Bf16) => {
                amd(8, 1, BlockRule::LatePartialSum)
            }
            (Preset::Cdna3, InputKind::Tf32) => amd(4, 1, BlockRule::LatePartialSum),
            _ => return Err(unsupported),
        };
        if acc == FP32 {
            return Ok(fp32);
        }
        if self.is_amd() {
            // The CDNA models always return binary32.
            return Err(DotError::UnsupportedOutput {
                preset: self.name(),
                fmt_a: fmt_a.name,
                fmt_b: fmt_b.name,
                acc: acc.name,
            });
        }
        let to_fp16 = |p: NvidiaParams| NvidiaParams {
            out_frac_bits: acc.frac_bits,
            out_rounding: RoundingMode::NearestEven,
            ..p
        };
        match (self, kind) {
            (_, InputKind::Fp16) => Ok(NvidiaParams {
                exp_floor: self.fp16_out_exp_floor(),
                ..to_fp16(fp32)
            }),
            (Preset::Ada | Preset::H200, InputKind::Fp8) => Ok(to_fp16(fp32)),
            (Preset::Hopper | Preset::Blackwell, InputKind::Fp8) => Ok(NvidiaParams {
                rule: BlockRule::K16Steps,
                ..to_fp16(block_fma(32, 2))
            }),
            _ => Err(DotError::UnsupportedOutput {
                preset: self.name(),
                fmt_a: fmt_a.name,
                fmt_b: fmt_b.name,
                acc: acc.name,
            }),
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
    Tf32,
}
