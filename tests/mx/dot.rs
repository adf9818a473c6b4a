//! The block-scaled dot product against the verify layer's exact big-integer sums: every scaled
//! product is formed in host f64 as an exact pair (Dekker's two-product through `mul_add`),
//! summed exactly by `verify::exact::exact_of_finite` and rounded by `round_fp32`.

use crate::common::{samples, Rng};
use tensorcore_rtl::numerics::mx::{self, BlockFormat, Quantised};
use tensorcore_rtl::numerics::mx_dot::{mx_dot, MxDotMode};
use tensorcore_rtl::numerics::FP32;
use tensorcore_rtl::verify::exact::{exact_of_finite, round_fp32, RefRounding};

/// The exact value of element `i` of row `row` as two f64 factors whose product is the
/// scaled element (element x block scale, and the tensor scale).
fn factors(q: &Quantised, row: usize, i: usize) -> (f64, f64) {
    let bs = q.format.block_size();
    let per_row = q.row_len.div_ceil(bs);
    let e = mx::element_value(q.format.element(), q.elements[row * q.row_len + i]);
    let s = mx::decode_f64(q.format.scale_format(), q.scales[row * per_row + i / bs]);
    let t = q.tensor_scale.map_or(1.0, |b| f32::from_bits(b) as f64);
    (e * s, t) // e * s: at most 4 + 4 significand bits, exact
}

/// Exact terms of `a_i * b_i`: two f64 whose sum is the product exactly.
fn product_terms(a: (f64, f64), b: (f64, f64)) -> [f64; 2] {
    let x = a.0 * b.0; // <= 8 significand bits x a power of two: exact
    let y = a.1 * b.1; // two FP32 values: 48 bits, exact in f64
    let p = x * y;
    [p, x.mul_add(y, -p)]
}

fn reference(a: &Quantised, b: &Quantised, c: f32, mode: MxDotMode) -> u32 {
    let bs = a.format.block_size();
    let k = a.row_len;
    let block = |j: usize| -> Vec<f64> {
        (j * bs..((j + 1) * bs).min(k))
            .flat_map(|i| product_terms(factors(a, 0, i), factors(b, 0, i)))
            .collect()
    };
    let blocks = k.div_ceil(bs);
    match mode {
        MxDotMode::Exact => {
            let mut t = vec![c as f64];
            for j in 0..blocks {
                t.extend(block(j));
            }
            round_fp32(&exact_of_finite(&t), RefRounding::NearestEven)
        }
        MxDotMode::Fused => (0..blocks).fold(c.to_bits(), |acc, j| {
            let mut t = vec![f32::from_bits(acc) as f64];
            t.extend(block(j));
            round_fp32(&exact_of_finite(&t), RefRounding::NearestEven)
        }),
        MxDotMode::BlockTruncate => (0..blocks).fold(c.to_bits(), |acc, j| {
            let s = round_fp32(&exact_of_finite(&block(j)), RefRounding::TowardZero);
            let t = [f32::from_bits(acc) as f64, f32::from_bits(s) as f64];
            round_fp32(&exact_of_finite(&t), RefRounding::NearestEven)
        }),
    }
}

fn random_row(rng: &mut Rng, k: usize) -> Vec<u64> {
    let base = rng.below(60) as i32 - 30;
    (0..k)
        .map(|_| {
            let x = match rng.below(10) {
                0 => 0.0,
                1 => (rng.next_u64() as i64 as f64) * 2f64.powi(base - 40), // outlier-ish
                _ => (rng.next_u64() as i32 as f64) * 2f64.powi(base - 31),
            };
            (x as f32).to_bits() as u64
        })
        .collect()
}

#[test]
fn every_mode_matches_the_exact_reference() {
    let n = samples(300);
    let mut rng = Rng(0x3D07);
    let mut checked = 0;
    for fmt in BlockFormat::ALL {
        for _ in 0..n {
            let k = [16, 32, 40, 64, 96][rng.below(5) as usize];
            let a = mx::quantise(fmt, FP32, &random_row(&mut rng, k), k).unwrap();
            let b = mx::quantise(fmt, FP32, &random_row(&mut rng, k), k).unwrap();
            let c = f32::from_bits(random_row(&mut rng, 1)[0] as u32);
            for mode in MxDotMode::ALL {
                let got = mx_dot(&a, 0, &b, 0, c.to_bits(), mode).unwrap().bits as u32;
                let want = reference(&a, &b, c, mode);
                assert_eq!(
                    got,
                    want,
                    "{fmt} k={k} {} c={c:e}: {:e} vs {:e}",
                    mode.name(),
                    f32::from_bits(got),
                    f32::from_bits(want)
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 7 * 3 * 300);
}

#[test]
fn modes_differ_where_they_should_and_nan_scales_poison() {
    // Two blocks of 32: block 0 holds 1 x 1, block 1 holds 2^-24 x 1 (its own scale).
    let mut x = vec![0f32; 64];
    x[0] = 1.0;
    x[32] = 2f32.powi(-24);
    let ones = vec![1f32; 64];
    let w = |v: &[f32]| v.iter().map(|f| f.to_bits() as u64).collect::<Vec<_>>();
    let a = mx::quantise(BlockFormat::MxFp8E4M3, FP32, &w(&x), 64).unwrap();
    let b = mx::quantise(BlockFormat::MxFp8E4M3, FP32, &w(&ones), 64).unwrap();
    let c = 1.0f32.to_bits();
    // Exact: 2 + 2^-24 (a quarter ulp) rounds to 2. Fused: 1 + 1 = 2, then 2 + 2^-24 = 2.
    let d = |m| mx_dot(&a, 0, &b, 0, c, m).unwrap().bits as u32;
    assert_eq!(d(MxDotMode::Exact), 2f32.to_bits());
    assert_eq!(d(MxDotMode::Fused), 2f32.to_bits());
    // c = 1 + 2^-23: exact sum 2 + 2^-23 + 2^-24 rounds up to 2 + 2^-22; fused rounds
    // 2 + 2^-23 to 2 first (tie to even), then adds 2^-24: 2.
    let c2 = (1.0f32 + 2f32.powi(-23)).to_bits();
    let d2 = |m| mx_dot(&a, 0, &b, 0, c2, m).unwrap().bits as u32;
    assert_eq!(d2(MxDotMode::Exact), (2.0f32 + 2f32.powi(-22)).to_bits());
    assert_eq!(d2(MxDotMode::Fused), 2f32.to_bits());
    // A NaN scale (a block with NaN) makes the result NaN.
    let mut xn = x.clone();
    xn[40] = f32::NAN;
    let an = mx::quantise(BlockFormat::MxFp4, FP32, &w(&xn), 64).unwrap();
    let bn = mx::quantise(BlockFormat::MxFp4, FP32, &w(&ones), 64).unwrap();
    for m in MxDotMode::ALL {
        let r = mx_dot(&an, 0, &bn, 0, c, m).unwrap();
        assert_eq!(r.bits, 0x7FC0_0000, "{}", m.name());
    }
    // Mismatched shapes are refused.
    let short = mx::quantise(BlockFormat::MxFp4, FP32, &w(&ones[..32]), 32).unwrap();
    assert!(mx_dot(&an, 0, &short, 0, c, MxDotMode::Exact).is_err());
}
