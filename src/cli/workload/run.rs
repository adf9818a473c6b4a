//! `tcrtl workload run`: the options parsed into the library's
//! (`tensorcore_rtl::workload::run`, which runs the layers of one shard of a topology, each
//! run and checked on its own, on `--threads` threads), a progress bar or line per layer, a
//! checkpoint of the report written after every finished layer while some are still to run
//! (so an interrupt leaves a partial report that says so), and the final report's files;
//! `--resume` continues from a checkpoint. With `--split rows` a shard runs its tile rows of
//! every layer instead, its rows of D written beside the report for `merge`.

use std::io::Write as _;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

use clap::Args;
use tensorcore_rtl::energy::Tech;
use tensorcore_rtl::gemm::CoreConfig;
use tensorcore_rtl::io::bounded::{read_text_bounded, MAX_TEXT_BYTES};
use tensorcore_rtl::io::npy::{npy_bytes, Dtype};
use tensorcore_rtl::io::output::{commit_staged, write_file};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::FP32;
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow};
use tensorcore_rtl::workload::run::format_names;
use tensorcore_rtl::workload::{
    self, Conflict, EnergyOptions, LayerDone, LayerOperands, Observer, Refusal, RunError,
    RunOptions, RunStart, Split, Timing, Topology,
};

use super::operands::OperandFiles;
use super::report::{self, LayerRecord, Report};
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

/// The library's options from the arguments (the topology read, the strings parsed).
fn options(args: &RunArgs) -> Result<RunOptions, String> {
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
    let (cfg, preset) = core_config(args)?;
    let timing = match args.timing.as_str() {
        "model" => Timing::Model,
        "scalesim" => Timing::ScaleSim,
        other => return Err(format!("--timing {other}: model or scalesim")),
    };
    let split = match args.split.as_str() {
        "layers" => Split::Layers,
        "rows" => Split::Rows,
        other => return Err(format!("--split {other}: layers or rows")),
    };
    let energy = match args.energy.energy {
        true => Some(EnergyOptions {
            tech: Tech::by_name(args.energy.tech.as_deref().unwrap_or("45nm"))?,
        }),
        false => None,
    };
    let operands: Option<Box<dyn LayerOperands>> = match &args.operands {
        Some(dir) => Some(Box::new(OperandFiles::new(dir)?)),
        None => None,
    };
    // What an earlier, interrupted process of the same run finished.
    let resume = if args.resume {
        Some(report::read(&args.out).map_err(|e| format!("--resume: {e}"))?)
    } else {
        None
    };
    Ok(RunOptions {
        topology_name: shown.to_string(),
        topology_text: text,
        cfg,
        preset,
        // Checked by `core_config`.
        rule: args.arith.rule().ok().flatten(),
        seed: args.seed,
        max_check: args.max_check,
        samples: args.samples,
        memory: mem_cfg,
        analytic: args.analytic,
        timing,
        threads: usize::from(args.threads),
        shard,
        split,
        operands,
        energy,
        clock_ghz: args
            .energy
            .clock_ghz
            .unwrap_or(energy_cli::DEFAULT_CLOCK_GHZ),
        resume,
    })
}

/// A library error in the words of the command line's options.
fn cli_error(e: RunError, args: &RunArgs) -> String {
    let summary = || args.out.join("summary.json").display().to_string();
    match e {
        RunError::Conflict(c) => match c {
            Conflict::ScaleSimWidth(w) => format!(
                "--timing scalesim with --width {w}: SCALE-Sim's PE does one MAC a cycle (use \
                 --width 1)"
            ),
            Conflict::AnalyticThroughTma => {
                "--analytic models the ideal memory path only (not --memory tma)".into()
            }
            Conflict::TmaSubByte => "--memory tma moves whole bytes: 4-bit integer operands \
                                     (s4, u4) run on the ideal memory path"
                .into(),
            Conflict::Clock(c) => {
                format!("--clock-ghz must be a positive number of GHz, not {c}")
            }
            Conflict::EnergyAnalytic => "--energy needs a simulated run (not --analytic)".into(),
            Conflict::RowsThroughTma => "--split rows: a layer's cycles through --memory tma \
                                         depend on the whole layer's memory traffic and have \
                                         no exact formula to take them from (use --split \
                                         layers)"
                .into(),
            Conflict::RowsEnergy => "--split rows: a layer's energy is not the sum of its \
                                     rows' (--energy) (use --split layers)"
                .into(),
            Conflict::RowsAnalytic => "--split rows: --analytic simulates nothing, so there is \
                                       nothing to split (use --split layers)"
                .into(),
            Conflict::Threads(t) => format!("--threads {t}: 1 to 256"),
            Conflict::Shard(s) => format!("--shard {}: expected I/N with 0 <= I < N", s.text()),
        },
        RunError::Resume(r) => match r {
            Refusal::NotALayer { index, name } => format!(
                "--resume: {}: layer {index} ({name}) is not a layer of this run",
                summary()
            ),
            other => format!("--resume: {} {other}", summary()),
        },
        RunError::Failed(s) | RunError::Observer(s) => s,
    }
}

