//! `dot`: batches of dot products, one per row, through the library's datapath: floating
//! point ([`dot_batch_rows_acc`]), integer ([`dot_int`]) and block-scaled ([`mx_dot`]). The
//! checks and their messages are the command line's (`tcrtl dot`), in the same order.

use crate::arrays::{int_words, require_unsigned, Words};
use crate::errors::{value_error, IntoPy};
use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use rayon::prelude::*;
use tensorcore_rtl::io::arith::{Arith, ArithNames};
use tensorcore_rtl::io::values::{acc_format, rounding};
use tensorcore_rtl::numerics::convert::tf32_from_container;
use tensorcore_rtl::numerics::dot::{dot_batch_promoted, dot_batch_rows_acc, MAX_LANES};
use tensorcore_rtl::numerics::format::{Format, TF32};
use tensorcore_rtl::numerics::int::{dot_int, IntFormat, IntOverflow};
use tensorcore_rtl::numerics::mx::{BlockFormat, Element, Quantised};
use tensorcore_rtl::numerics::mx_dot::{mx_dot, MxDotMode};
use tensorcore_rtl::numerics::RoundingMode;

/// Which datapath `fmt` (and `fmt_b`) select: `"block"` (MX, NVFP4), `"int"` (s8, u8, s4, u4)
/// or `"float"`, refusing what `tcrtl dot` refuses before it reads an operand: a block format
/// paired with another kind, scales without a block format, integers paired with floats or
/// given a mode or preset.
#[pyfunction]
#[pyo3(signature = (fmt, fmt_b=None, acc=None, preset=None, scales=false))]
pub fn dot_kind(
    fmt: &str,
    fmt_b: Option<&str>,
    acc: Option<&str>,
    preset: Option<&str>,
    scales: bool,
) -> PyResult<&'static str> {
    let fa = BlockFormat::by_name(fmt);
    let fb = match fmt_b {
        Some(name) => BlockFormat::by_name(name),
        None => fa,
    };
    match (fa, fb) {
        (Some(_), Some(_)) => return Ok("block"),
        (None, None) if scales => {
            return Err(value_error(
                "--a-scales, --b-scales and the tensor scales apply to block-scaled formats \
                 (mxfp8e4m3, mxfp8e5m2, mxfp6e2m3, mxfp6e3m2, mxfp4, mxint8, nvfp4)",
            ))
        }
        (None, None) => {}
        _ => {
            return Err(value_error(
                "a block-scaled format pairs only with another block-scaled format",
            ))
        }
    }
    let names = ArithNames {
        format: fmt,
        format_b: fmt_b,
        acc,
        preset,
        gpu: None,
        instr: None,
    };
    Ok(if names.int_formats().py()?.is_some() {
        "int"
    } else {
        "float"
    })
}

/// (rows, K) of a two-dimensional operand, or a `ValueError` naming it.
fn rows_by_k(w: &Words, name: &str) -> PyResult<(usize, usize)> {
    match w.shape.as_slice() {
        [r, k] => Ok((*r, *k)),
        s => Err(value_error(format!(
            "{name} must be rows x K but has shape {s:?}"
        ))),
    }
}

/// One row's C for every row, shape (rows,).
fn row_c(w: Words, rows: usize) -> PyResult<Vec<u64>> {
    match w.shape.as_slice() {
        [n] if *n == rows => Ok(w.words),
        [n] => Err(value_error(format!(
            "C has {n} values but A and B have {rows} rows"
        ))),
        s => Err(value_error(format!(
            "C must hold one value per row, shape ({rows},), but has shape {s:?}"
        ))),
    }
}

/// D's patterns and each row's flags ([`tensorcore_rtl::numerics::Flags::to_bits`]).
type Rows<'py> = (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<u8>>);

