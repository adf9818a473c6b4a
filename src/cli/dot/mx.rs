//! `tcrtl dot` with block-scaled operands (`--format mxfp8e4m3`, ..., `mxint8`, `nvfp4`): the
//! element codes or values of one row each, the block scales beside them, and the MX dot
//! product of `numerics::mx_dot` in `exact`, `fused` or `block-rz` mode.

use crate::cli::values;
use tensorcore_rtl::numerics::format::{E4M3, FP32};
use tensorcore_rtl::numerics::int::S8;
use tensorcore_rtl::numerics::mx::{BlockFormat, Element, Quantised};
use tensorcore_rtl::numerics::mx_dot::{mx_dot, MxDotMode};

/// One block-scaled dot product to run.
pub struct MxJob<'a> {
    /// Format of A.
    pub fa: BlockFormat,
    /// Format of B.
    pub fb: BlockFormat,
    /// The `--acc` name.
    pub acc: &'a str,
    /// A's elements.
    pub a: &'a [String],
    /// B's elements.
    pub b: &'a [String],
    /// A's block scales.
    pub a_scales: &'a [String],
    /// B's block scales.
    pub b_scales: &'a [String],
    /// NVFP4: A's FP32 tensor scale (default 1).
    pub a_tensor_scale: Option<&'a str>,
    /// NVFP4: B's FP32 tensor scale (default 1).
    pub b_tensor_scale: Option<&'a str>,
    /// The FP32 accumulator.
    pub c: &'a str,
    /// Print JSON.
    pub json: bool,
}

/// Parses `--acc` for a block-scaled dot product.
fn mode(name: &str) -> Result<MxDotMode, String> {
    MxDotMode::ALL
        .into_iter()
        .find(|m| m.name().eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            format!("block-scaled formats take --acc exact, fused or block-rz (got {name:?})")
        })
}

/// One element of `fmt`: a bit pattern (`0x..`) or an exact value (MXINT8: an integer code
/// -128..=127, whose value is `code * 2^-6`). Formats without NaN or infinity refuse them.
fn element(fmt: BlockFormat, text: &str) -> Result<u64, String> {
    match fmt.element() {
        Element::Int8 => values::int_operand(S8, text),
        Element::Float(f) => {
            let t = text.trim().to_ascii_lowercase();
            if !f.has_nan() && (t.contains("nan") || t.contains("inf")) {
                return Err(format!("{text:?}: {f} has no NaN and no infinity"));
            }
            values::operand(f, text)
        }
    }
}

/// One block scale: E8M0 for MX (a `0x..` code, or a power of two 2^-127..=2^127), unsigned
/// E4M3 for NVFP4 (a bit pattern or an exact value; the sign bit must be clear, as PTX's
/// `ue4m3` and `tcrtl gemm` say).
fn scale(fmt: BlockFormat, text: &str) -> Result<u64, String> {
    if fmt == BlockFormat::NvFp4 {
        let code = values::operand(E4M3, text)?;
        if code & 0x80 != 0 {
            return Err(format!(
                "NVFP4 scale {:?} = {code:#04x} has its sign bit set; NVFP4 block scales are \
                 unsigned E4M3 (UE4M3, as in PTX)",
                text.trim()
            ));
        }
        return Ok(code);
    }
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return match u64::from_str_radix(hex, 16) {
            Ok(code) if code <= 0xFF => Ok(code),
            _ => Err(format!("bad E8M0 scale {t:?} (expected 0x00..0xff)")),
        };
    }
    let v: f64 = t
        .parse()
        .map_err(|_| format!("bad E8M0 scale {t:?} (a 0x code or a power of two)"))?;
    let e = v.log2();
    if v > 0.0 && e.fract() == 0.0 && (-127.0..=127.0).contains(&e) {
        Ok((e as i64 + 127) as u64)
    } else {
        Err(format!(
            "E8M0 scale {t:?} is not a power of two in 2^-127..2^127"
        ))
    }
}

/// One operand row as a quantised tensor of one row.
fn row(
    fmt: BlockFormat,
    name: &str,
    elems: &[String],
    scales: &[String],
    tensor_scale: Option<&str>,
) -> Result<Quantised, String> {
    let elements = elems
        .iter()
        .map(|t| element(fmt, t).map_err(|e| format!("--{name}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let blocks = elements.len().div_ceil(fmt.block_size());
    if scales.len() != blocks {
        return Err(format!(
            "--{name}-scales: {} elements of {fmt} make {blocks} block(s) of {}, so {blocks} \
             scale(s), not {}",
            elements.len(),
            fmt.block_size(),
            scales.len()
        ));
    }
    let scales = scales
        .iter()
        .map(|t| scale(fmt, t).map_err(|e| format!("--{name}-scales: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let tensor_scale = match (fmt, tensor_scale) {
        (BlockFormat::NvFp4, Some(t)) => Some(
            values::operand(FP32, t).map_err(|e| format!("--{name}-tensor-scale: {e}"))? as u32,
        ),
        (BlockFormat::NvFp4, None) => Some(0x3F80_0000),
        (_, Some(_)) => {
            return Err(format!(
                "--{name}-tensor-scale applies to nvfp4 only ({fmt} has none)"
            ))
        }
        (_, None) => None,
    };
    Ok(Quantised {
        format: fmt,
        row_len: elements.len(),
        elements,
        scales,
        tensor_scale,
    })
}

/// Runs a block-scaled `tcrtl dot`.
pub fn run(job: &MxJob) -> Result<i32, String> {
    let mode = mode(job.acc)?;
    if job.a.len() != job.b.len() {
        return Err(format!(
            "--a has {} values but --b has {}",
            job.a.len(),
            job.b.len()
        ));
    }
    let a = row(job.fa, "a", job.a, job.a_scales, job.a_tensor_scale)?;
    let b = row(job.fb, "b", job.b, job.b_scales, job.b_tensor_scale)?;
    let c = values::operand(FP32, job.c).map_err(|e| format!("--c: {e}"))? as u32;
    let r = mx_dot(&a, 0, &b, 0, c, mode).map_err(|e| e.to_string())?;
    let bits = r.bits as u32;
    let value = f32::from_bits(bits);
    if job.json {
        let value_json = if value.is_finite() {
            serde_json::json!(value as f64)
        } else {
            serde_json::json!(value.to_string().to_lowercase())
        };
        outln!(
            "{}",
            serde_json::json!({
                "bits": format!("0x{bits:08x}"),
                "out_format": "fp32",
                "value": value_json,
                "flags": r.flags.names(),
                "acc": mode.name(),
                "format_a": job.fa.name(),
                "format_b": job.fb.name(),
                "k": a.row_len,
                "blocks": a.blocks_per_row(),
            })
        );
    } else {
        outln!("bits:  0x{bits:08x} (fp32)");
        outln!("value: {value:e} ({value})");
        outln!("flags: {}", r.flags);
    }
    Ok(0)
}
