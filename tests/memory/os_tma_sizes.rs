//! The output-stationary memory path (`--memory tma`) on every array size of issue 21's set:
//! every R, C in 1..=8, and 16 x 16, 1 x 32, 32 x 1 and 32 x 32. Dense floating point (every
//! format pair, mode and preset, width 1..32 in rotation, FP32 and FP16 output), integer
//! (wrap and saturate) and 2:4 sparse: D and the flags equal the ideal-port core's, D equals
//! the independent reference (`verify::check`), the run takes at least the ideal cycles, and
//! D is stored exactly once (`bytes_stored` is `M x N` accumulator words: every C/D box holds
//! whole tiles side by side, and its columns past N are out of bounds).
//!
//! The default run samples a few cases per size; `TCRTL_OS_TMA_SWEEP=1` runs every format
//! pair, width and output format on every size (as does `cargo test --test memory
//! os_tma_sizes:: -- --include-ignored`: about 5,600 runs, a minute and a half). A proptest
//! adds random arrays of any R, C in 1..=32 (`PROPTEST_CASES`, default 12).

use crate::sizes;
use tensorcore_rtl::gemm::{run_clocked, run_memory, CoreConfig, Gemm, MemRun, Problem};
use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::MemPortConfig;
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32, TF32};
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow, S8, U8};
use tensorcore_rtl::sparse::{run_clocked_sparse, run_memory_sparse, SparseGemm};
use tensorcore_rtl::verify;

const WIDTHS: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// Dense floating-point pairs (TF32 and mixed widths included).
const DENSE_PAIRS: [(Format, Format); 7] = [
    (FP16, FP16),
    (E4M3, E4M3),
    (BF16, BF16),
    (E5M2, E4M3),
    (TF32, TF32),
    (FP16, E5M2),
    (E4M3, BF16),
];

/// 2:4 sparse pairs (A and B of 1 or 2 bytes an element).
const SPARSE_PAIRS: [(Format, Format); 5] = [
    (FP16, FP16),
    (E4M3, E4M3),
    (BF16, BF16),
    (E5M2, E4M3),
    (FP16, E4M3),
];

/// Every mode of a pair: ieee, fused, each NVIDIA preset that takes it.
fn modes(fa: Format, fb: Format) -> Vec<AccMode> {
    let mut v = vec![AccMode::Ieee, AccMode::Fused];
    for p in Preset::ALL {
        if let Ok(params) = p.params(fa, fb) {
            v.push(AccMode::Nvidia(params));
        }
    }
    v
}

/// The preset of an `nvidia` mode (by its parameters), for the reference.
fn preset_of(cfg: &CoreConfig) -> Option<Preset> {
    match cfg.mode {
        AccMode::Nvidia(params) => Preset::ALL
            .into_iter()
            .find(|p| p.params(cfg.fmt_a, cfg.fmt_b) == Ok(params)),
        _ => None,
    }
}

/// A fast memory for small problems (a short latency keeps the runs quick; the default
/// 431-cycle memory is covered by the CLI figures and the other memory tests).
fn pc(s: usize) -> MemPortConfig {
    MemPortConfig {
        params: MemParams {
            latency: [20, 60, 5][s % 3],
            bytes_per_cycle: [16, 32, 64][s % 3],
            ..MemParams::default()
        },
        ..MemPortConfig::default()
    }
}

/// A ragged problem shape for a `rows x cols` array: at least two tiles each way (the last
/// partial), capped for the 32-wide arrays.
fn shape(rows: usize, cols: usize, salt: usize) -> (usize, usize) {
    let m = rows + 1 + salt % rows.max(2);
    let n = cols + 1 + (salt / 3) % cols.max(2);
    (m.min(40), n.min(40))
}

