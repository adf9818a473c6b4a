//! `tcrtl workload run`: the layers of one shard of a topology, each run and checked on its
//! own (on `--threads` threads), a checkpoint of the report after every finished layer while
//! some are still to run (so an interrupt leaves a partial report that says so), and the
//! final report; `--resume` continues from a checkpoint. With `--split rows` a shard runs its
//! tile rows of every layer instead ([`RowSplit`]), its rows of D written beside the report
//! for `merge`, the whole layer's cycles and traffic from the exact formulas.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use serde_json::{json, Map, Value};
use tensorcore_rtl::gemm::{self, CoreConfig, Gemm, Problem};
use tensorcore_rtl::hw::ws::ACC_ROWS;
use tensorcore_rtl::hw::{Dataflow, MemPortConfig};
use tensorcore_rtl::io::bounded::{read_text_bounded, MAX_TEXT_BYTES};
use tensorcore_rtl::io::npy::{npy_bytes, Dtype};
use tensorcore_rtl::io::output::{commit_staged, write_file};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::FP32;
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow};
use tensorcore_rtl::verify::gemm_ref::Reference;
use tensorcore_rtl::workload::{
    self, analytic, check_layer, check_layer_rows, layer_seed, rows_of, scalesim_cycles, Layer,
    LayerCheck, LayerKind, Topology,
};

use super::operands::{self, OperandFiles};
use super::report::{self, LayerRecord, Report, Shape, TrafficBytes};
use crate::cli::array::ArrayArgs;
use crate::cli::energy::{self as energy_cli, EnergyArgs};
use crate::cli::memory::{self as memory_cli, MemArgs, MemoryPath};
use crate::cli::shard::{self, Shard};
use crate::cli::values;

/// `--acc` of `tcrtl workload run`: the modes the clocked tensor core runs (no `exact`).
const ACC_HELP: &str = "Accumulation mode: ieee (default), fused, nvidia (needs --preset or --gpu)";

/// `--clock-ghz` of `tcrtl workload run`: taken with or without `--energy`.
const CLOCK_HELP: &str = "The clock in GHz (default 1): each layer's simulated_seconds is its \
                          cycles at this clock; with --energy also the clock the average power \
                          is given at";

/// Arguments of `tcrtl workload run`.
#[derive(Args, Debug)]
#[command(mut_arg("acc", |a| a.help(ACC_HELP)))]
#[command(mut_arg("clock_ghz", |a| a
    .requires(clap::builder::Resettable::<clap::Id>::Reset)
    .help(CLOCK_HELP)))]
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
    /// Integer formats only: clamp each PE step's exact sum to the int32 range (PTX
    /// `.satfinite`) instead of wrapping, as tcrtl gemm --satfinite.
    #[arg(long)]
    satfinite: bool,
    /// Seed of the run: layer i's operands come from a seed derived from this and i (and its
    /// sampled check, also with --operands).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Check the whole of D when a layer's M * N * K is at most this; above it, check
    /// --samples elements of D chosen by the seed.
    #[arg(long, default_value_t = 1 << 22, value_name = "MACS")]
    max_check: u64,
    /// Elements of D checked in a layer above --max-check.
    #[arg(long, default_value_t = 256, value_name = "N")]
    samples: usize,
    /// The memory path: `ideal` (a zero-latency operand store) or `tma` (global memory, TMA
    /// loads into shared-memory stages, TMA store of D; docs/memory.md; output-stationary
    /// only).
    #[arg(long, default_value = "ideal", value_name = "ideal|tma")]
    memory: String,
    #[command(flatten)]
    mem: MemArgs,
    /// Operand stages in shared memory with --memory tma (default: enough to cover the
    /// latency at the bandwidth, at most 48).
    #[arg(long, value_name = "N")]
    stages: Option<usize>,
    /// Lay the operand tiles out unswizzled in shared memory (--memory tma).
    #[arg(long)]
    no_swizzle: bool,
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
    /// Run only shard I of N: the layers i with i mod N = I (e.g. 2/8), for `workload merge`;
    /// `slurm` takes I and N from a Slurm array task (SLURM_ARRAY_TASK_ID,
    /// SLURM_ARRAY_TASK_COUNT).
    #[arg(long, default_value = "0/1", value_name = "I/N|slurm")]
    shard: String,
    /// What a shard is: `layers` (every N-th layer, the default) or `rows` (every N-th tile
    /// row of every layer: R rows of M in os, 1024-row chunks of A in ws; for one large
    /// layer; the whole layer's cycles and traffic from the exact formulas of the ideal
    /// memory path, merged by `workload merge`).
    #[arg(long, default_value = "layers", value_name = "layers|rows")]
    split: String,
    /// Real operands instead of random ones: layer NAME reads DIR/NAME.a.npy (M x K),
    /// DIR/NAME.b.npy (K x N) and, if present, DIR/NAME.c.npy (M x N, else zeros), in the
    /// dtypes of tcrtl gemm --a/--b/--c (integer formats: int8, uint8, int16, int32 or int64
    /// values in the format's range, C int32); each file fingerprinted in the report.
    #[arg(long, value_name = "DIR")]
    operands: Option<PathBuf>,
    #[command(flatten)]
    energy: EnergyArgs,
    /// Continue the interrupted run whose partial report is in --out (same topology, options,
    /// seed and shard): only its pending layers run.
    #[arg(long)]
    resume: bool,
    /// Stop after this many layers have finished, leaving the partial report an interrupt
    /// leaves (exit 130); for tests of --resume.
    #[arg(long, hide = true, value_name = "N")]
    stop_after: Option<usize>,
}

