//! `tcrtl workload run`: every layer of a SCALE-Sim topology file (`docs/workloads.md`) as a
//! random GEMM on the clocked core (ideal memory path), each checked against the independent
//! references of `verify` (whole, or a seeded sample of D for large layers), reported as
//! `layers.csv` and `summary.json` in `--out` and one line per layer. The parsing, the
//! lowering and the checks are the library's (`tensorcore_rtl::workload`); this file folds
//! them into a command.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use tensorcore_rtl::gemm::{self, CoreConfig, Gemm, Problem};
use tensorcore_rtl::hw::Traffic;
use tensorcore_rtl::io::bounded::{read_text_bounded, MAX_TEXT_BYTES};
use tensorcore_rtl::io::output::{self, write_file};
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::FP32;
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow};
use tensorcore_rtl::verify::gemm_ref::Reference;
use tensorcore_rtl::workload::{
    self, analytic, check_layer, layer_seed, scalesim_cycles, Analytic, LayerCheck, LayerKind,
    Topology,
};

use super::array::ArrayArgs;
use super::values;

/// `--acc` of `tcrtl workload run`: the modes the clocked tensor core runs (no `exact`).
const ACC_HELP: &str = "Accumulation mode: ieee (default), fused, nvidia (needs --preset)";

/// Arguments of `tcrtl workload`.
#[derive(Args, Debug)]
pub struct WorkloadArgs {
    #[command(subcommand)]
    what: WorkloadCommand,
}

#[derive(Subcommand, Debug)]
enum WorkloadCommand {
    /// Runs every layer of a SCALE-Sim topology CSV (convolution or GEMM format) on the
    /// clocked core and writes layers.csv and summary.json into --out.
    Run(RunArgs),
}

/// Arguments of `tcrtl workload run`.
#[derive(Args, Debug)]
#[command(mut_arg("acc", |a| a.help(ACC_HELP)))]
pub struct RunArgs {
    /// The topology: SCALE-Sim's convolution CSV (Layer name, IFMAP Height, IFMAP Width,
    /// Filter Height, Filter Width, Channels, Num Filter, Strides) or GEMM CSV (Layer, M, N,
    /// K), told apart by the header.
    #[arg(value_name = "TOPOLOGY.csv")]
    topology: PathBuf,
    /// Output directory (created if missing) for layers.csv and summary.json.
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    array: ArrayArgs,
    #[command(flatten)]
    arith: values::ArithArgs,
    /// Products per PE step w: 1, 2, 4, 8, 16 or 32.
    #[arg(long, default_value_t = 1)]
    width: usize,
    /// Seed of the run: layer i's operands come from a seed derived from this and i.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Check the whole of D when a layer's M * N * K is at most this; above it, check
    /// --samples elements of D chosen by the seed.
    #[arg(long, default_value_t = 1 << 22, value_name = "MACS")]
    max_check: u64,
    /// Elements of D checked in a layer above --max-check.
    #[arg(long, default_value_t = 256, value_name = "N")]
    samples: usize,
    /// The memory path: only `ideal` (a zero-latency operand store) in this version.
    #[arg(long, default_value = "ideal", value_name = "ideal")]
    memory: String,
    /// Print the summary as one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Simulate nothing: every layer's cycles and operand-store traffic from the documented
    /// formulas (docs/timing.md, docs/cli.md), the whole network in well under a second.
    /// Without it the report shows the formulas' figures beside the measured ones.
    #[arg(long)]
    analytic: bool,
    /// Whose cycles the report's `cycles` column and totals give: `model` (this core's own:
    /// overlapped folds, pipeline latency, preload and drain; the default) or `scalesim`
    /// (SCALE-Sim's compute cycles for the same array and dataflow, docs/timing.md; needs
    /// --width 1, SCALE-Sim's one MAC per PE a cycle). Both are in layers.csv either way.
    #[arg(long, default_value = "model", value_name = "model|scalesim")]
    timing: String,
    /// Layers simulated at once, each on its own thread (1 to 256; the report is the same for
    /// any count, but for the wall-clock figures).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,
}

/// The files `workload run` writes into `--out`.
const OUTPUTS: [&str; 3] = ["layers.csv", "summary.json", "layers.svg"];

/// Runs `tcrtl workload`.
pub fn run(args: &WorkloadArgs) -> Result<i32, String> {
    match &args.what {
        WorkloadCommand::Run(a) => run_topology(a),
    }
}

