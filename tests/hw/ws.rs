//! The weight-stationary core (`--dataflow ws`): D and the flags equal the functional
//! model's `ws` order bit for bit over every array size the tests cover, every format pair,
//! mode and width in rotation, integers and FP16 output; the run's cycles equal the
//! schedule's rules (`docs/timing.md`, "Weight-stationary timing"); what `ws` cannot build
//! is refused. Run alone with `cargo test --test hw ws::`.

use crate::gemm::{modes, PAIRS};
use proptest::prelude::*;
use tensorcore_rtl::gemm::clocked::run_clocked_measured;
use tensorcore_rtl::gemm::{run_clocked, run_functional, CoreConfig, Gemm};
use tensorcore_rtl::hw::ws::WsSchedule;
use tensorcore_rtl::hw::{Dataflow, HwError};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{FP16, FP32};
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow, S4, S8, U4};

pub(crate) const WIDTHS: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// The array sizes the stationary cores' tests cover: every size from 1 x 1 to 8 x 8, and
/// 16 x 16, 1 x 32, 32 x 1, 32 x 32.
pub(crate) fn sizes() -> Vec<(usize, usize)> {
    let mut v: Vec<(usize, usize)> = (1..=8).flat_map(|r| (1..=8).map(move |c| (r, c))).collect();
    v.extend([(16, 16), (1, 32), (32, 1), (32, 32)]);
    v
}

/// The `ws` configuration of `cfg` on a `rows x cols` array.
fn ws(cfg: CoreConfig, rows: usize, cols: usize) -> CoreConfig {
    cfg.with_array(rows, cols)
        .expect("a valid array")
        .with_dataflow(Dataflow::Ws)
}

/// The clocked `ws` run equals the functional model (D, flags) and the schedule (cycles).
fn check_ws(g: &Gemm) {
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
    let f = run_functional(g).expect("functional");
    let r = run_clocked_measured(g, None).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(r.run.out.d, f.d, "{label}: D");
    assert_eq!(r.run.out.flags, f.flags, "{label}: flags");
    let s = WsSchedule::for_core(&g.cfg, g.m, g.n, g.k);
    assert_eq!(r.run.cycles, s.total_cycles(), "{label}: cycles");
    let rows: u64 = (0..s.passes()).map(|p| s.pass(p).rows as u64).sum();
    assert_eq!(r.compute_cycles, rows, "{label}: one row of A fed a cycle");
}

/// A width that holds whole NVIDIA blocks (`ws` needs `w >= n`).
pub(crate) fn ws_width(mode: AccMode, w: usize) -> usize {
    match mode {
        AccMode::Nvidia(p) => w.max(p.block),
        _ => w,
    }
}

#[test]
fn every_size_runs_every_format_mode_and_width_in_rotation() {
    for (s, (rows, cols)) in sizes().into_iter().enumerate() {
        let (fa, fb) = PAIRS[s % PAIRS.len()];
        let ms = modes(fa, fb);
        let mode = ms[(s / PAIRS.len()) % ms.len()];
        let w = ws_width(mode, WIDTHS[s % WIDTHS.len()]);
        let m = (rows + 1 + s % 5).min(40);
        let n = (cols + 1 + s % 3).min(40);
        // K spanning one fold, several, and a partial last one.
        let k = 1 + (11 * s) % (3 * rows * w + 2);
        let cfg = ws(CoreConfig::new(fa, fb, mode, w), rows, cols);
        check_ws(&Gemm::random(m, n, k, cfg, 900 + s as u64).expect("problem"));
    }
}

#[test]
fn a_4x4_ws_core_runs_every_pair_mode_and_fp16_output() {
    for (fa, fb) in PAIRS {
        for mode in modes(fa, fb) {
            for (acc, w) in [(FP32, 1), (FP32, 16), (FP16, 4)] {
                let w = ws_width(mode, w);
                let base = CoreConfig::new(fa, fb, mode, w).with_acc(acc);
                let base = match mode {
                    AccMode::Nvidia(_) if acc == FP16 => continue,
                    _ => base,
                };
                let g = Gemm::random(9, 6, 37, ws(base, 4, 4), 77).expect("problem");
                check_ws(&g);
            }
        }
    }
}

/// The integer cases of the stationary cores' tests: wrap and satfinite, S8 x S8 and U4 x S4,
/// three arrays and widths, as `(configuration, rows, cols)`.
pub(crate) fn integer_cases() -> Vec<(CoreConfig, usize, usize)> {
    let mut v = Vec::new();
    for overflow in [IntOverflow::Wrap, IntOverflow::SatFinite] {
        for (a, b) in [(S8, S8), (U4, S4)] {
            let im = IntMode { a, b, overflow };
            for (rows, cols, w) in [(4, 4, 4), (3, 5, 1), (8, 2, 16)] {
                let cfg = CoreConfig::new(a.container(), b.container(), AccMode::Int(im), w);
                v.push((cfg, rows, cols));
            }
        }
    }
    v
}