/// The exit code of a run stopped before its last layer (as a shell reports SIGINT).
const STOPPED: i32 = 130;

/// The core a run builds (from --format, --acc, --preset, --width and the array), and the
/// preset for the nvidia reference.
fn core_config(args: &RunArgs) -> Result<(CoreConfig, Option<Preset>), String> {
    if let Some((a, b)) = args.arith.int_formats()? {
        let mode = IntMode {
            a,
            b,
            overflow: if args.satfinite {
                IntOverflow::SatFinite
            } else {
                IntOverflow::Wrap
            },
        };
        let cfg = CoreConfig::new(a.container(), b.container(), AccMode::Int(mode), args.width);
        return Ok((args.array.apply(cfg)?, None));
    }
    if args.satfinite {
        return Err("--satfinite applies to the integer formats (s8, u8, s4, u4) only".into());
    }
    let values::Arith {
        fmt_a,
        fmt_b,
        mode,
        preset,
        ..
    } = args.arith.resolve_datapath(FP32)?;
    let cfg = CoreConfig::new(fmt_a, fmt_b, mode, args.width).with_acc(FP32);
    Ok((args.array.apply(cfg)?, preset))
}

/// The operand formats' names: the integer formats' own (`s8`, ...) rather than their lane
/// containers'.
fn format_names(cfg: &CoreConfig) -> (&'static str, &'static str) {
    match cfg.mode {
        AccMode::Int(im) => (im.a.name, im.b.name),
        _ => (cfg.fmt_a.name, cfg.fmt_b.name),
    }
}

