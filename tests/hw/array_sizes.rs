//! Arrays of any size (`CoreConfig::with_array`, 1 to 32 rows and columns): every size from
//! 1 x 1 to 8 x 8, and 16 x 16, 1 x 32, 32 x 1 and 32 x 32, runs every format pair, mode,
//! preset and width (in rotation across the sizes, and all of them on a 3 x 5 and an 8 x 8
//! array), integer and FP16-output GEMMs; D and the flags equal the functional model and the
//! independent references (`check` of the GEMM tests), and the cycles equal the schedule's
//! formulas in R and C (`docs/timing.md`). A proptest draws random sizes with specials. Run
//! alone with `cargo test --test hw array_sizes::`.

use crate::common::Rng;
use crate::fp16_paths::dot_acc_gemm;
use crate::gemm::{check, modes, special_pattern, PAIRS};
use crate::gemm_int::{problem as int_problem, reference as int_reference};
use proptest::prelude::*;
use tensorcore_rtl::gemm::clocked::run_clocked_measured;
use tensorcore_rtl::gemm::{run_clocked, run_functional, CoreConfig, Gemm};
use tensorcore_rtl::hw::schedule::Schedule;
use tensorcore_rtl::hw::{HwError, MAX_ARRAY};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::{FP16, FP32};
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow, S4, S8, U4, U8};

const WIDTHS: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// Every size the tests cover: all of 1..=8 x 1..=8, then the large and the thin ones.
fn sizes() -> Vec<(usize, usize)> {
    let mut v: Vec<(usize, usize)> = (1..=8).flat_map(|r| (1..=8).map(move |c| (r, c))).collect();
    v.extend([(16, 16), (1, 32), (32, 1), (32, 32)]);
    v
}

/// A problem shape for a `rows x cols` array: more than one tile each way, the last ones
/// partial (capped for the 32-wide arrays, which still get two tiles a side).
fn shape(rows: usize, cols: usize, salt: usize) -> (usize, usize) {
    let m = rows + 1 + salt % rows.max(2);
    let n = cols + 1 + (salt / 3) % cols.max(2);
    (m.min(40), n.min(40))
}

/// The run's cycles against the schedule's formulas for its array: the whole run
/// `(R - L) + (tiles - 1) P + tile_cycles + R + 1` and the first tile `T + R + C - 2 + L`.
fn check_timing(g: &Gemm) {
    let s = Schedule::for_core(&g.cfg, g.m, g.n, g.k, 0);
    let r = run_clocked_measured(g, None).expect("clocked");
    let label = format!(
        "{} x {} array, {}x{}x{} w {}",
        g.cfg.rows(),
        g.cfg.cols(),
        g.m,
        g.n,
        g.k,
        g.cfg.width
    );
    assert_eq!(r.run.cycles, s.total_cycles(), "{label}: total cycles");
    assert_eq!(r.first_tile_cycles, s.tile_cycles(), "{label}: first tile");
    assert_eq!(
        r.run.tiles,
        g.m.div_ceil(g.cfg.rows()) * g.n.div_ceil(g.cfg.cols()),
        "{label}: tiles"
    );
}

#[test]
fn every_size_runs_every_format_mode_and_width_in_rotation() {
    let mut runs = 0;
    for (s, (rows, cols)) in sizes().into_iter().enumerate() {
        let (fa, fb) = PAIRS[s % PAIRS.len()];
        let ms = modes(fa, fb);
        let mode = ms[(s / PAIRS.len()) % ms.len()];
        let w = WIDTHS[s % WIDTHS.len()];
        let (m, n) = shape(rows, cols, s);
        let k = 1 + (7 * s) % 40;
        let cfg = CoreConfig::new(fa, fb, mode, w)
            .with_array(rows, cols)
            .expect("a valid array");
        let g = Gemm::random(m, n, k, cfg, 500 + s as u64).expect("problem");
        check(&g);
        check_timing(&g);
        runs += 1;
    }
    assert_eq!(runs, 64 + 4);
}

