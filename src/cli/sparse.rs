//! `tcrtl sparse`: 2:4 compression and validation helpers, and the sparse parts of
//! `tcrtl gemm --sparse` (its input flags, reference check and report).
//!
//! Matrices are 2-D `.npy` files. A matrix of format F is read from unsigned integers of F's
//! width (bit patterns: `uint8` for e4m3/e5m2, `uint16` for fp16/bf16), from `float16` for
//! fp16 (bit patterns), or from any float dtype whose every value is exactly representable in
//! F. Kept values are written as `float16` for fp16 and as `uint8`/`uint16` bit patterns
//! otherwise; metadata as `uint8`, one nibble per byte, `M x K/4`.

use super::values;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use tensorcore_rtl::gemm::mx_input::Codes;
use tensorcore_rtl::hw::Dataflow;
use tensorcore_rtl::io::npy::{read_npy, shape_text, write_npy, Dtype, NpyArray};
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::job::report::SparseReport;
use tensorcore_rtl::numerics::format::{Format, FP16};
use tensorcore_rtl::sparse::input::{
    self, CompressedInput, CompressedInputError, CompressedOperand,
};
use tensorcore_rtl::sparse::{compress, overfull_groups, Compressed, Prune, SparseError};
use tensorcore_rtl::verify::measurements::encode_exact;

/// Arguments of `tcrtl sparse`.
#[derive(Args, Debug)]
pub struct SparseArgs {
    #[command(subcommand)]
    what: SparseCommand,
}

#[derive(Subcommand, Debug)]
enum SparseCommand {
    /// Compresses a dense A (M x K, K a multiple of 4) into kept values (M x K/2) and
    /// metadata nibbles (M x K/4, uint8).
    Compress(CompressArgs),
    /// Validates a compressed A: shapes, value bit patterns and every metadata nibble.
    Check(CheckArgs),
}

/// The 2:4 input flags of `tcrtl gemm --sparse` (flattened into its arguments).
#[derive(Args, Debug)]
pub struct CompressedA {
    /// With --sparse and a dense --a: keep the two largest magnitudes of a group with more
    /// than two nonzeros (ties to the lower index) instead of failing.
    #[arg(long, requires = "sparse")]
    pub prune: bool,
    /// With --sparse: a pre-compressed A, its kept values (M x K/2).
    #[arg(long, requires_all = ["a_meta", "sparse"], conflicts_with_all = ["a", "m"])]
    pub a_values: Option<PathBuf>,
    /// With --sparse: a pre-compressed A, its metadata (M x K/4 uint8 nibbles).
    #[arg(long, requires = "a_values")]
    pub a_meta: Option<PathBuf>,
}

