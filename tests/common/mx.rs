//! Checking a block-scaled GEMM on the clocked core against the functional `mx_dot` and the
//! independent `verify::mx_ref`.

use tensorcore_rtl::gemm::{run_clocked_mx, MxGemm};
use tensorcore_rtl::numerics::mx_dot::MxDotMode;
use tensorcore_rtl::verify::mx_ref;

/// Runs `g` on the mesh and asserts D equals `mx_dot` in `mode` bit for bit, and for `fused`
/// also `verify::mx_ref` (`label` names the case in a failure); returns how many results
/// were NaN, infinite, zero and finite nonzero.
pub fn check_mesh(g: &MxGemm, mode: MxDotMode, label: &str) -> [usize; 4] {
    let d = run_clocked_mx(g, None).expect("mesh runs").out.d;
    let reference = g.reference(mode).expect("mx_dot");
    if mode == MxDotMode::Fused {
        let independent = mx_ref::gemm(g);
        for (idx, (&got, &want)) in d.iter().zip(&independent).enumerate() {
            assert_eq!(
                got,
                want,
                "{label} w={} D[{}][{}]: mesh {got:#010x}, verify::mx_ref {want:#010x}",
                g.cfg.width,
                idx / g.n,
                idx % g.n
            );
        }
    }
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
