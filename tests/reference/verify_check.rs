//! The library's D check against the independent reference.

use tensorcore_rtl::gemm::Gemm;
use tensorcore_rtl::gemm::Problem;
use tensorcore_rtl::hw::CoreConfig;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::verify::check;

/// 1 x 2 x 2 FP16, worked by hand: A = [1, 2], B = [[1, 0], [0.5, 1]], C = 0:
/// D = [1 + 1, 0 + 2] = [2, 2] (FP32 0x40000000 both).
fn problem() -> Gemm {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    Gemm::new(
        1,
        2,
        2,
        cfg,
        vec![0x3C00, 0x4000],
        vec![0x3C00, 0x0000, 0x3800, 0x3C00],
        vec![0, 0],
    )
    .expect("a valid problem")
}

#[test]
fn a_right_d_passes_and_a_wrong_one_is_found() {
    let g = problem();
    let ok = check(Problem::Dense(&g), None, &[0x4000_0000, 0x4000_0000])
        .expect("checked")
        .expect("an independent reference covers FP16 ieee");
    assert!(ok.mismatches.is_empty(), "{ok:?}");
    let bad = check(Problem::Dense(&g), None, &[0x4000_0000, 0x4000_0001])
        .expect("checked")
        .expect("a reference");
    assert_eq!(bad.mismatches, vec![1]);
}