/// The checks of a floating-point `tcrtl dot` on its names, in the command line's order:
/// `satfinite`, the rounding, the output format, `--acc all`, then formats, mode and preset.
/// Returns the arithmetic, the rounding and the accumulator format.
#[allow(clippy::too_many_arguments)]
fn float_names(
    fmt: &str,
    fmt_b: Option<&str>,
    acc: Option<&str>,
    preset: Option<&str>,
    out_fmt: &str,
    rounding_name: &str,
    satfinite: bool,
) -> PyResult<(Arith, RoundingMode, Format)> {
    if satfinite {
        return Err(value_error(
            "--satfinite applies to the integer formats (s8, u8, s4, u4) only",
        ));
    }
    let rm = rounding(rounding_name).py()?;
    let accf = acc_format(out_fmt).py()?;
    if acc.is_some_and(|m| m.eq_ignore_ascii_case("all")) {
        return Err(value_error(
            "--acc all takes operand values, not .npy batches",
        ));
    }
    let names = ArithNames {
        format: fmt,
        format_b: fmt_b,
        acc,
        preset,
        gpu: None,
        instr: None,
    };
    Ok((names.resolve_acc(accf).py()?, rm, accf))
}

/// Checks the names of a floating-point dot product (see [`float_names`]) before any
/// operand is read, raising the command line's message.
#[pyfunction]
#[pyo3(signature = (fmt, fmt_b, acc, preset, out_fmt, rounding_name, satfinite))]
#[allow(clippy::too_many_arguments)]
pub fn dot_float_check(
    fmt: &str,
    fmt_b: Option<&str>,
    acc: Option<&str>,
    preset: Option<&str>,
    out_fmt: &str,
    rounding_name: &str,
    satfinite: bool,
) -> PyResult<()> {
    float_names(fmt, fmt_b, acc, preset, out_fmt, rounding_name, satfinite).map(drop)
}

/// Floating-point batch: row `r` is `d[r] = c[r] + sum_k a[r][k] * b[r][k]` under the mode, as
/// `tcrtl dot --a A.npy --b B.npy --c C.npy` computes it. `a` and `b` hold bit patterns
/// (uint8 for FP8, uint16 for FP16 and BF16, uint32 FP32 containers for TF32), `c` FP32
/// (uint32) or FP16 (uint16, with `out_fmt="fp16"`) patterns. Returns D's patterns and each
/// row's flags.
#[pyfunction]
#[pyo3(signature = (a, b, c, *, fmt, fmt_b, acc, preset, out_fmt, rounding_name, width, satfinite, promote_every=None))]
#[allow(clippy::too_many_arguments)]
pub fn dot_float<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    c: &Bound<'py, PyAny>,
    fmt: &str,
    fmt_b: Option<&str>,
    acc: Option<&str>,
    preset: Option<&str>,
    out_fmt: &str,
    rounding_name: &str,
    width: Option<usize>,
    satfinite: bool,
    promote_every: Option<usize>,
) -> PyResult<Rows<'py>> {
    let (arith, rm, accf) =
        float_names(fmt, fmt_b, acc, preset, out_fmt, rounding_name, satfinite)?;
    let (fa, fb, mode) = (arith.fmt_a, arith.fmt_b, arith.mode);
    let (guard_a, rows, k) = held(a, "A")?;
    let (guard_b, rows_b, k_b) = held(b, "B")?;
    let (src_a, src_b) = (guard_a.source(), guard_b.source());
    if (rows, k) != (rows_b, k_b) {
        return Err(value_error(format!(
            "A is {rows} x {k} but B is {rows_b} x {k_b} (they must match)"
        )));
    }
    let c: Vec<u32> = row_c(require_unsigned(py, c, "C")?, rows)?
        .into_iter()
        .map(|w| w as u32)
        .collect();
    let width = width.unwrap_or(k.clamp(1, MAX_LANES));
    // The checks of the whole batch (names, widths, the whole-K contract) once, on no rows.
    dot_batch_rows_acc(&mode, rm, accf, fa, fb, &[], &[], &[], k, width).py()?;
    // With `promote_every`, the promoted rows of `numerics::dot::promote` (its checks too).
    let rows_of = |wa: &[u64], wb: &[u64], cc: &[u32]| match promote_every {
        Some(n) => dot_batch_promoted(&mode, rm, accf, fa, fb, wa, wb, cc, k, width, n)
            .map_err(|e| e.to_string()),
        None => dot_batch_rows_acc(&mode, rm, accf, fa, fb, wa, wb, cc, k, width)
            .map_err(|e| e.to_string()),
    };
    rows_of(&[], &[], &[]).map_err(value_error)?;
    let mut d = vec![0u32; rows];
    let mut flags = vec![0u8; rows];
    // Rows in chunks on the rayon pool: each chunk's operands are widened into words where
    // the chunk runs (no batch-sized copy), and every row is computed by the library's batch
    // function exactly as alone, so the results do not depend on the chunking or the threads.
    let run: Result<(), String> = py.allow_threads(|| {
        d.par_chunks_mut(CHUNK_ROWS)
            .zip(flags.par_chunks_mut(CHUNK_ROWS))
            .enumerate()
            .try_for_each(|(t, (dd, ff))| {
                let (lo, n) = (t * CHUNK_ROWS, dd.len());
                let wa = src_a
                    .words(lo * k, n * k, fa)
                    .map_err(|e| format!("A: {e}"))?;
                let wb = src_b
                    .words(lo * k, n * k, fb)
                    .map_err(|e| format!("B: {e}"))?;
                let r = rows_of(&wa, &wb, &c[lo..lo + n])?;
                dd.copy_from_slice(&r.d);
                for (f, rf) in ff.iter_mut().zip(&r.flags) {
                    *f = rf.to_bits();
                }
                Ok(())
            })
    });
    run.map_err(value_error)?;
    Ok((PyArray1::from_vec(py, d), PyArray1::from_vec(py, flags)))
}

