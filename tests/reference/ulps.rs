//! Distance in ulps between two FP16 or FP32 patterns, as the grader counts it.

use tensorcore_rtl::verify::ulps::{fp16_ulps, fp32_ulps};

#[test]
fn ulps_count_fp16_steps() {
    assert_eq!(fp16_ulps(0x3C00, 0x3C01), Some(1));
    assert_eq!(fp16_ulps(0x3C00, 0x3BFF), Some(1)); // across a binade
    assert_eq!(fp16_ulps(0x0001, 0x8001), Some(2)); // across zero
    assert_eq!(fp16_ulps(0x0000, 0x8000), Some(0));
    assert_eq!(fp16_ulps(0x7BFF, 0x7C00), Some(1)); // max to Inf
    assert_eq!(fp16_ulps(0x7E00, 0x3C00), None);
}

#[test]
fn ulps_count_fp32_steps() {
    assert_eq!(fp32_ulps(0x3F80_0000, 0x3F80_0001), Some(1));
    assert_eq!(fp32_ulps(0x3F80_0000, 0x3F7F_FFFF), Some(1)); // across a binade
    assert_eq!(fp32_ulps(0x0000_0001, 0x8000_0001), Some(2)); // across zero
    assert_eq!(fp32_ulps(0x0000_0000, 0x8000_0000), Some(0));
    assert_eq!(fp32_ulps(0x7F7F_FFFF, 0x7F80_0000), Some(1)); // max to Inf
    assert_eq!(fp32_ulps(0x7FC0_0000, 0x3F80_0000), None);
}

/// Against the number line itself: every non-NaN FP16 value ranked by its host `f64` value
/// (+0 and -0 sharing a rank), the ulp distance of two encodings is the difference of their
/// ranks. Checked on a strided sample of pairs spanning every binade, subnormals and Inf.
#[test]
fn fp16_ulps_match_the_rank_on_the_number_line() {
    let mut values: Vec<f64> = (0..=u16::MAX)
        .map(|h| half::f16::from_bits(h).to_f64())
        .filter(|v| !v.is_nan())
        .collect();
    values.sort_by(f64::total_cmp);
    values.dedup_by(|x, y| x == y); // -0 == +0
    let rank = |h: u16| {
        let v = half::f16::from_bits(h).to_f64();
        values.partition_point(|&x| x < v) as u64
    };
    let mut checked = 0;
    for a in (0..=u16::MAX).step_by(61) {
        for b in (0..=u16::MAX).step_by(757) {
            let (va, vb) = (half::f16::from_bits(a), half::f16::from_bits(b));
            if va.is_nan() || vb.is_nan() {
                assert_eq!(fp16_ulps(a, b), None);
                continue;
            }
            assert_eq!(
                fp16_ulps(a, b),
                Some(rank(a).abs_diff(rank(b))),
                "{a:#06x} {b:#06x}"
            );
            checked += 1;
        }
    }
    assert!(checked > 50_000, "{checked}");
}
