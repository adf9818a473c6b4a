//! `tcrtl memsweep`: one GEMM through the memory path over a grid of global-memory bandwidths
//! and latencies (and stage counts), against the roofline bound. Writes `memsweep.csv`,
//! `memsweep.json` and `memsweep.svg` (utilization against bandwidth, one line per latency and
//! stage setting, the roofline drawn beside) into `--out`.
//!
//! The roofline bound of a run is `min(1, AI x bandwidth / peak)` with the arithmetic
//! intensity `AI` = useful MACs / bytes moved (loads plus stores, as the schedule moves them)
//! and `peak` = `R x C x w` MACs a cycle, computed by the library's
//! `tensorcore_rtl::gemm::roofline`.

use super::array::ArrayArgs;
use super::memory::MemArgs;
use super::plot::{line_plot, Plot, Series};
use clap::Args;
use plotters::prelude::{Color, Palette, Palette99, SeriesLabelPosition, BLACK};
use std::path::{Path, PathBuf};
use tensorcore_rtl::gemm::{roofline, run_memory, CoreConfig, Gemm};
use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::{MemLayout, MemPortConfig};
use tensorcore_rtl::io::output::{self, write_file};
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::par::{try_par_map, Threads};

/// Arguments of `tcrtl memsweep`.
#[derive(Args, Debug)]
pub struct MemSweepArgs {
    /// Rows of the random FP16 problem.
    #[arg(long, default_value_t = 256)]
    m: usize,
    /// Columns.
    #[arg(long, default_value_t = 256)]
    n: usize,
    /// Inner dimension.
    #[arg(long, default_value_t = 256)]
    k: usize,
    /// Seed of the problem.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Bandwidths in bytes per cycle.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64")]
    bandwidths: Vec<u32>,
    /// Latencies in cycles.
    #[arg(long, value_delimiter = ',', default_value = "0,250,500,1000,2000")]
    latencies: Vec<u32>,
    /// Stage counts: `auto` (enough to cover the latency) and/or fixed numbers.
    #[arg(long, value_delimiter = ',', default_value = "auto,4")]
    stages: Vec<String>,
    /// Requests in flight (default 4096, so that buffering, not the request table, limits).
    #[arg(long, default_value_t = 4096)]
    inflight: u32,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Output directory (created if missing).
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    mem: MemArgs,
    #[command(flatten)]
    array: ArrayArgs,
}

/// The files a sweep writes into `--out`.
const OUTPUTS: [&str; 3] = ["memsweep.csv", "memsweep.json", "memsweep.svg"];

/// One point of the sweep.
#[derive(Clone, Debug, serde::Serialize)]
struct Point {
    bandwidth: u32,
    latency: u32,
    stages_setting: String,
    stages: usize,
    cycles: u64,
    utilization: f64,
    roofline: f64,
    arithmetic_intensity: f64,
    bytes_loaded: u64,
    bytes_stored: u64,
    stall_cycles: u64,
    bank_conflicts: u64,
}

/// Runs `tcrtl memsweep`.
pub fn run(args: &MemSweepArgs) -> Result<i32, String> {
    // What the options derive is checked before any folder, allocation or run: the
    // problem's shape (the limits of `tcrtl gemm`), the memory options the grid would
    // override, and an --out that is not a directory.
    super::values::check_size(args.m, args.n, args.k)?;
    if let Some((given, grid)) = args.mem.swept_option() {
        return Err(format!(
            "{given} is set per point by memsweep's grid: use {grid} instead"
        ));
    }
    if args.out.exists() && !args.out.is_dir() {
        return Err(format!("--out {}: not a directory", args.out.display()));
    }
    // Journaled: a failed or interrupted sweep removes the folders it made.
    output::create_dir_all(&args.out).map_err(|e| format!("--out {}: {e}", args.out.display()))?;
    sweep(args)
}

