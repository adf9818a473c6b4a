//! The run report of a GEMM job as a Python dict, in one place: the library's
//! [`RunReport`] serialised (the keys and values `tcrtl gemm --json` prints, the same by
//! construction) and turned into Python objects, with D's patterns beside them as `d`.

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::IntoPyObjectExt;
use serde_json::Value;
use tensorcore_rtl::job::RunReport;

/// A JSON value as the Python object `json.loads` gives for it.
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    match v {
        Value::Null => Ok(py.None().into_bound(py)),
        Value::Bool(b) => b.into_bound_py_any(py),
        Value::Number(x) => match (x.as_u64(), x.as_i64(), x.as_f64()) {
            (Some(u), _, _) => u.into_bound_py_any(py),
            (None, Some(i), _) => i.into_bound_py_any(py),
            (None, None, f) => f.unwrap_or(f64::NAN).into_bound_py_any(py),
        },
        Value::String(s) => s.into_bound_py_any(py),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            Ok(list.into_any())
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, to_py(py, item)?)?;
            }
            Ok(dict.into_any())
        }
    }
}

/// The report as a dict: every key of the command line's JSON, and `d` (D's patterns,
/// row-major, `uint32`).
pub fn report_dict<'py>(py: Python<'py>, report: &RunReport) -> PyResult<Bound<'py, PyDict>> {
    let dict = to_py(py, &report.to_json())?.downcast_into::<PyDict>()?;
    dict.set_item("d", PyArray1::from_vec(py, report.d.clone()))?;
    Ok(dict)
}
