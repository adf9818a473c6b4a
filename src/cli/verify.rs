//! `tcrtl verify measurements`: replays a real-GPU measurement set through the `nvidia` mode;
//! `tcrtl verify sweep` and `merge` live in [`super::sweep`].

use super::values;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use tensorcore_rtl::numerics::dot::{dot_acc, AccMode, Gpu, GpuRule, GPU_ROWS};
use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::verify::measurements::{encode_word, load_acc};

/// Arguments of `tcrtl verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    #[command(subcommand)]
    what: VerifyCommand,
}

#[derive(Subcommand, Debug)]
enum VerifyCommand {
    /// Runs every row of a measurement set (a_*, b_*, c_*fp32, d_*fp32 or with --out-format
    /// fp16 d_*fp16 files) through the nvidia mode and compares bit for bit; exits 1 on any
    /// mismatch.
    Measurements(MeasurementArgs),
    /// Error of a mode against the exact sum over random dot products, per K
    /// (DIR/summary.json and DIR/errors.svg); --shard I/N runs one part.
    Sweep(super::sweep::SweepArgs),
    /// Merges the shard directories of one sweep into the single-run summary.
    Merge(super::sweep::MergeArgs),
    /// Probes a preset's nvidia mode as a black box for its block-FMA features (block size,
    /// extra alignment and carry bits, normalisation, roundings, subnormals).
    Features(super::verify_features::FeatureArgs),
    /// Lists every modelled GPU x instruction pair: the preset it runs and the evidence
    /// behind it (measurement sets, published models, our own captures).
    Gpus(GpusArgs),
}

/// Arguments of `tcrtl verify gpus`.
#[derive(Args, Debug)]
pub struct GpusArgs {
    /// Print one JSON array instead of text.
    #[arg(long)]
    json: bool,
}