/// Rows a task widens and computes at once.
const CHUNK_ROWS: usize = 4096;

/// A 2-D operand array borrowed without copying: its contiguous elements of one unsigned
/// width (or its copy as words when the array is not contiguous).
enum Source<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    Words(Vec<u64>),
}

impl Source<'_> {
    /// Elements `lo..lo + n` as words, each checked to be a pattern of `fmt` (TF32: an FP32
    /// container whose low 13 bits are zero, narrowed to its 19-bit pattern).
    fn words(&self, lo: usize, n: usize, fmt: Format) -> Result<Vec<u64>, String> {
        let mut w: Vec<u64> = match self {
            Source::U8(s) => s[lo..lo + n].iter().map(|&x| u64::from(x)).collect(),
            Source::U16(s) => s[lo..lo + n].iter().map(|&x| u64::from(x)).collect(),
            Source::U32(s) => s[lo..lo + n].iter().map(|&x| u64::from(x)).collect(),
            Source::Words(v) => v[lo..lo + n].to_vec(),
        };
        check_patterns(&mut w, lo, fmt)?;
        Ok(w)
    }
}

/// Checks (and for TF32 narrows) the patterns `w`, the elements from flat index `lo`.
fn check_patterns(w: &mut [u64], lo: usize, fmt: Format) -> Result<(), String> {
    if fmt == TF32 {
        for (i, x) in w.iter_mut().enumerate() {
            *x = u32::try_from(*x)
                .ok()
                .and_then(tf32_from_container)
                .ok_or_else(|| {
                    format!(
                        "element {} = {x:#x} is not a TF32 pattern (an FP32 container whose \
                         low 13 bits are zero)",
                        lo + i
                    )
                })?;
        }
    } else if let Some(i) = w.iter().position(|&x| x & !fmt.mask() != 0) {
        return Err(format!(
            "element {} = {:#x} is not a {fmt} bit pattern ({} bits)",
            lo + i,
            w[i],
            fmt.width()
        ));
    }
    Ok(())
}

