//! The directed tests of Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA
//! tensor cores" (PeerJ Computer Science 7:e330, 2021), every vector of their CUDA suite
//! (north-numerical-computing/tensor-cores-numerical-behavior, commit 9dae3fc) for the V100
//! (preset `volta`), the T4 (preset `turing`) and the A100 in binary16, bfloat16 and TF32
//! (preset `ampere`).
//!
//! Their programs run `wmma::mma_sync` on 16 x 16 x 16 tiles (16 x 16 x 8 for TF32) with A
//! row-major, B column-major and C column-major, and read `d[0]`: so each vector below is
//! row 0 of A, column 0 of B and `c[0][0]`, every other k slot 0 (K = 16, or 8 for TF32).
//! Each test is named after the item their program prints (section letter, item); each
//! expected value is the one their program checks (file and line in the comment, at the
//! commit above) or, where a GPU prints FAIL for an item, what the paper reports for that
//! GPU. Files: `V100` = tc_test_numerics-V100.cu, `T4A100` =
//! tc_test_numerics-T4-A100-binary16.cu, `BF16` = tc_test_numerics-A100-bf16.cu, `TF32` =
//! tc_test_numerics-A100-tf32.cu.
//!
//! The T4 runs the T4A100 program, whose checks are the A100's. Fasi et al. report that the
//! T4 behaves as the V100 (no extra alignment bit, truncation, blocks of four); where the
//! A100's check and the V100's behaviour differ (D1, D3, D5), the T4 tests assert the V100's
//! result: the value the V100 program checks for the same vector (D1, D3), or the value worked
//! out by hand from the paper's V100 description (D5, whose T4A100 vector the V100 program
//! does not hold).
//!
//! tc_test_numerics-A100-binary64.cu (DMMA, binary64 in and out: A1 binary64 subnormals in
//! input, A2 in output, B1 accumulation in binary64, C1-C3 round to nearest for positive and
//! negative values and ties to even, D1 extra alignment bits, D2 and D3 normalisation, D4 no
//! carry-out bits, D5 monotonicity) runs on the FP64 datapath, in
//! tests/numerics/fma64.rs (`fasi_binary64_directed_tests`).
//!
//! Three of their checks are weaker than the vector they run, and the tests assert more:
//! - A4 in the V100 and T4A100 files (binary16 subnormals in output, binary16 mode) tests
//!   `h_c[0] != 0`, the FP32 array left by A3, instead of the FP16 result, for its first
//!   vector; the tests check the FP16 result, and both vectors against the exact 2^-15 (an
//!   FP16 subnormal), where the programs check only "nonzero".
//! - A5 (binary32 mode) checks "nonzero"; the exact result is 2^-15, an FP32 value.
//! - B1 overwrites its first check's result with its second; both are asserted here.

use crate::common::{exact_fp16 as h, exact_fp32 as s, p2};
use tensorcore_rtl::numerics::convert::tf32_from_container;
use tensorcore_rtl::numerics::dot::{dot_acc, AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, FP16, FP32, TF32};
use tensorcore_rtl::numerics::RoundingMode;

/// One GPU configuration of the suite: the preset, the input format and the wmma K.
#[derive(Clone, Copy)]
struct Gpu {
    preset: Preset,
    fmt: Format,
    k: usize,
}

fn v100() -> Gpu {
    Gpu {
        preset: Preset::Volta,
        fmt: FP16,
        k: 16,
    }
}

fn t4() -> Gpu {
    Gpu {
        preset: Preset::by_name("turing").expect("preset turing"),
        fmt: FP16,
        k: 16,
    }
}

fn a100(fmt: Format) -> Gpu {
    Gpu {
        preset: Preset::Ampere,
        fmt,
        k: if fmt == TF32 { 8 } else { 16 },
    }
}

