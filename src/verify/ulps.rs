//! The distance between two accumulator encodings in units in the last place (FP32 and
//! FP16), shared by the D-image and the waveform graders of the command line.

/// The distance between two FP32 encodings in units in the last place: the number of FP32
/// values between them on the number line (+0 and -0 count as the same point), or `None` when
/// either is a NaN.
pub fn fp32_ulps(a: u32, b: u32) -> Option<u64> {
    ieee_ulps(u64::from(a), u64::from(b), 8, 23)
}

/// The distance between two FP16 encodings in ulps, as [`fp32_ulps`] counts FP32 ones.
pub fn fp16_ulps(a: u16, b: u16) -> Option<u64> {
    ieee_ulps(u64::from(a), u64::from(b), 5, 10)
}

/// The ulp distance of two encodings of an IEEE-style binary format with `exp_bits` exponent
/// and `frac_bits` fraction bits (a sign bit above them).
fn ieee_ulps(a: u64, b: u64, exp_bits: u32, frac_bits: u32) -> Option<u64> {
    let frac_mask = (1u64 << frac_bits) - 1;
    let exp_mask = ((1u64 << exp_bits) - 1) << frac_bits;
    let sign = 1u64 << (exp_bits + frac_bits);
    let is_nan = |w: u64| w & exp_mask == exp_mask && w & frac_mask != 0;
    if is_nan(a) || is_nan(b) {
        return None;
    }
    // Ordered integer: the magnitude's bits, negated for negative values.
    let ordered = |w: u64| -> i64 {
        let mag = (w & (sign - 1)) as i64;
        if w & sign != 0 {
            -mag
        } else {
            mag
        }
    };
    Some(ordered(a).abs_diff(ordered(b)))
}