/// A 2-D unsigned operand array held read-only for the call.
enum Guard<'py> {
    U8(PyReadonlyArrayDyn<'py, u8>),
    U16(PyReadonlyArrayDyn<'py, u16>),
    U32(PyReadonlyArrayDyn<'py, u32>),
}

impl Guard<'_> {
    /// The array's shape.
    fn shape(&self) -> &[usize] {
        match self {
            Guard::U8(g) => g.shape(),
            Guard::U16(g) => g.shape(),
            Guard::U32(g) => g.shape(),
        }
    }

    /// Its elements: borrowed when contiguous, else copied as words.
    fn source(&self) -> Source<'_> {
        match self {
            Guard::U8(g) => g.as_slice().map(Source::U8).unwrap_or_else(|_| {
                Source::Words(g.as_array().iter().map(|&x| u64::from(x)).collect())
            }),
            Guard::U16(g) => g.as_slice().map(Source::U16).unwrap_or_else(|_| {
                Source::Words(g.as_array().iter().map(|&x| u64::from(x)).collect())
            }),
            Guard::U32(g) => g.as_slice().map(Source::U32).unwrap_or_else(|_| {
                Source::Words(g.as_array().iter().map(|&x| u64::from(x)).collect())
            }),
        }
    }
}

/// Holds a 2-D unsigned array: the guard and (rows, K).
fn held<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<(Guard<'py>, usize, usize)> {
    let guard = if let Ok(a) = obj.downcast::<PyArrayDyn<u8>>() {
        Guard::U8(a.try_readonly().map_err(|e| value_error(e.to_string()))?)
    } else if let Ok(a) = obj.downcast::<PyArrayDyn<u16>>() {
        Guard::U16(a.try_readonly().map_err(|e| value_error(e.to_string()))?)
    } else if let Ok(a) = obj.downcast::<PyArrayDyn<u32>>() {
        Guard::U32(a.try_readonly().map_err(|e| value_error(e.to_string()))?)
    } else {
        return Err(value_error(format!(
            "{name} must be a numpy array of unsigned bit patterns (uint8, uint16, uint32)"
        )));
    };
    let (r, k) = match guard.shape() {
        [r, k] => (*r, *k),
        s => {
            return Err(value_error(format!(
                "{name} must be rows x K but has shape {s:?}"
            )))
        }
    };
    Ok((guard, r, k))
}

/// Integer values of `fmt` from an int8/uint8 matrix, each checked against the format's
/// range.
fn int_patterns(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    name: &str,
    fmt: IntFormat,
) -> PyResult<(usize, usize, Vec<u64>)> {
    let w = int_words(py, obj)?.ok_or_else(|| {
        value_error(format!(
            "{name} must be a numpy array of integers (int8 for signed formats, uint8 for unsigned)"
        ))
    })?;
    let (rows, k) = rows_by_k(&w, name)?;
    let mut out = Vec::with_capacity(w.words.len());
    for (i, &x) in w.words.iter().enumerate() {
        let v = x as i64;
        let p = fmt.encode(v).ok_or_else(|| {
            value_error(format!(
                "{name}[{}, {}] = {v} is out of range for {fmt} ({}..={})",
                i / k.max(1),
                i % k.max(1),
                fmt.min(),
                fmt.max()
            ))
        })?;
        out.push(p);
    }
    Ok((rows, k, out))
}

