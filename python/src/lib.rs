//! The native part of the `tcrtl` Python package: thin bindings over the `tensorcore-rtl`
//! library. Every number comes from the library; this crate reads numpy arrays, calls the
//! library functions the `tcrtl` command line calls, and turns their errors into Python
//! exceptions carrying the same one-line messages. The Python layer (`tcrtl/__init__.py`)
//! accepts ml_dtypes arrays and builds the result objects.

mod arrays;
mod convert;
mod dot;
mod errors;
mod gemm;
mod gpu;
mod pe;
mod report;
mod tma;
mod workload;

use pyo3::prelude::*;

/// The native module `tcrtl._tcrtl`.
#[pymodule]
fn _tcrtl(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dot::dot_kind, m)?)?;
    m.add_function(wrap_pyfunction!(dot::dot_float, m)?)?;
    m.add_function(wrap_pyfunction!(dot::dot_float_check, m)?)?;
    m.add_function(wrap_pyfunction!(dot::dot_int_rows, m)?)?;
    m.add_function(wrap_pyfunction!(dot::dot_block, m)?)?;
    m.add_function(wrap_pyfunction!(gemm::matmul_bits, m)?)?;
    m.add_function(wrap_pyfunction!(gemm::matmul_mx, m)?)?;
    m.add_function(wrap_pyfunction!(gemm::gemm_run, m)?)?;
    m.add_function(wrap_pyfunction!(gemm::gemm_mx, m)?)?;
    m.add_function(wrap_pyfunction!(convert::convert_bits, m)?)?;
    m.add_function(wrap_pyfunction!(convert::quantize_bits, m)?)?;
    m.add_function(wrap_pyfunction!(convert::dequantize_values, m)?)?;
    m.add_function(wrap_pyfunction!(tma::tma_load, m)?)?;
    m.add_function(wrap_pyfunction!(gpu::select_rule, m)?)?;
    m.add_function(wrap_pyfunction!(gpu::gpu_rows, m)?)?;
    m.add_function(wrap_pyfunction!(workload::workload_run, m)?)?;
    m.add_class::<pe::Pe>()?;
    Ok(())
}
