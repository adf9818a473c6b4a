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
//! the check of D are the library's (`gemm::mx_input` and `job`, which the Python
//! package calls too); this file reads the files into the job.

use super::args::GemmArgs;
use super::load::{load_c, matrix_shape, plan_outputs};
use std::path::{Path, PathBuf};
use tensorcore_rtl::gemm::mx_input::{self, Codes};
use tensorcore_rtl::gemm::{MxInputError, MxOperand, MxOptions};
use tensorcore_rtl::io::npy::{read_npy, Dtype};
use tensorcore_rtl::job::{self, GemmJob, JobError, Operands};
use tensorcore_rtl::numerics::format::FP32;
use tensorcore_rtl::numerics::mx::BlockFormat;

/// The block format named `name` (every one runs on the tensor core).
pub(super) fn core_format(name: &str) -> Option<BlockFormat> {
    BlockFormat::by_name(name)
}

/// Reads a uint8 .npy matrix (or int8, if `signed_ok`) of codes; the library checks their
/// values (`MxInput::build`, through the job).
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
    let cfg = args.array.apply(mx_input::core_config(&spec, args.width))?;
    mx_input::check_width(&spec, args.width).map_err(text)?;
    plan_outputs(args)?;
    let memory =
        crate::cli::memory::port_config(args.memory, &args.mem, args.stages, args.no_swizzle)?;
    let energy = args.energy.plan()?;
    let trace = args.trace.config()?;
    let (pa, pb) = (need(&args.a, "--a")?, need(&args.b, "--b")?);
    let (psa, psb) = (
        need(&args.a_scales, "--a-scales")?,
        need(&args.b_scales, "--b-scales")?,
    );
    let int8 = spec.int8();
    let (a, b) = (load_u8(pa, "A", int8)?, load_u8(pb, "B", int8)?);
    let c = match &args.c {
        Some(pc) => Some(Codes {
            rows: a.rows,
            cols: b.cols,
            codes: load_c(pc, a.rows, b.cols, FP32)?
                .into_iter()
                .map(u64::from)
                .collect(),
        }),
        None => None,
    };
    let operands = Operands::Mx {
        spec,
        a,
        b,
        a_scales: load_u8(psa, "A scales", false)?,
        b_scales: load_u8(psb, "B scales", false)?,
        c,
    };
    let mut job = GemmJob {
        memory,
        energy: energy.map(|e| e.request()),
        check: args.check,
        out: args.out.as_ref().map(|p| p.display().to_string()),
        ..GemmJob::new(cfg, operands)
    };
    // The library's checks; a message about one array names its file.
    let problem = job.build().map_err(|e| match &e {
        JobError::Mx(m) => match m.operand {
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
        },
        _ => e.to_string(),
    })?;
    job.trace = trace.map(|t| {
        t.budget(
            problem.problem().schedule_cycles(),
            args.trace.vcd_limit_bytes(),
        )
    });
    let report = job::run(&job, &problem).map_err(|e| e.to_string())?;
    super::report::write_outputs(args, &job, &problem, &report)?;
    let header = format!(
        "{}; flags: {}",
        super::report::header_line(
            &cfg,
            &report,
            &format!("{fa} x {fb}, fused MX, blocks of {}", spec.block())
        ),
        report.flags
    );
    super::report::print(args, &job, &report, header)
}