#[test]
fn integer_ws_wraps_and_saturates_per_step_then_per_fold() {
    for (cfg, rows, cols) in integer_cases() {
        check_ws(&Gemm::random(7, 9, 45, ws(cfg, rows, cols), 5).expect("problem"));
    }
}

#[test]
fn long_m_runs_in_row_chunks_of_the_accumulator_depth() {
    use tensorcore_rtl::hw::ws::ACC_ROWS;
    let cfg = ws(CoreConfig::new(FP16, FP16, AccMode::Fused, 2), 2, 2);
    let g = Gemm::random(ACC_ROWS + 37, 3, 9, cfg, 3).expect("problem");
    let s = WsSchedule::for_core(&g.cfg, g.m, g.n, g.k);
    assert_eq!(s.chunks, 2);
    check_ws(&g);
}

#[test]
fn nvidia_blocks_wider_than_the_pe_are_refused() {
    let mode = AccMode::Nvidia(Preset::Hopper.params(FP16, FP16).expect("params"));
    let AccMode::Nvidia(p) = mode else {
        unreachable!()
    };
    assert!(p.block > 1);
    let cfg = ws(CoreConfig::new(FP16, FP16, mode, 1), 4, 4);
    let g = Gemm::random(4, 4, 8, cfg, 1).expect("problem");
    match run_clocked(&g, None) {
        Err(HwError::Unsupported(msg)) => {
            assert!(msg.contains("ws") && msg.contains("width"), "{msg}")
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn long_streams_keep_the_array_busy() {
    // Passes of S >= 2R - 1 rows run back to back: the period is S.
    for (rows, cols) in [(4, 4), (8, 8), (16, 16)] {
        let cfg = ws(CoreConfig::new(FP16, FP16, AccMode::Fused, 1), rows, cols);
        let s = WsSchedule::for_core(&cfg, 256, 256, 256);
        let starts = s.starts();
        for p in 1..s.passes() {
            assert_eq!(
                starts[p].1 - starts[p - 1].1,
                256,
                "{rows} x {cols}: pass {p}"
            );
        }
        let util = (256u64 * 256 * 256) as f64 / (s.total_cycles() * (rows * cols) as u64) as f64;
        assert!(util >= 0.95, "{rows} x {cols}: utilization {util}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_sizes_and_shapes_match_the_functional_model(
        rows in 1usize..=8, cols in 1usize..=8, m in 1usize..=20, n in 1usize..=12,
        k in 1usize..=70, wi in 0usize..6, p in 0usize..6, mi in 0usize..8, seed in 0u64..1000,
    ) {
        let (fa, fb) = PAIRS[p];
        let ms = modes(fa, fb);
        let mode = ms[mi % ms.len()];
        let w = ws_width(mode, WIDTHS[wi]);
        let cfg = ws(CoreConfig::new(fa, fb, mode, w), rows, cols);
        check_ws(&Gemm::random(m, n, k, cfg, seed).expect("problem"));
    }
}

#[test]
fn short_streams_alternate_a_direct_pass_and_a_wait_for_the_weight_set() {
    // S < 2R - 1: pass p + 1 follows pass p directly, pass p + 2 waits for pass p's set,
    // `R - 1` cycles after pass p's last row: two passes take S + 2R - 1 cycles.
    for (rows, m) in [(4usize, 4usize), (4, 5), (8, 3), (3, 1)] {
        let cfg = ws(CoreConfig::new(FP16, FP16, AccMode::Fused, 1), rows, 2);
        let s = WsSchedule::for_core(&cfg, m, 2, rows * 9);
        let starts = s.starts();
        for p in 2..s.passes() {
            assert_eq!(
                starts[p].1 - starts[p - 2].1,
                s.pair_cycles(m) as u64,
                "R {rows}, S {m}: passes {} and {}",
                p - 2,
                p - 1
            );
            assert_eq!(s.pair_cycles(m), m + 2 * rows - 1);
        }
        // docs/timing.md: the feeds start alternately max(S, R) and S + 2R - 1 - max(S, R)
        // cycles apart.
        let first = m.max(rows) as u64;
        for p in 1..s.passes() {
            let want = if p % 2 == 1 {
                first
            } else {
                (m + 2 * rows - 1) as u64 - first
            };
            assert_eq!(
                starts[p].1 - starts[p - 1].1,
                want,
                "R {rows}, S {m}: pass {p}"
            );
        }
        check_ws(&Gemm::random(m, 2, rows * 9, cfg, 8).expect("problem"));
    }
}
