//! The operand grammar: how a value, a bit pattern or a name is read for a format. One
//! grammar for every front door (the `tcrtl` command line, text matrices, testbenches and
//! any binding), so a value means the same wherever it is typed.
//!
//! - Floating-point operands ([`operand`]): `0x` bit patterns that must fit the format
//!   (TF32: FP32 containers whose low 13 bits are zero), signed infinities and NaNs, and
//!   decimals that must be exactly representable (checked with exact big-integer
//!   arithmetic, never by rounding).
//! - Integer operands ([`int_operand`]): `0x` bit patterns of the format's width, or decimal
//!   integers in its range.
//! - Names: input and output formats, GPU presets, rounding directions, and trace windows
//!   `FROM:TO` in cycles.
//!
//! It sits in `io` because decoding a decimal exactly uses `verify`'s independent encoder
//! (`verify::measurements::encode_exact`), not the datapath under test.

use crate::numerics::convert::tf32_from_container;
use crate::numerics::dot::Preset;
use crate::numerics::format::{Format, ACC_FORMATS, INPUT_FORMATS, TF32};
use crate::numerics::int::IntFormat;
use crate::numerics::RoundingMode;
use crate::rtl::PERIOD;
use crate::verify::measurements::encode_exact;
use num_bigint::BigInt;

/// The names of `formats`, as "a, b or c".
fn name_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Parses a multiplier input format name (`e4m3`, `e5m2`, `fp16`, `bf16`, `tf32`).
pub fn input_format(name: &str) -> Result<Format, String> {
    Format::by_name(name)
        .filter(|f| INPUT_FORMATS.contains(f))
        .ok_or_else(|| {
            let names: Vec<&str> = INPUT_FORMATS.iter().map(|f| f.name).collect();
            format!(
                "unknown input format {name:?} (expected {})",
                name_list(&names)
            )
        })
}

/// Parses an accumulator (output) format name (`fp32`, `fp16`).
pub fn acc_format(name: &str) -> Result<Format, String> {
    Format::by_name(name)
        .filter(|f| ACC_FORMATS.contains(f))
        .ok_or_else(|| {
            let names: Vec<&str> = ACC_FORMATS.iter().map(|f| f.name).collect();
            format!(
                "unknown output format {name:?} (expected {})",
                name_list(&names)
            )
        })
}

/// Parses a GPU preset name.
pub fn preset(name: &str) -> Result<Preset, String> {
    Preset::by_name(name).ok_or_else(|| {
        let names: Vec<&str> = Preset::ALL.iter().map(|p| p.name()).collect();
        format!("unknown preset {name:?} (expected {})", name_list(&names))
    })
}

/// Parses a `--rounding` name (`rne`, `rtz`, `rdn`, `rup`).
pub fn rounding(name: &str) -> Result<RoundingMode, String> {
    RoundingMode::by_name(name)
        .filter(|m| *m != RoundingMode::ToOdd)
        .ok_or_else(|| format!("unknown rounding {name:?} (expected rne, rtz, rdn or rup)"))
}

/// Parses one integer operand of `fmt` (surrounding spaces ignored): `0x` or `0X` and 1 to
/// 16 hex digits, a bit pattern that must fit the format's width (`0xff` is -1 in s8), or
/// `[+|-]DIGITS`, a decimal value that must lie in the format's range.
pub fn int_operand(fmt: IntFormat, text: &str) -> Result<u64, String> {
    let t = text.trim_matches(' ');
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if hex.is_empty() || hex.len() > 16 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!(
                "bad hex bit pattern {t:?} (expected 0x and 1 to 16 hex digits)"
            ));
        }
        let bits =
            u64::from_str_radix(hex, 16).map_err(|_| format!("bad hex bit pattern {t:?}"))?;
        if bits > fmt.mask() {
            return Err(format!(
                "bit pattern {t} does not fit {fmt} ({} bits)",
                fmt.bits
            ));
        }
        return Ok(bits);
    }
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "{t:?} is neither a 0x bit pattern nor a decimal integer"
        ));
    }
    let out_of_range = || {
        format!(
            "{t} is out of range for {fmt} ({}..={})",
            fmt.min(),
            fmt.max()
        )
    };
    // A value beyond i64 fails to parse: out of range of every format too.
    let v: i64 = t.parse().map_err(|_| out_of_range())?;
    fmt.encode(v).ok_or_else(out_of_range)
}

