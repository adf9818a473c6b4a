//! `tcrtl dot` with integer formats (`--format s8|u8|s4|u4`): one int32 dot product from
//! listed operands, or a batch from .npy files (A and B rows x K as int8 for s8/s4 or uint8
//! for u8/u4, C int32 with one value per row, D written as int32).

use crate::cli::operand_files::{is_npy, load_int_matrix, load_row_c};
use crate::cli::values;
use std::path::Path;
use tensorcore_rtl::io::npy::{write_npy, Dtype};
use tensorcore_rtl::numerics::dot::MAX_LANES;
use tensorcore_rtl::numerics::int::{dot_int, IntDotResult, IntFormat, IntOverflow, S32};

/// What one integer `dot` run computes.
pub struct IntJob<'a> {
    /// Format of A.
    pub fa: IntFormat,
    /// Format of B.
    pub fb: IntFormat,
    /// Wrap or clamp.
    pub overflow: IntOverflow,
    /// `--width`, if given.
    pub width: Option<usize>,
    /// `--a` values (or one .npy file).
    pub a: &'a [String],
    /// `--b` values (or one .npy file).
    pub b: &'a [String],
    /// `--c` (an int32 value, or a .npy file in batch mode).
    pub c: &'a str,
    /// Where D goes in batch mode.
    pub out: Option<&'a Path>,
    /// Print JSON.
    pub json: bool,
}

/// Runs an integer `dot`.
pub fn run(job: &IntJob) -> Result<i32, String> {
    if let Some(w) = job.width {
        if !(1..=MAX_LANES).contains(&w) {
            return Err(format!("--width {w} is out of range (1..={MAX_LANES})"));
        }
    }
    if is_npy(job.a) || is_npy(job.b) {
        if !(is_npy(job.a) && is_npy(job.b) && is_npy(&[job.c.to_string()])) {
            return Err("batch mode needs --a, --b and --c all naming .npy files".into());
        }
        return run_batch(job);
    }
    if job.out.is_some() {
        return Err("--out applies to batch mode only (--a, --b, --c naming .npy files)".into());
    }
    let a = values::int_operands(job.fa, job.a)?;
    let b = values::int_operands(job.fb, job.b)?;
    if a.len() != b.len() {
        return Err(format!(
            "--a has {} values but --b has {}",
            a.len(),
            b.len()
        ));
    }
    let c = S32.decode(values::int_operand(S32, job.c)?) as i32;
    let width = job.width.unwrap_or(a.len().clamp(1, MAX_LANES));
    let r = dot_int(job.fa, job.fb, &a, &b, c, width, job.overflow);
    if job.json {
        outln!("{}", result_json(job, a.len(), width, &r));
    } else {
        outln!("bits:  0x{:08x}", r.bits());
        outln!("value: {}", r.d);
        outln!("range: {}", range_note(job.overflow, r.out_of_range));
    }
    Ok(0)
}

/// What happened to the int32 range: `in range`, or how an out-of-range sum was narrowed.
fn range_note(overflow: IntOverflow, out_of_range: bool) -> &'static str {
    match (out_of_range, overflow) {
        (false, _) => "in range",
        (true, IntOverflow::Wrap) => "out of int32 range (wrapped)",
        (true, IntOverflow::SatFinite) => "out of int32 range (clamped)",
    }
}

/// The JSON object of one integer result.
fn result_json(job: &IntJob, k: usize, width: usize, r: &IntDotResult) -> serde_json::Value {
    serde_json::json!({
        "bits": format!("0x{:08x}", r.bits()),
        "value": r.d,
        "out_of_range": r.out_of_range,
        "overflow": job.overflow.name(),
        "acc": "int32",
        "format_a": job.fa.name,
        "format_b": job.fb.name,
        "k": k,
        "width": width,
        "steps": r.steps,
    })
}

/// Reads an int32 vector of one value per row, shape (rows,) or (rows, 1).
fn load_c(path: &Path, rows: usize) -> Result<Vec<i32>, String> {
    let words = load_row_c(path, rows, &[Dtype::I32], "int32")?;
    Ok(words.iter().map(|&w| S32.decode(w) as i32).collect())
}

/// One integer dot product per row of A and B.
fn run_batch(job: &IntJob) -> Result<i32, String> {
    let (rows, k, a) = load_int_matrix(Path::new(&job.a[0]), "A", job.fa)?;
    let (rows_b, k_b, b) = load_int_matrix(Path::new(&job.b[0]), "B", job.fb)?;
    if (rows, k) != (rows_b, k_b) {
        return Err(format!(
            "A is {rows} x {k} but B is {rows_b} x {k_b} (they must match)"
        ));
    }
    let c = load_c(Path::new(job.c), rows)?;
    let width = job.width.unwrap_or(k.clamp(1, MAX_LANES));
    let results: Vec<IntDotResult> = (0..rows)
        .map(|r| {
            let (lo, hi) = (r * k, (r + 1) * k);
            dot_int(
                job.fa,
                job.fb,
                &a[lo..hi],
                &b[lo..hi],
                c[r],
                width,
                job.overflow,
            )
        })
        .collect();
    if let Some(out) = job.out {
        let words: Vec<u64> = results.iter().map(|r| u64::from(r.bits())).collect();
        write_npy(out, &[rows], Dtype::I32, &words).map_err(|e| e.to_string())?;
    }
    let out_of_range = results.iter().filter(|r| r.out_of_range).count();
    if job.json {
        let obj = serde_json::json!({
            "rows": rows,
            "k": k,
            "width": width,
            "out_of_range_rows": out_of_range,
            "overflow": job.overflow.name(),
            "acc": "int32",
            "format_a": job.fa.name,
            "format_b": job.fb.name,
            "out": job.out.map(|p| p.display().to_string()),
        });
        outln!("{obj}");
    } else {
        outln!("rows:  {rows} (K = {k})");
        outln!(
            "range: {out_of_range} rows out of int32 range ({})",
            match job.overflow {
                IntOverflow::Wrap => "wrapped",
                IntOverflow::SatFinite => "clamped",
            }
        );
        if let Some(out) = job.out {
            outln!("D:     {}", out.display());
        }
    }
    Ok(0)
}
