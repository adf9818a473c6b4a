//! The FP8 reference tables and their rounding thresholds.

use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::verify::fp8_table::{decode_e4m3, decode_e5m2, round_to_fp8, Fp8Kind};

#[test]
fn known_values() {
    assert_eq!(decode_e4m3(0x7E), 448.0);
    assert_eq!(decode_e4m3(0xFE), -448.0);
    assert_eq!(decode_e4m3(0x01), 2f64.powi(-9));
    assert_eq!(decode_e4m3(0x08), 2f64.powi(-6));
    assert_eq!(decode_e4m3(0x38), 1.0);
    assert_eq!(decode_e4m3(0x78), 256.0);
    assert!(decode_e4m3(0x7F).is_nan() && decode_e4m3(0xFF).is_nan());
    assert_eq!(decode_e4m3(0x80), 0.0);
    assert!(decode_e4m3(0x80).is_sign_negative());
    assert_eq!(decode_e5m2(0x7B), 57344.0);
    assert_eq!(decode_e5m2(0x01), 2f64.powi(-16));
    assert_eq!(decode_e5m2(0x04), 2f64.powi(-14));
    assert_eq!(decode_e5m2(0x3C), 1.0);
    assert_eq!(decode_e5m2(0x7C), f64::INFINITY);
    assert_eq!(decode_e5m2(0xFC), f64::NEG_INFINITY);
    for nan in [0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF] {
        assert!(decode_e5m2(nan).is_nan());
    }
}

#[test]
fn table_counts() {
    let t = Fp8Kind::E4M3.table();
    assert_eq!(t.iter().filter(|v| v.is_nan()).count(), 2);
    assert_eq!(t.iter().filter(|v| v.is_infinite()).count(), 0);
    let t = Fp8Kind::E5M2.table();
    assert_eq!(t.iter().filter(|v| v.is_nan()).count(), 6);
    assert_eq!(t.iter().filter(|v| v.is_infinite()).count(), 2);
    // Finite positive codes increase strictly.
    for kind in [Fp8Kind::E4M3, Fp8Kind::E5M2] {
        let t = kind.table();
        for c in 0..kind.max_code() as usize {
            assert!(t[c] < t[c + 1], "{kind:?} {c:#x}");
        }
    }
}

#[test]
fn reference_thresholds() {
    let r = |k, x: f64| round_to_fp8(k, x, RoundingMode::NearestEven, false).bits;
    assert_eq!(r(Fp8Kind::E4M3, 464.0), 0x7E);
    assert_eq!(r(Fp8Kind::E4M3, 464.5), 0x7F);
    assert_eq!(r(Fp8Kind::E5M2, 61440.0), 0x7C);
    assert_eq!(r(Fp8Kind::E5M2, 61439.0), 0x7B);
    assert_eq!(r(Fp8Kind::E4M3, 2f64.powi(-10)), 0x00);
    assert_eq!(r(Fp8Kind::E4M3, -(2f64.powi(-10))), 0x80);
    assert_eq!(r(Fp8Kind::E5M2, 2f64.powi(-17) * 1.0001), 0x01);
}