/// The input encoding of an exactly representable value (`half` for FP16 and BF16, the FP32
/// container for TF32).
fn enc(fmt: Format, v: f64) -> u64 {
    if fmt == FP16 {
        h(v) as u64
    } else if fmt == BF16 {
        let x = half::bf16::from_f64(v);
        assert_eq!(x.to_f64(), v, "{v} is not a BF16 value");
        x.to_bits() as u64
    } else if fmt == TF32 {
        tf32_from_container(s(v)).unwrap_or_else(|| panic!("{v} is not a TF32 value"))
    } else {
        panic!("no encoder for {fmt}")
    }
}

/// `d[0]` of the GPU's wmma on row `a`, column `b` (zero-padded to K) and `c` bits in `acc`.
fn run_acc(g: Gpu, acc: Format, a: &[f64], b: &[f64], c: u32) -> u32 {
    let mut av: Vec<u64> = a.iter().map(|&v| enc(g.fmt, v)).collect();
    let mut bv: Vec<u64> = b.iter().map(|&v| enc(g.fmt, v)).collect();
    av.resize(g.k, enc(g.fmt, 0.0));
    bv.resize(g.k, enc(g.fmt, 0.0));
    let params = g.preset.params_for(g.fmt, g.fmt, acc).unwrap();
    dot_acc(
        &AccMode::Nvidia(params),
        RoundingMode::NearestEven,
        acc,
        g.fmt,
        g.fmt,
        &av,
        &bv,
        c,
        g.k.min(32),
    )
    .unwrap()
    .bits
}

/// FP32 accumulator ("binary32 mode").
fn run(g: Gpu, a: &[f64], b: &[f64], c: f64) -> u32 {
    run_acc(g, FP32, a, b, s(c))
}

/// FP16 accumulator ("binary16 mode").
fn run16(g: Gpu, a: &[f64], b: &[f64], c: f64) -> u32 {
    run_acc(g, FP16, a, b, h(c))
}

// ---- The vectors, shared by the GPUs whose programs run them. ----

/// B3 "Products are accumulated in binary32": four products x 2^-24 (x = 1 on the V100,
/// 0.5 in the T4A100, BF16 and TF32 programs) added to c = 1.
fn b3_accumulated_in_binary32(g: Gpu, x: f64) -> u32 {
    run(g, &[x; 4], &[p2(-24); 4], 1.0)
}

/// B4 "Sum starts from largest element": c = 2^-24, three products x 2^-24 and a product
/// 1 x 1 moving through slots 0..3 (x = 1 on the V100, 0.5 elsewhere). Returns each slot's D.
fn b4_sum_from_largest(g: Gpu, x: f64) -> Vec<u32> {
    (0..4)
        .map(|j| {
            let mut a = [x; 4];
            let mut b = [p2(-24); 4];
            a[j] = 1.0;
            b[j] = 1.0;
            run(g, &a, &b, p2(-24))
        })
        .collect()
}

/// C1 "Round-down for positive values": a = 1 x4, b0 = 2, b1 = 2^-23 + 2^-24.
fn c1_round_down_positive(g: Gpu) -> u32 {
    run(g, &[1.0; 4], &[2.0, p2(-23) + p2(-24)], 0.0)
}

/// C2 "Round-up for negative values": C1 negated.
fn c2_round_up_negative(g: Gpu) -> u32 {
    run(g, &[1.0; 4], &[-2.0, -(p2(-23) + p2(-24))], 0.0)
}

/// D1 "Extra bits in the significand alignment": 1 x 1 + c, c = -(1 - 2^-24).
fn d1_extra_alignment_bits(g: Gpu) -> u32 {
    run(g, &[1.0], &[1.0], -(1.0 - p2(-24)))
}

/// D2 "Normalization in addition": a = 1 x4, b = 2^-24 x4, c = 1 - 2^-24.
fn d2_normalization_in_addition(g: Gpu) -> u32 {
    run(g, &[1.0; 4], &[p2(-24); 4], 1.0 - p2(-24))
}

