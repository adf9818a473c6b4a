//! The weight-stationary order's building blocks (`numerics::dot::ws`): the partial sum's
//! identity, the accumulator block's addition and one fold worked by hand. (The whole order
//! against the independent reference is `tests/reference/ws_order.rs`.)

use tensorcore_rtl::numerics::dot::ws::{fold_add, psum_identity, ws_dot_acc};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::{FP16, FP32};

#[test]
fn the_identity_is_negative_zero_and_adds_to_nothing() {
    assert_eq!(psum_identity(&AccMode::Fused, FP32), 0x8000_0000);
    assert_eq!(psum_identity(&AccMode::Ieee, FP16), 0x8000);
    for x in [0u32, 0x8000_0000, 0x3F80_0000, 0xBF80_0000, 0x7F80_0000] {
        assert_eq!(fold_add(&AccMode::Fused, FP32, 0x8000_0000, x).0, x);
    }
}

#[test]
fn one_fold_equals_the_os_chain_then_one_add_of_c() {
    // 1.0 * 1.0 four times in a fold of 4 (R = 4, w = 1): 4.0, plus C = 0.5: 4.5.
    let one = 0x3C00u64; // FP16 1.0
    let r = ws_dot_acc(
        &AccMode::Ieee,
        FP32,
        FP16,
        FP16,
        &[one; 4],
        &[one; 4],
        0x3F00_0000,
        1,
        4,
    )
    .unwrap();
    assert_eq!(r.bits, 0x4090_0000);
    assert_eq!(r.steps, 5);
}
