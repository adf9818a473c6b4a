//! `gemm` (the clocked tensor core, `tcrtl gemm`) and `matmul` (the functional model): the
//! problem built from numpy operands or a seeded random one (dense; 2:4 sparse from a dense A
//! that satisfies 2:4, a pre-compressed A or a random one; or block-scaled from codes and
//! scales), run by the library's one GEMM entry (`gemm::run`) or its functional models
//! (`gemm::run_functional`; `MxGemm::functional` and `MxGemm::reference` for block formats).

use crate::arrays::{int_words, require_unsigned, unsigned_words, Words};
use crate::dot::mx_mode;
use crate::errors::{os_error, value_error, IntoPy};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tensorcore_rtl::gemm::mx_input::{self, check_fused, Codes};
use tensorcore_rtl::gemm::problem::check_size;
use tensorcore_rtl::gemm::promote::run_functional_promoted;
use tensorcore_rtl::gemm::{
    self, run_functional, CoreConfig, Gemm, GemmRun, MemRun, MxGemm, MxInput, MxOperand, MxOptions,
    Problem,
};
use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::{Dataflow, MemPortConfig, MxSpec};
use tensorcore_rtl::io::arith::ArithNames;
use tensorcore_rtl::io::values::acc_format;
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::numerics::convert::tf32_from_container;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::{Format, TF32};
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow};
use tensorcore_rtl::numerics::mx::BlockFormat;
use tensorcore_rtl::numerics::mx_dot::MxDotMode;
use tensorcore_rtl::numerics::Flags;
use tensorcore_rtl::rtl::TraceConfig;
use tensorcore_rtl::sparse::input::{
    self, CompressedInput, CompressedInputError, CompressedOperand,
};
use tensorcore_rtl::sparse::{check_b_bus, compress, Prune, SparseGemm};
use tensorcore_rtl::verify::{self, gemm_ref::mismatches};

/// A matrix operand of `fmt`: (rows, cols, patterns), each pattern checked.
fn matrix(w: Words, name: &str, fmt: Format) -> PyResult<(usize, usize, Vec<u64>)> {
    let (r, c) = match w.shape.as_slice() {
        [r, c] => (*r, *c),
        s => {
            return Err(value_error(format!(
                "{name} must be a matrix but has shape {s:?}"
            )))
        }
    };
    let mut out = w.words;
    for (i, x) in out.iter_mut().enumerate() {
        let ok = if fmt == TF32 {
            u32::try_from(*x).ok().and_then(tf32_from_container)
        } else if *x & !fmt.mask() == 0 {
            Some(*x)
        } else {
            None
        };
        *x = ok.ok_or_else(|| {
            value_error(format!(
                "{name}[{}, {}] = {x:#x} is not a {fmt} bit pattern",
                i / c.max(1),
                i % c.max(1)
            ))
        })?;
    }
    Ok((r, c, out))
}

/// C's accumulator patterns (`m x n`), or zeros.
fn c_words(py: Python<'_>, c: Option<&Bound<'_, PyAny>>, m: usize, n: usize) -> PyResult<Vec<u32>> {
    match c {
        Some(c) => {
            let w = require_unsigned(py, c, "C")?;
            if w.shape != [m, n] {
                return Err(value_error(format!(
                    "C must be {m} x {n} (as D) but has shape {:?}",
                    w.shape
                )));
            }
            Ok(w.words.into_iter().map(|x| x as u32).collect())
        }
        None => Ok(vec![0; m * n]),
    }
}

