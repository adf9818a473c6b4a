//! `workload_run` (`tcrtl workload run` from Python): every layer of a SCALE-Sim topology, a
//! file or the text of one, as a random GEMM on the clocked core, each checked against the
//! independent references, by the library's one workload runner (`workload::run`). It returns
//! the `layers.csv` columns, each layer's row of values (the very values the command line
//! writes) and the `summary.json` text.

use crate::errors::{os_error, value_error, IntoPy};
use pyo3::prelude::*;
use pyo3::types::PyList;
use serde_json::Value;
use tensorcore_rtl::energy::Tech;
use tensorcore_rtl::gemm::CoreConfig;
use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::MemPortConfig;
use tensorcore_rtl::io::arith::ArithNames;
use tensorcore_rtl::io::bounded::{read_text_bounded, MAX_TEXT_BYTES};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP32;
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow};
use tensorcore_rtl::workload::report::{self, Cell};
use tensorcore_rtl::workload::{self, EnergyOptions, Quiet, RunOptions, Shard, Split, Timing};

/// A `layers.csv` value as a Python object: text a `str`, counts an `int`, reals a `float`,
/// an empty cell `None`.
fn cell_object(py: Python<'_>, cell: &Cell) -> PyResult<PyObject> {
    Ok(match cell {
        Cell::Text(s) => s.into_pyobject(py)?.into_any().unbind(),
        Cell::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
        Cell::Float(v) => v.into_pyobject(py)?.into_any().unbind(),
        Cell::Json(v) => match v {
            Value::Number(x) if x.is_u64() => x.as_u64().into_pyobject(py)?.into_any().unbind(),
            Value::Number(x) if x.is_i64() => x.as_i64().into_pyobject(py)?.into_any().unbind(),
            Value::Number(x) => x.as_f64().into_pyobject(py)?.into_any().unbind(),
            Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
            other => other.to_string().into_pyobject(py)?.into_any().unbind(),
        },
        Cell::Empty => py.None(),
    })
}

/// The core of `tcrtl workload run --format ... --acc ... --width ... --rows ... --cols ...
/// --dataflow ...` (the FP32 accumulator; integers into int32).
#[allow(clippy::too_many_arguments)]
fn core(
    names: &ArithNames<'_>,
    width: usize,
    rows: usize,
    cols: usize,
    dataflow: &str,
    satfinite: bool,
) -> PyResult<(CoreConfig, Option<tensorcore_rtl::numerics::dot::Preset>)> {
    let df = crate::gemm::dataflow_by_name(dataflow)?;
    let array = |cfg: CoreConfig| {
        cfg.with_array(rows, cols)
            .map(|c| c.with_dataflow(df))
            .map_err(|e| value_error(format!("rows {rows}, cols {cols}: {e}")))
    };
    if let Some((a, b)) = names.int_formats().py()? {
        let overflow = if satfinite {
            IntOverflow::SatFinite
        } else {
            IntOverflow::Wrap
        };
        let mode = AccMode::Int(IntMode { a, b, overflow });
        let cfg = CoreConfig::new(a.container(), b.container(), mode, width);
        return Ok((array(cfg)?, None));
    }
    if satfinite {
        return Err(value_error(
            "satfinite applies to the integer formats (s8, u8, s4, u4) only",
        ));
    }
    let arith = names.resolve_datapath(FP32).py()?;
    let cfg = CoreConfig::new(arith.fmt_a, arith.fmt_b, arith.mode, width).with_acc(FP32);
    Ok((array(cfg)?, arith.preset))
}