#[test]
fn every_format_pair_and_mode_on_a_3_by_5_and_an_8_by_8_array() {
    for (rows, cols) in [(3, 5), (8, 8)] {
        for (p, (fa, fb)) in PAIRS.into_iter().enumerate() {
            for (mi, mode) in modes(fa, fb).into_iter().enumerate() {
                let w = WIDTHS[(p + mi) % WIDTHS.len()];
                let cfg = CoreConfig::new(fa, fb, mode, w)
                    .with_array(rows, cols)
                    .expect("a valid array");
                let g = Gemm::random(2 * rows + 1, cols + 2, 19, cfg, (p * 10 + mi) as u64)
                    .expect("problem");
                check(&g);
            }
        }
    }
}

#[test]
fn integer_gemms_on_arrays_of_every_shape_class() {
    let mut rng = Rng(0x0051_52e5);
    let pairs = [(S8, S8), (U8, S8), (S4, U4), (U4, U4)];
    for (s, (rows, cols)) in [(1, 1), (1, 6), (5, 2), (3, 5), (8, 8), (16, 16)]
        .into_iter()
        .enumerate()
    {
        let (fa, fb) = pairs[s % pairs.len()];
        for overflow in [IntOverflow::Wrap, IntOverflow::SatFinite] {
            let im = IntMode {
                a: fa,
                b: fb,
                overflow,
            };
            let (m, n) = shape(rows, cols, s);
            let w = WIDTHS[s % WIDTHS.len()];
            let k = 1 + rng.below(60) as usize;
            let g4 = int_problem(&mut rng, im, w, m, n, k);
            let cfg = g4.cfg.with_array(rows, cols).expect("a valid array");
            let g = Gemm::new(g4.m, g4.n, g4.k, cfg, g4.a, g4.b, g4.c).expect("problem");
            let label = format!("{rows}x{cols} {fa} x {fb} {} w {w}", overflow.name());
            let clocked = run_clocked(&g, None).expect("clocked");
            assert_eq!(
                clocked.out.d,
                run_functional(&g).expect("functional").d,
                "{label}"
            );
            assert_eq!(
                clocked.out.d,
                int_reference(&g, &im),
                "{label}: i64 reference"
            );
            check_timing(&g);
        }
    }
}

#[test]
fn fp16_output_on_arrays_of_every_shape_class() {
    for (s, (rows, cols)) in [(1, 1), (2, 7), (6, 3), (8, 8)].into_iter().enumerate() {
        for mode in [AccMode::Ieee, AccMode::Fused] {
            let cfg = CoreConfig::new(FP16, FP16, mode, WIDTHS[s])
                .with_acc(FP16)
                .with_array(rows, cols)
                .expect("a valid array");
            let (m, n) = shape(rows, cols, s);
            let g = Gemm::random(m, n, 23, cfg, 70 + s as u64).expect("problem");
            let clocked = run_clocked(&g, None).expect("clocked");
            let f = run_functional(&g).expect("functional");
            assert_eq!(clocked.out, f, "{rows}x{cols} {}", mode.name());
            assert_eq!(clocked.out.d, dot_acc_gemm(&g), "{rows}x{cols} dot_acc");
        }
    }
}

#[test]
fn sizes_outside_1_to_32_are_refused_with_the_reason() {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    for (r, c) in [(0, 4), (4, 0), (MAX_ARRAY + 1, 4), (4, MAX_ARRAY + 1)] {
        match cfg.with_array(r, c) {
            Err(HwError::Unsupported(why)) => {
                assert!(why.contains("1 to 32"), "{r}x{c}: {why}")
            }
            other => panic!("{r}x{c}: {other:?}"),
        }
    }
    let big = cfg.with_array(MAX_ARRAY, 1).expect("32 x 1");
    assert_eq!((big.rows(), big.cols()), (32, 1));
    // The default is the 4 x 4 core.
    assert_eq!((cfg.rows(), cfg.cols()), (4, 4));
    assert_eq!(cfg.with_array(4, 4).expect("4 x 4"), cfg);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]
    #[test]
    fn random_arrays_and_gemms_with_specials_match(
        rows in 1usize..=8, cols in 1usize..=8,
        p in 0usize..PAIRS.len(), mi in 0usize..6, wi in 0usize..6,
        m in 1usize..18, n in 1usize..18, k in 1usize..40,
        seed in any::<u64>(),
        specials in proptest::collection::vec((0u8..3, any::<usize>(), any::<u8>(), any::<bool>()), 0..6),
    ) {
        let (fa, fb) = PAIRS[p];
        let ms = modes(fa, fb);
        let cfg = CoreConfig::new(fa, fb, ms[mi % ms.len()], WIDTHS[wi])
            .with_array(rows, cols)
            .expect("a valid array");
        let mut g = Gemm::random(m, n, k, cfg, seed).expect("problem");
        for (which, at, pick, sign) in specials {
            match which {
                0 => { let i = at % g.a.len(); g.a[i] = special_pattern(fa, pick, sign); }
                1 => { let i = at % g.b.len(); g.b[i] = special_pattern(fb, pick, sign); }
                _ => { let i = at % g.c.len(); g.c[i] = special_pattern(FP32, pick, sign) as u32; }
            }
        }
        let g = Gemm::new(g.m, g.n, g.k, g.cfg, g.a, g.b, g.c).expect("valid patterns");
        check(&g);
        check_timing(&g);
    }
}

