//! `select_rule`: the rule a preset, or a GPU and its instruction, name (the library's
//! `ArithNames::selection`, so the checks and messages are the command line's `--preset`,
//! `--gpu` and `--instr`), and `gpu_rows`: the library's GPU x instruction table.

use crate::errors::IntoPy;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tensorcore_rtl::io::arith::ArithNames;
use tensorcore_rtl::io::values::input_format;
use tensorcore_rtl::numerics::dot::{GpuRule, GPU_ROWS};

/// The names a run's `preset`, `gpu` and `instr` select: `(preset, gpu, instr)`, all `None`
/// when none is given; a preset alone gives its canonical GPU and instruction. Refuses a
/// preset with a GPU, an instruction without a GPU, unknown names, a pair the table does not
/// model (or that nobody has measured), and FP8 `fmt`/`fmt_b` through `wmma`.
#[pyfunction]
#[pyo3(signature = (preset=None, gpu=None, instr=None, fmt=None, fmt_b=None))]
#[allow(clippy::type_complexity)]
pub fn select_rule(
    preset: Option<&str>,
    gpu: Option<&str>,
    instr: Option<&str>,
    fmt: Option<&str>,
    fmt_b: Option<&str>,
) -> PyResult<(
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
)> {
    let names = ArithNames {
        format: fmt.unwrap_or("fp16"),
        format_b: fmt_b,
        acc: Some("nvidia"),
        preset,
        gpu,
        instr,
    };
    let (p, rule) = names.selection().py()?;
    // FP8 through wmma (format names the library does not read are left to the later checks).
    if let (Some(r), Some(fa)) = (rule, fmt.and_then(|f| input_format(f).ok())) {
        let fb = fmt_b.and_then(|f| input_format(f).ok()).unwrap_or(fa);
        r.check_formats(fa, fb).py()?;
    }
    Ok((
        p.map(|p| p.name()),
        rule.map(|r| r.gpu.name()),
        rule.map(|r| r.instr.name()),
    ))
}

/// Every row of the library's GPU x instruction table, a GPU's default instruction first:
/// dicts with `gpu`, `architecture`, `instr`, `preset` (`None`: not measured, refused),
/// `default` and `evidence`.
#[pyfunction]
pub fn gpu_rows(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    GPU_ROWS
        .iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("gpu", r.gpu.name())?;
            d.set_item("architecture", r.gpu.architecture())?;
            d.set_item("instr", r.instr.name())?;
            d.set_item("preset", r.preset.map(|p| p.name()))?;
            let default = GpuRule::resolve(r.gpu, None).is_ok_and(|d| d.instr == r.instr);
            d.set_item("default", default)?;
            d.set_item("evidence", r.evidence)?;
            Ok(d)
        })
        .collect()
}
