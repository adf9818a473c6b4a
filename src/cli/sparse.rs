//! `tcrtl sparse`: 2:4 compression and validation helpers.
//!
//! Matrices are 2-D `.npy` files. A matrix of format F is read from unsigned integers of F's
//! width (bit patterns: `uint8` for e4m3/e5m2, `uint16` for fp16/bf16), from `float16` for
//! fp16 (bit patterns), or from any float dtype whose every value is exactly representable in
//! F. Kept values are written as `float16` for fp16 and as `uint8`/`uint16` bit patterns
//! otherwise; metadata as `uint8`, one nibble per byte, `M x K/4`.

use super::values;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use tensorcore_rtl::gemm::GemmConfig;
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype, NpyArray};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, FP16, FP32};
use tensorcore_rtl::sparse::{
    compress, overfull_groups, run_functional_sparse, Compressed, Prune, SparseError, SparseGemm,
};
use tensorcore_rtl::verify::measurements::encode_exact;
use tensorcore_rtl::verify::sparse::{sparse_reference, SparseOperands, SparseRef};

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
    /// D = A x B + C with a 2:4-sparse A through the sparse functional model (no clock).
    Gemm(GemmArgs),
}

/// Arguments of `tcrtl sparse gemm`.
#[derive(Args, Debug)]
pub struct GemmArgs {
    /// A dense A (M x K), compressed first (an A that violates 2:4 is an error unless
    /// --prune).
    #[arg(long, conflicts_with_all = ["a_values", "a_meta"])]
    a: Option<PathBuf>,
    /// Keep the two largest magnitudes of a group with more than two nonzeros.
    #[arg(long, requires = "a")]
    prune: bool,
    /// A pre-compressed A: kept values (M x K/2).
    #[arg(long, requires = "a_meta")]
    a_values: Option<PathBuf>,
    /// A pre-compressed A: metadata (M x K/4, uint8).
    #[arg(long, requires = "a_values")]
    a_meta: Option<PathBuf>,
    /// B, K x N.
    #[arg(long)]
    b: PathBuf,
    /// C, M x N FP32 (float32 values or uint32 bits; default zeros).
    #[arg(long)]
    c: Option<PathBuf>,
    /// Format of A (and of B unless --format-b): e4m3, e5m2, fp16, bf16.
    #[arg(long)]
    format: String,
    /// Format of B, if it differs from A's.
    #[arg(long)]
    format_b: Option<String>,
    /// Accumulation mode: ieee (default), fused, exact, nvidia (needs --preset).
    #[arg(long, default_value = "ieee")]
    acc: String,
    /// GPU preset for --acc nvidia: volta, ampere, hopper, blackwell.
    #[arg(long)]
    preset: Option<String>,
    /// Kept products per PE step (1, 2, 4, 8, 16, 32).
    #[arg(long, default_value_t = 1)]
    width: usize,
    /// Where to write D (M x N float32).
    #[arg(long)]
    d: Option<PathBuf>,
    /// Compare D with the independent reference (ieee, fused, exact); exit 1 on a mismatch.
    #[arg(long)]
    check: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
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
        SparseCommand::Gemm(a) => run_gemm(a),
    }
}

fn input_format(name: &str) -> Result<Format, String> {
    let f = values::format(name)?;
    if f.width() > 16 {
        return Err(format!(
            "{f} is not a tensor-core input format (e4m3, e5m2, fp16, bf16)"
        ));
    }
    Ok(f)
}