/// D3 "Normalization in subtraction": 1 x 1 + 1 x (-2^-24) + c, c = -1 + 2^-24.
fn d3_normalization_in_subtraction(g: Gpu) -> u32 {
    run(g, &[1.0, 1.0], &[1.0, -p2(-24)], -1.0 + p2(-24))
}

/// D4 "Extra bits for carry out", its four parts: (a) b = 1 x4 but 2^-23 in slot i, c = 1 +
/// 2^-22 + 2^-23, for i = 0..3; (b) b = (1, 1.5, 1.75, 1.875), c = 1.875; (c) a = b = 1 x4,
/// c = 1 + 2^-22 + 2^-23; (d) (c) with b and c negated.
fn d4_carry_out(g: Gpu) -> (Vec<u32>, u32, u32, u32) {
    let c = 1.0 + p2(-22) + p2(-23);
    let walk = (0..4)
        .map(|i| {
            let mut b = [1.0; 4];
            b[i] = p2(-23);
            run(g, &[1.0; 4], &b, c)
        })
        .collect();
    (
        walk,
        run(g, &[1.0; 4], &[1.0, 1.5, 1.75, 1.875], 1.875),
        run(g, &[1.0; 4], &[1.0; 4], c),
        run(g, &[1.0; 4], &[-1.0; 4], -c),
    )
}

/// D5 "Monotonicity of dot product" as the T4A100, BF16 and TF32 programs run it: a = 0.5
/// x4, b = (2^-24, 2^-24, 2^-24, 2^-23 + 2^-24), first with c = 1 - 2^-24 (`partial`), then
/// with c = 1. Returns (partial, d).
fn d5_monotonicity(g: Gpu) -> (u32, u32) {
    let a = [0.5; 4];
    let b = [p2(-24), p2(-24), p2(-24), p2(-23) + p2(-24)];
    (run(g, &a, &b, 1.0 - p2(-24)), run(g, &a, &b, 1.0))
}

fn f(bits: u32) -> f32 {
    f32::from_bits(bits)
}

// ---- V100 (tc_test_numerics-V100.cu) and T4 (tc_test_numerics-T4-A100-binary16.cu). ----

/// A1 "Binary16 subnormals in input (binary16 mode)": 2^-24 x 4 into FP16 is 2^-22
/// (V100:176-181, T4A100:177-182).
#[test]
fn v100_t4_a1_binary16_subnormals_in_input_binary16_mode() {
    for g in [v100(), t4()] {
        assert_eq!(run16(g, &[p2(-24)], &[4.0], 0.0), h(p2(-22)));
    }
}

/// A2 "Binary16 subnormals in input (binary32 mode)": 2^-22 (V100:183-188, T4A100:184-189).
#[test]
fn v100_t4_a2_binary16_subnormals_in_input_binary32_mode() {
    for g in [v100(), t4()] {
        assert_eq!(run(g, &[p2(-24)], &[4.0], 0.0), s(p2(-22)));
    }
}

/// A3 "Binary32 subnormals in input": c = 2^-149 comes back (V100:190-194, T4A100:191-195).
#[test]
fn v100_t4_a3_binary32_subnormals_in_input() {
    for g in [v100(), t4()] {
        assert_eq!(run(g, &[], &[], p2(-149)), s(p2(-149)));
    }
}

/// A4 "Binary16 subnormals in output (binary16 mode)": 2^-14 x 2^-1, and 2^-14 x 1 + c with
/// c = -2^-15, both nonzero (V100:196-207, T4A100:197-208); both are exactly 2^-15.
#[test]
fn v100_t4_a4_binary16_subnormals_in_output_binary16_mode() {
    for g in [v100(), t4()] {
        let d1 = run16(g, &[p2(-14)], &[p2(-1)], 0.0);
        let d2 = run16(g, &[p2(-14)], &[1.0], -p2(-15));
        assert!(d1 & 0x7FFF != 0 && d2 & 0x7FFF != 0);
        assert_eq!((d1, d2), (h(p2(-15)), h(p2(-15))));
    }
}

