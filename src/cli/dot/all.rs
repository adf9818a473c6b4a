//! `tcrtl dot --acc all`: the same operands through every mode (`ieee`, `fused`, `exact` in
//! the chosen rounding) and every NVIDIA preset that takes the formats, side by side.

use super::result::{acc_hex, acc_value, result_json, rounding_label};
use tensorcore_rtl::numerics::dot::{dot_acc, AccMode, Preset, MAX_LANES};
use tensorcore_rtl::numerics::format::Format;
use tensorcore_rtl::numerics::RoundingMode;

/// The operands of one dot product: formats, values and the accumulator format.
pub struct Operands<'a> {
    /// Format of A.
    pub fmt_a: Format,
    /// Format of B.
    pub fmt_b: Format,
    /// The accumulator (output) format, FP32 or FP16.
    pub acc: Format,
    /// A values.
    pub a: &'a [u64],
    /// B values.
    pub b: &'a [u64],
    /// C in `acc`.
    pub c: u32,
}

/// Every mode that applies to `fmt_a` x `fmt_b` into `acc`, in table order: ieee, fused,
/// exact, then the presets oldest first (those without a path for the formats and the
/// output are left out).
pub fn modes(fmt_a: Format, fmt_b: Format, acc: Format) -> Vec<(AccMode, Option<Preset>)> {
    let mut v = vec![
        (AccMode::Ieee, None),
        (AccMode::Fused, None),
        (AccMode::Exact, None),
    ];
    for p in Preset::ALL {
        if let Ok(params) = p.params_for(fmt_a, fmt_b, acc) {
            v.push((AccMode::Nvidia(params), Some(p)));
        }
    }
    v
}

/// Runs every mode on one dot product and prints a table (or a JSON list).
pub fn run(
    ops: &Operands,
    rm: RoundingMode,
    width: Option<usize>,
    json: bool,
) -> Result<i32, String> {
    let Operands {
        fmt_a,
        fmt_b,
        acc,
        a,
        b,
        c,
    } = *ops;
    let width = width.unwrap_or(a.len().clamp(1, MAX_LANES));
    let mut rows = Vec::new();
    for (mode, preset) in modes(fmt_a, fmt_b, acc) {
        let r_rm = match mode {
            AccMode::Nvidia(_) => RoundingMode::NearestEven,
            _ => rm,
        };
        let r =
            dot_acc(&mode, r_rm, acc, fmt_a, fmt_b, a, b, c, width).map_err(|e| e.to_string())?;
        rows.push((mode, preset, r));
    }
    if json {
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|(m, p, r)| {
                let mut obj = result_json(m, *p, rm, acc, fmt_a, fmt_b, a.len(), r);
                // Each preset's canonical GPU and instruction.
                let rule = p.and_then(tensorcore_rtl::numerics::dot::GpuRule::of_preset);
                crate::cli::values::add_rule_keys(&mut obj, rule);
                obj
            })
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
        let value = acc_value(acc, r.bits);
        outln!(
            "{:<7} {:<10} {:<8} {:<10} {:<16} {:<6} {}",
            m.name(),
            p.map_or("-", |p| p.name()),
            rounding_label(m, rm),
            acc_hex(acc, r.bits),
            format!("{value:e}"),
            r.steps,
            r.flags
        );
    }
    Ok(0)
}
