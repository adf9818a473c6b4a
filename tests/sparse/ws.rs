//! 2:4 sparsity on the weight-stationary core (`--sparse --dataflow ws`): the compressed A
//! and its selects stream in from the left, each PE's weight registers hold the dense group
//! of K positions its kept values select from. D and the flags equal the sparse functional
//! model's `ws` order bit for bit over every array size the `ws` tests cover, every format
//! pair, mode and width in rotation; D equals the independent reference (`verify::check`:
//! `ws_ref` over the kept products, its metadata decoded there from the raw nibbles); the
//! cycles are the dense `ws` schedule of `K / 2` kept positions; what cannot be built is
//! refused. Run alone with `cargo test --test sparse ws::`.

use proptest::prelude::*;
use tensorcore_rtl::gemm::dispatch::{self, Problem};
use tensorcore_rtl::gemm::problem::WIDTHS;
use tensorcore_rtl::gemm::CoreConfig;
use tensorcore_rtl::hw::ws::WsSchedule;
use tensorcore_rtl::hw::{Dataflow, MemPortConfig};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, TF32};
use tensorcore_rtl::sparse::clocked::sparse_figures;
use tensorcore_rtl::sparse::{run_clocked_sparse_measured, run_functional_sparse, SparseGemm};
use tensorcore_rtl::verify;

const PAIRS: [(Format, Format); 6] = [
    (E4M3, E4M3),
    (E5M2, E5M2),
    (FP16, FP16),
    (BF16, BF16),
    (E4M3, E5M2),
    (E5M2, E4M3),
];

/// Every size of the dense `ws` tests: 1..=8 x 1..=8, 16 x 16, 1 x 32, 32 x 1, 32 x 32.
fn sizes() -> Vec<(usize, usize)> {
    let mut v: Vec<(usize, usize)> = (1..=8).flat_map(|r| (1..=8).map(move |c| (r, c))).collect();
    v.extend([(16, 16), (1, 32), (32, 1), (32, 32)]);
    v
}

/// Modes 0..6: ieee, fused, nvidia with each of the four presets (`None` where the preset
/// does not take the pair); an `nvidia` block must fit one PE (`w >= n`), so its width is
/// raised to the block.
fn mode_and_width(i: usize, fa: Format, fb: Format, w: usize) -> Option<(AccMode, usize)> {
    match i % 6 {
        0 => Some((AccMode::Ieee, w)),
        1 => Some((AccMode::Fused, w)),
        p => Preset::ALL[p - 2]
            .params(fa, fb)
            .ok()
            .map(|n| (AccMode::Nvidia(n), w.max(n.block))),
    }
}

fn ws_config(
    fa: Format,
    fb: Format,
    mode: AccMode,
    w: usize,
    rows: usize,
    cols: usize,
) -> CoreConfig {
    CoreConfig::new(fa, fb, mode, w)
        .with_array(rows, cols)
        .expect("a valid array")
        .with_dataflow(Dataflow::Ws)
}

/// Folds of `k` positions on `rows` rows of `w` lanes: `ceil(k / (rows * w))`.
fn folds(k: usize, rows: usize, w: usize) -> usize {
    k.div_ceil(rows * w)
}

/// The clocked sparse `ws` run equals the functional model (D, flags), the independent
/// reference (D) and the dense `ws` schedule of the kept positions (cycles, rows fed).
fn check_sparse_ws(g: &SparseGemm, preset: Option<Preset>) {
    let label = format!(
        "{} x {} ws, {}x{}x{} w {} {:?}",
        g.cfg.rows(),
        g.cfg.cols(),
        g.m,
        g.n,
        g.k,
        g.cfg.width,
        g.cfg.mode
    );
    if tensorcore_rtl::hw::pe::fp::flushes_inputs(&g.cfg) {
        // The cdna2 rule: CDNA2 has no structured sparsity, so the clocked core refuses it.
        let e = run_clocked_sparse_measured(g, None)
            .err()
            .unwrap_or_else(|| panic!("{label}: a cdna2 sparse run was accepted"));
        assert!(e.to_string().contains("cdna2"), "{label}: {e}");
        return;
    }
    let f = run_functional_sparse(g).expect("functional");
    let r = run_clocked_sparse_measured(g, None).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(r.run.out.d, f.d, "{label}: D against the functional model");
    assert_eq!(r.run.out.flags, f.flags, "{label}: flags");
    let c = verify::check(Problem::Sparse(g), preset, &r.run.out.d)
        .expect("a reference")
        .expect("a sparse check");
    assert!(
        c.reference.starts_with("ws_ref("),
        "{label}: {}",
        c.reference
    );
    assert!(
        c.mismatches.is_empty(),
        "{label}: {} mismatches against {}",
        c.mismatches.len(),
        c.reference
    );
    // The schedule of `K / 2` kept positions: one row of A fed a cycle in every pass.
    let s = WsSchedule::for_core(&g.cfg, g.m, g.n, g.k / 2);
    assert_eq!(r.run.cycles, s.total_cycles(), "{label}: cycles");
    let rows_fed: u64 = (0..s.passes()).map(|p| s.pass(p).rows as u64).sum();
    assert_eq!(r.compute_cycles, rows_fed, "{label}: rows fed");
    // Half the folds of the dense problem (rounded up on each side).
    let (rows, w) = (g.cfg.rows(), g.cfg.width);
    let fig = sparse_figures(g);
    assert_eq!(fig.steps, folds(g.k / 2, rows, w), "{label}: folds");
    assert_eq!(fig.dense_steps, folds(g.k, rows, w), "{label}: dense folds");
    assert_eq!(fig.total_cycles, r.run.cycles, "{label}: figures' cycles");
}

