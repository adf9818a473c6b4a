//! `gemm` (the clocked tensor core, `tcrtl gemm`) and `matmul` (the functional model): the
//! problem is the library's job (`job::GemmJob`, which `tcrtl gemm` builds too) from
//! numpy operands or a seeded random or generated one (dense; 2:4 sparse from a dense A that
//! satisfies 2:4, a pre-compressed A or a random one; or block-scaled from codes and scales),
//! run by the library's job entry (`job::run`, whose report becomes the result dict in
//! one place, [`crate::report`]) or its functional models (`gemm::run_functional`;
//! `MxGemm::functional` and `MxGemm::reference` for block formats).

use crate::arrays::{int_words, require_unsigned, unsigned_words, Words};
use crate::dot::mx_mode;
use crate::errors::{os_error, value_error, IntoPy};
use crate::report::report_dict;
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tensorcore_rtl::gemm::mx_input::{self, Codes};
use tensorcore_rtl::gemm::promote::run_functional_promoted;
use tensorcore_rtl::gemm::{run_functional, CoreConfig, MxOperand, MxOptions};
use tensorcore_rtl::hw::{Dataflow, MemPortConfig, MxSpec};
use tensorcore_rtl::io::arith::ArithNames;
use tensorcore_rtl::io::values::acc_format;
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::job::pattern::Pattern;
use tensorcore_rtl::job::RunReport;
use tensorcore_rtl::job::{self, GemmJob, JobArith, JobError, JobProblem, Operands};
use tensorcore_rtl::numerics::convert::tf32_from_container;
use tensorcore_rtl::numerics::format::{Format, TF32};
use tensorcore_rtl::numerics::mx::BlockFormat;
use tensorcore_rtl::numerics::mx_dot::MxDotMode;
use tensorcore_rtl::numerics::Flags;
use tensorcore_rtl::rtl::TraceConfig;
use tensorcore_rtl::sparse::input::{self, CompressedInput, CompressedOperand};
use tensorcore_rtl::sparse::Prune;

/// A matrix operand of `fmt` as the job takes it (TF32 from its FP32 containers; the job
/// checks every pattern).
fn matrix(w: Words, name: &str, fmt: Format) -> PyResult<Codes> {
    let (r, c) = match w.shape.as_slice() {
        [r, c] => (*r, *c),
        s => {
            return Err(value_error(format!(
                "{name} must be a matrix but has shape {s:?}"
            )))
        }
    };
    let mut codes = w.words;
    if fmt == TF32 {
        for (i, x) in codes.iter_mut().enumerate() {
            *x = u32::try_from(*x)
                .ok()
                .and_then(tf32_from_container)
                .ok_or_else(|| {
                    value_error(format!(
                        "{name}[{}, {}] = {x:#x} is not a {fmt} bit pattern",
                        i / c.max(1),
                        i % c.max(1)
                    ))
                })?;
        }
    }
    Ok(Codes {
        rows: r,
        cols: c,
        codes,
    })
}

/// An operand array of `fmt` (unsigned bit patterns).
fn operand(py: Python<'_>, x: &Bound<'_, PyAny>, name: &str, fmt: Format) -> PyResult<Codes> {
    matrix(require_unsigned(py, x, name)?, name, fmt)
}

/// C's accumulator patterns as given (the job checks its shape), or `None` for zeros.
fn c_matrix(py: Python<'_>, c: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Codes>> {
    let Some(c) = c else {
        return Ok(None);
    };
    let w = require_unsigned(py, c, "C")?;
    match w.shape.as_slice() {
        [rows, cols] => Ok(Some(Codes {
            rows: *rows,
            cols: *cols,
            codes: w.words,
        })),
        s => Err(value_error(format!(
            "C must be a matrix but has shape {s:?}"
        ))),
    }
}