fn read_2d(path: &Path) -> Result<NpyArray, String> {
    let arr = read_npy(path).map_err(|e| e.to_string())?;
    if arr.shape.len() != 2 {
        return Err(format!(
            "{}: expected a 2-D array, found shape {:?}",
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
        Some(w) if w == fmt.width() => arr.words,
        Some(w) if arr.dtype != Dtype::F16 => {
            return Err(format!(
                "{}: {} holds {w}-bit patterns, but {fmt} is {} bits wide",
                path.display(),
                arr.dtype.numpy_name(),
                fmt.width()
            ))
        }
        _ => {
            let mut out = Vec::with_capacity(arr.words.len());
            for i in 0..arr.words.len() {
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
    let fmt = input_format(&args.format)?;
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
        println!("{obj}");
    } else {
        println!(
            "compressed {m} x {k} {fmt} A: {m} x {} values -> {}, {m} x {} metadata -> {}",
            k / 2,
            args.values.display(),
            k / 4,
            args.meta.display()
        );
        if args.prune {
            println!("pruned groups: {pruned} of {}", m * k / 4);
        }
    }
    Ok(0)
}

fn run_check(args: &CheckArgs) -> Result<i32, String> {
    let fmt = input_format(&args.format)?;
    match read_compressed(&args.a_values, &args.a_meta, fmt)? {
        Ok(a) => {
            let (m, kept, groups) = (a.m(), a.kept(), a.groups());
            if args.json {
                let obj = serde_json::json!({
                    "valid": true, "m": m, "k": 2 * kept, "format": fmt.name, "groups": m * groups,
                });
                println!("{obj}");
            } else {
                println!(
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
                println!("{obj}");
            }
            eprintln!("error: {e}");
            Ok(1)
        }
    }
}

fn acc_mode(acc: &str, preset: Option<&str>, fa: Format, fb: Format) -> Result<AccMode, String> {
    let preset = match preset {
        Some(p) => Some(Preset::by_name(p).ok_or_else(|| {
            format!("unknown preset {p:?} (expected volta, ampere, hopper or blackwell)")
        })?),
        None => None,
    };
    match (acc.to_ascii_lowercase().as_str(), preset) {
        ("nvidia", Some(p)) => Ok(AccMode::Nvidia(
            p.params(fa, fb).map_err(|e| e.to_string())?,
        )),
        ("nvidia", None) => Err("--acc nvidia needs --preset".into()),
        (_, Some(_)) => Err("--preset only applies to --acc nvidia".into()),
        ("ieee", None) => Ok(AccMode::Ieee),
        ("fused", None) => Ok(AccMode::Fused),
        ("exact", None) => Ok(AccMode::Exact),
        (other, None) => Err(format!(
            "unknown accumulation mode {other:?} (expected ieee, fused, exact or nvidia)"
        )),
    }
}

/// Reads a compressed A from its two files: the outer error is unreadable input (files,
/// dtypes, shapes), the inner one a pair that fails validation.
fn read_compressed(
    values: &Path,
    meta: &Path,
    fmt: Format,
) -> Result<Result<Compressed, SparseError>, String> {
    let (m, kept, v) = read_matrix(values, fmt)?;
    let meta_arr = read_2d(meta)?;
    if meta_arr.dtype != Dtype::U8 {
        return Err(format!(
            "{}: metadata must be uint8 (one nibble per byte), found {}",
            meta.display(),
            meta_arr.dtype.numpy_name()
        ));
    }
    let (mm, groups) = (meta_arr.shape[0], meta_arr.shape[1]);
    if mm != m || 2 * groups != kept {
        return Err(format!(
            "metadata is {mm} x {groups} but values are {m} x {kept}; expected {m} x {}",
            kept / 2
        ));
    }
    let md: Vec<u8> = meta_arr.words.iter().map(|&w| w as u8).collect();
    Ok(Compressed::new(fmt, m, 2 * kept, v, md))
}

fn run_gemm(args: &GemmArgs) -> Result<i32, String> {
    let fa = input_format(&args.format)?;
    let fb = match &args.format_b {
        Some(name) => input_format(name)?,
        None => fa,
    };
    let mode = acc_mode(&args.acc, args.preset.as_deref(), fa, fb)?;
    let a = match (&args.a, &args.a_values, &args.a_meta) {
        (Some(path), None, None) => {
            let (m, k, dense) = read_matrix(path, fa)?;
            let prune = if args.prune {
                Prune::KeepLargest
            } else {
                Prune::Off
            };
            compress(fa, m, k, &dense, prune).map_err(|e| e.to_string())?
        }
        (None, Some(v), Some(md)) => read_compressed(v, md, fa)?.map_err(|e| e.to_string())?,
        _ => return Err("give either --a or both --a-values and --a-meta".into()),
    };
    let (b_rows, n, b) = read_matrix(&args.b, fb)?;
    if b_rows != a.k() {
        return Err(format!(
            "B has {b_rows} rows but A has K = {} columns",
            a.k()
        ));
    }
    let c = match &args.c {
        Some(path) => {
            let (cm, cn, c) = read_matrix(path, FP32)?;
            if (cm, cn) != (a.m(), n) {
                return Err(format!("C is {cm} x {cn} but D is {} x {n}", a.m()));
            }
            c.into_iter().map(|w| w as u32).collect()
        }
        None => vec![0; a.m() * n],
    };
    let cfg = GemmConfig {
        fmt_a: fa,
        fmt_b: fb,
        mode,
        width: args.width,
    };
    let g = SparseGemm::new(cfg, a, n, b, c).map_err(|e| e.to_string())?;
    let out = run_functional_sparse(&g).map_err(|e| e.to_string())?;
    if let Some(path) = &args.d {
        let words: Vec<u64> = out.d.iter().map(|&w| w as u64).collect();
        write_npy(path, &[g.m, g.n], Dtype::F32, &words).map_err(|e| e.to_string())?;
    }
    let reference = match (args.check, mode) {
        (false, _) => None,
        (true, AccMode::Ieee) => Some(SparseRef::Ieee),
        (true, AccMode::Fused) => Some(SparseRef::Fused { width: args.width }),
        (true, AccMode::Exact) => Some(SparseRef::Exact),
        (true, AccMode::Nvidia(_)) => return Err("--check needs --acc ieee, fused or exact".into()),
    };
    let mismatches = reference.map(|how| {
        let ops = SparseOperands {
            m: g.m,
            n: g.n,
            k: g.k,
            fmt_a: fa,
            fmt_b: fb,
            values: g.a.values(),
            meta: g.a.meta(),
            b: &g.b,
            c: &g.c,
        };
        let want = sparse_reference(&ops, how);
        want.iter().zip(&out.d).filter(|(w, d)| w != d).count()
    });
    if args.json {
        let obj = serde_json::json!({
            "sparse": true,
            "m": g.m, "n": g.n, "k": g.k,
            "format_a": fa.name, "format_b": fb.name,
            "acc": mode.name(), "preset": args.preset, "width": args.width,
            "macs": g.macs(),
            "flags": out.flags.names(),
            "reference_mismatches": mismatches,
        });
        println!("{obj}");
    } else {
        println!(
            "sparse {} x {} x {} {fa} x {fb}, {} w={}: {} kept MACs, flags {}",
            g.m,
            g.n,
            g.k,
            mode.name(),
            args.width,
            g.macs(),
            out.flags
        );
        if let Some(bad) = mismatches {
            println!("reference: {bad} of {} elements differ", g.m * g.n);
        }
        if let Some(path) = &args.d {
            println!("D -> {}", path.display());
        }
    }
    Ok(if mismatches.unwrap_or(0) > 0 { 1 } else { 0 })
}
