//! `tcrtl dot`: one dot product through the numerics datapath, or a batch of them from .npy
//! files (see [`batch`]). This module declares the children and dispatches to them; the
//! children never import it.

mod all;
mod batch;
mod explain;
mod fp64;
mod int;
mod mx;
mod promote;
pub mod result;

use super::operand_files::is_npy;
use super::values;
use clap::Args;
use result::{acc_hex, acc_value, result_json};
use std::path::{Path, PathBuf};
use tensorcore_rtl::numerics::dot::{dot_acc, MAX_LANES};
use tensorcore_rtl::numerics::format::Format;
use tensorcore_rtl::numerics::int::IntOverflow;
use tensorcore_rtl::numerics::mx::BlockFormat;
use values::rounding;

/// Arguments of `tcrtl dot`.
#[derive(Args, Debug)]
pub struct DotArgs {
    #[command(flatten)]
    arith: values::ArithArgs,
    /// Products per step for ieee/fused (1..=32; default: K, capped at 32). nvidia always
    /// uses its block size; exact rounds once.
    #[arg(long)]
    width: Option<usize>,
    /// The accumulator C in the output format (FP32, or FP16 with --out-format fp16): 0x bit
    /// pattern or exact decimal; int32 for integer formats (0x bit pattern of up to 8 hex
    /// digits or a decimal integer); default 0.
    #[arg(long, default_value = "0x0", allow_hyphen_values = true)]
    c: String,
    /// The accumulator (output) format: fp32 (default) or fp16. C and D are in it; every
    /// rounding of the mode rounds to it (nvidia: the preset's FP16-output rule).
    #[arg(long, default_value = "fp32")]
    out_format: String,
    /// A values, comma-separated (0x bit patterns, exact decimals, or decimal integers for
    /// integer formats).
    #[arg(
        long,
        value_delimiter = ',',
        required = true,
        allow_hyphen_values = true
    )]
    a: Vec<String>,
    /// B values, comma-separated (as --a).
    #[arg(
        long,
        value_delimiter = ',',
        required = true,
        allow_hyphen_values = true
    )]
    b: Vec<String>,
    /// Rounding direction of the ieee, fused and exact modes: rne (default), rtz, rdn, rup.
    /// The nvidia presets keep the GPU's own rounding (only rne is accepted).
    #[arg(long, default_value = "rne")]
    rounding: String,
    /// Batch mode: where D goes (uint32 FP32 bit patterns, one per row; uint16 FP16 bit
    /// patterns with --out-format fp16) when --a, --b and --c name .npy files.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Integer formats only: clamp each step's exact sum to the int32 range (PTX
    /// `.satfinite`) instead of wrapping.
    #[arg(long)]
    satfinite: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Show the datapath stage by stage: decoded operands, exact products, alignment shift
    /// and dropped bits, the sum, normalisation and the rounding decision of every step.
    #[arg(long)]
    explain: bool,
    /// Block-scaled formats: A's block scales, comma-separated, one per block of K (E8M0 as
    /// 0x codes or powers of two for MX; E4M3 patterns or values for nvfp4).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    a_scales: Vec<String>,
    /// Block-scaled formats: B's block scales (as --a-scales).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    b_scales: Vec<String>,
    /// nvfp4: A's FP32 tensor scale (default 1).
    #[arg(long, allow_hyphen_values = true)]
    a_tensor_scale: Option<String>,
    /// nvfp4: B's FP32 tensor scale (default 1).
    #[arg(long, allow_hyphen_values = true)]
    b_tensor_scale: Option<String>,
    /// Promote to FP32 every N products (docs/numerics.md, "FP32 promotion"): each chunk of
    /// N from a zero accumulator under the mode, added into an FP32 sum from C with one RNE
    /// addition. FP32 output only; nvidia needs N a multiple of the preset's block.
    #[arg(long, value_name = "N")]
    promote_every: Option<usize>,
}

