//! `select_rule`: the rule a preset, or a GPU and its instruction, name (the library's
//! `ArithNames::selection`, so the checks and messages are the command line's `--preset`,
//! `--gpu` and `--instr`), and `gpu_rows`: the library's GPU x instruction table.

use crate::errors::IntoPy;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tensorcore_rtl::io::arith::ArithNames;
use tensorcore_rtl::io::values::{acc_format, input_format};
use tensorcore_rtl::numerics::dot::{GpuRule, GPU_ROWS};
use tensorcore_rtl::numerics::format::FP32;

/// The names a run's `preset`, `gpu` and `instr` select: `(preset, gpu, instr)`, all `None`
/// when none is given; a preset alone gives its canonical GPU and instruction. Refuses a
/// preset with a GPU, an instruction without a GPU, unknown names, a pair the table does not
/// model (or that nobody has measured), FP8 `fmt`/`fmt_b` through `wmma`, and, for
/// `acc="nvidia"` with a GPU, formats or an output (`out_fmt`) its preset lacks, with the
/// command line's message (which names the GPU and instruction).
#[pyfunction]
#[pyo3(signature = (preset=None, gpu=None, instr=None, fmt=None, fmt_b=None, acc=None, out_fmt=None))]
#[allow(clippy::type_complexity)]
pub fn select_rule(
    preset: Option<&str>,
    gpu: Option<&str>,
    instr: Option<&str>,
    fmt: Option<&str>,
    fmt_b: Option<&str>,
    acc: Option<&str>,
    out_fmt: Option<&str>,
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
    // Formats the library reads (others are left to the later checks, in their order).
    let fa = fmt.and_then(|f| input_format(f).ok());
    let fb = fmt_b.map_or(fa, |f| input_format(f).ok());
    if let (Some(r), Some(fa), Some(fb)) = (rule, fa, fb) {
        r.check_formats(fa, fb).py()?;
        let accf = out_fmt.map_or(Ok(FP32), acc_format).ok();
        let nvidia = acc.is_some_and(|a| a.eq_ignore_ascii_case("nvidia"));
        if let (true, true, Some(accf)) = (nvidia, gpu.is_some(), accf) {
            names.resolve_acc(accf).py()?;
        }
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
