//! `tcrtl dot --promote-every N`: the dot product promoted to FP32 every N products
//! (`numerics::dot::promote`, docs/numerics.md "FP32 promotion"), for one row of operand
//! values or a batch of `.npy` rows, FP32 accumulation only.

use super::batch::{load_bits, load_c};
use super::result::{acc_hex, acc_value, result_json};
use crate::cli::operand_files::is_npy;
use crate::cli::values::{self, ArithArgs};
use std::path::Path;
use tensorcore_rtl::io::npy::{write_npy, Dtype};
use tensorcore_rtl::numerics::dot::promote::{
    count_flags, dot_batch_promoted, dot_promoted, PromoteError,
};
use tensorcore_rtl::numerics::dot::MAX_LANES;

/// What a promoted `tcrtl dot` computes, from its options.
pub struct PromoteJob<'a> {
    /// The promotion interval `N`.
    pub every: usize,
    /// Formats, mode and preset.
    pub arith: &'a ArithArgs,
    /// `--out-format`.
    pub out_format: &'a str,
    /// `--rounding`.
    pub rounding: &'a str,
    /// `--width`.
    pub width: Option<usize>,
    /// `--a`, `--b` (values, or one .npy each) and `--c`.
    pub a: &'a [String],
    /// B's values or file.
    pub b: &'a [String],
    /// C's value or file.
    pub c: &'a str,
    /// Batch mode: where D goes.
    pub out: Option<&'a Path>,
    /// Print JSON.
    pub json: bool,
    /// The first option given that promotion does not take, if any (e.g. `--explain`).
    pub refused: Option<&'static str>,
}

/// Runs `tcrtl dot --promote-every N`.
pub fn run(job: &PromoteJob) -> Result<i32, String> {
    if let Some(what) = job.refused {
        return Err(format!("{what} does not apply with --promote-every"));
    }
    if job.arith.acc().eq_ignore_ascii_case("all") {
        return Err(
            "--acc all runs every mode unpromoted; pick one mode for --promote-every".into(),
        );
    }
    if job.arith.int_formats()?.is_some() {
        return Err(PromoteError::Integer.to_string());
    }
    let rm = values::rounding(job.rounding)?;
    let acc = values::acc_format(job.out_format)?;
    let arith = job.arith.resolve_acc(acc)?;
    let (fmt_a, fmt_b, mode) = (arith.fmt_a, arith.fmt_b, arith.mode);
    let json_of = |mut obj: serde_json::Value| {
        obj["promote_every"] = job.every.into();
        obj
    };
    if is_npy(job.a) || is_npy(job.b) {
        if !(is_npy(job.a) && is_npy(job.b) && is_npy(std::slice::from_ref(&job.c.to_string()))) {
            return Err("batch mode needs --a, --b and --c all naming .npy files".into());
        }
        let (rows, k, a) = load_bits(Path::new(&job.a[0]), "A", fmt_a)?;
        let (rows_b, k_b, b) = load_bits(Path::new(&job.b[0]), "B", fmt_b)?;
        if (rows, k) != (rows_b, k_b) {
            return Err(format!(
                "A is {rows} x {k} but B is {rows_b} x {k_b} (they must match)"
            ));
        }
        let c = load_c(Path::new(job.c), rows, acc)?;
        let width = job.width.unwrap_or(k.clamp(1, MAX_LANES));
        let r = dot_batch_promoted(
            &mode, rm, acc, fmt_a, fmt_b, &a, &b, &c, k, width, job.every,
        )
        .map_err(|e| e.to_string())?;
        if let Some(out) = job.out {
            let words: Vec<u64> = r.d.iter().map(|&w| u64::from(w)).collect();
            write_npy(out, &[rows], Dtype::U32, &words).map_err(|e| e.to_string())?;
        }
        let f = count_flags(&r.flags);
        if job.json {
            let obj = serde_json::json!({
                "rows": rows,
                "k": k,
                "flags": {
                    "invalid": f.invalid,
                    "overflow": f.overflow,
                    "underflow": f.underflow,
                    "inexact": f.inexact,
                },
                "acc": mode.name(),
                "preset": arith.preset.map(|p| p.name()),
                "rounding": super::result::rounding_label(&mode, rm),
                "format_a": fmt_a.name,
                "format_b": fmt_b.name,
                "out_format": acc.name,
                "out": job.out.map(|p| p.display().to_string()),
            });
            outln!("{}", json_of(obj));
        } else {
            outln!(
                "rows:  {rows} (K = {k}, promoted to FP32 every {})",
                job.every
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
        }
        return Ok(0);
    }
    if job.out.is_some() {
        return Err("--out applies to batch mode only (--a, --b, --c naming .npy files)".into());
    }
    let a = values::operands(fmt_a, job.a)?;
    let b = values::operands(fmt_b, job.b)?;
    if a.len() != b.len() {
        return Err(format!(
            "--a has {} values but --b has {}",
            a.len(),
            b.len()
        ));
    }
    let c = values::operand(acc, job.c)? as u32;
    let width = job.width.unwrap_or(a.len().clamp(1, MAX_LANES));
    let r = dot_promoted(&mode, rm, acc, fmt_a, fmt_b, &a, &b, c, width, job.every)
        .map_err(|e| e.to_string())?;
    if job.json {
        let obj = result_json(&mode, arith.preset, rm, acc, fmt_a, fmt_b, a.len(), &r);
        outln!("{}", json_of(obj));
    } else {
        let value = acc_value(acc, r.bits);
        outln!("bits:  {} ({acc})", acc_hex(acc, r.bits));
        outln!("value: {value:e} ({value})");
        outln!("flags: {}", r.flags);
        outln!("promoted to FP32 every {} products", job.every);
    }
    Ok(0)
}