/// The sparse problem of a dense `a` that satisfies 2:4 (compressed by the library as
/// `tcrtl gemm --sparse --a A.npy` does; with `prune`, groups of more than two nonzeros keep
/// their two largest magnitudes), `b` and `c`.
fn sparse_from_arrays(
    py: Python<'_>,
    cfg: CoreConfig,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    c: Option<&Bound<'_, PyAny>>,
    prune: bool,
) -> PyResult<SparseGemm> {
    let (m, k, av) = matrix(require_unsigned(py, a, "A")?, "A", cfg.fmt_a)?;
    let prune = if prune {
        Prune::KeepLargest
    } else {
        Prune::Off
    };
    let ca = compress(cfg.fmt_a, m, k, &av, prune).py()?;
    let (kb, n, bv) = matrix(require_unsigned(py, b, "B")?, "B", cfg.fmt_b)?;
    if kb != k {
        return Err(value_error(format!(
            "inner dimensions differ: A is {m} x {k} but B is {kb} x {n}"
        )));
    }
    let cv = c_words(py, c, m, n)?;
    SparseGemm::new(cfg, ca, n, bv, cv).py()
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

/// The sparse problem of a pre-compressed A (as `tcrtl gemm --sparse --a-values V.npy
/// --a-meta M.npy --b B.npy`): `values` (m x K/2 bit patterns of A's format; TF32 as FP32
/// containers) and `meta` (m x K/4 `uint8` nibbles) checked by the library
/// (`sparse::input`, then `Compressed::new`: every value and nibble), then B and C. A message
/// about one matrix starts with its argument's name where the command line names its file.
fn sparse_from_compressed(
    py: Python<'_>,
    cfg: CoreConfig,
    values: &Bound<'_, PyAny>,
    meta: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    c: Option<&Bound<'_, PyAny>>,
) -> PyResult<SparseGemm> {
    let v = require_unsigned(py, values, "a_values")?;
    let (m, kept) = compressed_shape(&v.shape, "a_values")?;
    // TF32 values come in FP32 containers: narrowed where they are TF32 patterns (any other
    // word is left as it is, for the library to refuse as not a tf32 bit pattern).
    let codes = if cfg.fmt_a == TF32 {
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
    let named = |e: CompressedInputError| match e.operand {
        Some(CompressedOperand::Values) => value_error(format!("a_values: {e}")),
        Some(CompressedOperand::Meta) => value_error(format!("a_meta: {e}")),
        None => value_error(e.to_string()),
    };
    // The metadata's shape, then its element type (one nibble a byte), then its bytes.
    let shape: Vec<usize> = meta.getattr("shape")?.extract()?;
    let meta_shape = compressed_shape(&shape, "a_meta")?;
    let dtype: String = meta.getattr("dtype")?.getattr("name")?.extract()?;
    input::meta_dtype(&dtype).map_err(named)?;
    let meta_words = require_unsigned(py, meta, "a_meta")?;
    let ca = CompressedInput {
        fmt: cfg.fmt_a,
        values: Codes {
            rows: m,
            cols: kept,
            codes,
        },
        meta_shape,
        // uint8 (checked above): every word is a byte.
        meta: meta_words.words.into_iter().map(|x| x as u8).collect(),
    }
    .build()
    .map_err(named)?
    .py()?;
    let k = ca.k();
    let (kb, n, bv) = matrix(require_unsigned(py, b, "B")?, "B", cfg.fmt_b)?;
    if kb != k {
        return Err(value_error(format!(
            "inner dimensions differ: A is {m} x {k} but B is {kb} x {n}"
        )));
    }
    let cv = c_words(py, c, m, n)?;
    SparseGemm::new(cfg, ca, n, bv, cv).py()
}

/// The dense problem of `a`, `b`, `c` (bit patterns; C m x n accumulator patterns or zeros).
fn dense(
    py: Python<'_>,
    cfg: CoreConfig,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    c: Option<&Bound<'_, PyAny>>,
) -> PyResult<Gemm> {
    let (m, ka, av) = matrix(require_unsigned(py, a, "A")?, "A", cfg.fmt_a)?;
    let (kb, n, bv) = matrix(require_unsigned(py, b, "B")?, "B", cfg.fmt_b)?;
    if ka != kb {
        return Err(value_error(format!(
            "inner dimensions differ: A is {m} x {ka} but B is {kb} x {n}"
        )));
    }
    check_size(m, n, ka).py()?;
    let cv = c_words(py, c, m, n)?;
    Gemm::new(m, n, ka, cfg, av, bv, cv).py()
}

/// `matmul`: D = A x B + C by the functional model, every element the whole-K dot product of
/// `dot` (C first, k ascending, `width` products a step; for `dataflow="ws"` the
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
    let cfg = config(
        fmt, fmt_b, acc, preset, out_fmt, width, rows, cols, dataflow, false, satfinite,
    )?;
    let g = dense(py, cfg.0, a, b, c)?;
    // With `promote_every`, the functional model promoted to FP32 every N products.
    let out = match promote_every {
        Some(n) => py
            .allow_threads(|| run_functional_promoted(&g, n))
            .map_err(|e| value_error(e.to_string()))?,
        None => py.allow_threads(|| run_functional(&g)).py()?,
    };
    Ok((PyArray1::from_vec(py, out.d), out.flags.to_bits(), g.m, g.n))
}

/// The core configuration the names give (as `tcrtl gemm`): formats, mode (no `exact` on the
/// clocked core when `datapath`), accumulator, width, array and dataflow.
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
) -> PyResult<(CoreConfig, Option<tensorcore_rtl::numerics::dot::Preset>)> {
    let names = ArithNames {
        format: fmt,
        format_b: fmt_b,
        acc,
        preset,
        gpu: None,
        instr: None,
    };
    let df = dataflow_by_name(dataflow)?;
    let array = |cfg: CoreConfig| {
        cfg.with_array(rows, cols)
            .map(|c| c.with_dataflow(df))
            .map_err(|e| value_error(format!("--rows {rows} --cols {cols}: {e}")))
    };
    // Integers (as `tcrtl gemm --format s8 ...`): the int32 accumulator, wrapping or, with
    // `satfinite`, clamping; no accumulation mode, preset or output format.
    if let Some((a, b)) = names.int_formats().py()? {
        if !out_fmt.eq_ignore_ascii_case("fp32") {
            return Err(value_error(
                "--out-format applies to floating-point formats; integer GEMMs accumulate into int32",
            ));
        }
        let overflow = if satfinite {
            IntOverflow::SatFinite
        } else {
            IntOverflow::Wrap
        };
        let im = IntMode { a, b, overflow };
        let cfg = CoreConfig::new(a.container(), b.container(), AccMode::Int(im), width);
        return Ok((array(cfg)?, None));
    }
    if satfinite {
        return Err(value_error(
            "satfinite applies to integer formats (s8, u8, s4, u4)",
        ));
    }
    let accf = acc_format(out_fmt).py()?;
    let arith = if datapath {
        names.resolve_datapath(accf).py()?
    } else {
        names.resolve_acc(accf).py()?
    };
    let cfg = CoreConfig::new(arith.fmt_a, arith.fmt_b, arith.mode, width).with_acc(accf);
    Ok((array(cfg)?, arith.preset))
}

