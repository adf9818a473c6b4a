//! `convert`, `quantize` and `dequantize`: the element conversions of `tcrtl convert`
//! (`numerics::convert`, every rounding, saturating or not) and the MX/NVFP4 block
//! quantisation (`numerics::mx`), over numpy arrays.

use crate::arrays::{require_unsigned, Words};
use crate::errors::{value_error, IntoPy};
use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use rayon::prelude::*;
use tensorcore_rtl::numerics::format::{Format, FP32, FP64, TF32};
use tensorcore_rtl::numerics::mx::{self, BlockFormat, Quantised};
use tensorcore_rtl::numerics::{convert, Overflow, RoundingMode};

/// Bits TF32 patterns sit above in their FP32 container.
const TF32_PAD: u32 = 13;

/// An element format by name, with `tcrtl convert`'s message.
fn element_format(name: &str) -> PyResult<Format> {
    Format::by_name(name).ok_or_else(|| {
        value_error(format!(
            "unknown format {name:?} (expected e4m3, e5m2, fp16, bf16, tf32, fp32, e2m1, e2m3, \
             e3m2, e8m0, mxfp8e4m3, mxfp8e5m2, mxfp6e2m3, mxfp6e3m2, mxfp4, mxint8 or nvfp4)"
        ))
    })
}

/// Values from a float32 or float64 array: (source format, words, shape).
fn float_values(obj: &Bound<'_, PyAny>) -> PyResult<Option<(Format, Words)>> {
    if let Ok(arr) = obj.downcast::<PyArrayDyn<f32>>() {
        let ro = arr.readonly();
        let words = ro
            .as_array()
            .iter()
            .map(|x| u64::from(x.to_bits()))
            .collect();
        return Ok(Some((
            FP32,
            Words {
                shape: ro.shape().to_vec(),
                words,
            },
        )));
    }
    if let Ok(arr) = obj.downcast::<PyArrayDyn<f64>>() {
        let ro = arr.readonly();
        let words = ro.as_array().iter().map(|x| x.to_bits()).collect();
        return Ok(Some((
            FP64,
            Words {
                shape: ro.shape().to_vec(),
                words,
            },
        )));
    }
    Ok(None)
}

/// The inputs of a conversion: values (float32/float64) without `from_fmt`, else `from_fmt`'s
/// bit patterns (TF32 in FP32 containers), as `tcrtl convert --in` reads them.
fn inputs(py: Python<'_>, x: &Bound<'_, PyAny>, from: Option<Format>) -> PyResult<(Format, Words)> {
    let Some(f) = from else {
        return float_values(x)?.ok_or_else(|| {
            value_error("x holds no values (expected float32 or float64, or give from_fmt for bit patterns)")
        });
    };
    let mut w = require_unsigned(py, x, "x")?;
    for (i, word) in w.words.iter_mut().enumerate() {
        if f == TF32 {
            if *word & ((1 << TF32_PAD) - 1) != 0 || *word >> 32 != 0 {
                return Err(value_error(format!(
                    "input {i} ({:#010x}) is not a TF32 value: its low 13 bits must be zero",
                    *word
                )));
            }
            *word >>= TF32_PAD;
        } else if *word > f.mask() {
            return Err(value_error(format!(
                "element {i} ({:#x}) does not fit {f} ({} bits)",
                *word,
                f.width()
            )));
        }
    }
    Ok((f, w))
}

/// Element-wise conversion into `to` (as `tcrtl convert --to FMT`): returns each result's bit
/// pattern (TF32 in its FP32 container), its value as float64 and its flags, flat, with the
/// input's shape.
#[pyfunction]
#[pyo3(signature = (x, to, from_fmt=None, rounding_name="rne", saturate=false))]
#[allow(clippy::type_complexity)]
pub fn convert_bits<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    to: &str,
    from_fmt: Option<&str>,
    rounding_name: &str,
    saturate: bool,
) -> PyResult<(
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<u8>>,
    Vec<usize>,
)> {
    if BlockFormat::by_name(to).is_some() {
        return Err(value_error(format!(
            "{to} is a block format: use tcrtl.quantize"
        )));
    }
    let to_f = element_format(to)?;
    let from = from_fmt.map(element_format).transpose()?;
    let mode = RoundingMode::conversion_by_name(rounding_name).ok_or_else(|| {
        value_error(format!(
            "unknown rounding {rounding_name:?} (expected rne, rna, rtz, rdn, rup or rto)"
        ))
    })?;
    let (src, w) = inputs(py, x, from)?;
    if !to_f.has_nan() {
        if let Some(i) = w.words.iter().position(|&x| src.is_nan(x)) {
            return Err(value_error(format!(
                "input {i} is NaN: {to_f} has no NaN to convert it to"
            )));
        }
    }
    let policy = if saturate {
        Overflow::Saturate
    } else {
        Overflow::Ieee
    };
    let results: Vec<(u64, f64, u8)> = py.allow_threads(|| {
        w.words
            .par_iter()
            .map(|&x| {
                let r = convert::convert(src, to_f, x, mode, policy);
                let container = if to_f == TF32 {
                    r.bits << TF32_PAD
                } else {
                    r.bits
                };
                (container, mx::decode_f64(to_f, r.bits), r.flags.to_bits())
            })
            .collect()
    });
    let bits: Vec<u64> = results.iter().map(|r| r.0).collect();
    let values: Vec<f64> = results.iter().map(|r| r.1).collect();
    let flags: Vec<u8> = results.iter().map(|r| r.2).collect();
    Ok((
        PyArray1::from_vec(py, bits),
        PyArray1::from_vec(py, values),
        PyArray1::from_vec(py, flags),
        w.shape,
    ))
}