/// A5 "Binary16 subnormals in output (binary32 mode)": as A4 into FP32, nonzero
/// (V100:209-220, T4A100:210-221); both are exactly 2^-15.
#[test]
fn v100_t4_a5_binary16_subnormals_in_output_binary32_mode() {
    for g in [v100(), t4()] {
        let d1 = run(g, &[p2(-14)], &[p2(-1)], 0.0);
        let d2 = run(g, &[p2(-14)], &[1.0], -p2(-15));
        assert!(d1 << 1 != 0 && d2 << 1 != 0);
        assert_eq!((d1, d2), (s(p2(-15)), s(p2(-15))));
    }
}

/// B1 "Products are computed exactly": (1 - 2^-11)^2 = 1 - 2^-10 + 2^-22, and four such
/// products with c = 0 (V100:226-240, T4A100:227-241).
#[test]
fn v100_t4_b1_products_computed_exactly() {
    let x = 1.0 - p2(-11);
    let one = 1.0 - p2(-10) + p2(-22);
    for g in [v100(), t4()] {
        assert_eq!(run(g, &[x], &[x], 0.0), s(one));
        assert_eq!(run(g, &[x; 4], &[x; 4], 0.0), s(4.0 * one));
    }
}

/// B2 "Products exact (binary16 mode)": (1 - 2^-11)^2 + (1 - 2^-11) 2^-11 into FP16 is
/// 1 - 2^-10 + 2^-11 (V100:242-250, T4A100:243-251).
#[test]
fn v100_t4_b2_products_exact_binary16_mode() {
    let x = 1.0 - p2(-11);
    for g in [v100(), t4()] {
        let d = run16(g, &[x, x], &[x, p2(-11)], 0.0);
        assert_eq!(d, h(1.0 - p2(-10) + p2(-11)));
    }
}

/// B3 "Products are accumulated in binary32": D = 1 (V100:252-262 with a = 1,
/// T4A100:253-263 with a = 0.5).
#[test]
fn v100_t4_b3_products_accumulated_in_binary32() {
    assert_eq!(b3_accumulated_in_binary32(v100(), 1.0), s(1.0));
    assert_eq!(b3_accumulated_in_binary32(t4(), 0.5), s(1.0));
}

/// B4 "Sum starts from largest element": D = 1 for every slot of the 1 x 1 product
/// (V100:264-279 with x = 1, T4A100:265-283 with x = 0.5).
#[test]
fn v100_t4_b4_sum_starts_from_largest_element() {
    assert_eq!(b4_sum_from_largest(v100(), 1.0), vec![s(1.0); 4]);
    assert_eq!(b4_sum_from_largest(t4(), 0.5), vec![s(1.0); 4]);
}

/// C1 "Round-down for positive values": D = 2 (V100:285-293, T4A100:289-297).
#[test]
fn v100_t4_c1_round_down_for_positive_values() {
    for g in [v100(), t4()] {
        assert_eq!(c1_round_down_positive(g), s(2.0));
    }
}

/// C2 "Round-up for negative values": D = -2 (V100:295-303, T4A100:299-307).
#[test]
fn v100_t4_c2_round_up_for_negative_values() {
    for g in [v100(), t4()] {
        assert_eq!(c2_round_up_negative(g), s(-2.0));
    }
}

/// C3 "Accum. is rounded to nearest (binary16 mode)": 2^-24 x 2^-1 + 2^-24 x 2^-2 into FP16
/// is 2^-24 (V100:305-313, T4A100:309-317).
#[test]
fn v100_t4_c3_accumulator_rounded_to_nearest_binary16_mode() {
    for g in [v100(), t4()] {
        let d = run16(g, &[p2(-24), p2(-24)], &[p2(-1), p2(-2)], 0.0);
        assert_eq!(d, h(p2(-24)));
    }
}