/// The memory path `memory` names (`ideal` or `tma`, with `stages` and `swizzle`), refusing
/// memory options on the ideal path as the command line does.
fn memory_config(
    memory: &str,
    stages: Option<usize>,
    swizzle: bool,
) -> PyResult<Option<MemPortConfig>> {
    let mem_cfg = match memory.to_ascii_lowercase().as_str() {
        "tma" => Some(MemPortConfig {
            params: MemParams::default(),
            stages: stages.unwrap_or(0),
            swizzle,
        }),
        "ideal" => {
            if stages.is_some() || !swizzle {
                return Err(value_error(
                    "memory options (--mem-*, --smem-bytes, --stages, --no-swizzle) need --memory tma",
                ));
            }
            None
        }
        other => {
            return Err(value_error(format!(
                "unknown memory path {other:?} (expected ideal or tma)"
            )))
        }
    };
    if stages == Some(0) {
        return Err(value_error("--stages 0: at least 1 stage is needed"));
    }
    Ok(mem_cfg)
}

/// The run's waveform (a VCD at `vcd`, its path checked first), run with the GIL released.
fn run_traced(
    py: Python<'_>,
    problem: Problem<'_>,
    mem_cfg: Option<&MemPortConfig>,
    vcd: Option<&str>,
) -> PyResult<GemmRun> {
    if let Some(p) = vcd {
        OutputPlan::new()
            .add_trace("--vcd", std::path::Path::new(p))
            .map_err(os_error)?;
    }
    let trace = vcd.map(TraceConfig::vcd);
    py.allow_threads(|| gemm::run(problem, mem_cfg, trace.as_ref()))
        .py()
}

/// The `memory` dict of a run: the ideal path's zeros, or the TMA path's counters (as the
/// command line's JSON `memory` object).
fn memory_dict<'py>(py: Python<'py>, run: Option<&MemRun>) -> PyResult<Bound<'py, PyDict>> {
    let mem = PyDict::new(py);
    match run {
        None => {
            mem.set_item("path", "ideal")?;
            mem.set_item("stall_cycles", 0)?;
            mem.set_item("window_wait_cycles", 0)?;
        }
        Some(r) => {
            let cn = &r.counters;
            mem.set_item("path", "tma")?;
            mem.set_item("bytes_loaded", cn.bytes_loaded)?;
            mem.set_item("bytes_stored", cn.bytes_stored)?;
            mem.set_item("tx_bytes", cn.tx_bytes)?;
            mem.set_item("stall_cycles", r.run.stall_cycles)?;
            mem.set_item("window_wait_cycles", r.run.window_wait_cycles)?;
            mem.set_item("overlap_cycles", r.run.overlap_cycles)?;
            mem.set_item("bank_conflicts", cn.bank_conflicts)?;
            mem.set_item("oob_elements", cn.oob_elements)?;
            mem.set_item("requests", cn.requests)?;
            mem.set_item("stages", r.layout.stages())?;
            mem.set_item("smem_read_bytes", r.run.smem_read_bytes)?;
            mem.set_item("smem_write_bytes", cn.tx_bytes)?;
        }
    }
    Ok(mem)
}

