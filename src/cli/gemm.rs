//! `tcrtl gemm`: D = A x B + C on the clocked tensor core, from `.npy` files or a seeded
//! random problem, with an optional waveform, a JSON summary and, for random inputs, a check
//! against the `verify` layer's independent reference. `--sparse` runs a 2:4-sparse A on the
//! core in sparse mode (`docs/sparsity.md`). An MX `--format` (`mxfp8e4m3`, ...) with
//! `--a-scales`/`--b-scales` runs a block-scaled GEMM on the core in MX mode ([`mx`]).

mod mx;

use super::gemm_int;
use super::memory::{memory_json, MemArgs, MemoryPath};
use super::pattern::{pattern_problem, Pattern};
use super::text_matrix;
use super::values;
use clap::{ArgGroup, Args};
use std::path::{Path, PathBuf};
use tensorcore_rtl::gemm::clocked::run_clocked_measured;
use tensorcore_rtl::gemm::{run_functional, run_memory, CoreConfig, Gemm, MemRun};
use tensorcore_rtl::hw::schedule::Schedule;
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype, NpyArray};
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::numerics::convert::tf32_from_container;
use tensorcore_rtl::numerics::format::{Format, FP16, TF32};
use tensorcore_rtl::numerics::int::{IntFormat, IntMode, IntOverflow};
use tensorcore_rtl::sparse::clocked::sparse_schedule;
use tensorcore_rtl::sparse::{run_clocked_sparse_measured, run_memory_sparse, Prune, SparseGemm};
use tensorcore_rtl::verify::gemm_ref::{mismatches, Reference};
use tensorcore_rtl::verify::measurements::encode_exact;

/// `--acc` of `tcrtl gemm`: the modes the clocked tensor core runs (no `exact`).
const ACC_HELP: &str = "Accumulation mode: ieee (default), fused, nvidia (needs --preset)";

