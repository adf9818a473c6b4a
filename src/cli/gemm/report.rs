//! The output of `tcrtl gemm`: D written to `--out` and `--memh`, and the library's
//! [`RunReport`] printed as one JSON object (`--json`) or as text lines.

use super::args::GemmArgs;
use crate::cli::array::ArrayArgs;
use crate::cli::pattern::Pattern;
use crate::cli::values;
use tensorcore_rtl::gemm::CoreConfig;
use tensorcore_rtl::io::golden;
use tensorcore_rtl::io::npy::{write_npy, Dtype};
use tensorcore_rtl::job::report::ArithKeys;
use tensorcore_rtl::job::RunReport;
use tensorcore_rtl::job::{GemmJob, JobArith, JobProblem};
use tensorcore_rtl::numerics::format::FP16;

/// Writes D to `--out` (float32; uint16 FP16 patterns for an FP16 accumulator; int32 for
/// integer formats) and the `--memh` images.
pub fn write_outputs(
    args: &GemmArgs,
    job: &GemmJob,
    problem: &JobProblem,
    report: &RunReport,
) -> Result<(), String> {
    if let Some(out) = &args.out {
        let words: Vec<u64> = report.d.iter().map(|&w| u64::from(w)).collect();
        let dtype = match report.out_format {
            "fp16" => Dtype::U16,
            "int32" => Dtype::I32,
            _ => Dtype::F32,
        };
        write_npy(out, &[report.m, report.n], dtype, &words).map_err(|e| e.to_string())?;
    }
    if let (Some(dir), Some(g)) = (&args.memh, problem.dense()) {
        let origin = match (args.m.is_some(), args.pattern) {
            (true, Pattern::Random) => golden::Origin::Seed(args.seed),
            (true, p) => golden::Origin::Pattern(p.name()),
            (false, _) => golden::Origin::Files,
        };
        golden::write_golden(
            dir,
            g,
            &report.d,
            job.preset,
            &origin,
            problem.sparse_problem(),
        )?;
    }
    Ok(())
}

/// The first text line of a run: `gemm M x N x K (WHAT, w = W ARRAY): ...`, `what` the
/// arithmetic (formats, mode, rule), the rest the run's figures. Every kind of run writes it.
pub fn header_line(cfg: &CoreConfig, r: &RunReport, what: &str) -> String {
    format!(
        "gemm {} x {} x {} ({what}, w = {}{}): {} cycles, {} tile{}, utilization {:.1}%",
        r.m,
        r.n,
        r.k,
        cfg.width,
        ArrayArgs::label(cfg),
        r.cycles,
        r.tiles,
        if r.tiles == 1 { "" } else { "s" },
        100.0 * r.utilization
    )
}

/// The first text line of a floating-point run.
pub fn float_header(cfg: &CoreConfig, arith: &JobArith, r: &RunReport) -> String {
    let what = format!(
        "{} x {}{}, {}{}",
        cfg.fmt_a,
        cfg.fmt_b,
        // The accumulator format, when it is not the default FP32.
        if cfg.acc == FP16 { " -> fp16" } else { "" },
        cfg.mode.name(),
        match (arith.rule, arith.preset) {
            (Some(r), _) => format!(" {r}"),
            (None, Some(p)) => format!(" {p}"),
            (None, None) => String::new(),
        },
    );
    header_line(cfg, r, &what)
}

/// Prints the report (JSON with `--json`, else `header` and the text lines of what the run
/// has); the exit code is 1 if the check found mismatches.
pub fn print(args: &GemmArgs, job: &GemmJob, r: &RunReport, header: String) -> Result<i32, String> {
    if args.json {
        outln!("{}", r.to_json());
    } else {
        outln!("{header}");
        // A floating-point run's second line (block-scaled, integer and promoted runs have
        // none: their first line has the flags).
        if matches!(r.arith, ArithKeys::Float { .. }) && r.promote.is_none() {
            outln!(
                "{} MACs in {:.3} s ({:.3e} cycles/s, {:.3e} MACs/s); flags: {}",
                r.macs,
                r.sim_seconds,
                r.cycles_per_second,
                r.macs_per_second,
                r.flags
            );
        }
        if let Some(t) = &r.traffic {
            outln!("{}", t.line());
        }
        if let Some(s) = &r.sparse {
            outln!(
                "{}",
                crate::cli::sparse::sparse_line(s, job.cfg.dataflow(), r.cycles)
            );
        }
        if let Some(line) = r.memory.line() {
            outln!("{line}");
        }
        if let Some(c) = &r.check {
            outln!("check against {}: {} mismatches", c.reference, c.mismatches);
            for &i in r.mismatch_at.iter().take(5) {
                let w = r.d[i];
                let shown = match r.out_format {
                    "int32" => format!("{}", w as i32),
                    "fp16" => format!("0x{w:04x}"),
                    _ => format!("0x{w:08x}"),
                };
                outln!("  D[{}][{}] = {shown}", i / r.n, i % r.n);
            }
        }
        if let Some(e) = &r.energy {
            for line in crate::cli::energy::lines(e) {
                outln!("{line}");
            }
        }
        if let Some(out) = &args.out {
            outln!("D written to {}", out.display());
        }
        values::report_trace(job.trace.as_ref())?;
    }
    Ok(match &r.check {
        Some(c) if c.mismatches > 0 => 1,
        _ => 0,
    })
}