/// Integer batch (`s8`, `u8`, `s4`, `u4`): row `r` is the exact int32 dot product of
/// `tcrtl dot --format s8 ...` (wrapping, or clamping with `satfinite`). `a`, `b` int8 or
/// uint8 values, `c` int32. Returns D's int32 patterns and which rows left the int32 range.
#[pyfunction]
#[pyo3(signature = (a, b, c, *, fmt, fmt_b, out_fmt, rounding_name, width, satfinite))]
#[allow(clippy::too_many_arguments)]
pub fn dot_int_rows<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    c: &Bound<'py, PyAny>,
    fmt: &str,
    fmt_b: Option<&str>,
    out_fmt: &str,
    rounding_name: &str,
    width: Option<usize>,
    satfinite: bool,
) -> PyResult<Rows<'py>> {
    let names = ArithNames {
        format: fmt,
        format_b: fmt_b,
        acc: None,
        preset: None,
        gpu: None,
        instr: None,
    };
    let Some((fa, fb)) = names.int_formats().py()? else {
        return Err(value_error(format!("{fmt} is not an integer format")));
    };
    if !rounding_name.eq_ignore_ascii_case("rne") {
        return Err(value_error(
            "--rounding does not apply to integer formats (their sums are exact)",
        ));
    }
    if !out_fmt.eq_ignore_ascii_case("fp32") {
        return Err(value_error(format!(
            "--out-format {out_fmt} does not apply to integer formats: they accumulate into int32"
        )));
    }
    if let Some(w) = width {
        if !(1..=MAX_LANES).contains(&w) {
            return Err(value_error(format!(
                "--width {w} is out of range (1..={MAX_LANES})"
            )));
        }
    }
    let (rows, k, wa) = int_patterns(py, a, "A", fa)?;
    let (rows_b, k_b, wb) = int_patterns(py, b, "B", fb)?;
    if (rows, k) != (rows_b, k_b) {
        return Err(value_error(format!(
            "A is {rows} x {k} but B is {rows_b} x {k_b} (they must match)"
        )));
    }
    let cw = int_words(py, c)?.ok_or_else(|| value_error("C must be a numpy array of int32"))?;
    let c: Vec<i32> = row_c(cw, rows)?.into_iter().map(|w| w as i32).collect();
    let width = width.unwrap_or(k.clamp(1, MAX_LANES));
    let overflow = if satfinite {
        IntOverflow::SatFinite
    } else {
        IntOverflow::Wrap
    };
    let results: Vec<(u32, u8)> = py.allow_threads(|| {
        (0..rows)
            .into_par_iter()
            .map(|r| {
                let (lo, hi) = (r * k, (r + 1) * k);
                let d = dot_int(fa, fb, &wa[lo..hi], &wb[lo..hi], c[r], width, overflow);
                (d.bits(), u8::from(d.out_of_range))
            })
            .collect()
    });
    let (d, range): (Vec<u32>, Vec<u8>) = results.into_iter().unzip();
    Ok((PyArray1::from_vec(py, d), PyArray1::from_vec(py, range)))
}

/// Parses the mode of a block-scaled dot product (as `tcrtl dot`).
pub(crate) fn mx_mode(name: &str) -> PyResult<MxDotMode> {
    MxDotMode::ALL
        .into_iter()
        .find(|m| m.name().eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            value_error(format!(
                "block-scaled formats take --acc exact, fused or block-rz (got {name:?})"
            ))
        })
}

/// One operand of a block-scaled batch as a quantised tensor: element codes (rows x K; MXINT8
/// as int8 values or their bytes), scale codes (rows x blocks), NVFP4's tensor scale.
fn quantised(
    py: Python<'_>,
    fmt: BlockFormat,
    name: &str,
    elems: &Bound<'_, PyAny>,
    scales: &Bound<'_, PyAny>,
    tensor_scale: Option<u32>,
) -> PyResult<(usize, Quantised)> {
    let w = match int_words(py, elems)? {
        Some(w) => w,
        None => require_unsigned(py, elems, name)?,
    };
    let (rows, k) = rows_by_k(&w, name)?;
    let bits = fmt.element_bits();
    let mask = (1u64 << bits) - 1;
    let elements: Vec<u64> = match fmt.element() {
        // MXINT8 codes are two's-complement bytes: an int8 value or its uint8 pattern.
        Element::Int8 => w.words.iter().map(|&x| x & mask).collect(),
        Element::Float(f) => {
            if let Some(i) = w.words.iter().position(|&x| x & !f.mask() != 0) {
                return Err(value_error(format!(
                    "{name}[{}, {}] = {:#x} is not a {f} code ({} bits)",
                    i / k.max(1),
                    i % k.max(1),
                    w.words[i],
                    f.width()
                )));
            }
            w.words
        }
    };
    let blocks = k.div_ceil(fmt.block_size());
    let sname = format!("{}_scales", name.to_ascii_lowercase());
    let s = require_unsigned(py, scales, &sname)?;
    if s.shape != [rows, blocks] {
        return Err(value_error(format!(
            "{sname}: {k} elements of {fmt} make {blocks} block(s) of {} per row, so shape \
             ({rows}, {blocks}), not {:?}",
            fmt.block_size(),
            s.shape
        )));
    }
    for &code in &s.words {
        if fmt == BlockFormat::NvFp4 && code & 0x80 != 0 {
            return Err(value_error(format!(
                "NVFP4 scale {code:#04x} has its sign bit set; NVFP4 block scales are \
                 unsigned E4M3 (UE4M3, as in PTX)"
            )));
        }
        if code > 0xFF {
            return Err(value_error(format!(
                "bad E8M0 scale {code:#x} (expected 0x00..0xff)"
            )));
        }
    }
    let tensor_scale = match (fmt, tensor_scale) {
        (BlockFormat::NvFp4, Some(t)) => Some(t),
        (BlockFormat::NvFp4, None) => Some(0x3F80_0000),
        (_, Some(_)) => {
            return Err(value_error(format!(
                "--{}-tensor-scale applies to nvfp4 only ({fmt} has none)",
                name.to_ascii_lowercase()
            )))
        }
        (_, None) => None,
    };
    Ok((
        rows,
        Quantised {
            format: fmt,
            row_len: k,
            elements,
            scales: s.words,
            tensor_scale,
        },
    ))
}

