//! The memory path's cost in simulation speed: simulated cycles per second of the same
//! 32 x 32 x 512 FP16 GEMM (w = 1, tracing off) on the ideal operand port and through the
//! memory path (global memory, TMA, shared-memory stages, TMA store; latency 500 cycles,
//! 16 bytes a cycle), side by side in one run. Run with `cargo bench --bench memory_path`.
//! Figures: `docs/performance.md`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tensorcore_rtl::gemm::{run_clocked, run_memory, CoreConfig, Gemm};
use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::MemPortConfig;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;

fn bench(c: &mut Criterion) {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    let g = Gemm::random(32, 32, 512, cfg, 42).unwrap_or_else(|e| panic!("{e}"));
    let pc = MemPortConfig {
        params: MemParams {
            latency: 500,
            bytes_per_cycle: 16,
            ..MemParams::default()
        },
        ..MemPortConfig::default()
    };
    let mut grp = c.benchmark_group("memory_path");
    grp.sample_size(10);
    let ideal = run_clocked(&g, None)
        .unwrap_or_else(|e| panic!("{e}"))
        .cycles;
    grp.throughput(Throughput::Elements(ideal));
    grp.bench_function("ideal_fp16_w1_cycles", |b| {
        b.iter(|| black_box(run_clocked(black_box(&g), None).map(|r| r.cycles)))
    });
    let tma = run_memory(&g, &pc, None)
        .unwrap_or_else(|e| panic!("{e}"))
        .run
        .run
        .cycles;
    grp.throughput(Throughput::Elements(tma));
    grp.bench_function("tma_fp16_w1_cycles", |b| {
        b.iter(|| black_box(run_memory(black_box(&g), &pc, None).map(|r| r.run.run.cycles)))
    });
    grp.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
