//! Checking a block-scaled GEMM on the clocked core against the functional `mx_dot`.

use tensorcore_rtl::gemm::{run_clocked_mx, MxGemm};
use tensorcore_rtl::numerics::mx_dot::MxDotMode;

/// Runs `g` on the mesh and asserts D equals `mx_dot` in `mode` bit for bit (`label` names
/// the case in a failure); returns how many results were NaN, infinite, zero and finite
/// nonzero.
pub fn check_mesh(g: &MxGemm, mode: MxDotMode, label: &str) -> [usize; 4] {
    let d = run_clocked_mx(g, None).expect("mesh runs").out.d;
    let reference = g.reference(mode).expect("mx_dot");
    let mut kinds = [0usize; 4];
    for (idx, (&got, want)) in d.iter().zip(&reference).enumerate() {
        assert_eq!(
            got,
            want.bits as u32,
            "{label} w={} {} D[{}][{}]: mesh {got:#010x}, mx_dot {:#010x}",
            g.cfg.width,
            mode.name(),
            idx / g.n,
            idx % g.n,
            want.bits
        );
        let v = f32::from_bits(got);
        kinds[if v.is_nan() {
            0
        } else if v.is_infinite() {
            1
        } else if v == 0.0 {
            2
        } else {
            3
        }] += 1;
    }
    kinds
}
