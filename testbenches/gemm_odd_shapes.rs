//! `gemm_odd_shapes`: tiling of problems that do not fill the 4x4 mesh: 5x7x9, 13x3x17,
//! 1x1x1, 3x5x2, 4x4x1, 8x8x8 and 6x2x31, in FP16 `ieee`, BF16 `fused` (w = 2) and E5M2
//! `nvidia` hopper. Every element of D is checked against the independent reference and the
//! tile count against `ceil(M/4) * ceil(N/4)`; masked lanes and padded rows must change no bit.

use crate::gemm::{Gemm, CoreConfig};
use crate::numerics::dot::{AccMode, Preset};
use crate::numerics::format::{BF16, E5M2, FP16};
use crate::tb::util::run_and_check;
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "tiled GEMM with odd shapes (5x7x9, 13x3x17, ...) vs verify references";

const SHAPES: [(usize, usize, usize); 7] = [
    (5, 7, 9),
    (13, 3, 17),
    (1, 1, 1),
    (3, 5, 2),
    (4, 4, 1),
    (8, 8, 8),
    (6, 2, 31),
];

/// `tcrtl tb run NAME --rows R --cols C` runs it on an R x C array (`Bench::array`).
pub const TAKES_ARRAY: bool = true;

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    let hopper = Preset::Hopper
        .params(E5M2, E5M2)
        .map_err(|e| e.to_string())?;
    let configs: [(&str, CoreConfig, Option<Preset>); 3] = [
        (
            "fp16 ieee",
            CoreConfig::new(FP16, FP16, AccMode::Ieee, 1),
            None,
        ),
        (
            "bf16 fused w2",
            CoreConfig::new(BF16, BF16, AccMode::Fused, 2),
            None,
        ),
        (
            "e5m2 nvidia hopper",
            CoreConfig::new(E5M2, E5M2, AccMode::Nvidia(hopper), 1),
            Some(Preset::Hopper),
        ),
    ];
    for (ci, (name, cfg, preset)) in configs.iter().enumerate() {
        for (si, &(m, n, k)) in SHAPES.iter().enumerate() {
            let seed = 1000 * ci as u64 + si as u64;
            let cfg = tb.array(*cfg)?;
            let g = Gemm::random(m, n, k, cfg, seed).map_err(|e| e.to_string())?;
            let label = format!("{name} {m}x{n}x{k}");
            run_and_check(tb, &label, &g, *preset, ci == 0 && si == 0)?;
        }
    }
    Ok(())
}
