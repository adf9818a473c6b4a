//! A workload run: every layer of a topology (or of one shard of it) as a GEMM on the clocked
//! core, each with its own seed, run and checked on its own (on [`RunOptions::threads`]
//! threads, through [`crate::par`]), reported as one [`Report`]. An [`Observer`] is told when
//! the checks are done and the first layer is about to run, after every finished layer (with
//! its rows of D in a row split) and, while layers remain, with the report so far (a
//! checkpoint), so a caller can draw progress, write files and stop the run. A run continues
//! an interrupted one from the partial report it left ([`RunOptions::resume`]).
//!
//! With [`Split::Rows`] a shard runs its tile rows of every layer instead of every N-th
//! layer, the whole layer's cycles and traffic from the exact formulas of the ideal memory
//! path.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use serde_json::{json, Map, Value};

use super::report::{self, fnv1a64, LayerRecord, Report, Shape, TrafficBytes, FINGERPRINTS};
use super::{
    analytic, check_layer, check_layer_rows, layer_seed, parse, rows_of, scalesim_cycles, Layer,
    LayerCheck, LayerKind, Shard, Topology,
};
use crate::energy::Tech;
use crate::gemm::{self, CoreConfig, Gemm, Problem};
use crate::hw::ws::ACC_ROWS;
use crate::hw::{Dataflow, MemPortConfig};
use crate::numerics::dot::gpu::GpuRule;
use crate::numerics::dot::{AccMode, Preset};
use crate::par::{try_par_map, Threads};
use crate::verify::gemm_ref::Reference;

/// Whose cycles a report's `cycles` and totals give (both are in every record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// This core's own: overlapped folds, pipeline latency, preload and drain.
    Model,
    /// SCALE-Sim's compute cycles for the same array and dataflow (one MAC per PE a cycle,
    /// so width 1 only; docs/timing.md).
    ScaleSim,
}

impl Timing {
    /// `model` or `scalesim`, as the summary names it.
    pub fn name(self) -> &'static str {
        match self {
            Timing::Model => "model",
            Timing::ScaleSim => "scalesim",
        }
    }
}

/// What one shard of a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Every N-th layer.
    Layers,
    /// Every N-th tile row of every layer (R rows of M in os, [`ACC_ROWS`]-row chunks of A
    /// in ws), for one large layer; the whole layer's cycles and traffic from the exact
    /// formulas of the ideal memory path. Nothing but [`Split::Layers`] for the whole run.
    Rows,
}

/// The energy estimate of every layer from its switching activity (which slows the run).
#[derive(Clone, Debug)]
pub struct EnergyOptions {
    /// The technology's energy table.
    pub tech: Tech,
}

/// Where a layer's operands come from when they are not the seeded random ones: files a
/// caller reads (`tcrtl workload run --operands`), fingerprinted in the report.
pub trait LayerOperands: Send + Sync {
    /// The source as the report's `operands` key names it.
    fn text(&self) -> String;
    /// Checks, before any layer runs, that layer `index` has its operands in the shapes (and
    /// types) `cfg` takes.
    fn check(&self, index: usize, layer: &Layer, cfg: &CoreConfig) -> Result<(), String>;
    /// The fingerprints of the operands of `layers` (the report's `operand_files` object).
    fn fingerprints(&self, layers: &[Layer]) -> Result<Map<String, Value>, String>;
    /// Layer `layer`'s problem on `cfg`, its operands unchanged since `prints` were taken.
    fn load(
        &self,
        layer: &Layer,
        cfg: CoreConfig,
        prints: &Map<String, Value>,
    ) -> Result<Gemm, String>;
}

