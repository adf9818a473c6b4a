//! The options shared by the subcommands (operand formats and mode, waveforms) and the size
//! check of a problem. How a value or a name is read is the library's operand grammar,
//! `tensorcore_rtl::io::values`, re-exported here for the subcommands.

use clap::Args;
use std::path::PathBuf;
use tensorcore_rtl::io::arith::ArithNames;
pub use tensorcore_rtl::io::values::{
    acc_format, input_format, int_operand, int_operands, operand, operands, parse_window, rounding,
};
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::numerics::dot::{Gpu, GpuRule, Instr, Preset, GPU_ROWS};
use tensorcore_rtl::numerics::format::Format;
use tensorcore_rtl::numerics::int::IntFormat;
use tensorcore_rtl::rtl::{TraceConfig, TraceFormat};

/// Operand formats and accumulation mode, shared by `tcrtl dot` and `tcrtl gemm`.
#[derive(Args, Debug)]
pub struct ArithArgs {
    /// Format of A (and of B unless --format-b): e4m3, e5m2, fp16, bf16, tf32 (FP32
    /// containers whose low 13 bits are zero), or the integers s8, u8, s4, u4 (`tcrtl dot`
    /// and `tcrtl gemm`).
    #[arg(long, default_value = "fp16")]
    pub format: String,
    /// Format of B, if it differs from A's (e.g. e4m3 x e5m2, s8 x u8).
    #[arg(long)]
    pub format_b: Option<String>,
    /// Accumulation mode: ieee (default), fused, exact, nvidia (needs --preset or --gpu).
    #[arg(long)]
    pub acc: Option<String>,
    #[arg(long, help = preset_help(), long_help = preset_long_help())]
    pub preset: Option<String>,
    #[arg(long, help = gpu_help())]
    pub gpu: Option<String>,
    #[arg(long, help = instr_help())]
    pub instr: Option<String>,
}

/// Adds the `"gpu"` and `"instr"` keys of the rule a run used beside its `"preset"` (null
/// when the mode is not nvidia, or for a preset with no GPU row).
pub fn add_rule_keys(obj: &mut serde_json::Value, rule: Option<GpuRule>) {
    if let Some(map) = obj.as_object_mut() {
        map.insert("gpu".into(), rule.map(|r| r.gpu.name()).into());
        map.insert("instr".into(), rule.map(|r| r.instr.name()).into());
    }
}

/// The text line naming the rule a run used (nothing when the mode is not nvidia), e.g.
/// `rule:  preset h200 (h100 through mma.sync)`.
pub fn print_rule(rule: Option<GpuRule>) -> Result<(), String> {
    if let Some(r) = rule {
        outln!("rule:  preset {r}");
    }
    Ok(())
}

/// `--preset`'s help: what each preset is (the GPUs and instructions whose rule it is, from
/// the library's table).
pub fn preset_help() -> String {
    let each: Vec<String> = Preset::ALL
        .iter()
        .map(|p| format!("{p} = {}", rows_of(*p)))
        .collect();
    format!(
        "GPU preset for --acc nvidia, or name the GPU with --gpu: {}. hopper is Hopper's \
         native FP8 path (wgmma, cuBLAS); h200 is Hopper through mma.sync as CUDA 13.0 builds \
         it (FP8 as FP16 conversions and two FP16 steps). --help says what each was checked \
         against",
        each.join("; ")
    )
}

/// `--preset`'s long help: [`preset_help`] and each preset's evidence (its canonical row's).
pub fn preset_long_help() -> String {
    let each: Vec<String> = Preset::ALL
        .iter()
        .map(|p| {
            let why = GpuRule::of_preset(*p)
                .and_then(|r| r.row())
                .map_or("no GPU row yet", |r| r.evidence);
            format!("  {p} ({}): {why}", rows_of(*p))
        })
        .collect();
    format!(
        "GPU preset for --acc nvidia, or name the GPU with --gpu (a GPU and an instruction \
         select a preset; the preset alone stands for its first GPU and instruction below). \
         hopper is Hopper's native FP8 path (what wgmma and cuBLAS run); h200 is Hopper \
         through mma.sync as CUDA 13.0 builds it: FP8 lowered to FP16 conversions and two FP16 \
         HMMA steps (the published H100 and H200 FP8 sets, taken through mma.sync with an older \
         toolkit, show the hopper rule). KM: Khattak and Mikaitis, arXiv:2512.07004, sets in \
         north-numerical-computing/MATLAB-tensor-core. `tcrtl verify gpus` lists every row.\n{}",
        each.join("\n")
    )
}

