//! Block-scaled (MX, MXINT8, NVFP4) GEMMs on the weight-stationary core: A's block scale
//! travels right beside A, B's is loaded down the column with its weights and held beside
//! them (`w_scale_0`, `w_scale_1`), each PE fires one whole K-block into the partial sum
//! (`w` = the block size). D and the flags equal the functional model's `ws` order
//! (`MxGemm::functional`); D equals the independent reference `verify::mx_ref::ws_gemm`
//! (exact block sums in big integers, the fold additions by the host's `f32`); the cycles are
//! the `ws` schedule's. Every block format, several array sizes, scales of every kind.

use crate::common::waves::Waves;
use tensorcore_rtl::gemm::dispatch::Problem;
use tensorcore_rtl::gemm::{run_clocked_mx, MxGemm};
use tensorcore_rtl::hw::ws::WsSchedule;
use tensorcore_rtl::hw::{CoreConfig, Dataflow, HwError, MxSpec};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::E4M3;
use tensorcore_rtl::numerics::mx::BlockFormat;
use tensorcore_rtl::rtl::TraceConfig;
use tensorcore_rtl::verify;

/// The clocked `ws` run against the functional model (D, flags), the independent reference
/// (D) and the schedule (cycles).
fn check(g: &MxGemm) {
    let label = format!(
        "{} on {} x {} ws, {}x{}x{}",
        g.spec.a.name(),
        g.cfg.rows(),
        g.cfg.cols(),
        g.m,
        g.n,
        g.k
    );
    let run = run_clocked_mx(g, None).unwrap_or_else(|e| panic!("{label}: {e}"));
    let f = g.functional().expect("functional");
    let want: Vec<u32> = f.iter().map(|r| r.bits as u32).collect();
    assert_eq!(run.out.d, want, "{label}: D against the functional model");
    let flags = f
        .iter()
        .fold(tensorcore_rtl::numerics::flags::Flags::NONE, |a, r| {
            a | r.flags
        });
    assert_eq!(run.out.flags, flags, "{label}: flags");
    let c = verify::check(Problem::Mx(g), None, &run.out.d)
        .expect("a reference")
        .expect("an MX check");
    assert_eq!(c.reference, "verify::mx_ref ws order");
    assert!(
        c.mismatches.is_empty(),
        "{label}: {} mismatches against the ws reference",
        c.mismatches.len()
    );
    let s = WsSchedule::for_core(&g.cfg, g.m, g.n, g.k);
    assert_eq!(run.cycles, s.total_cycles(), "{label}: cycles");
}

#[test]
fn every_block_format_on_several_arrays() {
    let arrays = [(4, 4), (1, 1), (3, 5), (2, 7), (8, 8), (5, 2), (1, 3)];
    for (i, fmt) in BlockFormat::ALL.into_iter().enumerate() {
        let bs = MxSpec::new(fmt, fmt).block();
        let array = arrays[i % arrays.len()];
        // K of one fold, several, and a partial last fold.
        for (j, blocks) in [1, array.0, 2 * array.0 + 1].into_iter().enumerate() {
            let dims = (3 + i % 4, 2 + (i + j) % 5, blocks * bs);
            check(&problem(fmt, dims, array, (100 * i + j) as u64));
        }
    }
}

#[test]
fn a_width_other_than_the_block_is_refused() {
    let mut g = problem(BlockFormat::MxFp8E4M3, (4, 4, 64), (4, 4), 1);
    g.cfg = CoreConfig::new(E4M3, E4M3, AccMode::Fused, 16)
        .with_array(4, 4)
        .expect("array")
        .with_dataflow(Dataflow::Ws);
    match run_clocked_mx(&g, None) {
        Err(HwError::Unsupported(msg)) => {
            assert!(msg.contains("ws") && msg.contains("--width 32"), "{msg}");
            // The core refuses with the spec's own check, which the functional `ws` order's
            // callers (the Python package's `matmul`) run first; the block's width passes.
            match g.spec.check_ws_width(16) {
                Err(HwError::Unsupported(own)) => assert_eq!(own, msg),
                other => panic!("expected the same refusal, got {other:?}"),
            }
            assert!(g.spec.check_ws_width(32).is_ok());
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// The waves: A's scale enters each PE beside A and moves right one PE a cycle; B's scale is
/// held beside its weight (`w_scale_<set>`) and is loaded down the column as the weight is.
#[test]
fn waves_show_the_scales_beside_a_and_the_weights() {
    let g = problem(BlockFormat::MxFp8E5M2, (5, 3, 96), (3, 2), 7);
    let dir = std::env::temp_dir().join(format!("tcrtl_mx_ws_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("mx_ws.vcd");
    run_clocked_mx(&g, Some(&TraceConfig::vcd(&path))).expect("traced run");
    let waves = Waves::read(&path);
    let pe = |r: usize, c: usize, sig: &str| format!("tensor_core.mesh.pe_{r}_{c}.{sig}");
    let (rows, cols) = (3, 2);
    let (mut moved, mut held) = (0, 0);
    for t in 1..waves.cycles() {
        for r in 0..rows {
            for c in 0..cols {
                if c > 0 {
                    let here = waves.bits(&pe(r, c, "a_scale"), t);
                    assert_eq!(
                        here,
                        waves.bits(&pe(r, c - 1, "a_scale"), t - 1),
                        "a_scale at pe_{r}_{c}, {t}"
                    );
                    moved += usize::from(here.contains('1'));
                }
                for set in ["w_scale_0", "w_scale_1"] {
                    let now = waves.bits(&pe(r, c, set), t);
                    if r > 0 && now != waves.bits(&pe(r, c, set), t - 1) {
                        assert_eq!(
                            now,
                            waves.bits(&pe(r - 1, c, set), t - 1),
                            "{set} of pe_{r}_{c}, {t}"
                        );
                    }
                    held += usize::from(now.contains('1'));
                }
            }
        }
    }
    assert!(
        moved > 0 && held > 0,
        "scales seen: {moved} moving, {held} held"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A random block-scaled problem on a `rows x cols` `ws` array (width = the block size).
fn problem(
    fmt: BlockFormat,
    shape: (usize, usize, usize),
    (rows, cols): (usize, usize),
    seed: u64,
) -> MxGemm {
    let bs = MxSpec::new(fmt, fmt).block();
    crate::common::mx::random_problem(fmt, shape, (rows, cols, bs), Dataflow::Ws, seed)
}
