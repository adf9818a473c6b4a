//! The operand grammar: decimals, hexadecimal, integers, names and cycle windows.

use tensorcore_rtl::io::values::{
    acc_format, input_format, int_operand, int_operands, operand, parse_window, preset, rounding,
    MAX_WINDOW_CYCLE,
};
use tensorcore_rtl::numerics::dot::Preset;
use tensorcore_rtl::numerics::format::{E4M3, FP16, FP32};
use tensorcore_rtl::numerics::RoundingMode;

#[test]
fn decimals() {
    assert_eq!(operand(FP16, "1"), Ok(0x3C00));
    assert_eq!(operand(FP16, "-0"), Ok(0x8000));
    assert_eq!(operand(FP16, "5.9604644775390625e-8"), Ok(0x0001));
    assert!(operand(FP16, "0.1").is_err());
    assert!(operand(FP32, "0.1").is_err());
    assert_eq!(operand(E4M3, "448"), Ok(0x7E));
    assert!(operand(E4M3, "inf").is_err());
    assert!(operand(E4M3, "0x100").is_err());
    assert!(operand(FP16, "0xzz").is_err());
    assert!(operand(FP16, "1.0000000000000000000001").is_err());
}

/// Fuzzing the operand and window parsers (cases: `TCRTL_FUZZ_CASES`, default 256).
mod fuzz {
    use num_bigint::BigInt;
    use proptest::prelude::*;
    use tensorcore_rtl::io::values::{operand, parse_window, MAX_WINDOW_CYCLE};
    use tensorcore_rtl::numerics::format::{BF16, E4M3, E5M2, FP16, FP32};

