//! The wide fixed-point accumulator: cancellation, sticky bits, borrows across limbs.

use tensorcore_rtl::numerics::dot::WideAcc;

#[test]
fn cancels_to_zero() {
    let mut w = WideAcc::new();
    w.add(false, 3, 100);
    w.add(true, 3, 100);
    assert!(w.is_zero());
    assert!(w.to_unrounded(true).0.sign);
}

#[test]
fn far_apart_terms_keep_sticky() {
    let mut w = WideAcc::new();
    w.add(false, 1, 200);
    w.add(false, 1, -272);
    let (u, lzc) = w.to_unrounded(false);
    assert!(u.sticky);
    assert_eq!(u.exp + 125, 200);
    assert_eq!(u.sig, 1u128 << 125);
    assert_eq!(lzc, 640 - 1 - 472);
}

#[test]
fn borrow_across_limbs() {
    let mut w = WideAcc::new();
    w.add(false, 1, 0);
    w.add(true, 1, -200);
    let (u, _) = w.to_unrounded(false);
    // 1 - 2^-200: 126 ones then sticky.
    assert!(!u.sign);
    assert_eq!(u.sig, (1u128 << 126) - 1);
    assert!(u.sticky);
    assert_eq!(u.exp, -126);
}

#[test]
fn negative_sum_small() {
    let mut w = WideAcc::new();
    w.add(false, 5, -3);
    w.add(true, 7, -3);
    let (u, _) = w.to_unrounded(false);
    assert!(u.sign);
    assert_eq!(u.sig.count_ones(), 1);
    assert_eq!(u.exp + u.sig.trailing_zeros() as i32, -2);
    assert!(!u.sticky);
}
