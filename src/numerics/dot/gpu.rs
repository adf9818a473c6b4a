//! Which NVIDIA preset a GPU runs through a given matrix instruction.
//!
//! A [`Preset`] is a set of block-FMA rules; which rules a program sees depends on the GPU
//! *and* on the instruction the compiler emits for it. On Hopper, FP8 through `wgmma` (what
//! cuBLAS runs) is the hardware's own FP8 arithmetic ([`Preset::Hopper`]), while FP8 through
//! `mma.sync` built with CUDA 13.0 is lowered to FP8-to-FP16 conversions and two FP16 HMMA
//! steps ([`Preset::H200`]). [`ROWS`] maps each modelled (GPU, instruction) pair to its preset,
//! each row naming the evidence behind it; [`GpuRule::resolve`] looks a pair up, and
//! [`GpuRule::of_preset`] gives the pair a preset stands for when it is named alone.
//! docs/numerics.md ("GPUs and instructions") has the table and the sources.

use crate::numerics::dot::mode::Preset;
use crate::numerics::format::{Format, E4M3, E5M2};

/// A GPU part whose tensor cores may be modelled (rows of [`ROWS`] say which instructions are).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gpu {
    /// Tesla V100 (Volta, sm_70).
    V100,
    /// T4 (Turing, sm_75).
    T4,
    /// A100 (Ampere, GA100, sm_80).
    A100,
    /// A30 (Ampere, the A100's GA100 chip, sm_80).
    A30,
    /// A2 (Ampere, GA107, sm_86).
    A2,
    /// L40S (Ada Lovelace, AD102, sm_89).
    L40S,
    /// GeForce RTX 4090 (Ada Lovelace, AD102, sm_89).
    Rtx4090,
    /// L4 (Ada Lovelace, AD104, sm_89).
    L4,
    /// H100 (Hopper, sm_90).
    H100,
    /// H200 (Hopper, the H100's chip with more memory, sm_90).
    H200,
    /// B200 (Blackwell, sm_100).
    B200,
    /// RTX PRO 6000 Blackwell (consumer and workstation Blackwell, GB202, sm_120).
    RtxPro6000,
    /// Instinct MI100 (AMD CDNA1, gfx908).
    Mi100,
    /// Instinct MI210 (AMD CDNA2, gfx90a).
    Mi210,
    /// Instinct MI250 (AMD CDNA2, gfx90a).
    Mi250,
    /// Instinct MI300X (AMD CDNA3, gfx942).
    Mi300x,
    /// Instinct MI300A (AMD CDNA3, gfx942).
    Mi300a,
}

/// Each GPU's name and architecture, oldest first (a new GPU is a variant and a line here).
const GPUS: [(Gpu, &str, &str); 17] = [
    (Gpu::V100, "v100", "Volta, sm_70"),
    (Gpu::T4, "t4", "Turing, sm_75"),
    (Gpu::A100, "a100", "Ampere, sm_80"),
    (Gpu::A30, "a30", "Ampere, sm_80"),
    (Gpu::A2, "a2", "Ampere, sm_86"),
    (Gpu::L40S, "l40s", "Ada, sm_89"),
    (Gpu::Rtx4090, "rtx4090", "Ada, sm_89"),
    (Gpu::L4, "l4", "Ada, sm_89"),
    (Gpu::H100, "h100", "Hopper, sm_90"),
    (Gpu::H200, "h200", "Hopper, sm_90"),
    (Gpu::B200, "b200", "Blackwell, sm_100"),
    (Gpu::RtxPro6000, "rtxpro6000", "Blackwell, sm_120"),
    (Gpu::Mi100, "mi100", "AMD CDNA1, gfx908"),
    (Gpu::Mi210, "mi210", "AMD CDNA2, gfx90a"),
    (Gpu::Mi250, "mi250", "AMD CDNA2, gfx90a"),
    (Gpu::Mi300x, "mi300x", "AMD CDNA3, gfx942"),
    (Gpu::Mi300a, "mi300a", "AMD CDNA3, gfx942"),
];

impl Gpu {
    /// Every GPU, oldest first.
    pub fn all() -> impl Iterator<Item = Gpu> {
        GPUS.iter().map(|g| g.0)
    }

