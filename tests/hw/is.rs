//! The input-stationary core (`--dataflow is`): D and the flags equal the functional model's
//! `ws` order and (D, and the flags where it gives them) the independent reference
//! `verify::ws_ref` bit for bit, over every array size the tests cover, every format pair,
//! mode and width in rotation, integers and FP16 output; D equals the weight-stationary run
//! of the same problem; the run's cycles equal the weight-stationary schedule of the
//! transposed problem (`hw::dataflow::is::is_schedule`; `docs/timing.md`, "Input-stationary
//! timing") and the cycles of a weight-stationary run of an
//! `n x m x k` problem; what `is` does not take yet (2:4 sparse, the TMA memory path) is
//! refused with an error, not a panic. Run alone with
//! `cargo test --test hw is::`.

use crate::gemm::{modes, PAIRS};
// The sizes, widths and NVIDIA width rule are the weight-stationary tests' (`is`, like `ws`,
// needs `w >= n`).
use crate::ws::{integer_cases, sizes, ws_width, WIDTHS};
use proptest::prelude::*;
use tensorcore_rtl::gemm::clocked::run_clocked_measured;
use tensorcore_rtl::gemm::{run_clocked, run_functional, CoreConfig, Gemm};
use tensorcore_rtl::hw::dataflow::is::is_schedule;
use tensorcore_rtl::hw::ws::{WsSchedule, ACC_ROWS};
use tensorcore_rtl::hw::{Dataflow, HwError};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::flags::Flags;
use tensorcore_rtl::numerics::format::{FP16, FP32};
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow, S8};
use tensorcore_rtl::verify::gemm_ref::Reference;

/// The `is` configuration of `cfg` on a `rows x cols` array.
fn is(cfg: CoreConfig, rows: usize, cols: usize) -> CoreConfig {
    cfg.with_array(rows, cols)
        .expect("a valid array")
        .with_dataflow(Dataflow::Is)
}

/// The preset an NVIDIA mode of `g` was made from (the first in [`Preset::ALL`] whose
/// parameters for `g`'s formats and accumulator are the mode's): the independent reference
/// takes its parameters from its own table by the preset's name.
fn preset_of(g: &Gemm) -> Option<Preset> {
    let AccMode::Nvidia(params) = g.cfg.mode else {
        return None;
    };
    let (fa, fb, acc) = (g.cfg.fmt_a, g.cfg.fmt_b, g.cfg.acc);
    let p = Preset::ALL
        .into_iter()
        .find(|p| p.params_for(fa, fb, acc) == Ok(params));
    assert!(p.is_some(), "no preset gives {params:?}");
    p
}