/// Runs a block-scaled `tcrtl dot` when `--format` (or `--format-b`) names a block format,
/// after refusing the options that do not apply to it; `None` otherwise.
fn run_block_scaled(args: &DotArgs) -> Option<Result<i32, String>> {
    let fa = BlockFormat::by_name(&args.arith.format);
    let fb = match &args.arith.format_b {
        Some(name) => BlockFormat::by_name(name),
        None => fa,
    };
    if fa.is_none() && fb.is_none() {
        let scales = !args.a_scales.is_empty()
            || !args.b_scales.is_empty()
            || args.a_tensor_scale.is_some()
            || args.b_tensor_scale.is_some();
        return scales.then(|| {
            Err(
                "--a-scales, --b-scales and the tensor scales apply to block-scaled formats \
                 (mxfp8e4m3, mxfp8e5m2, mxfp6e2m3, mxfp6e3m2, mxfp4, mxint8, nvfp4)"
                    .into(),
            )
        });
    }
    let (Some(fa), Some(fb)) = (fa, fb) else {
        return Some(Err(
            "a block-scaled format pairs only with another block-scaled format".into(),
        ));
    };
    let refuse = [
        (args.arith.preset.is_some(), "--preset"),
        (args.arith.gpu.is_some(), "--gpu"),
        (args.arith.instr.is_some(), "--instr"),
        (
            !args.out_format.eq_ignore_ascii_case("fp32"),
            "--out-format",
        ),
        (!args.rounding.eq_ignore_ascii_case("rne"), "--rounding"),
        (args.explain, "--explain"),
        (args.satfinite, "--satfinite"),
        (args.width.is_some(), "--width"),
        (args.out.is_some() || is_npy(&args.a), ".npy batches"),
    ];
    if let Some((_, what)) = refuse.iter().find(|(on, _)| *on) {
        return Some(Err(format!(
            "{what} does not apply to block-scaled formats (FP32 output, the mode's own \
             rounding, one row of operands)"
        )));
    }
    Some(mx::run(&mx::MxJob {
        fa,
        fb,
        acc: args.arith.acc(),
        a: &args.a,
        b: &args.b,
        a_scales: &args.a_scales,
        b_scales: &args.b_scales,
        a_tensor_scale: args.a_tensor_scale.as_deref(),
        b_tensor_scale: args.b_tensor_scale.as_deref(),
        c: &args.c,
        json: args.json,
    }))
}

