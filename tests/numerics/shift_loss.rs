//! The right shift that reports what it drops (the rounding's guard and sticky).

use tensorcore_rtl::numerics::round::shift_right_loss;
use tensorcore_rtl::numerics::Loss;

#[test]
fn shift_right_loss_edges() {
    let top = 1u128 << 127;
    assert_eq!(shift_right_loss(0b1011, 0), (0b1011, Loss::ExactlyZero));
    assert_eq!(shift_right_loss(0b1011, 1), (0b101, Loss::ExactlyHalf));
    assert_eq!(shift_right_loss(0b1011, 2), (0b10, Loss::MoreThanHalf));
    assert_eq!(shift_right_loss(0b1001, 3), (0b1, Loss::LessThanHalf));
    assert_eq!(shift_right_loss(0b1000, 3), (0b1, Loss::ExactlyZero));
    assert_eq!(shift_right_loss(top | 1, 127), (1, Loss::LessThanHalf));
    assert_eq!(shift_right_loss(top, 128), (0, Loss::ExactlyHalf));
    assert_eq!(shift_right_loss(top | 1, 128), (0, Loss::MoreThanHalf));
    assert_eq!(shift_right_loss(1, 128), (0, Loss::LessThanHalf));
    assert_eq!(shift_right_loss(top, 129), (0, Loss::LessThanHalf));
    assert_eq!(shift_right_loss(0, 200), (0, Loss::ExactlyZero));
}
