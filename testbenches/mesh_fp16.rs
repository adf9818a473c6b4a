//! `mesh_fp16`: the 4x4 mesh on FP16 tiles (4 x 4 x K, K = 1, 4, 16, 33) in every
//! accumulation mode the hardware offers for FP16 (`ieee` w = 1, `fused` w = 4 and 16,
//! `nvidia` volta/ampere/hopper), checked element by element against the independent
//! references (`ieee_dot`, `fused_dot`, `nvidia_ref_dot`).

use crate::gemm::{Gemm, CoreConfig};
use crate::numerics::dot::{AccMode, Preset};
use crate::numerics::format::FP16;
use crate::tb::util::run_and_check;
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "4x4 mesh, FP16, ieee/fused/nvidia vs verify references";

/// `tcrtl tb run NAME --rows R --cols C` runs it on an R x C array (`Bench::array`).
pub const TAKES_ARRAY: bool = true;

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    let mut modes: Vec<(String, AccMode, usize, Option<Preset>)> = vec![
        ("ieee".into(), AccMode::Ieee, 1, None),
        ("fused w4".into(), AccMode::Fused, 4, None),
        ("fused w16".into(), AccMode::Fused, 16, None),
    ];
    for p in [Preset::Volta, Preset::Ampere, Preset::Hopper] {
        let params = p.params(FP16, FP16).map_err(|e| e.to_string())?;
        modes.push((
            format!("nvidia {p}"),
            AccMode::Nvidia(params),
            1,
            Some(p),
        ));
    }
    let mut first = true;
    for (name, mode, width, preset) in &modes {
        for k in [1usize, 4, 16, 33] {
            let cfg = tb.array(CoreConfig::new(FP16, FP16, *mode, *width))?;
            let g = Gemm::random(4, 4, k, cfg, 16 + k as u64).map_err(|e| e.to_string())?;
            run_and_check(tb, &format!("{name} K {k}"), &g, *preset, first && k == 16)?;
        }
        first = false;
    }
    Ok(())
}
