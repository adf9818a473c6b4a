//! Checking a block-scaled GEMM on the clocked core against the functional `mx_dot` and the
//! independent `verify::mx_ref`.

use super::Rng;
use tensorcore_rtl::gemm::{run_clocked_mx, MxGemm};
use tensorcore_rtl::hw::{CoreConfig, Dataflow, MxSpec};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::{E4M3, E5M2};
use tensorcore_rtl::numerics::mx::BlockFormat;
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

/// A random element code of `fmt`'s lane format: zeros of both signs, largest finite
/// magnitudes, random codes; no NaN or infinity codes (a scale may still be NaN).
pub fn element(rng: &mut Rng, fmt: BlockFormat) -> u64 {
    let f = MxSpec::lane_format(fmt);
    let w = f.width();
    let sign = rng.below(2) << (w - 1);
    let code = match rng.below(10) {
        0 => 0,
        1 => (1 << (w - 1)) - 1,
        _ => rng.below(1 << w),
    } | sign;
    let mag = code & ((1 << (w - 1)) - 1);
    if f == E4M3 && mag == 0x7F {
        sign | 0x7E
    } else if f == E5M2 && mag >= 0x7C {
        sign | 0x7B
    } else {
        code
    }
}

/// A random scale code: E8M0 near 2^0 with some extremes and rarely NaN (0xFF); for NVFP4
/// unsigned E4M3, mostly normal, some zero and subnormal, rarely NaN (0x7F).
pub fn scale(rng: &mut Rng, fmt: BlockFormat) -> u8 {
    if fmt == BlockFormat::NvFp4 {
        return match rng.below(30) {
            0 => 0x00,
            1 => 1 + rng.below(7) as u8,
            2 => 0x7F,
            _ => (0x30 + rng.below(0x18)) as u8,
        };
    }
    match rng.below(40) {
        0 => 0x00,
        1 => 0xFE,
        2 => 0xFF,
        _ => (127 - 12 + rng.below(24)) as u8,
    }
}

/// A random block-scaled `m x n x k` problem of `fmt` on a `rows x cols` array of `dataflow`
/// at width `w` (C zeros of both signs or FP32 values near 1; NVFP4 with tensor scales 0.75
/// and -2).
pub fn random_problem(
    fmt: BlockFormat,
    (m, n, k): (usize, usize, usize),
    (rows, cols, w): (usize, usize, usize),
    dataflow: Dataflow,
    seed: u64,
) -> MxGemm {
    let mut rng = Rng(seed);
    let nv = fmt == BlockFormat::NvFp4;
    let spec = MxSpec::new(fmt, fmt).with_tensor_scales(
        nv.then_some(0.75f32.to_bits()),
        nv.then_some((-2.0f32).to_bits()),
    );
    let bs = spec.block();
    let lane = MxSpec::lane_format(fmt);
    let cfg = CoreConfig::new(lane, lane, AccMode::Fused, w)
        .with_array(rows, cols)
        .expect("a valid array")
        .with_dataflow(dataflow);
    let c = (0..m * n)
        .map(|_| match rng.below(8) {
            0 => 0x8000_0000,
            1 => 0,
            _ => {
                let e = 127 - 12 + rng.below(24) as u32;
                (rng.below(2) as u32) << 31 | e << 23 | rng.below(1 << 23) as u32
            }
        })
        .collect();
    MxGemm {
        cfg,
        spec,
        m,
        n,
        k,
        a: (0..m * k).map(|_| element(&mut rng, fmt)).collect(),
        b: (0..k * n).map(|_| element(&mut rng, fmt)).collect(),
        c,
        a_scales: (0..m * k / bs).map(|_| scale(&mut rng, fmt)).collect(),
        b_scales: (0..k / bs * n).map(|_| scale(&mut rng, fmt)).collect(),
    }
}