/// A workload run's inputs.
pub struct RunOptions {
    /// The topology's name in the report (the path of its file).
    pub topology_name: String,
    /// The topology: SCALE-Sim's convolution or GEMM CSV ([`super::parse`]), fingerprinted in
    /// the report.
    pub topology_text: String,
    /// The core every layer runs on (formats, mode, width, array, dataflow).
    pub cfg: CoreConfig,
    /// The preset of an `nvidia` run (for its reference).
    pub preset: Option<Preset>,
    /// The GPU rule an `nvidia` run follows, when one was named (the summary's `core.gpu`
    /// and `core.instr`).
    pub rule: Option<GpuRule>,
    /// The run's seed: layer i's operands come from [`layer_seed`] of it and i.
    pub seed: u64,
    /// The whole of D is checked when a layer's `M * N * K` is at most this; above it,
    /// `samples` elements chosen by the seed.
    pub max_check: u64,
    /// Elements of D checked in a layer above `max_check`.
    pub samples: usize,
    /// The TMA memory path (output-stationary only); `None`: the ideal operand store.
    pub memory: Option<MemPortConfig>,
    /// Simulate nothing: every layer's cycles and traffic from the formulas.
    pub analytic: bool,
    /// Whose cycles the report gives.
    pub timing: Timing,
    /// Layers simulated at once (1 to 256; the report is the same for any count but for the
    /// wall-clock figures).
    pub threads: usize,
    /// The shard this run is.
    pub shard: Shard,
    /// What a shard is.
    pub split: Split,
    /// Operands from elsewhere; `None`: seeded random operands.
    pub operands: Option<Box<dyn LayerOperands>>,
    /// An energy estimate of every layer; `None`: none.
    pub energy: Option<EnergyOptions>,
    /// The clock in GHz: each layer's `simulated_seconds` is its cycles at this clock (and
    /// the energy's average power is given at it).
    pub clock_ghz: f64,
    /// The partial report of an interrupted run of these very inputs: only its pending
    /// layers run.
    pub resume: Option<Report>,
}

impl RunOptions {
    /// A whole run of `topology_text` (named `topology_name`) on `cfg` with the defaults of
    /// `tcrtl workload run`: seed 1, whole checks up to 2^22 MACs and 256 samples above, the
    /// ideal memory path, this core's timing, one thread, no energy, 1 GHz.
    pub fn new(topology_name: &str, topology_text: &str, cfg: CoreConfig) -> RunOptions {
        RunOptions {
            topology_name: topology_name.to_string(),
            topology_text: topology_text.to_string(),
            cfg,
            preset: None,
            rule: None,
            seed: 1,
            max_check: 1 << 22,
            samples: 256,
            memory: None,
            analytic: false,
            timing: Timing::Model,
            threads: 1,
            shard: Shard::WHOLE,
            split: Split::Layers,
            operands: None,
            energy: None,
            clock_ghz: 1.0,
            resume: None,
        }
    }
}

/// Options that do not go together, or are out of range: refused before any layer runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Conflict {
    /// SCALE-Sim's timing with more than one product per PE step (the width).
    ScaleSimWidth(usize),
    /// The formulas with the TMA memory path.
    AnalyticThroughTma,
    /// The TMA memory path with 4-bit integer operands.
    TmaSubByte,
    /// A clock that is not a positive number of GHz.
    Clock(f64),
    /// An energy estimate without a simulation.
    EnergyAnalytic,
    /// A row split through the TMA memory path.
    RowsThroughTma,
    /// A row split with an energy estimate.
    RowsEnergy,
    /// A row split without a simulation.
    RowsAnalytic,
    /// A thread count outside 1 to 256.
    Threads(usize),
    /// A shard `I/N` with `N = 0` or `I >= N`.
    Shard(Shard),
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Conflict::ScaleSimWidth(w) => write!(
                f,
                "SCALE-Sim's timing with width {w}: SCALE-Sim's PE does one MAC a cycle (use \
                 width 1)"
            ),
            Conflict::AnalyticThroughTma => write!(
                f,
                "the formulas model the ideal memory path only (not the TMA path)"
            ),
            Conflict::TmaSubByte => write!(
                f,
                "the TMA path moves whole bytes: 4-bit integer operands (s4, u4) run on the \
                 ideal memory path"
            ),
            Conflict::Clock(c) => write!(f, "the clock must be a positive number of GHz, not {c}"),
            Conflict::EnergyAnalytic => {
                write!(
                    f,
                    "an energy estimate needs a simulated run (not the formulas)"
                )
            }
            Conflict::RowsThroughTma => write!(
                f,
                "a row split: a layer's cycles through the TMA path depend on the whole \
                 layer's memory traffic and have no exact formula to take them from"
            ),
            Conflict::RowsEnergy => {
                write!(
                    f,
                    "a row split: a layer's energy is not the sum of its rows'"
                )
            }
            Conflict::RowsAnalytic => write!(
                f,
                "a row split: the formulas simulate nothing, so there is nothing to split"
            ),
            Conflict::Threads(t) => write!(f, "{t} threads: 1 to 256"),
            Conflict::Shard(s) => write!(f, "shard {}: expected I/N with 0 <= I < N", s.text()),
        }
    }
}

