//! `tcrtl gemm --promote-every N`: the dense GEMM promoted to FP32 every N products along K
//! (`gemm::promote`, docs/numerics.md "FP32 promotion"): the clocked core runs each K-chunk
//! from a zero accumulator, an FP32 adder outside it adds the chunk results into D (from C),
//! and D is checked against `verify::promote_ref` (the chunks' independent references added
//! with host FP32 additions).

use super::args::GemmArgs;
use super::mx::core_format;
use crate::cli::memory::MemoryPath;
use tensorcore_rtl::gemm::promote::run_clocked_promoted;
use tensorcore_rtl::gemm::Gemm;
use tensorcore_rtl::io::npy::{write_npy, Dtype};
use tensorcore_rtl::numerics::dot::{Preset, PromoteError};
use tensorcore_rtl::verify::promote_ref::{promoted_gemm, promoted_mismatches};

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

/// Runs the promoted GEMM `g` and reports it; the exit code is 1 if the check finds
/// mismatches.
pub fn run(args: &GemmArgs, g: &Gemm, preset: Option<Preset>, every: usize) -> Result<i32, String> {
    let random = args.m.is_some();
    let run = run_clocked_promoted(g, every).map_err(|e| e.to_string())?;
    if let Some(out) = &args.out {
        let words: Vec<u64> = run.out.d.iter().map(|&w| u64::from(w)).collect();
        write_npy(out, &[g.m, g.n], Dtype::F32, &words).map_err(|e| e.to_string())?;
    }
    let check = if random || args.check {
        let want = promoted_gemm(g, preset, every)?;
        Some(promoted_mismatches(&run.out.d, &want))
    } else {
        None
    };
    let reference = "promote_ref (chunk references + FP32 additions)";
    let cfg = &g.cfg;
    let chunks = run.chunks.len();
    if args.json {
        let obj = serde_json::json!({
            "m": g.m, "n": g.n, "k": g.k,
            "format": cfg.fmt_a.name, "format_b": cfg.fmt_b.name,
            "acc": cfg.mode.name(), "preset": preset.map(|p| p.name()), "width": cfg.width,
            "rows": cfg.rows(), "cols": cfg.cols(), "dataflow": cfg.dataflow().name(),
            "out_format": cfg.acc.name,
            "seed": random.then_some(args.seed),
            "promote_every": every,
            "chunks": chunks,
            "cycles": run.cycles(),
            "chunk_cycles": run.chunks.iter().map(|r| r.cycles).collect::<Vec<_>>(),
            "macs": g.macs(),
            "utilization": run.utilization(),
            "sim_seconds": run.sim_seconds(),
            "flags": run.out.flags.names(),
            "out": args.out.as_ref().map(|p| p.display().to_string()),
            "check": check.as_ref().map(|bad| serde_json::json!({
                "reference": reference, "mismatches": bad.len(),
            })),
        });
        outln!("{obj}");
    } else {
        outln!(
            "gemm {} x {} x {} ({} x {}, {}{}, w = {}), promoted to FP32 every {every}: \
             {chunks} chunk{}, {} cycles, utilization {:.1}%; flags: {}",
            g.m,
            g.n,
            g.k,
            cfg.fmt_a,
            cfg.fmt_b,
            cfg.mode.name(),
            preset.map(|p| format!(" {p}")).unwrap_or_default(),
            cfg.width,
            if chunks == 1 { "" } else { "s" },
            run.cycles(),
            100.0 * run.utilization(),
            run.out.flags
        );
        if let Some(bad) = &check {
            outln!("check against {reference}: {} mismatches", bad.len());
            for &i in bad.iter().take(5) {
                outln!("  D[{}][{}] = 0x{:08x}", i / g.n, i % g.n, run.out.d[i]);
            }
        }
        if let Some(out) = &args.out {
            outln!("D written to {}", out.display());
        }
    }
    Ok(match check {
        Some(bad) if !bad.is_empty() => 1,
        _ => 0,
    })
}
