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
use crate::numerics::dot::{Gpu, Instr, Preset};
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

/// Parses a GPU name (`h100`, ...: [`Gpu::by_name`]).
pub fn gpu(name: &str) -> Result<Gpu, String> {
    Gpu::by_name(name).ok_or_else(|| {
        let names: Vec<&str> = Gpu::all().map(|g| g.name()).collect();
        format!("unknown GPU {name:?} (expected {})", name_list(&names))
    })
}

/// Parses a matrix instruction name (`mma.sync`, `wgmma`, ...: [`Instr::by_name`]).
pub fn instr(name: &str) -> Result<Instr, String> {
    Instr::by_name(name).ok_or_else(|| {
        let names: Vec<&str> = Instr::all().map(|i| i.name()).collect();
        format!(
            "unknown instruction {name:?} (expected {})",
            name_list(&names)
        )
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