/// A job's error as a Python exception: a message about one array starts with its argument's
/// name (where the command line names its file).
fn job_error(e: JobError) -> PyErr {
    let name = match &e {
        JobError::Compressed(c) => c.operand.map(|op| match op {
            CompressedOperand::Values => "a_values",
            CompressedOperand::Meta => "a_meta",
        }),
        JobError::Mx(m) => m.operand.map(|op| match op {
            MxOperand::A => "a",
            MxOperand::B => "b",
            MxOperand::AScales => "a_scales",
            MxOperand::BScales => "b_scales",
        }),
        _ => None,
    };
    match name {
        Some(n) => value_error(format!("{n}: {e}")),
        None => value_error(e.to_string()),
    }
}

/// A matrix argument of a compressed A, `(rows, cols)`, refused with the command line's
/// messages for its file (`name` in place of the path): not two-dimensional, or empty.
fn compressed_shape(shape: &[usize], name: &str) -> PyResult<(usize, usize)> {
    match shape {
        [r, c] if *r > 0 && *c > 0 => Ok((*r, *c)),
        [_, _] => Err(value_error(format!(
            "{name}: empty matrix of shape {shape:?}"
        ))),
        s => Err(value_error(format!(
            "{name}: expected a 2-D array, found shape {}",
            tensorcore_rtl::io::npy::shape_text(s)
        ))),
    }
}

/// A pre-compressed A (as `tcrtl gemm --sparse --a-values V.npy --a-meta M.npy`) as the job
/// takes it: `values` (m x K/2 bit patterns of A's format; TF32 as FP32 containers) and
/// `meta` (m x K/4 `uint8` nibbles), whose every value and nibble the job checks
/// (`sparse::input`).
fn compressed_input(
    py: Python<'_>,
    fmt: Format,
    values: &Bound<'_, PyAny>,
    meta: &Bound<'_, PyAny>,
) -> PyResult<CompressedInput> {
    let v = require_unsigned(py, values, "a_values")?;
    let (m, kept) = compressed_shape(&v.shape, "a_values")?;
    // TF32 values come in FP32 containers: narrowed where they are TF32 patterns (any other
    // word is left as it is, for the library to refuse as not a tf32 bit pattern).
    let codes = if fmt == TF32 {
        v.words
            .into_iter()
            .map(|x| {
                u32::try_from(x)
                    .ok()
                    .and_then(tf32_from_container)
                    .unwrap_or(x)
            })
            .collect()
    } else {
        v.words
    };
    // The metadata's shape, then its element type (one nibble a byte), then its bytes.
    let shape: Vec<usize> = meta.getattr("shape")?.extract()?;
    let meta_shape = compressed_shape(&shape, "a_meta")?;
    let dtype: String = meta.getattr("dtype")?.getattr("name")?.extract()?;
    input::meta_dtype(&dtype).map_err(|e| value_error(format!("a_meta: {e}")))?;
    let meta_words = require_unsigned(py, meta, "a_meta")?;
    Ok(CompressedInput {
        fmt,
        values: Codes {
            rows: m,
            cols: kept,
            codes,
        },
        meta_shape,
        // uint8 (checked above): every word is a byte.
        meta: meta_words.words.into_iter().map(|x| x as u8).collect(),
    })
}

/// Builds the job's problem.
fn build(job: &GemmJob) -> PyResult<JobProblem> {
    job.build().map_err(job_error)
}

/// Builds and runs the job (its waveform, a VCD at `vcd`, its path checked first), with the
/// GIL released.
fn run_job(py: Python<'_>, mut job: GemmJob, vcd: Option<&str>) -> PyResult<RunReport> {
    if let Some(p) = vcd {
        OutputPlan::new()
            .add_trace("--vcd", std::path::Path::new(p))
            .map_err(os_error)?;
    }
    job.trace = vcd.map(TraceConfig::vcd);
    let problem = build(&job)?;
    py.allow_threads(|| job::run(&job, &problem))
        .map_err(job_error)
}

