//! Shared helpers for the numerics tests: sample counts, a small deterministic generator,
//! and TestFloat-style corner-case operands.
#![allow(dead_code)]

pub mod cli;
pub mod counts;
pub mod mx;
pub mod waves;

use tensorcore_rtl::numerics::RoundingMode;

/// The number of samples a sweep runs: `TCRTL_SAMPLES` if set (e.g. `10000000` for the full
/// runs documented in docs/numerics.md), else the test's default.
pub fn samples(default: u64) -> u64 {
    std::env::var("TCRTL_SAMPLES")
        .ok()
        .and_then(|s| s.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// SplitMix64: deterministic, seedable, good enough for test inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    pub fn coin(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }
}

/// Our rounding mode paired with apfloat's (None for round-to-odd, which apfloat lacks).
pub fn apfloat_round(mode: RoundingMode) -> Option<rustc_apfloat::Round> {
    use rustc_apfloat::Round;
    match mode {
        RoundingMode::NearestEven => Some(Round::NearestTiesToEven),
        RoundingMode::NearestAway => Some(Round::NearestTiesToAway),
        RoundingMode::TowardZero => Some(Round::TowardZero),
        RoundingMode::Down => Some(Round::TowardNegative),
        RoundingMode::Up => Some(Round::TowardPositive),
        RoundingMode::ToOdd => None,
    }
}

/// Our rounding mode as SoftFloat's, with round-to-odd mapped to toward-zero (the caller
/// then jams the LSB when inexact: round-to-odd is truncation plus "set LSB if inexact").
pub fn softfloat_round(mode: RoundingMode) -> softfloat_wrapper::RoundingMode {
    use softfloat_wrapper::RoundingMode as S;
    match mode {
        RoundingMode::NearestEven => S::TiesToEven,
        RoundingMode::NearestAway => S::TiesToAway,
        RoundingMode::TowardZero | RoundingMode::ToOdd => S::TowardZero,
        RoundingMode::Down => S::TowardNegative,
        RoundingMode::Up => S::TowardPositive,
    }
}

/// A TestFloat-style FP32 corner operand. `exps` lists biased exponents worth hitting for
/// the operation under test (they are mixed with the extremes 0, 1, 254, 255); `drop_bits` is
/// how many low fraction bits a narrowing discards, so that ties and near-ties at that
/// position appear (0 for no special low pattern).
pub fn fp32_corner(rng: &mut Rng, exps: &[u32], drop_bits: u32) -> u32 {
    let sign = (rng.coin() as u32) << 31;
    let exp = match rng.below(4) {
        0 => rng.below(256) as u32,
        1 => rng.pick(&[0, 0, 1, 2, 126, 127, 128, 253, 254, 255]),
        _ => {
            let e = rng.pick(exps) as i64 + rng.below(3) as i64 - 1;
            e.clamp(0, 255) as u32
        }
    };
    let frac_mask = (1u32 << 23) - 1;
    let high = match rng.below(4) {
        0 => 0,
        1 => frac_mask,
        _ => rng.next_u64() as u32 & frac_mask,
    };
    let frac = if drop_bits == 0 || drop_bits > 23 {
        high
    } else {
        let low_mask = (1u32 << drop_bits) - 1;
        let half = 1u32 << (drop_bits - 1);
        let low = match rng.below(8) {
            0 => 0,
            1 => half,
            2 => half - 1,
            3 => half + 1,
            4 => 1,
            5 => low_mask,
            _ => rng.next_u64() as u32 & low_mask,
        };
        (high & !low_mask) | low
    };
    sign | (exp << 23) | frac
}

/// A corner-case 16-bit operand for a format with `frac_bits` fraction bits and
/// `exp_bits` exponent bits: zeros, subnormals (smallest, largest, random), smallest normal,
/// largest finite, one, infinities, NaNs (quiet and signaling), mantissas of all ones.
pub fn half_corner(rng: &mut Rng, exp_bits: u32, frac_bits: u32) -> u16 {
    let sign = (rng.coin() as u16) << (exp_bits + frac_bits);
    let frac_mask = (1u16 << frac_bits) - 1;
    let emax = (1u16 << exp_bits) - 1;
    let bias = (1u16 << (exp_bits - 1)) - 1;
    let mag: u16 = match rng.below(12) {
        0 => 0,
        1 => 1,
        2 => frac_mask,
        3 => rng.next_u64() as u16 & frac_mask,
        4 => 1 << frac_bits,
        5 => ((emax - 1) << frac_bits) | frac_mask,
        6 => bias << frac_bits,
        7 => emax << frac_bits,
        8 => (emax << frac_bits) | (1 << (frac_bits - 1)),
        9 => (emax << frac_bits) | 1,
        10 => ((1 + rng.below(emax as u64 - 1) as u16) << frac_bits) | frac_mask,
        _ => (rng.next_u64() as u16) & ((emax << frac_bits) | frac_mask),
    };
    sign | mag
}

/// Seconds since `start`, for the progress line each sweep prints.
pub fn secs(start: std::time::Instant) -> f64 {
    start.elapsed().as_secs_f64()
}

/// Reconciles our flags with rustc_apfloat's status, accepting exactly two documented
/// convention differences (and counting them):
/// - `tininess`: apfloat signals underflow when the result after rounding to the *bounded*
///   format is subnormal or zero; we (like IEEE 754's "after rounding" option and SoftFloat's
///   default) round with an unbounded exponent. They differ only when a value below the
///   smallest normal rounds up to it in the bounded format but not at full precision: we raise
///   underflow there, apfloat does not.
/// - `overflow_to_max`: when an overflow rounds to the largest finite value (toward zero,
///   or toward the opposite infinity), apfloat raises only `inexact`; IEEE 754 and SoftFloat
///   (and we) also raise `overflow`.
///
/// Any other difference is an error.
#[derive(Default, Debug)]
pub struct ApfloatDiffs {
    /// Results where only the tininess convention differs.
    pub tininess: u64,
    /// Results where only apfloat's missing overflow flag differs.
    pub overflow_to_max: u64,
}

impl ApfloatDiffs {
    pub fn check(
        &mut self,
        ours: tensorcore_rtl::numerics::Flags,
        theirs: rustc_apfloat::Status,
        fmt: tensorcore_rtl::numerics::Format,
        out_bits: u64,
    ) -> Result<(), String> {
        use rustc_apfloat::Status;
        use tensorcore_rtl::numerics::Flags;
        let expect = Flags {
            invalid: theirs.contains(Status::INVALID_OP),
            overflow: theirs.contains(Status::OVERFLOW),
            underflow: theirs.contains(Status::UNDERFLOW),
            inexact: theirs.contains(Status::INEXACT),
        };
        if ours == expect {
            return Ok(());
        }
        let magnitude = out_bits & !fmt.sign_bit();
        if ours.underflow
            && !expect.underflow
            && (Flags {
                underflow: false,
                ..ours
            }) == expect
            && magnitude == 1u64 << fmt.frac_bits
        {
            self.tininess += 1;
            return Ok(());
        }
        if ours.overflow
            && !expect.overflow
            && (Flags {
                overflow: false,
                ..ours
            }) == expect
            && magnitude == fmt.max_finite_magnitude()
        {
            self.overflow_to_max += 1;
            return Ok(());
        }
        Err(format!("flags: ours {ours}, apfloat {expect}"))
    }
}

/// Runs one SoftFloat operation and returns its result bits with SoftFloat's exception flags
/// as ours. SoftFloat has no round-to-odd: for `ToOdd` the caller passes an operation run
/// toward zero, and the LSB is jammed when inexact.
pub fn softfloat_op(
    mode: RoundingMode,
    op: impl FnOnce() -> u64,
) -> (u64, tensorcore_rtl::numerics::Flags) {
    let mut f = softfloat_wrapper::ExceptionFlags::default();
    f.set();
    let r = op();
    f.get();
    let flags = tensorcore_rtl::numerics::Flags {
        invalid: f.is_invalid(),
        overflow: f.is_overflow(),
        underflow: f.is_underflow(),
        inexact: f.is_inexact(),
    };
    let r = if mode == RoundingMode::ToOdd && flags.inexact {
        r | 1
    } else {
        r
    };
    (r, flags)
}

/// `2^e` as an `f64`, built from its encoding so that it is exact for every `e` in
/// -1074..=1023 (`powi` may lose the binary64 subnormals).
pub fn p2(e: i32) -> f64 {
    assert!((-1074..=1023).contains(&e), "2^{e} is no binary64 value");
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// FP32 bits of an exactly representable value (host `f32`; panics on a value FP32 lacks).
pub fn exact_fp32(v: f64) -> u32 {
    let x = v as f32;
    assert_eq!(x as f64, v, "{v} is not an FP32 value");
    x.to_bits()
}

/// FP16 bits of an exactly representable value (the `half` crate; panics on a value FP16
/// lacks).
pub fn exact_fp16(v: f64) -> u32 {
    let x = half::f16::from_f64(v);
    assert_eq!(x.to_f64(), v, "{v} is not an FP16 value");
    x.to_bits() as u32
}