/// Block-scaled batch (MX, NVFP4): row `r` is the MX dot product of
/// `tcrtl dot --format mxfp8e4m3 --a-scales ... --b-scales ...` over row `r` of A and B with
/// their block scales; FP32 C and D. Returns D's patterns and each row's flags.
#[pyfunction]
#[pyo3(signature = (a, b, c, a_scales, b_scales, a_tensor_scale, b_tensor_scale, *, fmt, fmt_b, acc, refused))]
#[allow(clippy::too_many_arguments)]
pub fn dot_block<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    c: &Bound<'py, PyAny>,
    a_scales: &Bound<'py, PyAny>,
    b_scales: &Bound<'py, PyAny>,
    a_tensor_scale: Option<u32>,
    b_tensor_scale: Option<u32>,
    fmt: &str,
    fmt_b: Option<&str>,
    acc: &str,
    refused: Option<&str>,
) -> PyResult<Rows<'py>> {
    let fa = BlockFormat::by_name(fmt)
        .ok_or_else(|| value_error(format!("{fmt} is not a block-scaled format")))?;
    let fb = match fmt_b {
        Some(n) => BlockFormat::by_name(n).ok_or_else(|| {
            value_error("a block-scaled format pairs only with another block-scaled format")
        })?,
        None => fa,
    };
    if let Some(what) = refused {
        return Err(value_error(format!(
            "{what} does not apply to block-scaled formats (FP32 output, the mode's own \
             rounding, one row of operands)"
        )));
    }
    let mode = mx_mode(acc)?;
    let (rows, qa) = quantised(py, fa, "A", a, a_scales, a_tensor_scale)?;
    let (rows_b, qb) = quantised(py, fb, "B", b, b_scales, b_tensor_scale)?;
    if (rows, qa.row_len) != (rows_b, qb.row_len) {
        return Err(value_error(format!(
            "A is {rows} x {} but B is {rows_b} x {} (they must match)",
            qa.row_len, qb.row_len
        )));
    }
    let c: Vec<u32> = row_c(require_unsigned(py, c, "C")?, rows)?
        .into_iter()
        .map(|w| w as u32)
        .collect();
    let results: Result<Vec<(u32, u8)>, String> = py.allow_threads(|| {
        (0..rows)
            .into_par_iter()
            .map(|r| {
                mx_dot(&qa, r, &qb, r, c[r], mode)
                    .map(|d| (d.bits as u32, d.flags.to_bits()))
                    .map_err(|e| e.to_string())
            })
            .collect()
    });
    let (d, flags): (Vec<u32>, Vec<u8>) = results.py()?.into_iter().unzip();
    Ok((PyArray1::from_vec(py, d), PyArray1::from_vec(py, flags)))
}
