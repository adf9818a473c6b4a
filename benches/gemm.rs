//! GEMM throughput of the functional model (`gemm::run_functional`): multiply-accumulates
//! per second on a 16 x 16 x 64 problem in FP16 (`ieee` w = 1, `fused` w = 16, `nvidia`
//! hopper) and E4M3 (`nvidia` hopper). Compare with `cycles_per_second` of `tcrtl gemm --json`
//! (docs/performance.md, "GEMM command line").

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use tensorcore_rtl::gemm::{run_functional, CoreConfig, Gemm};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{E4M3, FP16};

fn bench(c: &mut Criterion) {
    let hopper16 = AccMode::Nvidia(Preset::Hopper.params(FP16, FP16).unwrap());
    let hopper8 = AccMode::Nvidia(Preset::Hopper.params(E4M3, E4M3).unwrap());
    let cases = [
        ("fp16_ieee_w1", FP16, AccMode::Ieee, 1),
        ("fp16_fused_w16", FP16, AccMode::Fused, 16),
        ("fp16_nvidia_hopper", FP16, hopper16, 1),
        ("e4m3_nvidia_hopper", E4M3, hopper8, 1),
    ];
    let mut g = c.benchmark_group("gemm_functional_16x16x64");
    for (name, fmt, mode, width) in cases {
        let cfg = CoreConfig::new(fmt, fmt, mode, width);
        let p = Gemm::random(16, 16, 64, cfg, 1).unwrap();
        g.throughput(Throughput::Elements(p.macs()));
        g.bench_function(name, |b| b.iter(|| run_functional(black_box(&p)).unwrap()));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