/// Runs `tcrtl dot`.
pub fn run(args: &DotArgs) -> Result<i32, String> {
    if fp64::wants_fp64(&args.arith) {
        let refused = [
            (args.explain, "--explain"),
            (args.satfinite, "--satfinite"),
            (args.width.is_some(), "--width"),
            (args.promote_every.is_some(), "--promote-every"),
            (args.out.is_some(), "--out (batches)"),
            (
                !args.a_scales.is_empty() || !args.b_scales.is_empty(),
                "block scales",
            ),
        ];
        return fp64::run(&fp64::Fp64Job {
            arith: &args.arith,
            out_format: &args.out_format,
            rounding: &args.rounding,
            a: &args.a,
            b: &args.b,
            c: &args.c,
            refused: refused.iter().find(|(on, _)| *on).map(|(_, what)| *what),
            json: args.json,
        });
    }
    if let Some(every) = args.promote_every {
        return promote::run(&promote::PromoteJob {
            every,
            arith: &args.arith,
            out_format: &args.out_format,
            rounding: &args.rounding,
            width: args.width,
            a: &args.a,
            b: &args.b,
            c: &args.c,
            out: args.out.as_deref(),
            json: args.json,
            refused: promote_refused(args),
        });
    }
    if let Some(r) = run_block_scaled(args) {
        return r;
    }
    if let Some((fa, fb)) = args.arith.int_formats()? {
        if !args.rounding.eq_ignore_ascii_case("rne") {
            return Err(
                "--rounding does not apply to integer formats (their sums are exact)".into(),
            );
        }
        if args.explain {
            return Err(
                "--explain shows a floating-point datapath; integer formats sum exactly in \
                 int32 (drop --explain)"
                    .into(),
            );
        }
        if !args.out_format.eq_ignore_ascii_case("fp32") {
            return Err(format!(
                "--out-format {} does not apply to integer formats: they accumulate into int32",
                args.out_format
            ));
        }
        return int::run(&int::IntJob {
            fa,
            fb,
            overflow: if args.satfinite {
                IntOverflow::SatFinite
            } else {
                IntOverflow::Wrap
            },
            width: args.width,
            a: &args.a,
            b: &args.b,
            c: &args.c,
            out: args.out.as_deref(),
            json: args.json,
        });
    }
    if args.satfinite {
        return Err("--satfinite applies to the integer formats (s8, u8, s4, u4) only".into());
    }
    let rm = rounding(&args.rounding)?;
    let acc = values::acc_format(&args.out_format)?;
    if args.arith.acc().eq_ignore_ascii_case("all") {
        if args.explain {
            return Err("--explain shows one mode; pick --acc ieee, fused, exact or nvidia".into());
        }
        if args.arith.preset.is_some() || args.arith.gpu.is_some() || args.arith.instr.is_some() {
            return Err("--acc all runs every preset; drop --preset, --gpu and --instr".into());
        }
        if is_npy(&args.a) || is_npy(&args.b) || args.out.is_some() {
            return Err("--acc all takes operand values, not .npy batches".into());
        }
        let fmt_a = values::input_format(&args.arith.format)?;
        let fmt_b = match &args.arith.format_b {
            Some(name) => values::input_format(name)?,
            None => fmt_a,
        };
        let (a, b, c) = single_operands(args, fmt_a, fmt_b, acc)?;
        return all::run(
            &all::Operands {
                fmt_a,
                fmt_b,
                acc,
                a: &a,
                b: &b,
                c,
            },
            rm,
            args.width,
            args.json,
        );
    }
    let values::Arith {
        fmt_a,
        fmt_b,
        mode,
        preset,
        rule,
    } = args.arith.resolve_acc(acc)?;
    if is_npy(&args.a) || is_npy(&args.b) {
        if args.explain {
            return Err("--explain takes operand values, not .npy batches".into());
        }
        if !(is_npy(&args.a) && is_npy(&args.b) && is_npy(std::slice::from_ref(&args.c))) {
            return Err("batch mode needs --a, --b and --c all naming .npy files".into());
        }
        return batch::run(&batch::BatchJob {
            fmt_a,
            fmt_b,
            mode,
            acc,
            preset,
            rule,
            rm,
            width: args.width,
            a: Path::new(&args.a[0]),
            b: Path::new(&args.b[0]),
            c: Path::new(&args.c),
            out: args.out.as_deref(),
            json: args.json,
        });
    }
    if args.out.is_some() {
        return Err("--out applies to batch mode only (--a, --b, --c naming .npy files)".into());
    }
    let (a, b, c) = single_operands(args, fmt_a, fmt_b, acc)?;
    let width = args.width.unwrap_or(a.len().clamp(1, MAX_LANES));
    if args.explain {
        return explain::run(&explain::ExplainJob {
            mode: &mode,
            preset,
            rule,
            rm,
            acc,
            fmt_a,
            fmt_b,
            a: &a,
            b: &b,
            c,
            width,
            json: args.json,
        });
    }
    let r = dot_acc(&mode, rm, acc, fmt_a, fmt_b, &a, &b, c, width).map_err(|e| e.to_string())?;
    if args.json {
        let mut obj = result_json(&mode, preset, rm, acc, fmt_a, fmt_b, a.len(), &r);
        values::add_rule_keys(&mut obj, rule);
        outln!("{obj}");
    } else {
        let value = acc_value(acc, r.bits);
        outln!("bits:  {} ({acc})", acc_hex(acc, r.bits));
        outln!("value: {value:e} ({value})");
        outln!("flags: {}", r.flags);
        values::print_rule(rule)?;
    }
    Ok(0)
}

/// The operands of a single dot product: A, B (same length) and C (in the format `acc`).
fn single_operands(
    args: &DotArgs,
    fmt_a: Format,
    fmt_b: Format,
    acc: Format,
) -> Result<(Vec<u64>, Vec<u64>, u32), String> {
    let a = values::operands(fmt_a, &args.a)?;
    let b = values::operands(fmt_b, &args.b)?;
    if a.len() != b.len() {
        return Err(format!(
            "--a has {} values but --b has {}",
            a.len(),
            b.len()
        ));
    }
    let c = values::operand(acc, &args.c)? as u32;
    Ok((a, b, c))
}

/// The first option `tcrtl dot --promote-every` does not take, if any.
fn promote_refused(args: &DotArgs) -> Option<&'static str> {
    let scales = !args.a_scales.is_empty()
        || !args.b_scales.is_empty()
        || args.a_tensor_scale.is_some()
        || args.b_tensor_scale.is_some()
        || BlockFormat::by_name(&args.arith.format).is_some()
        || args
            .arith
            .format_b
            .as_deref()
            .is_some_and(|f| BlockFormat::by_name(f).is_some());
    [
        (args.explain, "--explain"),
        (args.satfinite, "--satfinite"),
        (scales, "a block-scaled format"),
    ]
    .into_iter()
    .find_map(|(on, what)| on.then_some(what))
}