/// The clocked `is` run against: the functional model (D, flags); the independent reference
/// in the `ws` order of the array's rows (D, and the flags where the reference gives them);
/// the weight-stationary run of the same problem (D, flags); the schedule of the transposed
/// problem (cycles, rows fed); a weight-stationary run of an `n x m x k` problem (cycles).
fn check_is(g: &Gemm) {
    let label = format!(
        "{} x {} is, {}x{}x{} w {} {:?} acc {}",
        g.cfg.rows(),
        g.cfg.cols(),
        g.m,
        g.n,
        g.k,
        g.cfg.width,
        g.cfg.mode,
        g.cfg.acc.name
    );
    assert_eq!(g.cfg.dataflow(), Dataflow::Is, "{label}");
    let r = run_clocked_measured(g, None).unwrap_or_else(|e| panic!("{label}: {e}"));

    let f = run_functional(g).expect("functional");
    assert_eq!(r.run.out.d, f.d, "{label}: D against the functional model");
    assert_eq!(
        r.run.out.flags, f.flags,
        "{label}: flags against the functional model"
    );

    let reference = Reference::for_problem(g, preset_of(g)).expect("an independent reference");
    let (want, flags) = reference
        .ws_gemm_flags(g, g.cfg.rows())
        .expect("a ws-order reference");
    assert_eq!(
        r.run.out.d,
        want,
        "{label}: D against {}",
        reference.ws_name()
    );
    if let Some(f) = flags {
        let f = Flags {
            invalid: f.invalid,
            overflow: f.overflow,
            underflow: f.underflow,
            inexact: f.inexact,
        };
        assert_eq!(r.run.out.flags, f, "{label}: flags against the reference");
    }

    // The same problem on the weight-stationary core: the same order, the same bits.
    let ws = Gemm {
        cfg: g.cfg.with_dataflow(Dataflow::Ws),
        ..g.clone()
    };
    let w = run_clocked(&ws, None).unwrap_or_else(|e| panic!("{label} in ws: {e}"));
    assert_eq!(r.run.out.d, w.out.d, "{label}: D against ws");
    assert_eq!(r.run.out.flags, w.out.flags, "{label}: flags against ws");

    // Cycles: ws's schedule of the transposed problem, `n` rows streamed, `m` columns held.
    let s = is_schedule(&g.cfg, g.m, g.n, g.k);
    assert_eq!(r.run.cycles, s.total_cycles(), "{label}: cycles");
    let t = WsSchedule::for_core(&ws.cfg, g.n, g.m, g.k);
    assert_eq!(s, t, "{label}: the transposed ws schedule");
    assert_eq!(
        r.run.cycles,
        t.total_cycles(),
        "{label}: transposed ws cycles"
    );
    let rows: u64 = (0..t.passes()).map(|p| t.pass(p).rows as u64).sum();
    assert_eq!(
        r.compute_cycles, rows,
        "{label}: one column of B fed a cycle"
    );
    // A weight-stationary run of an `n x m x k` problem takes as many cycles.
    let transposed = Gemm::random(g.n, g.m, g.k, ws.cfg, 1).expect("transposed problem");
    let wt = run_clocked(&transposed, None).unwrap_or_else(|e| panic!("{label} n x m ws: {e}"));
    assert_eq!(
        r.run.cycles, wt.cycles,
        "{label}: cycles of ws on n x m x k"
    );
}

#[test]
fn every_size_runs_every_format_mode_and_width_in_rotation() {
    for (s, (rows, cols)) in sizes().into_iter().enumerate() {
        let (fa, fb) = PAIRS[s % PAIRS.len()];
        let ms = modes(fa, fb);
        let mode = ms[(s / PAIRS.len()) % ms.len()];
        let w = ws_width(mode, WIDTHS[s % WIDTHS.len()]);
        // M and N differ (and differ from the array's sides) so a transposition shows.
        let m = (cols + 2 + s % 5).min(40);
        let n = (rows + 1 + s % 3).min(40);
        let n = if n == m { n + 1 } else { n };
        // K spanning one fold, several, and a partial last one.
        let k = 1 + (11 * s) % (3 * rows * w + 2);
        let cfg = is(CoreConfig::new(fa, fb, mode, w), rows, cols);
        check_is(&Gemm::random(m, n, k, cfg, 900 + s as u64).expect("problem"));
    }
}

#[test]
fn a_4x4_is_core_runs_every_pair_mode_and_fp16_output() {
    let mut runs = 0;
    for (fa, fb) in PAIRS {
        for mode in modes(fa, fb) {
            for (acc, w) in [(FP32, 1), (FP32, 16), (FP16, 4)] {
                if matches!(mode, AccMode::Nvidia(_)) && acc == FP16 {
                    continue;
                }
                let w = ws_width(mode, w);
                let base = CoreConfig::new(fa, fb, mode, w).with_acc(acc);
                let g = Gemm::random(9, 6, 37, is(base, 4, 4), 77).expect("problem");
                check_is(&g);
                runs += 1;
            }
        }
    }
    assert!(runs >= PAIRS.len() * 5, "{runs} runs");
}

#[test]
fn integer_is_wraps_and_saturates_per_step_then_per_fold() {
    for (cfg, rows, cols) in integer_cases() {
        check_is(&Gemm::random(7, 9, 45, is(cfg, rows, cols), 5).expect("problem"));
    }
}