/// Arguments of `tcrtl sparse compress`.
#[derive(Args, Debug)]
pub struct CompressArgs {
    /// The dense A, M x K.
    #[arg(long)]
    a: PathBuf,
    /// Format of A: e4m3, e5m2, fp16, bf16.
    #[arg(long)]
    format: String,
    /// Keep the two largest magnitudes of a group with more than two nonzeros (ties to the
    /// lower index) instead of failing.
    #[arg(long)]
    prune: bool,
    /// Where to write the kept values (M x K/2).
    #[arg(long)]
    values: PathBuf,
    /// Where to write the metadata (M x K/4, uint8).
    #[arg(long)]
    meta: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Arguments of `tcrtl sparse check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The kept values, M x K/2.
    #[arg(long)]
    a_values: PathBuf,
    /// The metadata, M x K/4 uint8 nibbles.
    #[arg(long)]
    a_meta: PathBuf,
    /// Format of the values: e4m3, e5m2, fp16, bf16.
    #[arg(long)]
    format: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `tcrtl sparse ...`.
pub fn run(args: &SparseArgs) -> Result<i32, String> {
    match &args.what {
        SparseCommand::Compress(a) => run_compress(a),
        SparseCommand::Check(a) => run_check(a),
    }
}

fn read_2d(path: &Path) -> Result<NpyArray, String> {
    let arr = read_npy(path).map_err(|e| e.to_string())?;
    if arr.shape.len() != 2 {
        return Err(format!(
            "{}: expected a 2-D array, found shape {}",
            path.display(),
            shape_text(&arr.shape)
        ));
    }
    if arr.shape.contains(&0) {
        // An empty matrix is an input error (exit 2), not a failed check.
        return Err(format!(
            "{}: empty matrix of shape {:?}",
            path.display(),
            arr.shape
        ));
    }
    Ok(arr)
}

/// Reads a 2-D matrix of `fmt` bit patterns (see the module documentation for the dtypes).
pub fn read_matrix(path: &Path, fmt: Format) -> Result<(usize, usize, Vec<u64>), String> {
    let arr = read_2d(path)?;
    let (rows, cols) = (arr.shape[0], arr.shape[1]);
    let bits_width = match arr.dtype {
        Dtype::U8 => Some(8),
        Dtype::U16 => Some(16),
        Dtype::U32 => Some(32),
        Dtype::F16 if fmt == FP16 => Some(16),
        _ => None,
    };
    let words = match bits_width {
        Some(w) if w == fmt.width() => arr.words(),
        Some(w) if arr.dtype != Dtype::F16 => {
            return Err(format!(
                "{}: {} holds {w}-bit patterns, but {fmt} is {} bits wide",
                path.display(),
                arr.dtype.numpy_name(),
                fmt.width()
            ))
        }
        _ => {
            let mut out = Vec::with_capacity(arr.len());
            for i in 0..arr.len() {
                let v = arr.value_f64(i);
                out.push(encode_exact(fmt, v).ok_or_else(|| {
                    format!(
                        "{}: element [{}][{}] = {v} is not exactly representable in {fmt}",
                        path.display(),
                        i / cols.max(1),
                        i % cols.max(1)
                    )
                })?);
            }
            out
        }
    };
    Ok((rows, cols, words))
}

fn values_dtype(fmt: Format) -> Dtype {
    if fmt == FP16 {
        Dtype::F16
    } else if fmt.width() == 8 {
        Dtype::U8
    } else {
        Dtype::U16
    }
}

fn run_compress(args: &CompressArgs) -> Result<i32, String> {
    let fmt = values::input_format(&args.format)?;
    let mut plan = OutputPlan::new();
    plan.add("--values", &args.values)?;
    plan.add("--meta", &args.meta)?;
    if plan.contains(&args.a) {
        return Err(format!(
            "--a {} is also an output of this run",
            args.a.display()
        ));
    }
    let (m, k, a) = read_matrix(&args.a, fmt)?;
    let prune = if args.prune {
        Prune::KeepLargest
    } else {
        Prune::Off
    };
    let c = compress(fmt, m, k, &a, prune).map_err(|e| e.to_string())?;
    let pruned = if args.prune {
        overfull_groups(fmt, k, &a)
    } else {
        0
    };
    write_npy(&args.values, &[m, k / 2], values_dtype(fmt), c.values())
        .map_err(|e| e.to_string())?;
    let meta: Vec<u64> = c.meta().iter().map(|&n| n as u64).collect();
    write_npy(&args.meta, &[m, k / 4], Dtype::U8, &meta).map_err(|e| e.to_string())?;
    if args.json {
        let obj = serde_json::json!({
            "m": m,
            "k": k,
            "format": fmt.name,
            "groups": m * k / 4,
            "pruned_groups": pruned,
            "values": args.values.display().to_string(),
            "meta": args.meta.display().to_string(),
        });
        outln!("{obj}");
    } else {
        outln!(
            "compressed {m} x {k} {fmt} A: {m} x {} values -> {}, {m} x {} metadata -> {}",
            k / 2,
            args.values.display(),
            k / 4,
            args.meta.display()
        );
        if args.prune {
            outln!("pruned groups: {pruned} of {}", m * k / 4);
        }
    }
    Ok(0)
}

fn run_check(args: &CheckArgs) -> Result<i32, String> {
    let fmt = values::input_format(&args.format)?;
    match read_compressed(&args.a_values, &args.a_meta, fmt)? {
        Ok(a) => {
            let (m, kept, groups) = (a.m(), a.kept(), a.groups());
            if args.json {
                let obj = serde_json::json!({
                    "valid": true, "m": m, "k": 2 * kept, "format": fmt.name, "groups": m * groups,
                });
                outln!("{obj}");
            } else {
                outln!(
                    "valid: {m} x {} {fmt} A as {m} x {kept} values and {} metadata nibbles",
                    2 * kept,
                    m * groups
                );
            }
            Ok(0)
        }
        Err(e) => {
            if args.json {
                let obj = serde_json::json!({ "valid": false, "error": e.to_string() });
                outln!("{obj}");
            }
            super::out::error(&e.to_string());
            Ok(1)
        }
    }
}

/// Reads a compressed A (kept values and metadata files) into the library's input, before
/// its checks: the values as bit patterns of `fmt`, the metadata's dtype checked (a message
/// about one file starts with it).
pub fn read_compressed_input(
    values: &Path,
    meta: &Path,
    fmt: Format,
) -> Result<CompressedInput, String> {
    let (m, kept, v) = read_matrix(values, fmt)?;
    let meta_arr = read_2d(meta)?;
    input::meta_dtype(meta_arr.dtype.numpy_name())
        .map_err(|e| format!("{}: {e}", meta.display()))?;
    let md: Vec<u8> = meta_arr.iter_words().map(|w| w as u8).collect();
    Ok(CompressedInput {
        fmt,
        values: Codes {
            rows: m,
            cols: kept,
            codes: v,
        },
        meta_shape: (meta_arr.shape[0], meta_arr.shape[1]),
        meta: md,
    })
}

/// Reads and checks a compressed A from its two files: the outer error is unreadable input
/// (files, dtypes, shapes), the inner one a pair that fails validation. The checks are the
/// library's (`sparse::input`, which the Python package calls too); a message about one
/// matrix starts with its file.
pub fn read_compressed(
    values: &Path,
    meta: &Path,
    fmt: Format,
) -> Result<Result<Compressed, SparseError>, String> {
    let named = |e: CompressedInputError| match e.operand {
        Some(CompressedOperand::Values) => format!("{}: {e}", values.display()),
        Some(CompressedOperand::Meta) => format!("{}: {e}", meta.display()),
        None => e.to_string(),
    };
    read_compressed_input(values, meta, fmt)?
        .build()
        .map_err(named)
}

/// The sparse line of `tcrtl gemm --sparse` (text output).
pub fn sparse_line(s: &SparseReport, dataflow: Dataflow, cycles: u64) -> String {
    let (unit, phase) = match dataflow {
        Dataflow::Os => ("steps a tile", "compute phase"),
        Dataflow::Ws | Dataflow::Is => ("folds of K", "rows fed"),
    };
    format!(
        "2:4 sparse: {} {unit} (dense {}); {phase} {} cycles vs dense {} ({:.3}x); \
         total {} cycles vs dense {} ({:.3}x, dense from the schedule formula)",
        s.steps_per_tile,
        s.dense_steps_per_tile,
        s.compute_cycles,
        s.dense_compute_cycles,
        s.compute_ratio,
        cycles,
        s.dense_cycles,
        s.cycles_ratio
    )
}