/// One layer's result.
struct LayerResult {
    name: String,
    kind: LayerKind,
    m: usize,
    n: usize,
    k: usize,
    seed: u64,
    cycles: u64,
    tiles: usize,
    utilization: f64,
    macs: u64,
    check: LayerCheck,
    sim_seconds: f64,
    /// What the formulas say of the layer.
    analytic: Analytic,
    /// This core's cycles (simulated, or the formulas' with --analytic).
    model_cycles: u64,
    /// SCALE-Sim's compute cycles for the layer on the same array and dataflow.
    scalesim: u64,
    /// The traffic the run counted (the formulas' with --analytic).
    traffic: Traffic,
}

impl LayerResult {
    /// The measured cycles and traffic equal the formulas'.
    fn agrees(&self) -> bool {
        self.model_cycles == self.analytic.cycles && self.traffic == self.analytic.traffic
    }
}

/// The core a run builds (from --format, --acc, --preset, --width and the array), and the
/// preset for the nvidia reference.
fn core_config(args: &RunArgs) -> Result<(CoreConfig, Option<Preset>), String> {
    if let Some((a, b)) = args.arith.int_formats()? {
        let mode = IntMode {
            a,
            b,
            overflow: IntOverflow::Wrap,
        };
        let cfg = CoreConfig::new(a.container(), b.container(), AccMode::Int(mode), args.width);
        return Ok((args.array.apply(cfg)?, None));
    }
    let values::Arith {
        fmt_a,
        fmt_b,
        mode,
        preset,
    } = args.arith.resolve_datapath(FP32)?;
    let cfg = CoreConfig::new(fmt_a, fmt_b, mode, args.width).with_acc(FP32);
    Ok((args.array.apply(cfg)?, preset))
}