/// Extreme integers: every product at the top of its range, so K of them overflow int32 and
/// wrapping and saturating give different D (checked against the reference in `check_is`).
#[test]
fn integer_is_overflows_int32_the_same_as_the_reference() {
    let mut ds = Vec::new();
    for overflow in [IntOverflow::Wrap, IntOverflow::SatFinite] {
        let im = IntMode {
            a: S8,
            b: S8,
            overflow,
        };
        let cfg = is(
            CoreConfig::new(S8.container(), S8.container(), AccMode::Int(im), 4),
            3,
            2,
        );
        let (m, n, k) = (3, 4, 4 * 3 * 12 + 5);
        // -128 * -128 = 2^14 per product; ~2^17 products' worth overflows int32 in C + sum:
        // a large C pushes it over.
        let a = vec![0x80u64; m * k];
        let b = vec![0x80u64; k * n];
        let c = vec![i32::MAX as u32 - 5; m * n];
        let g = Gemm::new(m, n, k, cfg, a, b, c).expect("problem");
        check_is(&g);
        ds.push(run_clocked(&g, None).expect("clocked").out.d);
    }
    assert_ne!(ds[0], ds[1], "wrapping and saturating differ");
    assert!(ds[1].iter().all(|&d| d == i32::MAX as u32), "saturated");
}

#[test]
fn long_n_streams_in_column_chunks_of_the_accumulator_depth() {
    let cfg = is(CoreConfig::new(FP16, FP16, AccMode::Fused, 2), 2, 2);
    let g = Gemm::random(3, ACC_ROWS + 37, 9, cfg, 3).expect("problem");
    let s = is_schedule(&g.cfg, g.m, g.n, g.k);
    assert_eq!(s.chunks, 2, "two chunks of B's columns");
    assert_eq!(s.chunk_rows, ACC_ROWS);
    check_is(&g);
}