/// The output-stationary memory path derives its stages, boxes and beats from R and C
/// (`docs/memory.md`): arrays of every shape class run through it and equal the ideal port and
/// the functional model, dense and 2:4 sparse, including those beyond one swizzle atom (the
/// tall sparse stage), tile rows of C that do not divide 16 bytes (boxes of several tiles) and
/// steps wider than one request (beats). `tests/memory/os_tma_sizes.rs` covers every size.
#[test]
fn the_memory_path_feeds_arrays_of_every_shape_class() {
    use tensorcore_rtl::gemm::run_memory;
    use tensorcore_rtl::hw::memory::MemParams;
    use tensorcore_rtl::hw::MemPortConfig;
    use tensorcore_rtl::numerics::format::E4M3;
    use tensorcore_rtl::sparse::{run_functional_sparse, run_memory_sparse, SparseGemm};
    let pc = MemPortConfig {
        params: MemParams {
            latency: 20,
            ..MemParams::default()
        },
        stages: 0,
        swizzle: true,
    };
    for (s, (rows, cols)) in [(1, 1), (1, 4), (2, 1), (2, 2), (4, 2), (3, 4), (6, 2)]
        .into_iter()
        .enumerate()
    {
        let (fa, w) = [(FP16, 1), (E4M3, 4), (FP16, 8)][s % 3];
        let cfg = CoreConfig::new(fa, fa, AccMode::Ieee, w)
            .with_array(rows, cols)
            .expect("a valid array");
        let (m, n) = shape(rows, cols, s);
        let g = Gemm::random(m, n, 40, cfg, 300 + s as u64).expect("problem");
        let mem = run_memory(&g, &pc, None).expect("memory-path run");
        let ideal = run_clocked(&g, None).expect("ideal run");
        assert_eq!(mem.run.run.out, ideal.out, "{rows}x{cols}: tma vs ideal");
        assert_eq!(
            mem.run.run.out,
            run_functional(&g).expect("functional"),
            "{rows}x{cols}"
        );
        assert!(mem.run.run.cycles >= ideal.cycles, "{rows}x{cols}");
        let sg = SparseGemm::random(m, n, 32, cfg, 400 + s as u64).expect("sparse problem");
        let smem = run_memory_sparse(&sg, &pc, None).expect("sparse memory-path run");
        assert_eq!(
            smem.run.run.out,
            run_functional_sparse(&sg).expect("sparse functional"),
            "{rows}x{cols} sparse"
        );
    }
    // Beyond one swizzle atom (`R + C > 8`): dense, and 2:4 sparse in the tall stage (E, A
    // and each B sub-box in atoms of their own); tile rows of C of 3, 6 or 8 FP32 words.
    for (rows, cols) in [(7, 2), (8, 4), (8, 8), (5, 3), (2, 6)] {
        let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1)
            .with_array(rows, cols)
            .expect("a valid array");
        let g = Gemm::random(2 * rows + 1, 9, 40, cfg, 7).expect("problem");
        let mem = run_memory(&g, &pc, None).expect("memory-path run");
        assert_eq!(
            mem.run.run.out,
            run_clocked(&g, None).expect("ideal").out,
            "{rows}x{cols}"
        );
        let sg = SparseGemm::random(9, 9, 32, cfg, 8).expect("sparse problem");
        let smem = run_memory_sparse(&sg, &pc, None).expect("sparse memory-path run");
        assert_eq!(
            smem.run.run.out,
            run_functional_sparse(&sg).expect("sparse functional"),
            "{rows}x{cols} sparse"
        );
    }
}
