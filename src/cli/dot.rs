//! `tcrtl dot`: one dot product through the numerics datapath.

use super::values;
use clap::Args;
use tensorcore_rtl::numerics::dot::{dot, AccMode, Preset, MAX_LANES};
use tensorcore_rtl::numerics::format::FP32;

/// Arguments of `tcrtl dot`.
#[derive(Args, Debug)]
pub struct DotArgs {
    /// Format of A (and of B unless --format-b): e4m3, e5m2, fp16, bf16.
    #[arg(long)]
    format: String,
    /// Format of B, if it differs from A's (e.g. e4m3 x e5m2).
    #[arg(long)]
    format_b: Option<String>,
    /// Accumulation mode: ieee (default), fused, exact, nvidia (needs --preset).
    #[arg(long, default_value = "ieee")]
    acc: String,
    /// GPU preset for --acc nvidia: volta, ampere, hopper, blackwell.
    #[arg(long)]
    preset: Option<String>,
    /// Products per step for ieee/fused (1..=32; default: K, capped at 32). nvidia always
    /// uses its block size; exact rounds once.
    #[arg(long)]
    width: Option<usize>,
    /// The FP32 accumulator C: 0x bit pattern or exact decimal (default 0).
    #[arg(long, default_value = "0x00000000", allow_hyphen_values = true)]
    c: String,
    /// A values, comma-separated (0x bit patterns or exact decimals).
    #[arg(
        long,
        value_delimiter = ',',
        required = true,
        allow_hyphen_values = true
    )]
    a: Vec<String>,
    /// B values, comma-separated (0x bit patterns or exact decimals).
    #[arg(
        long,
        value_delimiter = ',',
        required = true,
        allow_hyphen_values = true
    )]
    b: Vec<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `tcrtl dot`.
pub fn run(args: &DotArgs) -> Result<i32, String> {
    let fmt_a = values::format(&args.format)?;
    let fmt_b = match &args.format_b {
        Some(name) => values::format(name)?,
        None => fmt_a,
    };
    let preset = match &args.preset {
        Some(p) => Some(Preset::by_name(p).ok_or_else(|| {
            format!("unknown preset {p:?} (expected volta, ampere, hopper or blackwell)")
        })?),
        None => None,
    };
    let mode = match (args.acc.to_ascii_lowercase().as_str(), preset) {
        ("nvidia", Some(p)) => AccMode::Nvidia(p.params(fmt_a, fmt_b).map_err(|e| e.to_string())?),
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
    let a = values::operands(fmt_a, &args.a)?;
    let b = values::operands(fmt_b, &args.b)?;
    if a.len() != b.len() {
        return Err(format!(
            "--a has {} values but --b has {}",
            a.len(),
            b.len()
        ));
    }
    let c = values::operand(FP32, &args.c)? as u32;
    let width = args.width.unwrap_or(a.len().clamp(1, MAX_LANES));
    let r = dot(&mode, fmt_a, fmt_b, &a, &b, c, width).map_err(|e| e.to_string())?;
    let value = f32::from_bits(r.bits);
    if args.json {
        let value_json = if value.is_finite() {
            serde_json::json!(value as f64)
        } else {
            serde_json::json!(value.to_string().to_lowercase())
        };
        let obj = serde_json::json!({
            "bits": format!("0x{:08x}", r.bits),
            "value": value_json,
            "flags": r.flags.names(),
            "acc": mode.name(),
            "preset": preset.map(|p| p.name()),
            "format_a": fmt_a.name,
            "format_b": fmt_b.name,
            "k": a.len(),
            "steps": r.steps,
        });
        println!("{obj}");
    } else {
        println!("bits:  0x{:08x}", r.bits);
        println!("value: {value:e} ({value})");
        println!("flags: {}", r.flags);
    }
    Ok(0)
}