/// Arguments of `tcrtl gemm`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("input").required(true).args(["a", "m", "a_values"])))]
#[command(mut_arg("acc", |a| a.help(ACC_HELP)))]
pub struct GemmArgs {
    /// A (M x K) as .npy: uint8 (FP8), uint16 (FP16/BF16) or uint32 (TF32 containers, low 13
    /// bits zero) bit patterns, or float16/32/64 values exactly representable in the format;
    /// int8 (s8, s4) or uint8 (u8, u4) values for integer formats. A `.txt` or `.hex` file is
    /// a text matrix (floating-point formats): one row a line, elements as hex bit patterns
    /// (0x3c00) or exact decimals.
    #[arg(long, requires = "b")]
    a: Option<PathBuf>,
    /// B (K x N) as .npy, like A.
    #[arg(long, conflicts_with = "m")]
    b: Option<PathBuf>,
    /// C (M x N) as .npy: float32 values or uint32 FP32 bit patterns; with --out-format fp16,
    /// float16 values or uint16 FP16 bit patterns; int32 for integer formats (default:
    /// zeros); or a text matrix (.txt, .hex) of values or patterns in the output format.
    #[arg(long, conflicts_with = "m")]
    c: Option<PathBuf>,
    /// Rows of a random problem (with --n, --k, --seed).
    #[arg(long, requires_all = ["n", "k"], conflicts_with = "a")]
    m: Option<usize>,
    /// Columns of a random problem.
    #[arg(long, requires = "m")]
    n: Option<usize>,
    /// Inner dimension of a random problem.
    #[arg(long, requires = "m")]
    k: Option<usize>,
    /// Seed of the random problem (the same seed gives the same operands everywhere).
    #[arg(long, default_value_t = 1, requires = "m")]
    seed: u64,
    /// Operands of a generated problem (with --m, --n, --k): random (seeded, the default),
    /// ones (D = K everywhere), iota (A and B count 1..8 row-major), identity (A = I, B
    /// counting, so D repeats B); C is zero except for random.
    #[arg(long, value_enum, default_value_t = Pattern::Random, requires = "m", conflicts_with = "sparse")]
    pattern: Pattern,
    #[command(flatten)]
    arith: values::ArithArgs,
    /// Products per PE step w: 1, 2, 4, 8, 16 or 32.
    #[arg(long, default_value_t = 1)]
    width: usize,
    /// Write D (M x N float32; with --out-format fp16, uint16 FP16 bit patterns; int32 for
    /// integer formats) here, atomically.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The accumulator format: fp32 (default) or fp16 (C and D are FP16; the PE accumulator
    /// registers are 16 bits wide; with --memory tma, C and D move 2 bytes an element; --memh
    /// writes 16-bit C and D words).
    #[arg(long, default_value = "fp32")]
    out_format: String,
    /// Check D against the independent reference also for .npy inputs (random inputs are
    /// always checked).
    #[arg(long)]
    check: bool,
    /// Also write A, B, C and D as `$readmemh` images (`a.hex`, `b.hex`, `c.hex`, `d.hex`,
    /// one word a line, row-major) into this existing directory, for a Verilog testbench.
    #[arg(long)]
    memh: Option<PathBuf>,
    #[command(flatten)]
    trace: values::TraceArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// 2:4 structured sparsity: A must hold at most two nonzeros per group of four along K
    /// (checked; see --prune), or comes compressed (--a-values, --a-meta); a random problem
    /// draws valid nibbles. Runs on the core in sparse mode (half the compute steps).
    #[arg(long)]
    sparse: bool,
    #[command(flatten)]
    sparse_a: super::sparse::CompressedA,
    /// Where the operands come from: `ideal` (a zero-latency store) or `tma` (global memory,
    /// TMA loads into shared-memory stages, TMA store of D; docs/memory.md).
    #[arg(long, value_enum, default_value = "ideal")]
    memory: MemoryPath,
    #[command(flatten)]
    mem: MemArgs,
    /// Operand stages in shared memory with --memory tma (default: enough to cover the
    /// latency at the bandwidth, at most 48).
    #[arg(long, value_name = "N")]
    stages: Option<usize>,
    /// Integer formats only: clamp each PE step's exact sum to the int32 range (PTX
    /// `.satfinite`) instead of wrapping.
    #[arg(long)]
    satfinite: bool,
    /// Lay the operand tiles out unswizzled in shared memory (--memory tma), to see the bank
    /// conflicts the 128B swizzle avoids.
    #[arg(long)]
    no_swizzle: bool,
    /// Block scales of A for a block-scaled --format: uint8 .npy, M x K/32 E8M0 codes (one
    /// per 32 elements of a row of A; nvfp4: M x K/16 unsigned E4M3 codes).
    #[arg(long, value_name = "SA.npy")]
    a_scales: Option<PathBuf>,
    /// Block scales of B for a block-scaled --format: uint8 .npy, K/32 x N E8M0 codes (one
    /// per 32 elements of a column of B; nvfp4: K/16 x N unsigned E4M3 codes).
    #[arg(long, value_name = "SB.npy")]
    b_scales: Option<PathBuf>,
    /// nvfp4: A's FP32 tensor scale (a value or 0x pattern; default none, i.e. 1).
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    a_tensor_scale: Option<String>,
    /// nvfp4: B's FP32 tensor scale (a value or 0x pattern; default none, i.e. 1).
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    b_tensor_scale: Option<String>,
}