    /// Short name (`v100`, `t4`, `a100`, `a30`, `a2`, `l40s`, `rtx4090`, `l4`, `h100`,
    /// `h200`, `b200`, `rtxpro6000`, `mi100`, `mi210`, `mi250`, `mi300x`, `mi300a`).
    pub fn name(self) -> &'static str {
        GPUS.iter().find(|g| g.0 == self).map_or("?", |g| g.1)
    }

    /// The architecture and compute capability, e.g. `Hopper, sm_90`.
    pub fn architecture(self) -> &'static str {
        GPUS.iter().find(|g| g.0 == self).map_or("?", |g| g.2)
    }

    /// Looks a GPU up by name (case-insensitive; `rtx-4090` and `rtx_4090` read as
    /// `rtx4090`).
    pub fn by_name(name: &str) -> Option<Gpu> {
        let key: String = name
            .chars()
            .filter(|c| *c != '-' && *c != '_' && *c != ' ')
            .collect();
        GPUS.iter()
            .find(|g| g.1.eq_ignore_ascii_case(&key))
            .map(|g| g.0)
    }
}

impl std::fmt::Display for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A matrix instruction a program reaches the tensor cores through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instr {
    /// PTX `mma.sync` (warp-level MMA; every NVIDIA GPU since Volta).
    MmaSync,
    /// PTX `wmma` (warp-level fragments; the same hardware path as `mma.sync`, without FP8
    /// shapes).
    Wmma,
    /// PTX `wgmma` (Hopper's warpgroup MMA, sm_90a; what cuBLAS runs on Hopper).
    Wgmma,
    /// PTX `tcgen05.mma` (Blackwell's fifth-generation tensor-core MMA, sm_100a).
    Tcgen05,
    /// AMD `v_mfma` (CDNA matrix fused multiply-add).
    Mfma,
}

/// Each instruction's name (a new instruction is a variant and a line here).
const INSTRS: [(Instr, &str); 5] = [
    (Instr::MmaSync, "mma.sync"),
    (Instr::Wmma, "wmma"),
    (Instr::Wgmma, "wgmma"),
    (Instr::Tcgen05, "tcgen05"),
    (Instr::Mfma, "mfma"),
];

impl Instr {
    /// Every instruction.
    pub fn all() -> impl Iterator<Item = Instr> {
        INSTRS.iter().map(|i| i.0)
    }

    /// Short name (`mma.sync`, `wmma`, `wgmma`, `tcgen05`, `mfma`).
    pub fn name(self) -> &'static str {
        INSTRS.iter().find(|i| i.0 == self).map_or("?", |i| i.1)
    }

    /// Looks an instruction up by name (case-insensitive; `mma`, `mma_sync` and `mma-sync`
    /// read as `mma.sync`, `tcgen05.mma` as `tcgen05`).
    pub fn by_name(name: &str) -> Option<Instr> {
        let n = name.to_ascii_lowercase();
        let n = match n.as_str() {
            "mma" | "mma_sync" | "mma-sync" => "mma.sync",
            "tcgen05.mma" => "tcgen05",
            other => other,
        };
        INSTRS.iter().find(|i| i.1 == n).map(|i| i.0)
    }

    /// The instruction whose row stands for this one: `wmma` runs on the `mma.sync` hardware
    /// path (the published FP16, BF16 and TF32 sets were measured through `wmma`, the FP8 sets
    /// through `mma.sync`, and the same rules reproduce both), so it shares `mma.sync`'s rows.
    pub const fn row_instr(self) -> Instr {
        match self {
            Instr::Wmma => Instr::MmaSync,
            other => other,
        }
    }
}

impl std::fmt::Display for Instr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One row of the table: a GPU through an instruction runs a preset's rules (or, for
/// `preset: None`, the pair exists but nobody we know of has measured it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The GPU.
    pub gpu: Gpu,
    /// The instruction.
    pub instr: Instr,
    /// The preset whose rules the pair follows; `None`: not measured, so not modelled.
    pub preset: Option<Preset>,
    /// Whether this row is the pair the preset stands for when it is named alone.
    pub canonical: bool,
    /// Where the rule comes from: a measurement set, a published model, our own capture.
    pub evidence: &'static str,
}

/// A row (see [`Row`]).
const fn row(gpu: Gpu, instr: Instr, preset: Preset, evidence: &'static str) -> Row {
    Row {
        gpu,
        instr,
        preset: Some(preset),
        canonical: false,
        evidence,
    }
}

/// The row a preset stands for when it is named alone.
const fn canon(gpu: Gpu, instr: Instr, preset: Preset, evidence: &'static str) -> Row {
    Row {
        canonical: true,
        ..row(gpu, instr, preset, evidence)
    }
}

/// A pair that exists but has not been measured: an error, never a guess.
const fn unmeasured(gpu: Gpu, instr: Instr, evidence: &'static str) -> Row {
    Row {
        gpu,
        instr,
        preset: None,
        canonical: false,
        evidence,
    }
}

use Instr::{Mfma, MmaSync, Tcgen05, Wgmma};