/// `matmul`: D = A x B + C by the functional model, every element the whole-K dot product of
/// `dot` (C first, k ascending, `width` products a step; for `dataflow="ws"` and `"is"` the
/// weight-stationary order with `rows` PE rows). Returns D's patterns (m x n, row-major) and
/// the OR of every element's flags.
#[pyfunction]
#[pyo3(signature = (a, b, c=None, *, fmt="fp16", fmt_b=None, acc=None, preset=None, out_fmt="fp32", width=1, rows=4, cols=4, dataflow="os", satfinite=false, promote_every=None))]
#[allow(clippy::too_many_arguments)]
pub fn matmul_bits<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    c: Option<&Bound<'py, PyAny>>,
    fmt: &str,
    fmt_b: Option<&str>,
    acc: Option<&str>,
    preset: Option<&str>,
    out_fmt: &str,
    width: usize,
    rows: usize,
    cols: usize,
    dataflow: &str,
    satfinite: bool,
    promote_every: Option<usize>,
) -> PyResult<(Bound<'py, PyArray1<u32>>, u8, usize, usize)> {
    let arith = config(
        fmt, fmt_b, acc, preset, out_fmt, width, rows, cols, dataflow, false, satfinite,
    )?;
    let operands = Operands::Given {
        a: operand(py, a, "A", arith.cfg.fmt_a)?,
        b: operand(py, b, "B", arith.cfg.fmt_b)?,
        c: c_matrix(py, c)?,
    };
    let problem = build(&GemmJob::new(arith.cfg, operands))?;
    let g = problem
        .dense()
        .ok_or_else(|| value_error("not a dense problem"))?;
    // With `promote_every`, the functional model promoted to FP32 every N products.
    let out = match promote_every {
        Some(n) => py
            .allow_threads(|| run_functional_promoted(g, n))
            .map_err(|e| value_error(e.to_string()))?,
        None => py.allow_threads(|| run_functional(g)).py()?,
    };
    Ok((PyArray1::from_vec(py, out.d), out.flags.to_bits(), g.m, g.n))
}

/// The core configuration the names give (as `tcrtl gemm`): formats, mode, accumulator,
/// width, array and dataflow, with the preset and GPU rule. On the clocked core (`datapath`)
/// the library's job arithmetic (`job::arith`: no `exact`, integer formats into int32);
/// for the functional model also `exact`.
#[allow(clippy::too_many_arguments)]
fn config(
    fmt: &str,
    fmt_b: Option<&str>,
    acc: Option<&str>,
    preset: Option<&str>,
    out_fmt: &str,
    width: usize,
    rows: usize,
    cols: usize,
    dataflow: &str,
    datapath: bool,
    satfinite: bool,
) -> PyResult<JobArith> {
    let names = ArithNames {
        format: fmt,
        format_b: fmt_b,
        acc,
        preset,
        gpu: None,
        instr: None,
    };
    let df = dataflow_by_name(dataflow)?;
    let integer = names.int_formats().py()?.is_some();
    let arith = if datapath || integer || satfinite {
        job::arith(&names, out_fmt, width, satfinite).map_err(job_error)?
    } else {
        let accf = acc_format(out_fmt).py()?;
        let a = names.resolve_acc(accf).py()?;
        JobArith {
            cfg: CoreConfig::new(a.fmt_a, a.fmt_b, a.mode, width).with_acc(accf),
            preset: a.preset,
            rule: a.rule,
        }
    };
    Ok(JobArith {
        cfg: job::on_array(arith.cfg, rows, cols, df).map_err(job_error)?,
        ..arith
    })
}

/// The memory path `memory` names (`ideal` or `tma`, with `stages` and `swizzle`; the
/// library's `job::memory_port`).
fn memory_config(
    memory: &str,
    stages: Option<usize>,
    swizzle: bool,
) -> PyResult<Option<MemPortConfig>> {
    let tma = match memory.to_ascii_lowercase().as_str() {
        "tma" => true,
        "ideal" => false,
        other => {
            return Err(value_error(format!(
                "unknown memory path {other:?} (expected ideal or tma)"
            )))
        }
    };
    job::memory_port(tma, stages, swizzle).map_err(job_error)
}

