//! The block-scaled reference: OCP element and scale tables, dot products by hand.

use tensorcore_rtl::numerics::mx::BlockFormat;
use tensorcore_rtl::verify::exact::as_f64;
use tensorcore_rtl::verify::mx_ref::{element, fused_dot, scale};

/// The OCP tables: E2M1 is 0, 0.5, 1, 1.5, 2, 3, 4, 6; E2M3's largest is 7.5 and its
/// smallest subnormal 0.125; E3M2's largest 28 and smallest subnormal 0.0625; MXINT8 -128
/// is -2.
#[test]
fn tables() {
    let e2m1: Vec<f64> = (0..8)
        .map(|c| as_f64(element(BlockFormat::MxFp4, c)))
        .collect();
    assert_eq!(e2m1, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
    assert_eq!(as_f64(element(BlockFormat::MxFp4, 0xF)), -6.0);
    assert_eq!(as_f64(element(BlockFormat::MxFp6E2M3, 0x1F)), 7.5);
    assert_eq!(as_f64(element(BlockFormat::MxFp6E2M3, 0x01)), 0.125);
    assert_eq!(as_f64(element(BlockFormat::MxFp6E3M2, 0x1F)), 28.0);
    assert_eq!(as_f64(element(BlockFormat::MxFp6E3M2, 0x01)), 0.0625);
    assert_eq!(as_f64(element(BlockFormat::MxInt8, 0x80)), -2.0);
    assert_eq!(as_f64(scale(BlockFormat::MxFp4, 127)), 1.0);
    assert!(as_f64(scale(BlockFormat::MxFp4, 0xFF)).is_nan());
    assert_eq!(as_f64(scale(BlockFormat::NvFp4, 0x7E)), 448.0);
}

/// Hand-worked: MXFP4 block [1, 2] x [3, 0.5] with scales 2^1 and 2^-1 plus c = 1:
/// 1 + (3 + 1) = 5. The same elements in NVFP4 with E4M3 scales 1.5 and 2 and tensor
/// scales 4 and 0.25: (3 + 1) x (1.5 x 2 x 4 x 0.25) = 12.
#[test]
fn hand_worked() {
    let mut a = vec![0u64; 32];
    let mut b = vec![0u64; 32];
    a[0] = 0x2; // 1
    a[1] = 0x4; // 2
    b[0] = 0x5; // 3
    b[1] = 0x1; // 0.5
    let f = BlockFormat::MxFp4;
    let d = fused_dot((f, f), &a, &[128], None, &b, &[126], None, 1.0f32.to_bits());
    assert_eq!(f32::from_bits(d), 5.0);
    let n = BlockFormat::NvFp4;
    let d = fused_dot(
        (n, n),
        &a[..16],
        &[0x3C],
        Some(4.0f32.to_bits()),
        &b[..16],
        &[0x40],
        Some(0.25f32.to_bits()),
        0,
    );
    assert_eq!(f32::from_bits(d), 12.0);
}