/// The table's rows that run `p`, as `h100 wgmma, h200 wgmma`.
fn rows_of(p: Preset) -> String {
    // The canonical row first: the pair the preset stands for when named alone.
    let mut rows: Vec<_> = GPU_ROWS.iter().filter(|r| r.preset == Some(p)).collect();
    rows.sort_by_key(|r| !r.canonical);
    let rows: Vec<String> = rows
        .iter()
        .map(|r| format!("{} {}", r.gpu, r.instr))
        .collect();
    if rows.is_empty() {
        "no GPU row yet".into()
    } else {
        rows.join(", ")
    }
}

/// `--gpu`'s help: the modelled GPUs and their default instructions.
pub fn gpu_help() -> String {
    let gpus: Vec<String> = Gpu::all()
        .filter_map(|g| GpuRule::resolve(g, None).ok())
        .map(|r| format!("{} ({} -> {})", r.gpu, r.instr, r.preset))
        .collect();
    format!(
        "GPU whose rule --acc nvidia runs, instead of --preset; without --instr, its default \
         instruction: {}",
        gpus.join(", ")
    )
}

/// `--instr`'s help: the instructions and what they change.
pub fn instr_help() -> String {
    let names: Vec<&str> = Instr::all().map(|i| i.name()).collect();
    format!(
        "Matrix instruction of --gpu: {}. wmma shares mma.sync's hardware path (no FP8). On \
         h100 and h200, mma.sync is the rule CUDA 13.0 emits (preset h200) and wgmma the \
         native FP8 path (preset hopper): they differ for FP8 only. b200 tcgen05 has not been \
         measured and is refused",
        names.join(", ")
    )
}

/// What [`ArithArgs`] resolve to (the library's [`tensorcore_rtl::io::arith::Arith`]).
pub use tensorcore_rtl::io::arith::Arith;

impl ArithArgs {
    /// The accumulation mode's name: `--acc`, or `ieee` when it was not given.
    pub fn acc(&self) -> &str {
        self.acc.as_deref().unwrap_or("ieee")
    }

    /// The names as the library reads them ([`ArithNames`]).
    pub fn names(&self) -> ArithNames<'_> {
        ArithNames {
            format: &self.format,
            format_b: self.format_b.as_deref(),
            acc: self.acc.as_deref(),
            preset: self.preset.as_deref(),
            gpu: self.gpu.as_deref(),
            instr: self.instr.as_deref(),
        }
    }

    /// The GPU and instruction whose rule `--acc nvidia` runs: `--gpu` and `--instr`, or
    /// `--preset`'s canonical pair ([`ArithNames::selection`]); `None` without either.
    pub fn rule(&self) -> Result<Option<GpuRule>, String> {
        self.names().selection().map(|(_, rule)| rule)
    }

    /// [`ArithArgs::resolve_acc`] for the clocked tensor core, which has no `exact` datapath
    /// ([`ArithNames::resolve_datapath`]).
    pub fn resolve_datapath(&self, acc: Format) -> Result<Arith, String> {
        self.names().resolve_datapath(acc)
    }

    /// Checks the names and builds the mode for the accumulator format `acc`
    /// ([`ArithNames::resolve_acc`]).
    pub fn resolve_acc(&self, acc: Format) -> Result<Arith, String> {
        self.names().resolve_acc(acc)
    }

    /// The integer formats of A and B if `--format` (or `--format-b`) names one
    /// ([`ArithNames::int_formats`]).
    pub fn int_formats(&self) -> Result<Option<(IntFormat, IntFormat)>, String> {
        self.names().int_formats()
    }
}

/// The default of `--vcd-limit`, in MB.
pub const DEFAULT_VCD_LIMIT_MB: u64 = 4000;

