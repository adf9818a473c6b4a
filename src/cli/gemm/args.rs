//! The options of `tcrtl gemm` (one struct, read by every mode's runner).

use crate::cli::array::ArrayArgs;
use crate::cli::energy::EnergyArgs;
use crate::cli::memory::{MemArgs, MemoryPath};
use crate::cli::pattern::Pattern;
use crate::cli::sparse::CompressedA;
use crate::cli::values;
use clap::{ArgGroup, Args};
use std::path::PathBuf;

/// `--acc` of `tcrtl gemm`: the modes the clocked tensor core runs (no `exact`).
const ACC_HELP: &str = "Accumulation mode: ieee (default), fused, nvidia (needs --preset or --gpu)";

/// Arguments of `tcrtl gemm`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("input").required(true).args(["a", "m", "a_values"])))]
#[command(mut_arg("acc", |a| a.help(ACC_HELP)))]
pub struct GemmArgs {
    /// A (M x K) as .npy: uint8 (FP8), uint16 (FP16/BF16) or uint32 (TF32 containers, low 13
    /// bits zero) bit patterns, or float16/32/64 values exactly representable in the format;
    /// int8 (s8, s4) or uint8 (u8, u4) values for integer formats. A `.txt` or `.hex` file is
    /// a text matrix (floating-point formats): one row a line, elements as hex bit patterns
    /// (0x3c00) or exact decimals.
    #[arg(long, requires = "b")]
    pub a: Option<PathBuf>,
    /// B (K x N) as .npy, like A.
    #[arg(long, conflicts_with = "m")]
    pub b: Option<PathBuf>,
    /// C (M x N) as .npy: float32 values or uint32 FP32 bit patterns; with --out-format fp16,
    /// float16 values or uint16 FP16 bit patterns; int32 for integer formats (default:
    /// zeros); or a text matrix (.txt, .hex) of values or patterns in the output format.
    #[arg(long, conflicts_with = "m")]
    pub c: Option<PathBuf>,
    /// Rows of a random problem (with --n, --k, --seed).
    #[arg(long, requires_all = ["n", "k"], conflicts_with = "a")]
    pub m: Option<usize>,
    /// Columns of a random problem.
    #[arg(long, requires = "m")]
    pub n: Option<usize>,
    /// Inner dimension of a random problem.
    #[arg(long, requires = "m")]
    pub k: Option<usize>,
    /// Seed of the random problem (the same seed gives the same operands everywhere).
    #[arg(long, default_value_t = 1, requires = "m")]
    pub seed: u64,
    /// Operands of a generated problem (with --m, --n, --k): random (seeded, the default),
    /// ones (D = K everywhere), iota (A and B count 1..8 row-major), identity (A = I, B
    /// counting, so D repeats B); C is zero except for random.
    #[arg(long, value_enum, default_value_t = Pattern::Random, requires = "m", conflicts_with = "sparse")]
    pub pattern: Pattern,
    #[command(flatten)]
    pub arith: values::ArithArgs,
    /// Products per PE step w: 1, 2, 4, 8, 16 or 32.
    #[arg(long, default_value_t = 1)]
    pub width: usize,
    #[command(flatten)]
    pub array: ArrayArgs,
    /// Write D (M x N float32; with --out-format fp16, uint16 FP16 bit patterns; int32 for
    /// integer formats) here, atomically.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The accumulator format: fp32 (default) or fp16 (C and D are FP16; the PE accumulator
    /// registers are 16 bits wide; with --memory tma, C and D move 2 bytes an element; --memh
    /// writes 16-bit C and D words).
    #[arg(long, default_value = "fp32")]
    pub out_format: String,
    /// Check D against the independent reference also for .npy inputs (random inputs are
    /// always checked).
    #[arg(long)]
    pub check: bool,
    /// Also write A, B, C and D as `$readmemh` images (`a.hex`, `b.hex`, `c.hex`, `d.hex`,
    /// one word a line, row-major) into this existing directory, for a Verilog testbench.
    #[arg(long)]
    pub memh: Option<PathBuf>,
    #[command(flatten)]
    pub trace: values::TraceArgs,
    #[command(flatten)]
    pub energy: EnergyArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// 2:4 structured sparsity: A must hold at most two nonzeros per group of four along K
    /// (checked; see --prune), or comes compressed (--a-values, --a-meta); a random problem
    /// draws valid nibbles. Runs on the core in sparse mode (half the compute steps).
    #[arg(long)]
    pub sparse: bool,
    #[command(flatten)]
    pub sparse_a: CompressedA,
    /// Where the operands come from: `ideal` (a zero-latency store) or `tma` (global memory,
    /// TMA loads into shared-memory stages, TMA store of D; docs/memory.md).
    #[arg(long, value_enum, default_value = "ideal")]
    pub memory: MemoryPath,
    #[command(flatten)]
    pub mem: MemArgs,
    /// Operand stages in shared memory with --memory tma (default: enough to cover the
    /// latency at the bandwidth, at most 48).
    #[arg(long, value_name = "N")]
    pub stages: Option<usize>,
    /// Integer formats only: clamp each PE step's exact sum to the int32 range (PTX
    /// `.satfinite`) instead of wrapping.
    #[arg(long)]
    pub satfinite: bool,
    /// Lay the operand tiles out unswizzled in shared memory (--memory tma), to see the bank
    /// conflicts the 128B swizzle avoids.
    #[arg(long)]
    pub no_swizzle: bool,
    /// Block scales of A for a block-scaled --format: uint8 .npy, M x K/32 E8M0 codes (one
    /// per 32 elements of a row of A; nvfp4: M x K/16 unsigned E4M3 codes).
    #[arg(long, value_name = "SA.npy")]
    pub a_scales: Option<PathBuf>,
    /// Block scales of B for a block-scaled --format: uint8 .npy, K/32 x N E8M0 codes (one
    /// per 32 elements of a column of B; nvfp4: K/16 x N unsigned E4M3 codes).
    #[arg(long, value_name = "SB.npy")]
    pub b_scales: Option<PathBuf>,
    /// nvfp4: A's FP32 tensor scale (a value or 0x pattern; default none, i.e. 1).
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    pub a_tensor_scale: Option<String>,
    /// nvfp4: B's FP32 tensor scale (a value or 0x pattern; default none, i.e. 1).
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    pub b_tensor_scale: Option<String>,
    /// Promote to FP32 every N products along K (docs/numerics.md, "FP32 promotion"): the
    /// core computes each K-chunk of N from a zero accumulator and an FP32 adder outside it
    /// adds the chunk results into D (from C), rounding to nearest even. FP32 output only;
    /// nvidia needs N a multiple of the preset's block.
    #[arg(long, value_name = "N")]
    pub promote_every: Option<usize>,
}
