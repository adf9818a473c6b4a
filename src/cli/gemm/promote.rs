//! `tcrtl gemm --promote-every N`: the dense GEMM promoted to FP32 every N products along K
//! (`gemm::promote`, docs/numerics.md "FP32 promotion"): the clocked core runs each K-chunk
//! from a zero accumulator, an FP32 adder outside it adds the chunk results into D (from C),
//! and D is checked against `verify::promote_ref` (the chunks' independent references added
//! with host FP32 additions). The library's job runs it and reports (`job`); this file
//! refuses the options that do not combine with it and words its text line.

use super::args::GemmArgs;
use super::mx::core_format;
use crate::cli::memory::MemoryPath;
use tensorcore_rtl::gemm::CoreConfig;
use tensorcore_rtl::job::RunReport;
use tensorcore_rtl::numerics::dot::{Preset, PromoteError};

/// Refuses, before anything is read, what `--promote-every` does not combine with: block
/// formats, integer formats, 2:4 sparsity, the TMA memory path, waveforms, energy and
/// `--memh` images (each chunk is a run of its own on the ideal store).
pub fn refuse_options(args: &GemmArgs) -> Result<(), String> {
    if core_format(&args.arith.format).is_some() || args.a_scales.is_some() {
        return Err(
            "--promote-every applies to dense floating-point formats, not block-scaled ones".into(),
        );
    }
    if args.arith.int_formats()?.is_some() {
        return Err(PromoteError::Integer.to_string());
    }
    let t = &args.trace;
    let refused = [
        (args.sparse, "--sparse"),
        (args.memory != MemoryPath::Ideal, "--memory tma"),
        (
            t.vcd.is_some() || t.fst.is_some() || t.saif.is_some(),
            "a waveform or SAIF",
        ),
        (args.energy.energy, "--energy"),
        (args.memh.is_some(), "--memh"),
    ];
    match refused.iter().find(|(on, _)| *on) {
        Some((_, what)) => Err(format!(
            "{what} does not combine with --promote-every (each K-chunk is a run of its own \
             on the ideal operand store)"
        )),
        None => Ok(()),
    }
}

/// The text line of a promoted run (its report is the library's, `job`).
pub fn header(cfg: &CoreConfig, preset: Option<Preset>, r: &RunReport) -> String {
    let (every, chunks) = r
        .promote
        .as_ref()
        .map_or((0, 0), |p| (p.promote_every, p.chunks));
    format!(
        "gemm {} x {} x {} ({} x {}, {}{}, w = {}), promoted to FP32 every {every}: \
         {chunks} chunk{}, {} cycles, utilization {:.1}%; flags: {}",
        r.m,
        r.n,
        r.k,
        cfg.fmt_a,
        cfg.fmt_b,
        cfg.mode.name(),
        preset.map(|p| format!(" {p}")).unwrap_or_default(),
        cfg.width,
        if chunks == 1 { "" } else { "s" },
        r.cycles,
        100.0 * r.utilization,
        r.flags
    )
}
