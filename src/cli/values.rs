//! The options shared by the subcommands (operand formats and mode, waveforms) and the size
//! check of a problem. How a value or a name is read is the library's operand grammar,
//! `tensorcore_rtl::io::values`, re-exported here for the subcommands.

use clap::Args;
use std::path::PathBuf;
use tensorcore_rtl::gemm::problem::check_dims;
pub use tensorcore_rtl::io::values::{
    acc_format, input_format, int_operand, int_operands, operand, operands, parse_window, preset,
    rounding,
};
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::Format;
use tensorcore_rtl::numerics::int::{pair_ok, IntFormat};
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
    /// Accumulation mode: ieee (default), fused, exact, nvidia (needs --preset).
    #[arg(long)]
    pub acc: Option<String>,
    /// GPU preset for --acc nvidia: volta, ampere, ada, hopper, blackwell.
    #[arg(long)]
    pub preset: Option<String>,
}

/// What [`ArithArgs`] resolve to.
#[derive(Clone, Copy, Debug)]
pub struct Arith {
    /// Format of A.
    pub fmt_a: Format,
    /// Format of B.
    pub fmt_b: Format,
    /// The accumulation mode (with the preset's parameters for nvidia).
    pub mode: AccMode,
    /// The preset, for nvidia.
    pub preset: Option<Preset>,
}

impl ArithArgs {
    /// The accumulation mode's name: `--acc`, or `ieee` when it was not given.
    pub fn acc(&self) -> &str {
        self.acc.as_deref().unwrap_or("ieee")
    }

    /// [`ArithArgs::resolve_acc`] for the clocked tensor core, which has no `exact` datapath
    /// (`exact` rounds once over all of K: a reference, offered by `tcrtl dot` only).
    pub fn resolve_datapath(&self, acc: Format) -> Result<Arith, String> {
        let arith = self.resolve_acc(acc)?;
        if arith.mode == AccMode::Exact {
            return Err(
                "--acc exact is a reference, not a datapath: the tensor core runs ieee, fused or nvidia"
                    .into(),
            );
        }
        Ok(arith)
    }

    /// Checks the names and builds the mode for the accumulator format `acc` (the nvidia
    /// parameters are the preset's for that output); a preset is required by, and only
    /// allowed with, `--acc nvidia`.
    pub fn resolve_acc(&self, acc: Format) -> Result<Arith, String> {
        let fmt_a = input_format(&self.format)?;
        let fmt_b = match &self.format_b {
            Some(name) => input_format(name)?,
            None => fmt_a,
        };
        let preset = self.preset.as_deref().map(preset).transpose()?;
        let mode = match (self.acc().to_ascii_lowercase().as_str(), preset) {
            ("nvidia", Some(p)) => {
                AccMode::Nvidia(p.params_for(fmt_a, fmt_b, acc).map_err(|e| e.to_string())?)
            }
            ("nvidia", None) => return Err("--acc nvidia needs --preset".into()),
            (_, Some(_)) => return Err("--preset only applies to --acc nvidia".into()),
            ("ieee", None) => AccMode::Ieee,
            ("fused", None) => AccMode::Fused,
            ("exact", None) => AccMode::Exact,
            (other, None) => {
                return Err(format!(
                    "unknown accumulation mode {other:?} (expected ieee, fused, exact or nvidia)"
                ))
            }
        };
        Ok(Arith {
            fmt_a,
            fmt_b,
            mode,
            preset,
        })
    }
}

impl ArithArgs {
    /// The integer formats of A and B if `--format` (or `--format-b`) names one (`s8`, `u8`,
    /// `s4`, `u4`); `None` for floating-point formats. Integers take no accumulation mode or
    /// preset (their accumulator is an exact int32), both operands must be integers, and
    /// 8-bit pairs with 8-bit and 4-bit with 4-bit, as in PTX.
    pub fn int_formats(&self) -> Result<Option<(IntFormat, IntFormat)>, String> {
        let fa = IntFormat::input_by_name(&self.format);
        let fb = self.format_b.as_deref().map(IntFormat::input_by_name);
        let (fa, fb) = match (fa, fb) {
            (None, None | Some(None)) => return Ok(None),
            (Some(a), None) => (a, a),
            (Some(a), Some(Some(b))) => (a, b),
            (Some(a), Some(None)) => {
                return Err(format!(
                    "cannot pair integer format {a} with {:?}: both operands must be integers (s8, u8, s4, u4)",
                    self.format_b.as_deref().unwrap_or_default()
                ))
            }
            (None, Some(Some(b))) => {
                return Err(format!(
                    "cannot pair {:?} with integer format {b}: both operands must be integers (s8, u8, s4, u4)",
                    self.format
                ))
            }
        };
        if !pair_ok(fa, fb) {
            return Err(format!(
                "cannot pair {fa} with {fb}: 8-bit integers pair with 8-bit, 4-bit with 4-bit"
            ));
        }
        if self.preset.is_some() || self.acc.is_some() {
            return Err("integer formats accumulate exactly in int32: drop --acc and --preset (use --satfinite to clamp instead of wrapping)".into());
        }
        Ok(Some((fa, fb)))
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

/// The `traffic` object of a `--json` summary: bytes of A, B and C the array read from the
/// ideal operand store and bytes of D it wrote, measured during the run.
pub fn traffic_json(t: &tensorcore_rtl::hw::Traffic) -> serde_json::Value {
    serde_json::json!({
        "a_read_bytes": t.a_read_bytes(),
        "b_read_bytes": t.b_read_bytes(),
        "c_read_bytes": t.c_read_bytes(),
        "d_write_bytes": t.d_write_bytes(),
    })
}

/// The most 4x4 output tiles the tensor core's tile counter holds (`2^24 - 3`).
pub const MAX_TILES: usize = (1 << 24) - 3;

/// Refuses a problem too large to run before anything is allocated: each matrix within
/// `gemm::problem::MAX_ELEMENTS` and at most [`MAX_TILES`] tiles.
pub fn check_size(m: usize, n: usize, k: usize) -> Result<(), String> {
    check_dims(m, n, k).map_err(|e| e.to_string())?;
    let tiles = m.div_ceil(4).saturating_mul(n.div_ceil(4));
    if tiles > MAX_TILES {
        return Err(format!(
            "a {m} x {n} D needs {tiles} 4x4 tiles; the tensor core runs at most {MAX_TILES}"
        ));
    }
    Ok(())
}
