//! `tcrtl verify sweep` (error of a mode against the exact sum over many random dot products,
//! per K, into DIR/summary.json and DIR/errors.svg) and `tcrtl verify merge` (shards of one
//! sweep into the single-run summary).

use super::dot::result::rounding_label;
use super::plot::{line_plot, Plot, Series};
use super::values;
use super::values::rounding;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use plotters::prelude::{Color, RGBColor, SeriesLabelPosition, BLACK, BLUE, MAGENTA, RED};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use tensorcore_rtl::hw::Dataflow;
use tensorcore_rtl::io::output::{create_dir_all, write_file};
use tensorcore_rtl::numerics::dot::{AccMode, MAX_LANES};
use tensorcore_rtl::sweep::{self, Dist, KStats, SweepConfig};

/// The rows of a weight-stationary sweep's array when `--rows` is not given (the default
/// core's 4 x 4 array).
const DEFAULT_WS_ROWS: usize = 4;

/// Arguments of `tcrtl verify sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    #[command(flatten)]
    arith: values::ArithArgs,
    /// Rounding of ieee, fused and exact: rne (default), rtz, rdn, rup.
    #[arg(long, default_value = "rne")]
    rounding: String,
    /// Products per step for ieee and fused (1..=32).
    #[arg(long, default_value_t = 16)]
    width: usize,
    /// The accumulator (output) format: fp32 (default) or fp16; errors are in its ulps.
    #[arg(long, default_value = "fp32")]
    out_format: String,
    /// The lengths K, comma-separated (e.g. 16,256,4096).
    #[arg(long, value_delimiter = ',', required = true)]
    k: Vec<usize>,
    /// Samples per K (over all shards).
    #[arg(long, default_value_t = 1000)]
    samples: u64,
    /// Operand distribution: uniform, normal (default), cancel, wide.
    #[arg(long, default_value = "normal")]
    dist: String,
    /// Seed of the operand streams.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Accumulation order: os (default: one chain over K) or ws (weight-stationary: folds of
    /// rows x width elements of K, each from -0, added to C one by one).
    #[arg(long, default_value = "os")]
    dataflow: String,
    /// Rows of the array for --dataflow ws (1..=32, default 4): a fold is rows x width
    /// elements of K.
    #[arg(long)]
    rows: Option<usize>,
    /// Run only shard I of N (samples s with s mod N = I), e.g. 2/8; `slurm` takes I and N
    /// from a Slurm array task (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT).
    #[arg(long, default_value = "0/1")]
    shard: String,
    /// Output directory (summary.json, errors.svg).
    #[arg(long)]
    out: PathBuf,
    /// Promote to FP32 every N products (docs/numerics.md, "FP32 promotion"): each chunk of N
    /// from a zero accumulator, added into an FP32 sum with one RNE addition (FP32 output;
    /// nvidia: N a multiple of the preset's block).
    #[arg(long, value_name = "N")]
    promote_every: Option<usize>,
}

/// Arguments of `tcrtl verify merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard output directories (each with a summary.json).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Output directory of the merged summary.json and errors.svg.
    #[arg(long)]
    out: PathBuf,
}

/// The summary file of a sweep (or of merged shards).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Summary {
    format_a: String,
    format_b: String,
    acc: String,
    /// The output format, when not FP32 (absent in FP32 summaries, which keeps them as they
    /// were before FP16 output existed).
    #[serde(default = "fp32_name", skip_serializing_if = "is_fp32_name")]
    out_format: String,
    preset: Option<String>,
    /// The GPU and instruction whose rule nvidia ran (absent for the other modes, and in
    /// summaries written before GPUs were named).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gpu: Option<String>,
    /// See `gpu`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    instr: Option<String>,
    rounding: String,
    width: usize,
    /// `ws` for a weight-stationary sweep (absent in output-stationary summaries, which keeps
    /// them as they were before the dataflow existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dataflow: Option<String>,
    /// The array's rows of a weight-stationary sweep (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rows: Option<usize>,
    /// The FP32 promotion interval N (absent for a sweep without promotion, which keeps such
    /// summaries as they were before promotion existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    promote_every: Option<usize>,
    dist: Dist,
    seed: u64,
    samples: u64,
    shard: String,
    seconds: f64,
    hist_edges_ulp: Vec<f64>,
    per_k: Vec<KStats>,
}

fn fp32_name() -> String {
    "fp32".into()
}

fn is_fp32_name(name: &String) -> bool {
    name == "fp32"
}

/// A shard as written in a summary (`I/N`).
fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    super::shard::parse_fraction(text)
        .map(|s| (s.index, s.count))
        .ok_or_else(|| format!("--shard {text:?}: expected I/N with 0 <= I < N"))
}