/// The checks every memory-path run passes against its ideal-port run `ideal` (D, flags,
/// cycles) and the independent reference of `problem`, with D stored exactly once.
fn check_run(
    label: &str,
    mem: &MemRun,
    ideal: &tensorcore_rtl::gemm::ClockedRun,
    problem: Problem<'_>,
    cfg: &CoreConfig,
    (m, n): (usize, usize),
) {
    assert_eq!(
        mem.run.run.out.d, ideal.out.d,
        "{label}: D against the ideal port"
    );
    assert_eq!(
        mem.run.run.out.flags, ideal.out.flags,
        "{label}: flags against the ideal port"
    );
    assert!(
        mem.run.run.cycles >= ideal.cycles,
        "{label}: {} cycles, fewer than the ideal {}",
        mem.run.run.cycles,
        ideal.cycles
    );
    let esc = u64::from(cfg.acc.width() / 8);
    assert_eq!(
        mem.counters.bytes_stored,
        (m * n) as u64 * esc,
        "{label}: D stored exactly once"
    );
    let lay = mem.layout.os().expect("an output-stationary layout");
    assert_eq!(
        lay.box_row_bytes % 16,
        0,
        "{label}: a C/D box row is a TMA inner extent"
    );
    assert_eq!(
        lay.box_row_bytes as usize,
        lay.tiles_per_box * cfg.cols() * esc as usize,
        "{label}: a box row holds whole tile rows"
    );
    if let Some(c) = verify::check(problem, preset_of(cfg), &mem.run.run.out.d)
        .unwrap_or_else(|e| panic!("{label}: {e}"))
    {
        assert!(
            c.mismatches.is_empty(),
            "{label}: {} elements differ from {}",
            c.mismatches.len(),
            c.reference
        );
    }
}

/// A run's label: the array, the problem's shape and the core's mode.
fn label(kind: &str, cfg: &CoreConfig, (m, n, k): (usize, usize, usize)) -> String {
    format!(
        "{kind}{} x {} array, {m}x{n}x{k} {} x {} {:?} w {} acc {}",
        cfg.rows(),
        cfg.cols(),
        cfg.fmt_a.name,
        cfg.fmt_b.name,
        cfg.mode,
        cfg.width,
        cfg.acc.name
    )
}

/// Runs the dense `g` through memory and checks it.
fn dense(g: &Gemm, s: usize) {
    let label = label("", &g.cfg, (g.m, g.n, g.k));
    let ideal = run_clocked(g, None).unwrap_or_else(|e| panic!("{label}: ideal: {e}"));
    let mem = run_memory(g, &pc(s), None).unwrap_or_else(|e| panic!("{label}: memory: {e}"));
    check_run(&label, &mem, &ideal, Problem::Dense(g), &g.cfg, (g.m, g.n));
}

/// Runs the 2:4 sparse `g` through memory and checks it.
fn sparse(g: &SparseGemm, s: usize) {
    let label = label("sparse ", &g.cfg, (g.m, g.n, g.k));
    if tensorcore_rtl::hw::pe::fp::flushes_inputs(&g.cfg) {
        // The cdna2 rule: CDNA2 has no structured sparsity, so both paths refuse the run.
        let ideal = run_clocked_sparse(g, None).err().map(|e| e.to_string());
        let mem = run_memory_sparse(g, &pc(s), None)
            .err()
            .map(|e| e.to_string());
        for e in [ideal, mem] {
            let e = e.unwrap_or_else(|| panic!("{label}: a cdna2 sparse run was accepted"));
            assert!(e.contains("cdna2"), "{label}: {e}");
        }
        return;
    }
    let ideal = run_clocked_sparse(g, None).unwrap_or_else(|e| panic!("{label}: ideal: {e}"));
    let mem = run_memory_sparse(g, &pc(s), None).unwrap_or_else(|e| panic!("{label}: memory: {e}"));
    check_run(&label, &mem, &ideal, Problem::Sparse(g), &g.cfg, (g.m, g.n));
}

