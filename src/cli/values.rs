//! Operand parsing shared by the subcommands: hex bit patterns or exactly representable
//! decimal values.

use clap::Args;
use num_bigint::BigInt;
use std::path::PathBuf;
use tensorcore_rtl::gemm::problem::check_dims;
use tensorcore_rtl::io::output::is_special;
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::numerics::convert::tf32_from_container;
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, ACC_FORMATS, INPUT_FORMATS, TF32};
use tensorcore_rtl::numerics::int::{pair_ok, IntFormat};
use tensorcore_rtl::rtl::TraceConfig;
use tensorcore_rtl::rtl::PERIOD;
use tensorcore_rtl::verify::measurements::encode_exact;

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

/// Operand formats and accumulation mode, shared by `tcrtl dot` and `tcrtl gemm`.
#[derive(Args, Debug)]
pub struct ArithArgs {
    /// Format of A (and of B unless --format-b): e4m3, e5m2, fp16, bf16, tf32 (FP32
    /// containers whose low 13 bits are zero), or the integers s8, u8, s4, u4 (`tcrtl dot`
    /// and `tcrtl gemm`).
    #[arg(long, default_value = "fp16")]
    pub format: String,
    /// Format of B, if it differs from A's (e.g. e4m3 x e5m2, s8 x u8).
    #[arg(long)]
    pub format_b: Option<String>,
    /// Accumulation mode: ieee (default), fused, exact, nvidia (needs --preset).
    #[arg(long, default_value = "ieee")]
    pub acc: String,
    /// GPU preset for --acc nvidia: volta, ampere, ada, hopper, blackwell.
    #[arg(long)]
    pub preset: Option<String>,
}

/// What [`ArithArgs`] resolve to.
#[derive(Clone, Copy, Debug)]
pub struct Arith {
    /// Format of A.
    pub fmt_a: Format,
    /// Format of B.
    pub fmt_b: Format,
    /// The accumulation mode (with the preset's parameters for nvidia).
    pub mode: AccMode,
    /// The preset, for nvidia.
    pub preset: Option<Preset>,
}

impl ArithArgs {
    /// [`ArithArgs::resolve_acc`] for the clocked tensor core, which has no `exact` datapath
    /// (`exact` rounds once over all of K: a reference, offered by `tcrtl dot` only).
    pub fn resolve_datapath(&self, acc: Format) -> Result<Arith, String> {
        let arith = self.resolve_acc(acc)?;
        if arith.mode == AccMode::Exact {
            return Err(
                "--acc exact is a reference, not a datapath: the tensor core runs ieee, fused or nvidia"
                    .into(),
            );
        }
        Ok(arith)
    }

    /// Checks the names and builds the mode for the accumulator format `acc` (the nvidia
    /// parameters are the preset's for that output); a preset is required by, and only
    /// allowed with, `--acc nvidia`.
    pub fn resolve_acc(&self, acc: Format) -> Result<Arith, String> {
        let fmt_a = input_format(&self.format)?;
        let fmt_b = match &self.format_b {
            Some(name) => input_format(name)?,
            None => fmt_a,
        };
        let preset = self.preset.as_deref().map(preset).transpose()?;
        let mode = match (self.acc.to_ascii_lowercase().as_str(), preset) {
            ("nvidia", Some(p)) => {
                AccMode::Nvidia(p.params_for(fmt_a, fmt_b, acc).map_err(|e| e.to_string())?)
            }
            ("nvidia", None) => return Err("--acc nvidia needs --preset".into()),
            (_, Some(_)) => return Err("--preset only applies to --acc nvidia".into()),
            ("ieee", None) => AccMode::Ieee,
            ("fused", None) => AccMode::Fused,
            ("exact", None) => AccMode::Exact,
            (other, None) => {
                return Err(format!(
                    "unknown accumulation mode {other:?} (expected ieee, fused, exact or nvidia)"
                ))
            }
        };
        Ok(Arith {
            fmt_a,
            fmt_b,
            mode,
            preset,
        })
    }
}