/// Every modelled (GPU, instruction) pair, oldest GPU first; a GPU's first row is its default
/// instruction. A new pair is one line. "KM" is Khattak and Mikaitis, "Accurate Models of
/// NVIDIA Tensor Cores" (arXiv:2512.07004), whose measurement sets are published in
/// north-numerical-computing/MATLAB-tensor-core, `model_validation/`.
pub const ROWS: &[Row] = &[
    canon(Gpu::V100, MmaSync, Preset::Volta, "KM's V100 sets (model_validation/V100: FP16 through wmma) and V100 model: every row matches"),
    canon(Gpu::T4, MmaSync, Preset::Turing, "not measured bit for bit: Fasi, Higham, Mikaitis and Pranesh (PeerJ Computer Science, 2021) found the T4's FP16 tensor cores to behave as the V100's in every directed test"),
    canon(Gpu::A100, MmaSync, Preset::Ampere, "KM's A100 sets (model_validation/A100: FP16, BF16, TF32 through wmma) and A100 model: every row matches"),
    row(Gpu::A30, MmaSync, Preset::Ampere, "not measured itself: the A100's GA100 chip (NVIDIA A30 datasheet), so the A100 sets' rules"),
    row(Gpu::A2, MmaSync, Preset::Ampere, "KM's A2 sets (model_validation/A2: FP16, BF16, TF32 through wmma; FP32 and FP16 output): every row we replayed matches"),
    canon(Gpu::L40S, MmaSync, Preset::Ada, "KM's L40S and Ada sets (model_validation/L40S, model_validation/Ada: FP16, BF16, TF32 through wmma, FP8 through mma.sync m16n8k32): every row matches"),
    row(Gpu::Rtx4090, MmaSync, Preset::Ada, "not measured itself: an Ada part (AD102, sm_89) like the measured L40S, so the Ada sets' rules"),
    row(Gpu::L4, MmaSync, Preset::Ada, "not measured itself: an Ada part (AD104, sm_89) like the measured L40S, so the Ada sets' rules"),
    canon(Gpu::H100, Wgmma, Preset::Hopper, "Hopper's native FP8 arithmetic: KM's H100 sets (model_validation/H100, FP8 through mma.sync m16n8k32 under an older toolkit) and our cuBLAS FP8 capture on an H200 (wgmma; data/tensor-core-measurements/H200/cublas) all match hopper"),
    row(Gpu::H100, MmaSync, Preset::H200, "the code CUDA 13.0 emits for FP8 mma.sync on sm_90a (FP8-to-FP16 conversions, two HMMA.16816 steps, then C added), captured on an H200, the H100's chip (data/tensor-core-measurements/H200); KM's H100 FP8 sets, built with an older toolkit, show hopper instead"),
    row(Gpu::H200, Wgmma, Preset::Hopper, "our cuBLAS FP8 capture on an H200 (torch._scaled_mm, wgmma; data/tensor-core-measurements/H200/cublas) matches hopper on every row, as do KM's H200 FP8 sets (model_validation/H200, mma.sync under an older toolkit)"),
    canon(Gpu::H200, MmaSync, Preset::H200, "our capture on an H200 through mma.sync built with CUDA 13.0 (data/tensor-core-measurements/H200, 4,096 rows a set, C used): every row matches"),
    canon(Gpu::B200, MmaSync, Preset::Blackwell, "KM's B200 sets (model_validation/B200: FP16, BF16, TF32 through wmma, FP8 through mma.sync m16n8k32) and B200 model: every row matches"),
    unmeasured(Gpu::B200, Tcgen05, "no measurement of tcgen05.mma that we know of (the B200 sets were taken with mma.sync and wmma)"),
    row(Gpu::RtxPro6000, MmaSync, Preset::Blackwell, "not measured itself: KM's published RTX PRO 6000 model (models/RTXPRO6000TC.m) is the B200 model (it calls B200TC.m), so the B200's rules (sm_120 has no tcgen05)"),
    canon(Gpu::Mi100, Mfma, Preset::Cdna1, "KM's published MI100 model (models/MI100MC.m); no measurement set of it in this project"),
    row(Gpu::Mi210, Mfma, Preset::Cdna2, "KM's published MI210 model (models/MI210MC.m); no measurement set of it in this project"),
    canon(Gpu::Mi250, Mfma, Preset::Cdna2, "KM's published MI250 model (models/MI250MC.m, which calls MI210MC.m); no measurement set of it in this project"),
    canon(Gpu::Mi300x, Mfma, Preset::Cdna3, "KM's published MI300 model (models/MI300MC.m, called by MI300XMC.m); no measurement set of it in this project"),
    row(Gpu::Mi300a, Mfma, Preset::Cdna3, "KM's published MI300 model (models/MI300MC.m, called by MI300AMC.m); no measurement set of it in this project"),
];