/// D1 "Extra bits in the significand alignment": V100 2^-23 (V100:319-327). The T4A100
/// program checks the A100's 2^-24 (T4A100:331); the T4 gives the V100's 2^-23 (Fasi et al.:
/// T4 as V100), so it prints FAIL there.
#[test]
fn v100_t4_d1_extra_bits_in_significand_alignment() {
    assert_eq!(d1_extra_alignment_bits(v100()), s(p2(-23)));
    assert_eq!(d1_extra_alignment_bits(t4()), s(p2(-23)));
}

/// D2 "Normalization in addition": D = 1 + 2^-23 (V100:329-338, T4A100:333-342).
#[test]
fn v100_t4_d2_normalization_in_addition() {
    for g in [v100(), t4()] {
        assert_eq!(d2_normalization_in_addition(g), s(1.0 + p2(-23)));
    }
}

/// D3 "Normalization in subtraction": V100 2^-23 (V100:340-349). The T4A100 program checks
/// the A100's 0 (T4A100:344-353); the T4 gives the V100's 2^-23 and prints FAIL there.
#[test]
fn v100_t4_d3_normalization_in_subtraction() {
    assert_eq!(d3_normalization_in_subtraction(v100()), s(p2(-23)));
    assert_eq!(d3_normalization_in_subtraction(t4()), s(p2(-23)));
}

/// D4 "Extra bits for carry out": 4 + 2^-21 for each slot, 8, 5 and -5 (V100:351-402,
/// T4A100:355-406).
#[test]
fn v100_t4_d4_extra_bits_for_carry_out() {
    for g in [v100(), t4()] {
        let (walk, third_bit, pos, neg) = d4_carry_out(g);
        assert_eq!(walk, vec![s(4.0 + p2(-21)); 4]);
        assert_eq!((third_bit, pos, neg), (s(8.0), s(5.0), s(-5.0)));
    }
}

/// D5 "Monotonicity of dot product", V100 vector: a = 1 x4, b = 2^-24 x4; c = 1 - 2^-24
/// gives `partial`, c = 1 gives D, and the program passes when D < partial (V100:404-415):
/// the V100's sum is not monotonic. `partial` is D2's vector, so it is 1 + 2^-23 (V100:337).
#[test]
fn v100_d5_monotonicity_of_dot_product() {
    let g = v100();
    let partial = run(g, &[1.0; 4], &[p2(-24); 4], 1.0 - p2(-24));
    let d = run(g, &[1.0; 4], &[p2(-24); 4], 1.0);
    assert_eq!(partial, s(1.0 + p2(-23)));
    assert!(f(d) < f(partial));
}

/// D5 on the T4 with the T4A100 vector (T4A100:408-423 passes when D < partial, the A100's
/// behaviour). With the V100's alignment (24 bits under the largest exponent, truncated; Fasi
/// et al.), c = 1 - 2^-24 keeps only the 3 x 2^-25 product, truncated to 2^-24, and gives 1;
/// c = 1 drops all four and gives 1: D = partial, so the T4 prints FAIL (monotonic here).
#[test]
fn t4_d5_monotonicity_of_dot_product() {
    let (partial, d) = d5_monotonicity(t4());
    assert_eq!((partial, d), (s(1.0), s(1.0)));
}

// ---- A100 binary16 (tc_test_numerics-T4-A100-binary16.cu, every check as written). ----

#[test]
fn a100_fp16_a1_binary16_subnormals_in_input_binary16_mode() {
    // T4A100:177-182.
    assert_eq!(run16(a100(FP16), &[p2(-24)], &[4.0], 0.0), h(p2(-22)));
}

#[test]
fn a100_fp16_a2_binary16_subnormals_in_input_binary32_mode() {
    // T4A100:184-189.
    assert_eq!(run(a100(FP16), &[p2(-24)], &[4.0], 0.0), s(p2(-22)));
}

#[test]
fn a100_fp16_a3_binary32_subnormals_in_input() {
    // T4A100:191-195.
    assert_eq!(run(a100(FP16), &[], &[], p2(-149)), s(p2(-149)));
}

