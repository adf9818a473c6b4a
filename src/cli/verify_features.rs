//! `tcrtl verify features`: runs the feature-detection probes (`verify::features`, after
//! Khattak and Mikaitis, IEEE HPEC 2025) on a preset's `nvidia` mode, as a black box.

use super::values;
use clap::Args;
use tensorcore_rtl::numerics::dot::{dot_acc, AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, FP16, FP32, INPUT_FORMATS};
use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::verify::features::{detect_features, FeatureReport};

/// Arguments of `tcrtl verify features`.
#[derive(Args, Debug)]
pub struct FeatureArgs {
    /// GPU preset whose nvidia mode is probed (volta, turing, ampere, ada, hopper, blackwell,
    /// h200).
    #[arg(long)]
    preset: String,
    /// Input format (e4m3, e5m2, fp16, bf16, tf32); every format the preset supports when
    /// left out.
    #[arg(long)]
    format: Option<String>,
    /// Print JSON (one object for one format, an array otherwise) instead of text.
    #[arg(long)]
    json: bool,
}

/// The preset's `nvidia` mode for `fmt` x `fmt` into `acc` as a black box `f(a, b, c) -> d`,
/// or the reason it has none.
fn unit(
    preset: Preset,
    fmt: Format,
    acc: Format,
) -> Result<impl Fn(&[u64], &[u64], u32) -> u32, String> {
    let params = preset
        .params_for(fmt, fmt, acc)
        .map_err(|e| e.to_string())?;
    let mode = AccMode::Nvidia(params);
    Ok(move |a: &[u64], b: &[u64], c: u32| {
        // The probes build lanes of one format and equal length, so this cannot fail; a
        // failure would read as a result no probe expects (all ones, a NaN pattern).
        dot_acc(
            &mode,
            RoundingMode::NearestEven,
            acc,
            fmt,
            fmt,
            a,
            b,
            c,
            a.len().clamp(1, 32),
        )
        .map_or(u32::MAX, |r| r.bits)
    })
}

fn probe(preset: Preset, fmt: Format) -> Result<FeatureReport, String> {
    let fp32 = unit(preset, fmt, FP32)?;
    let fp16 = unit(preset, fmt, FP16).ok();
    detect_features(fmt, &fp32, fp16.as_ref()).map_err(|e| e.to_string())
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Runs `tcrtl verify features`.
pub fn run(args: &FeatureArgs) -> Result<i32, String> {
    let preset = tensorcore_rtl::io::values::preset(&args.preset)?;
    let formats: Vec<Format> = match &args.format {
        Some(name) => vec![values::input_format(name)?],
        None => INPUT_FORMATS
            .iter()
            .copied()
            .filter(|&f| preset.params(f, f).is_ok())
            .collect(),
    };
    let mut reports = Vec::new();
    for fmt in formats {
        reports.push(probe(preset, fmt)?);
    }
    if args.json {
        let with_preset = |r: &FeatureReport| {
            let mut v = serde_json::to_value(r).map_err(|e| e.to_string())?;
            v["preset"] = preset.name().into();
            Ok::<_, String>(v)
        };
        if args.format.is_some() {
            outln!("{}", with_preset(&reports[0])?);
        } else {
            let all = reports
                .iter()
                .map(with_preset)
                .collect::<Result<Vec<_>, _>>()?;
            outln!("{}", serde_json::Value::Array(all));
        }
        return Ok(0);
    }
    for r in &reports {
        let opt = |o: Option<String>| o.unwrap_or_else(|| "-".into());
        outln!(
            "preset {preset}, format {} (probes scaled by 2^{})",
            r.format,
            r.scale_exp
        );
        outln!("  subnormal inputs       {}", yes(r.subnormal_inputs));
        outln!("  subnormal outputs      {}", yes(r.subnormal_outputs));
        outln!("  kept fraction bits     {}", r.kept_fraction_bits);
        outln!(
            "  extra alignment bits   {}",
            opt(r.extra_alignment_bits.map(|b| b.to_string()))
        );
        outln!(
            "  alignment rounding     {}",
            opt(r.alignment_rounding.map(|o| o.name().into()))
        );
        outln!("  block size             {}", r.block_size);
        outln!(
            "  carry bits             {}",
            opt(r.carry_bits.map(|c| c.to_string()))
        );
        outln!("  normalisation          {}", r.normalisation.name());
        outln!("  output rounding fp32   {}", r.output_rounding.name());
        outln!(
            "  chained rounding       {}",
            opt(r.chained_rounding.map(|o| o.name().into()))
        );
        outln!(
            "  output rounding fp16   {}",
            opt(r.fp16_output_rounding.map(|o| o.name().into()))
        );
    }
    Ok(0)
}