/// Parses a comma-separated list of integer operands.
pub fn int_operands(fmt: IntFormat, list: &[String]) -> Result<Vec<u64>, String> {
    list.iter().map(|s| int_operand(fmt, s)).collect()
}

/// The largest cycle a trace window may name: waveform timestamps are `cycle * PERIOD`.
pub const MAX_WINDOW_CYCLE: u64 = u64::MAX / PERIOD;

/// Parses `FROM:TO` (cycles, decimal digits only, FROM < TO <= [`MAX_WINDOW_CYCLE`]).
pub fn parse_window(text: &str) -> Result<(u64, u64), String> {
    let bad = || {
        format!(
            "--trace-window {text:?}: expected FROM:TO with FROM < TO <= {MAX_WINDOW_CYCLE} (cycles)"
        )
    };
    let (a, b) = text.split_once(':').ok_or_else(bad)?;
    let cycle = |t: &str| -> Result<u64, String> {
        if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        t.parse::<u64>()
            .ok()
            .filter(|&c| c <= MAX_WINDOW_CYCLE)
            .ok_or_else(bad)
    };
    let (from, to) = (cycle(a)?, cycle(b)?);
    if from >= to {
        return Err(bad());
    }
    Ok((from, to))
}

/// Parses one operand of `fmt` by a strict grammar (surrounding spaces ignored):
///
/// - `0x` or `0X` and 1 to 16 hex digits: a bit pattern, which must fit the format's width
///   (TF32: an FP32 container whose low 13 bits must be zero);
/// - `[+|-]` then `inf`, `infinity` or `nan` (any case): the signed infinity, or the format's
///   canonical NaN with the sign bit as given (`-nan` sets it);
/// - `[+|-]` then `DIGITS[.DIGITS]`, `DIGITS.` or `.DIGITS`, then optionally
///   `e|E [+|-] DIGITS`: a decimal value that must be exactly representable in `fmt` (any
///   exponent is fine for a zero: `0e5000` is `0`).
///
/// Nothing else is accepted: no second sign, no sign after `0x`, no `_`, no hex floats.
pub fn operand(fmt: Format, text: &str) -> Result<u64, String> {
    let t = text.trim_matches(' ');
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if hex.is_empty() || hex.len() > 16 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!(
                "bad hex bit pattern {t:?} (expected 0x and 1 to 16 hex digits)"
            ));
        }
        let bits =
            u64::from_str_radix(hex, 16).map_err(|_| format!("bad hex bit pattern {t:?}"))?;
        if fmt == TF32 {
            let container = u32::try_from(bits)
                .map_err(|_| format!("bit pattern {t} does not fit a 32-bit tf32 container"))?;
            return tf32_from_container(container)
                .ok_or_else(|| format!("{t} is not a tf32 value: its low 13 bits must be zero"));
        }
        if bits > fmt.mask() {
            return Err(format!(
                "bit pattern {t} does not fit {fmt} ({} bits)",
                fmt.width()
            ));
        }
        return Ok(bits);
    }
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let not_exact = || format!("{t} is not exactly representable in {fmt}");
    let v = match body.to_ascii_lowercase().as_str() {
        "inf" | "infinity" => {
            if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        "nan" => {
            let bits = encode_exact(fmt, f64::NAN).ok_or_else(not_exact)?;
            let sign = 1u64 << (fmt.width() - 1);
            return Ok(if neg { bits | sign } else { bits & !sign });
        }
        _ => {
            let Some(zero) = decimal_is_zero(body) else {
                return Err(format!(
                    "{t:?} is neither a 0x bit pattern nor a decimal value"
                ));
            };
            if zero {
                if neg {
                    -0.0
                } else {
                    0.0
                }
            } else {
                let v: f64 = t.parse().map_err(|_| not_exact())?;
                if !v.is_finite() || !decimal_equals(t, v) {
                    return Err(not_exact());
                }
                v
            }
        }
    };
    encode_exact(fmt, v).ok_or_else(not_exact)
}