/// Runs `tcrtl verify sweep`.
pub fn sweep_cmd(args: &SweepArgs) -> Result<i32, String> {
    let out = values::acc_format(&args.out_format)?;
    let arith = args.arith.resolve_acc(out)?;
    let rm = rounding(&args.rounding)?;
    let dist = Dist::by_name(&args.dist).ok_or_else(|| {
        format!(
            "unknown --dist {:?} (expected uniform, normal, cancel or wide)",
            args.dist
        )
    })?;
    let shard = super::shard::parse(&args.shard)?;
    let shard = (shard.index, shard.count);
    sweep::check_sizes(&args.k, args.samples)?;
    check_out_dir(&args.out)?;
    if args.width == 0 || args.width > MAX_LANES {
        return Err(format!("--width {} is outside 1..=32", args.width));
    }
    let dataflow = Dataflow::by_name(&args.dataflow).ok_or_else(|| {
        format!(
            "unknown --dataflow {:?} (expected {})",
            args.dataflow,
            Dataflow::choices()
        )
    })?;
    let rows = match (dataflow, args.rows) {
        (Dataflow::Os, Some(_)) => return Err("--rows only applies to --dataflow ws or is".into()),
        (_, rows) => rows.unwrap_or(DEFAULT_WS_ROWS),
    };
    let cfg = SweepConfig {
        fmt_a: arith.fmt_a,
        fmt_b: arith.fmt_b,
        mode: arith.mode,
        out,
        rm,
        width: args.width,
        ks: args.k.clone(),
        samples: args.samples,
        dist,
        seed: args.seed,
        shard,
        dataflow,
        rows,
        promote_every: args.promote_every,
    };
    sweep::check_dataflow(&cfg)?;
    let total = sweep::shard_samples(args.samples, shard).saturating_mul(args.k.len() as u64);
    // A progress bar on a terminal (indicatif draws nothing when stderr is not one); the
    // files do not depend on it.
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("sweep {bar:40} {pos}/{len} samples ({eta})") {
        bar.set_style(style);
    }
    let progress = |n: u64| bar.inc(n);
    let start = std::time::Instant::now();
    let per_k = sweep::run(&cfg, &progress)?;
    let seconds = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let summary = Summary {
        format_a: cfg.fmt_a.name.into(),
        format_b: cfg.fmt_b.name.into(),
        acc: cfg.mode.name().into(),
        out_format: out.name.into(),
        preset: arith.preset.map(|p| p.name().into()),
        gpu: arith.rule.map(|r| r.gpu.name().into()),
        instr: arith.rule.map(|r| r.instr.name().into()),
        rounding: rounding_label(&cfg.mode, rm).into(),
        // nvidia's own order ignores the width; the weight-stationary fold does not.
        width: if matches!(cfg.mode, AccMode::Nvidia(_)) && dataflow == Dataflow::Os {
            0
        } else {
            args.width
        },
        dataflow: dataflow.folds_k().then(|| dataflow.name().into()),
        rows: dataflow.folds_k().then_some(rows),
        promote_every: args.promote_every,
        dist,
        seed: args.seed,
        samples: args.samples,
        shard: format!("{}/{}", shard.0, shard.1),
        seconds,
        hist_edges_ulp: sweep::hist_edges(),
        per_k,
    };
    create_out_dir(&args.out)?;
    write_outputs(&args.out, &summary)?;
    outln!(
        "{} samples x {} K in {seconds:.2} s ({:.0} samples/s): {}",
        total / args.k.len() as u64,
        args.k.len(),
        total as f64 / seconds.max(1e-9),
        args.out.join("summary.json").display()
    );
    Ok(0)
}

/// Runs `tcrtl verify merge`.
pub fn merge_cmd(args: &MergeArgs) -> Result<i32, String> {
    let mut parts = Vec::new();
    for d in &args.dirs {
        let path = d.join("summary.json");
        let text = tensorcore_rtl::io::bounded::read_text_bounded(
            &path,
            tensorcore_rtl::io::bounded::MAX_TEXT_BYTES,
            "a sweep summary",
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
        let s: Summary =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        parts.push((path, s));
    }
    let (first_path, first) = &parts[0];
    let key = |s: &Summary| {
        let mut c = s.clone();
        c.shard.clear();
        c.seconds = 0.0;
        c.per_k.clear();
        c
    };
    let n = parse_shard(&first.shard)
        .map_err(|_| format!("{}: bad shard {:?}", first_path.display(), first.shard))?
        .1;
    let mut seen = vec![false; n as usize];
    for (path, s) in &parts {
        if key(s) != key(first) {
            return Err(format!(
                "{} is from another sweep than {}",
                path.display(),
                first_path.display()
            ));
        }
        let (i, m) = parse_shard(&s.shard)
            .map_err(|_| format!("{}: bad shard {:?}", path.display(), s.shard))?;
        if m != n || seen[i as usize] {
            return Err(format!(
                "{}: shard {} repeats or does not belong to /{n}",
                path.display(),
                s.shard
            ));
        }
        seen[i as usize] = true;
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        return Err(format!("shard {missing}/{n} is missing"));
    }
    let mut per_k = Vec::new();
    for (j, ks) in first.per_k.iter().enumerate() {
        let group: Vec<KStats> = parts
            .iter()
            .map(|(p, s)| {
                s.per_k
                    .get(j)
                    .cloned()
                    .ok_or_else(|| format!("{}: no K = {}", p.display(), ks.k))
            })
            .collect::<Result<_, _>>()?;
        per_k.push(sweep::merge_stats(&group)?);
    }
    let merged = Summary {
        shard: format!("merged {n}"),
        seconds: parts.iter().map(|(_, s)| s.seconds).sum(),
        per_k,
        ..first.clone()
    };
    check_out_dir(&args.out)?;
    create_out_dir(&args.out)?;
    write_outputs(&args.out, &merged)?;
    outln!(
        "merged {n} shards: {}",
        args.out.join("summary.json").display()
    );
    Ok(0)
}

/// Refuses an `--out` that exists and is not a directory, before any work.
fn check_out_dir(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Err(format!("--out {}: not a directory", dir.display())),
        _ => Ok(()),
    }
}

