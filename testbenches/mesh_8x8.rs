//! `mesh_8x8`: an 8 x 8 output-stationary array (`CoreConfig::with_array(8, 8)`) on FP16 and
//! E4M3 GEMMs of one, several and ragged tiles (8 x 8 x 16, 16 x 24 x 33, 13 x 11 x 70) in
//! `ieee` (w = 1), `fused` (w = 4) and `nvidia` hopper (w = 8): every element against the
//! independent references (`ieee_dot`, `fused_dot`, `nvidia_ref_dot`), and the tile count and
//! first-tile latency `T + R + C - 2 + L` with R = C = 8. The waveform traces the FP16 `ieee`
//! 16 x 24 x 33 run (six tiles): A and B crossing eight PEs, the drain eight shifts deep.

use crate::numerics::dot::{AccMode, Preset};
use crate::numerics::format::{Format, E4M3, FP16};
use crate::tb::util::{run_cases_on_array, Case};
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "8x8 array, FP16/E4M3 ieee/fused/nvidia, 1 to 6 tiles vs verify references";

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    let hopper = |f: Format| {
        Preset::Hopper
            .params(f, f)
            .map(AccMode::Nvidia)
            .map_err(|e| e.to_string())
    };
    let cases: [Case; 3] = [
        ("fp16 ieee", FP16, AccMode::Ieee, 1, None),
        ("fp16 fused w4", FP16, AccMode::Fused, 4, None),
        ("e4m3 nvidia hopper w8", E4M3, hopper(E4M3)?, 8, Some(Preset::Hopper)),
    ];
    run_cases_on_array(tb, (8, 8), &cases, &[(8, 8, 16), (16, 24, 33), (13, 11, 70)], 80)
}
