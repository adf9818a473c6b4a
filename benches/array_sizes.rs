//! Simulation cost against the array's size: simulated cycles per second of the untraced FP16
//! `ieee` w = 1 core on square arrays from 1 x 1 to 32 x 32 and on the thin 1 x 32 and 32 x 1,
//! each running a GEMM of 2R x 2C x 256 (four tiles of 256 steps), in both dataflows (`os`,
//! and `ws`: the same GEMM as passes over the weight tiles). PE-cycles per second are the
//! cycles per second times R x C. Run with `cargo bench --bench array_sizes`. Figures:
//! `docs/performance.md`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tensorcore_rtl::gemm::{run_clocked, CoreConfig, Gemm};
use tensorcore_rtl::hw::Dataflow;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;

/// The sizes measured.
const SIZES: [(usize, usize); 8] = [
    (1, 1),
    (2, 2),
    (4, 4),
    (8, 8),
    (16, 16),
    (32, 32),
    (1, 32),
    (32, 1),
];

fn bench(c: &mut Criterion) {
    let mut grp = c.benchmark_group("array_sizes");
    for dataflow in Dataflow::ALL {
        for (rows, cols) in SIZES {
            let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1)
                .with_array(rows, cols)
                .unwrap_or_else(|e| panic!("{e}"))
                .with_dataflow(dataflow);
            let g =
                Gemm::random(2 * rows, 2 * cols, 256, cfg, 42).unwrap_or_else(|e| panic!("{e}"));
            let cycles = run_clocked(&g, None)
                .unwrap_or_else(|e| panic!("{e}"))
                .cycles;
            grp.throughput(Throughput::Elements(cycles));
            // The os names are those of earlier runs, so their figures compare.
            let name = match dataflow {
                Dataflow::Os => format!("fp16_w1_{rows}x{cols}_cycles"),
                Dataflow::Ws | Dataflow::Is => format!("fp16_w1_{rows}x{cols}_{dataflow}_cycles"),
            };
            grp.bench_function(name, |b| {
                b.iter(|| black_box(run_clocked(black_box(&g), None).map(|r| r.cycles)))
            });
        }
    }
    grp.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