/// Runs a workload: the topology read from `path`, or given as `text` (named `name` in the
/// summary), on the core the names build. Returns `(columns, rows, summary)`: the
/// `layers.csv` column names, one list of values per layer in the topology's order, and the
/// `summary.json` object as JSON text.
#[pyfunction]
#[pyo3(signature = (name, *, path=None, text=None, fmt="fp16", fmt_b=None, acc=None, preset=None, gpu=None, instr=None, width=1, rows=4, cols=4, dataflow="os", satfinite=false, seed=1, max_check=1u64 << 22, samples=256, analytic=false, timing="model", threads=1, memory="ideal", stages=None, swizzle=true, energy=false, tech=None, clock_ghz=1.0, shard=(0, 1), split="layers"))]
#[allow(clippy::too_many_arguments)]
pub fn workload_run<'py>(
    py: Python<'py>,
    name: &str,
    path: Option<&str>,
    text: Option<&str>,
    fmt: &str,
    fmt_b: Option<&str>,
    acc: Option<&str>,
    preset: Option<&str>,
    gpu: Option<&str>,
    instr: Option<&str>,
    width: usize,
    rows: usize,
    cols: usize,
    dataflow: &str,
    satfinite: bool,
    seed: u64,
    max_check: u64,
    samples: usize,
    analytic: bool,
    timing: &str,
    threads: usize,
    memory: &str,
    stages: Option<usize>,
    swizzle: bool,
    energy: bool,
    tech: Option<&str>,
    clock_ghz: f64,
    shard: (u64, u64),
    split: &str,
) -> PyResult<(Vec<String>, Bound<'py, PyList>, String)> {
    let topology_text = match (path, text) {
        (Some(p), None) => read_text_bounded(std::path::Path::new(p), MAX_TEXT_BYTES, "a topology")
            .map_err(|e| os_error(format!("{p}: {e}")))?,
        (None, Some(t)) => t.to_string(),
        _ => {
            return Err(value_error(
                "give the topology as a path or as text, not both",
            ))
        }
    };
    let names = ArithNames {
        format: fmt,
        format_b: fmt_b,
        acc,
        preset,
        gpu,
        instr,
    };
    let (cfg, preset) = core(&names, width, rows, cols, dataflow, satfinite)?;
    let memory = match memory.to_ascii_lowercase().as_str() {
        "ideal" if stages.is_none() && swizzle => None,
        "ideal" => {
            return Err(value_error(
                "stages and swizzle are options of the TMA memory path (memory=\"tma\")",
            ))
        }
        "tma" if stages == Some(0) => {
            return Err(value_error("stages 0: at least 1 stage is needed"))
        }
        "tma" => Some(MemPortConfig {
            params: MemParams::default(),
            stages: stages.unwrap_or(0),
            swizzle,
        }),
        other => {
            return Err(value_error(format!(
                "unknown memory path {other:?} (expected ideal or tma)"
            )))
        }
    };
    let timing = match timing.to_ascii_lowercase().as_str() {
        "model" => Timing::Model,
        "scalesim" => Timing::ScaleSim,
        other => {
            return Err(value_error(format!(
                "unknown timing {other:?} (expected model or scalesim)"
            )))
        }
    };
    let split = match split.to_ascii_lowercase().as_str() {
        "layers" => Split::Layers,
        "rows" => Split::Rows,
        other => {
            return Err(value_error(format!(
                "unknown split {other:?} (expected layers or rows)"
            )))
        }
    };
    let energy = match (energy, tech) {
        (true, t) => Some(EnergyOptions {
            tech: Tech::by_name(t.unwrap_or("45nm")).py()?,
        }),
        (false, Some(_)) => return Err(value_error("tech applies with energy=True")),
        (false, None) => None,
    };
    let opts = RunOptions {
        topology_name: name.to_string(),
        topology_text,
        cfg,
        preset,
        rule: names.selection().ok().and_then(|(_, rule)| rule),
        seed,
        max_check,
        samples,
        memory,
        analytic,
        timing,
        threads,
        shard: Shard {
            index: shard.0,
            count: shard.1,
        },
        split,
        operands: None,
        energy,
        clock_ghz,
        resume: None,
    };
    let done = py
        .allow_threads(|| workload::run(&opts, &Quiet))
        .map_err(|e| value_error(e.to_string()))?;
    let report = &done.report;
    let with_memory = report.header.contains_key("memory_path");
    let with_energy = report.header.contains_key("energy");
    let columns = report::csv_columns(with_memory, with_energy)
        .into_iter()
        .map(String::from)
        .collect();
    let out = PyList::empty(py);
    for r in &report.records {
        let row = PyList::empty(py);
        for c in report::csv_cells(r, with_memory, with_energy) {
            row.append(cell_object(py, &c)?)?;
        }
        out.append(row)?;
    }
    Ok((columns, out, format!("{:#}", report::summary_json(report))))
}