/// The command line's observer: the output folder planned before the first layer, a bar of
/// layers done (on a terminal) or one line per layer, a row split's rows of D written beside
/// the report, a checkpoint of the report after every layer while some remain, and
/// `--stop-after`.
struct Progress<'a> {
    args: &'a RunArgs,
    shard: Shard,
    bar: OnceLock<indicatif::ProgressBar>,
    started: std::time::Instant,
    simulated_cycles: AtomicU64,
    finished_here: AtomicUsize,
}

impl Progress<'_> {
    /// A progress line on standard error, above the bar when one is drawn.
    fn line(&self, line: String) {
        match self.bar.get() {
            Some(bar) if !bar.is_hidden() => bar.println(line),
            _ => progress_line(&line),
        }
    }
}

impl Observer for Progress<'_> {
    fn start(&self, start: &RunStart<'_>) -> Result<ControlFlow<()>, String> {
        // The outputs, checked before the first layer runs.
        report::plan_out(&self.args.out)?;
        if start.row_split {
            report::plan_parts(&self.args.out)?;
        }
        // On a terminal, a bar of layers done with the simulated cycles a second and the time
        // left (indicatif draws nothing elsewhere, where the per-layer lines are the
        // progress).
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(start.to_run as u64),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "workload {bar:30} {pos}/{len} layers, {msg} ({eta} left)",
        ) {
            bar.set_style(style);
        }
        let _ = self.bar.set(bar);
        Ok(match self.args.stop_after {
            Some(0) => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        })
    }

    fn layer_done(&self, done: &LayerDone<'_>) -> Result<ControlFlow<()>, String> {
        let r = done.record;
        if done.simulated {
            let rows = match &r.part {
                Some(p) => format!(" (rows of shard {} of {})", self.shard.text(), p["layer_m"]),
                None => String::new(),
            };
            self.line(format!(
                "layer {}/{} {}: {} x {} x {}{rows}, {} cycles, {:.3} s",
                r.index + 1,
                done.layers,
                r.name,
                r.m,
                r.n,
                r.k,
                r.model_cycles,
                r.sim_seconds
            ));
        }
        if let Some(bar) = self.bar.get() {
            if done.simulated {
                let total = self
                    .simulated_cycles
                    .fetch_add(r.model_cycles, Ordering::Relaxed)
                    + r.model_cycles;
                let rate = total as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
                bar.set_message(format!("{rate:.3e} cycles/s"));
            }
            bar.inc(1);
        }
        if let Some(d) = done.d_rows {
            // This part's rows of D, for merge (staged with the next checkpoint).
            let words: Vec<u64> = d.iter().map(|&w| u64::from(w)).collect();
            write_file(
                &self.args.out.join(report::part_file(r.index)),
                &npy_bytes(&[r.m, r.n], Dtype::U32, &words),
            )?;
        }
        let finished = self.finished_here.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(match self.args.stop_after {
            Some(n) if finished >= n => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        })
    }

    fn checkpoint(&self, partial: &Report) -> Result<(), String> {
        // A report that says it is partial, in place at once.
        report::write(&self.args.out, partial)?;
        commit_staged().map(|_| ())
    }
}

/// Runs `tcrtl workload run`.
pub fn run_topology(args: &RunArgs) -> Result<i32, String> {
    let opts = options(args)?;
    let shard = opts.shard;
    let progress = Progress {
        args,
        shard,
        bar: OnceLock::new(),
        started: std::time::Instant::now(),
        simulated_cycles: AtomicU64::new(0),
        finished_here: AtomicUsize::new(0),
    };
    let done = workload::run(&opts, &progress).map_err(|e| cli_error(e, args))?;
    if let Some(bar) = progress.bar.get() {
        bar.finish_and_clear();
    }
    let (topo, done) = (done.topology, done.report);
    let selected = done.records.len() + done.pending.len();
    if !done.pending.is_empty() {
        // Stopped (--stop-after): the partial report (as the last checkpoint, or the first
        // when no layer finished here).
        report::write(&args.out, &done)?;
        progress_line(&format!(
            "stopped with {} of {selected} layers finished: {} is a partial report \
             (\"complete\": false); rerun with --resume to finish it",
            done.records.len(),
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
        print_text(args, &topo, &opts.cfg, opts.preset, shard, &done)?;
    }
    Ok(if bad == 0 { 0 } else { 1 })
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
