//! The integer format rows and the accumulator's narrowing.

use tensorcore_rtl::numerics::int::{narrow, IntFormat, IntOverflow, S32, S4, S8, U4, U8};

#[test]
fn rows() {
    assert_eq!((S8.min(), S8.max()), (-128, 127));
    assert_eq!((U8.min(), U8.max()), (0, 255));
    assert_eq!((S4.min(), S4.max()), (-8, 7));
    assert_eq!((U4.min(), U4.max()), (0, 15));
    assert_eq!((S32.min(), S32.max()), (i32::MIN as i64, i32::MAX as i64));
    assert_eq!(S8.decode(0x80), -128);
    assert_eq!(S4.decode(0x8), -8);
    assert_eq!(S4.decode(0xF7), 7);
    assert_eq!(U4.decode(0xF), 15);
    assert_eq!(S4.encode(-1), Some(0xF));
    assert_eq!(S4.encode(8), None);
    assert_eq!(U8.encode(-1), None);
    assert_eq!(IntFormat::input_by_name("S8"), Some(S8));
    assert_eq!(IntFormat::input_by_name("s32"), None);
}

#[test]
fn narrow_wraps_or_clamps() {
    assert_eq!(narrow::<i32>(1 << 31, IntOverflow::Wrap), (i32::MIN, true));
    assert_eq!(
        narrow::<i32>(1 << 31, IntOverflow::SatFinite),
        (i32::MAX, true)
    );
    assert_eq!(
        narrow::<i32>(-(1 << 31) - 1, IntOverflow::SatFinite),
        (i32::MIN, true)
    );
    assert_eq!(narrow::<i32>(-5, IntOverflow::SatFinite), (-5, false));
}
