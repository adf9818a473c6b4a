//! `tcrtl dot` in batch: `--a A.npy --b B.npy --c C.npy [--out D.npy]` computes one dot
//! product per row of A and B (rows x K raw bit patterns: uint8 for FP8, uint16 for FP16 and
//! BF16, uint32 FP32 containers with the low 13 bits zero for TF32) with that row's
//! accumulator from C, in parallel, and writes D, one per row. FP32
//! accumulation (the default): C as uint32 bit patterns or float32, D as uint32 FP32 bit
//! patterns. `--out-format fp16`: C as uint16 FP16 bit patterns or float16, D as uint16 FP16
//! bit patterns.

use crate::cli::operand_files::{load_row_c, rows_by_k};
use std::path::Path;
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};
use tensorcore_rtl::numerics::dot::batch::tf32_patterns;
use tensorcore_rtl::numerics::dot::{dot_batch_acc, AccMode, Preset, MAX_LANES};
use tensorcore_rtl::numerics::format::{Format, FP16, TF32};
use tensorcore_rtl::numerics::RoundingMode;

/// What one batch run computes.
pub struct BatchJob<'a> {
    /// Format of A.
    pub fmt_a: Format,
    /// Format of B.
    pub fmt_b: Format,
    /// Accumulation mode (for nvidia, the preset's parameters for `acc`).
    pub mode: AccMode,
    /// The accumulator format: FP32 or FP16.
    pub acc: Format,
    /// The preset, for nvidia.
    pub preset: Option<Preset>,
    /// The GPU and instruction whose rule nvidia runs.
    pub rule: Option<tensorcore_rtl::numerics::dot::GpuRule>,
    /// Rounding of ieee, fused and exact.
    pub rm: RoundingMode,
    /// `--width`, if given.
    pub width: Option<usize>,
    /// A's file.
    pub a: &'a Path,
    /// B's file.
    pub b: &'a Path,
    /// C's file.
    pub c: &'a Path,
    /// Where D goes, if anywhere.
    pub out: Option<&'a Path>,
    /// Print a JSON summary.
    pub json: bool,
}

/// Reads an A or B matrix of raw bit patterns of `fmt`: (rows, K, words). TF32 comes as
/// uint32 FP32 containers, returned as 19-bit TF32 patterns.
pub(super) fn load_bits(
    path: &Path,
    name: &str,
    fmt: Format,
) -> Result<(usize, usize, Vec<u64>), String> {
    let arr = read_npy(path).map_err(|e| e.to_string())?;
    let (rows, k) = rows_by_k(path, name, &arr.shape)?;
    let (want, what) = if fmt == TF32 {
        (
            Dtype::U32,
            "values are uint32 FP32 words whose low 13 bits are zero",
        )
    } else if fmt.width() == 8 {
        (Dtype::U8, "bit patterns are uint8")
    } else {
        (Dtype::U16, "bit patterns are uint16")
    };
    if arr.dtype != want {
        return Err(format!(
            "{}: {name} has dtype {}; {fmt} {what}",
            path.display(),
            arr.dtype.numpy_name(),
        ));
    }
    let words = arr.words();
    if fmt == TF32 {
        let bits =
            tf32_patterns(&words, k).map_err(|e| format!("{}: {name} {e}", path.display()))?;
        return Ok((rows, k, bits));
    }
    Ok((rows, k, words))
}

/// Reads C: one accumulator per row, FP32 (uint32 bit patterns or float32) or FP16 (uint16
/// bit patterns or float16, whose words are the FP16 patterns).
pub(super) fn load_c(path: &Path, rows: usize, acc: Format) -> Result<Vec<u32>, String> {
    let words = if acc == FP16 {
        load_row_c(
            path,
            rows,
            &[Dtype::U16, Dtype::F16],
            "uint16 (FP16 bit patterns) or float16 for --out-format fp16",
        )?
    } else {
        load_row_c(
            path,
            rows,
            &[Dtype::U32, Dtype::F32],
            "uint32 (FP32 bit patterns) or float32",
        )?
    };
    Ok(words.iter().map(|&w| w as u32).collect())
}

/// Runs a batch.
pub fn run(job: &BatchJob) -> Result<i32, String> {
    let (rows, k, a) = load_bits(job.a, "A", job.fmt_a)?;
    let (rows_b, k_b, b) = load_bits(job.b, "B", job.fmt_b)?;
    if (rows, k) != (rows_b, k_b) {
        return Err(format!(
            "A is {rows} x {k} but B is {rows_b} x {k_b} (they must match)"
        ));
    }
    let c = load_c(job.c, rows, job.acc)?;
    let width = job.width.unwrap_or(k.clamp(1, MAX_LANES));
    let start = std::time::Instant::now();
    let r = dot_batch_acc(
        &job.mode, job.rm, job.acc, job.fmt_a, job.fmt_b, &a, &b, &c, k, width,
    )
    .map_err(|e| e.to_string())?;
    let seconds = start.elapsed().as_secs_f64();
    if let Some(out) = job.out {
        let words: Vec<u64> = r.d.iter().map(|&w| w as u64).collect();
        let dtype = if job.acc == FP16 {
            Dtype::U16
        } else {
            Dtype::U32
        };
        write_npy(out, &[rows], dtype, &words).map_err(|e| e.to_string())?;
    }
    let rate = if seconds > 0.0 {
        rows as f64 / seconds
    } else {
        0.0
    };
    let f = r.flags;
    if job.json {
        let mut obj = serde_json::json!({
            "rows": rows,
            "k": k,
            "seconds": seconds,
            "rows_per_second": rate,
            "flags": {
                "invalid": f.invalid,
                "overflow": f.overflow,
                "underflow": f.underflow,
                "inexact": f.inexact,
            },
            "acc": job.mode.name(),
            "preset": job.preset.map(|p| p.name()),
            "rounding": super::result::rounding_label(&job.mode, job.rm),
            "format_a": job.fmt_a.name,
            "format_b": job.fmt_b.name,
            "out_format": job.acc.name,
            "threads": rayon::current_num_threads(),
            "out": job.out.map(|p| p.display().to_string()),
        });
        crate::cli::values::add_rule_keys(&mut obj, job.rule);
        outln!("{obj}");
    } else {
        outln!("rows:  {rows} (K = {k})");
        outln!(
            "time:  {seconds:.3} s ({:.2} M rows/s, {} threads)",
            rate / 1e6,
            rayon::current_num_threads()
        );
        outln!(
            "flags: invalid {}, overflow {}, underflow {}, inexact {} (rows)",
            f.invalid,
            f.overflow,
            f.underflow,
            f.inexact
        );
        if let Some(out) = job.out {
            outln!("D:     {}", out.display());
        }
        crate::cli::values::print_rule(job.rule)?;
    }
    Ok(0)
}