/// `gemm`: D = A x B + C on the clocked tensor core (as `tcrtl gemm`), from numpy operands or
/// a seeded random problem (`m`, `n`, `k`, `seed`), dense or 2:4 sparse (a numpy A that
/// satisfies 2:4, compressed by the library; a pre-compressed A, `a_values` and `a_meta`, as
/// `--a-values`/`--a-meta`; or random), on the ideal
/// operand store or through the TMA memory path (`memory="tma"`), with an optional VCD
/// waveform. Returns a dict of the run: `d` (patterns, row-major), the command line's JSON
/// counters and, for random problems or `check=True`, the check against the references.
#[pyfunction]
#[pyo3(signature = (a=None, b=None, c=None, *, m=None, n=None, k=None, seed=1, fmt="fp16", fmt_b=None, acc=None, preset=None, out_fmt="fp32", width=1, rows=4, cols=4, dataflow="os", memory="ideal", stages=None, swizzle=true, sparse=false, prune=false, a_values=None, a_meta=None, vcd=None, check=false, satfinite=false))]
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
            "prune applies to 2:4 sparse problems (--prune needs --sparse)",
        ));
    }
    let compressed = a_values.is_some() || a_meta.is_some();
    if compressed && !sparse {
        return Err(value_error(
            "a_values and a_meta are a 2:4-compressed A (--a-values and --a-meta need --sparse)",
        ));
    }
    let (cfg, preset) = config(
        fmt, fmt_b, acc, preset, out_fmt, width, rows, cols, dataflow, true, satfinite,
    )?;
    let int_mode = match cfg.mode {
        AccMode::Int(im) => Some(im),
        _ => None,
    };
    if int_mode.is_some() && sparse {
        return Err(value_error("integer formats run dense (no --sparse)"));
    }
    let mem_cfg = memory_config(memory, stages, swizzle)?;
    let random = m.is_some();
    let sparse_g = if sparse {
        check_b_bus(&cfg).py()?;
        Some(match (a, b, m, n, k) {
            _ if compressed => match (a, a_values, a_meta, b, m) {
                (None, Some(v), Some(md), Some(b), None) => {
                    sparse_from_compressed(py, cfg, v, md, b, c)?
                }
                (None, Some(_), Some(_), None, None) => return Err(value_error("give --b B.npy")),
                _ => {
                    return Err(value_error(
                        "give --a A.npy, or --a-values V.npy --a-meta M.npy, with --b B.npy",
                    ))
                }
            },
            (None, None, Some(m), Some(n), Some(k)) => {
                check_size(m, n, k).py()?;
                SparseGemm::random(m, n, k, cfg, seed).py()?
            }
            (Some(a), Some(b), None, None, None) => sparse_from_arrays(py, cfg, a, b, c, prune)?,
            _ => {
                return Err(value_error(
                    "give --a A.npy --b B.npy, or --m M --n N --k K",
                ))
            }
        })
    } else {
        None
    };
    let g = match (a, b, m, n, k) {
        _ if sparse_g.is_some() => sparse_g
            .as_ref()
            .map(SparseGemm::dense)
            .ok_or_else(|| value_error("no problem"))?,
        (Some(a), Some(b), None, None, None) => dense(py, cfg, a, b, c)?,
        (None, None, Some(m), Some(n), Some(k)) => {
            check_size(m, n, k).py()?;
            Gemm::random(m, n, k, cfg, seed).py()?
        }
        _ => {
            return Err(value_error(
                "give --a A.npy --b B.npy, or --m M --n N --k K",
            ))
        }
    };
    let problem = match &sparse_g {
        Some(s) => Problem::Sparse(s),
        None => Problem::Dense(&g),
    };
    let done = run_traced(py, problem, mem_cfg.as_ref(), vcd)?;
    let run = &done.run;
    let checked = if random || check {
        Some(match verify::check(problem, preset, &run.out.d).py()? {
            Some(c) => (c.reference.to_string(), c.mismatches.len()),
            None => {
                let want = run_functional(&g).py()?.d;
                (
                    "functional".to_string(),
                    mismatches(&run.out.d, &want).len(),
                )
            }
        })
    } else {
        None
    };
    let macs = sparse_g.as_ref().map_or(g.macs(), SparseGemm::macs);
    let out = PyDict::new(py);
    out.set_item("d", PyArray1::from_vec(py, run.out.d.clone()))?;
    out.set_item("m", g.m)?;
    out.set_item("n", g.n)?;
    out.set_item("k", g.k)?;
    match int_mode {
        Some(im) => {
            out.set_item("format", im.a.name)?;
            out.set_item("format_b", im.b.name)?;
            out.set_item("acc", "int32")?;
            out.set_item("overflow", im.overflow.name())?;
        }
        None => {
            out.set_item("format", cfg.fmt_a.name)?;
            out.set_item("format_b", cfg.fmt_b.name)?;
            out.set_item("acc", cfg.mode.name())?;
        }
    }
    out.set_item("preset", preset.map(|p| p.name()))?;
    out.set_item("width", cfg.width)?;
    out.set_item("rows", cfg.rows())?;
    out.set_item("cols", cfg.cols())?;
    out.set_item("dataflow", cfg.dataflow().name())?;
    out.set_item(
        "out_format",
        if int_mode.is_some() {
            "int32"
        } else {
            cfg.acc.name
        },
    )?;
    out.set_item("seed", random.then_some(seed))?;
    out.set_item("cycles", run.cycles)?;
    out.set_item("tiles", run.tiles)?;
    out.set_item("macs", macs)?;
    out.set_item("mac_slots_used", run.mac_slots_used)?;
    out.set_item("mac_slots_offered", run.mac_slots_offered)?;
    out.set_item("utilization", run.utilization())?;
    out.set_item("sim_seconds", run.sim_seconds)?;
    out.set_item("flags", run.out.flags.names())?;
    out.set_item("waves", vcd)?;
    if let Some((reference, bad)) = checked {
        let d = PyDict::new(py);
        d.set_item("reference", reference)?;
        d.set_item("mismatches", bad)?;
        out.set_item("check", d)?;
    } else {
        out.set_item("check", py.None())?;
    }
    out.set_item("memory", memory_dict(py, done.memory.as_ref())?)?;
    if let Some(t) = &run.traffic {
        let d = PyDict::new(py);
        d.set_item("a_read_bytes", t.a_read_bytes())?;
        d.set_item("b_read_bytes", t.b_read_bytes())?;
        d.set_item("c_read_bytes", t.c_read_bytes())?;
        d.set_item("d_write_bytes", t.d_write_bytes())?;
        out.set_item("traffic", d)?;
    }
    Ok(out)
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