/// `gemm`: D = A x B + C on the clocked tensor core (as `tcrtl gemm`), from numpy operands or
/// a seeded random or generated problem (`m`, `n`, `k`, `seed`, `pattern`), dense or 2:4
/// sparse (a numpy A that satisfies 2:4, compressed by the library; a pre-compressed A,
/// `a_values` and `a_meta`, as `--a-values`/`--a-meta`; or random), on the ideal operand
/// store or through the TMA memory path (`memory="tma"`), with an optional VCD waveform.
/// Returns the run's report as a dict (the keys and values of the command line's JSON, and
/// `d`, D's patterns, row-major).
#[pyfunction]
#[pyo3(signature = (a=None, b=None, c=None, *, m=None, n=None, k=None, seed=1, pattern="random", fmt="fp16", fmt_b=None, acc=None, preset=None, out_fmt="fp32", width=1, rows=4, cols=4, dataflow="os", memory="ideal", stages=None, swizzle=true, sparse=false, prune=false, a_values=None, a_meta=None, vcd=None, check=false, satfinite=false))]
#[allow(clippy::too_many_arguments)]
pub fn gemm_run<'py>(
    py: Python<'py>,
    a: Option<&Bound<'py, PyAny>>,
    b: Option<&Bound<'py, PyAny>>,
    c: Option<&Bound<'py, PyAny>>,
    m: Option<usize>,
    n: Option<usize>,
    k: Option<usize>,
    seed: u64,
    pattern: &str,
    fmt: &str,
    fmt_b: Option<&str>,
    acc: Option<&str>,
    preset: Option<&str>,
    out_fmt: &str,
    width: usize,
    rows: usize,
    cols: usize,
    dataflow: &str,
    memory: &str,
    stages: Option<usize>,
    swizzle: bool,
    sparse: bool,
    prune: bool,
    a_values: Option<&Bound<'py, PyAny>>,
    a_meta: Option<&Bound<'py, PyAny>>,
    vcd: Option<&str>,
    check: bool,
    satfinite: bool,
) -> PyResult<Bound<'py, PyDict>> {
    if prune && !sparse {
        return Err(value_error(
            "prune applies to 2:4 sparse problems (with sparse=True)",
        ));
    }
    let arith = config(
        fmt, fmt_b, acc, preset, out_fmt, width, rows, cols, dataflow, true, satfinite,
    )?;
    let cfg = arith.cfg;
    let memory = memory_config(memory, stages, swizzle)?;
    let pattern = Pattern::by_name(pattern).ok_or_else(|| {
        value_error(format!(
            "unknown pattern {pattern:?} (expected random, ones, iota or identity)"
        ))
    })?;
    let compressed = a_values.is_some() || a_meta.is_some();
    let operands = match (a, b, m, n, k) {
        _ if compressed => match (a, a_values, a_meta, b, m) {
            (None, Some(v), Some(md), Some(b), None) => Operands::Compressed {
                a: compressed_input(py, cfg.fmt_a, v, md)?,
                b: operand(py, b, "B", cfg.fmt_b)?,
                c: c_matrix(py, c)?,
            },
            (None, Some(_), Some(_), None, None) => {
                return Err(value_error("a compressed A needs b, the B operand"))
            }
            _ => {
                return Err(value_error(
                    "give a, or a_values and a_meta (a compressed A), with b",
                ))
            }
        },
        (Some(a), Some(b), None, None, None) => Operands::Given {
            a: operand(py, a, "A", cfg.fmt_a)?,
            b: operand(py, b, "B", cfg.fmt_b)?,
            c: c_matrix(py, c)?,
        },
        (None, None, Some(m), Some(n), Some(k)) => Operands::Generated {
            m,
            n,
            k,
            seed,
            pattern,
        },
        _ => return Err(value_error("give a and b, or m, n and k")),
    };
    let job = GemmJob {
        preset: arith.preset,
        rule: arith.rule,
        sparse: sparse.then_some(if prune {
            Prune::KeepLargest
        } else {
            Prune::Off
        }),
        memory,
        check,
        ..GemmJob::new(cfg, operands)
    };
    let report = run_job(py, job, vcd)?;
    report_dict(py, &report)
}

