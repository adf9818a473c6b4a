//! `tcrtl gemm` with integer formats (`--format s8|u8|s4|u4`): D = A x B + C on the clocked
//! tensor core with an int32 accumulator (A, B as int8/uint8 .npy, C and D as int32), or a
//! seeded random problem, checked against the verify layer's `int_ref_dot`. 8-bit operands
//! also run through the TMA memory path (`--memory tma`: bytes in global and shared memory,
//! int32 C and D words).

use crate::cli::array::ArrayArgs;
use crate::cli::energy::{json as energy_json, lines as energy_lines, EnergyArgs};
use crate::cli::memory::{memory_json, memory_line, MemoryPath};
use crate::cli::operand_files::load_int_matrix;
use crate::cli::values;
use std::path::{Path, PathBuf};
use tensorcore_rtl::gemm::{self, CoreConfig, Gemm, Problem};
use tensorcore_rtl::hw::MemPortConfig;
use tensorcore_rtl::io::npy::{read_npy, shape_text, write_npy, Dtype};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::int::{IntFormat, IntMode, IntOverflow, S32};
use tensorcore_rtl::verify;

/// What one integer `gemm` run computes.
pub struct IntGemmJob<'a> {
    /// Operand formats and the overflow rule.
    pub mode: IntMode,
    /// Products per PE step.
    pub width: usize,
    /// The PE array's size.
    pub array: ArrayArgs,
    /// The memory port (`--memory tma`), or `None` for the ideal path.
    pub memory: Option<MemPortConfig>,
    /// A, B and C files (C optional), or none for a random problem.
    pub files: Option<(&'a Path, &'a Path, Option<&'a PathBuf>)>,
    /// M, N, K and the seed of a random problem.
    pub random: Option<(usize, usize, usize, u64)>,
    /// Where D goes.
    pub out: Option<&'a Path>,
    /// Check file inputs against the reference too.
    pub check: bool,
    /// Waveform options.
    pub trace: &'a values::TraceArgs,
    /// Energy options.
    pub energy: &'a EnergyArgs,
    /// Print JSON.
    pub json: bool,
}

/// Reads C: M x N int32.
fn load_c(path: &Path, m: usize, n: usize) -> Result<Vec<u32>, String> {
    let arr = read_npy(path).map_err(|e| e.to_string())?;
    if arr.dtype != Dtype::I32 {
        return Err(format!(
            "{}: C has dtype {}; expected int32",
            path.display(),
            arr.dtype.numpy_name()
        ));
    }
    if arr.shape != [m, n] {
        return Err(format!(
            "{}: C has shape {} but A x B is {m} x {n}",
            path.display(),
            shape_text(&arr.shape)
        ));
    }
    Ok(arr.iter_words().map(|w| S32.decode(w) as u32).collect())
}