/// Arguments of `tcrtl verify measurements`.
#[derive(Args, Debug)]
pub struct MeasurementArgs {
    /// Directory of the set, e.g. .../tensor-core-measurements/H100/fp16.
    dir: PathBuf,
    /// Input format of A (and of B unless --b-format): e4m3, e5m2, fp16, bf16, tf32.
    #[arg(long)]
    format: String,
    /// Input format of B, if it differs from A's (the mixed FP8 sets: e4m3 x e5m2).
    #[arg(long, alias = "format-b")]
    b_format: Option<String>,
    #[arg(long, help = values::preset_help(), long_help = values::preset_long_help())]
    preset: Option<String>,
    #[arg(long, help = values::gpu_help())]
    gpu: Option<String>,
    #[arg(long, help = values::instr_help())]
    instr: Option<String>,
    /// The accumulator the GPU wrote: fp32 (d_*fp32.txt) or fp16 (d_*fp16.txt, with C
    /// rounded to FP16 to nearest even first, as the test programs did).
    #[arg(long, default_value = "fp32")]
    out_format: String,
    /// Use C = +0 for every row (the H100 FP8 FP32-output sets were measured with C = 0).
    #[arg(long)]
    zero_c: bool,
    /// Check only the first N rows.
    #[arg(long)]
    limit: Option<usize>,
    /// How many mismatches to show.
    #[arg(long, default_value_t = 5)]
    show: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `tcrtl verify ...`.
pub fn run(args: &VerifyArgs) -> Result<i32, String> {
    match &args.what {
        VerifyCommand::Measurements(m) => measurements(m),
        VerifyCommand::Sweep(s) => super::sweep::sweep_cmd(s),
        VerifyCommand::Merge(m) => super::sweep::merge_cmd(m),
        VerifyCommand::Features(f) => super::verify_features::run(f),
        VerifyCommand::Gpus(g) => gpus(g),
    }
}

/// `tcrtl verify gpus`: the library's GPU x instruction table, a GPU's default first.
fn gpus(args: &GpusArgs) -> Result<i32, String> {
    if args.json {
        let rows: Vec<_> = GPU_ROWS
            .iter()
            .map(|r| {
                serde_json::json!({
                    "gpu": r.gpu.name(), "architecture": r.gpu.architecture(),
                    "instr": r.instr.name(), "preset": r.preset.map(|p| p.name()),
                    "default": GpuRule::resolve(r.gpu, None).is_ok_and(|d| d.instr == r.instr),
                    "evidence": r.evidence,
                })
            })
            .collect();
        outln!("{}", serde_json::Value::from(rows));
        return Ok(0);
    }
    for r in GPU_ROWS {
        let preset = r.preset.map_or("not modelled", |p| p.name());
        let default = GpuRule::resolve(r.gpu, None).is_ok_and(|d| d.instr == r.instr);
        outln!(
            "{} {} -> {preset}{} ({})",
            r.gpu,
            r.instr,
            if default { " [default]" } else { "" },
            r.gpu.architecture()
        );
        outln!("    {}", r.evidence);
    }
    let none: Vec<&str> = Gpu::all()
        .filter(|g| GPU_ROWS.iter().all(|r| r.gpu != *g))
        .map(|g| g.name())
        .collect();
    if !none.is_empty() {
        outln!("no row yet: {}", none.join(", "));
    }
    Ok(0)
}

fn hex_row(r: &[u32]) -> String {
    r.iter()
        .map(|w| format!("{w:08x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn measurements(args: &MeasurementArgs) -> Result<i32, String> {
    let fmt = values::input_format(&args.format)?;
    let fmt_b = match &args.b_format {
        Some(name) => values::input_format(name)?,
        None => fmt,
    };
    let names = tensorcore_rtl::io::arith::ArithNames {
        format: &args.format,
        format_b: args.b_format.as_deref(),
        acc: Some("nvidia"),
        preset: args.preset.as_deref(),
        gpu: args.gpu.as_deref(),
        instr: args.instr.as_deref(),
    };
    let (preset, rule) = names.selection()?;
    let preset = preset.ok_or("name the rule to check: --preset, or --gpu (with --instr)")?;
    let acc = values::acc_format(&args.out_format)?;
    let params = preset
        .params_for(fmt, fmt_b, acc)
        .map_err(|e| e.to_string())?;
    let mode = AccMode::Nvidia(params);
    let set = load_acc(&args.dir, args.limit, acc)?;
    if set.a.is_empty() {
        // A set with no row checks nothing: that is an input error, never a pass.
        return Err(format!(
            "{}: no rows to check ({})",
            args.dir.display(),
            if args.limit == Some(0) {
                "--limit 0"
            } else {
                "the files hold no data"
            }
        ));
    }
    let mut matched = 0usize;
    let mut mismatches = Vec::new();
    for (row, ((ra, rb), &d)) in set.a.iter().zip(&set.b).zip(&set.d).enumerate() {
        let enc = |f, r: &[u32]| -> Result<Vec<u64>, String> {
            r.iter()
                .map(|&w| {
                    encode_word(f, w).ok_or_else(|| {
                        format!(
                            "row {}: {w:08x} is not exactly representable in {f}",
                            row + 1
                        )
                    })
                })
                .collect()
        };
        let a = enc(fmt, ra)?;
        let b = enc(fmt_b, rb)?;
        let c = if args.zero_c { 0 } else { set.c_in(row, acc) };
        let ours = dot_acc(
            &mode,
            RoundingMode::NearestEven,
            acc,
            fmt,
            fmt_b,
            &a,
            &b,
            c,
            params.block,
        )
        .map_err(|e| e.to_string())?
        .bits;
        if ours == d {
            matched += 1;
        } else if mismatches.len() < args.show {
            mismatches.push((row + 1, ra.clone(), rb.clone(), c, ours, d));
        }
    }
    let total = set.a.len();
    let digits = acc.width() as usize / 4;
    let hex = |w: &u32| format!("0x{w:0digits$x}");
    let files: Vec<String> = set.files.iter().map(|p| p.display().to_string()).collect();
    if args.json {
        let list: Vec<_> = mismatches
            .iter()
            .map(|(row, a, b, c, ours, gpu)| {
                serde_json::json!({
                    "row": row, "a": hex_row(a), "b": hex_row(b),
                    "c": hex(c), "ours": hex(ours), "gpu": hex(gpu),
                })
            })
            .collect();
        let obj = serde_json::json!({
            "dir": args.dir.display().to_string(), "format": fmt.name, "b_format": fmt_b.name,
            "preset": preset.name(),
            "gpu": rule.map(|r| r.gpu.name()), "instr": rule.map(|r| r.instr.name()),
            "out_format": acc.name,
            "k": set.k, "files": files, "matched": matched, "total": total, "first_mismatches": list,
        });
        outln!("{obj}");
    } else {
        outln!(
            "{}: {matched}/{total} rows match (format {}, output {acc}, preset {preset}, K = {}, n = {})",
            args.dir.display(),
            if fmt_b == fmt {
                fmt.name.to_string()
            } else {
                format!("{fmt} x {fmt_b}")
            },
            set.k,
            params.block
        );
        outln!("files: {}", files.join(", "));
        values::print_rule(rule)?;
        for (row, a, b, c, ours, gpu) in &mismatches {
            outln!(
                "mismatch at row {row} (line {row} of each file): c = {}, ours {}, gpu {}",
                hex(c),
                hex(ours),
                hex(gpu)
            );
            outln!("  a = {}", hex_row(a));
            outln!("  b = {}", hex_row(b));
        }
    }
    Ok(if matched == total { 0 } else { 1 })
}
