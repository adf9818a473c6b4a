//! Block-scaled (MX, MXINT8, NVFP4) GEMMs on the input-stationary core: B's block scale
//! travels right beside each streamed column of B, A's is loaded down the column with its row
//! of A and held beside it (`a_scale_0`, `a_scale_1`); each PE fires one whole K-block into
//! the partial sum (`w` = the block size). D and the flags equal the functional model's
//! stationary order (`MxGemm::functional`, the order `ws` adds in) and the `ws` core's run of
//! the same problem; D equals the independent reference `verify::mx_ref::ws_gemm`; the cycles
//! are the `ws` schedule's of the transposed problem. Every block format, several arrays.

use crate::common::waves::Waves;
use tensorcore_rtl::gemm::dispatch::Problem;
use tensorcore_rtl::gemm::{run_clocked_mx, MxGemm};
use tensorcore_rtl::hw::dataflow::is::is_schedule;
use tensorcore_rtl::hw::ws::WsSchedule;
use tensorcore_rtl::hw::{Dataflow, MxSpec};
use tensorcore_rtl::numerics::mx::BlockFormat;
use tensorcore_rtl::rtl::TraceConfig;
use tensorcore_rtl::verify;

/// The clocked `is` run against the functional model (D, flags), the independent reference
/// (D), the `ws` run of the same problem (D, flags) and the transposed schedule (cycles).
fn check(g: &MxGemm) {
    let label = format!(
        "{} on {} x {} is, {}x{}x{}",
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
    assert!(
        c.mismatches.is_empty(),
        "{label}: {} mismatches against {}",
        c.mismatches.len(),
        c.reference
    );
    let mut ws = g.clone();
    ws.cfg = g.cfg.with_dataflow(Dataflow::Ws);
    let w = run_clocked_mx(&ws, None).unwrap_or_else(|e| panic!("{label} as ws: {e}"));
    assert_eq!(
        (&run.out.d, run.out.flags),
        (&w.out.d, w.out.flags),
        "{label}: ws"
    );
    let s = is_schedule(&g.cfg, g.m, g.n, g.k);
    assert_eq!(s, WsSchedule::for_core(&g.cfg, g.n, g.m, g.k));
    assert_eq!(run.cycles, s.total_cycles(), "{label}: cycles");
}

/// A random block-scaled problem on a `rows x cols` `is` array (width = the block size).
fn problem(
    fmt: BlockFormat,
    shape: (usize, usize, usize),
    (rows, cols): (usize, usize),
    seed: u64,
) -> MxGemm {
    let bs = MxSpec::new(fmt, fmt).block();
    crate::common::mx::random_problem(fmt, shape, (rows, cols, bs), Dataflow::Is, seed)
}

#[test]
fn every_block_format_on_several_arrays() {
    let arrays = [(4, 4), (1, 1), (3, 5), (2, 7), (8, 8), (5, 2), (1, 3)];
    for (i, fmt) in BlockFormat::ALL.into_iter().enumerate() {
        let bs = MxSpec::new(fmt, fmt).block();
        let array = arrays[i % arrays.len()];
        // K of one fold, several, and a partial last fold; M and N apart.
        for (j, blocks) in [1, array.0, 2 * array.0 + 1].into_iter().enumerate() {
            let dims = (2 + (i + j) % 5, 3 + i % 4 + j, blocks * bs);
            check(&problem(fmt, dims, array, (100 * i + j) as u64));
        }
    }
}

/// The waves of a 3 x 5 MXFP8 run: each PE holds A's block scale beside each held set
/// (`a_scale_0`, `a_scale_1`) and takes B's from the left beside `b_in`; the scale register
/// of a PE's datapath (`b_scale`) is its left neighbour's a cycle earlier.
#[test]
fn waves_show_a_scales_held_and_b_scales_moving() {
    let dir = std::env::temp_dir().join(format!("tcrtl_mx_is_waves_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("mx_is.vcd");
    let g = problem(BlockFormat::ALL[0], (4, 7, 2 * 3 * 32), (3, 5), 9);
    let run = run_clocked_mx(&g, Some(&TraceConfig::vcd(&path))).expect("traced run");
    assert_eq!(
        run.out.d,
        run_clocked_mx(&g, None).expect("untraced").out.d,
        "tracing changes nothing"
    );
    let waves = Waves::read(&path);
    let pe = |r: usize, c: usize, s: &str| format!("tensor_core.mesh.pe_{r}_{c}.{s}");
    let (mut moved, mut held) = (0, 0);
    for t in 1..waves.cycles() {
        for r in 0..3 {
            for c in 0..5 {
                for set in ["a_scale_0", "a_scale_1"] {
                    assert!(waves.has(&pe(r, c, set)), "{set}");
                    held += usize::from(waves.bits(&pe(r, c, set), t).contains('1'));
                }
                if c > 0 && waves.bits(&pe(r, c, "s1_row"), t) == "1" {
                    let here = waves.bits(&pe(r, c, "b_scale"), t);
                    assert_eq!(
                        here,
                        waves.bits(&pe(r, c - 1, "b_scale"), t - 1),
                        "B's scale at pe_{r}_{c}, cycle {t}"
                    );
                    moved += usize::from(here.contains('1'));
                }
            }
        }
    }
    assert!(!waves.has(&pe(0, 0, "w_scale_0")), "ws's names are absent");
    assert!(moved > 0 && held > 0, "scales: {moved} moving, {held} held");
    let _ = std::fs::remove_dir_all(&dir);
}
