//! One untraced clocked run of an 8 x 8 x K problem on one kind of core, for measuring the
//! simulator's cost per simulated cycle under `valgrind --tool=callgrind` (release build):
//! run two K values of the same kind and divide the instruction difference by the cycle
//! difference (the method of `docs/performance.md`).
//!
//! `cargo run --release --example core_cycles -- KIND K`, KIND one of `ieee` (FP16 w = 1),
//! `ieee4` (FP16 w = 4), `nvidia` (E4M3 Hopper w = 1), `nvidia4` (E4M3 Hopper w = 4),
//! `sparse` (FP16 2:4 w = 2), `mx` (MXFP8 E4M3 w = 4), `int` (INT8 w = 4), `mem` (FP16 w = 1
//! through the memory path), `ws`, `ws4` and `ws_mem` (the `ieee`, `ieee4` and `mem` problems
//! on the weight-stationary core), `ieee_vcd` / `ieee_fst` (the `ieee` problem with every signal
//! traced to a VCD / FST file in a temporary directory, removed afterwards), `ieee_saif` (the
//! same with only the switching activity counted, written as a SAIF file), `ieee_energy` (every
//! signal's toggle totals counted, no file: what `--energy` runs). Prints the
//! simulated cycles.

use tensorcore_rtl::gemm::{run_clocked, run_clocked_mx, run_memory, CoreConfig, Gemm, MxGemm};
use tensorcore_rtl::hw::{Dataflow, MemPortConfig};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{E4M3, FP16, FP32};
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow, S8};
use tensorcore_rtl::numerics::mx::{quantise, BlockFormat};
use tensorcore_rtl::rtl::TraceConfig;
use tensorcore_rtl::sparse::{run_clocked_sparse, SparseGemm};

/// The `ieee` problem traced (every signal) to `NAME` in a fresh temporary directory.
fn traced(k: usize, name: &str, make: fn(std::path::PathBuf) -> TraceConfig) -> Option<u64> {
    let dir = std::env::temp_dir().join(format!("core_cycles_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    let r = run_clocked(&dense(cfg, k), Some(&make(dir.join(name))));
    let _ = std::fs::remove_dir_all(&dir);
    match r {
        Ok(r) => Some(r.cycles),
        Err(e) => {
            eprintln!("{e}");
            None
        }
    }
}

fn dense(cfg: CoreConfig, k: usize) -> Gemm {
    Gemm::random(8, 8, k, cfg, 42).unwrap_or_else(|e| panic!("{e}"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (kind, k) = match (
        args.get(1),
        args.get(2).and_then(|s| s.parse::<usize>().ok()),
    ) {
        (Some(kind), Some(k)) if k > 0 => (kind.as_str(), k),
        _ => {
            eprintln!("usage: core_cycles KIND K");
            std::process::exit(2);
        }
    };
    let fp16 = |w: usize| CoreConfig::new(FP16, FP16, AccMode::Ieee, w);
    let hopper = |w: usize| {
        let p = Preset::Hopper
            .params(E4M3, E4M3)
            .unwrap_or_else(|e| panic!("{e}"));
        CoreConfig::new(E4M3, E4M3, AccMode::Nvidia(p), w)
    };
    let cycles = match kind {
        "ieee" => run_clocked(&dense(fp16(1), k), None).map(|r| r.cycles),
        "ieee4" => run_clocked(&dense(fp16(4), k), None).map(|r| r.cycles),
        "ieee4_energy" => {
            let trace = tensorcore_rtl::gemm::energy::counting_only(Dataflow::Os);
            run_clocked(&dense(fp16(4), k), Some(&trace)).map(|r| r.cycles)
        }
        "nvidia" => run_clocked(&dense(hopper(1), k), None).map(|r| r.cycles),
        "nvidia4" => run_clocked(&dense(hopper(4), k), None).map(|r| r.cycles),
        "int" => {
            let im = IntMode {
                a: S8,
                b: S8,
                overflow: IntOverflow::Wrap,
            };
            let cfg = CoreConfig::new(S8.container(), S8.container(), AccMode::Int(im), 4);
            run_clocked(&dense(cfg, k), None).map(|r| r.cycles)
        }
        "sparse" => {
            let g = SparseGemm::random(8, 8, k, fp16(2), 42).unwrap_or_else(|e| panic!("{e}"));
            run_clocked_sparse(&g, None).map(|r| r.cycles)
        }
        "mx" => {
            let vals = |n: usize, s: f32| -> Vec<u64> {
                (0..n)
                    .map(|i| u64::from((((i % 29) as f32 - 14.0) * s).to_bits()))
                    .collect()
            };
            let qa = quantise(BlockFormat::MxFp8E4M3, FP32, &vals(8 * k, 0.3), k)
                .unwrap_or_else(|e| panic!("{e}"));
            let qb = quantise(BlockFormat::MxFp8E4M3, FP32, &vals(8 * k, -0.7), k)
                .unwrap_or_else(|e| panic!("{e}"));
            let g =
                MxGemm::from_quantised(&qa, &qb, vec![0; 64], 4).unwrap_or_else(|e| panic!("{e}"));
            run_clocked_mx(&g, None).map(|r| r.cycles)
        }
        "ieee_energy" => {
            // The toggle totals `--energy` counts with no waveform (every register and the
            // arithmetic units' inputs), no file.
            let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
            let trace = tensorcore_rtl::gemm::energy::counting_only(Dataflow::Os);
            run_clocked(&dense(cfg, k), Some(&trace)).map(|r| r.cycles)
        }
        "ieee_count_all" => {
            // Every signal's toggle totals counted (`TraceConfig::counting`), no file.
            let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
            run_clocked(&dense(cfg, k), Some(&TraceConfig::counting())).map(|r| r.cycles)
        }
        "ieee_vcd" | "ieee_fst" | "ieee_saif" => {
            let c = match kind {
                "ieee_vcd" => traced(k, "core.vcd", TraceConfig::vcd),
                "ieee_fst" => traced(k, "core.fst", TraceConfig::fst),
                _ => traced(k, "core.saif", TraceConfig::activity),
            };
            match c {
                Some(c) => Ok(c),
                None => std::process::exit(1),
            }
        }
        "mem" => run_memory(&dense(fp16(1), k), &MemPortConfig::default(), None)
            .map(|r| r.run.run.cycles),
        "ws" => run_clocked(&dense(fp16(1).with_dataflow(Dataflow::Ws), k), None).map(|r| r.cycles),
        "ws4" => {
            run_clocked(&dense(fp16(4).with_dataflow(Dataflow::Ws), k), None).map(|r| r.cycles)
        }
        "ws_mem" => run_memory(
            &dense(fp16(1).with_dataflow(Dataflow::Ws), k),
            &MemPortConfig::default(),
            None,
        )
        .map(|r| r.run.run.cycles),
        other => {
            eprintln!("unknown kind {other}");
            std::process::exit(2);
        }
    };
    match cycles {
        Ok(c) => println!("{c}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
