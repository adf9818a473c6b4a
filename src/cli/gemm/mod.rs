//! `tcrtl gemm`: D = A x B + C on the clocked tensor core, from `.npy` files or a seeded
//! random problem, with an optional waveform, a JSON summary and, for random inputs, a check
//! against the `verify` layer's independent reference. `--sparse` runs a 2:4-sparse A on the
//! core in sparse mode (`docs/sparsity.md`). An MX `--format` (`mxfp8e4m3`, ...) with
//! `--a-scales`/`--b-scales` runs a block-scaled GEMM on the core in MX mode ([`mx`]).

//! This module declares the children and dispatches to them; the children never import it.

mod args;
mod int;
pub(crate) mod load;
mod mx;
mod promote;

use super::array::ArrayArgs;
use super::memory::memory_json;
use super::pattern::{pattern_problem, Pattern};
use super::values;
pub use args::GemmArgs;
use load::{load_c, load_operand, plan_outputs};
use tensorcore_rtl::gemm::{self, run_functional, CoreConfig, Gemm, Problem};
use tensorcore_rtl::io::golden;
use tensorcore_rtl::io::npy::{write_npy, Dtype};
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::numerics::int::{IntFormat, IntMode, IntOverflow};
use tensorcore_rtl::sparse::{Prune, SparseGemm};
use tensorcore_rtl::verify::{self, gemm_ref::mismatches};

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
        rule,
    } = args.arith.resolve_datapath(acc)?;
    let cfg = args
        .array
        .apply(CoreConfig::new(fmt_a, fmt_b, mode, args.width).with_acc(acc))?;
    plan_outputs(args)?;
    let mem_cfg = super::memory::port_config(args.memory, &args.mem, args.stages, args.no_swizzle)?;
    let energy = args.energy.plan()?;
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
            load::check_npy_shapes(pa, pb)?;
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
    if let Some(every) = args.promote_every {
        return promote::run(args, &g, preset, every);
    }
    // The VCD size is estimated from the schedule before the run (refused if too large);
    // through the memory path the run takes at least these cycles.
    let problem = match &sparse {
        Some(s) => Problem::Sparse(s),
        None => Problem::Dense(&g),
    };
    let trace = trace.map(|t| t.budget(problem.schedule_cycles(), args.trace.vcd_limit_bytes()));
    // With --energy the run counts every signal's toggles (into no file of its own).
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
    let measured = done
        .measured
        .ok_or("the core reported no measured phases")?;
    let mem_run = done.memory;
    let run = done.run;
    if let Some(out) = &args.out {
        let words: Vec<u64> = run.out.d.iter().map(|&w| w as u64).collect();
        let dtype = if acc == FP16 { Dtype::U16 } else { Dtype::F32 };
        write_npy(out, &[g.m, g.n], dtype, &words).map_err(|e| e.to_string())?;
    }
    if let Some(dir) = &args.memh {
        let origin = match (random, args.pattern) {
            (true, Pattern::Random) => golden::Origin::Seed(args.seed),
            (true, p) => golden::Origin::Pattern(p.name()),
            (false, _) => golden::Origin::Files,
        };
        golden::write_golden(dir, &g, &run.out.d, preset, &origin, sparse.as_ref())?;
    }
    let check = if random || args.check {
        // The independent references of `verify` (`verify::check`); a format and preset pair
        // they lack is checked against the functional model (the numerics layer, itself
        // checked against SoftFloat and the GPU measurements).
        Some(match verify::check(problem, preset, &run.out.d)? {
            Some(c) => (c.reference, c.mismatches),
            None => {
                let want = run_functional(&g).map_err(|e| e.to_string())?.d;
                ("functional", mismatches(&run.out.d, &want))
            }
        })
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
            "rows": cfg.rows(), "cols": cfg.cols(), "dataflow": cfg.dataflow().name(),
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
        values::add_rule_keys(&mut obj, rule);
        obj["memory"] = memory_json(args.memory, mem_run.as_ref());
        if let Some(t) = &run.traffic {
            obj["traffic"] = values::traffic_json(t);
        }
        if let Some(e) = &energy {
            obj["energy"] = super::energy::json(e);
        }
        outln!("{obj}");
    } else {
        outln!(
            "gemm {} x {} x {} ({fmt_a} x {fmt_b}{}, {}{}, w = {}{}): {} cycles, {} tile{}, utilization {:.1}%",
            g.m,
            g.n,
            g.k,
            // The accumulator format, when it is not the default FP32.
            if acc == FP16 { " -> fp16" } else { "" },
            cfg.mode.name(),
            match (rule, preset) {
                (Some(r), _) => format!(" {r}"),
                (None, Some(p)) => format!(" {p}"),
                (None, None) => String::new(),
            },
            cfg.width,
            ArrayArgs::label(&cfg),
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
        if let Some(t) = &run.traffic {
            outln!("{}", t.line());
        }
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
        if let Some(e) = &energy {
            for line in super::energy::lines(e) {
                outln!("{line}");
            }
        }
        if let Some(out) = &args.out {
            outln!("D written to {}", out.display());
        }
        values::report_trace(trace.as_ref())?;
    }
    Ok(match check {
        Some((_, bad)) if !bad.is_empty() => 1,
        _ => 0,
    })
}

/// `tcrtl gemm` with integer formats (see [`int`]): dense, on the ideal memory path or
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
    int::run(&int::IntGemmJob {
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
        array: args.array,
        memory,
        files,
        random,
        out: args.out.as_deref(),
        check: args.check,
        trace: &args.trace,
        energy: &args.energy,
        json: args.json,
    })
}

/// The sparse problem of `tcrtl gemm --sparse`: a dense --a (checked, or pruned with
/// --prune), a compressed --a-values/--a-meta, or a random one with valid nibbles.
fn sparse_problem(args: &GemmArgs, cfg: CoreConfig) -> Result<SparseGemm, String> {
    tensorcore_rtl::sparse::check_b_bus(&cfg).map_err(|e| e.to_string())?;
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