/// Runs an integer `gemm`.
pub fn run(job: &IntGemmJob) -> Result<i32, String> {
    let im = job.mode;
    let cfg = job.array.apply(CoreConfig::new(
        im.a.container(),
        im.b.container(),
        AccMode::Int(im),
        job.width,
    ))?;
    let g = match (job.files, job.random) {
        (Some((pa, pb, pc)), _) => {
            let (m, ka, a) = load_int_matrix(pa, "A", im.a)?;
            let (kb, n, b) = load_int_matrix(pb, "B", im.b)?;
            if ka != kb {
                return Err(format!(
                    "inner dimensions differ: A is {m} x {ka} but B is {kb} x {n}"
                ));
            }
            values::check_size(m, n, ka)?;
            let c = match pc {
                Some(pc) => load_c(pc, m, n)?,
                None => vec![0; m * n],
            };
            Gemm::new(m, n, ka, cfg, a, b, c).map_err(|e| e.to_string())?
        }
        (None, Some((m, n, k, seed))) => {
            values::check_size(m, n, k)?;
            Gemm::random(m, n, k, cfg, seed).map_err(|e| e.to_string())?
        }
        (None, None) => return Err("give --a A.npy --b B.npy, or --m M --n N --k K".into()),
    };
    let energy = job.energy.plan()?;
    let problem = Problem::Dense(&g);
    let trace = job
        .trace
        .config()?
        .map(|t| t.budget(problem.schedule_cycles(), job.trace.vcd_limit_bytes()));
    let run_trace = match &energy {
        Some(e) => Some(e.trace(trace.clone(), &problem, job.memory.as_ref())?),
        None => trace.clone(),
    };
    let done =
        gemm::run(problem, job.memory.as_ref(), run_trace.as_ref()).map_err(|e| e.to_string())?;
    let energy = match &energy {
        Some(e) => Some(e.estimate(&problem, &done)?),
        None => None,
    };
    let mem_run = done.memory;
    let run = &done.run;
    if let Some(out) = job.out {
        let words: Vec<u64> = run.out.d.iter().map(|&w| u64::from(w)).collect();
        write_npy(out, &[g.m, g.n], Dtype::I32, &words).map_err(|e| e.to_string())?;
    }
    let check = if job.random.is_some() || job.check {
        let c = verify::check(problem, None, &run.out.d)?
            .ok_or("no independent reference for this integer problem")?;
        Some((c.reference, c.mismatches))
    } else {
        None
    };
    let names = |f: IntFormat| f.name;
    if job.json {
        let obj = serde_json::json!({
            "m": g.m, "n": g.n, "k": g.k,
            "format": names(im.a), "format_b": names(im.b),
            "acc": "int32", "overflow": im.overflow.name(), "width": cfg.width,
            "rows": cfg.rows(), "cols": cfg.cols(), "dataflow": cfg.dataflow().name(),
            "seed": job.random.map(|r| r.3),
            "cycles": run.cycles, "tiles": run.tiles, "macs": g.macs(),
            "utilization": run.utilization(),
            "sim_seconds": run.sim_seconds,
            "out": job.out.map(|p| p.display().to_string()),
            "waves": trace.as_ref().map(|t| t.path.display().to_string()),
            "check": check.as_ref().map(|(r, bad)| serde_json::json!({
                "reference": r, "mismatches": bad.len(),
            })),
            "memory": memory_json(
                if mem_run.is_some() { MemoryPath::Tma } else { MemoryPath::Ideal },
                mem_run.as_ref(),
            ),
        });
        let mut obj = obj;
        if let Some(t) = &run.traffic {
            obj["traffic"] = values::traffic_json(t);
        }
        if let Some(e) = &energy {
            obj["energy"] = energy_json(e);
        }
        outln!("{obj}");
    } else {
        outln!(
            "gemm {} x {} x {} ({} x {}, int32 {}, w = {}{}): {} cycles, {} tile{}, utilization {:.1}%",
            g.m,
            g.n,
            g.k,
            im.a,
            im.b,
            match im.overflow {
                IntOverflow::Wrap => "wrapping",
                IntOverflow::SatFinite => "satfinite",
            },
            cfg.width,
            ArrayArgs::label(&cfg),
            run.cycles,
            run.tiles,
            if run.tiles == 1 { "" } else { "s" },
            100.0 * run.utilization()
        );
        if let Some(t) = &run.traffic {
            outln!("{}", t.line());
        }
        if let Some(r) = &mem_run {
            outln!("{}", memory_line(r));
        }
        if let Some((r, bad)) = &check {
            outln!("check against {r}: {} mismatches", bad.len());
            for &i in bad.iter().take(5) {
                outln!("  D[{}][{}] = {}", i / g.n, i % g.n, run.out.d[i] as i32);
            }
        }
        if let Some(e) = &energy {
            for line in energy_lines(e) {
                outln!("{line}");
            }
        }
        if let Some(out) = job.out {
            outln!("D written to {}", out.display());
        }
        values::report_trace(trace.as_ref())?;
    }
    Ok(match check {
        Some((_, bad)) if !bad.is_empty() => 1,
        _ => 0,
    })
}
