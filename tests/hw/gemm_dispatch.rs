//! One GEMM run through the library's mode dispatch, worked by hand.

use tensorcore_rtl::gemm::{run, Gemm, Problem};
use tensorcore_rtl::hw::CoreConfig;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;

/// D = A x B + C for 4 x 4 x 2 FP16 with every A and B element 1 and C = 0, worked by hand:
/// every element of D is K = 2 (FP32 0x40000000), exactly, with no flags.
#[test]
fn a_dense_run_worked_by_hand() {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    let g = Gemm::new(4, 4, 2, cfg, vec![0x3C00; 8], vec![0x3C00; 8], vec![0; 16])
        .expect("a valid problem");
    let r = run(Problem::Dense(&g), None, None).expect("the run");
    assert_eq!(r.run.out.d, vec![0x4000_0000; 16]);
    assert!(r.measured.is_some());
    assert!(r.memory.is_none());
    // One tile on the ideal path takes the schedule's cycles.
    assert_eq!(r.run.tiles, 1);
    assert_eq!(r.run.cycles, Problem::Dense(&g).schedule_cycles());
}
