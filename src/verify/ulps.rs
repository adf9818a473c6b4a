//! The distance between two accumulator encodings in units in the last place (FP32 and
//! FP16), shared by the D-image and the waveform graders of the command line.

/// The distance between two FP32 encodings in units in the last place: the number of FP32
/// values between them on the number line (+0 and -0 count as the same point), or `None` when
/// either is a NaN.
pub fn fp32_ulps(a: u32, b: u32) -> Option<u64> {
    let is_nan = |w: u32| (w & 0x7F80_0000) == 0x7F80_0000 && (w & 0x007F_FFFF) != 0;
    if is_nan(a) || is_nan(b) {
        return None;
    }
    // Ordered integer: the magnitude's bits, negated for negative values.
    let ordered = |w: u32| -> i64 {
        let mag = i64::from(w & 0x7FFF_FFFF);
        if w & 0x8000_0000 != 0 {
            -mag
        } else {
            mag
        }
    };
    Some(ordered(a).abs_diff(ordered(b)))
}

/// The distance between two FP16 encodings in ulps, as [`fp32_ulps`] counts FP32 ones.
pub fn fp16_ulps(a: u16, b: u16) -> Option<u64> {
    let is_nan = |w: u16| (w & 0x7C00) == 0x7C00 && (w & 0x03FF) != 0;
    if is_nan(a) || is_nan(b) {
        return None;
    }
    let ordered = |w: u16| -> i64 {
        let mag = i64::from(w & 0x7FFF);
        if w & 0x8000 != 0 {
            -mag
        } else {
            mag
        }
    };
    Some(ordered(a).abs_diff(ordered(b)))
}