/// Runs `tcrtl workload run`.
fn run_topology(args: &RunArgs) -> Result<i32, String> {
    if !args.memory.eq_ignore_ascii_case("ideal") {
        return Err(format!(
            "--memory {}: workload run takes the ideal memory path only (run one layer through \
             the TMA path with tcrtl gemm --memory tma)",
            args.memory
        ));
    }
    let shown = args.topology.display();
    let text = read_text_bounded(&args.topology, MAX_TEXT_BYTES, "a topology")
        .map_err(|e| format!("{shown}: {e}"))?;
    let topo = workload::parse(&text).map_err(|e| format!("{shown}: {e}"))?;
    let (cfg, preset) = core_config(args)?;
    let scalesim_timing = match args.timing.as_str() {
        "model" => false,
        "scalesim" if cfg.width == 1 => true,
        "scalesim" => {
            return Err(format!(
                "--timing scalesim with --width {}: SCALE-Sim's PE does one MAC a cycle (use \
                 --width 1)",
                cfg.width
            ))
        }
        other => return Err(format!("--timing {other}: model or scalesim")),
    };
    // Every layer's size, and the reference, before any layer runs.
    for l in &topo.layers {
        let (m, n, k) = l.gemm();
        values::check_size(m, n, k).map_err(|e| format!("layer {}: {e}", l.name))?;
    }
    let probe = Gemm::random(1, 1, 1, cfg, 0).map_err(|e| e.to_string())?;
    Reference::for_problem(&probe, preset)
        .map_err(|e| format!("no independent reference to check the layers: {e}"))?;
    // The outputs, checked before the first layer runs.
    if args.out.exists() && !args.out.is_dir() {
        return Err(format!("--out {}: not a directory", args.out.display()));
    }
    output::create_dir_all(&args.out).map_err(|e| format!("--out {}: {e}", args.out.display()))?;
    let mut plan = OutputPlan::new();
    for name in OUTPUTS {
        plan.add("--out", &args.out.join(name))?;
    }
    let count = topo.layers.len();
    // On a terminal, a bar of layers done with the simulated cycles a second and the time
    // left (indicatif draws nothing elsewhere, where the per-layer lines are the progress).
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(count as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "workload {bar:30} {pos}/{len} layers, {msg} ({eta} left)",
    ) {
        bar.set_style(style);
    }
    let started = std::time::Instant::now();
    let simulated_cycles = std::sync::atomic::AtomicU64::new(0);
    // One layer, start to end (its own seed, problem, run and check: layers are independent,
    // so running them on several threads changes nothing but the order of the progress lines).
    let run_layer = |(i, l): (usize, &workload::Layer)| -> Result<LayerResult, String> {
        let (m, n, k) = l.gemm();
        let seed = layer_seed(args.seed, i);
        let formula = analytic(&cfg, m, n, k);
        let scalesim = scalesim_cycles(cfg.dataflow(), (cfg.rows(), cfg.cols()), m, n, k);
        let macs = (m * n * k) as u64;
        // The report's cycles: this core's, or SCALE-Sim's with --timing scalesim.
        let shown = |model: u64| if scalesim_timing { scalesim } else { model };
        if args.analytic {
            return Ok(LayerResult {
                name: l.name.clone(),
                kind: l.kind,
                m,
                n,
                k,
                seed,
                cycles: shown(formula.cycles),
                tiles: formula.tiles,
                utilization: utilization(macs, shown(formula.cycles), &cfg),
                macs,
                check: LayerCheck::none(),
                sim_seconds: 0.0,
                analytic: formula,
                model_cycles: formula.cycles,
                scalesim,
                traffic: formula.traffic,
            });
        }
        let g = Gemm::random(m, n, k, cfg, seed).map_err(|e| format!("layer {}: {e}", l.name))?;
        let done = gemm::run(Problem::Dense(&g), None, None)
            .map_err(|e| format!("layer {}: {e}", l.name))?;
        let run = done.run;
        let check = check_layer(
            &g,
            preset,
            &run.out.d,
            args.max_check,
            args.samples,
            seed.rotate_left(17) ^ 0x5EED,
        )
        .map_err(|e| format!("layer {}: {e}", l.name))?;
        let line = format!(
            "layer {}/{count} {}: {m} x {n} x {k}, {} cycles, {:.3} s",
            i + 1,
            l.name,
            run.cycles,
            run.sim_seconds
        );
        if bar.is_hidden() {
            progress(&line);
        } else {
            bar.println(line);
        }
        let total = simulated_cycles.fetch_add(run.cycles, std::sync::atomic::Ordering::Relaxed)
            + run.cycles;
        let rate = total as f64 / started.elapsed().as_secs_f64().max(1e-9);
        bar.set_message(format!("{rate:.3e} cycles/s"));
        bar.inc(1);
        let traffic = run
            .traffic
            .ok_or_else(|| format!("layer {}: the run counted no traffic", l.name))?;
        Ok(LayerResult {
            name: l.name.clone(),
            kind: l.kind,
            m,
            n,
            k,
            seed,
            cycles: shown(run.cycles),
            tiles: run.tiles,
            utilization: utilization(macs, shown(run.cycles), &cfg),
            macs,
            check,
            sim_seconds: run.sim_seconds,
            analytic: formula,
            model_cycles: run.cycles,
            scalesim,
            traffic,
        })
    };
    let results: Vec<LayerResult> = if args.threads == 1 {
        topo.layers
            .iter()
            .enumerate()
            .map(run_layer)
            .collect::<Result<_, _>>()?
    } else {
        use rayon::prelude::*;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(args.threads))
            .build()
            .map_err(|e| format!("--threads {}: {e}", args.threads))?;
        // `collect` keeps the topology's order whatever order the layers finish in.
        pool.install(|| {
            topo.layers
                .par_iter()
                .enumerate()
                .map(run_layer)
                .collect::<Result<_, _>>()
        })?
    };
    bar.finish_and_clear();
    let summary = summary_json(args, &topo, &cfg, preset, &results);
    let plot = layers_svg(&results, &cfg)?;
    write_file(
        &args.out.join("layers.csv"),
        layers_csv(&results).as_bytes(),
    )?;
    write_file(
        &args.out.join("summary.json"),
        format!("{summary:#}\n").as_bytes(),
    )?;
    write_file(&args.out.join("layers.svg"), plot.as_bytes())?;
    let bad: usize = results.iter().map(|r| r.check.mismatches.len()).sum();
    if args.json {
        outln!("{summary}");
    } else {
        outln!(
            "workload {} ({} format, {count} layer{}) on {} x {}, {}{}, w = {}, {} x {} {}",
            shown,
            topo.format.name(),
            if count == 1 { "" } else { "s" },
            format_names(&cfg).0,
            format_names(&cfg).1,
            cfg.mode.name(),
            preset.map(|p| format!(" {p}")).unwrap_or_default(),
            cfg.width,
            cfg.rows(),
            cfg.cols(),
            cfg.dataflow()
        );
        for r in &results {
            let tail = if args.analytic {
                "from the formulas (not simulated)".to_string()
            } else if r.agrees() {
                format!(
                    "{}: {} mismatches; the formulas agree",
                    checked_text(&r.check),
                    r.check.mismatches.len()
                )
            } else {
                format!(
                    "{}: {} mismatches; the formulas say {} cycles",
                    checked_text(&r.check),
                    r.check.mismatches.len(),
                    r.analytic.cycles
                )
            };
            outln!(
                "{}: {} x {} x {}, {} cycles, {} tile{}, utilization {:.1}%, B {} bytes read, {tail}",
                r.name,
                r.m,
                r.n,
                r.k,
                r.cycles,
                r.tiles,
                if r.tiles == 1 { "" } else { "s" },
                100.0 * r.utilization,
                r.traffic.b_read_bytes()
            );
        }
        let (cycles, macs, secs) = totals(&results);
        outln!(
            "total: {count} layer{}, {cycles} cycles, {macs} MACs, utilization {:.1}%, {bad} mismatches, {secs:.3} s simulated",
            if count == 1 { "" } else { "s" },
            100.0 * utilization(macs, cycles, &cfg)
        );
        outln!(
            "written: {}, {}, {}",
            args.out.join("layers.csv").display(),
            args.out.join("summary.json").display(),
            args.out.join("layers.svg").display()
        );
    }
    Ok(if bad == 0 { 0 } else { 1 })
}