/// Waveform options shared by the subcommands that run the clocked core.
#[derive(Args, Debug, Default)]
pub struct TraceArgs {
    /// Write a VCD waveform (and a GTKWave save file beside it).
    #[arg(long, conflicts_with = "fst")]
    pub vcd: Option<PathBuf>,
    /// Write an FST waveform instead (compressed; for long runs).
    #[arg(long)]
    pub fst: Option<PathBuf>,
    /// Trace only signals matching this hierarchical glob (repeatable), e.g. `mesh.pe_0_*`.
    #[arg(long)]
    pub trace_glob: Vec<String>,
    /// Trace only cycles FROM..TO (half open), e.g. `0:100`.
    #[arg(long, value_name = "FROM:TO")]
    pub trace_window: Option<String>,
    /// Refuse, before the run, a VCD estimated larger than this many MB (default 4000; FST is
    /// not limited, so this needs --vcd).
    #[arg(long, value_name = "MB")]
    pub vcd_limit: Option<u64>,
    /// Count the switching activity of the traced signals (each bit's toggles and time at 1)
    /// and write it as SAIF 2.0, for power tools: with --vcd or --fst the same signals and
    /// cycles as the waveform; alone, no waveform is written.
    #[arg(long, value_name = "FILE")]
    pub saif: Option<PathBuf>,
}

impl TraceArgs {
    /// Adds the waveform and its GTKWave side files to the run's outputs (checked up front).
    pub fn plan(&self, plan: &mut OutputPlan) -> Result<(), String> {
        match (&self.vcd, &self.fst) {
            (Some(p), _) => plan.add_trace("--vcd", p).map(drop)?,
            (None, Some(p)) => plan.add_trace("--fst", p).map(drop)?,
            (None, None) => {}
        }
        match &self.saif {
            Some(p) => plan.add("--saif", p).map(drop),
            None => Ok(()),
        }
    }

    /// `--vcd-limit` in bytes.
    pub fn vcd_limit_bytes(&self) -> u64 {
        self.vcd_limit
            .unwrap_or(DEFAULT_VCD_LIMIT_MB)
            .saturating_mul(1_000_000)
    }

    /// The trace configuration, if a waveform was asked for.
    pub fn config(&self) -> Result<Option<TraceConfig>, String> {
        let mut cfg = match (&self.vcd, &self.fst, &self.saif) {
            (Some(p), _, _) => TraceConfig::vcd(p),
            (None, Some(p), _) => TraceConfig::fst(p),
            (None, None, Some(p)) => TraceConfig::activity(p),
            (None, None, None) => {
                if !self.trace_glob.is_empty() || self.trace_window.is_some() {
                    return Err(
                        "--trace-glob and --trace-window need --vcd, --fst or --saif".into(),
                    );
                }
                if self.vcd_limit.is_some() {
                    return Err("--vcd-limit needs --vcd (it limits the VCD's size)".into());
                }
                return Ok(None);
            }
        };
        if self.vcd.is_none() && self.vcd_limit.is_some() {
            return Err("--vcd-limit applies to --vcd; an FST or a SAIF is not limited".into());
        }
        for g in &self.trace_glob {
            cfg = cfg.glob(g.clone());
        }
        if let Some(w) = &self.trace_window {
            let (from, to) = parse_window(w)?;
            cfg = cfg.window(from, to);
        }
        if let Some(p) = &self.saif {
            cfg = cfg.saif(p);
        }
        Ok(Some(cfg))
    }
}

/// Says which trace outputs a finished run wrote: the waveform and the SAIF.
pub fn report_trace(trace: Option<&TraceConfig>) -> Result<(), String> {
    let Some(t) = trace else {
        return Ok(());
    };
    if t.format != TraceFormat::Saif {
        outln!("waves written to {}", t.path.display());
    }
    if let Some(p) = t.saif_path() {
        outln!("switching activity (SAIF) written to {}", p.display());
    }
    Ok(())
}

/// Refuses a problem too large to run before anything is allocated: each matrix within
/// `gemm::problem::MAX_ELEMENTS` and at most `gemm::problem::MAX_TILES` tiles
/// (`gemm::problem::check_size`).
pub fn check_size(m: usize, n: usize, k: usize) -> Result<(), String> {
    tensorcore_rtl::gemm::problem::check_size(m, n, k).map_err(|e| e.to_string())
}