/// What identifies a run in its `summary.json` (with the topology's fingerprint, added by the
/// caller): the topology (its path, format and number of layers), the core, the options that
/// change results, the seed, the shard, the operands, the memory path and the energy table.
fn run_header(
    args: &RunArgs,
    topo: &Topology,
    cfg: &CoreConfig,
    preset: Option<Preset>,
    shard: Shard,
    operands: Option<&OperandFiles>,
    mem_cfg: Option<&MemPortConfig>,
) -> Map<String, Value> {
    let energy = &args.energy;
    let header = json!({
        "topology": args.topology.display().to_string(),
        "topology_format": topo.format.name(),
        "topology_layers": topo.layers.len(),
        "core": {
            "format": format_names(cfg).0, "format_b": format_names(cfg).1,
            "acc": cfg.mode.name(), "preset": preset.map(|p| p.name()), "width": cfg.width,
            "out_format": cfg.acc.name,
            "rows": cfg.rows(), "cols": cfg.cols(), "dataflow": cfg.dataflow().name(),
            "memory": if mem_cfg.is_some() { "tma" } else { "ideal" },
        },
        "seed": args.seed,
        "simulated": !args.analytic,
        "timing": args.timing,
        "max_check": args.max_check,
        "samples": args.samples,
        "shard": shard.text(),
        "operands": operands.map_or("random".to_string(), OperandFiles::text),
    });
    // --energy's table and clock, --memory tma's parameters (each absent without its
    // option, so other reports keep their keys).
    let mut header = header;
    // Checked by `core_config` before the run.
    let rule = args.arith.rule().ok().flatten();
    if let AccMode::Int(im) = cfg.mode {
        header["core"]["overflow"] = json!(im.overflow.name());
    }
    // The GPU and instruction whose rule nvidia runs (absent for the other modes).
    if let Some(r) = rule {
        header["core"]["gpu"] = json!(r.gpu.name());
        header["core"]["instr"] = json!(r.instr.name());
    }
    if let Some(pc) = mem_cfg {
        header["memory_path"] = json!({
            "params": memory_cli::params_json(&pc.params),
            "stages": args.stages,
            "swizzle": pc.swizzle,
        });
    }
    let clock_ghz = energy.clock_ghz.unwrap_or(energy_cli::DEFAULT_CLOCK_GHZ);
    header["clock_ghz"] = json!(clock_ghz);
    if energy.energy {
        header["energy"] = json!({
            "tech": energy.tech.as_deref().unwrap_or("45nm"),
            "clock_ghz": clock_ghz,
        });
    }
    match header {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A convolution's shape in the report (`null` for a GEMM row).
fn conv_json(kind: LayerKind) -> Value {
    match kind {
        LayerKind::Conv(c) => {
            let (oh, ow) = c.ofmap();
            json!({
                "ifmap_h": c.ifmap_h, "ifmap_w": c.ifmap_w, "filt_h": c.filt_h,
                "filt_w": c.filt_w, "channels": c.channels,
                "num_filters": c.num_filters, "stride": c.stride,
                "ofmap_h": oh, "ofmap_w": ow,
            })
        }
        LayerKind::Gemm { .. } => Value::Null,
    }
}

/// The finished layers of the run and its checkpoints.
struct Progress {
    records: Vec<LayerRecord>,
    /// Layers finished by this process (the count `--stop-after` looks at).
    finished_here: usize,
}

/// Runs `tcrtl workload run`.
pub fn run_topology(args: &RunArgs) -> Result<i32, String> {
    let memory_path = match args.memory.to_ascii_lowercase().as_str() {
        "ideal" => MemoryPath::Ideal,
        "tma" => MemoryPath::Tma,
        other => return Err(format!("--memory {other}: ideal or tma")),
    };
    let mem_cfg = memory_cli::port_config(memory_path, &args.mem, args.stages, args.no_swizzle)?;
    let shard = shard::parse(&args.shard)?;
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
    if mem_cfg.is_some() {
        if args.analytic {
            return Err("--analytic models the ideal memory path only (not --memory tma)".into());
        }
        if matches!(cfg.mode, AccMode::Int(im) if im.a.bits < 8 || im.b.bits < 8) {
            return Err(
                "--memory tma moves whole bytes: 4-bit integer operands (s4, u4) run \
                        on the ideal memory path"
                    .into(),
            );
        }
    }
    // --energy: checked before any layer runs (either dataflow); --clock-ghz with or without.
    let clock_ghz = args
        .energy
        .clock_ghz
        .unwrap_or(energy_cli::DEFAULT_CLOCK_GHZ);
    if !(clock_ghz.is_finite() && clock_ghz > 0.0) {
        return Err(format!(
            "--clock-ghz must be a positive number of GHz, not {clock_ghz}"
        ));
    }
    let energy_plan = args.energy.plan()?;
    if energy_plan.is_some() && args.analytic {
        return Err("--energy needs a simulated run (not --analytic)".into());
    }
    // Every layer's size, and the reference, before any layer runs.
    for l in &topo.layers {
        let (m, n, k) = l.gemm();
        values::check_size(m, n, k).map_err(|e| format!("layer {}: {e}", l.name))?;
    }
    let probe = Gemm::random(1, 1, 1, cfg, 0).map_err(|e| e.to_string())?;
    Reference::for_problem(&probe, preset)
        .map_err(|e| format!("no independent reference to check the layers: {e}"))?;
    let shape = Shape {
        rows: cfg.rows(),
        cols: cfg.cols(),
        width: cfg.width,
        dataflow: cfg.dataflow(),
        clock_ghz,
    };
    let count = topo.layers.len();
    let split = match args.split.as_str() {
        "layers" => None,
        "rows" => {
            // The whole layer's cycles and traffic come from the formulas: only where they
            // are exact (the ideal memory path) and nothing else is summed from the run.
            let refuse = |why: &str| Err(format!("--split rows: {why} (use --split layers)"));
            if mem_cfg.is_some() {
                return refuse(
                    "a layer's cycles through --memory tma depend on the whole layer's memory \
                     traffic and have no exact formula to take them from",
                );
            }
            if energy_plan.is_some() || args.energy.energy {
                return refuse("a layer's energy is not the sum of its rows' (--energy)");
            }
            if args.analytic {
                return refuse("--analytic simulates nothing, so there is nothing to split");
            }
            (shard.count > 1).then(|| RowSplit {
                unit: match cfg.dataflow() {
                    Dataflow::Os => cfg.rows(),
                    Dataflow::Ws => ACC_ROWS,
                },
                shard,
            })
        }
        other => return Err(format!("--split {other}: layers or rows")),
    };
    // A layer split shard runs its layers; a row split shard a part of every layer.
    let selected: Vec<usize> = (0..count)
        .filter(|&i| split.is_some() || shard.owns(i as u64))
        .collect();
    // Operand files: every file of the shard's layers there, in its shape, before any runs.
    // Every layer's files are checked and fingerprinted (not only this shard's), so that the
    // reports of all shards name the same files.
    let (operands, prints) = match &args.operands {
        Some(dir) => {
            let files = OperandFiles::new(dir)?;
            for (i, l) in topo.layers.iter().enumerate() {
                files.check(i, l, &cfg)?;
            }
            let prints = files.fingerprints(&topo.layers)?;
            (Some(files), prints)
        }
        None => (None, Map::new()),
    };
    let mut header = run_header(
        args,
        &topo,
        &cfg,
        preset,
        shard,
        operands.as_ref(),
        mem_cfg.as_ref(),
    );
    header.insert(
        "topology_digest".into(),
        Value::String(report::fnv1a64(text.bytes())),
    );
    if split.is_some() {
        header.insert("split".into(), Value::String("rows".into()));
    }
    if operands.is_some() {
        header.insert(operands::FINGERPRINTS.into(), Value::Object(prints.clone()));
    }
    // What an earlier, interrupted process of the same run finished.
    let resumed = if args.resume {
        resumable(&args.out, &header, &topo, &selected)?
    } else {
        Vec::new()
    };
    let to_run: Vec<usize> = selected
        .iter()
        .copied()
        .filter(|i| !resumed.iter().any(|r| r.index == *i))
        .collect();
    // The outputs, checked before the first layer runs.
    report::plan_out(&args.out)?;
    if split.is_some() {
        report::plan_parts(&args.out)?;
    }
    // On a terminal, a bar of layers done with the simulated cycles a second and the time
    // left (indicatif draws nothing elsewhere, where the per-layer lines are the progress).
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(to_run.len() as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "workload {bar:30} {pos}/{len} layers, {msg} ({eta} left)",
    ) {
        bar.set_style(style);
    }
    let started = std::time::Instant::now();
    let simulated_cycles = AtomicU64::new(0);
    let stop = AtomicBool::new(args.stop_after == Some(0));
    let progress = Mutex::new(Progress {
        records: resumed,
        finished_here: 0,
    });
    // The report of the layers finished so far, the others pending.
    let report_of = |records: &[LayerRecord]| -> Report {
        let mut records = records.to_vec();
        records.sort_by_key(|r| r.index);
        let pending = selected
            .iter()
            .filter(|i| !records.iter().any(|r| r.index == **i))
            .map(|&i| (i, topo.layers[i].name.clone()))
            .collect();
        Report {
            header: header.clone(),
            shape: shape.clone(),
            records,
            pending,
        }
    };
    // One layer (or, in a row split, this shard's rows of it), start to end: its own seed,
    // problem, run and check. Layers are independent, so running them on several threads
    // changes nothing but the order of the progress lines.
    let layer_record = |i: usize| -> Result<LayerRecord, String> {
        let l = &topo.layers[i];
        let (layer_m, n, k) = l.gemm();
        let seed = layer_seed(args.seed, i);
        // A row split's shard runs the rows of its tile rows; otherwise the whole layer.
        let rows = split.map(|s| s.rows(layer_m));
        let m = rows.as_ref().map_or(layer_m, Vec::len);
        if m == 0 {
            // A part without rows (the layer has fewer tile rows than shards).
            bar.inc(1);
            let whole = whole_layer(&cfg, i, l, seed, "none", scalesim_timing, &shape);
            let part = split.map(|s| s.part_json(&whole, 0, None));
            return Ok(empty_part(i, l, seed, part));
        }
        let formula = analytic(&cfg, m, n, k);
        let scalesim = scalesim_cycles(cfg.dataflow(), (cfg.rows(), cfg.cols()), m, n, k);
        let macs = (m * n * k) as u64;
        // The report's cycles: this core's, or SCALE-Sim's with --timing scalesim.
        let shown = |model: u64| if scalesim_timing { scalesim } else { model };
        let mut record = LayerRecord {
            index: i,
            name: l.name.clone(),
            conv: conv_json(l.kind),
            m,
            n,
            k,
            seed,
            cycles: shown(formula.cycles),
            tiles: formula.tiles,
            utilization: 0.0,
            mapping_efficiency: report::mapping_efficiency(m, n, k, &shape),
            simulated_seconds: 0.0,
            macs,
            reference: String::new(),
            checked: 0,
            elements: 0,
            mismatches: 0,
            sim_seconds: 0.0,
            analytic_cycles: formula.cycles,
            analytic_traffic: TrafficBytes::from(&formula.traffic),
            agrees: true,
            model_cycles: formula.cycles,
            scalesim_cycles: scalesim,
            traffic: Some(TrafficBytes::from(&formula.traffic)),
            d_digest: None,
            energy: None,
            memory: None,
            part: None,
        };
        let check = if args.analytic {
            LayerCheck::none()
        } else {
            let whole = match &operands {
                Some(files) => files.load(l, cfg, &prints)?,
                None => Gemm::random(layer_m, n, k, cfg, seed)
                    .map_err(|e| format!("layer {}: {e}", l.name))?,
            };
            let g = match &rows {
                Some(r) => rows_of(&whole, r).map_err(|e| format!("layer {}: {e}", l.name))?,
                None => whole,
            };
            let problem = Problem::Dense(&g);
            // With --energy the run counts every signal's toggles.
            let trace = match &energy_plan {
                Some(e) => Some(
                    e.trace(None, &problem, mem_cfg.as_ref())
                        .map_err(|e| format!("layer {}: {e}", l.name))?,
                ),
                None => None,
            };
            let done = gemm::run(problem, mem_cfg.as_ref(), trace.as_ref())
                .map_err(|e| format!("layer {}: {e}", l.name))?;
            record.memory = done
                .memory
                .as_ref()
                .map(|r| memory_cli::memory_json(memory_path, Some(r)));
            if let Some(e) = &energy_plan {
                let estimate = e
                    .estimate(&problem, &done)
                    .map_err(|e| format!("layer {}: {e}", l.name))?;
                record.energy = Some(energy_cli::json(&estimate));
            }
            let run = done.run;
            let check_seed = seed.rotate_left(17) ^ 0x5EED;
            let check = match &rows {
                Some(r) => check_layer_rows(
                    &g,
                    r,
                    layer_m,
                    preset,
                    &run.out.d,
                    args.max_check,
                    args.samples,
                    check_seed,
                ),
                None => check_layer(
                    &g,
                    preset,
                    &run.out.d,
                    args.max_check,
                    args.samples,
                    check_seed,
                ),
            }
            .map_err(|e| format!("layer {}: {e}", l.name))?;
            let line = format!(
                "layer {}/{count} {}: {m} x {n} x {k}{}, {} cycles, {:.3} s",
                i + 1,
                l.name,
                if rows.is_some() {
                    format!(" (rows of shard {} of {layer_m})", shard.text())
                } else {
                    String::new()
                },
                run.cycles,
                run.sim_seconds
            );
            if bar.is_hidden() {
                progress_line(&line);
            } else {
                bar.println(line);
            }
            let total = simulated_cycles.fetch_add(run.cycles, Ordering::Relaxed) + run.cycles;
            let rate = total as f64 / started.elapsed().as_secs_f64().max(1e-9);
            bar.set_message(format!("{rate:.3e} cycles/s"));
            bar.inc(1);
            // The ideal path's operand store counts traffic; the TMA path has none.
            let traffic = match (run.traffic, &mem_cfg) {
                (Some(t), _) => Some(t),
                (None, Some(_)) => None,
                (None, None) => {
                    return Err(format!("layer {}: the run counted no traffic", l.name))
                }
            };
            record.cycles = shown(run.cycles);
            record.tiles = run.tiles;
            record.sim_seconds = run.sim_seconds;
            record.agrees = run.cycles == formula.cycles && traffic == Some(formula.traffic);
            record.model_cycles = run.cycles;
            record.traffic = traffic.as_ref().map(TrafficBytes::from);
            record.d_digest = Some(report::fnv1a64(
                run.out.d.iter().flat_map(|w| w.to_le_bytes()),
            ));
            if split.is_some() && !record.agrees {
                return Err(format!(
                    "layer {}: --split rows takes the whole layer's cycles and traffic from the \
                     formulas, but the run of this shard's rows ({} cycles) does not agree with \
                     them ({} cycles): run it with --split layers",
                    l.name, record.model_cycles, record.analytic_cycles
                ));
            }
            if split.is_some() {
                // This part's rows of D, for merge (staged with the next checkpoint).
                let words: Vec<u64> = run.out.d.iter().map(|&w| u64::from(w)).collect();
                write_file(
                    &args.out.join(report::part_file(i)),
                    &npy_bytes(&[m, n], Dtype::U32, &words),
                )?;
            }
            check
        };
        record.utilization = report::utilization(macs, record.cycles, &shape);
        record.simulated_seconds = report::simulated_seconds(record.cycles, &shape);
        record.reference = check.reference.to_string();
        record.checked = check.checked;
        record.elements = check.total;
        record.mismatches = check.mismatches.len();
        if let Some(s) = split {
            let whole = whole_layer(&cfg, i, l, seed, &record.reference, scalesim_timing, &shape);
            record.part = Some(s.part_json(&whole, m, Some(report::part_file(i))));
        }
        Ok(record)
    };
    // A layer, then a checkpoint of the report while layers remain. `None`: not started
    // (stopped).
    let run_layer = |&i: &usize| -> Result<Option<()>, String> {
        if stop.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let record = layer_record(i)?;
        let mut p = progress.lock().unwrap_or_else(|e| e.into_inner());
        p.records.push(record);
        p.finished_here += 1;
        if args.stop_after.is_some_and(|n| p.finished_here >= n) {
            stop.store(true, Ordering::SeqCst);
        }
        if p.records.len() < selected.len() {
            // A checkpoint: a report that says it is partial, in place at once.
            report::write(&args.out, &report_of(&p.records))?;
            commit_staged()?;
        }
        Ok(Some(()))
    };
    if args.threads == 1 {
        for i in &to_run {
            run_layer(i)?;
        }
    } else {
        use rayon::prelude::*;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(args.threads))
            .build()
            .map_err(|e| format!("--threads {}: {e}", args.threads))?;
        pool.install(|| to_run.par_iter().try_for_each(|i| run_layer(i).map(|_| ())))?;
    }
    bar.finish_and_clear();
    let records = progress
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .records;
    let done = report_of(&records);
    if !done.pending.is_empty() {
        // Stopped (--stop-after): the partial report (as the last checkpoint, or the first
        // when no layer finished here).
        report::write(&args.out, &done)?;
        progress_line(&format!(
            "stopped with {} of {} layers finished: {} is a partial report (\"complete\": \
             false); rerun with --resume to finish it",
            done.records.len(),
            selected.len(),
            args.out.join("summary.json").display()
        ));
        return Ok(STOPPED);
    }
    report::write(&args.out, &done)?;
    let summary = report::summary_json(&done);
    let bad: usize = done.records.iter().map(|r| r.mismatches).sum();
    if args.json {
        outln!("{summary}");
    } else {
        print_text(args, &topo, &cfg, preset, shard, &done)?;
    }
    Ok(if bad == 0 { 0 } else { 1 })
}

/// A row split (`--split rows`): shard `I/N` runs tile rows `t` with `t mod N = I` of every
/// layer, a tile row being `unit` consecutive rows of M (R in os, [`ACC_ROWS`] in ws).
#[derive(Clone, Copy, Debug)]
struct RowSplit {
    unit: usize,
    shard: Shard,
}

impl RowSplit {
    /// The rows of an `m`-row layer this shard runs, increasing.
    fn rows(self, m: usize) -> Vec<usize> {
        (0..m.div_ceil(self.unit))
            .filter(|&t| self.shard.owns(t as u64))
            .flat_map(|t| t * self.unit..((t + 1) * self.unit).min(m))
            .collect()
    }

    /// A part's `part` object: its rows, the file of its rows of D, and the whole layer's
    /// record `whole` (from the formulas) for `merge`.
    fn part_json(self, whole: &LayerRecord, rows: usize, d_rows: Option<String>) -> Value {
        json!({
            "unit_rows": self.unit,
            "tile_rows": (0..whole.m.div_ceil(self.unit))
                .filter(|&t| self.shard.owns(t as u64))
                .count(),
            "rows": rows,
            "layer_m": whole.m,
            "d_rows": d_rows,
            "layer": report::layer_json(whole),
        })
    }
}

/// Layer `i`'s whole record in a row split, from the formulas (exact on the ideal path,
/// which each part's run confirms): what `merge` puts in the merged report, with the parts'
/// checks, wall-clock seconds and D added.
fn whole_layer(
    cfg: &CoreConfig,
    i: usize,
    l: &Layer,
    seed: u64,
    reference: &str,
    scalesim_timing: bool,
    shape: &Shape,
) -> LayerRecord {
    let (m, n, k) = l.gemm();
    let f = analytic(cfg, m, n, k);
    let scalesim = scalesim_cycles(cfg.dataflow(), (cfg.rows(), cfg.cols()), m, n, k);
    let cycles = if scalesim_timing { scalesim } else { f.cycles };
    let macs = (m * n * k) as u64;
    LayerRecord {
        index: i,
        name: l.name.clone(),
        conv: conv_json(l.kind),
        m,
        n,
        k,
        seed,
        cycles,
        tiles: f.tiles,
        utilization: report::utilization(macs, cycles, shape),
        mapping_efficiency: report::mapping_efficiency(m, n, k, shape),
        simulated_seconds: report::simulated_seconds(cycles, shape),
        macs,
        reference: reference.to_string(),
        checked: 0,
        elements: m * n,
        mismatches: 0,
        sim_seconds: 0.0,
        analytic_cycles: f.cycles,
        analytic_traffic: TrafficBytes::from(&f.traffic),
        agrees: true,
        model_cycles: f.cycles,
        scalesim_cycles: scalesim,
        traffic: Some(TrafficBytes::from(&f.traffic)),
        d_digest: None,
        energy: None,
        memory: None,
        part: None,
    }
}

/// The record of a row split's part without rows (nothing run).
fn empty_part(i: usize, l: &Layer, seed: u64, part: Option<Value>) -> LayerRecord {
    let (_, n, k) = l.gemm();
    let zero = TrafficBytes {
        a_read: 0,
        b_read: 0,
        c_read: 0,
        d_write: 0,
    };
    LayerRecord {
        index: i,
        name: l.name.clone(),
        conv: conv_json(l.kind),
        m: 0,
        n,
        k,
        seed,
        cycles: 0,
        tiles: 0,
        utilization: 0.0,
        mapping_efficiency: 0.0,
        simulated_seconds: 0.0,
        macs: 0,
        reference: "none".into(),
        checked: 0,
        elements: 0,
        mismatches: 0,
        sim_seconds: 0.0,
        analytic_cycles: 0,
        analytic_traffic: zero,
        agrees: true,
        model_cycles: 0,
        scalesim_cycles: 0,
        traffic: Some(zero),
        d_digest: None,
        energy: None,
        memory: None,
        part,
    }
}

/// The finished layers of the partial report in `out`, when it is a report of this very
/// run (`header`); otherwise one line saying why it cannot be continued.
fn resumable(
    out: &Path,
    header: &Map<String, Value>,
    topo: &Topology,
    selected: &[usize],
) -> Result<Vec<LayerRecord>, String> {
    let old = report::read(out).map_err(|e| format!("--resume: {e}"))?;
    let path = out.join("summary.json");
    if let Some((file, then, now)) = operands::changed_file(&old.header, header) {
        return Err(format!(
            "--resume: {} was run on other operand files: {file} was {then}, it is {now}",
            path.display()
        ));
    }
    if let Some((key, theirs, ours)) = report::first_difference(&old.header, header) {
        return Err(format!(
            "--resume: {} is the report of another run: its {key} is {theirs}, this run's is \
             {ours}",
            path.display()
        ));
    }
    for r in &old.records {
        if !selected.contains(&r.index) || topo.layers[r.index].name != r.name {
            return Err(format!(
                "--resume: {}: layer {} ({}) is not a layer of this run",
                path.display(),
                r.index,
                r.name
            ));
        }
    }
    Ok(old.records)
}

/// The text report on standard output: the core, one line per layer, the total.
fn print_text(
    args: &RunArgs,
    topo: &Topology,
    cfg: &CoreConfig,
    preset: Option<Preset>,
    shard: Shard,
    done: &Report,
) -> Result<(), String> {
    let count = done.records.len();
    let bad: usize = done.records.iter().map(|r| r.mismatches).sum();
    outln!(
        "workload {} ({} format, {count} layer{}{}) on {} x {}, {}{}, w = {}, {} x {} {}",
        args.topology.display(),
        topo.format.name(),
        if count == 1 { "" } else { "s" },
        if shard == Shard::WHOLE {
            String::new()
        } else {
            format!(" of {}, shard {}", topo.layers.len(), shard.text())
        },
        format_names(cfg).0,
        format_names(cfg).1,
        cfg.mode.name(),
        match (args.arith.rule().ok().flatten(), preset) {
            (Some(r), _) => format!(" {r}"),
            (None, Some(p)) => format!(" {p}"),
            (None, None) => String::new(),
        },
        cfg.width,
        cfg.rows(),
        cfg.cols(),
        cfg.dataflow()
    );
    for r in &done.records {
        let tail = if args.analytic {
            "from the formulas (not simulated)".to_string()
        } else if r.agrees {
            format!(
                "{}: {} mismatches; the formulas agree",
                checked_text(r),
                r.mismatches
            )
        } else {
            format!(
                "{}: {} mismatches; the formulas say {} cycles",
                checked_text(r),
                r.mismatches,
                r.analytic_cycles
            )
        };
        let part = r.part.as_ref().map_or(String::new(), |p| {
            format!(
                " ({} tile rows of {} rows: {} of its {} rows)",
                p["tile_rows"], p["unit_rows"], r.m, p["layer_m"]
            )
        });
        outln!(
            "{}{part}: {} x {} x {}, {} cycles, {} tile{}, utilization {:.1}% (mapping {:.1}%), \
             B {}, {tail}",
            r.name,
            r.m,
            r.n,
            r.k,
            r.cycles,
            r.tiles,
            if r.tiles == 1 { "" } else { "s" },
            100.0 * r.utilization,
            100.0 * r.mapping_efficiency,
            r.traffic.map_or("through TMA".to_string(), |t| format!(
                "{} bytes read",
                t.b_read
            ))
        );
    }
    let (cycles, macs, secs) = report::totals(&done.records);
    outln!(
        "total: {count} layer{}, {cycles} cycles ({:.3} us at {} GHz), {macs} MACs, utilization \
         {:.1}% (mapping {:.1}%), {bad} mismatches, simulated in {secs:.3} s",
        if count == 1 { "" } else { "s" },
        1e6 * report::simulated_seconds(cycles, &done.shape),
        done.shape.clock_ghz,
        100.0 * report::utilization(macs, cycles, &done.shape),
        100.0 * report::total_mapping_efficiency(&done.records, &done.shape)
    );
    outln!(
        "written: {}, {}, {}",
        args.out.join("layers.csv").display(),
        args.out.join("summary.json").display(),
        args.out.join("layers.svg").display()
    );
    Ok(())
}

/// A progress line on standard error (a failing standard error is ignored).
fn progress_line(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// `checked 288 of 288 against ieee_dot` or `sampled 256 of 11881*64 against ieee_dot`.
pub fn checked_text(r: &LayerRecord) -> String {
    let verb = if r.complete_check() {
        "checked"
    } else {
        "sampled"
    };
    format!(
        "{verb} {} of {} against {}",
        r.checked, r.elements, r.reference
    )
}