#[test]
fn a100_fp16_a4_binary16_subnormals_in_output_binary16_mode() {
    // T4A100:197-208 (nonzero; exactly 2^-15).
    let g = a100(FP16);
    assert_eq!(run16(g, &[p2(-14)], &[p2(-1)], 0.0), h(p2(-15)));
    assert_eq!(run16(g, &[p2(-14)], &[1.0], -p2(-15)), h(p2(-15)));
}

#[test]
fn a100_fp16_a5_binary16_subnormals_in_output_binary32_mode() {
    // T4A100:210-221 (nonzero; exactly 2^-15).
    let g = a100(FP16);
    assert_eq!(run(g, &[p2(-14)], &[p2(-1)], 0.0), s(p2(-15)));
    assert_eq!(run(g, &[p2(-14)], &[1.0], -p2(-15)), s(p2(-15)));
}

#[test]
fn a100_fp16_b1_products_computed_exactly() {
    // T4A100:227-241.
    let (g, x, one) = (a100(FP16), 1.0 - p2(-11), 1.0 - p2(-10) + p2(-22));
    assert_eq!(run(g, &[x], &[x], 0.0), s(one));
    assert_eq!(run(g, &[x; 4], &[x; 4], 0.0), s(4.0 * one));
}

#[test]
fn a100_fp16_b2_products_exact_binary16_mode() {
    // T4A100:243-251.
    let x = 1.0 - p2(-11);
    let d = run16(a100(FP16), &[x, x], &[x, p2(-11)], 0.0);
    assert_eq!(d, h(1.0 - p2(-10) + p2(-11)));
}

#[test]
fn a100_fp16_b3_products_accumulated_in_binary32() {
    // T4A100:253-263.
    assert_eq!(b3_accumulated_in_binary32(a100(FP16), 0.5), s(1.0));
}

#[test]
fn a100_fp16_b4_sum_starts_from_largest_element() {
    // T4A100:265-283.
    assert_eq!(b4_sum_from_largest(a100(FP16), 0.5), vec![s(1.0); 4]);
}

#[test]
fn a100_fp16_c1_round_down_for_positive_values() {
    // T4A100:289-297.
    assert_eq!(c1_round_down_positive(a100(FP16)), s(2.0));
}

#[test]
fn a100_fp16_c2_round_up_for_negative_values() {
    // T4A100:299-307.
    assert_eq!(c2_round_up_negative(a100(FP16)), s(-2.0));
}

#[test]
fn a100_fp16_c3_accumulator_rounded_to_nearest_binary16_mode() {
    // T4A100:309-317.
    let d = run16(a100(FP16), &[p2(-24), p2(-24)], &[p2(-1), p2(-2)], 0.0);
    assert_eq!(d, h(p2(-24)));
}

#[test]
fn a100_fp16_d1_extra_bits_in_significand_alignment() {
    // T4A100:323-331: 2^-24 (one extra bit).
    assert_eq!(d1_extra_alignment_bits(a100(FP16)), s(p2(-24)));
}

#[test]
fn a100_fp16_d2_normalization_in_addition() {
    // T4A100:333-342.
    assert_eq!(d2_normalization_in_addition(a100(FP16)), s(1.0 + p2(-23)));
}

#[test]
fn a100_fp16_d3_normalization_in_subtraction() {
    // T4A100:344-353: 0.
    assert_eq!(d3_normalization_in_subtraction(a100(FP16)), s(0.0));
}

#[test]
fn a100_fp16_d4_extra_bits_for_carry_out() {
    // T4A100:355-406.
    let (walk, third_bit, pos, neg) = d4_carry_out(a100(FP16));
    assert_eq!(walk, vec![s(4.0 + p2(-21)); 4]);
    assert_eq!((third_bit, pos, neg), (s(8.0), s(5.0), s(-5.0)));
}