/// The operand formats' names: the integer formats' own (`s8`, ...) rather than their lane
/// containers'.
fn format_names(cfg: &CoreConfig) -> (&'static str, &'static str) {
    match cfg.mode {
        AccMode::Int(im) => (im.a.name, im.b.name),
        _ => (cfg.fmt_a.name, cfg.fmt_b.name),
    }
}

/// `layers.svg`: a bar chart of each layer's cycles above one of its utilization (in
/// percent), the layers in the topology's order.
fn layers_svg(results: &[LayerResult], cfg: &CoreConfig) -> Result<String, String> {
    use plotters::prelude::{Color, BLUE, RED};
    let labels: Vec<String> = results.iter().map(|r| r.name.clone()).collect();
    let mut svg = String::new();
    let (w, h) = (960u32, 420u32);
    let mut cycles_svg = String::new();
    super::plot::bar_plot(
        &mut cycles_svg,
        (w, h),
        &format!(
            "cycles per layer ({} x {} {}, w = {})",
            cfg.rows(),
            cfg.cols(),
            cfg.dataflow(),
            cfg.width
        ),
        "cycles",
        &labels,
        &[super::plot::Stack {
            label: "cycles".into(),
            color: BLUE.to_rgba(),
            values: results.iter().map(|r| r.cycles as f64).collect(),
        }],
    )?;
    let mut util_svg = String::new();
    super::plot::bar_plot(
        &mut util_svg,
        (w, h),
        "utilization per layer (%)",
        "utilization (%)",
        &labels,
        &[super::plot::Stack {
            label: "utilization".into(),
            color: RED.to_rgba(),
            values: results.iter().map(|r| 100.0 * r.utilization).collect(),
        }],
    )?;
    // The two charts one above the other in one document.
    svg.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{}\">\n",
        2 * h
    ));
    for (k, part) in [cycles_svg, util_svg].iter().enumerate() {
        svg.push_str(&format!(
            "<g transform=\"translate(0,{})\">\n",
            k as u32 * h
        ));
        svg.push_str(strip_xml_header(part));
        svg.push_str("</g>\n");
    }
    svg.push_str("</svg>\n");
    Ok(svg)
}