/// Checks `body` (no sign) against `DIGITS[.DIGITS] | DIGITS. | .DIGITS` with an optional
/// `e|E [+|-] DIGITS`; returns whether its significand is zero, or `None` if it does not match.
fn decimal_is_zero(body: &str) -> Option<bool> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    let (mant, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    if let Some(e) = exp {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        if !digits(e) {
            return None;
        }
    }
    let (int_part, frac_part) = match mant.split_once('.') {
        Some((i, f)) => (i, f),
        None => (mant, ""),
    };
    let ok = (digits(int_part) || int_part.is_empty())
        && (digits(frac_part) || frac_part.is_empty())
        && !(int_part.is_empty() && frac_part.is_empty());
    ok.then(|| int_part.bytes().chain(frac_part.bytes()).all(|c| c == b'0'))
}

/// Parses a comma-separated list of operands.
pub fn operands(fmt: Format, list: &[String]) -> Result<Vec<u64>, String> {
    list.iter().map(|s| operand(fmt, s)).collect()
}

/// True if the decimal string `t` denotes exactly the finite `f64` `v`.
fn decimal_equals(t: &str, v: f64) -> bool {
    let (neg, body) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (mant, exp10) = match body.find(['e', 'E']) {
        Some(i) => match body[i + 1..].parse::<i64>() {
            Ok(e) => (&body[..i], e),
            Err(_) => return false,
        },
        None => (body, 0),
    };
    let (int_part, frac_part) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    let digits = format!("{int_part}{frac_part}");
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return false;
    }
    let Ok(d) = digits.parse::<BigInt>() else {
        return false;
    };
    // |t| = d * 10^e10 with e10 = exp10 - len(frac).
    let e10 = exp10 - frac_part.len() as i64;
    if e10.unsigned_abs() > 2000 {
        return false;
    }
    if v == 0.0 {
        return d == BigInt::from(0) && neg == v.is_sign_negative();
    }
    if neg != (v < 0.0) {
        return false;
    }
    // |v| = m * 2^e2 exactly.
    let bits = v.abs().to_bits();
    let be = ((bits >> 52) & 0x7FF) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e2) = if be == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), be - 1075)
    };
    // Compare d * 10^e10 with m * 2^e2, moving negative powers to the other side.
    let mut lhs = d;
    let mut rhs = BigInt::from(m);
    let ten = BigInt::from(10);
    if e10 >= 0 {
        lhs *= ten.pow(e10 as u32);
    } else {
        rhs *= ten.pow((-e10) as u32);
    }
    if e2 >= 0 {
        rhs <<= e2 as usize;
    } else {
        lhs <<= (-e2) as usize;
    }
    lhs == rhs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::format::{E4M3, FP16, FP32};

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
        use super::super::*;
        use crate::numerics::format::{BF16, E4M3, E5M2, FP16, FP32};
        use proptest::prelude::*;

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
            "-+inf", "--inf", "+-1", "0x+3c00", "0x-1", "0x", "0x3c_00", "1e", "1e+", ".", "",
            "e5", "1.2.3", "0x1p3", "in f", "1_0", "+", "- 1", "1e5.0", "nan(1)",
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
        use crate::numerics::int::{S4, S8, U4, U8};
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
}
