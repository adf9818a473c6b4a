//! `tcrtl gemm` with integer formats (`--format s8|u8|s4|u4`): D = A x B + C on the clocked
//! tensor core with an int32 accumulator (A, B as int8/uint8 .npy, C and D as int32), or a
//! seeded random problem, checked against the verify layer's `int_ref_dot`. 8-bit operands
//! also run through the TMA memory path (`--memory tma`: bytes in global and shared memory,
//! int32 C and D words). The problem and its checks are the library's job
//! (`job`); this file reads C and words the first text line.

use std::path::Path;
use tensorcore_rtl::gemm::CoreConfig;
use tensorcore_rtl::io::npy::{read_npy, shape_text, Dtype};
use tensorcore_rtl::job::RunReport;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::int::{IntOverflow, S32};

/// Reads C: M x N int32.
pub(super) fn load_c(path: &Path, m: usize, n: usize) -> Result<Vec<u32>, String> {
    let arr = read_npy(path).map_err(|e| e.to_string())?;
    if arr.dtype != Dtype::I32 {
        return Err(format!(
            "{}: C has dtype {}; expected int32",
            path.display(),
            arr.dtype.numpy_name()
        ));
    }
    if arr.shape != [m, n] {
        return Err(format!(
            "{}: C has shape {} but A x B is {m} x {n}",
            path.display(),
            shape_text(&arr.shape)
        ));
    }
    Ok(arr.iter_words().map(|w| S32.decode(w) as u32).collect())
}

/// The first text line of an integer run.
pub(super) fn header(cfg: &CoreConfig, r: &RunReport) -> String {
    let AccMode::Int(im) = cfg.mode else {
        return String::new();
    };
    let what = format!(
        "{} x {}, int32 {}",
        im.a,
        im.b,
        match im.overflow {
            IntOverflow::Wrap => "wrapping",
            IntOverflow::SatFinite => "satfinite",
        }
    );
    super::report::header_line(cfg, r, &what)
}
