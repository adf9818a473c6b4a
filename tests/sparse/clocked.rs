//! The clocked 2:4 sparse tensor core: bit-for-bit equality with the sparse functional model
//! (every format pair, every mode and preset, every width; proptest on small shapes), with
//! the independent reference `verify::sparse` (ieee, fused, and exact through a single-step
//! fused run), and the half-length compute phase (schedule formula against measured cycles).

use proptest::prelude::*;
use tensorcore_rtl::gemm::problem::WIDTHS;
use tensorcore_rtl::gemm::{run_clocked, CoreConfig};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16};
use tensorcore_rtl::sparse::clocked::{compute_cycles, dense_schedule, sparse_schedule};
use tensorcore_rtl::sparse::{run_clocked_sparse_measured, run_functional_sparse, SparseGemm};
use tensorcore_rtl::verify::sparse::{sparse_reference, SparseRef};

const PAIRS: [(Format, Format); 6] = [
    (E4M3, E4M3),
    (E5M2, E5M2),
    (FP16, FP16),
    (BF16, BF16),
    (E4M3, E5M2),
    (E5M2, E4M3),
];

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48)
}

fn config(fa: Format, fb: Format, mode: AccMode, width: usize) -> CoreConfig {
    CoreConfig::new(fa, fb, mode, width)
}

/// Modes 0..6: ieee, fused, nvidia with each of the four presets (skipped where the preset
/// does not take the format pair).
fn mode(i: usize, fa: Format, fb: Format) -> Option<AccMode> {
    match i {
        0 => Some(AccMode::Ieee),
        1 => Some(AccMode::Fused),
        p => Preset::ALL[p - 2].params(fa, fb).ok().map(AccMode::Nvidia),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Clocked sparse D and flags equal the sparse functional model bit for bit.
    #[test]
    fn clocked_sparse_equals_functional(
        pair in 0usize..6, mi in 0usize..6, wi in 0usize..6,
        m in 1usize..7, n in 1usize..7, groups in 1usize..7, seed in any::<u64>(),
    ) {
        let (fa, fb) = PAIRS[pair];
        let Some(mode) = mode(mi, fa, fb) else { return Ok(()) };
        let cfg = config(fa, fb, mode, WIDTHS[wi]);
        let g = SparseGemm::random(m, n, 4 * groups, cfg, seed).unwrap();
        let want = run_functional_sparse(&g).unwrap();
        let got = run_clocked_sparse_measured(&g, None).unwrap();
        prop_assert_eq!(&got.run.out.d, &want.d, "{} {:?} w={}", fa, mode.name(), cfg.width);
        prop_assert_eq!(got.run.out.flags, want.flags);
        prop_assert_eq!(got.run.cycles, sparse_schedule(&g).total_cycles());
    }

    /// ieee and fused clocked sparse runs equal the independent reference; a fused run whose
    /// single step covers every kept product rounds once, so it equals the exact reference.
    #[test]
    fn clocked_sparse_equals_reference(
        pair in 0usize..6, wi in 0usize..6,
        m in 1usize..6, n in 1usize..6, groups in 1usize..6, seed in any::<u64>(),
    ) {
        let (fa, fb) = PAIRS[pair];
        let w = WIDTHS[wi];
        for (mode, how) in [(AccMode::Ieee, SparseRef::Ieee), (AccMode::Fused, SparseRef::Fused { width: w })] {
            let g = SparseGemm::random(m, n, 4 * groups, config(fa, fb, mode, w), seed).unwrap();
            let got = run_clocked_sparse_measured(&g, None).unwrap().run.out.d;
            prop_assert_eq!(got, sparse_reference(&g.reference_operands(), how), "{} x {} {:?}", fa, fb, how);
        }
        let k = 4 * groups.min(8);
        let g = SparseGemm::random(m, n, k, config(fa, fb, AccMode::Fused, 32), seed).unwrap();
        prop_assert!(k / 2 <= 32);
        let got = run_clocked_sparse_measured(&g, None).unwrap().run.out.d;
        prop_assert_eq!(got, sparse_reference(&g.reference_operands(), SparseRef::Exact), "exact {} x {}", fa, fb);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases() / 2))]

    /// Arrays of other sizes (`CoreConfig::with_array`, 1 to 8 rows and columns): clocked
    /// sparse D and flags equal the sparse functional model, the cycles the sparse schedule's
    /// formula, and ieee runs the independent reference.
    #[test]
    fn clocked_sparse_on_arrays_of_other_sizes(
        rows in 1usize..=8, cols in 1usize..=8,
        pair in 0usize..6, mi in 0usize..6, wi in 0usize..6,
        m in 1usize..14, n in 1usize..14, groups in 1usize..6, seed in any::<u64>(),
    ) {
        let (fa, fb) = PAIRS[pair];
        let Some(mode) = mode(mi, fa, fb) else { return Ok(()) };
        let cfg = config(fa, fb, mode, WIDTHS[wi]).with_array(rows, cols).unwrap();
        let g = SparseGemm::random(m, n, 4 * groups, cfg, seed).unwrap();
        let want = run_functional_sparse(&g).unwrap();
        let got = run_clocked_sparse_measured(&g, None).unwrap();
        let label = format!("{rows}x{cols} {fa} {:?} w={}", mode.name(), cfg.width);
        prop_assert_eq!(&got.run.out.d, &want.d, "{}", label);
        prop_assert_eq!(got.run.out.flags, want.flags);
        prop_assert_eq!(got.run.cycles, sparse_schedule(&g).total_cycles(), "{}", label);
        if mode == AccMode::Ieee {
            prop_assert_eq!(&got.run.out.d, &sparse_reference(&g.reference_operands(), SparseRef::Ieee), "{}", label);
        }
    }
}

