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
