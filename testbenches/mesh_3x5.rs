//! `mesh_3x5`: a non-square array of 3 rows and 5 columns (`CoreConfig::with_array(3, 5)`),
//! where every formula of `docs/timing.md` has R != C: FP16 and BF16 GEMMs of partial and
//! whole tiles (3 x 5 x 9, 7 x 11 x 40, 9 x 20 x 17) in `ieee` (w = 1), `fused` (w = 2) and
//! `nvidia` ampere (w = 4), every element against the independent references, and the tile
//! count and first-tile latency `T + R + C - 2 + L` (T + 7). The waveform traces the FP16
//! `ieee` 7 x 11 x 40 run (nine tiles): A crossing five PEs a row, B three a column.

use crate::numerics::dot::{AccMode, Preset};
use crate::numerics::format::{BF16, FP16};
use crate::tb::util::{run_cases_on_array, Case};
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "3x5 (non-square) array, FP16/BF16 ieee/fused/nvidia vs verify references";

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    let ampere = Preset::Ampere
        .params(FP16, FP16)
        .map(AccMode::Nvidia)
        .map_err(|e| e.to_string())?;
    let cases: [Case; 3] = [
        ("fp16 ieee", FP16, AccMode::Ieee, 1, None),
        ("bf16 fused w2", BF16, AccMode::Fused, 2, None),
        ("fp16 nvidia ampere w4", FP16, ampere, 4, Some(Preset::Ampere)),
    ];
    run_cases_on_array(tb, (3, 5), &cases, &[(3, 5, 9), (7, 11, 40), (9, 20, 17)], 35)
}