impl ArithArgs {
    /// The integer formats of A and B if `--format` (or `--format-b`) names one (`s8`, `u8`,
    /// `s4`, `u4`); `None` for floating-point formats. Integers take no accumulation mode or
    /// preset (their accumulator is an exact int32), both operands must be integers, and
    /// 8-bit pairs with 8-bit and 4-bit with 4-bit, as in PTX.
    pub fn int_formats(&self) -> Result<Option<(IntFormat, IntFormat)>, String> {
        let fa = IntFormat::input_by_name(&self.format);
        let fb = self.format_b.as_deref().map(IntFormat::input_by_name);
        let (fa, fb) = match (fa, fb) {
            (None, None | Some(None)) => return Ok(None),
            (Some(a), None) => (a, a),
            (Some(a), Some(Some(b))) => (a, b),
            (Some(a), Some(None)) => {
                return Err(format!(
                    "cannot pair integer format {a} with {:?}: both operands must be integers (s8, u8, s4, u4)",
                    self.format_b.as_deref().unwrap_or_default()
                ))
            }
            (None, Some(Some(b))) => {
                return Err(format!(
                    "cannot pair {:?} with integer format {b}: both operands must be integers (s8, u8, s4, u4)",
                    self.format
                ))
            }
        };
        if !pair_ok(fa, fb) {
            return Err(format!(
                "cannot pair {fa} with {fb}: 8-bit integers pair with 8-bit, 4-bit with 4-bit"
            ));
        }
        if self.preset.is_some() || !self.acc.eq_ignore_ascii_case("ieee") {
            return Err("integer formats accumulate exactly in int32: drop --acc and --preset (use --satfinite to clamp instead of wrapping)".into());
        }
        Ok(Some((fa, fb)))
    }
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

/// Waveform options shared by the subcommands that run the clocked core.
#[derive(Args, Debug, Default)]
pub struct TraceArgs {
    /// Write a VCD waveform (and a GTKWave save file beside it).
    #[arg(long, conflicts_with = "fst")]
    pub vcd: Option<PathBuf>,
    /// Write an FST waveform instead (compressed; for long runs).
    #[arg(long)]
    pub fst: Option<PathBuf>,
    /// Trace only signals matching this hierarchical glob (repeatable), e.g. `mesh.pe_0_*`.
    #[arg(long)]
    pub trace_glob: Vec<String>,
    /// Trace only cycles FROM..TO (half open), e.g. `0:100`.
    #[arg(long, value_name = "FROM:TO")]
    pub trace_window: Option<String>,
    /// Refuse, before the run, a VCD estimated larger than this many MB (FST is not limited).
    #[arg(long, value_name = "MB", default_value_t = 4000)]
    pub vcd_limit: u64,
}

impl TraceArgs {
    /// Adds the waveform and its GTKWave save file to the run's outputs (checked up front).
    pub fn plan(&self, plan: &mut OutputPlan) -> Result<(), String> {
        let (flag, path) = match (&self.vcd, &self.fst) {
            (Some(p), _) => ("--vcd", p),
            (None, Some(p)) => ("--fst", p),
            (None, None) => return Ok(()),
        };
        let target = plan.add(flag, path)?;
        if !is_special(&target) {
            plan.add(
                &format!("{flag} (its GTKWave save file)"),
                &path.with_extension("gtkw"),
            )?;
        }
        Ok(())
    }

    /// `--vcd-limit` in bytes.
    pub fn vcd_limit_bytes(&self) -> u64 {
        self.vcd_limit.saturating_mul(1_000_000)
    }

    /// The trace configuration, if a waveform was asked for.
    pub fn config(&self) -> Result<Option<TraceConfig>, String> {
        let mut cfg = match (&self.vcd, &self.fst) {
            (Some(p), _) => TraceConfig::vcd(p),
            (None, Some(p)) => TraceConfig::fst(p),
            (None, None) => {
                if !self.trace_glob.is_empty() || self.trace_window.is_some() {
                    return Err("--trace-glob and --trace-window need --vcd or --fst".into());
                }
                return Ok(None);
            }
        };
        for g in &self.trace_glob {
            cfg = cfg.glob(g.clone());
        }
        if let Some(w) = &self.trace_window {
            let (from, to) = parse_window(w)?;
            cfg = cfg.window(from, to);
        }
        Ok(Some(cfg))
    }
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

/// The most 4x4 output tiles the tensor core's tile counter holds (`2^24 - 3`).
pub const MAX_TILES: usize = (1 << 24) - 3;

/// Refuses a problem too large to run before anything is allocated: each matrix within
/// `gemm::problem::MAX_ELEMENTS` and at most [`MAX_TILES`] tiles.
pub fn check_size(m: usize, n: usize, k: usize) -> Result<(), String> {
    check_dims(m, n, k).map_err(|e| e.to_string())?;
    let tiles = m.div_ceil(4).saturating_mul(n.div_ceil(4));
    if tiles > MAX_TILES {
        return Err(format!(
            "a {m} x {n} D needs {tiles} 4x4 tiles; the tensor core runs at most {MAX_TILES}"
        ));
    }
    Ok(())
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

    /// Fuzzing the operand and window parsers (cases: `TCRTL_FUZZ_CASES`, default 256).
    mod fuzz {
        use super::super::*;
        use proptest::prelude::*;
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
}
