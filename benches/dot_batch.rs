//! Batch dot-product throughput (`numerics::dot::dot_batch`, the engine of `tcrtl dot --a
//! A.npy ...`): `nvidia` hopper, FP16 inputs, K = w = 16 (one block FMA per row), 2^18 rows
//! per iteration on the default rayon pool (one thread per core), reported in rows per
//! second. Run: `cargo bench --bench dot_batch`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use tensorcore_rtl::numerics::dot::{dot_batch, AccMode, Preset};
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::numerics::RoundingMode;

const ROWS: usize = 1 << 18;
const K: usize = 16;

/// Finite FP16 patterns with exponents near the bias (rows that carry, cancel and round),
/// from a fixed SplitMix64 stream.
fn operands() -> (Vec<u64>, Vec<u64>, Vec<u32>) {
    let mut s = 1u64;
    let mut next = move || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut fp16 = || {
        let r = next();
        ((r & 1) << 15) | ((13 + (r >> 8) % 5) << 10) | ((r >> 16) & 0x3FF)
    };
    let a: Vec<u64> = (0..ROWS * K).map(|_| fp16()).collect();
    let b: Vec<u64> = (0..ROWS * K).map(|_| fp16()).collect();
    let c: Vec<u32> = (0..ROWS)
        .map(|i| 0x3F80_0000 | (i as u32 & 0x7F_FFFF))
        .collect();
    (a, b, c)
}

fn bench(c: &mut Criterion) {
    let (a, b, acc) = operands();
    let hopper = AccMode::Nvidia(Preset::Hopper.params(FP16, FP16).expect("hopper fp16"));
    let mut g = c.benchmark_group("dot_batch");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.sample_size(20);
    g.bench_function("nvidia_hopper_fp16_w16", |bch| {
        bch.iter(|| {
            dot_batch(
                &hopper,
                RoundingMode::NearestEven,
                FP16,
                FP16,
                black_box(&a),
                black_box(&b),
                black_box(&acc),
                K,
                16,
            )
            .expect("valid batch")
            .d
            .len()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
