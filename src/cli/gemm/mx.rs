//! `tcrtl gemm --format mxfp8e4m3|mxfp8e5m2|mxfp6e2m3|mxfp6e3m2|mxfp4|mxint8|nvfp4`: a
//! block-scaled GEMM on the clocked tensor core in MX mode. The elements come as .npy raw
//! bits (uint8, one element a byte in its low bits; MXINT8 also as int8), the block scales
//! beside them (`--a-scales`: uint8 `M x K/bs`, `--b-scales`: uint8 `K/bs x N`; E8M0 codes
//! with `bs` = 32, or E4M3 codes with `bs` = 16 for NVFP4, whose FP32 tensor scales come as
//! `--a-tensor-scale`/`--b-tensor-scale`); K must be a multiple of `bs`. The core runs the
//! `fused` MX semantics (exact block sum, scaled, one round-to-nearest-even add per block),
//! so `--check` compares D with the independent `verify::mx_ref` and with `mx_dot` in
//! `fused` mode. On the ideal operand path, or in either dataflow through the TMA memory
//! path (`--memory tma`: the scales travel beside their operands, `docs/memory.md`). The
//! checks of the options, formats and codes and
//! the check of D are the library's (`gemm::mx_input`, which the Python package calls too);
//! this file reads the files and reports.

use super::args::GemmArgs;
use super::load::{load_c, matrix_shape, plan_outputs};
use crate::cli::array::ArrayArgs;
use std::path::{Path, PathBuf};
use tensorcore_rtl::gemm::mx_input::{self, check_fused, check_reference, Codes};
use tensorcore_rtl::gemm::{self, MxInput, MxInputError, MxOperand, MxOptions, Problem};
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};
use tensorcore_rtl::numerics::format::FP32;
use tensorcore_rtl::numerics::mx::BlockFormat;

/// The block format named `name` (every one runs on the tensor core).
pub(super) fn core_format(name: &str) -> Option<BlockFormat> {
    BlockFormat::by_name(name)
}

/// Reads a uint8 .npy matrix (or int8, if `signed_ok`) of codes; the library checks their
/// values ([`MxInput::build`]).
fn load_u8(path: &Path, name: &str, signed_ok: bool) -> Result<Codes, String> {
    let arr = read_npy(path).map_err(|e| e.to_string())?;
    let (rows, cols) = matrix_shape(&arr, path, name)?;
    if arr.dtype != Dtype::U8 && !(signed_ok && arr.dtype == Dtype::I8) {
        return Err(format!(
            "{}: {name} has dtype {}; expected uint8{}",
            path.display(),
            arr.dtype.numpy_name(),
            if signed_ok { " or int8" } else { "" }
        ));
    }
    Ok(Codes {
        rows,
        cols,
        codes: arr.words(),
    })
}

fn need<'a>(p: &'a Option<PathBuf>, flag: &str) -> Result<&'a PathBuf, String> {
    p.as_ref()
        .ok_or_else(|| mx_input::missing(flag).to_string())
}

/// Parses `--a-tensor-scale`/`--b-tensor-scale` (NVFP4 only): an FP32 value or pattern.
fn tensor_scale(fmt: BlockFormat, text: Option<&str>, flag: &str) -> Result<Option<u32>, String> {
    let Some(t) = text else {
        return Ok(None);
    };
    mx_input::tensor_scale_allowed(fmt, flag).map_err(|e| e.to_string())?;
    crate::cli::values::operand(FP32, t)
        .map(|bits| Some(bits as u32))
        .map_err(|e| format!("{flag}: {e}"))
}

/// The options an MX GEMM does not take, as given.
fn options(args: &GemmArgs) -> MxOptions<'_> {
    MxOptions {
        acc: args.arith.acc.as_deref(),
        preset: args.arith.preset.is_some() || args.arith.gpu.is_some(),
        random: args.m.is_some(),
        sparse: args.sparse,
        memh: args.memh.is_some(),
        satfinite: args.satfinite,
        out_format: &args.out_format,
    }
}