/// An SVG document without its XML declaration, to nest it in another.
fn strip_xml_header(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

/// A progress line on standard error (a failing standard error is ignored).
fn progress(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// `checked 288 of 288 against ieee_dot` or `sampled 256 of 11881*64 against ieee_dot`.
fn checked_text(c: &LayerCheck) -> String {
    if c.complete() {
        format!(
            "checked {} of {} against {}",
            c.checked, c.total, c.reference
        )
    } else {
        format!(
            "sampled {} of {} against {}",
            c.checked, c.total, c.reference
        )
    }
}

/// Total cycles, MACs and simulated seconds.
fn totals(results: &[LayerResult]) -> (u64, u64, f64) {
    results.iter().fold((0, 0, 0.0), |(c, m, s), r| {
        (c + r.cycles, m + r.macs, s + r.sim_seconds)
    })
}

/// `macs / (cycles * R * C * w)`.
fn utilization(macs: u64, cycles: u64, cfg: &CoreConfig) -> f64 {
    let offered = cycles as f64 * (cfg.rows() * cfg.cols() * cfg.width) as f64;
    if offered > 0.0 {
        macs as f64 / offered
    } else {
        0.0
    }
}

/// A CSV field: quoted when it holds a comma or a quote.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `layers.csv`: one row per layer in the topology's order.
fn layers_csv(results: &[LayerResult]) -> String {
    let mut csv = String::from(
        "layer,m,n,k,cycles,tiles,utilization,macs,checked,mismatches,sim_seconds,\
         analytic_cycles,a_read_bytes,b_read_bytes,c_read_bytes,d_write_bytes,model_cycles,\
         scalesim_cycles\n",
    );
    for r in results {
        let t = &r.traffic;
        csv.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            csv_field(&r.name),
            r.m,
            r.n,
            r.k,
            r.cycles,
            r.tiles,
            r.utilization,
            r.macs,
            r.check.checked,
            r.check.mismatches.len(),
            r.sim_seconds,
            r.analytic.cycles,
            t.a_read_bytes(),
            t.b_read_bytes(),
            t.c_read_bytes(),
            t.d_write_bytes(),
            r.model_cycles,
            r.scalesim
        ));
    }
    csv
}

/// `summary.json`: the core, each layer, the totals.
fn summary_json(
    args: &RunArgs,
    topo: &Topology,
    cfg: &CoreConfig,
    preset: Option<Preset>,
    results: &[LayerResult],
) -> serde_json::Value {
    let (cycles, macs, secs) = totals(results);
    let bad: usize = results.iter().map(|r| r.check.mismatches.len()).sum();
    serde_json::json!({
        "topology": path_text(&args.topology),
        "topology_format": topo.format.name(),
        "core": {
            "format": format_names(cfg).0, "format_b": format_names(cfg).1,
            "acc": cfg.mode.name(), "preset": preset.map(|p| p.name()), "width": cfg.width,
            "out_format": cfg.acc.name,
            "rows": cfg.rows(), "cols": cfg.cols(), "dataflow": cfg.dataflow().name(),
            "memory": "ideal",
        },
        "seed": args.seed,
        "simulated": !args.analytic,
        "timing": args.timing,
        "max_check": args.max_check,
        "samples": args.samples,
        "layers": results.iter().map(|r| {
            let conv = match r.kind {
                LayerKind::Conv(c) => {
                    let (oh, ow) = c.ofmap();
                    serde_json::json!({
                        "ifmap_h": c.ifmap_h, "ifmap_w": c.ifmap_w, "filt_h": c.filt_h,
                        "filt_w": c.filt_w, "channels": c.channels,
                        "num_filters": c.num_filters, "stride": c.stride,
                        "ofmap_h": oh, "ofmap_w": ow,
                    })
                }
                LayerKind::Gemm { .. } => serde_json::Value::Null,
            };
            serde_json::json!({
                "layer": r.name, "m": r.m, "n": r.n, "k": r.k, "conv": conv, "seed": r.seed,
                "cycles": r.cycles, "tiles": r.tiles, "utilization": r.utilization,
                "macs": r.macs, "reference": r.check.reference, "checked": r.check.checked,
                "elements": r.check.total, "sampled": !r.check.complete(),
                "mismatches": r.check.mismatches.len(), "sim_seconds": r.sim_seconds,
                "traffic": traffic_json(&r.traffic),
                "model_cycles": r.model_cycles, "scalesim_cycles": r.scalesim,
                "analytic": {
                    "cycles": r.analytic.cycles, "traffic": traffic_json(&r.analytic.traffic),
                    "agrees": r.agrees(),
                },
            })
        }).collect::<Vec<_>>(),
        "totals": {
            "layers": results.len(), "cycles": cycles, "macs": macs,
            "utilization": utilization(macs, cycles, cfg), "mismatches": bad,
            "sim_seconds": secs,
        },
    })
}

/// A traffic object in bytes.
fn traffic_json(t: &Traffic) -> serde_json::Value {
    serde_json::json!({
        "a_read_bytes": t.a_read_bytes(), "b_read_bytes": t.b_read_bytes(),
        "c_read_bytes": t.c_read_bytes(), "d_write_bytes": t.d_write_bytes(),
    })
}

fn path_text(p: &Path) -> String {
    p.display().to_string()
}
