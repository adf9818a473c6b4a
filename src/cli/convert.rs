//! `tcrtl convert`: values into a format's bit patterns, one element at a time (every
//! rounding mode, saturating or not) or in scaled blocks along the last axis (MX, NVFP4).
//!
//! Input: `--values` (a comma-separated list; decimal values read as float64, or with
//! `--from FMT` bit patterns `0x..` and exactly representable decimals of FMT) or `--in X.npy`
//! (float32 or float64 values; with `--from FMT` unsigned integers holding FMT's bit
//! patterns, TF32 in 32-bit containers). Output: `--out Y.npy` raw bits (`uint8` for formats
//! of 8 bits or fewer, one element a byte in its low bits; `uint16`; `uint32`, TF32 in its
//! FP32 container) and, for the block formats, `--scales-out S.npy` (`uint8`, one scale per
//! block: the input's shape with the last axis divided by the block size, rounded up); and
//! text or `--json` on standard output. Every check runs before any file is written.

use super::values;
use clap::Args;
use std::path::PathBuf;
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::numerics::mx::{self, BlockFormat, Element, Quantised};
use tensorcore_rtl::numerics::{
    convert, Flags, Format, Overflow, RoundingMode, FP16, FP32, FP64, TF32,
};

/// Arguments of `tcrtl convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Target format: e4m3, e5m2, fp16, bf16, tf32, fp32, e2m1, e2m3, e3m2, e8m0, or a block
    /// format: mxfp8e4m3, mxfp8e5m2, mxfp6e2m3, mxfp6e3m2, mxfp4, mxint8, nvfp4.
    #[arg(long)]
    to: String,
    /// Source format of raw bit patterns (any element format above). Without it the inputs
    /// are values (float32/float64 .npy, decimal --values).
    #[arg(long)]
    from: Option<String>,
    /// Comma-separated inputs.
    #[arg(
        long,
        value_delimiter = ',',
        allow_hyphen_values = true,
        conflicts_with = "input",
        required_unless_present = "input"
    )]
    values: Vec<String>,
    /// Input .npy file.
    #[arg(long = "in", requires = "out")]
    input: Option<PathBuf>,
    /// Output .npy file of bit patterns (with --in).
    #[arg(long, requires = "input")]
    out: Option<PathBuf>,
    /// Output .npy file of the block scales (block formats, with --in).
    #[arg(long, requires = "input")]
    scales_out: Option<PathBuf>,
    /// Rounding: rne (default), rna, rtz, rdn, rup, rto. Block formats take rne only.
    #[arg(long, default_value = "rne")]
    rounding: String,
    /// Saturate: overflow and infinities give the largest finite value (PTX satfinite).
    /// FP6, FP4 and the block formats' elements always clamp.
    #[arg(long)]
    saturate: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// The element formats `convert` knows (the format table).
fn element_format(name: &str) -> Result<Format, String> {
    Format::by_name(name).ok_or_else(|| {
        format!(
            "unknown format {name:?} (expected e4m3, e5m2, fp16, bf16, tf32, fp32, e2m1, e2m3, \
             e3m2, e8m0, mxfp8e4m3, mxfp8e5m2, mxfp6e2m3, mxfp6e3m2, mxfp4, mxint8 or nvfp4)"
        )
    })
}

/// Bits of TF32's container below its 19 bits.
const TF32_PAD: u32 = 13;

/// An encoding of `fmt` as written to files and shown: TF32 in its FP32 container.
fn container(fmt: Format, bits: u64) -> u64 {
    if fmt == TF32 {
        bits << TF32_PAD
    } else {
        bits
    }
}

/// The .npy dtype of `width`-bit codes.
fn code_dtype(width: u32) -> Dtype {
    match width {
        0..=8 => Dtype::U8,
        9..=16 => Dtype::U16,
        _ => Dtype::U32,
    }
}

/// Hex text of a code of `width` bits (as many digits as the width needs).
fn hex(bits: u64, width: u32) -> String {
    format!("0x{bits:0w$x}", w = width.div_ceil(4) as usize)
}

/// A value for JSON: a number, or "nan", "inf", "-inf".
fn json_value(v: f64) -> serde_json::Value {
    if v.is_nan() {
        serde_json::json!("nan")
    } else if v.is_infinite() {
        serde_json::json!(if v > 0.0 { "inf" } else { "-inf" })
    } else {
        serde_json::json!(v)
    }
}