/// The block-scaled problem of the arrays, checked by the library (`gemm::mx_input`, the
/// command line's checks and messages; a message about one array starts with its argument's
/// name where the command line names its file).
fn mx_problem(
    py: Python<'_>,
    cfg: CoreConfig,
    spec: MxSpec,
    arrays: [Option<&Bound<'_, PyAny>>; 4],
    c: Option<&Bound<'_, PyAny>>,
) -> PyResult<MxGemm> {
    let [a, b, sa, sb] = arrays;
    let (a, b) = (need(a, "--a")?, need(b, "--b")?);
    let (sa, sb) = (need(sa, "--a-scales")?, need(sb, "--b-scales")?);
    let int8 = spec.int8();
    let input = MxInput {
        cfg,
        spec,
        a: codes(py, a, "A", int8)?,
        b: codes(py, b, "B", int8)?,
        a_scales: codes(py, sa, "a_scales", false)?,
        b_scales: codes(py, sb, "b_scales", false)?,
        c: None,
    };
    let mut g = input.build().map_err(|e| match e.operand {
        Some(op) => {
            let name = match op {
                MxOperand::A => "a",
                MxOperand::B => "b",
                MxOperand::AScales => "a_scales",
                MxOperand::BScales => "b_scales",
            };
            value_error(format!("{name}: {e}"))
        }
        None => value_error(e.to_string()),
    })?;
    if c.is_some() {
        g.c = c_words(py, c, g.m, g.n)?;
    }
    Ok(g)
}

/// The block format `fmt` names, or the command line's refusal of block scales with a format
/// that is not block-scaled.
fn block_format(fmt: &str) -> PyResult<BlockFormat> {
    BlockFormat::by_name(fmt)
        .ok_or_else(|| value_error(mx_input::scales_need_block_format(fmt).to_string()))
}

/// The dataflow `name` names (`os`, `ws`).
fn dataflow_by_name(name: &str) -> PyResult<Dataflow> {
    Dataflow::by_name(&name.to_ascii_lowercase()).ok_or_else(|| {
        value_error("unknown dataflow (os: output-stationary, ws: weight-stationary)")
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
/// block-scaled GEMM ([`MxGemm`]), from the arrays `gemm` takes (element codes `a` m x k and
/// `b` k x n, scale codes `a_scales` m x k/bs and `b_scales` k/bs x n, NVFP4's FP32 tensor
/// scales as bits, C FP32 patterns or zeros), checked by the library as `tcrtl gemm --format
/// mxfp8e4m3 ...` checks them. Element (i, j) is `mx_dot` of row i of A and column j of B
/// into C[i, j]: in `fused` mode (`acc` left out or `"fused"`; one rounding per K-block, the
/// bits of the clocked core) in the order of the dataflow (`ws`: folds of `rows` K-blocks,
/// `width` the block size, as the core), or for `dataflow="os"` in `exact` or `block-rz` mode
/// (the modes `dot` offers). Returns D's FP32 patterns (m x n, row-major), the OR of every
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
    if df == Dataflow::Ws {
        if mode != MxDotMode::Fused {
            return Err(value_error(format!(
                "--acc {}: the weight-stationary order (dataflow ws) is the fused MX \
                 datapath's (give --acc fused or leave it out)",
                mode.name()
            )));
        }
        spec.check_ws_width(width).py()?;
    }
    let g = mx_problem(py, cfg, spec, [a, b, a_scales, b_scales], c)?;
    let d = py
        .allow_threads(|| match df {
            Dataflow::Os => g.reference(mode),
            Dataflow::Ws => g.functional(),
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
/// NVFP4), C FP32 patterns or zeros; the core in MX mode (fused), on the ideal store, either
/// dataflow. The options MX does not take are refused with the command line's messages.
/// Returns the dict of the run: `d` and the keys of the command line's JSON.
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
    // The memory path (either dataflow), or the ideal path's refusal of memory options.
    let mem_cfg = memory_config(memory, stages, swizzle)?;
    let (fb, spec, cfg) = mx_core(
        fa,
        fmt_b,
        [a_tensor_scale, b_tensor_scale],
        width,
        (rows, cols),
        df,
    )?;
    let g = mx_problem(py, cfg, spec, [a, b, a_scales, b_scales], c)?;
    let done = run_traced(py, Problem::Mx(&g), mem_cfg.as_ref(), vcd)?;
    let run = &done.run;
    let checked = if check {
        Some(check_fused(&g, &run.out.d).py()?)
    } else {
        None
    };
    let out = PyDict::new(py);
    out.set_item("d", PyArray1::from_vec(py, run.out.d.clone()))?;
    out.set_item("m", g.m)?;
    out.set_item("n", g.n)?;
    out.set_item("k", g.k)?;
    out.set_item("format", fa.name())?;
    out.set_item("format_b", fb.name())?;
    out.set_item("acc", "fused")?;
    out.set_item("block", spec.block())?;
    out.set_item("width", g.cfg.width)?;
    out.set_item("rows", g.cfg.rows())?;
    out.set_item("cols", g.cfg.cols())?;
    out.set_item("dataflow", g.cfg.dataflow().name())?;
    out.set_item("out_format", "fp32")?;
    out.set_item("a_tensor_scale", spec.a_tensor.map(f32::from_bits))?;
    out.set_item("b_tensor_scale", spec.b_tensor.map(f32::from_bits))?;
    out.set_item("cycles", run.cycles)?;
    out.set_item("tiles", run.tiles)?;
    out.set_item("macs", g.m * g.n * g.k)?;
    out.set_item("mac_slots_used", run.mac_slots_used)?;
    out.set_item("mac_slots_offered", run.mac_slots_offered)?;
    out.set_item("utilization", run.utilization())?;
    out.set_item("sim_seconds", run.sim_seconds)?;
    out.set_item("flags", run.out.flags.names())?;
    out.set_item("waves", vcd)?;
    if done.memory.is_some() {
        out.set_item("memory", memory_dict(py, done.memory.as_ref())?)?;
    }
    match checked {
        Some(c) => {
            let d = PyDict::new(py);
            d.set_item("reference", c.reference)?;
            d.set_item("mismatches", c.mismatches.len())?;
            out.set_item("check", d)?;
        }
        None => out.set_item("check", py.None())?,
    }
    Ok(out)
}
