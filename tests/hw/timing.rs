//! Measured cycles of the clocked tensor core against the documented formulas
//! (`docs/timing.md`): one tile's compute latency `T + R + C - 2 + L` for K = 1..=70 and
//! every width, the whole-run total, and back-to-back tiles.

use tensorcore_rtl::gemm::clocked::{run_clocked_measured, tile_cycles};
use tensorcore_rtl::gemm::{CoreConfig, Gemm};
use tensorcore_rtl::hw::{Schedule, PIPELINE_LATENCY};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::FP16;

fn cfg(mode: AccMode, width: usize) -> CoreConfig {
    CoreConfig::new(FP16, FP16, mode, width)
}

#[test]
fn one_tile_matches_the_formula_for_k_1_to_70() {
    let hopper = AccMode::Nvidia(Preset::Hopper.params(FP16, FP16).expect("preset"));
    for (wi, w) in [1usize, 2, 4, 8, 16, 32].into_iter().enumerate() {
        let mode = [AccMode::Ieee, AccMode::Fused, hopper][wi % 3];
        for k in 1..=70 {
            let c = cfg(mode, w);
            let g = Gemm::random(4, 4, k, c, k as u64).expect("problem");
            let r = run_clocked_measured(&g, None).expect("clocked");
            let t = k.div_ceil(w) as u64;
            assert_eq!(tile_cycles(&c, k), t + 4 + 4 - 2 + PIPELINE_LATENCY);
            assert_eq!(r.first_tile_cycles, tile_cycles(&c, k), "k={k} w={w}");
            let s = Schedule::new(4, 4, k, w, 0);
            assert_eq!(r.run.cycles, s.total_cycles(), "total k={k} w={w}");
            assert_eq!(
                r.run.cycles,
                (4 - PIPELINE_LATENCY) + tile_cycles(&c, k) + 5
            );
        }
    }
}

#[test]
fn scale_sim_example_4x4x4() {
    // SCALE-Sim v2, output stationary, 4x4 array, 4x4x4 GEMM: T + R + C - 2 = 10 cycles.
    let c = cfg(AccMode::Ieee, 1);
    assert_eq!(tile_cycles(&c, 4), 10 + PIPELINE_LATENCY);
    let g = Gemm::random(4, 4, 4, c, 1).expect("problem");
    let r = run_clocked_measured(&g, None).expect("clocked");
    assert_eq!(r.first_tile_cycles, 11);
    assert_eq!(r.run.cycles, 19); // 3 preload + 11 compute + 5 drain
}

#[test]
fn back_to_back_tiles_overlap() {
    for (m, n, k, w) in [
        (8, 8, 70, 1),
        (12, 8, 32, 4),
        (8, 12, 9, 1),
        (16, 16, 8, 8),
        (5, 9, 3, 1),
    ] {
        let c = cfg(AccMode::Fused, w);
        let g = Gemm::random(m, n, k, c, 3).expect("problem");
        let r = run_clocked_measured(&g, None).expect("clocked");
        let s = Schedule::new(m, n, k, w, 0);
        let tiles = s.tiles() as u64;
        let t = k.div_ceil(w) as u64;
        let p = t.max((t + 7).div_ceil(2));
        assert_eq!(s.period as u64, p);
        assert_eq!(
            r.run.cycles,
            3 + (tiles - 1) * p + tile_cycles(&c, k) + 5,
            "{m}x{n}x{k} w={w}"
        );
        // Overlap: never worse than SCALE-Sim's folds run back to back, each drained first.
        assert!(r.run.cycles < tiles * (tile_cycles(&c, k) + 8));
    }
}

/// A 256 x 256 x 256 GEMM keeps the output-stationary array at least 95% busy on 4 x 4, 8 x 8
/// and 16 x 16 (issue 21's utilization point; the `ws` counterpart is
/// `ws::long_streams_keep_the_array_busy`), by the schedule whose totals the clocked core
/// equals (the tests above, and `array_sizes` for every size).
#[test]
fn a_256_cube_keeps_the_os_array_busy() {
    for r in [4usize, 8, 16] {
        let c = cfg(AccMode::Fused, 1).with_array(r, r).expect("array");
        let s = Schedule::for_core(&c, 256, 256, 256, 0);
        let util = (256u64 * 256 * 256) as f64 / (s.total_cycles() * (r * r) as u64) as f64;
        assert!(util >= 0.95, "{r} x {r}: utilization {util}");
    }
}
