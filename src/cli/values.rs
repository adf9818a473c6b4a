//! Operand parsing shared by the subcommands: hex bit patterns or exactly representable
//! decimal values.

use num_bigint::BigInt;
use tensorcore_rtl::numerics::format::Format;
use tensorcore_rtl::verify::measurements::encode_exact;

/// Parses a format name (`e4m3`, `e5m2`, `fp16`, `bf16`, `fp32`).
pub fn format(name: &str) -> Result<Format, String> {
    Format::by_name(name)
        .ok_or_else(|| format!("unknown format {name:?} (expected e4m3, e5m2, fp16, bf16 or fp32)"))
}

/// Parses one operand of `fmt`: `0x...` is a bit pattern (it must fit the format's width);
/// anything else is a decimal value (`1.5`, `-0`, `6.1e-5`, `inf`, `nan`) that must be
/// exactly representable in `fmt`.
pub fn operand(fmt: Format, text: &str) -> Result<u64, String> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        let bits =
            u64::from_str_radix(hex, 16).map_err(|_| format!("bad hex bit pattern {t:?}"))?;
        if bits > fmt.mask() {
            return Err(format!(
                "bit pattern {t} does not fit {fmt} ({} bits)",
                fmt.width()
            ));
        }
        return Ok(bits);
    }
    let lower = t.to_ascii_lowercase();
    let special = match lower.trim_start_matches(['+', '-']) {
        "inf" | "infinity" => Some(if lower.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }),
        "nan" => Some(f64::NAN),
        _ => None,
    };
    let v = match special {
        Some(v) => v,
        None => {
            let v: f64 = t
                .parse()
                .map_err(|_| format!("{t:?} is neither a 0x bit pattern nor a decimal value"))?;
            if !v.is_finite() || !decimal_equals(t, v) {
                return Err(format!("{t} is not exactly representable in {fmt}"));
            }
            v
        }
    };
    encode_exact(fmt, v).ok_or_else(|| format!("{t} is not exactly representable in {fmt}"))
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
    use tensorcore_rtl::numerics::format::{E4M3, FP16, FP32};

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
}