/// Creates the `--out` directory once the results are ready (a sweep refused or failed
/// leaves no empty folder behind).
fn create_out_dir(dir: &Path) -> Result<(), String> {
    create_dir_all(dir).map_err(|e| format!("--out {}: {e}", dir.display()))
}

fn write_outputs(dir: &Path, s: &Summary) -> Result<(), String> {
    let text = serde_json::to_string_pretty(s).map_err(|e| e.to_string())? + "\n";
    write_file(&dir.join("summary.json"), text.as_bytes())?;
    let mut svg = String::new();
    plot(&mut svg, s)?;
    write_file(&dir.join("errors.svg"), svg.as_bytes())
}

/// One statistic of a K's errors, drawn as a line.
type KStat = fn(&KStats) -> f64;

/// The error distribution per K (ulps, log scale) against K (log scale): the median, 90th and
/// 99th percentiles (at histogram resolution, [`KStats::quantile_ulp`]), the mean and the max.
fn plot(svg: &mut String, s: &Summary) -> Result<(), String> {
    let floor = 1e-3;
    let lines: [(&str, RGBColor, KStat); 5] = [
        ("max", RED, |k| k.max_ulp),
        ("99th percentile", MAGENTA, |k| k.quantile_ulp(0.99)),
        ("90th percentile", RGBColor(0, 140, 0), |k| {
            k.quantile_ulp(0.90)
        }),
        ("median", BLACK, |k| k.quantile_ulp(0.5)),
        ("mean", BLUE, |k| k.mean_ulp),
    ];
    let ks: Vec<f64> = s.per_k.iter().map(|k| k.k as f64).collect();
    let kmin = ks.iter().copied().fold(f64::INFINITY, f64::min).max(1.0);
    let kmax = ks.iter().copied().fold(1.0, f64::max);
    let ymax = s.per_k.iter().map(|k| k.max_ulp).fold(1.0, f64::max) * 2.0;
    let who = match (&s.preset, &s.gpu, &s.instr) {
        (Some(p), Some(g), Some(i)) => format!("nvidia {p} ({g} through {i})"),
        (Some(p), _, _) => format!("nvidia {p}"),
        _ => format!("{} ({})", s.acc, s.rounding),
    };
    let out = if s.out_format == "fp32" {
        String::new()
    } else {
        format!(" -> {}", s.out_format)
    };
    let who = match (&s.dataflow, s.rows) {
        (Some(d), Some(r)) => format!("{who}, {d} {r} rows x w {}", s.width),
        _ => who,
    };
    let who = match s.promote_every {
        Some(n) => format!("{who}, FP32 promotion every {n}"),
        None => who,
    };
    let caption = format!(
        "{who}, {} x {}{out}, {} inputs: error distribution vs K ({} samples per K)",
        s.format_a,
        s.format_b,
        serde_json::to_string(&s.dist)
            .unwrap_or_default()
            .trim_matches('"'),
        s.samples
    );
    let series: Vec<Series> = lines
        .iter()
        .map(|(label, color, stat)| Series {
            label: (*label).into(),
            points: s
                .per_k
                .iter()
                .map(|k| (k.k as f64, stat(k).max(floor)))
                .collect(),
            color: color.to_rgba(),
            width: 2,
            markers: true,
        })
        .collect();
    let y_desc = format!(
        "error, ulps of {} (log scale; 0 drawn at 1e-3)",
        s.out_format.to_uppercase()
    );
    let plot = Plot {
        size: (800, 500),
        caption: &caption,
        x: ((kmin / 1.5)..(kmax * 1.5), true),
        y: (floor..ymax, true),
        x_desc: "K (log scale)",
        y_desc: &y_desc,
        legend: SeriesLabelPosition::UpperLeft,
    };
    line_plot(svg, &plot, &series)
}
