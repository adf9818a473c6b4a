//! FP32 addition through our datapath (`numerics::add`: unpack, align, add, shared
//! normalize-round-pack) against Berkeley SoftFloat's `f32_add` (via softfloat-wrapper), side
//! by side on one fixed pseudo-random input set. Host `f32` addition is shown as a floor.
//!
//! Run: `cargo bench --bench numerics`. Figures are recorded in docs/performance.md.

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use softfloat_wrapper::{Float, RoundingMode as SfRound, F32};
use std::hint::black_box;
use tensorcore_rtl::numerics::{add, RoundingMode, FP32};

fn fp32_add(c: &mut Criterion) {
    let pairs = common::fp32_pairs();
    let mut g = c.benchmark_group("fp32_add");
    g.throughput(Throughput::Elements(pairs.len() as u64));
    g.bench_function("tcrtl_numerics_add", |bch| {
        bch.iter(|| {
            let mut acc = 0u64;
            for &(a, b) in black_box(&pairs) {
                acc ^= add(FP32, a as u64, b as u64, RoundingMode::NearestEven)
                    .rounded
                    .bits;
            }
            acc
        })
    });
    g.bench_function("softfloat_f32_add", |bch| {
        bch.iter(|| {
            let mut acc = 0u32;
            for &(a, b) in black_box(&pairs) {
                acc ^= F32::from_bits(a)
                    .add(F32::from_bits(b), SfRound::TiesToEven)
                    .to_bits();
            }
            acc
        })
    });
    g.bench_function("host_f32_add", |bch| {
        bch.iter(|| {
            let mut acc = 0u32;
            for &(a, b) in black_box(&pairs) {
                acc ^= (f32::from_bits(a) + f32::from_bits(b)).to_bits();
            }
            acc
        })
    });
    g.finish();
}

criterion_group!(benches, fp32_add);
criterion_main!(benches);
