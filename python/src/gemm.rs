//! `gemm` (the clocked tensor core, `tcrtl gemm`) and `matmul` (the functional model): the
//! problem built from numpy operands or a seeded random one, run by the library's one GEMM
//! entry (`gemm::run`) or its functional model (`gemm::run_functional`).

use crate::arrays::{require_unsigned, Words};
use crate::errors::{os_error, value_error, IntoPy};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tensorcore_rtl::gemm::problem::check_dims;
use tensorcore_rtl::gemm::{self, run_functional, CoreConfig, Gemm, Problem};
use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::{Dataflow, MemPortConfig};
use tensorcore_rtl::io::arith::ArithNames;
use tensorcore_rtl::io::values::acc_format;
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::numerics::convert::tf32_from_container;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::{Format, TF32};
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow};
use tensorcore_rtl::rtl::TraceConfig;
use tensorcore_rtl::sparse::SparseGemm;
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
    check_dims(m, n, ka).py()?;
    let cv: Vec<u32> = match c {
        Some(c) => {
            let w = require_unsigned(py, c, "C")?;
            if w.shape != [m, n] {
                return Err(value_error(format!(
                    "C must be {m} x {n} (as D) but has shape {:?}",
                    w.shape
                )));
            }
            w.words.into_iter().map(|x| x as u32).collect()
        }
        None => vec![0; m * n],
    };
    Gemm::new(m, n, ka, cfg, av, bv, cv).py()
}

/// `matmul`: D = A x B + C by the functional model, every element the whole-K dot product of
/// `dot` (C first, k ascending, `width` products a step; for `dataflow="ws"` the
/// weight-stationary order with `rows` PE rows). Returns D's patterns (m x n, row-major) and
/// the OR of every element's flags.
#[pyfunction]
#[pyo3(signature = (a, b, c=None, *, fmt="fp16", fmt_b=None, acc=None, preset=None, out_fmt="fp32", width=1, rows=4, cols=4, dataflow="os", satfinite=false))]
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
) -> PyResult<(Bound<'py, PyArray1<u32>>, u8, usize, usize)> {
    let cfg = config(
        fmt, fmt_b, acc, preset, out_fmt, width, rows, cols, dataflow, false, satfinite,
    )?;
    let g = dense(py, cfg.0, a, b, c)?;
    let out = py.allow_threads(|| run_functional(&g)).py()?;
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
    };
    let df = Dataflow::by_name(&dataflow.to_ascii_lowercase()).ok_or_else(|| {
        value_error("unknown dataflow (os: output-stationary, ws: weight-stationary)")
    })?;
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

/// `gemm`: D = A x B + C on the clocked tensor core (as `tcrtl gemm`), from numpy operands or
/// a seeded random problem (`m`, `n`, `k`, `seed`), dense or 2:4 sparse (random), on the ideal
/// operand store or through the TMA memory path (`memory="tma"`), with an optional VCD
/// waveform. Returns a dict of the run: `d` (patterns, row-major), the command line's JSON
/// counters and, for random problems or `check=True`, the check against the references.
#[pyfunction]
#[pyo3(signature = (a=None, b=None, c=None, *, m=None, n=None, k=None, seed=1, fmt="fp16", fmt_b=None, acc=None, preset=None, out_fmt="fp32", width=1, rows=4, cols=4, dataflow="os", memory="ideal", stages=None, swizzle=true, sparse=false, vcd=None, check=false, satfinite=false))]
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
    vcd: Option<&str>,
    check: bool,
    satfinite: bool,
) -> PyResult<Bound<'py, PyDict>> {
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
    let random = m.is_some();
    let sparse_g = if sparse {
        let (Some(m), Some(n), Some(k)) = (m, n, k) else {
            return Err(value_error(
                "the package runs random sparse problems: give m, n and k",
            ));
        };
        Some(SparseGemm::random(m, n, k, cfg, seed).py()?)
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
            check_dims(m, n, k).py()?;
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
    if let Some(p) = vcd {
        OutputPlan::new()
            .add_trace("--vcd", std::path::Path::new(p))
            .map_err(os_error)?;
    }
    let trace = vcd.map(TraceConfig::vcd);
    let done = py
        .allow_threads(|| gemm::run(problem, mem_cfg.as_ref(), trace.as_ref()))
        .py()?;
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
    let mem = PyDict::new(py);
    match &done.memory {
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
    out.set_item("memory", mem)?;
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
