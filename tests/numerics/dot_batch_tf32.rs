//! TF32 batches: A and B given as FP32 containers (the words whose low 13 bits are zero),
//! narrowed by `batch::tf32_patterns` and computed by `dot_batch_acc`:
//! - every published TF32 measurement set we vendor, as one batch of containers, equals the
//!   GPUs' D (A100, A2, Ada, L40S, H100, B200);
//! - random batches equal `dot_acc` row by row in every mode and TF32 preset, into FP32 and
//!   (ieee, fused, exact) FP16;
//! - `exact` equals the host's f64 sum rounded to f32 (the operands are drawn so that the sum
//!   is exact in f64), and `ieee` the host's chain of f32 `mul_add`;
//! - a word that is no TF32 container is an error naming its row and column.

use crate::common::Rng;
use std::path::PathBuf;
use tensorcore_rtl::numerics::dot::batch::{tf32_patterns, NotTf32};
use tensorcore_rtl::numerics::dot::{dot_acc, dot_batch_acc, AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, FP16, FP32, TF32};
use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::verify::measurements::load;

/// A random TF32 value as its FP32 container: sign, exponent field 124..=130 (2^-3..2^3),
/// ten random fraction bits, one in sixteen a zero.
fn tf32_container(rng: &mut Rng) -> u64 {
    let sign = (rng.next_u64() & 1) << 31;
    if rng.below(16) == 0 {
        return sign;
    }
    sign | ((124 + rng.below(7)) << 23) | ((rng.next_u64() & 0x3FF) << 13)
}

/// A random FP32 accumulator with exponent field 124..=130 and any fraction.
fn fp32_c(rng: &mut Rng) -> u32 {
    let sign = ((rng.next_u64() & 1) << 31) as u32;
    sign | (((124 + rng.below(7)) << 23) as u32) | (rng.next_u64() as u32 & 0x7F_FFFF)
}

#[test]
fn tf32_measurement_sets_as_one_batch_of_containers() {
    for (name, preset) in [
        ("A100/tf32", Preset::Ampere),
        ("A2/tf32", Preset::Ampere),
        ("Ada/tf32", Preset::Ada),
        ("L40S/tf32", Preset::Ada),
        ("H100/tf32", Preset::Hopper),
        ("B200/tf32", Preset::Blackwell),
    ] {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("data/tensor-core-measurements")
            .join(name);
        let set = load(&dir, None).unwrap_or_else(|e| panic!("{e}"));
        let words = |rows: &[Vec<u32>]| -> Vec<u64> {
            rows.iter().flatten().map(|&w| u64::from(w)).collect()
        };
        let a = tf32_patterns(&words(&set.a), set.k).expect("A holds TF32 containers");
        let b = tf32_patterns(&words(&set.b), set.k).expect("B holds TF32 containers");
        let mode = AccMode::Nvidia(preset.params(TF32, TF32).unwrap());
        let r = dot_batch_acc(
            &mode,
            RoundingMode::NearestEven,
            FP32,
            TF32,
            TF32,
            &a,
            &b,
            &set.c,
            set.k,
            set.k,
        )
        .unwrap();
        let bad = r.d.iter().zip(&set.d).filter(|(x, y)| x != y).count();
        assert!(set.d.len() >= 300, "{name}: {} rows", set.d.len());
        assert_eq!(bad, 0, "{name}: {bad} of {} rows differ", set.d.len());
    }
}