/// Why a partial report cannot be continued by a run: it is not one of this run's.
#[derive(Clone, Debug, PartialEq)]
pub enum Refusal {
    /// It was run on operand files whose fingerprints differ from today's.
    OtherOperands {
        /// The file.
        file: String,
        /// Its fingerprint in the report ([`report::fingerprint_text`]).
        then: String,
        /// Its fingerprint now.
        now: String,
    },
    /// Its identity differs from this run's at `key`.
    OtherRun {
        /// The first summary key that differs.
        key: String,
        /// The report's value (`-` when absent).
        theirs: String,
        /// This run's value (`-` when absent).
        ours: String,
    },
    /// One of its finished layers is not a layer of this run (shard).
    NotALayer {
        /// The layer's index in the report.
        index: usize,
        /// Its name in the report.
        name: String,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::OtherOperands { file, then, now } => write!(
                f,
                "was run on other operand files: {file} was {then}, it is {now}"
            ),
            Refusal::OtherRun { key, theirs, ours } => write!(
                f,
                "is the report of another run: its {key} is {theirs}, this run's is {ours}"
            ),
            Refusal::NotALayer { index, name } => {
                write!(
                    f,
                    "holds layer {index} ({name}), which is not a layer of this run"
                )
            }
        }
    }
}

/// Why a workload run did not finish.
#[derive(Clone, Debug, PartialEq)]
pub enum RunError {
    /// Options that do not go together.
    Conflict(Conflict),
    /// The partial report to continue is not one of this run.
    Resume(Refusal),
    /// Anything else: a bad topology, a layer too large, no reference, a failed run (one
    /// line, naming the layer where there is one).
    Failed(String),
    /// The observer's error (writing a file, say), as it gave it.
    Observer(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Conflict(c) => c.fmt(f),
            RunError::Resume(r) => write!(f, "the partial report to continue {r}"),
            RunError::Failed(s) | RunError::Observer(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for RunError {}

impl From<Conflict> for RunError {
    fn from(c: Conflict) -> RunError {
        RunError::Conflict(c)
    }
}

/// The run, once every option is checked and before its first layer runs.
#[derive(Clone, Debug)]
pub struct RunStart<'a> {
    /// The parsed topology.
    pub topology: &'a Topology,
    /// Layers (or, in a row split, parts of layers) still to run.
    pub to_run: usize,
    /// Whether this is a row split (with rows of D to keep for a merge).
    pub row_split: bool,
}

/// A layer (or a row split's part of one) that finished.
#[derive(Clone, Debug)]
pub struct LayerDone<'a> {
    /// Its record.
    pub record: &'a LayerRecord,
    /// Layers in the topology.
    pub layers: usize,
    /// Whether it was simulated (not from the formulas, not a part without rows).
    pub simulated: bool,
    /// In a row split: this part's rows of D (`record.m` rows of `record.n` words).
    pub d_rows: Option<&'a [u32]>,
}

/// Told of a run's progress; called from the worker threads, one call at a time.
pub trait Observer: Sync {
    /// Every option is checked; the first layer is about to run. An error stops the run
    /// before any layer runs; [`ControlFlow::Break`] runs none either, leaving a partial
    /// report of no new layers.
    fn start(&self, _start: &RunStart<'_>) -> Result<ControlFlow<()>, String> {
        Ok(ControlFlow::Continue(()))
    }