#[test]
fn nvidia_blocks_wider_than_the_pe_are_refused() {
    let mode = AccMode::Nvidia(Preset::Hopper.params(FP16, FP16).expect("params"));
    let AccMode::Nvidia(p) = mode else {
        unreachable!()
    };
    assert!(p.block > 1);
    let cfg = is(CoreConfig::new(FP16, FP16, mode, 1), 4, 4);
    let g = Gemm::random(4, 6, 8, cfg, 1).expect("problem");
    match run_clocked(&g, None) {
        Err(HwError::Unsupported(msg)) => {
            assert!(msg.contains("width") && msg.contains(" in is "), "{msg}")
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// The utilization of a clocked 256^3 FP16 fused GEMM at w = 1 on a `rows x cols` array
/// (useful MAC slots over offered ones, measured by the run), after checking its cycles
/// against the schedule.
fn utilization_256(rows: usize, cols: usize) -> f64 {
    let (m, n, k) = (256usize, 256usize, 256usize);
    let cfg = is(CoreConfig::new(FP16, FP16, AccMode::Fused, 1), rows, cols);
    let g = Gemm::random(m, n, k, cfg, 256).expect("problem");
    let r = run_clocked(&g, None).expect("clocked");
    assert_eq!(r.cycles, is_schedule(&cfg, m, n, k).total_cycles());
    let util = r.utilization();
    eprintln!(
        "{rows} x {cols}: {} cycles, utilization {util:.4}, {:.2} s",
        r.cycles, r.sim_seconds
    );
    util
}

/// A 256^3 FP16 fused GEMM at w = 1 keeps at least 95% of the MAC slots of 4 x 4, 8 x 8 and
/// 16 x 16 arrays busy, by the schedule's cycle count (1048589, 262169 and 65585 cycles, the
/// figures of docs/timing.md): every clocked run of this file takes exactly the schedule's
/// cycles, and the clocked 256^3 runs themselves are
/// [`a_256_cubed_gemm_keeps_the_arrays_busy_clocked`] (ignored by default: some 9 s of CPU
/// each).
#[test]
fn a_256_cubed_gemm_keeps_the_arrays_busy_by_the_schedule() {
    let (m, n, k) = (256usize, 256usize, 256usize);
    for (rows, want) in [(4usize, 1_048_589u64), (8, 262_169), (16, 65_585)] {
        let cfg = is(CoreConfig::new(FP16, FP16, AccMode::Fused, 1), rows, rows);
        let cycles = is_schedule(&cfg, m, n, k).total_cycles();
        assert_eq!(cycles, want, "{rows} x {rows}: docs/timing.md's figure");
        let util = (m * n * k) as f64 / (cycles * (rows * rows) as u64) as f64;
        assert!(
            util >= 0.95,
            "{rows} x {rows}: {cycles} cycles, utilization {util}"
        );
    }
}

/// The clocked 256^3 runs on 4 x 4 and 8 x 8 arrays: utilization at least 0.95, cycles the
/// schedule's (`cargo test --test hw is:: -- --ignored`).
#[test]
#[ignore]
fn a_256_cubed_gemm_keeps_the_arrays_busy_clocked() {
    for rows in [4, 8] {
        let util = utilization_256(rows, rows);
        assert!(util >= 0.95, "{rows} x {rows}: utilization {util}");
    }
}

/// The message of a refusal: an error, not a panic, that names the dataflow.
fn assert_refused<T: std::fmt::Debug>(what: &str, r: Result<T, HwError>) {
    match r {
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.contains("input-stationary"),
                "{what}: the refusal names the dataflow: {msg}"
            );
        }
        Ok(v) => panic!("{what}: expected a refusal, got {v:?}"),
    }
}

#[test]
fn sparse_and_memory_runs_are_refused() {
    use tensorcore_rtl::gemm::memory::run_memory;
    use tensorcore_rtl::gemm::{run_clocked_mx, run_memory_mx};
    use tensorcore_rtl::hw::{MemPortConfig, MxSpec};
    use tensorcore_rtl::numerics::mx::BlockFormat;
    use tensorcore_rtl::sparse::{run_clocked_sparse, run_memory_sparse, SparseGemm};

    let cfg = is(CoreConfig::new(FP16, FP16, AccMode::Ieee, 2), 4, 4);
    let pc = MemPortConfig::default();

    let sparse = SparseGemm::random(5, 6, 16, cfg, 2).expect("a sparse problem");
    assert_refused("2:4 sparse", run_clocked_sparse(&sparse, None));
    assert_refused(
        "2:4 sparse, memory path",
        run_memory_sparse(&sparse, &pc, None),
    );

    let fmt = BlockFormat::MxFp8E4M3;
    let bs = MxSpec::new(fmt, fmt).block();
    let mx = crate::common::mx::random_problem(fmt, (4, 5, 2 * bs), (4, 4, bs), Dataflow::Is, 3);
    assert_eq!(mx.cfg.dataflow(), Dataflow::Is);
    // (Block-scaled runs on the ideal store work: `tests/mx/is.rs`.)
    assert!(run_clocked_mx(&mx, None).is_ok());
    assert_refused("block-scaled, memory path", run_memory_mx(&mx, &pc, None));

    let g = Gemm::random(5, 6, 16, cfg, 4).expect("problem");
    assert_refused("the TMA memory path", run_memory(&g, &pc, None));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_sizes_and_shapes_match_the_references(
        rows in 1usize..=8, cols in 1usize..=8, m in 1usize..=12, n in 1usize..=20,
        k in 1usize..=70, wi in 0usize..6, p in 0usize..6, mi in 0usize..8, seed in 0u64..1000,
    ) {
        let (fa, fb) = PAIRS[p];
        let ms = modes(fa, fb);
        let mode = ms[mi % ms.len()];
        let w = ws_width(mode, WIDTHS[wi]);
        let cfg = is(CoreConfig::new(fa, fb, mode, w), rows, cols);
        check_is(&Gemm::random(m, n, k, cfg, seed).expect("problem"));
    }
}