/// Case `x` of size `s` (`rows x cols`): the dense float, integer, FP16-output and sparse
/// problems it runs. `all` runs every pair and width of the case's kind.
fn size_cases(s: usize, (rows, cols): (usize, usize), all: bool) -> usize {
    let mut runs = 0;
    let array = |cfg: CoreConfig| cfg.with_array(rows, cols).expect("a valid array");
    let (m, n) = shape(rows, cols, s);
    // Dense floating point: a pair, mode and width in rotation (every one with `all`).
    let picks: Vec<usize> = if all {
        (0..DENSE_PAIRS.len() * WIDTHS.len()).collect()
    } else {
        vec![s]
    };
    for x in picks {
        let (fa, fb) = DENSE_PAIRS[x % DENSE_PAIRS.len()];
        let ms = modes(fa, fb);
        let mode = ms[(x / DENSE_PAIRS.len() + s) % ms.len()];
        let w = WIDTHS[(x + s / 2) % WIDTHS.len()];
        let k = 1 + (13 * x + 7 * s) % 150;
        let g = Gemm::random(
            m,
            n,
            k,
            array(CoreConfig::new(fa, fb, mode, w)),
            900 + (s * 64 + x) as u64,
        )
        .expect("problem");
        dense(&g, s + x);
        runs += 1;
    }
    // FP16 output (ieee or fused), on every other size (all with `all`).
    if all || s.is_multiple_of(2) {
        for (y, w) in WIDTHS
            .into_iter()
            .enumerate()
            .filter(|&(y, _)| all || y == s % 6)
        {
            let mode = [AccMode::Ieee, AccMode::Fused][(s + y) % 2];
            let (fa, fb) = [(FP16, FP16), (E4M3, E5M2), (BF16, BF16)][(s + y) % 3];
            let cfg = array(CoreConfig::new(fa, fb, mode, w).with_acc(FP16));
            let g = Gemm::random(m, n, 20 + 9 * y, cfg, 3000 + s as u64).expect("problem");
            dense(&g, s + y + 1);
            runs += 1;
        }
    }
    // Integer, on every third size (all with `all`): s8/u8, wrap and saturate.
    if all || s.is_multiple_of(3) {
        for (y, (a, b)) in [(S8, S8), (U8, S8), (S8, U8), (U8, U8)]
            .into_iter()
            .enumerate()
        {
            if !all && y != s % 4 {
                continue;
            }
            let overflow = [IntOverflow::Wrap, IntOverflow::SatFinite][(s + y) % 2];
            let im = IntMode { a, b, overflow };
            let w = WIDTHS[(s + 2 * y) % WIDTHS.len()];
            let cfg = array(CoreConfig::new(
                a.container(),
                b.container(),
                AccMode::Int(im),
                w,
            ));
            let g = Gemm::random(m, n, 30 + 11 * y, cfg, 5000 + s as u64).expect("problem");
            dense(&g, s + y + 2);
            runs += 1;
        }
    }
    // 2:4 sparse: a pair, mode, width and output format in rotation (every pair and width
    // with `all`).
    let picks: Vec<usize> = if all {
        (0..SPARSE_PAIRS.len() * WIDTHS.len()).collect()
    } else {
        vec![s]
    };
    for x in picks {
        let (fa, fb) = SPARSE_PAIRS[x % SPARSE_PAIRS.len()];
        let ms = modes(fa, fb);
        let mode = ms[(x / SPARSE_PAIRS.len() + s) % ms.len()];
        let w = WIDTHS[(x + s) % WIDTHS.len()];
        let acc = if (x + s) % 4 == 3 && matches!(mode, AccMode::Ieee | AccMode::Fused) {
            FP16
        } else {
            FP32
        };
        // K spans one or two 64-kept-value chunks.
        let k = 4 * (1 + (5 * x + 3 * s) % 48);
        let cfg = array(CoreConfig::new(fa, fb, mode, w).with_acc(acc));
        let g =
            SparseGemm::random(m, n, k, cfg, 7000 + (s * 64 + x) as u64).expect("sparse problem");
        sparse(&g, s + x + 3);
        runs += 1;
    }
    runs
}

