//! How one dot-product result is shown: its accumulator pattern in hex and as a value, the
//! rounding label, and the JSON object of `tcrtl dot` (shared by the single, `--acc all`,
//! batch and sweep reports).

use tensorcore_rtl::numerics::convert::to_fp32;
use tensorcore_rtl::numerics::dot::{AccMode, DotResult, Preset};
use tensorcore_rtl::numerics::format::Format;
use tensorcore_rtl::numerics::RoundingMode;

/// The value of an accumulator pattern (`acc` is FP32 or FP16; both widen exactly).
pub fn acc_value(acc: Format, bits: u32) -> f32 {
    f32::from_bits(to_fp32(acc, bits as u64))
}

/// An accumulator pattern as `0x` and as many hex digits as `acc` is wide (8 or 4).
pub fn acc_hex(acc: Format, bits: u32) -> String {
    let digits = acc.width().div_ceil(4) as usize;
    format!("0x{bits:0digits$x}")
}

/// The JSON object of one result (also a row of `--acc all --json`).
#[allow(clippy::too_many_arguments)]
pub fn result_json(
    mode: &AccMode,
    preset: Option<Preset>,
    rm: RoundingMode,
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    k: usize,
    r: &DotResult,
) -> serde_json::Value {
    let value = acc_value(acc, r.bits);
    let value_json = if value.is_finite() {
        serde_json::json!(value as f64)
    } else {
        serde_json::json!(value.to_string().to_lowercase())
    };
    serde_json::json!({
        "bits": acc_hex(acc, r.bits),
        "out_format": acc.name,
        "value": value_json,
        "flags": r.flags.names(),
        "acc": mode.name(),
        "preset": preset.map(|p| p.name()),
        "rounding": rounding_label(mode, rm),
        "format_a": fmt_a.name,
        "format_b": fmt_b.name,
        "k": k,
        "steps": r.steps,
    })
}

/// The rounding a result was computed with: the `--rounding` name, or `gpu` for the nvidia
/// presets (their own hardware rounding).
pub fn rounding_label(mode: &AccMode, rm: RoundingMode) -> &'static str {
    match mode {
        AccMode::Nvidia(_) => "gpu",
        _ => rm.name(),
    }
}
