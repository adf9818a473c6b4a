//! A fixed-work driver for instruction counting: runs `N` operations of one kind on the same
//! operands as `benches/dot.rs` and `benches/numerics.rs`, so `valgrind --tool=callgrind`
//! (repeatable, unlike wall-clock time on a shared machine) can count instructions per op.
//!
//! `cargo build --release --example numerics_ops`, then e.g.
//! `valgrind --tool=callgrind target/release/examples/numerics_ops ieee_w1 100000` and the same
//! with 200000: the difference of the two totals divided by 100000 is the cost of one
//! operation (start-up and operand set-up cancel out).
//!
//! Kinds: `ieee_w1`, `ieee_w16`, `nvidia_w1`, `nvidia_w16`, `sf_mul_add` (SoftFloat
//! `f32_mulAdd`), `add` (our FP32 add), `sf_add` (SoftFloat `f32_add`). For the w = 16 kinds
//! `N` counts steps (16 products each); for `add`/`sf_add` it counts single additions.

#[path = "../benches/common/mod.rs"]
mod common;

use softfloat_wrapper::{Float, RoundingMode as SfRound, F32};
use std::hint::black_box;
use tensorcore_rtl::numerics::dot::{dot_step_w, AccMode, Preset};
use tensorcore_rtl::numerics::{add, RoundingMode, FP16, FP32};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kind = args.get(1).map(String::as_str).unwrap_or("ieee_w1");
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    // Optional third argument: repeat the run that many times and print the fastest time per
    // operation (the minimum is the figure least disturbed by other jobs on the machine).
    let reps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(0);
    let (h, f) = common::fp16_operands();
    let ops = Operands {
        h,
        f,
        pairs: common::fp32_pairs(),
    };
    if reps > 0 {
        let best = (0..reps)
            .map(|_| {
                let t = std::time::Instant::now();
                black_box(run(kind, n, &ops));
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        println!(
            "{kind}: {:.2} ns/op (best of {reps} x {n})",
            best * 1e9 / n as f64
        );
        return;
    }
    let acc = run(kind, n, &ops);
    println!("{kind} x {n}: {acc:#010x}");
}

/// The operand sets, built once outside the timed runs.
struct Operands {
    h: Vec<u64>,
    f: Vec<u32>,
    pairs: Vec<(u32, u32)>,
}

/// Runs `n` operations of `kind`; returns a value depending on all results. Each kind is
/// its own function with the mode a constant, as in the criterion closures of the benches, so
/// the compiler's inlining decisions match theirs.
fn run(kind: &str, n: usize, ops: &Operands) -> u32 {
    let hopper = AccMode::Nvidia(Preset::Hopper.params(FP16, FP16).unwrap());
    match kind {
        "ieee_w1" => ieee_w1(n, &ops.h),
        "nvidia_w1" => nvidia_w1(n, &ops.h, &hopper),
        "ieee_w16" => ieee_w16(n, &ops.h),
        "nvidia_w16" => nvidia_w16(n, &ops.h, &hopper),
        "sf_mul_add" => sf_mul_add(n, &ops.f),
        "add" => fp32_add(n, &ops.pairs),
        "sf_add" => sf_add(n, &ops.pairs),
        other => {
            eprintln!("unknown kind {other}");
            std::process::exit(2);
        }
    }
}

#[inline(never)]
fn ieee_w1(n: usize, h: &[u64]) -> u32 {
    let mut acc = 0x3F80_0000u32;
    for j in 0..n {
        let i = (j + 1) & 255;
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
    }
    acc
}

#[inline(never)]
fn nvidia_w1(n: usize, h: &[u64], mode: &AccMode) -> u32 {
    let mut acc = 0x3F80_0000u32;
    for j in 0..n {
        let i = (j + 1) & 255;
        let a = [h[i]];
        let b = [h[(i + 7) & 255]];
        acc = dot_step_w::<1>(mode, FP16, FP16, black_box(&a), black_box(&b), acc).bits;
    }
    acc
}

#[inline(never)]
fn ieee_w16(n: usize, h: &[u64]) -> u32 {
    let mut acc = 0x3F80_0000u32;
    for j in 0..n {
        let i = (j * 16 + 16) & 255;
        let k = (i + 16) & 255;
        let (a, b) = (&h[i..i + 16], &h[k..k + 16]);
        acc = dot_step_w::<16>(&AccMode::Ieee, FP16, FP16, black_box(a), black_box(b), acc).bits;
    }
    acc
}

#[inline(never)]
fn nvidia_w16(n: usize, h: &[u64], mode: &AccMode) -> u32 {
    let mut acc = 0x3F80_0000u32;
    for j in 0..n {
        let i = (j * 16 + 16) & 255;
        let k = (i + 16) & 255;
        let (a, b) = (&h[i..i + 16], &h[k..k + 16]);
        acc = dot_step_w::<16>(mode, FP16, FP16, black_box(a), black_box(b), acc).bits;
    }
    acc
}

#[inline(never)]
fn sf_mul_add(n: usize, f: &[u32]) -> u32 {
    let mut x = F32::from_bits(0x3F80_0000);
    for j in 0..n {
        let i = (j + 1) & 255;
        let a = F32::from_bits(black_box(f[i]));
        let b = F32::from_bits(black_box(f[(i + 7) & 255]));
        x = a.fused_mul_add(b, x, SfRound::TiesToEven);
    }
    x.to_bits()
}

#[inline(never)]
fn fp32_add(n: usize, pairs: &[(u32, u32)]) -> u32 {
    let mut acc = 0u32;
    for j in 0..n {
        let (a, b) = black_box(pairs[j & 4095]);
        acc ^= add(FP32, a as u64, b as u64, RoundingMode::NearestEven)
            .rounded
            .bits as u32;
    }
    acc
}

#[inline(never)]
fn sf_add(n: usize, pairs: &[(u32, u32)]) -> u32 {
    let mut acc = 0u32;
    for j in 0..n {
        let (a, b) = black_box(pairs[j & 4095]);
        acc ^= F32::from_bits(a)
            .add(F32::from_bits(b), SfRound::TiesToEven)
            .to_bits();
    }
    acc
}
