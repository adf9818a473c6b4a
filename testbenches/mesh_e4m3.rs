//! `mesh_e4m3`: the 4x4 mesh on FP8 tiles: E4M3 x E4M3 and E4M3 x E5M2, K = 8 and 64, in
//! `ieee` (w = 1), `fused` (w = 8) and `nvidia` (hopper: 13-bit block cut; blackwell:
//! `RNE32(c + RZ32(sum))`), checked against `ieee_dot`, `fused_dot` and `nvidia_ref_dot`.

use crate::gemm::{Gemm, CoreConfig};
use crate::numerics::dot::{AccMode, Preset};
use crate::numerics::format::{E4M3, E5M2};
use crate::tb::util::run_and_check;
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "4x4 mesh, E4M3 (and E4M3 x E5M2), ieee/fused/nvidia vs verify references";

/// `tcrtl tb run NAME --rows R --cols C` runs it on an R x C array (`Bench::array`).
pub const TAKES_ARRAY: bool = true;

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    let mut first = true;
    for fmt_b in [E4M3, E5M2] {
        let mut modes: Vec<(String, AccMode, usize, Option<Preset>)> = vec![
            ("ieee".into(), AccMode::Ieee, 1, None),
            ("fused w8".into(), AccMode::Fused, 8, None),
        ];
        for p in [Preset::Hopper, Preset::Blackwell] {
            let params = p.params(E4M3, fmt_b).map_err(|e| e.to_string())?;
            modes.push((
                format!("nvidia {p}"),
                AccMode::Nvidia(params),
                1,
                Some(p),
            ));
        }
        for (name, mode, width, preset) in &modes {
            for k in [8usize, 64] {
                let cfg = tb.array(CoreConfig::new(E4M3, fmt_b, *mode, *width))?;
                let g = Gemm::random(4, 4, k, cfg, 0xE4 + k as u64).map_err(|e| e.to_string())?;
                let label = format!("e4m3 x {fmt_b} {name} K {k}");
                run_and_check(tb, &label, &g, *preset, first)?;
                first = false;
            }
        }
    }
    Ok(())
}
