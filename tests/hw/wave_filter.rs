//! The GTKWave translate filter: bus words shown as values.

use tensorcore_rtl::hw::wave_filter::{translate, FilterKind};
use tensorcore_rtl::numerics::format::{BF16, E4M3, FP16, FP32};

#[test]
fn lanes_are_decoded_lane_0_first() {
    // FP16 1.0 = 0x3C00, 2.0 = 0x4000, -0.5 = 0xB800 (IEEE 754 binary16 by hand).
    let k = FilterKind::Lanes(FP16);
    assert_eq!(translate(k, "B80040003C00"), "1.0 | 2.0 | -0.5");
    assert_eq!(translate(FilterKind::Lanes(BF16), "3F80"), "1.0");
    // E4M3 0x38 = 1.0, 0x7E = 448 (the largest finite), 0x7F = NaN.
    assert_eq!(
        translate(FilterKind::Lanes(E4M3), "7F7E38"),
        "1.0 | 448.0 | NaN"
    );
    assert_eq!(translate(FilterKind::Lanes(FP32), "40490FDB"), "3.1415927");
}

#[test]
fn control_words_are_named() {
    // n = 4, valid (bit 9), last (bit 6): 0x200 | 0x40 | 4.
    assert_eq!(translate(FilterKind::Ctl, "244"), "n=4 valid last");
    assert_eq!(translate(FilterKind::Ctl, "000"), "-");
    // Tag: valid, row 2 (bits 2:1), last (bit 3), tile 5 (bits 31:8).
    let tag = format!("{:016X}", 1 | (2 << 1) | (1 << 3) | (5 << 8));
    assert_eq!(translate(FilterKind::Tag, &tag), "tile 5 row 2 last");
    assert_eq!(translate(FilterKind::Tag, "0"), "-");
    // Nibble 0b1101 keeps indices 1 and 3; 0b0100 keeps 0 and 1.
    assert_eq!(translate(FilterKind::Meta, "4D"), "{1,3} {0,1}");
}

#[test]
fn unknown_bits_pass_through() {
    assert_eq!(translate(FilterKind::Ctl, "xxx"), "xxx");
    assert_eq!(translate(FilterKind::Lanes(FP16), "3CZ0"), "3CZ0");
    assert_eq!(FilterKind::by_name("fp16"), Some(FilterKind::Lanes(FP16)));
    assert_eq!(FilterKind::by_name("nope"), None);
}