    fn config() -> ProptestConfig {
        let cases = std::env::var("TCRTL_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(256);
        ProptestConfig {
            cases,
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    }

    /// The exact decimal expansion of a finite FP16 value: `m * 2^e` as `D e-N`.
    fn exact_decimal(bits: u16) -> String {
        let sign = if bits & 0x8000 != 0 { "-" } else { "" };
        let exp = i32::from((bits >> 10) & 0x1F);
        let frac = u64::from(bits & 0x3FF);
        let (m, e) = if exp == 0 {
            (frac, -24)
        } else {
            (frac | 0x400, exp - 25)
        };
        if e >= 0 {
            format!("{sign}{}", m << e)
        } else {
            let digits = BigInt::from(m) * BigInt::from(5).pow((-e) as u32);
            format!("{sign}{digits}e{e}")
        }
    }

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn any_text_is_parsed_or_refused(s in "\\PC{0,24}") {
            for fmt in [E4M3, E5M2, FP16, BF16, FP32] {
                if let Ok(bits) = operand(fmt, &s) {
                    prop_assert!(bits <= fmt.mask(), "{s:?} -> {bits:#x}");
                }
            }
        }

        #[test]
        fn grammar_shaped_text(
            sign in "[+-]?[+-]?",
            int in "[0-9]{0,5}",
            frac in "(\\.[0-9]{0,5})?",
            exp in "([eE][+-]?[0-9]{0,5})?",
        ) {
            let s = format!("{sign}{int}{frac}{exp}");
            let r = operand(FP16, &s);
            let digits = !(int.is_empty() && frac.len() <= 1);
            let exp_ok = exp.is_empty() || !exp.trim_start_matches(['e', 'E', '+', '-']).is_empty();
            if sign.len() > 1 || !digits || !exp_ok {
                prop_assert!(r.is_err(), "{s:?} accepted");
            }
        }

        #[test]
        fn exact_decimals_give_their_bits(bits in 0u16..0x7C00, neg in any::<bool>()) {
            let bits = bits | if neg { 0x8000 } else { 0 };
            let text = exact_decimal(bits);
            prop_assert_eq!(operand(FP16, &text), Ok(u64::from(bits)), "{}", text);
            prop_assert_eq!(operand(FP16, &format!("0x{bits:x}")), Ok(u64::from(bits)));
        }

        #[test]
        fn windows_are_parsed_or_refused(s in "[0-9:xe+ -]{0,24}") {
            if let Ok((from, to)) = parse_window(&s) {
                prop_assert!(from < to && to <= MAX_WINDOW_CYCLE, "{s:?}");
            }
        }
    }
}

#[test]
fn strict_grammar() {
    for bad in [
        "-+inf", "--inf", "+-1", "0x+3c00", "0x-1", "0x", "0x3c_00", "1e", "1e+", ".", "", "e5",
        "1.2.3", "0x1p3", "in f", "1_0", "+", "- 1", "1e5.0", "nan(1)",
    ] {
        assert!(operand(FP16, bad).is_err(), "{bad:?} was accepted");
    }
    // Signs of NaN and zero are kept; the sign bit of each format is its top bit.
    assert_eq!(operand(FP16, "-nan"), Ok(0xFE00));
    assert_eq!(operand(FP16, "nan"), Ok(0x7E00));
    assert_eq!(operand(FP32, "-NaN"), Ok(0xFFC0_0000));
    assert_eq!(operand(E4M3, "-nan"), Ok(0xFF));
    assert_eq!(operand(FP16, "0e5000"), Ok(0));
    assert_eq!(operand(FP16, "-0.000e-99999999999999999999"), Ok(0x8000));
    assert_eq!(operand(FP16, "+.5"), Ok(0x3800));
    assert_eq!(operand(FP16, "2."), Ok(0x4000));
    assert_eq!(operand(FP16, " 1 "), Ok(0x3C00));
    assert_eq!(operand(FP16, "-Infinity"), Ok(0xFC00));
    assert!(operand(FP16, "1e5000").is_err());
}
#[test]
fn integers_by_hand() {
    use tensorcore_rtl::numerics::int::{S4, S8, U4, U8};
    // s8: 0xff is the pattern of -1; -128..=127 in range.
    assert_eq!(int_operand(S8, "0xff"), Ok(0xFF));
    assert_eq!(int_operand(S8, "-1"), Ok(0xFF));
    assert_eq!(int_operand(S8, "-128"), Ok(0x80));
    assert_eq!(int_operand(S8, " +127 "), Ok(0x7F));
    assert!(int_operand(S8, "128").is_err());
    assert!(int_operand(S8, "0x100").is_err());
    // u4: 0..=15, four bits.
    assert_eq!(int_operand(U4, "15"), Ok(0xF));
    assert!(int_operand(U4, "16").is_err());
    assert!(int_operand(U4, "-1").is_err());
    assert!(int_operand(U4, "0x10").is_err());
    // s4: -8 is 0b1000.
    assert_eq!(int_operand(S4, "-8"), Ok(0x8));
    assert!(int_operand(S4, "8").is_err());
    assert_eq!(int_operand(U8, "0XfF"), Ok(0xFF));
    for bad in [
        "",
        "0x",
        "1.0",
        "1e2",
        "--1",
        "99999999999999999999",
        "0x1g",
    ] {
        assert!(int_operand(S8, bad).is_err(), "{bad:?} was accepted");
    }
    assert_eq!(
        int_operands(S8, &["1".into(), "-2".into()]),
        Ok(vec![0x01, 0xFE])
    );
}

#[test]
fn names_by_hand() {
    assert_eq!(input_format("fp16"), Ok(FP16));
    assert_eq!(input_format("E4M3"), Ok(E4M3));
    // FP32 is an accumulator format, not a multiplier input.
    assert!(input_format("fp32").is_err());
    assert_eq!(acc_format("fp32"), Ok(FP32));
    assert!(acc_format("e4m3").is_err());
    assert_eq!(
        acc_format("x"),
        Err("unknown output format \"x\" (expected fp32 or fp16)".to_string())
    );
    assert_eq!(preset("hopper"), Ok(Preset::Hopper));
    assert!(preset("pascal").is_err());
    assert_eq!(rounding("rtz"), Ok(RoundingMode::TowardZero));
    // Round-to-odd is an internal step, not a user rounding.
    assert!(rounding("rto").is_err());
    assert!(rounding("odd").is_err());
}

#[test]
fn windows_by_hand() {
    assert_eq!(parse_window("0:100"), Ok((0, 100)));
    assert_eq!(parse_window("7:8"), Ok((7, 8)));
    for bad in [
        "5:5", "9:3", ":4", "4:", "1:2:3", "+1:3", "0x1:3", " 1:3", "1-3",
    ] {
        assert!(parse_window(bad).is_err(), "{bad:?} was accepted");
    }
    let top = format!("0:{MAX_WINDOW_CYCLE}");
    assert_eq!(parse_window(&top), Ok((0, MAX_WINDOW_CYCLE)));
    assert!(parse_window(&format!("0:{}", MAX_WINDOW_CYCLE + 1)).is_err());
}