/// Element or scale codes of a block-scaled GEMM: a matrix of unsigned codes (or, for
/// MXINT8 elements, int8 values: their two's-complement bytes).
fn codes(py: Python<'_>, obj: &Bound<'_, PyAny>, name: &str, signed_ok: bool) -> PyResult<Codes> {
    let w = match unsigned_words(py, obj)? {
        Some(w) => w,
        None if signed_ok => match int_words(py, obj)? {
            Some(w) => Words {
                shape: w.shape,
                words: w.words.into_iter().map(|x| x & 0xFF).collect(),
            },
            None => require_unsigned(py, obj, name)?,
        },
        None => require_unsigned(py, obj, name)?,
    };
    match w.shape.as_slice() {
        [rows, cols] => Ok(Codes {
            rows: *rows,
            cols: *cols,
            codes: w.words,
        }),
        s => Err(value_error(format!(
            "{name} must be a matrix but has shape {s:?}"
        ))),
    }
}

/// A required array of a block-scaled GEMM (`flag`: the command line's option for it).
fn need<'a, 'py>(x: Option<&'a Bound<'py, PyAny>>, flag: &str) -> PyResult<&'a Bound<'py, PyAny>> {
    x.ok_or_else(|| value_error(mx_input::missing(flag).to_string()))
}