/// A sparse tile's compute phase takes half the dense steps: schedule formula against the
/// measured cycles of both runs (sparse on the compressed A, dense on the decompressed one).
#[test]
fn sparse_compute_phase_is_half_the_dense_one() {
    for (m, n, k, w) in [(4, 4, 32, 1), (8, 4, 64, 2), (4, 8, 128, 4), (8, 8, 256, 8)] {
        let g = SparseGemm::random(m, n, k, config(FP16, FP16, AccMode::Ieee, w), 5).unwrap();
        let (ss, ds) = (sparse_schedule(&g), dense_schedule(&g));
        assert_eq!(ss.steps, k / 2 / w);
        assert_eq!(ds.steps, k / w);
        assert_eq!(2 * ss.steps, ds.steps, "{m}x{n}x{k} w={w}");
        let sparse = run_clocked_sparse_measured(&g, None).unwrap();
        let dense = tensorcore_rtl::gemm::clocked::run_clocked_measured(&g.dense(), None).unwrap();
        assert_eq!(sparse.run.cycles, ss.total_cycles());
        assert_eq!(dense.run.cycles, ds.total_cycles());
        assert_eq!(sparse.compute_cycles, compute_cycles(&ss));
        assert_eq!(dense.compute_cycles, compute_cycles(&ds));
        // One tile: fill + T + drain; the T part halves.
        assert_eq!(sparse.first_tile_cycles, ss.tile_cycles());
        assert_eq!(
            dense.first_tile_cycles - sparse.first_tile_cycles,
            (ds.steps - ss.steps) as u64
        );
        // ieee on finite operands: the dense run on the decompressed A gives the same D
        // (up to the sign of an exact zero, which random operands do not produce here).
        let want = run_clocked(&g.dense(), None).unwrap().out.d;
        for (x, y) in sparse.run.out.d.iter().zip(&want) {
            assert!(x == y || (x | y) & 0x7FFF_FFFF == 0);
        }
    }
}

/// A B bus that does not fit one lane group (TF32 B at w = 1: four 19-bit values in 64 bits)
/// is refused when the core is built, with a message naming the format, the width and the
/// bus, not an engine error about a register's storage. Wider lanes and narrower formats
/// run.
#[test]
fn sparse_b_bus_wider_than_its_lane_group_is_refused() {
    use tensorcore_rtl::numerics::format::TF32;
    let g = SparseGemm::random(8, 8, 16, config(TF32, TF32, AccMode::Ieee, 1), 3)
        .expect("a valid problem");
    let err = tensorcore_rtl::sparse::run_clocked_sparse(&g, None)
        .expect_err("the TF32 B bus at w = 1 does not fit")
        .to_string();
    assert!(
        err.contains("tf32") && err.contains("w = 1") && err.contains("76 bits"),
        "{err}"
    );
    assert!(!err.contains("storage type"), "{err}");
    let ok = SparseGemm::random(8, 8, 16, config(TF32, TF32, AccMode::Ieee, 2), 3)
        .expect("a valid problem");
    tensorcore_rtl::sparse::run_clocked_sparse(&ok, None).expect("w = 2 fits");
}
