//! FP32 addition through our datapath (`numerics::add`: unpack, align, add, shared
//! normalize-round-pack) against Berkeley SoftFloat's `f32_add` (via softfloat-wrapper), side
//! by side on one fixed pseudo-random input set. Host `f32` addition is shown as a floor.
//!
//! Run: `cargo bench --bench numerics`. Figures are recorded in docs/performance.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use softfloat_wrapper::{Float, RoundingMode as SfRound, F32};
use std::hint::black_box;
use tensorcore_rtl::numerics::{add, RoundingMode, FP32};

/// 4096 operand pairs: three quarters finite values with exponents spread over the whole
/// range and nearby pairs (cancellations, carries), one quarter raw random bit patterns
/// (specials and subnormals included). Fixed seed, so every run sees the same set.
fn inputs() -> Vec<(u32, u32)> {
    let mut s = 0x5EED_u64;
    let mut next = move || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    (0..4096)
        .map(|i| {
            let r = next();
            let a = r as u32;
            let b = (r >> 32) as u32;
            if i % 4 == 3 {
                (a, b)
            } else {
                // Finite operands whose exponents differ by at most 31.
                let ea = 1 + (a >> 23) % 254;
                let eb = (ea + (b >> 23) % 32).saturating_sub(16).clamp(1, 254);
                (
                    (a & 0x807F_FFFF) | (ea << 23),
                    (b & 0x807F_FFFF) | (eb << 23),
                )
            }
        })
        .collect()
}

fn fp32_add(c: &mut Criterion) {
    let pairs = inputs();
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