/// A block format by name.
fn block_format(name: &str) -> PyResult<BlockFormat> {
    BlockFormat::by_name(name).ok_or_else(|| {
        value_error(format!(
            "unknown block format {name:?} (expected mxfp8e4m3, mxfp8e5m2, mxfp6e2m3, \
             mxfp6e3m2, mxfp4, mxint8 or nvfp4)"
        ))
    })
}

/// Quantises float32/float64 values along their last axis into block format `fmt` (as
/// `tcrtl convert --to FMT --in X.npy --out Q.npy --scales-out S.npy`): element codes (the
/// input's shape), scale codes (the last axis in blocks), NVFP4's FP32 tensor scale bits and
/// how many elements were clamped to their block's largest magnitude.
#[pyfunction]
#[pyo3(signature = (x, fmt, rounding_name="rne"))]
#[allow(clippy::type_complexity)]
pub fn quantize_bits<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    fmt: &str,
    rounding_name: &str,
) -> PyResult<(
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    Vec<usize>,
    Vec<usize>,
    Option<u32>,
    usize,
)> {
    let b = block_format(fmt)?;
    if RoundingMode::conversion_by_name(rounding_name) != Some(RoundingMode::NearestEven) {
        return Err(value_error(format!(
            "{fmt} quantises with rne only (got --rounding {rounding_name})"
        )));
    }
    let (src, w) = float_values(x)?
        .ok_or_else(|| value_error("x holds no values (expected float32 or float64)"))?;
    if w.shape.is_empty() {
        return Err(value_error("a 0-d array has no last axis"));
    }
    let row_len = *w.shape.last().unwrap_or(&0);
    if row_len == 0 {
        return Err(value_error("nothing to quantise: the last axis is empty"));
    }
    let q = py
        .allow_threads(|| mx::quantise(b, src, &w.words, row_len))
        .py()?;
    let clamped = mx::clamped_count(&q, src, &w.words);
    let mut scale_shape = w.shape.clone();
    if let Some(last) = scale_shape.last_mut() {
        *last = q.blocks_per_row();
    }
    Ok((
        PyArray1::from_vec(py, q.elements),
        PyArray1::from_vec(py, q.scales),
        w.shape,
        scale_shape,
        q.tensor_scale,
        clamped,
    ))
}

/// The values of quantised elements: element codes (rows x K, or any shape whose last axis is
/// K), scale codes (last axis in blocks) and NVFP4's tensor scale bits, as float64
/// (`numerics::mx::dequantise`).
#[pyfunction]
#[pyo3(signature = (elements, scales, fmt, tensor_scale=None))]
pub fn dequantize_values<'py>(
    py: Python<'py>,
    elements: &Bound<'py, PyAny>,
    scales: &Bound<'py, PyAny>,
    fmt: &str,
    tensor_scale: Option<u32>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let b = block_format(fmt)?;
    let e = require_unsigned(py, elements, "elements")?;
    let s = require_unsigned(py, scales, "scales")?;
    let row_len = *e.shape.last().unwrap_or(&0);
    if row_len == 0 {
        return Err(value_error("elements: the last axis is empty"));
    }
    let rows = e.words.len() / row_len;
    let blocks = row_len.div_ceil(b.block_size());
    if s.words.len() != rows * blocks {
        return Err(value_error(format!(
            "scales: {rows} rows of {row_len} elements of {b} need {} scales ({blocks} a row), not {}",
            rows * blocks,
            s.words.len()
        )));
    }
    let mask = (1u64 << b.element_bits()) - 1;
    if let Some(i) = e.words.iter().position(|&x| x & !mask != 0) {
        return Err(value_error(format!(
            "elements[{i}] = {:#x} does not fit {b}'s {}-bit elements",
            e.words[i],
            b.element_bits()
        )));
    }
    let tensor_scale = match (b, tensor_scale) {
        (BlockFormat::NvFp4, t) => Some(t.unwrap_or(0x3F80_0000)),
        (_, Some(_)) => {
            return Err(value_error(format!(
                "a tensor scale applies to nvfp4 only ({b} has none)"
            )))
        }
        (_, None) => None,
    };
    let q = Quantised {
        format: b,
        row_len,
        elements: e.words,
        scales: s.words,
        tensor_scale,
    };
    Ok(PyArray1::from_vec(py, mx::dequantise(&q)))
}