    /// A layer finished. [`ControlFlow::Break`] starts no further layer (those running
    /// finish), leaving a partial report.
    fn layer_done(&self, _done: &LayerDone<'_>) -> Result<ControlFlow<()>, String> {
        Ok(ControlFlow::Continue(()))
    }

    /// The report so far, after a layer finished while layers remain (a checkpoint).
    fn checkpoint(&self, _partial: &Report) -> Result<(), String> {
        Ok(())
    }
}

/// An observer that does nothing.
pub struct Quiet;

impl Observer for Quiet {}

/// A finished (or stopped) run.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The topology.
    pub topology: Topology,
    /// The report: complete when its `pending` is empty; otherwise the run was stopped.
    pub report: Report,
}

/// The operand formats' names: the integer formats' own (`s8`, ...) rather than their lane
/// containers'.
pub fn format_names(cfg: &CoreConfig) -> (&'static str, &'static str) {
    match cfg.mode {
        AccMode::Int(im) => (im.a.name, im.b.name),
        _ => (cfg.fmt_a.name, cfg.fmt_b.name),
    }
}

/// A row split of shard `shard`: tile rows `t` with `t mod N = I` of every layer, a tile row
/// being `unit` consecutive rows of M.
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
    /// record `whole` (from the formulas) for a merge.
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

