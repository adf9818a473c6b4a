//! `tcrtl gemm`: D = A x B + C on the clocked tensor core, from `.npy` files or a seeded
//! random problem, with an optional waveform, a JSON summary and, for random inputs, a check
//! against the `verify` layer's independent reference. `--sparse` runs a 2:4-sparse A on the
//! core in sparse mode (`docs/sparsity.md`). An MX `--format` (`mxfp8e4m3`, ...) with
//! `--a-scales`/`--b-scales` runs a block-scaled GEMM on the core in MX mode ([`mx`]).
//!
//! The problem is the library's [`GemmJob`] (this command reads the files into it) and the
//! run's report its [`tensorcore_rtl::job::RunReport`], printed as JSON or text
//! ([`report`]).

//! This module declares the children and dispatches to them; the children never import it.

mod args;
mod int;
pub(crate) mod load;
mod mx;
mod promote;
mod report;

pub use args::GemmArgs;
use load::plan_outputs;
use tensorcore_rtl::job::GemmJob;
use tensorcore_rtl::job::{self, JobError};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::sparse::input::CompressedOperand;
use tensorcore_rtl::sparse::Prune;

/// Runs `tcrtl gemm`.
pub fn run(args: &GemmArgs) -> Result<i32, String> {
    if args.promote_every.is_some() {
        promote::refuse_options(args)?;
    }
    if let Some(fa) = mx::core_format(&args.arith.format) {
        return mx::run(args, fa);
    }
    if args.a_scales.is_some()
        || args.b_scales.is_some()
        || args.a_tensor_scale.is_some()
        || args.b_tensor_scale.is_some()
    {
        return Err(
            tensorcore_rtl::gemm::mx_input::scales_need_block_format(&args.arith.format)
                .to_string(),
        );
    }
    let arith = job::arith(
        &args.arith.names(),
        &args.out_format,
        args.width,
        args.satfinite,
    )
    .map_err(|e| e.to_string())?;
    let int = matches!(arith.cfg.mode, AccMode::Int(_));
    if int && args.memh.is_some() {
        return Err("--memh golden images are FP32; not for integer formats".into());
    }
    let cfg = args.array.apply(arith.cfg)?;
    plan_outputs(args)?;
    let memory = super::memory::port_config(args.memory, &args.mem, args.stages, args.no_swizzle)?;
    let energy = args.energy.plan()?;
    let trace = args.trace.config()?;
    if args.sparse {
        // The core's refusal before any file is read (the job checks it again).
        tensorcore_rtl::sparse::check_b_bus(&cfg).map_err(|e| e.to_string())?;
    }
    let mut job = GemmJob {
        preset: arith.preset,
        rule: arith.rule,
        sparse: args.sparse.then_some(if args.sparse_a.prune {
            Prune::KeepLargest
        } else {
            Prune::Off
        }),
        memory,
        energy: energy.map(|e| e.request()),
        check: args.check,
        promote_every: args.promote_every,
        out: args.out.as_ref().map(|p| p.display().to_string()),
        ..GemmJob::new(cfg, load::operands(args, cfg)?)
    };
    let problem = job.build().map_err(|e| job_error(args, e))?;
    // The VCD size is estimated from the schedule before the run (refused if too large);
    // through the memory path the run takes at least these cycles.
    job.trace = trace.map(|t| {
        t.budget(
            problem.problem().schedule_cycles(),
            args.trace.vcd_limit_bytes(),
        )
    });
    let report = job::run(&job, &problem).map_err(|e| e.to_string())?;
    report::write_outputs(args, &job, &problem, &report)?;
    let header = if int {
        int::header(&cfg, &report)
    } else if report.promote.is_some() {
        promote::header(&cfg, arith.preset, &report)
    } else {
        report::float_header(&cfg, &arith, &report)
    };
    report::print(args, &job, &report, header)
}

/// A job's error as the command line words it: a message about one input file starts with
/// the file.
fn job_error(args: &GemmArgs, e: JobError) -> String {
    match &e {
        JobError::Compressed(c) => {
            let path = match c.operand {
                Some(CompressedOperand::Values) => args.sparse_a.a_values.as_ref(),
                Some(CompressedOperand::Meta) => args.sparse_a.a_meta.as_ref(),
                None => None,
            };
            match path {
                Some(p) => format!("{}: {e}", p.display()),
                None => e.to_string(),
            }
        }
        _ => e.to_string(),
    }
}
