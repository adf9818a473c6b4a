//! Dot-product step throughput: our bit-level datapath (FP16 inputs, `ieee` and `nvidia`)
//! beside Berkeley SoftFloat's `f32_mulAdd` (softfloat-wrapper), w = 1 and w = 16.
//!
//! SoftFloat gets FP32 operands already widened from FP16 (the conversion is exact and not
//! timed), so it does strictly less work than our step, which unpacks FP16 itself.

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use softfloat_wrapper::{Float, RoundingMode, F32};
use std::hint::black_box;
use tensorcore_rtl::numerics::dot::{dot_step_w, AccMode, Preset};
use tensorcore_rtl::numerics::format::FP16;

fn bench(c: &mut Criterion) {
    let (h, f) = common::fp16_operands();
    let hopper = AccMode::Nvidia(Preset::Hopper.params(FP16, FP16).unwrap());
    let mut g = c.benchmark_group("dot_step");
    g.throughput(Throughput::Elements(1));

    g.bench_function("ours_ieee_w1", |bch| {
        let mut i = 0usize;
        let mut acc = 0x3F80_0000u32;
        bch.iter(|| {
            i = (i + 1) & 255;
            let a = [h[i]];
            let b = [h[(i + 7) & 255]];
            acc = dot_step_w::<1>(
                &AccMode::Ieee,
                FP16,
                FP16,
                black_box(&a),
                black_box(&b),
                acc,
            )
            .bits;
            acc
        })
    });
    g.bench_function("ours_nvidia_hopper_w1", |bch| {
        let mut i = 0usize;
        let mut acc = 0x3F80_0000u32;
        bch.iter(|| {
            i = (i + 1) & 255;
            let a = [h[i]];
            let b = [h[(i + 7) & 255]];
            acc = dot_step_w::<1>(&hopper, FP16, FP16, black_box(&a), black_box(&b), acc).bits;
            acc
        })
    });
    g.bench_function("softfloat_f32_mulAdd_w1", |bch| {
        let mut i = 0usize;
        let mut acc = F32::from_bits(0x3F80_0000);
        bch.iter(|| {
            i = (i + 1) & 255;
            let a = F32::from_bits(black_box(f[i]));
            let b = F32::from_bits(black_box(f[(i + 7) & 255]));
            acc = a.fused_mul_add(b, acc, RoundingMode::TiesToEven);
            acc.to_bits()
        })
    });

    g.bench_function("ours_ieee_w16", |bch| {
        let mut i = 0usize;
        let mut acc = 0x3F80_0000u32;
        bch.iter(|| {
            i = (i + 16) & 255;
            let a = &h[i..i + 16];
            let b = &h[(i + 16) & 255..((i + 16) & 255) + 16];
            acc =
                dot_step_w::<16>(&AccMode::Ieee, FP16, FP16, black_box(a), black_box(b), acc).bits;
            acc
        })
    });
    g.bench_function("ours_fused_w16", |bch| {
        let mut i = 0usize;
        let mut acc = 0x3F80_0000u32;
        bch.iter(|| {
            i = (i + 16) & 255;
            let a = &h[i..i + 16];
            let b = &h[(i + 16) & 255..((i + 16) & 255) + 16];
            acc =
                dot_step_w::<16>(&AccMode::Fused, FP16, FP16, black_box(a), black_box(b), acc).bits;
            acc
        })
    });
    g.bench_function("ours_nvidia_hopper_w16", |bch| {
        let mut i = 0usize;
        let mut acc = 0x3F80_0000u32;
        bch.iter(|| {
            i = (i + 16) & 255;
            let a = &h[i..i + 16];
            let b = &h[(i + 16) & 255..((i + 16) & 255) + 16];
            acc = dot_step_w::<16>(&hopper, FP16, FP16, black_box(a), black_box(b), acc).bits;
            acc
        })
    });
    g.bench_function("softfloat_16x_f32_mulAdd_w16", |bch| {
        let mut i = 0usize;
        let mut acc = F32::from_bits(0x3F80_0000);
        bch.iter(|| {
            i = (i + 16) & 255;
            let j = (i + 16) & 255;
            for k in 0..16 {
                let a = F32::from_bits(black_box(f[i + k]));
                let b = F32::from_bits(black_box(f[j + k]));
                acc = a.fused_mul_add(b, acc, RoundingMode::TiesToEven);
            }
            acc.to_bits()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