fn sweep(args: &MemSweepArgs) -> Result<i32, String> {
    // Every output checked before the sweep runs.
    let mut plan = OutputPlan::new();
    for name in OUTPUTS {
        plan.add("--out", &args.out.join(name))?;
    }
    let cfg = args
        .array
        .apply(CoreConfig::new(FP16, FP16, AccMode::Ieee, 1))?;
    let g = Gemm::random(args.m, args.n, args.k, cfg, args.seed).map_err(|e| e.to_string())?;
    let base = args.mem.params()?;
    let mut stage_settings = Vec::new();
    for s in &args.stages {
        let n = if s == "auto" {
            0
        } else {
            s.parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("--stages {s}: `auto` or a positive number"))?
        };
        stage_settings.push((s.clone(), n));
    }
    let mut jobs = Vec::new();
    for (name, st) in &stage_settings {
        for &lat in &args.latencies {
            for &bw in &args.bandwidths {
                let params = MemParams {
                    latency: lat,
                    bytes_per_cycle: bw,
                    requests_in_flight: args.inflight,
                    ..base
                };
                params.validate().map_err(|e| e.to_string())?;
                jobs.push((name.clone(), *st, params));
            }
        }
    }
    // A configuration the memory layout cannot hold (a shared memory too small for two
    // stages, say) is refused once, before the sweep, with the layout's reason.
    if let Some((_, stages, params)) = jobs.first() {
        let pc = MemPortConfig {
            params: *params,
            stages: *stages,
            swizzle: true,
        };
        MemLayout::new(&cfg, g.m, g.n, g.k, &pc).map_err(|e| e.to_string())?;
    }
    let threads = Threads::or_cores(args.threads);
    let points = try_par_map(&jobs, threads, |_, (name, stages, params)| {
        let pc = MemPortConfig {
            params: *params,
            stages: *stages,
            swizzle: true,
        };
        run_memory(&g, &pc, None)
            .map_err(|e| e.to_string())
            .map(|r| {
                let roof = roofline::of_run(&g, &r);
                Point {
                    bandwidth: params.bytes_per_cycle,
                    latency: params.latency,
                    stages_setting: name.clone(),
                    stages: r.layout.stages(),
                    cycles: r.run.run.cycles,
                    utilization: r.run.run.utilization(),
                    roofline: roof.bound,
                    arithmetic_intensity: roof.arithmetic_intensity,
                    bytes_loaded: r.counters.bytes_loaded,
                    bytes_stored: r.counters.bytes_stored,
                    stall_cycles: r.run.stall_cycles,
                    bank_conflicts: r.counters.bank_conflicts,
                }
            })
    })?;
    write_outputs(&args.out, args, &points)?;
    for p in &points {
        outln!(
            "bw {:>3} B/cycle  latency {:>5}  stages {:>4} ({:>2}): utilization {:.3}  roofline {:.3}",
            p.bandwidth, p.latency, p.stages_setting, p.stages, p.utilization, p.roofline
        );
    }
    outln!(
        "written: {}",
        args.out.join("memsweep.{csv,json,svg}").display()
    );
    Ok(0)
}

fn write_outputs(dir: &Path, args: &MemSweepArgs, points: &[Point]) -> Result<(), String> {
    let mut csv = String::from(
        "bandwidth,latency,stages_setting,stages,cycles,utilization,roofline,arithmetic_intensity,bytes_loaded,bytes_stored,stall_cycles,bank_conflicts\n",
    );
    for p in points {
        csv.push_str(&format!(
            "{},{},{},{},{},{:.4},{:.4},{:.4},{},{},{},{}\n",
            p.bandwidth,
            p.latency,
            p.stages_setting,
            p.stages,
            p.cycles,
            p.utilization,
            p.roofline,
            p.arithmetic_intensity,
            p.bytes_loaded,
            p.bytes_stored,
            p.stall_cycles,
            p.bank_conflicts
        ));
    }
    write_file(&dir.join("memsweep.csv"), csv.as_bytes())?;
    let json = serde_json::json!({
        "m": args.m, "n": args.n, "k": args.k, "seed": args.seed,
        "format": "fp16", "acc": "ieee", "width": 1,
        "rows": args.array.rows, "cols": args.array.cols,
        "requests_in_flight": args.inflight,
        "points": points,
    });
    write_file(&dir.join("memsweep.json"), format!("{json:#}\n").as_bytes())?;
    let mut svg = String::new();
    plot(&mut svg, args, points)?;
    write_file(&dir.join("memsweep.svg"), svg.as_bytes())
}

/// Utilization against bandwidth (log scale), one line per latency and stage setting (thin for
/// fixed stage counts), the roofline in black.
fn plot(svg: &mut String, args: &MemSweepArgs, points: &[Point]) -> Result<(), String> {
    let max_bw = points
        .iter()
        .map(|p| p.bandwidth)
        .max()
        .unwrap_or(64)
        .max(2);
    let mut groups: Vec<(String, Vec<&Point>)> = Vec::new();
    for p in points {
        let key = format!("latency {} / stages {}", p.latency, p.stages_setting);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(p),
            None => groups.push((key, vec![p])),
        }
    }
    let mut series = Vec::new();
    // The roofline (from the first group's traffic: the schedule moves the same bytes at any
    // latency and bandwidth).
    if let Some((_, first)) = groups.first() {
        series.push(Series {
            label: "roofline min(1, AI x bw / peak)".into(),
            points: first
                .iter()
                .map(|p| (f64::from(p.bandwidth), p.roofline))
                .collect(),
            color: BLACK.to_rgba(),
            width: 3,
            markers: false,
        });
    }
    for (i, (key, pts)) in groups.into_iter().enumerate() {
        let fixed = pts.first().is_some_and(|p| p.stages_setting != "auto");
        series.push(Series {
            label: key,
            points: pts
                .iter()
                .map(|p| (f64::from(p.bandwidth), p.utilization))
                .collect(),
            color: Palette99::pick(i).to_rgba(),
            width: if fixed { 1 } else { 2 },
            markers: true,
        });
    }
    let caption = format!(
        "{} x {} x {} FP16 GEMM through TMA: mesh utilization vs. bandwidth",
        args.m, args.n, args.k
    );
    let plot = Plot {
        size: (900, 560),
        caption: &caption,
        x: (1.0..f64::from(max_bw), true),
        y: (0.0..1.05, false),
        x_desc: "global-memory bandwidth (bytes/cycle, log scale)",
        y_desc: "utilization",
        legend: SeriesLabelPosition::LowerRight,
    };
    line_plot(svg, &plot, &series)
}