/// A value for text output: plain decimal in a readable range, scientific outside it
/// (both print the shortest text that reads back as the same f64).
fn show(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && a.is_finite() && !(1e-4..1e16).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// The inputs: source format, encodings, shape.
struct Inputs {
    src: Format,
    words: Vec<u64>,
    shape: Vec<usize>,
}

/// A TF32 container: the low 13 bits must be zero.
fn tf32_from_container(word: u64, index: usize) -> Result<u64, String> {
    if word & ((1 << TF32_PAD) - 1) != 0 || word >> 32 != 0 {
        return Err(format!(
            "input {index} ({}) is not a TF32 value: its low 13 bits must be zero",
            hex(word, 32)
        ));
    }
    Ok(word >> TF32_PAD)
}

fn read_inputs(args: &ConvertArgs, from: Option<Format>) -> Result<Inputs, String> {
    if let Some(path) = &args.input {
        let arr = read_npy(path).map_err(|e| e.to_string())?;
        let shown = path.display();
        if arr.shape.is_empty() {
            return Err(format!("{shown}: a 0-d array has no last axis"));
        }
        let words = match from {
            None => match arr.dtype {
                Dtype::F32 => {
                    return Ok(Inputs {
                        src: FP32,
                        words: arr.words(),
                        shape: arr.shape,
                    })
                }
                Dtype::F64 => {
                    return Ok(Inputs {
                        src: FP64,
                        words: arr.words(),
                        shape: arr.shape,
                    })
                }
                d => {
                    return Err(format!(
                        "{shown}: dtype {} holds no values (expected float32 or float64, or \
                         give --from for bit patterns)",
                        d.numpy_name()
                    ))
                }
            },
            Some(f) => {
                let ok = match arr.dtype {
                    Dtype::U8 | Dtype::U16 | Dtype::U32 => true,
                    Dtype::F16 => f == FP16,
                    _ => false,
                };
                if !ok {
                    return Err(format!(
                        "{shown}: dtype {} cannot hold {f} bit patterns (expected unsigned \
                         integers)",
                        arr.dtype.numpy_name()
                    ));
                }
                let mut out = Vec::with_capacity(arr.len());
                for (i, w) in arr.iter_words().enumerate() {
                    if f == TF32 {
                        out.push(tf32_from_container(w, i)?);
                    } else if w > f.mask() {
                        return Err(format!(
                            "{shown}: element {i} ({w:#x}) does not fit {f} ({} bits)",
                            f.width()
                        ));
                    } else {
                        out.push(w);
                    }
                }
                out
            }
        };
        let src = from.unwrap_or(FP32);
        return Ok(Inputs {
            src,
            words,
            shape: arr.shape,
        });
    }
    let mut words = Vec::with_capacity(args.values.len());
    let src = match from {
        None => {
            for t in &args.values {
                let v: f64 = t
                    .trim()
                    .parse()
                    .map_err(|_| format!("{t:?} is not a decimal value"))?;
                words.push(v.to_bits());
            }
            FP64
        }
        Some(f) if f == TF32 => {
            for (i, t) in args.values.iter().enumerate() {
                let w = values::operand(FP32, t)?;
                words.push(tf32_from_container(w, i)?);
            }
            TF32
        }
        Some(f) => {
            words = values::operands(f, &args.values)?;
            f
        }
    };
    let shape = vec![words.len()];
    Ok(Inputs { src, words, shape })
}

/// Runs `tcrtl convert`.
pub fn run(args: &ConvertArgs) -> Result<i32, String> {
    let block = BlockFormat::by_name(&args.to);
    let to = match block {
        Some(_) => None,
        None => Some(element_format(&args.to)?),
    };
    let from = match &args.from {
        None => None,
        Some(name) => Some(element_format(name)?),
    };
    let mode = RoundingMode::conversion_by_name(&args.rounding).ok_or_else(|| {
        format!(
            "unknown rounding {:?} (expected rne, rna, rtz, rdn, rup or rto)",
            args.rounding
        )
    })?;
    if block.is_some() && mode != RoundingMode::NearestEven {
        return Err(format!(
            "{} quantises with rne only (got --rounding {})",
            args.to, args.rounding
        ));
    }
    if block.is_none() && args.scales_out.is_some() {
        return Err(format!(
            "--scales-out needs a block format (got --to {})",
            args.to
        ));
    }
    if block.is_some() && args.input.is_some() && args.scales_out.is_none() {
        return Err(format!("--to {} with --in needs --scales-out", args.to));
    }
    if args.values.iter().any(|v| v.trim().is_empty()) {
        return Err("--values: empty element in the list".into());
    }
    let mut plan = OutputPlan::new();
    if let Some(out) = &args.out {
        plan.add("--out", out)?;
    }
    if let Some(s) = &args.scales_out {
        plan.add("--scales-out", s)?;
    }
    if let Some(input) = args.input.as_deref().filter(|i| plan.contains(i)) {
        return Err(format!(
            "--in {} is also an output of this run",
            input.display()
        ));
    }
    let inputs = read_inputs(args, from)?;
    match (block, to) {
        (Some(b), _) => run_block(args, b, &inputs),
        (None, Some(t)) => run_elements(args, t, mode, &inputs),
        (None, None) => Err("no target format".into()),
    }
}

fn run_elements(
    args: &ConvertArgs,
    to: Format,
    mode: RoundingMode,
    inputs: &Inputs,
) -> Result<i32, String> {
    let policy = if args.saturate {
        Overflow::Saturate
    } else {
        Overflow::Ieee
    };
    if !to.has_nan() {
        if let Some(i) = inputs.words.iter().position(|&w| inputs.src.is_nan(w)) {
            return Err(format!(
                "input {i} is NaN: {to} has no NaN to convert it to"
            ));
        }
    }
    let results: Vec<(u64, Flags)> = inputs
        .words
        .iter()
        .map(|&w| {
            let r = convert(inputs.src, to, w, mode, policy);
            (r.bits, r.flags)
        })
        .collect();
    let shown_width = if to == TF32 { 32 } else { to.width() };
    if let Some(out) = &args.out {
        let words: Vec<u64> = results.iter().map(|&(b, _)| container(to, b)).collect();
        write_npy(out, &inputs.shape, code_dtype(shown_width), &words)
            .map_err(|e| e.to_string())?;
    }
    let value = |bits: u64| mx::decode_f64(to, bits);
    if args.json {
        let list: Vec<serde_json::Value> = results
            .iter()
            .map(|&(b, f)| {
                serde_json::json!({
                    "bits": hex(container(to, b), shown_width),
                    "value": json_value(value(b)),
                    "flags": f.names(),
                })
            })
            .collect();
        outln!("{}", serde_json::Value::Array(list));
    } else if let Some(out) = &args.out {
        let mut all = Flags::NONE;
        for &(_, f) in &results {
            all |= f;
        }
        outln!(
            "{} values -> {to} ({}, {}) written to {} (flags: {all})",
            results.len(),
            mode.name(),
            if args.saturate {
                "saturating"
            } else {
                "non-saturating"
            },
            out.display()
        );
    } else {
        for &(b, f) in &results {
            outln!(
                "{} {} {f}",
                hex(container(to, b), shown_width),
                show(value(b))
            );
        }
    }
    Ok(0)
}

fn run_block(args: &ConvertArgs, fmt: BlockFormat, inputs: &Inputs) -> Result<i32, String> {
    let row_len = *inputs.shape.last().unwrap_or(&0);
    if row_len == 0 {
        return Err("nothing to quantise: the last axis is empty".into());
    }
    let q: Quantised =
        mx::quantise(fmt, inputs.src, &inputs.words, row_len).map_err(|e| e.to_string())?;
    let mut scale_shape = inputs.shape.clone();
    if let Some(last) = scale_shape.last_mut() {
        *last = q.blocks_per_row();
    }
    let elem_bits = fmt.element_bits();
    let sf = fmt.scale_format();
    if let Some(out) = &args.out {
        write_npy(out, &inputs.shape, Dtype::U8, &q.elements).map_err(|e| e.to_string())?;
    }
    if let Some(s) = &args.scales_out {
        write_npy(s, &scale_shape, Dtype::U8, &q.scales).map_err(|e| e.to_string())?;
    }
    let deq = mx::dequantise(&q);
    let clamped = mx::clamped_count(&q, inputs.src, &inputs.words);
    let tensor = q.tensor_scale.map(|t| (t, f32::from_bits(t) as f64));
    if args.json {
        let elements: Vec<serde_json::Value> = q
            .elements
            .iter()
            .zip(&deq)
            .map(|(&b, &d)| {
                serde_json::json!({
                    "bits": hex(b, elem_bits),
                    "value": json_value(mx::element_value(fmt.element(), b)),
                    "dequantised": json_value(d),
                })
            })
            .collect();
        let scales: Vec<serde_json::Value> = q
            .scales
            .iter()
            .map(|&b| serde_json::json!({"bits": hex(b, 8), "value": json_value(mx::decode_f64(sf, b))}))
            .collect();
        let obj = serde_json::json!({
            "format": fmt.name(),
            "block_size": fmt.block_size(),
            "elements": elements,
            "scales": scales,
            "tensor_scale": tensor.map(|(b, v)| serde_json::json!({"bits": hex(b as u64, 32), "value": v})),
            "clamped": clamped,
        });
        outln!("{obj}");
        return Ok(0);
    }
    let elem_name = match fmt.element() {
        Element::Float(f) => f.name,
        Element::Int8 => "int8",
    };
    outln!(
        "{fmt}: {} elements ({elem_name}), {} scales ({} per block of {}); {clamped} clamped to \
         the largest magnitude of their block",
        q.elements.len(),
        q.scales.len(),
        sf.name,
        fmt.block_size()
    );
    if let Some((b, v)) = tensor {
        outln!("tensor scale {} {}", hex(b as u64, 32), show(v));
    }
    if args.out.is_none() {
        for (i, &s) in q.scales.iter().enumerate() {
            outln!("scale {i} {} {}", hex(s, 8), show(mx::decode_f64(sf, s)));
        }
        for (&b, &d) in q.elements.iter().zip(&deq) {
            outln!(
                "{} {} {}",
                hex(b, elem_bits),
                show(mx::element_value(fmt.element(), b)),
                show(d)
            );
        }
    }
    Ok(0)
}