/// The rule a run uses: the GPU, the instruction and the preset they select.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuRule {
    /// The GPU.
    pub gpu: Gpu,
    /// The instruction (as asked for: `wmma` stays `wmma`, though it shares `mma.sync`'s row).
    pub instr: Instr,
    /// The preset whose block-FMA rules apply.
    pub preset: Preset,
}

/// Why a GPU and an instruction select no preset.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GpuError {
    /// The pair is not in [`ROWS`].
    #[error(
        "{gpu} through {instr} is not modelled; the modelled pairs are {}",
        modelled()
    )]
    NotModelled {
        /// The GPU.
        gpu: Gpu,
        /// The instruction.
        instr: Instr,
    },
    /// The GPU has no row at all.
    #[error("{0} ({arch}) has no modelled instruction yet; the modelled pairs are {list}", arch = .0.architecture(), list = modelled())]
    NoRows(Gpu),
    /// The pair exists but has not been measured.
    #[error(
        "{gpu} through {instr} is not modelled: {why}; the modelled pairs are {}",
        modelled()
    )]
    Unmeasured {
        /// The GPU.
        gpu: Gpu,
        /// The instruction.
        instr: Instr,
        /// The row's evidence (what has and has not been measured).
        why: &'static str,
    },
    /// `wmma` has no FP8 shapes.
    #[error("wmma has no FP8 shapes (PTX wmma takes FP16, BF16, TF32, FP64 and integers): FP8 goes through mma.sync")]
    WmmaFp8,
}

/// The modelled pairs, as `v100 mma.sync (volta), ...`.
fn modelled() -> String {
    ROWS.iter()
        .filter_map(|r| {
            r.preset
                .map(|p| format!("{} {} ({})", r.gpu, r.instr, p.name()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl GpuRule {
    /// The rule of `gpu` through `instr`, or through the GPU's default instruction (its first
    /// row: `wgmma` on the H100 and H200, `mma.sync` elsewhere) when `instr` is `None`. `wmma`
    /// takes `mma.sync`'s row ([`Instr::row_instr`]). A pair with no row, or one not measured,
    /// is an error that lists the modelled pairs.
    pub fn resolve(gpu: Gpu, instr: Option<Instr>) -> Result<GpuRule, GpuError> {
        let found = match instr {
            Some(i) => ROWS
                .iter()
                .find(|r| r.gpu == gpu && r.instr == i.row_instr())
                .ok_or(GpuError::NotModelled { gpu, instr: i })?,
            None => ROWS
                .iter()
                .find(|r| r.gpu == gpu)
                .ok_or(GpuError::NoRows(gpu))?,
        };
        let instr = instr.unwrap_or(found.instr);
        match found.preset {
            Some(preset) => Ok(GpuRule { gpu, instr, preset }),
            None => Err(GpuError::Unmeasured {
                gpu,
                instr,
                why: found.evidence,
            }),
        }
    }

    /// The pair a preset stands for when it is named alone (its canonical row: `volta` is the
    /// V100, `ampere` the A100, `ada` the L40S, `hopper` the H100 through `wgmma`, `blackwell`
    /// the B200 through `mma.sync`, `h200` the H200 through `mma.sync` built with CUDA 13.0).
    /// `None` for a preset with no canonical row.
    pub fn of_preset(preset: Preset) -> Option<GpuRule> {
        ROWS.iter()
            .find(|r| r.canonical && r.preset == Some(preset))
            .map(|r| GpuRule {
                gpu: r.gpu,
                instr: r.instr,
                preset,
            })
    }

    /// The row this rule was taken from (for its evidence).
    pub fn row(&self) -> Option<&'static Row> {
        ROWS.iter()
            .find(|r| r.gpu == self.gpu && r.instr == self.instr.row_instr())
    }

    /// Refuses input formats the instruction has no shape for (FP8 through `wmma`).
    pub fn check_formats(&self, fmt_a: Format, fmt_b: Format) -> Result<(), GpuError> {
        let fp8 = |f: Format| f == E4M3 || f == E5M2;
        if self.instr == Instr::Wmma && (fp8(fmt_a) || fp8(fmt_b)) {
            return Err(GpuError::WmmaFp8);
        }
        Ok(())
    }
}

impl std::fmt::Display for GpuRule {
    /// `h200 (h100 through mma.sync)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({} through {})", self.preset, self.gpu, self.instr)
    }
}