/// A few cases on every size of the set (the default `cargo test`).
#[test]
fn every_size_runs_through_memory_dense_integer_fp16_out_and_sparse() {
    let all = std::env::var("TCRTL_OS_TMA_SWEEP").is_ok_and(|v| v == "1");
    let mut runs = 0;
    for (s, size) in sizes().into_iter().enumerate() {
        runs += size_cases(s, size, all);
    }
    assert!(runs >= 2 * 68, "{runs} runs");
}

/// Every format pair and width of every kind on every size: the full sweep
/// (`TCRTL_OS_TMA_SWEEP=1` does the same in the default test).
#[test]
#[ignore = "minutes: the exhaustive sweep over every size, pair and width"]
fn every_size_every_pair_and_width_sweep() {
    for (s, size) in sizes().into_iter().enumerate() {
        size_cases(s, size, true);
    }
}

/// The layouts the new sizes take: a C/D box row is the least common multiple of a tile
/// row and 16 bytes (whole tiles side by side), and the sizes that ran before keep theirs.
#[test]
fn cd_boxes_hold_whole_tiles_side_by_side() {
    for (rows, cols, acc, box_row, tiles) in [
        (4, 4, FP32, 16, 1),
        (4, 4, FP16, 16, 2),
        (2, 1, FP32, 16, 4),
        (5, 3, FP32, 48, 4),
        (5, 3, FP16, 48, 8),
        (2, 6, FP32, 48, 2),
        (3, 7, FP16, 112, 8),
        (16, 16, FP32, 64, 1),
        (32, 32, FP32, 128, 1),
        (1, 32, FP16, 64, 1),
    ] {
        let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1)
            .with_acc(acc)
            .with_array(rows, cols)
            .expect("array");
        let lay = tensorcore_rtl::hw::MemLayout::new(&cfg, 40, 40, 32, &MemPortConfig::default())
            .expect("layout");
        assert_eq!(
            (lay.box_row_bytes, lay.tiles_per_box),
            (box_row, tiles),
            "{rows} x {cols} {}",
            acc.name
        );
    }
}

/// Random cases of the proptest below: `PROPTEST_CASES`, else 12 (400 pass in about 20 s).
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: cases(), ..Default::default() })]
    /// Any R, C in 1..=32 (not only the set above), a random shape, pair, mode, width and
    /// output format, dense or 2:4 sparse: the same checks.
    #[test]
    fn any_array_size_matches_the_ideal_port(
        rows in 1usize..=32, cols in 1usize..=32,
        m in 1usize..40, n in 1usize..40, kq in 1usize..40,
        pick in 0usize..1000, sparse_run in proptest::bool::ANY, seed in proptest::num::u64::ANY,
    ) {
        let w = WIDTHS[pick % WIDTHS.len()];
        let fp16_out = pick % 5 == 4;
        let (pairs, k): (&[(Format, Format)], usize) = if sparse_run {
            (&SPARSE_PAIRS, 4 * kq)
        } else {
            (&DENSE_PAIRS, 3 * kq)
        };
        let (fa, fb) = pairs[(pick / 7) % pairs.len()];
        let mode = if fp16_out {
            [AccMode::Ieee, AccMode::Fused][pick % 2]
        } else {
            let ms = modes(fa, fb);
            ms[(pick / 3) % ms.len()]
        };
        let acc = if fp16_out { FP16 } else { FP32 };
        let cfg = CoreConfig::new(fa, fb, mode, w)
            .with_acc(acc)
            .with_array(rows, cols)
            .expect("a valid array");
        if sparse_run {
            let g = SparseGemm::random(m, n, k, cfg, seed).expect("sparse problem");
            sparse(&g, pick);
        } else {
            let g = Gemm::random(m, n, k, cfg, seed).expect("problem");
            dense(&g, pick);
        }
    }
}
