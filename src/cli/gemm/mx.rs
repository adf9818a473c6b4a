//! `tcrtl gemm --format mxfp8e4m3|mxfp8e5m2|mxfp6e2m3|mxfp6e3m2|mxfp4|mxint8|nvfp4`: a
//! block-scaled GEMM on the clocked tensor core in MX mode. The elements come as .npy raw
//! bits (uint8, one element a byte in its low bits; MXINT8 also as int8), the block scales
//! beside them (`--a-scales`: uint8 `M x K/bs`, `--b-scales`: uint8 `K/bs x N`; E8M0 codes
//! with `bs` = 32, or E4M3 codes with `bs` = 16 for NVFP4, whose FP32 tensor scales come as
//! `--a-tensor-scale`/`--b-tensor-scale`); K must be a multiple of `bs`. The core runs the
//! `fused` MX semantics (exact block sum, scaled, one round-to-nearest-even add per block),
//! so `--check` compares D with the independent `verify::mx_ref` and with `mx_dot` in
//! `fused` mode. Ideal operand path only.

use super::args::GemmArgs;
use super::load::{load_c, matrix_shape, plan_outputs};
use crate::cli::array::ArrayArgs;
use crate::cli::memory::MemoryPath;
use std::path::{Path, PathBuf};
use tensorcore_rtl::gemm::{self, CoreConfig, MxGemm, Problem};
use tensorcore_rtl::hw::{Dataflow, MxSpec};
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP32;
use tensorcore_rtl::numerics::mx::BlockFormat;
use tensorcore_rtl::verify;

/// The block format named `name` (every one runs on the tensor core).
pub(super) fn core_format(name: &str) -> Option<BlockFormat> {
    BlockFormat::by_name(name)
}

/// The block-format names, for messages.
fn format_names() -> String {
    BlockFormat::ALL.map(|f| f.name()).join(", ")
}

/// Reads a uint8 .npy matrix (or int8, if `signed_ok`); returns (rows, cols, bytes), each
/// below `2^bits`.
fn load_u8(
    path: &Path,
    name: &str,
    bits: u32,
    signed_ok: bool,
) -> Result<(usize, usize, Vec<u8>), String> {
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
    if let Some(i) = arr.iter_words().position(|w| w >> bits != 0) {
        return Err(format!(
            "{}: {name}[{}][{}] = {:#04x} does not fit in {bits} bits",
            path.display(),
            i / cols.max(1),
            i % cols.max(1),
            arr.word(i)
        ));
    }
    Ok((rows, cols, arr.iter_words().map(|w| w as u8).collect()))
}

fn need<'a>(p: &'a Option<PathBuf>, flag: &str) -> Result<&'a PathBuf, String> {
    p.as_ref()
        .ok_or_else(|| format!("block-scaled formats need {flag} (uint8 .npy)"))
}

/// Parses `--a-tensor-scale`/`--b-tensor-scale` (NVFP4 only): an FP32 value or pattern.
fn tensor_scale(fmt: BlockFormat, text: Option<&str>, flag: &str) -> Result<Option<u32>, String> {
    match (fmt, text) {
        (BlockFormat::NvFp4, Some(t)) => crate::cli::values::operand(FP32, t)
            .map(|bits| Some(bits as u32))
            .map_err(|e| format!("{flag}: {e}")),
        (_, Some(_)) => Err(format!("{flag} applies to nvfp4 only ({fmt} has none)")),
        (_, None) => Ok(None),
    }
}

/// Checks the scale codes: NVFP4's are UE4M3 (PTX's unsigned E4M3: the sign bit must be 0).
fn check_scales(fmt: BlockFormat, scales: &[u8], path: &Path, cols: usize) -> Result<(), String> {
    if fmt != BlockFormat::NvFp4 {
        return Ok(());
    }
    match scales.iter().position(|&x| x & 0x80 != 0) {
        Some(i) => Err(format!(
            "{}: scale [{}][{}] = {:#04x} has its sign bit set; NVFP4 block scales are \
             unsigned E4M3 (UE4M3, as in PTX)",
            path.display(),
            i / cols.max(1),
            i % cols.max(1),
            scales[i]
        )),
        None => Ok(()),
    }
}