/// The block-scaled operands of the arrays, for the job to check (`gemm::mx_input`, the
/// command line's checks and messages; a message about one array starts with its argument's
/// name where the command line names its file).
fn mx_operands(
    py: Python<'_>,
    spec: MxSpec,
    arrays: [Option<&Bound<'_, PyAny>>; 4],
    c: Option<&Bound<'_, PyAny>>,
) -> PyResult<Operands> {
    let [a, b, sa, sb] = arrays;
    let (a, b) = (need(a, "--a")?, need(b, "--b")?);
    let (sa, sb) = (need(sa, "--a-scales")?, need(sb, "--b-scales")?);
    let int8 = spec.int8();
    Ok(Operands::Mx {
        spec,
        a: codes(py, a, "A", int8)?,
        b: codes(py, b, "B", int8)?,
        a_scales: codes(py, sa, "a_scales", false)?,
        b_scales: codes(py, sb, "b_scales", false)?,
        c: c_matrix(py, c)?,
    })
}

/// The block format `fmt` names, or the command line's refusal of block scales with a format
/// that is not block-scaled.
fn block_format(fmt: &str) -> PyResult<BlockFormat> {
    BlockFormat::by_name(fmt)
        .ok_or_else(|| value_error(mx_input::scales_need_block_format(fmt).to_string()))
}

/// The dataflow `name` names (`os`, `ws`, `is`; `Dataflow::choices`).
pub(crate) fn dataflow_by_name(name: &str) -> PyResult<Dataflow> {
    Dataflow::by_name(&name.to_ascii_lowercase()).ok_or_else(|| {
        value_error(format!(
            "unknown dataflow {name:?} (expected {})",
            Dataflow::choices()
        ))
    })
}

/// B's block format, the spec (formats and FP32 tensor scales) and the core of a
/// block-scaled problem, checked by the library in the command line's order (`gemm::mx_input`:
/// B's format, the pairing and tensor scales, the array, the width).
fn mx_core(
    fa: BlockFormat,
    fmt_b: Option<&str>,
    [a_tensor, b_tensor]: [Option<u32>; 2],
    width: usize,
    (rows, cols): (usize, usize),
    df: Dataflow,
) -> PyResult<(BlockFormat, MxSpec, CoreConfig)> {
    let fb = mx_input::format_b(fa, fmt_b).py()?;
    let spec = mx_input::spec(fa, fb, a_tensor, b_tensor).py()?;
    let cfg = mx_input::core_config(&spec, width)
        .with_array(rows, cols)
        .map(|c| c.with_dataflow(df))
        .map_err(|e| value_error(format!("--rows {rows} --cols {cols}: {e}")))?;
    mx_input::check_width(&spec, width).py()?;
    Ok((fb, spec, cfg))
}

/// `matmul` with a block-scaled format: D = A x B + C by the functional model of a
/// block-scaled GEMM (`MxGemm`), from the arrays `gemm` takes (element codes `a` m x k and
/// `b` k x n, scale codes `a_scales` m x k/bs and `b_scales` k/bs x n, NVFP4's FP32 tensor
/// scales as bits, C FP32 patterns or zeros), checked by the library as `tcrtl gemm --format
/// mxfp8e4m3 ...` checks them. Element (i, j) is `mx_dot` of row i of A and column j of B
/// into C[i, j]: in `fused` mode (`acc` left out or `"fused"`; one rounding per K-block, the
/// bits of the clocked core) in the order of the dataflow (`ws`, and `is` in ws's order:
/// folds of `rows` K-blocks, `width` the block size, as the core), or for `dataflow="os"` in
/// `exact` or `block-rz` mode (the modes `dot` offers). Returns D's FP32 patterns (m x n, row-major), the OR of every
/// element's flags, m and n.
#[pyfunction]
#[pyo3(signature = (a=None, b=None, c=None, a_scales=None, b_scales=None, a_tensor_scale=None, b_tensor_scale=None, *, fmt, fmt_b=None, acc=None, preset=None, out_fmt="fp32", width=1, rows=4, cols=4, dataflow="os", satfinite=false))]
#[allow(clippy::too_many_arguments)]
pub fn matmul_mx<'py>(
    py: Python<'py>,
    a: Option<&Bound<'py, PyAny>>,
    b: Option<&Bound<'py, PyAny>>,
    c: Option<&Bound<'py, PyAny>>,
    a_scales: Option<&Bound<'py, PyAny>>,
    b_scales: Option<&Bound<'py, PyAny>>,
    a_tensor_scale: Option<u32>,
    b_tensor_scale: Option<u32>,
    fmt: &str,
    fmt_b: Option<&str>,
    acc: Option<&str>,
    preset: Option<&str>,
    out_fmt: &str,
    width: usize,
    rows: usize,
    cols: usize,
    dataflow: &str,
    satfinite: bool,
) -> PyResult<(Bound<'py, PyArray1<u32>>, u8, usize, usize)> {
    let fa = block_format(fmt)?;
    let df = dataflow_by_name(dataflow)?;
    // The options no block-scaled product takes, refused as `tcrtl gemm` refuses them; the
    // mode is `dot`'s (exact, fused, block-rz), fused when left out as on the core.
    MxOptions {
        acc: None,
        preset: preset.is_some(),
        satfinite,
        out_format: out_fmt,
        ..MxOptions::default()
    }
    .check()
    .py()?;
    let mode = match acc {
        Some(name) => mx_mode(name)?,
        None => MxDotMode::Fused,
    };
    let (_, spec, cfg) = mx_core(
        fa,
        fmt_b,
        [a_tensor_scale, b_tensor_scale],
        width,
        (rows, cols),
        df,
    )?;
    // The stationary dataflows (ws, and is in ws's order) take the fused datapath's order
    // and the core's width rule.
    if df.folds_k() {
        if mode != MxDotMode::Fused {
            return Err(value_error(format!(
                "--acc {}: the weight-stationary order (dataflow {df}) is the fused MX \
                 datapath's (give --acc fused or leave it out)",
                mode.name()
            )));
        }
        spec.check_ws_width(width).py()?;
    }
    let operands = mx_operands(py, spec, [a, b, a_scales, b_scales], c)?;
    let JobProblem::Mx(g) = build(&GemmJob::new(cfg, operands))? else {
        return Err(value_error("not a block-scaled problem"));
    };
    let d = py
        .allow_threads(|| match df {
            Dataflow::Os => g.reference(mode),
            Dataflow::Ws | Dataflow::Is => g.functional(),
        })
        .py()?;
    let flags = d.iter().fold(Flags::NONE, |mut f, r| {
        f |= r.flags;
        f
    });
    let bits: Vec<u32> = d.iter().map(|r| r.bits as u32).collect();
    Ok((PyArray1::from_vec(py, bits), flags.to_bits(), g.m, g.n))
}

