//! `tma_load`: one TMA load of a box of a numpy tensor through the clocked memory system, by
//! the library's `hw::memory::box_load::box_load` (which `tcrtl tma load` calls too).

use crate::errors::{os_error, value_error};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tensorcore_rtl::hw::memory::box_load::{box_load, BoxSpec, HostTensor};
use tensorcore_rtl::hw::memory::{ElemType, MemParams, OobFill, Swizzle};
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::rtl::TraceConfig;

macro_rules! tensor_words {
    ($obj:expr, $($t:ty => $size:expr, $name:expr, $conv:expr);+ $(;)?) => {{
        let mut found = None;
        $(
            if found.is_none() {
                if let Ok(arr) = $obj.downcast::<PyArrayDyn<$t>>() {
                    let ro = arr.readonly();
                    let words: Vec<u64> = ro.as_array().iter().map(|&x| $conv(x)).collect();
                    found = Some((ro.shape().to_vec(), words, $size, $name));
                }
            }
        )+
        found
    }};
}

/// One TMA load of a box of `tensor` (as `tcrtl tma load --tensor T.npy --dtype ... --box ...
/// --coords ...`): returns a dict of the command line's JSON keys (`tx_bytes`, `cycles`,
/// `oob_elements`, `bank_conflicts`, `requests`, `bytes_loaded`, ...) and `smem`, the shared
/// memory image from `smem_base`, one element-sized slot a word.
#[pyfunction]
#[pyo3(signature = (tensor, *, dtype, box_dims, coords, gdim=None, gstride=None, estride=None, swizzle="none", oob="zero", smem_base=0, vcd=None))]
#[allow(clippy::too_many_arguments)]
pub fn tma_load<'py>(
    py: Python<'py>,
    tensor: &Bound<'py, PyAny>,
    dtype: &str,
    box_dims: Vec<u32>,
    coords: Vec<i32>,
    gdim: Option<Vec<u64>>,
    gstride: Option<Vec<u64>>,
    estride: Option<Vec<u32>>,
    swizzle: &str,
    oob: &str,
    smem_base: u32,
    vcd: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    if let Some(p) = vcd {
        OutputPlan::new()
            .add_trace("--vcd", std::path::Path::new(p))
            .map_err(os_error)?;
    }
    let et = ElemType::parse(dtype).ok_or_else(|| {
        value_error(format!(
            "--dtype {dtype}: expected one of u8, u16, u32, e4m3, e5m2, fp16, bf16, fp32, tf32"
        ))
    })?;
    let sw = Swizzle::parse(swizzle).ok_or_else(|| {
        value_error(format!(
            "--swizzle {swizzle}: expected none, 32B, 64B or 128B"
        ))
    })?;
    let oob_fill = match oob {
        "zero" => OobFill::Zero,
        "nan" => OobFill::Nan,
        other => return Err(value_error(format!("--oob {other}: expected zero or nan"))),
    };
    let params = MemParams::default();
    let (shape, words, size, name) = tensor_words!(tensor,
        u8 => 1, "uint8", u64::from;
        i8 => 1, "int8", |x: i8| u64::from(x as u8);
        u16 => 2, "uint16", u64::from;
        u32 => 4, "uint32", u64::from;
        i32 => 4, "int32", |x: i32| u64::from(x as u32);
        f32 => 4, "float32", |x: f32| u64::from(x.to_bits());
        f64 => 8, "float64", |x: f64| x.to_bits();
    )
    .ok_or_else(|| {
        value_error(
            "tensor must be a numpy array of uint8, int8, uint16 (also float16 and ml_dtypes \
             views), uint32, int32, float32 or float64",
        )
    })?;
    let spec = BoxSpec {
        dtype: et,
        box_dims,
        coords,
        gdim,
        gstride,
        estride,
        swizzle: sw,
        oob_fill,
        smem_base,
        smem_fill: 0,
    };
    let host = HostTensor {
        shape: &shape,
        words: &words,
        elem_bytes: size,
        dtype_name: name,
        name: "the tensor",
    };
    let trace = vcd.map(TraceConfig::vcd);
    let done = py
        .allow_threads(|| box_load(&spec, &host, params, || Ok(trace)))
        .map_err(value_error)?;
    let c = &done.run.counters;
    let out = PyDict::new(py);
    out.set_item("tx_bytes", done.tx_bytes)?;
    out.set_item("smem_base", smem_base)?;
    out.set_item("oob_elements", c.oob_elements)?;
    out.set_item("cycles", done.run.cycles)?;
    out.set_item("bank_conflicts", c.bank_conflicts)?;
    out.set_item("requests", c.requests)?;
    out.set_item("bytes_loaded", c.bytes_loaded)?;
    out.set_item("dtype", et.name())?;
    out.set_item("swizzle", sw.name())?;
    out.set_item("smem", done.slots)?;
    Ok(out)
}