/// What identifies a run in its summary (with the topology's fingerprint, added by the
/// caller): the topology (its name, format and number of layers), the core, the options that
/// change results, the seed, the shard, the operands, the memory path and the energy table.
fn run_header(o: &RunOptions, topo: &Topology, operands: Option<String>) -> Map<String, Value> {
    let cfg = &o.cfg;
    let (fa, fb) = format_names(cfg);
    let mut header = json!({
        "topology": o.topology_name,
        "topology_format": topo.format.name(),
        "topology_layers": topo.layers.len(),
        "core": {
            "format": fa, "format_b": fb,
            "acc": cfg.mode.name(), "preset": o.preset.map(|p| p.name()), "width": cfg.width,
            "out_format": cfg.acc.name,
            "rows": cfg.rows(), "cols": cfg.cols(), "dataflow": cfg.dataflow().name(),
            "memory": if o.memory.is_some() { "tma" } else { "ideal" },
        },
        "seed": o.seed,
        "simulated": !o.analytic,
        "timing": o.timing.name(),
        "max_check": o.max_check,
        "samples": o.samples,
        "shard": o.shard.text(),
        "operands": operands.unwrap_or_else(|| "random".to_string()),
    });
    // The energy table, the memory path's parameters, the integer overflow and the GPU rule:
    // each absent where it does not apply, so other reports keep their keys.
    if let AccMode::Int(im) = cfg.mode {
        header["core"]["overflow"] = json!(im.overflow.name());
    }
    if let Some(r) = o.rule {
        header["core"]["gpu"] = json!(r.gpu.name());
        header["core"]["instr"] = json!(r.instr.name());
    }
    if let Some(pc) = &o.memory {
        header["memory_path"] = json!({
            "params": report::params_object(&pc.params),
            "stages": (pc.stages != 0).then_some(pc.stages),
            "swizzle": pc.swizzle,
        });
    }
    header["clock_ghz"] = json!(o.clock_ghz);
    if let Some(e) = &o.energy {
        header["energy"] = json!({
            "tech": e.tech.name,
            "clock_ghz": o.clock_ghz,
        });
    }
    match header {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Refuses options that do not go together, before anything runs.
fn check_options(o: &RunOptions) -> Result<(), RunError> {
    let cfg = &o.cfg;
    if !(1..=256).contains(&o.threads) {
        return Err(Conflict::Threads(o.threads).into());
    }
    if o.shard.count == 0 || o.shard.index >= o.shard.count {
        return Err(Conflict::Shard(o.shard).into());
    }
    if o.timing == Timing::ScaleSim && cfg.width != 1 {
        return Err(Conflict::ScaleSimWidth(cfg.width).into());
    }
    if o.memory.is_some() {
        if o.analytic {
            return Err(Conflict::AnalyticThroughTma.into());
        }
        if matches!(cfg.mode, AccMode::Int(im) if im.a.bits < 8 || im.b.bits < 8) {
            return Err(Conflict::TmaSubByte.into());
        }
    }
    if !(o.clock_ghz.is_finite() && o.clock_ghz > 0.0) {
        return Err(Conflict::Clock(o.clock_ghz).into());
    }
    if o.energy.is_some() && o.analytic {
        return Err(Conflict::EnergyAnalytic.into());
    }
    if o.split == Split::Rows {
        if o.memory.is_some() {
            return Err(Conflict::RowsThroughTma.into());
        }
        if o.energy.is_some() {
            return Err(Conflict::RowsEnergy.into());
        }
        if o.analytic {
            return Err(Conflict::RowsAnalytic.into());
        }
    }
    Ok(())
}

/// Runs the workload `o` describes, telling `observer` of its progress: the report of every
/// layer of the shard (complete), or of those finished when the observer stopped the run
/// (its `pending` not empty). Errors are one line, worded without the command line's
/// options (the [`Conflict`]s, the [`RunError::Resume`] text, a layer's failure naming it).
pub fn run(o: &RunOptions, observer: &dyn Observer) -> Result<Workload, RunError> {
    let failed = RunError::Failed;
    let topo = parse(&o.topology_text).map_err(|e| failed(format!("{}: {e}", o.topology_name)))?;
    check_options(o)?;
    let cfg = o.cfg;
    let scalesim_timing = o.timing == Timing::ScaleSim;
    // Every layer's size, and the reference, before any layer runs.
    for l in &topo.layers {
        let (m, n, k) = l.gemm();
        gemm::problem::check_size(m, n, k).map_err(|e| failed(format!("layer {}: {e}", l.name)))?;
    }
    let probe = Gemm::random(1, 1, 1, cfg, 0).map_err(|e| failed(e.to_string()))?;
    Reference::for_problem(&probe, o.preset)
        .map_err(|e| failed(format!("no independent reference to check the layers: {e}")))?;
    let shape = Shape {
        rows: cfg.rows(),
        cols: cfg.cols(),
        width: cfg.width,
        dataflow: cfg.dataflow(),
        clock_ghz: o.clock_ghz,
    };
    let count = topo.layers.len();
    let split = (o.split == Split::Rows && o.shard.count > 1).then(|| RowSplit {
        unit: match cfg.dataflow() {
            Dataflow::Os => cfg.rows(),
            Dataflow::Ws => ACC_ROWS,
            // The rows of A a pass holds: one column tile.
            Dataflow::Is => cfg.cols(),
        },
        shard: o.shard,
    });
    // A layer split shard runs its layers; a row split shard a part of every layer.
    let selected: Vec<usize> = (0..count)
        .filter(|&i| split.is_some() || o.shard.owns(i as u64))
        .collect();
    // Operands from elsewhere: every layer's checked and fingerprinted before any runs (not
    // only this shard's, so that the reports of all shards name the same operands).
    let prints = match &o.operands {
        Some(files) => {
            for (i, l) in topo.layers.iter().enumerate() {
                files.check(i, l, &cfg).map_err(failed)?;
            }
            Some(files.fingerprints(&topo.layers).map_err(failed)?)
        }
        None => None,
    };
    let mut header = run_header(o, &topo, o.operands.as_ref().map(|f| f.text()));
    header.insert(
        "topology_digest".into(),
        Value::String(fnv1a64(o.topology_text.bytes())),
    );
    if split.is_some() {
        header.insert("split".into(), Value::String("rows".into()));
    }
    if let Some(p) = &prints {
        header.insert(FINGERPRINTS.into(), Value::Object(p.clone()));
    }
    let empty_prints = Map::new();
    let prints = prints.as_ref().unwrap_or(&empty_prints);
    // What an earlier, interrupted run of the same inputs finished.
    let resumed = match &o.resume {
        Some(old) => resumable(old, &header, &topo, &selected)?,
        None => Vec::new(),
    };
    let to_run: Vec<usize> = selected
        .iter()
        .copied()
        .filter(|i| !resumed.iter().any(|r| r.index == *i))
        .collect();
    let flow = observer
        .start(&RunStart {
            topology: &topo,
            to_run: to_run.len(),
            row_split: split.is_some(),
        })
        .map_err(RunError::Observer)?;
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
    let stop = AtomicBool::new(flow.is_break());
    let finished = Mutex::new(resumed);
    let layer = LayerRun {
        o,
        topo: &topo,
        shape: &shape,
        split,
        scalesim_timing,
        prints,
    };
    // A layer, then a checkpoint of the report while layers remain; nothing once stopped.
    try_par_map(
        &to_run,
        Threads::new(o.threads),
        |_, &i| -> Result<(), RunError> {
            if stop.load(Ordering::SeqCst) {
                return Ok(());
            }
            let (record, d_rows) = layer.record(i)?;
            let mut records = finished.lock().unwrap_or_else(|e| e.into_inner());
            let flow = observer
                .layer_done(&LayerDone {
                    record: &record,
                    layers: count,
                    simulated: record.reference != "none",
                    d_rows: d_rows.as_deref(),
                })
                .map_err(RunError::Observer)?;
            records.push(record);
            if flow.is_break() {
                stop.store(true, Ordering::SeqCst);
            }
            if records.len() < selected.len() {
                observer
                    .checkpoint(&report_of(&records))
                    .map_err(RunError::Observer)?;
            }
            Ok(())
        },
    )?;
    let records = finished.into_inner().unwrap_or_else(|e| e.into_inner());
    let report = report_of(&records);
    Ok(Workload {
        topology: topo,
        report,
    })
}

/// What every layer of a run shares.
struct LayerRun<'a> {
    o: &'a RunOptions,
    topo: &'a Topology,
    shape: &'a Shape,
    split: Option<RowSplit>,
    scalesim_timing: bool,
    prints: &'a Map<String, Value>,
}

impl LayerRun<'_> {
    /// Layer `i` (or, in a row split, this shard's rows of it), start to end: its own seed,
    /// problem, run and check, with its rows of D in a row split. Layers are independent, so
    /// running them on several threads changes nothing but the order they finish in.
    fn record(&self, i: usize) -> Result<(LayerRecord, Option<Vec<u32>>), RunError> {
        let (o, cfg, shape, split) = (self.o, self.o.cfg, self.shape, self.split);
        let l = &self.topo.layers[i];
        let at_layer = |e: String| RunError::Failed(format!("layer {}: {e}", l.name));
        let (layer_m, n, k) = l.gemm();
        let seed = layer_seed(o.seed, i);
        // A row split's shard runs the rows of its tile rows; otherwise the whole layer.
        let rows = split.map(|s| s.rows(layer_m));
        let m = rows.as_ref().map_or(layer_m, Vec::len);
        if m == 0 {
            // A part without rows (the layer has fewer tile rows than shards).
            let whole = whole_layer(&cfg, i, l, seed, "none", self.scalesim_timing, shape);
            let part = split.map(|s| s.part_json(&whole, 0, None));
            return Ok((empty_part(i, l, seed, part), None));
        }
        let formula = analytic(&cfg, m, n, k);
        let scalesim = scalesim_cycles(cfg.dataflow(), (cfg.rows(), cfg.cols()), m, n, k);
        let macs = (m * n * k) as u64;
        // The report's cycles: this core's, or SCALE-Sim's.
        let shown = |model: u64| {
            if self.scalesim_timing {
                scalesim
            } else {
                model
            }
        };
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
            mapping_efficiency: report::mapping_efficiency(m, n, k, shape),
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
        let mut d_rows = None;
        let check = if o.analytic {
            LayerCheck::none()
        } else {
            let whole = match &o.operands {
                Some(files) => files.load(l, cfg, self.prints).map_err(RunError::Failed)?,
                None => {
                    Gemm::random(layer_m, n, k, cfg, seed).map_err(|e| at_layer(e.to_string()))?
                }
            };
            let g = match &rows {
                Some(r) => rows_of(&whole, r).map_err(at_layer)?,
                None => whole,
            };
            let problem = Problem::Dense(&g);
            let memory = o.memory.as_ref();
            // With an energy estimate the run counts every signal's toggles.
            let trace = match &o.energy {
                Some(e) => Some(
                    gemm::energy::counting_trace(None, &problem, memory, &e.tech, o.clock_ghz)
                        .map_err(|e| at_layer(e.to_string()))?,
                ),
                None => None,
            };
            let done =
                gemm::run(problem, memory, trace.as_ref()).map_err(|e| at_layer(e.to_string()))?;
            record.memory = done.memory.as_ref().map(report::memory_object);
            if let Some(e) = &o.energy {
                let estimate = gemm::energy::estimate(&problem, &done, &e.tech, o.clock_ghz)
                    .ok_or_else(|| at_layer("the run counted no switching activity".into()))?;
                record.energy = Some(report::energy_object(&estimate));
            }
            let run = done.run;
            let check_seed = seed.rotate_left(17) ^ 0x5EED;
            let check = match &rows {
                Some(r) => check_layer_rows(
                    &g,
                    r,
                    layer_m,
                    o.preset,
                    &run.out.d,
                    o.max_check,
                    o.samples,
                    check_seed,
                ),
                None => check_layer(&g, o.preset, &run.out.d, o.max_check, o.samples, check_seed),
            }
            .map_err(at_layer)?;
            // The ideal path's operand store counts traffic; the TMA path has none.
            let traffic = match (run.traffic, &o.memory) {
                (Some(t), _) => Some(t),
                (None, Some(_)) => None,
                (None, None) => return Err(at_layer("the run counted no traffic".into())),
            };
            record.cycles = shown(run.cycles);
            record.tiles = run.tiles;
            record.sim_seconds = run.sim_seconds;
            record.agrees = run.cycles == formula.cycles && traffic == Some(formula.traffic);
            record.model_cycles = run.cycles;
            record.traffic = traffic.as_ref().map(TrafficBytes::from);
            record.d_digest = Some(fnv1a64(run.out.d.iter().flat_map(|w| w.to_le_bytes())));
            if split.is_some() {
                if !record.agrees {
                    return Err(at_layer(format!(
                        "a row split takes the whole layer's cycles and traffic from the \
                         formulas, but the run of this shard's rows ({} cycles) does not agree \
                         with them ({} cycles): split the run by layers",
                        record.model_cycles, record.analytic_cycles
                    )));
                }
                d_rows = Some(run.out.d);
            }
            check
        };
        record.utilization = report::utilization(macs, record.cycles, shape);
        record.simulated_seconds = report::simulated_seconds(record.cycles, shape);
        record.reference = check.reference.to_string();
        record.checked = check.checked;
        record.elements = check.total;
        record.mismatches = check.mismatches.len();
        if let Some(s) = split {
            let whole = whole_layer(
                &cfg,
                i,
                l,
                seed,
                &record.reference,
                self.scalesim_timing,
                shape,
            );
            record.part = Some(s.part_json(&whole, m, Some(report::part_file(i))));
        }
        Ok((record, d_rows))
    }
}

/// Layer `i`'s whole record in a row split, from the formulas (exact on the ideal path,
/// which each part's run confirms): what a merge puts in the merged report, with the parts'
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

/// The finished layers of the partial report `old`, when it is a report of this very run
/// (`header`); otherwise why it cannot be continued.
fn resumable(
    old: &Report,
    header: &Map<String, Value>,
    topo: &Topology,
    selected: &[usize],
) -> Result<Vec<LayerRecord>, RunError> {
    if let Some((file, then, now)) = report::changed_file(&old.header, header) {
        return Err(RunError::Resume(Refusal::OtherOperands { file, then, now }));
    }
    if let Some((key, theirs, ours)) = report::first_difference(&old.header, header) {
        return Err(RunError::Resume(Refusal::OtherRun { key, theirs, ours }));
    }
    for r in &old.records {
        let name = topo.layers.get(r.index).map(|l| &l.name);
        if !selected.contains(&r.index) || name != Some(&r.name) {
            return Err(RunError::Resume(Refusal::NotALayer {
                index: r.index,
                name: r.name.clone(),
            }));
        }
    }
    Ok(old.records.clone())
}