/// Reads an A or B operand: returns (rows, cols, bit patterns of `fmt`).
fn load_operand(path: &Path, name: &str, fmt: Format) -> Result<(usize, usize, Vec<u64>), String> {
    if text_matrix::is_text(path) {
        return text_matrix::read(path, name, |t| values::operand(fmt, t));
    }
    let arr = read_npy(path).map_err(|e| e.to_string())?;
    let (rows, cols) = matrix_shape(&arr, path, name)?;
    let words = match arr.dtype {
        Dtype::U8 | Dtype::U16 => {
            let bits = if arr.dtype == Dtype::U8 { 8 } else { 16 };
            if fmt.width() != bits {
                return Err(format!(
                    "{}: {name} holds {} bit patterns but {fmt} needs {} (or float values)",
                    path.display(),
                    arr.dtype.numpy_name(),
                    if fmt.width() == 8 { "uint8" } else { "uint16" }
                ));
            }
            arr.words.clone()
        }
        Dtype::F16 | Dtype::F32 | Dtype::F64 => (0..arr.words.len())
            .map(|i| {
                let v = arr.value_f64(i);
                encode_exact(fmt, v).ok_or_else(|| {
                    format!(
                        "{}: {name}[{}][{}] = {v:e} is not exactly representable in {fmt}",
                        path.display(),
                        i / cols,
                        i % cols
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        Dtype::U32 if fmt == TF32 => arr
            .words
            .iter()
            .enumerate()
            .map(|(i, &w)| {
                tf32_from_container(w as u32).ok_or_else(|| {
                    format!(
                        "{}: {name}[{}][{}] = {w:#010x} is not a tf32 container (low 13 bits \
                         must be zero)",
                        path.display(),
                        i / cols,
                        i % cols
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        Dtype::U32 | Dtype::I8 | Dtype::I32 => {
            return Err(format!(
                "{}: {name} has dtype {}; {fmt} takes {} bit patterns or float16/32/64 values",
                path.display(),
                arr.dtype.numpy_name(),
                if fmt.width() == 8 { "uint8" } else { "uint16" }
            ))
        }
    };
    Ok((rows, cols, words))
}

fn matrix_shape(arr: &NpyArray, path: &Path, name: &str) -> Result<(usize, usize), String> {
    match arr.shape.as_slice() {
        [r, c] => Ok((*r, *c)),
        s => Err(format!(
            "{}: {name} must be a 2-D matrix but has shape {s:?}",
            path.display()
        )),
    }
}

/// Reads C, `m x n`: float32 values or uint32 FP32 bit patterns, or for an FP16 accumulator
/// float16 values or uint16 FP16 bit patterns (both held as the FP16 bits); or a text matrix
/// in the accumulator format.
fn load_c(path: &Path, m: usize, n: usize, acc: Format) -> Result<Vec<u32>, String> {
    if text_matrix::is_text(path) {
        let (rows, cols, words) = text_matrix::read(path, "C", |t| values::operand(acc, t))?;
        if (rows, cols) != (m, n) {
            return Err(format!(
                "{}: C is {rows} x {cols} but A x B is {m} x {n}",
                path.display()
            ));
        }
        return Ok(words.iter().map(|&w| w as u32).collect());
    }
    let arr = read_npy(path).map_err(|e| e.to_string())?;
    let (rows, cols) = matrix_shape(&arr, path, "C")?;
    let ok = if acc == FP16 {
        matches!(arr.dtype, Dtype::F16 | Dtype::U16)
    } else {
        matches!(arr.dtype, Dtype::F32 | Dtype::U32)
    };
    if !ok {
        return Err(format!(
            "{}: C has dtype {}; expected {}",
            path.display(),
            arr.dtype.numpy_name(),
            if acc == FP16 {
                "float16 or uint16 (FP16 bit patterns) for --out-format fp16"
            } else {
                "float32 or uint32 (FP32 bit patterns)"
            }
        ));
    }
    if (rows, cols) != (m, n) {
        return Err(format!(
            "{}: C is {rows} x {cols} but A x B is {m} x {n}",
            path.display()
        ));
    }
    Ok(arr.words.iter().map(|&w| w as u32).collect())
}

/// Every file `--memh DIR` may write (`src/cli/golden.rs`), checked before the run.
const MEMH_FILES: [&str; 8] = [
    "a.hex",
    "b.hex",
    "c.hex",
    "d.hex",
    "steps.hex",
    "a_values.hex",
    "a_meta.hex",
    "manifest.json",
];

/// Checks every output of the run before any work: directories exist, no two outputs name the
/// same file, each can be opened for writing (`tensorcore_rtl::io::output`).
fn plan_outputs(args: &GemmArgs) -> Result<(), String> {
    let mut plan = OutputPlan::new();
    if let Some(out) = &args.out {
        plan.add("--out", out)?;
    }
    if let Some(dir) = &args.memh {
        if !dir.is_dir() {
            return Err(format!(
                "--memh {}: not an existing directory",
                dir.display()
            ));
        }
        for name in MEMH_FILES {
            plan.add("--memh", &dir.join(name))?;
        }
    }
    args.trace.plan(&mut plan)
}

/// Runs `tcrtl gemm`.
pub fn run(args: &GemmArgs) -> Result<i32, String> {
    if let Some(fa) = mx::core_format(&args.arith.format) {
        return mx::run(args, fa);
    }
    if args.a_scales.is_some()
        || args.b_scales.is_some()
        || args.a_tensor_scale.is_some()
        || args.b_tensor_scale.is_some()
    {
        return Err(format!(
            "--a-scales/--b-scales and the tensor scales need a block-scaled --format \
             (mxfp8e4m3, mxfp8e5m2, mxfp6e2m3, mxfp6e3m2, mxfp4, mxint8, nvfp4), not {}",
            args.arith.format
        ));
    }
    if let Some((a, b)) = args.arith.int_formats()? {
        if !args.out_format.eq_ignore_ascii_case("fp32") {
            return Err(
                "--out-format applies to floating-point formats; integer GEMMs \
                        accumulate into int32"
                    .into(),
            );
        }
        return run_int(args, a, b);
    }
    if args.satfinite {
        return Err("--satfinite applies to the integer formats (s8, u8, s4, u4) only".into());
    }
    let acc = values::acc_format(&args.out_format)?;
    let values::Arith {
        fmt_a,
        fmt_b,
        mode,
        preset,
    } = args.arith.resolve_datapath(acc)?;
    let cfg = CoreConfig::new(fmt_a, fmt_b, mode, args.width).with_acc(acc);
    plan_outputs(args)?;
    let mem_cfg = super::memory::port_config(args.memory, &args.mem, args.stages, args.no_swizzle)?;
    let trace = args.trace.config()?;
    let random = args.m.is_some();
    let sparse = if args.sparse {
        Some(sparse_problem(args, cfg)?)
    } else {
        None
    };
    let g = match (&args.a, &args.b, args.m, args.n, args.k) {
        _ if sparse.is_some() => sparse.as_ref().map(SparseGemm::dense).ok_or("no problem")?,
        (Some(pa), Some(pb), _, _, _) => {
            let (m, ka, a) = load_operand(pa, "A", fmt_a)?;
            let (kb, n, b) = load_operand(pb, "B", fmt_b)?;
            if ka != kb {
                return Err(format!(
                    "inner dimensions differ: A is {m} x {ka} but B is {kb} x {n}"
                ));
            }
            values::check_size(m, n, ka)?;
            let c = match &args.c {
                Some(pc) => load_c(pc, m, n, acc)?,
                None => vec![0; m * n],
            };
            Gemm::new(m, n, ka, cfg, a, b, c).map_err(|e| e.to_string())?
        }
        (_, _, Some(m), Some(n), Some(k)) => {
            values::check_size(m, n, k)?;
            pattern_problem(args.pattern, m, n, k, cfg, args.seed)?
        }
        _ => return Err("give --a A.npy --b B.npy, or --m M --n N --k K".into()),
    };
    // The VCD size is estimated from the schedule before the run (refused if too large);
    // through the memory path the run takes at least these cycles.
    let cycles = match &sparse {
        Some(s) => sparse_schedule(s).total_cycles(),
        None => Schedule::new(g.m, g.n, g.k, cfg.width, cfg.block()).total_cycles(),
    };
    let trace = trace.map(|t| t.budget(cycles, args.trace.vcd_limit_bytes()));
    let mut mem_run: Option<MemRun> = None;
    let measured = match (&sparse, &mem_cfg) {
        (Some(s), Some(pc)) => run_memory_sparse(s, pc, trace.as_ref()).map(|r| {
            let run = r.run.clone();
            mem_run = Some(r);
            run
        }),
        (Some(s), None) => run_clocked_sparse_measured(s, trace.as_ref()),
        (None, Some(pc)) => run_memory(&g, pc, trace.as_ref()).map(|r| {
            let run = r.run.clone();
            mem_run = Some(r);
            run
        }),
        (None, None) => run_clocked_measured(&g, trace.as_ref()),
    }
    .map_err(|e| e.to_string())?;
    let run = measured.run.clone();
    if let Some(out) = &args.out {
        let words: Vec<u64> = run.out.d.iter().map(|&w| w as u64).collect();
        let dtype = if acc == FP16 { Dtype::U16 } else { Dtype::F32 };
        write_npy(out, &[g.m, g.n], dtype, &words).map_err(|e| e.to_string())?;
    }
    if let Some(dir) = &args.memh {
        let origin = match (random, args.pattern) {
            (true, Pattern::Random) => super::golden::Origin::Seed(args.seed),
            (true, p) => super::golden::Origin::Pattern(p.name()),
            (false, _) => super::golden::Origin::Files,
        };
        super::golden::write_golden(dir, &g, &run.out.d, preset, &origin, sparse.as_ref())?;
    }
    let check = if let (Some(s), true) = (&sparse, random || args.check) {
        Some(super::sparse::check_clocked(s, preset, &run.out.d)?)
    } else if random || args.check {
        // The independent references of `verify` round to FP32 or FP16 and know the presets of
        // docs/numerics.md (FP32 and FP16 output); a pair they lack is checked against the
        // functional model (the numerics layer, itself checked against SoftFloat and the GPU
        // measurements).
        match Reference::for_problem(&g, preset) {
            Ok(reference) => {
                let want = reference.gemm(&g);
                Some((reference.name(), mismatches(&run.out.d, &want)))
            }
            _ => {
                let want = run_functional(&g).map_err(|e| e.to_string())?.d;
                Some(("functional", mismatches(&run.out.d, &want)))
            }
        }
    } else {
        None
    };
    let macs = sparse.as_ref().map_or(g.macs(), SparseGemm::macs);
    let macs_per_second = if run.sim_seconds > 0.0 {
        macs as f64 / run.sim_seconds
    } else {
        0.0
    };
    if args.json {
        let obj = serde_json::json!({
            "m": g.m, "n": g.n, "k": g.k,
            "format": fmt_a.name, "format_b": fmt_b.name,
            "acc": cfg.mode.name(), "preset": preset.map(|p| p.name()), "width": cfg.width,
            "out_format": acc.name,
            "seed": random.then_some(args.seed),
            "cycles": run.cycles, "tiles": run.tiles, "macs": macs,
            "mac_slots_used": run.mac_slots_used, "mac_slots_offered": run.mac_slots_offered,
            "utilization": run.utilization(),
            "sim_seconds": run.sim_seconds,
            "cycles_per_second": run.cycles_per_second(),
            "macs_per_second": macs_per_second,
            "flags": run.out.flags.names(),
            "out": args.out.as_ref().map(|p| p.display().to_string()),
            "waves": trace.as_ref().map(|t| t.path.display().to_string()),
            "check": check.as_ref().map(|(r, bad)| serde_json::json!({
                "reference": r, "mismatches": bad.len(),
            })),
        });
        let mut obj = match &sparse {
            Some(s) => super::sparse::add_sparse_json(obj, s, &measured),
            None => obj,
        };
        obj["memory"] = memory_json(args.memory, mem_run.as_ref());
        outln!("{obj}");
    } else {
        outln!(
            "gemm {} x {} x {} ({fmt_a} x {fmt_b}{}, {}{}, w = {}): {} cycles, {} tile{}, utilization {:.1}%",
            g.m,
            g.n,
            g.k,
            // The accumulator format, when it is not the default FP32.
            if acc == FP16 { " -> fp16" } else { "" },
            cfg.mode.name(),
            preset.map(|p| format!(" {p}")).unwrap_or_default(),
            cfg.width,
            run.cycles,
            run.tiles,
            if run.tiles == 1 { "" } else { "s" },
            100.0 * run.utilization()
        );
        outln!(
            "{macs} MACs in {:.3} s ({:.3e} cycles/s, {:.3e} MACs/s); flags: {}",
            run.sim_seconds,
            run.cycles_per_second(),
            macs_per_second,
            run.out.flags
        );
        if let Some(s) = &sparse {
            outln!("{}", super::sparse::sparse_line(s, &measured));
        }
        if let Some(r) = &mem_run {
            outln!("{}", super::memory::memory_line(r));
        }
        if let Some((r, bad)) = &check {
            outln!("check against {r}: {} mismatches", bad.len());
            for &i in bad.iter().take(5) {
                let digits = acc.width() as usize / 4;
                outln!(
                    "  D[{}][{}] = 0x{:0digits$x}",
                    i / g.n,
                    i % g.n,
                    run.out.d[i]
                );
            }
        }
        if let Some(out) = &args.out {
            outln!("D written to {}", out.display());
        }
        if let Some(t) = &trace {
            outln!("waves written to {}", t.path.display());
        }
    }
    Ok(match check {
        Some((_, bad)) if !bad.is_empty() => 1,
        _ => 0,
    })
}

/// `tcrtl gemm` with integer formats (see [`gemm_int`]): dense, on the ideal memory path or
/// (8-bit operands) through the TMA memory path, without `--memh` golden files or generated
/// patterns other than random.
fn run_int(args: &GemmArgs, a: IntFormat, b: IntFormat) -> Result<i32, String> {
    if args.sparse {
        return Err("integer formats run dense (no --sparse)".into());
    }
    let memory = super::memory::port_config(args.memory, &args.mem, args.stages, args.no_swizzle)?;
    if memory.is_some() && (a.bits < 8 || b.bits < 8) {
        return Err(
            "--memory tma moves whole bytes: 4-bit integer operands (s4, u4) run on the ideal \
             path only"
                .into(),
        );
    }
    if args.memh.is_some() {
        return Err("--memh golden images are FP32; not for integer formats".into());
    }
    if args.pattern != Pattern::Random {
        return Err("integer formats take random (seeded) or .npy operands, not --pattern".into());
    }
    plan_outputs(args)?;
    let files = match (&args.a, &args.b) {
        (Some(pa), Some(pb)) => Some((pa.as_path(), pb.as_path(), args.c.as_ref())),
        _ => None,
    };
    let random = match (args.m, args.n, args.k) {
        (Some(m), Some(n), Some(k)) => Some((m, n, k, args.seed)),
        _ => None,
    };
    gemm_int::run(&gemm_int::IntGemmJob {
        mode: IntMode {
            a,
            b,
            overflow: if args.satfinite {
                IntOverflow::SatFinite
            } else {
                IntOverflow::Wrap
            },
        },
        width: args.width,
        memory,
        files,
        random,
        out: args.out.as_deref(),
        check: args.check,
        trace: &args.trace,
        json: args.json,
    })
}

/// The sparse problem of `tcrtl gemm --sparse`: a dense --a (checked, or pruned with
/// --prune), a compressed --a-values/--a-meta, or a random one with valid nibbles.
fn sparse_problem(args: &GemmArgs, cfg: CoreConfig) -> Result<SparseGemm, String> {
    let prune = if args.sparse_a.prune {
        Prune::KeepLargest
    } else {
        Prune::Off
    };
    let (m, k, a) = match (&args.a, &args.sparse_a.a_values, &args.sparse_a.a_meta) {
        (_, _, _) if args.m.is_some() => {
            let (m, n, k) = (args.m, args.n, args.k);
            let (Some(m), Some(n), Some(k)) = (m, n, k) else {
                return Err("give --m M --n N --k K".into());
            };
            values::check_size(m, n, k)?;
            return SparseGemm::random(m, n, k, cfg, args.seed).map_err(|e| e.to_string());
        }
        (Some(pa), None, None) => {
            let (m, k, dense) = load_operand(pa, "A", cfg.fmt_a)?;
            let a = tensorcore_rtl::sparse::compress(cfg.fmt_a, m, k, &dense, prune)
                .map_err(|e| e.to_string())?;
            (m, k, a)
        }
        (None, Some(v), Some(md)) => {
            let a = super::sparse::read_compressed(v, md, cfg.fmt_a)?.map_err(|e| e.to_string())?;
            (a.m(), a.k(), a)
        }
        _ => {
            return Err("give --a A.npy, or --a-values V.npy --a-meta M.npy, with --b B.npy".into())
        }
    };
    let Some(pb) = &args.b else {
        return Err("give --b B.npy".into());
    };
    let (kb, n, b) = load_operand(pb, "B", cfg.fmt_b)?;
    if kb != k {
        return Err(format!(
            "inner dimensions differ: A is {m} x {k} but B is {kb} x {n}"
        ));
    }
    let c = match &args.c {
        Some(pc) => load_c(pc, m, n, cfg.acc)?,
        None => vec![0; m * n],
    };
    SparseGemm::new(cfg, a, n, b, c).map_err(|e| e.to_string())
}
