//! Tensor-core throughput: simulated cycles per second of the 4x4 FP16 mesh (w = 1 and
//! w = 4; tracing off, and every signal traced to VCD; w = 1 also to FST) and the functional
//! model's MACs per second. Run with `cargo bench --bench tensor_core`. Figures:
//! `docs/performance.md`.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tensorcore_rtl::gemm::{run_clocked, run_functional, CoreConfig, Gemm};
use tensorcore_rtl::hw::Dataflow;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::rtl::TraceConfig;

fn problem(width: usize, k: usize) -> Gemm {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, width);
    Gemm::random(8, 8, k, cfg, 42).unwrap_or_else(|e| panic!("{e}"))
}

fn out_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("waves");
    let _ = std::fs::create_dir_all(&d);
    d
}

fn bench(c: &mut Criterion) {
    let mut grp = c.benchmark_group("tensor_core");
    for (w, k) in [(1usize, 2048usize), (4, 8192)] {
        let g = problem(w, k);
        let cycles = run_clocked(&g, None)
            .unwrap_or_else(|e| panic!("{e}"))
            .cycles;
        grp.throughput(Throughput::Elements(cycles));
        grp.bench_function(format!("fp16_w{w}_untraced_cycles"), |b| {
            b.iter(|| black_box(run_clocked(black_box(&g), None).map(|r| r.cycles)))
        });
        let trace = TraceConfig::vcd(out_dir().join(format!("bench_tc_w{w}.vcd")));
        grp.bench_function(format!("fp16_w{w}_vcd_all_cycles"), |b| {
            b.iter(|| black_box(run_clocked(black_box(&g), Some(&trace)).map(|r| r.cycles)))
        });
        if w == 1 {
            let trace = TraceConfig::fst(out_dir().join(format!("bench_tc_w{w}.fst")));
            grp.bench_function(format!("fp16_w{w}_fst_all_cycles"), |b| {
                b.iter(|| black_box(run_clocked(black_box(&g), Some(&trace)).map(|r| r.cycles)))
            });
            // Switching activity alone (every signal's toggles, written as SAIF): its cost
            // against the untraced run is the figure `docs/energy.md` reports.
            let trace = TraceConfig::activity(out_dir().join(format!("bench_tc_w{w}.saif")));
            grp.bench_function(format!("fp16_w{w}_saif_all_cycles"), |b| {
                b.iter(|| black_box(run_clocked(black_box(&g), Some(&trace)).map(|r| r.cycles)))
            });
        }
        // Toggle totals only, no file: what `--energy` counts (every register and the
        // arithmetic units' inputs), at both widths.
        let trace = tensorcore_rtl::gemm::energy::counting_only(Dataflow::Os);
        grp.bench_function(format!("fp16_w{w}_energy_counting_cycles"), |b| {
            b.iter(|| black_box(run_clocked(black_box(&g), Some(&trace)).map(|r| r.cycles)))
        });
    }
    let g = problem(1, 512);
    grp.throughput(Throughput::Elements(g.macs()));
    grp.bench_function("functional_fp16_macs", |b| {
        b.iter(|| black_box(run_functional(black_box(&g)).map(|o| o.d.len())))
    });
    grp.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
