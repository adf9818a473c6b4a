//! `tcrtl dot --format fp64`: one dot product on the FP64 tensor core (`DMMA`), a chain of
//! binary64 fused multiply-adds (`numerics::dot::dmma`). A, B and C are binary64 values (0x bit
//! patterns of up to 16 hex digits, or exact decimals); D is binary64.

use crate::cli::values::{self, ArithArgs};
use tensorcore_rtl::numerics::dot::dmma::dmma_dot_preset;
use tensorcore_rtl::numerics::fma64::fma64_rm;
use tensorcore_rtl::numerics::{Flags, FP64};

/// One FP64 dot product as the command line gave it.
pub struct Fp64Job<'a> {
    /// The arithmetic options (formats, mode, preset or GPU).
    pub arith: &'a ArithArgs,
    /// `--out-format` (fp32, the default, or fp64: both mean the FP64 accumulator).
    pub out_format: &'a str,
    /// `--rounding`.
    pub rounding: &'a str,
    /// A, B and C as given.
    pub a: &'a [String],
    /// B values.
    pub b: &'a [String],
    /// C.
    pub c: &'a str,
    /// The first option given that FP64 dot products do not take, if any.
    pub refused: Option<&'static str>,
    /// Print JSON.
    pub json: bool,
}

/// True if the arithmetic options name FP64 operands.
pub fn wants_fp64(arith: &ArithArgs) -> bool {
    let is = |s: &str| s.eq_ignore_ascii_case("fp64");
    is(&arith.format) || arith.format_b.as_deref().is_some_and(is)
}

/// Runs an FP64 dot product (see the module documentation).
pub fn run(job: &Fp64Job) -> Result<i32, String> {
    let args = job;
    if let Some(fb) = &args.arith.format_b {
        if !(fb.eq_ignore_ascii_case("fp64") && args.arith.format.eq_ignore_ascii_case("fp64")) {
            return Err(
                "fp64 pairs only with fp64 (the FP64 tensor core has no mixed inputs)".into(),
            );
        }
    }
    let out = args.out_format.to_ascii_lowercase();
    if out != "fp32" && out != "fp64" {
        return Err(format!(
            "--out-format {} does not apply to fp64: the FP64 tensor core accumulates into fp64",
            args.out_format
        ));
    }
    if let Some(what) = args.refused {
        return Err(format!("{what} does not apply to fp64 dot products"));
    }
    let a = values::operands(FP64, args.a)?;
    let b = values::operands(FP64, args.b)?;
    if a.len() != b.len() {
        return Err(format!(
            "--a has {} values but --b has {}",
            a.len(),
            b.len()
        ));
    }
    let c = values::operand(FP64, args.c)?;
    let rm = values::rounding(args.rounding)?;
    let acc = args.arith.acc().to_ascii_lowercase();
    let (bits, flags, preset) = match acc.as_str() {
        "ieee" => {
            let mut d = c;
            let mut flags = Flags::NONE;
            for (&x, &y) in a.iter().zip(&b) {
                let (r, f) = fma64_rm(x, y, d, rm);
                d = r;
                flags |= f;
            }
            (d, flags, None)
        }
        "nvidia" => {
            if !args.rounding.eq_ignore_ascii_case("rne") {
                return Err(format!(
                    "--rounding {} does not apply to nvidia (DMMA rounds to nearest even)",
                    args.rounding
                ));
            }
            let rule = args.arith.rule()?.ok_or(
                "--acc nvidia needs --preset or --gpu (a GPU with FP64 tensor cores: ampere, \
                 hopper, h200, blackwell) for fp64",
            )?;
            let preset = Some(rule.preset);
            let (d, f) = dmma_dot_preset(rule.preset, &a, &b, c).map_err(|e| {
                format!("{e}: FP64 tensor cores are on ampere, hopper, h200 and blackwell")
            })?;
            (d, f, preset)
        }
        other => {
            return Err(format!(
                "--acc {other} does not apply to fp64: ieee (a chain of binary64 FMAs) or nvidia \
                 (DMMA, the same chain rounded to nearest even)"
            ))
        }
    };
    let value = f64::from_bits(bits);
    if args.json {
        let obj = serde_json::json!({
            "bits": format!("0x{bits:016x}"),
            "value": if value.is_finite() { serde_json::json!(value) } else { serde_json::json!(value.to_string()) },
            "flags": {"invalid": flags.invalid, "overflow": flags.overflow,
                      "underflow": flags.underflow, "inexact": flags.inexact},
            "acc": acc,
            "preset": preset.map(|p| p.name()),
            "format": "fp64",
            "out_format": "fp64",
            "k": a.len(),
            "rule": "binary64 FMA chain, k ascending",
        });
        outln!("{obj}");
    } else {
        outln!("bits:  0x{bits:016x} (fp64)");
        outln!("value: {value:e} ({value})");
        outln!("flags: {flags}");
    }
    Ok(0)
}
