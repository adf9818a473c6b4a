//! The clocked tensor core against the functional model (bit for bit, flags included) and
//! against the independent references of `verify::exact` and `verify::nvidia_ref` (and host
//! `f32` for `ieee` with FP8/FP16 inputs), on fixed sweeps and random problems with specials.

use proptest::prelude::*;
use tensorcore_rtl::gemm::clocked::run_clocked_measured;
use tensorcore_rtl::gemm::{run_clocked, run_functional, CoreConfig, Gemm};
use tensorcore_rtl::hw::HwError;
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16};
use tensorcore_rtl::verify::exact::{as_f64, decode, fused_dot, ieee_dot};
use tensorcore_rtl::verify::nvidia_ref::{nvidia_ref_dot, ref_params};

pub(crate) const PAIRS: [(Format, Format); 6] = [
    (E4M3, E4M3),
    (E5M2, E5M2),
    (E4M3, E5M2),
    (FP16, FP16),
    (BF16, BF16),
    (FP16, BF16),
];

/// Every mode a pair can run: ieee, fused and each NVIDIA preset that supports it.
pub(crate) fn modes(fa: Format, fb: Format) -> Vec<AccMode> {
    let mut v = vec![AccMode::Ieee, AccMode::Fused];
    for p in Preset::ALL {
        if let Ok(params) = p.params(fa, fb) {
            v.push(AccMode::Nvidia(params));
        }
    }
    v
}

fn col(g: &Gemm, j: usize) -> Vec<u64> {
    g.b_col(j)
}

/// Host f32: exact products (FP8/FP16 products fit f32), then an RNE f32 add per product.
fn host_f32_dot(fa: Format, fb: Format, a: &[u64], b: &[u64], c: u32) -> u32 {
    let v = |f: Format, x: u64| as_f64(decode(f, x));
    let mut acc = f32::from_bits(c);
    for (&x, &y) in a.iter().zip(b) {
        let p = (v(fa, x) * v(fb, y)) as f32; // exact for FP8/FP16 pairs
        acc += p;
    }
    acc.to_bits()
}

fn same(x: u32, y: u32) -> bool {
    let nan = |v: u32| v & 0x7F80_0000 == 0x7F80_0000 && v & 0x7F_FFFF != 0;
    x == y || (nan(x) && nan(y))
}

/// Clocked == functional (bits and flags), and == the independent references where defined.
pub(crate) fn check(g: &Gemm) {
    let f = run_functional(g).expect("functional");
    let c = run_clocked(g, None).expect("clocked");
    assert_eq!(
        c.out.d, f.d,
        "D differs: {}x{}x{} {:?}",
        g.m, g.n, g.k, g.cfg
    );
    assert_eq!(c.out.flags, f.flags, "flags differ: {:?}", g.cfg);
    let (fa, fb) = (g.cfg.fmt_a, g.cfg.fmt_b);
    for i in 0..g.m {
        for j in 0..g.n {
            let (a, b, c0) = (g.a_row(i), col(g, j), g.c[i * g.n + j]);
            let got = c.out.d[i * g.n + j];
            let want = match g.cfg.mode {
                AccMode::Ieee => Some(ieee_dot(fa, fb, a, &b, c0)),
                AccMode::Fused => Some(fused_dot(fa, fb, a, &b, c0, g.cfg.width)),
                AccMode::Nvidia(params) => {
                    // The independent reference takes its parameters from its own table, by
                    // the preset's name (presets with equal parameters give equal results).
                    let preset = Preset::ALL
                        .into_iter()
                        .find(|p| p.params(fa, fb) == Ok(params))
                        .expect("a preset with these parameters");
                    let rp =
                        ref_params(preset, fa, fb).expect("reference parameters for the preset");
                    Some(nvidia_ref_dot(&rp, fa, fb, a, &b, c0))
                }
                AccMode::Exact | AccMode::Int(_) => None,
            };
            if let Some(w) = want {
                assert!(
                    same(got, w),
                    "reference: D[{i}][{j}] {got:#x} != {w:#x} {:?}",
                    g.cfg
                );
            }
            let host_ok =
                matches!(g.cfg.mode, AccMode::Ieee) && [fa, fb].iter().all(|f| *f != BF16);
            if host_ok {
                let h = host_f32_dot(fa, fb, a, &b, c0);
                assert!(same(got, h), "host f32: D[{i}][{j}] {got:#x} != {h:#x}");
            }
        }
    }
}