#[test]
fn tf32_batch_rows_equal_dot_acc_in_every_mode() {
    let mut rng = Rng(0x7F32);
    let (rows, k) = (64, 13);
    let a: Vec<u64> = (0..rows * k).map(|_| tf32_container(&mut rng)).collect();
    let b: Vec<u64> = (0..rows * k).map(|_| tf32_container(&mut rng)).collect();
    let c32: Vec<u32> = (0..rows).map(|_| fp32_c(&mut rng)).collect();
    // FP16 accumulators: 1.0..2.0 with random fractions and signs.
    let c16: Vec<u32> = (0..rows)
        .map(|_| ((rng.next_u64() & 1) << 15 | 0x3C00 | (rng.next_u64() & 0x3FF)) as u32)
        .collect();
    let (pa, pb) = (tf32_patterns(&a, k).unwrap(), tf32_patterns(&b, k).unwrap());
    let mut modes: Vec<(AccMode, Format)> = vec![
        (AccMode::Ieee, FP32),
        (AccMode::Fused, FP32),
        (AccMode::Exact, FP32),
        (AccMode::Ieee, FP16),
        (AccMode::Fused, FP16),
        (AccMode::Exact, FP16),
    ];
    for p in [
        Preset::Ampere,
        Preset::Ada,
        Preset::Hopper,
        Preset::Blackwell,
        Preset::H200,
    ] {
        modes.push((AccMode::Nvidia(p.params(TF32, TF32).unwrap()), FP32));
    }
    for (mode, acc) in &modes {
        let c = if *acc == FP16 { &c16 } else { &c32 };
        for width in [4, 8] {
            let r = dot_batch_acc(
                mode,
                RoundingMode::NearestEven,
                *acc,
                TF32,
                TF32,
                &pa,
                &pb,
                c,
                k,
                width,
            )
            .unwrap();
            for i in 0..rows {
                let one = dot_acc(
                    mode,
                    RoundingMode::NearestEven,
                    *acc,
                    TF32,
                    TF32,
                    &pa[i * k..(i + 1) * k],
                    &pb[i * k..(i + 1) * k],
                    c[i],
                    width,
                )
                .unwrap();
                assert_eq!(r.d[i], one.bits, "{} into {acc} row {i}", mode.name());
            }
        }
    }
}

/// `exact` is one rounding of the exact sum: with these operands (products of at most 22
/// significant bits between 2^-6 and 2^8, C between 2^-3 and 2^4) the whole sum spans fewer
/// than 53 bits, so the host's f64 sum is exact and its conversion to f32 rounds it once to
/// nearest even. `ieee` is the host's chain of fused multiply-adds in f32.
#[test]
fn tf32_batch_against_host_sums() {
    let mut rng = Rng(0x7F33);
    let (rows, k) = (500, 16);
    let a: Vec<u64> = (0..rows * k).map(|_| tf32_container(&mut rng)).collect();
    let b: Vec<u64> = (0..rows * k).map(|_| tf32_container(&mut rng)).collect();
    let c: Vec<u32> = (0..rows).map(|_| fp32_c(&mut rng)).collect();
    let (pa, pb) = (tf32_patterns(&a, k).unwrap(), tf32_patterns(&b, k).unwrap());
    let run = |mode: AccMode| {
        dot_batch_acc(
            &mode,
            RoundingMode::NearestEven,
            FP32,
            TF32,
            TF32,
            &pa,
            &pb,
            &c,
            k,
            k,
        )
        .unwrap()
        .d
    };
    let (exact, ieee) = (run(AccMode::Exact), run(AccMode::Ieee));
    let host = |w: u64| f32::from_bits(w as u32);
    let mut inexact = 0;
    for i in 0..rows {
        let mut sum = f64::from(host(u64::from(c[i])));
        let mut chain = host(u64::from(c[i]));
        for t in i * k..(i + 1) * k {
            sum += f64::from(host(a[t])) * f64::from(host(b[t]));
            chain = host(a[t]).mul_add(host(b[t]), chain);
        }
        let want = sum as f32;
        inexact += usize::from(f64::from(want) != sum);
        assert_eq!(exact[i], want.to_bits(), "exact row {i}: sum {sum:e}");
        assert_eq!(ieee[i], chain.to_bits(), "ieee row {i}");
    }
    assert!(inexact > rows / 2, "the sums round: {inexact} of {rows}");
}

#[test]
fn a_word_that_is_no_tf32_container_names_its_row_and_column() {
    let k = 3;
    let mut words = vec![0x3F80_0000u64; 2 * k];
    assert_eq!(
        tf32_patterns(&words, k).unwrap(),
        vec![0x3F80_0000 >> 13; 2 * k]
    );
    words[4] = 0x3F80_0001;
    let e = tf32_patterns(&words, k).unwrap_err();
    assert_eq!(
        e,
        NotTf32 {
            row: 1,
            col: 1,
            word: 0x3F80_0001
        }
    );
    let msg = e.to_string();
    assert!(msg.contains("row 1, column 1"), "{msg}");
    assert!(msg.contains("0x3f800001"), "{msg}");
    // The first bad word is reported; a word wider than 32 bits is no container either.
    words[1] = 0x1_0000_0000;
    let e = tf32_patterns(&words, k).unwrap_err();
    assert_eq!((e.row, e.col), (0, 1));
    // Each of the 13 low bits alone is refused.
    for bit in 0..13 {
        let e = tf32_patterns(&[0x4000_0000 | (1 << bit)], 1).unwrap_err();
        assert_eq!((e.row, e.col), (0, 0));
    }
    assert!(tf32_patterns(&[], 0).unwrap().is_empty());
}