#[test]
fn a100_fp16_d5_monotonicity_of_dot_product() {
    // T4A100:408-423: D < partial (not monotonic).
    let (partial, d) = d5_monotonicity(a100(FP16));
    assert!(f(d) < f(partial));
}

// ---- A100 bfloat16 (tc_test_numerics-A100-bf16.cu). ----

#[test]
fn a100_bf16_a1_bfloat16_subnormals_in_input_binary32_mode() {
    // BF16:181-186: 2^-133 x 2^7 = 2^-126.
    assert_eq!(run(a100(BF16), &[p2(-133)], &[p2(7)], 0.0), s(p2(-126)));
}

#[test]
fn a100_bf16_a2_binary32_subnormals_in_input() {
    // BF16:188-192.
    assert_eq!(run(a100(BF16), &[], &[], p2(-149)), s(p2(-149)));
}

#[test]
fn a100_bf16_a3_bfloat16_binary32_subnormals_in_output_binary32_mode() {
    // BF16:194-206: 2^-126 x 2^-1 = 2^-127; 2^-126 x 1 - 2^-127 = 2^-127.
    let g = a100(BF16);
    assert_eq!(run(g, &[p2(-126)], &[p2(-1)], 0.0), s(p2(-127)));
    assert_eq!(run(g, &[p2(-126)], &[1.0], -p2(-127)), s(p2(-127)));
}

#[test]
fn a100_bf16_b1_products_computed_exactly() {
    // BF16:212-226: (1 - 2^-8)^2 = 1 - 2^-7 + 2^-16, and four of them.
    let (g, x, one) = (a100(BF16), 1.0 - p2(-8), 1.0 - p2(-7) + p2(-16));
    assert_eq!(run(g, &[x], &[x], 0.0), s(one));
    assert_eq!(run(g, &[x; 4], &[x; 4], 0.0), s(4.0 * one));
}

#[test]
fn a100_bf16_b2_products_accumulated_in_binary32() {
    // BF16:228-238.
    assert_eq!(b3_accumulated_in_binary32(a100(BF16), 0.5), s(1.0));
}

/// The program writes `h_b[j-1]` also for j = 0 (before the array); slots 1..3 as intended.
#[test]
fn a100_bf16_b3_sum_starts_from_largest_element() {
    // BF16:240-257.
    assert_eq!(b4_sum_from_largest(a100(BF16), 0.5), vec![s(1.0); 4]);
}

#[test]
fn a100_bf16_c1_round_down_for_positive_values() {
    // BF16:263-271.
    assert_eq!(c1_round_down_positive(a100(BF16)), s(2.0));
}

#[test]
fn a100_bf16_c2_round_up_for_negative_values() {
    // BF16:273-281.
    assert_eq!(c2_round_up_negative(a100(BF16)), s(-2.0));
}

#[test]
fn a100_bf16_d1_extra_bits_in_significand_alignment() {
    // BF16:287-295: 2^-24.
    assert_eq!(d1_extra_alignment_bits(a100(BF16)), s(p2(-24)));
}

#[test]
fn a100_bf16_d2_normalization_in_addition() {
    // BF16:297-306.
    assert_eq!(d2_normalization_in_addition(a100(BF16)), s(1.0 + p2(-23)));
}

#[test]
fn a100_bf16_d3_normalization_in_subtraction() {
    // BF16:308-317: 0.
    assert_eq!(d3_normalization_in_subtraction(a100(BF16)), s(0.0));
}

#[test]
fn a100_bf16_d4_extra_bits_for_carry_out() {
    // BF16:319-370.
    let (walk, third_bit, pos, neg) = d4_carry_out(a100(BF16));
    assert_eq!(walk, vec![s(4.0 + p2(-21)); 4]);
    assert_eq!((third_bit, pos, neg), (s(8.0), s(5.0), s(-5.0)));
}

