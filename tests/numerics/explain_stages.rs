//! The stage-by-stage explanation of a dot product, worked by hand (into FP32 and FP16).

use tensorcore_rtl::numerics::dot::explain::{explain, explain_acc, StepStages};
use tensorcore_rtl::numerics::dot::{AccMode, BlockRule, Preset};
use tensorcore_rtl::numerics::format::{E4M3, FP16};
use tensorcore_rtl::numerics::RoundingMode;

/// A Volta alignment probe (docs/numerics.md, "Probe inputs that reveal each feature"),
/// `1 - 2^-24`: c = 1, one product -2^-12 x 2^-12. By hand:
/// c = 1 sets max_exp 0, the grid LSB is 2^(0 - 23 - neab 0) = 2^-23; the product's
/// significand 1024 x 1024 = 2^20 has its LSB at 2^(-24 - 20) = 2^-44, so it shifts right
/// by -23 - (-44) = 21: all 21 bits go, the product is dropped whole and c is returned.
#[test]
fn volta_drops_the_whole_small_product() {
    let volta = AccMode::Nvidia(Preset::Volta.params(FP16, FP16).expect("volta"));
    let e = explain(
        &volta,
        RoundingMode::NearestEven,
        FP16,
        FP16,
        &[0x8c00],
        &[0x0c00],
        0x3f80_0000,
        1,
    )
    .expect("explain");
    assert_eq!(e.steps.len(), 1);
    let StepStages::Nvidia {
        align,
        dropped,
        c_dropped,
        sum,
        ..
    } = &e.steps[0].stages
    else {
        panic!("not a truncating block: {:?}", e.steps[0].stages);
    };
    assert_eq!(align.max_exp, 0);
    assert_eq!(align.lsb_exp, -23);
    assert_eq!(align.align_shift[0], 21);
    assert_eq!(align.aligned[0], 0);
    assert_eq!(dropped[0], 1 << 20);
    assert_eq!(*c_dropped, 0);
    assert_eq!(sum.sum, 1 << 23);
    assert_eq!(e.steps[0].bits, 0x3f80_0000);
    assert_eq!(e.result.bits, 0x3f80_0000);
}

/// Hopper, FP16 inputs into FP16 (n = 16, two extra bits), c = 1, products 2^-11 and 2^-12.
/// By hand: c sets max_exp 0, the grid LSB is 2^(0 - 23 - 2) = 2^-25, so c is 2^25 units and
/// the products 2^14 and 2^13 units, nothing dropped; the sum 1 + 2^-11 + 2^-12 has the bit
/// just below FP16's last fraction bit (2^-11, guard) set and a nonzero bit below it
/// (sticky): round to nearest even goes up, to 1 + 2^-10 = 0x3c01. With the second product
/// gone the sum 1 + 2^-11 is a tie and stays at 1 (0x3c00, even).
#[test]
fn hopper_fp16_output_rounds_the_block_sum_once_to_nearest_even() {
    let hopper = AccMode::Nvidia(Preset::Hopper.params_for(FP16, FP16, FP16).expect("hopper"));
    for (a, b, sum, guard, sticky, want) in [
        (
            &[0x3c00u64, 0x3c00][..],
            &[0x1000u64, 0x0c00][..],
            (1i64 << 25) + (1 << 14) + (1 << 13),
            true,
            true,
            0x3c01u32,
        ),
        (
            &[0x3c00][..],
            &[0x1000][..],
            (1 << 25) + (1 << 14),
            true,
            false,
            0x3c00,
        ),
    ] {
        let e = explain_acc(
            &hopper,
            RoundingMode::NearestEven,
            FP16,
            FP16,
            FP16,
            a,
            b,
            0x3c00,
            16,
        )
        .expect("explain");
        assert_eq!(e.acc, FP16);
        assert_eq!(e.steps.len(), 1);
        let StepStages::Nvidia {
            align,
            sum: s,
            round,
            ..
        } = &e.steps[0].stages
        else {
            panic!("not a truncating block: {:?}", e.steps[0].stages);
        };
        assert_eq!(align.max_exp, 0);
        assert_eq!(align.lsb_exp, -25);
        assert_eq!(align.c_aligned, 1 << 25);
        assert_eq!(s.sum, sum);
        assert!(!s.dropped);
        assert_eq!((round.trace.guard, round.trace.sticky), (guard, sticky));
        assert_eq!(round.trace.round_inc, sticky);
        assert_eq!(round.bits as u32, want);
        assert_eq!(e.result.bits, want);
        assert!(e.result.flags.inexact);
    }
}

/// Hopper E4M3 into FP16 (`BlockRule::K16Steps`), K = 4: A = 256, 0.125, 0.125, 0 and B = 1,
/// c = +0. By hand: s1 takes lanes 0 and 1 (k mod 4 in {0, 1}): 256.125, a tie between the
/// FP16 neighbours 256 and 256.25 (ulp 0.25 at 2^8), rounds to even, 256 (0x5c00); s2 takes
/// s1 and lanes 2 and 3: 256.125 again, 256; d = RNE16(0 + 256) = 256. One rounding of the
/// exact sum (the `exact` mode) gives 256.25 (0x5c01): the steps' own roundings show.
#[test]
fn hopper_fp8_fp16_output_shows_both_k16_steps_rounding() {
    let params = Preset::Hopper.params_for(E4M3, E4M3, FP16).expect("hopper");
    assert_eq!(params.rule, BlockRule::K16Steps);
    let (a, b) = ([0x78u64, 0x20, 0x20, 0x00], [0x38u64; 4]);
    let mode = AccMode::Nvidia(params);
    let e = explain_acc(
        &mode,
        RoundingMode::NearestEven,
        FP16,
        E4M3,
        E4M3,
        &a,
        &b,
        0,
        32,
    )
    .expect("explain");
    assert_eq!(e.steps.len(), 1);
    let StepStages::NvidiaK16Steps { s1, s2, add } = &e.steps[0].stages else {
        panic!("not the k16 steps: {:?}", e.steps[0].stages);
    };
    assert_eq!(s1.lanes, vec![0, 1]);
    assert_eq!(s2.lanes, vec![2, 3]);
    assert_eq!((s1.c, s1.bits), (0, 0x5c00));
    assert_eq!((s2.c, s2.bits), (0x5c00, 0x5c00));
    for st in [s1, s2] {
        let StepStages::Nvidia { round, .. } = &st.stages else {
            panic!("not a truncating block: {:?}", st.stages);
        };
        // 256.125 on FP16's grid: guard set, nothing below, no increment (256 is even).
        assert_eq!(
            (round.trace.guard, round.trace.sticky, round.trace.round_inc),
            (true, false, false)
        );
        assert!(st.flags.inexact);
    }
    assert_eq!(add.rounded.bits, 0x5c00);
    assert_eq!(e.result.bits, 0x5c00);
    let exact = explain_acc(
        &AccMode::Exact,
        RoundingMode::NearestEven,
        FP16,
        E4M3,
        E4M3,
        &a,
        &b,
        0,
        4,
    )
    .expect("exact");
    assert_eq!(exact.result.bits, 0x5c01);
}