/// Refuses the options an MX GEMM does not take.
fn refuse_options(args: &GemmArgs) -> Result<(), String> {
    // Leaving --acc out means the fused MX datapath; any other mode named is refused (an
    // explicit `ieee` would otherwise run fused without a word).
    if let Some(acc) = args.arith.acc.as_deref() {
        if !acc.eq_ignore_ascii_case("fused") {
            return Err(format!(
                "--acc {acc}: MX GEMMs run the fused MX datapath (give --acc fused or leave it out)"
            ));
        }
    }
    let refused = [
        (args.arith.preset.is_some(), "--preset"),
        (
            args.m.is_some(),
            "--m/--n/--k (MX takes --a, --b, --a-scales, --b-scales)",
        ),
        (args.sparse, "--sparse"),
        (args.memory == MemoryPath::Tma, "--memory tma"),
        (args.memh.is_some(), "--memh"),
        (args.satfinite, "--satfinite"),
        (
            !args.out_format.eq_ignore_ascii_case("fp32"),
            "--out-format other than fp32 (the MX datapath accumulates in FP32)",
        ),
    ];
    for (given, what) in refused {
        if given {
            return Err(format!("{what} is not available with MX formats"));
        }
    }
    Ok(())
}

/// Runs a block-scaled GEMM (`fa`: the block format of A; B's from `--format-b` or the
/// same).
pub(super) fn run(args: &GemmArgs, fa: BlockFormat) -> Result<i32, String> {
    refuse_options(args)?;
    let fb = match &args.arith.format_b {
        Some(name) => core_format(name).ok_or_else(|| {
            format!(
                "--format-b {name}: a block-scaled --format needs a block-scaled --format-b ({})",
                format_names()
            )
        })?,
        None => fa,
    };
    let spec = MxSpec::new(fa, fb).with_tensor_scales(
        tensor_scale(fa, args.a_tensor_scale.as_deref(), "--a-tensor-scale")?,
        tensor_scale(fb, args.b_tensor_scale.as_deref(), "--b-tensor-scale")?,
    );
    spec.check()
        .map_err(|e| format!("--format {fa} --format-b {fb}: {e}"))?;
    let (ea, eb) = (MxSpec::lane_format(fa), MxSpec::lane_format(fb));
    let bs = spec.block();
    let cfg = args
        .array
        .apply(CoreConfig::new(ea, eb, AccMode::Fused, args.width))?;
    if args.width > bs {
        return Err(format!(
            "--width {}: {fa} blocks hold {bs} elements, and a PE step must not straddle two",
            args.width
        ));
    }
    plan_outputs(args)?;
    let energy = args.energy.plan()?;
    let trace = args.trace.config()?;
    let (pa, pb) = (need(&args.a, "--a")?, need(&args.b, "--b")?);
    let (psa, psb) = (
        need(&args.a_scales, "--a-scales")?,
        need(&args.b_scales, "--b-scales")?,
    );
    let int8 = spec.int8();
    let (m, k, a) = load_u8(pa, "A", ea.width(), int8)?;
    let (kb, n, b) = load_u8(pb, "B", eb.width(), int8)?;
    if k != kb {
        return Err(format!(
            "inner dimensions differ: A is {m} x {k} but B is {kb} x {n}"
        ));
    }
    if !k.is_multiple_of(bs) || k == 0 {
        return Err(format!(
            "K = {k}: {fa} GEMMs need K a multiple of {bs} (one scale per {bs} elements)"
        ));
    }
    crate::cli::values::check_size(m, n, k)?;
    let blocks = k / bs;
    let (sr, sc, sa) = load_u8(psa, "A scales", 8, false)?;
    if (sr, sc) != (m, blocks) {
        return Err(format!(
            "{}: A scales are {sr} x {sc} but A ({m} x {k}) needs {m} x {blocks}",
            psa.display()
        ));
    }
    check_scales(fa, &sa, psa, sc)?;
    let (sr, sc, sb) = load_u8(psb, "B scales", 8, false)?;
    if (sr, sc) != (blocks, n) {
        return Err(format!(
            "{}: B scales are {sr} x {sc} but B ({k} x {n}) needs {blocks} x {n}",
            psb.display()
        ));
    }
    check_scales(fb, &sb, psb, sc)?;
    let c = match &args.c {
        Some(pc) => load_c(pc, m, n, FP32)?,
        None => vec![0; m * n],
    };
    let g = MxGemm {
        cfg,
        spec,
        m,
        n,
        k,
        a: a.iter().map(|&x| u64::from(x)).collect(),
        b: b.iter().map(|&x| u64::from(x)).collect(),
        c,
        a_scales: sa,
        b_scales: sb,
    };
    let problem = Problem::Mx(&g);
    let trace = trace.map(|t| t.budget(problem.schedule_cycles(), args.trace.vcd_limit_bytes()));
    let run_trace = match &energy {
        Some(e) => Some(e.trace(trace.clone(), &problem, None)?),
        None => trace.clone(),
    };
    let done = gemm::run(problem, None, run_trace.as_ref()).map_err(|e| e.to_string())?;
    let energy = match &energy {
        Some(e) => Some(e.estimate(&problem, &done)?),
        None => None,
    };
    let run = done.run;
    if let Some(out) = &args.out {
        let words: Vec<u64> = run.out.d.iter().map(|&w| u64::from(w)).collect();
        write_npy(out, &[m, n], Dtype::F32, &words).map_err(|e| e.to_string())?;
    }
    let bad = if args.check {
        Some(check_fused(&g, &run.out.d)?)
    } else {
        None
    };
    if args.json {
        let obj = serde_json::json!({
            "m": m, "n": n, "k": k,
            "format": fa.name(), "format_b": fb.name(),
            "acc": "fused", "block": bs, "width": cfg.width,
            "rows": cfg.rows(), "cols": cfg.cols(), "dataflow": cfg.dataflow().name(),
            "a_tensor_scale": spec.a_tensor.map(f32::from_bits),
            "b_tensor_scale": spec.b_tensor.map(f32::from_bits),
            "cycles": run.cycles, "tiles": run.tiles, "macs": g.m * g.n * g.k,
            "utilization": run.utilization(),
            "sim_seconds": run.sim_seconds,
            "flags": run.out.flags.names(),
            "out": args.out.as_ref().map(|p| p.display().to_string()),
            "waves": trace.as_ref().map(|t| t.path.display().to_string()),
            "check": bad.as_ref().map(|b| serde_json::json!({
                "reference": check_references(&g), "mismatches": b.len(),
            })),
        });
        let mut obj = obj;
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
        if let Some(b) = &bad {
            outln!(
                "check against {}: {} mismatches",
                check_references(&g),
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

/// What `--check` compares D with, by dataflow.
fn check_references(g: &MxGemm) -> &'static str {
    match g.cfg.dataflow() {
        Dataflow::Os => "verify::mx_ref and mx_dot fused",
        Dataflow::Ws => "verify::mx_ref and mx_dot fused, in the ws order",
    }
}

/// Indices of D that differ from the independent `verify::mx_ref` or from the functional
/// `mx_dot` in `fused` mode (both in the core's dataflow's order).
fn check_fused(g: &MxGemm, d: &[u32]) -> Result<Vec<usize>, String> {
    let functional = g.functional().map_err(|e| e.to_string())?;
    let independent = verify::check(Problem::Mx(g), None, d)?
        .ok_or("no independent reference for this block-scaled problem")?;
    let mut bad = vec![false; d.len()];
    for &i in &independent.mismatches {
        bad[i] = true;
    }
    Ok((0..d.len())
        .filter(|&i| functional[i].bits as u32 != d[i] || bad[i])
        .collect())
}