#[test]
fn a100_bf16_d5_monotonicity_of_dot_product() {
    // BF16:372-387: D < partial.
    let (partial, d) = d5_monotonicity(a100(BF16));
    assert!(f(d) < f(partial));
}

// ---- A100 TF32 (tc_test_numerics-A100-tf32.cu; wmma 16 x 16 x 8). ----

#[test]
fn a100_tf32_a1_tf32_subnormals_in_input_binary32_mode() {
    // TF32:167-172: 2^-136 x 2^10 = 2^-126.
    assert_eq!(run(a100(TF32), &[p2(-136)], &[p2(10)], 0.0), s(p2(-126)));
}

#[test]
fn a100_tf32_a2_binary32_subnormals_in_input() {
    // TF32:174-178.
    assert_eq!(run(a100(TF32), &[], &[], p2(-149)), s(p2(-149)));
}

#[test]
fn a100_tf32_a3_tf32_binary32_subnormals_in_output_binary32_mode() {
    // TF32:180-191.
    let g = a100(TF32);
    assert_eq!(run(g, &[p2(-126)], &[p2(-1)], 0.0), s(p2(-127)));
    assert_eq!(run(g, &[p2(-126)], &[1.0], -p2(-127)), s(p2(-127)));
}

/// The program loads the FP32 value 1 - 2^-24 into TF32 fragments and checks
/// (1 - 2^-11)^2 = 1 - 2^-10 + 2^-22: the load keeps the TF32 value 1 - 2^-11 (the top 19
/// bits), which is the operand given here.
#[test]
fn a100_tf32_b1_products_computed_exactly() {
    // TF32:197-211.
    let (g, x, one) = (a100(TF32), 1.0 - p2(-11), 1.0 - p2(-10) + p2(-22));
    assert_eq!(run(g, &[x], &[x], 0.0), s(one));
    assert_eq!(run(g, &[x; 4], &[x; 4], 0.0), s(4.0 * one));
}

#[test]
fn a100_tf32_b2_products_accumulated_in_binary32() {
    // TF32:213-223.
    assert_eq!(b3_accumulated_in_binary32(a100(TF32), 0.5), s(1.0));
}

#[test]
fn a100_tf32_b3_sum_starts_from_largest_element() {
    // TF32:225-242.
    assert_eq!(b4_sum_from_largest(a100(TF32), 0.5), vec![s(1.0); 4]);
}

#[test]
fn a100_tf32_c1_round_down_for_positive_values() {
    // TF32:248-256.
    assert_eq!(c1_round_down_positive(a100(TF32)), s(2.0));
}

#[test]
fn a100_tf32_c2_round_up_for_negative_values() {
    // TF32:258-266.
    assert_eq!(c2_round_up_negative(a100(TF32)), s(-2.0));
}

#[test]
fn a100_tf32_d1_extra_bits_in_significand_alignment() {
    // TF32:272-280: 2^-24.
    assert_eq!(d1_extra_alignment_bits(a100(TF32)), s(p2(-24)));
}

#[test]
fn a100_tf32_d2_normalization_in_addition() {
    // TF32:282-291.
    assert_eq!(d2_normalization_in_addition(a100(TF32)), s(1.0 + p2(-23)));
}

#[test]
fn a100_tf32_d3_normalization_in_subtraction() {
    // TF32:293-302: 0.
    assert_eq!(d3_normalization_in_subtraction(a100(TF32)), s(0.0));
}

#[test]
fn a100_tf32_d4_extra_bits_for_carry_out() {
    // TF32:304-355.
    let (walk, third_bit, pos, neg) = d4_carry_out(a100(TF32));
    assert_eq!(walk, vec![s(4.0 + p2(-21)); 4]);
    assert_eq!((third_bit, pos, neg), (s(8.0), s(5.0), s(-5.0)));
}

#[test]
fn a100_tf32_d5_monotonicity_of_dot_product() {
    // TF32:357-372: D < partial.
    let (partial, d) = d5_monotonicity(a100(TF32));
    assert!(f(d) < f(partial));
}