/// Runs a block-scaled GEMM (`fa`: the block format of A; B's from `--format-b` or the
/// same).
pub(super) fn run(args: &GemmArgs, fa: BlockFormat) -> Result<i32, String> {
    let text = |e: MxInputError| e.to_string();
    options(args).check().map_err(text)?;
    let fb = mx_input::format_b(fa, args.arith.format_b.as_deref()).map_err(text)?;
    let ta = tensor_scale(fa, args.a_tensor_scale.as_deref(), "--a-tensor-scale")?;
    let tb = tensor_scale(fb, args.b_tensor_scale.as_deref(), "--b-tensor-scale")?;
    let spec = mx_input::spec(fa, fb, ta, tb).map_err(text)?;
    let bs = spec.block();
    let cfg = args.array.apply(mx_input::core_config(&spec, args.width))?;
    mx_input::check_width(&spec, args.width).map_err(text)?;
    plan_outputs(args)?;
    let mem_cfg =
        crate::cli::memory::port_config(args.memory, &args.mem, args.stages, args.no_swizzle)?;
    let energy = args.energy.plan()?;
    let trace = args.trace.config()?;
    let (pa, pb) = (need(&args.a, "--a")?, need(&args.b, "--b")?);
    let (psa, psb) = (
        need(&args.a_scales, "--a-scales")?,
        need(&args.b_scales, "--b-scales")?,
    );
    let int8 = spec.int8();
    let input = MxInput {
        cfg,
        spec,
        a: load_u8(pa, "A", int8)?,
        b: load_u8(pb, "B", int8)?,
        a_scales: load_u8(psa, "A scales", false)?,
        b_scales: load_u8(psb, "B scales", false)?,
        c: None,
    };
    // The library's checks; a message about one array names its file.
    let mut g = input.build().map_err(|e| match e.operand {
        Some(op) => {
            let path = match op {
                MxOperand::A => pa,
                MxOperand::B => pb,
                MxOperand::AScales => psa,
                MxOperand::BScales => psb,
            };
            format!("{}: {e}", path.display())
        }
        None => e.to_string(),
    })?;
    let (m, n, k) = (g.m, g.n, g.k);
    if let Some(pc) = &args.c {
        g.c = load_c(pc, m, n, FP32)?;
    }
    let problem = Problem::Mx(&g);
    let trace = trace.map(|t| t.budget(problem.schedule_cycles(), args.trace.vcd_limit_bytes()));
    let run_trace = match &energy {
        Some(e) => Some(e.trace(trace.clone(), &problem, mem_cfg.as_ref())?),
        None => trace.clone(),
    };
    let done =
        gemm::run(problem, mem_cfg.as_ref(), run_trace.as_ref()).map_err(|e| e.to_string())?;
    let energy = match &energy {
        Some(e) => Some(e.estimate(&problem, &done)?),
        None => None,
    };
    let mem_run = done.memory;
    let run = done.run;
    if let Some(out) = &args.out {
        let words: Vec<u64> = run.out.d.iter().map(|&w| u64::from(w)).collect();
        write_npy(out, &[m, n], Dtype::F32, &words).map_err(|e| e.to_string())?;
    }
    let bad = if args.check {
        Some(check_fused(&g, &run.out.d)?.mismatches)
    } else {
        None
    };
    if args.json {
        let obj = serde_json::json!({
            "m": m, "n": n, "k": k,
            "format": fa.name(), "format_b": fb.name(),
            "acc": "fused", "block": bs, "width": cfg.width,
            "rows": cfg.rows(), "cols": cfg.cols(), "dataflow": cfg.dataflow().name(),
            "a_tensor_scale": g.spec.a_tensor.map(f32::from_bits),
            "b_tensor_scale": g.spec.b_tensor.map(f32::from_bits),
            "cycles": run.cycles, "tiles": run.tiles, "macs": g.m * g.n * g.k,
            "utilization": run.utilization(),
            "sim_seconds": run.sim_seconds,
            "flags": run.out.flags.names(),
            "out": args.out.as_ref().map(|p| p.display().to_string()),
            "waves": trace.as_ref().map(|t| t.path.display().to_string()),
            "check": bad.as_ref().map(|b| serde_json::json!({
                "reference": check_reference(&g), "mismatches": b.len(),
            })),
        });
        let mut obj = obj;
        if mem_run.is_some() {
            obj["memory"] = crate::cli::memory::memory_json(args.memory, mem_run.as_ref());
        }
        if let Some(e) = &energy {
            obj["energy"] = crate::cli::energy::json(e);
        }
        outln!("{obj}");
    } else {
        outln!(
            "gemm {m} x {n} x {k} ({fa} x {fb}, fused MX, blocks of {bs}, w = {}{}): {} cycles, {} tile{}, utilization {:.1}%; flags: {}",
            cfg.width,
            ArrayArgs::label(&cfg),
            run.cycles,
            run.tiles,
            if run.tiles == 1 { "" } else { "s" },
            100.0 * run.utilization(),
            run.out.flags
        );
        if let Some(r) = &mem_run {
            outln!("{}", crate::cli::memory::memory_line(r));
        }
        if let Some(b) = &bad {
            outln!(
                "check against {}: {} mismatches",
                check_reference(&g),
                b.len()
            );
            for &i in b.iter().take(5) {
                outln!("  D[{}][{}] = 0x{:08x}", i / n, i % n, run.out.d[i]);
            }
        }
        if let Some(e) = &energy {
            for line in crate::cli::energy::lines(e) {
                outln!("{line}");
            }
        }
        if let Some(out) = &args.out {
            outln!("D written to {}", out.display());
        }
        crate::cli::values::report_trace(trace.as_ref())?;
    }
    Ok(match bad {
        Some(b) if !b.is_empty() => 1,
        _ => 0,
    })
}