#[test]
fn every_size_runs_every_pair_mode_and_width_in_rotation() {
    let mut ran = 0;
    for (s, (rows, cols)) in sizes().into_iter().enumerate() {
        let (fa, fb) = PAIRS[s % PAIRS.len()];
        let w = WIDTHS[(s / PAIRS.len()) % WIDTHS.len()];
        // The first mode the pair takes, starting from this size's turn.
        let Some((mode, w)) = (0..6).find_map(|i| mode_and_width(s + i, fa, fb, w)) else {
            continue;
        };
        let preset = match mode {
            AccMode::Nvidia(_) => Preset::ALL
                .into_iter()
                .find(|p| p.params(fa, fb).ok().map(AccMode::Nvidia) == Some(mode)),
            _ => None,
        };
        let m = (rows + 1 + s % 5).min(40);
        let n = (cols + 1 + s % 3).min(40);
        // K spanning one fold of kept positions, several, and a partial last one.
        let k = 4 * (1 + (7 * s) % (rows * w + 2));
        let cfg = ws_config(fa, fb, mode, w, rows, cols);
        let g = SparseGemm::random(m, n, k, cfg, 1300 + s as u64).expect("problem");
        check_sparse_ws(&g, preset);
        ran += 1;
    }
    assert_eq!(ran, sizes().len(), "every size ran");
}

#[test]
fn fp16_output_and_every_preset_on_4x4() {
    // FP16 accumulation (ieee and fused), and each preset with the pairs it takes.
    for (i, mode) in [AccMode::Ieee, AccMode::Fused].into_iter().enumerate() {
        let cfg = ws_config(FP16, FP16, mode, 2, 4, 4).with_acc(FP16);
        let g = SparseGemm::random(9, 7, 48, cfg, 40 + i as u64).expect("problem");
        check_sparse_ws(&g, None);
    }
    for (p, preset) in Preset::ALL.into_iter().enumerate() {
        for (q, (fa, fb)) in PAIRS.into_iter().enumerate() {
            let Ok(n) = preset.params(fa, fb) else {
                continue;
            };
            let cfg = ws_config(fa, fb, AccMode::Nvidia(n), n.block, 4, 4);
            let k = 8 * n.block + 4;
            let g = SparseGemm::random(6, 5, k, cfg, (10 * p + q) as u64).expect("problem");
            check_sparse_ws(&g, Some(preset));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_sizes_and_shapes_match(
        rows in 1usize..=8, cols in 1usize..=8, m in 1usize..=14, n in 1usize..=10,
        groups in 1usize..=12, wi in 0usize..6, p in 0usize..6, mi in 0usize..6,
        seed in 0u64..1000,
    ) {
        let (fa, fb) = PAIRS[p];
        if let Some((mode, w)) = mode_and_width(mi, fa, fb, WIDTHS[wi]) {
            let preset = match mode {
                AccMode::Nvidia(_) => Some(Preset::ALL[mi - 2]),
                _ => None,
            };
            let cfg = ws_config(fa, fb, mode, w, rows, cols);
            check_sparse_ws(&SparseGemm::random(m, n, 4 * groups, cfg, seed).expect("problem"), preset);
        }
    }
}

#[test]
fn what_ws_cannot_build_is_refused() {
    // The weight-stationary memory path feeds 2:4 sparse problems too (E beside A, in the
    // same stages): the same D as the ideal port (`tests/memory/ws_tma_extras.rs` covers
    // the sizes and formats).
    let cfg = ws_config(FP16, FP16, AccMode::Ieee, 2, 4, 4);
    let g = SparseGemm::random(8, 8, 32, cfg, 1).expect("problem");
    let mem = dispatch::run(Problem::Sparse(&g), Some(&MemPortConfig::default()), None)
        .expect("sparse ws through the memory path");
    let ideal = run_clocked_sparse_measured(&g, None).expect("ideal");
    assert_eq!(mem.run.out, ideal.run.out);
    assert!(mem.run.cycles >= ideal.run.cycles);
    // A B bus wider than one lane group (four TF32 values at w = 1), as in `os`.
    let cfg = ws_config(TF32, TF32, AccMode::Ieee, 1, 4, 4);
    let g = SparseGemm::random(4, 4, 8, cfg, 1).expect("problem");
    let err = run_clocked_sparse_measured(&g, None)
        .expect_err("a 128-bit B bus")
        .to_string();
    assert!(err.contains("B bus"), "{err}");
    // An NVIDIA block spread over several PEs down a column.
    let n = Preset::Hopper.params(E4M3, E4M3).expect("hopper fp8");
    let cfg = ws_config(E4M3, E4M3, AccMode::Nvidia(n), 4, 4, 4);
    let g = SparseGemm::random(4, 4, 64, cfg, 1).expect("problem");
    let err = run_clocked_sparse_measured(&g, None)
        .expect_err("a block over several PEs")
        .to_string();
    assert!(err.contains("width of at least"), "{err}");
}
