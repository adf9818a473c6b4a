//! `tcrtl dot --acc all`: the same operands through every mode (`ieee`, `fused`, `exact` in
//! the chosen rounding) and every NVIDIA preset that takes the formats, side by side.

use super::dot::{result_json, rounding_label};
use tensorcore_rtl::numerics::dot::{dot_rounded, AccMode, Preset, MAX_LANES};
use tensorcore_rtl::numerics::format::Format;
use tensorcore_rtl::numerics::RoundingMode;

/// Every mode that applies to `fmt_a` x `fmt_b`, in table order: ieee, fused, exact, then
/// the presets oldest first (those without a path for the formats are left out).
pub fn modes(fmt_a: Format, fmt_b: Format) -> Vec<(AccMode, Option<Preset>)> {
    let mut v = vec![
        (AccMode::Ieee, None),
        (AccMode::Fused, None),
        (AccMode::Exact, None),
    ];
    for p in Preset::ALL {
        if let Ok(params) = p.params(fmt_a, fmt_b) {
            v.push((AccMode::Nvidia(params), Some(p)));
        }
    }
    v
}

/// Runs every mode on one dot product and prints a table (or a JSON list).
#[allow(clippy::too_many_arguments)]
pub fn run(
    fmt_a: Format,
    fmt_b: Format,
    rm: RoundingMode,
    a: &[u64],
    b: &[u64],
    c: u32,
    width: Option<usize>,
    json: bool,
) -> Result<i32, String> {
    let width = width.unwrap_or(a.len().clamp(1, MAX_LANES));
    let mut rows = Vec::new();
    for (mode, preset) in modes(fmt_a, fmt_b) {
        let r_rm = match mode {
            AccMode::Nvidia(_) => RoundingMode::NearestEven,
            _ => rm,
        };
        let r =
            dot_rounded(&mode, r_rm, fmt_a, fmt_b, a, b, c, width).map_err(|e| e.to_string())?;
        rows.push((mode, preset, r));
    }
    if json {
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|(m, p, r)| result_json(m, *p, rm, fmt_a, fmt_b, a.len(), r))
            .collect();
        outln!("{}", serde_json::Value::Array(list));
        return Ok(0);
    }
    outln!(
        "{:<7} {:<10} {:<8} {:<10} {:<16} {:<6} flags",
        "acc",
        "preset",
        "rounding",
        "bits",
        "value",
        "steps"
    );
    for (m, p, r) in &rows {
        let value = f32::from_bits(r.bits);
        outln!(
            "{:<7} {:<10} {:<8} 0x{:08x} {:<16} {:<6} {}",
            m.name(),
            p.map_or("-", |p| p.name()),
            rounding_label(m, rm),
            r.bits,
            format!("{value:e}"),
            r.steps,
            r.flags
        );
    }
    Ok(0)
}