#[test]
fn every_format_mode_and_width_on_ragged_shapes() {
    for (fa, fb) in PAIRS {
        for mode in modes(fa, fb) {
            for (wi, w) in [1usize, 2, 4, 8, 16, 32].into_iter().enumerate() {
                let (m, n, k) = [
                    (5, 3, 7),
                    (4, 4, 4),
                    (1, 6, 33),
                    (6, 5, 18),
                    (3, 1, 1),
                    (2, 3, 40),
                ][wi];
                let cfg = CoreConfig::new(fa, fb, mode, w);
                let g = Gemm::random(m, n, k, cfg, 1000 + wi as u64).expect("problem");
                check(&g);
            }
        }
    }
}

#[test]
fn nvidia_probes_through_the_mesh() {
    // docs/numerics.md probe "one extra alignment bit": a0 = b0 = 1, c = -(1 - 2^-24):
    // volta -> 2^-23, ampere -> 2^-24. Placed at D[2][3] of a 3 x 4 x 4 problem.
    let one = 0x3C00u64;
    let c_val = (-(1.0f32 - 2f32.powi(-24))).to_bits();
    for (preset, want) in [
        (Preset::Volta, 2f32.powi(-23)),
        (Preset::Ampere, 2f32.powi(-24)),
    ] {
        for w in [1, 2, 4, 8] {
            let mode = AccMode::Nvidia(preset.params(FP16, FP16).expect("preset"));
            let cfg = CoreConfig::new(FP16, FP16, mode, w);
            let mut a = vec![0u64; 3 * 4];
            let mut b = vec![0u64; 4 * 4];
            let mut c = vec![0u32; 3 * 4];
            a[2 * 4] = one;
            b[3] = one;
            c[2 * 4 + 3] = c_val;
            let g = Gemm::new(3, 4, 4, cfg, a, b, c).expect("problem");
            let r = run_clocked(&g, None).expect("clocked");
            assert_eq!(r.out.d[2 * 4 + 3], want.to_bits(), "{preset} w={w}");
            check(&g);
        }
    }
}

#[test]
fn exact_mode_and_bad_widths_are_errors() {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Exact, 4);
    let g = Gemm::random(2, 2, 2, cfg, 1).expect("problem");
    assert!(matches!(
        run_clocked(&g, None),
        Err(HwError::Unsupported(_))
    ));
}

#[test]
fn large_gemm_approaches_the_ideal_cycle_count() {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Fused, 4);
    let g = Gemm::random(16, 16, 64, cfg, 5).expect("problem");
    let r = run_clocked_measured(&g, None).expect("clocked");
    assert_eq!(r.run.out, run_functional(&g).expect("functional"));
    let ideal = (16 * 16 * 64 / 4 / 16) as u64; // M*N*ceil(K/w)/16
    assert!(
        r.run.cycles < ideal + 40,
        "{} cycles vs ideal {ideal}",
        r.run.cycles
    );
    assert!(
        r.run.utilization() > 0.8,
        "utilization {}",
        r.run.utilization()
    );
}

// ---------- random problems with specials ----------

pub(crate) fn special_pattern(f: Format, pick: u8, sign: bool) -> u64 {
    let mag = match pick % 5 {
        0 => f.canonical_nan() & !f.sign_bit(),
        1 => f.infinity(false).unwrap_or(f.max_finite_magnitude()),
        2 => 1,             // smallest subnormal
        3 => f.frac_mask(), // largest subnormal
        _ => 0,             // zero
    };
    f.with_sign(mag, sign)
}

fn config_strategy() -> impl Strategy<Value = CoreConfig> {
    (0usize..PAIRS.len(), 0usize..6, 0usize..6).prop_map(|(p, mi, wi)| {
        let (fa, fb) = PAIRS[p];
        let ms = modes(fa, fb);
        CoreConfig::new(fa, fb, ms[mi % ms.len()], 1 << wi)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn random_gemms_with_specials_match(
        cfg in config_strategy(),
        m in 1usize..10, n in 1usize..10, k in 1usize..48,
        seed in any::<u64>(),
        specials in proptest::collection::vec((0u8..3, any::<usize>(), any::<u8>(), any::<bool>()), 0..6),
    ) {
        let mut g = Gemm::random(m, n, k, cfg, seed).expect("problem");
        for (which, at, pick, sign) in specials {
            match which {
                0 => { let i = at % g.a.len(); g.a[i] = special_pattern(cfg.fmt_a, pick, sign); }
                1 => { let i = at % g.b.len(); g.b[i] = special_pattern(cfg.fmt_b, pick, sign); }
                _ => {
                    let i = at % g.c.len();
                    g.c[i] = special_pattern(tensorcore_rtl::numerics::format::FP32, pick, sign) as u32;
                }
            }
        }
        let g = Gemm::new(g.m, g.n, g.k, g.cfg, g.a, g.b, g.c).expect("valid patterns");
        check(&g);
    }
}