/// `gemm` with a block-scaled format (`tcrtl gemm --format mxfp8e4m3 --a A.npy --b B.npy
/// --a-scales SA.npy --b-scales SB.npy ...`): element codes `a` (m x k) and `b` (k x n),
/// scale codes `a_scales` (m x k/bs) and `b_scales` (k/bs x n), FP32 tensor scales (bits,
/// NVFP4), C FP32 patterns or zeros; the core in MX mode (fused), on the ideal store, output-
/// or weight-stationary (the input-stationary core refuses it with the library's message), or
/// through the TMA memory path. The options MX does not take are refused with
/// the command line's messages. Returns the run's report as a dict (the keys and values of
/// the command line's JSON, and `d`).
#[pyfunction]
#[pyo3(signature = (a=None, b=None, c=None, a_scales=None, b_scales=None, a_tensor_scale=None, b_tensor_scale=None, *, fmt, fmt_b=None, acc=None, preset=None, out_fmt="fp32", width=1, rows=4, cols=4, dataflow="os", memory="ideal", stages=None, swizzle=true, sparse=false, random=false, vcd=None, check=false, satfinite=false))]
#[allow(clippy::too_many_arguments)]
pub fn gemm_mx<'py>(
    py: Python<'py>,
    a: Option<&Bound<'py, PyAny>>,
    b: Option<&Bound<'py, PyAny>>,
    c: Option<&Bound<'py, PyAny>>,
    a_scales: Option<&Bound<'py, PyAny>>,
    b_scales: Option<&Bound<'py, PyAny>>,
    a_tensor_scale: Option<u32>,
    b_tensor_scale: Option<u32>,
    fmt: &str,
    fmt_b: Option<&str>,
    acc: Option<&str>,
    preset: Option<&str>,
    out_fmt: &str,
    width: usize,
    rows: usize,
    cols: usize,
    dataflow: &str,
    memory: &str,
    stages: Option<usize>,
    swizzle: bool,
    sparse: bool,
    random: bool,
    vcd: Option<&str>,
    check: bool,
    satfinite: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let fa = block_format(fmt)?;
    let df = dataflow_by_name(dataflow)?;
    match memory.to_ascii_lowercase().as_str() {
        "tma" | "ideal" => {}
        other => {
            return Err(value_error(format!(
                "unknown memory path {other:?} (expected ideal or tma)"
            )))
        }
    }
    MxOptions {
        acc,
        preset: preset.is_some(),
        random,
        sparse,
        memh: false,
        satfinite,
        out_format: out_fmt,
    }
    .check()
    .py()?;
    // The memory path (os or ws), or the ideal path's refusal of memory options.
    let mem_cfg = memory_config(memory, stages, swizzle)?;
    let (_, spec, cfg) = mx_core(
        fa,
        fmt_b,
        [a_tensor_scale, b_tensor_scale],
        width,
        (rows, cols),
        df,
    )?;
    let job = GemmJob {
        memory: mem_cfg,
        check,
        ..GemmJob::new(cfg, mx_operands(py, spec, [a, b, a_scales, b_scales], c)?)
    };
    let report = run_job(py, job, vcd)?;
    report_dict(py, &report)
}
