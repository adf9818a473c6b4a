//! The weight-stationary core fed through the memory path (`--dataflow ws --memory tma`):
//! D read back from global memory and the flags equal the ideal `ws` run bit for bit (and
//! the independent `ws` reference) on every array size the `ws` tests cover, every format
//! in rotation, integers, FP16 output and the `nvidia` presets, under tight and loose memory
//! parameters; stalls only add cycles. The shared-memory reads are counted and equal what
//! the dataflow must read, written here from the problem alone: each weight tile once per
//! pass, each row of A once per pass, each row of C once per output block. Run alone with
//! `cargo test --test memory ws_tma::`.

use crate::pc;
use crate::sizes;
use proptest::prelude::*;
use tensorcore_rtl::gemm::{run_clocked, run_memory, CoreConfig, Gemm, MemRun, Problem};
use tensorcore_rtl::hw::{Dataflow, HwError, MemPortConfig};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, TF32};
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow, S8, U8};
use tensorcore_rtl::verify;

fn ws(cfg: CoreConfig, rows: usize, cols: usize) -> CoreConfig {
    cfg.with_array(rows, cols)
        .expect("a valid array")
        .with_dataflow(Dataflow::Ws)
}

/// Bytes an element of `f` occupies in memory.
fn bytes_of(f: Format) -> u64 {
    u64::from(f.width().div_ceil(8).next_power_of_two())
}

/// What the `ws` dataflow must read from shared memory for `g` (M at most 1024, one row
/// chunk): every pass reads its weight tile once (`R` rows of `w` K positions by `C`
/// columns) and each of the M rows of A once (`R * w` K positions); every output block reads
/// its M rows of C (`C` words) once.
fn ws_smem_reads(g: &Gemm) -> u64 {
    let (r, c, w) = (g.cfg.rows(), g.cfg.cols(), g.cfg.width);
    let passes = (g.n.div_ceil(c) * g.k.div_ceil(r * w)) as u64;
    let fold = (r * w) as u64;
    let weights = passes * fold * c as u64 * bytes_of(g.cfg.fmt_b);
    let a = passes * g.m as u64 * fold * bytes_of(g.cfg.fmt_a);
    let cw = (g.m * g.n.div_ceil(c) * c) as u64 * bytes_of(g.cfg.acc);
    weights + a + cw
}

/// Runs `g` ideal and through memory; compares, and returns the memory run.
fn same_as_ideal(g: &Gemm, pc: &MemPortConfig) -> MemRun {
    let label = format!(
        "{} x {} ws tma, {}x{}x{} w {} {:?} {:?}",
        g.cfg.rows(),
        g.cfg.cols(),
        g.m,
        g.n,
        g.k,
        g.cfg.width,
        g.cfg.mode,
        pc.params
    );
    let ideal = run_clocked(g, None).unwrap_or_else(|e| panic!("{label}: ideal: {e}"));
    let mem = run_memory(g, pc, None).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(mem.run.run.out.d, ideal.out.d, "{label}: D");
    assert_eq!(mem.run.run.out.flags, ideal.out.flags, "{label}: flags");
    assert!(mem.run.run.cycles >= ideal.cycles, "{label}: cycles");
    // A cycle the schedule wanted a row the supply did not have costs a cycle.
    assert!(
        mem.run.run.cycles >= ideal.cycles + mem.run.stall_cycles.min(1),
        "{label}: stalls and cycles"
    );
    // D is stored once, as column-tile panels of C words padded to 16 bytes.
    let panel_row = (g.cfg.cols() as u64 * bytes_of(g.cfg.acc)).div_ceil(16) * 16;
    assert_eq!(
        mem.counters.bytes_stored,
        (g.m * g.n.div_ceil(g.cfg.cols())) as u64 * panel_row,
        "{label}: D stored once"
    );
    assert_eq!(
        mem.run.smem_read_bytes,
        ws_smem_reads(g),
        "{label}: smem reads"
    );
    if let Some(c) = verify::check(Problem::Dense(g), None, &mem.run.run.out.d).expect("check") {
        assert!(
            c.mismatches.is_empty(),
            "{label}: {} against {}",
            c.mismatches.len(),
            c.reference
        );
    }
    mem
}

#[test]
fn every_size_matches_the_ideal_ws_core() {
    let fmts = [FP16, BF16, E4M3, E5M2, TF32];
    let widths = [1, 2, 4, 8];
    for (s, (rows, cols)) in sizes().into_iter().enumerate() {
        let f = fmts[s % fmts.len()];
        let w = widths[(s / 3) % widths.len()];
        let mode = if s % 2 == 0 {
            AccMode::Ieee
        } else {
            AccMode::Fused
        };
        let m = rows + 1 + s % 7;
        let n = cols + 1 + s % 4;
        // K spanning one fold, several, and a partial last one.
        let k = 1 + (13 * s) % (3 * rows * w + 2);
        let cfg = ws(CoreConfig::new(f, f, mode, w), rows, cols);
        let g = Gemm::random(m, n, k, cfg, 4000 + s as u64).expect("problem");
        same_as_ideal(&g, &pc(30 + (s as u32 % 4) * 40, 16, 0));
    }
}

#[test]
fn integers_fp16_output_and_presets_match_the_ideal_ws_core() {
    let p = pc(60, 24, 0);
    for (x, overflow) in [IntOverflow::Wrap, IntOverflow::SatFinite]
        .into_iter()
        .enumerate()
    {
        for (a, b) in [(S8, S8), (U8, S8)] {
            let im = IntMode { a, b, overflow };
            let cfg = CoreConfig::new(a.container(), b.container(), AccMode::Int(im), 4);
            let g = Gemm::random(11, 7, 37, ws(cfg, 3, 2), 70 + x as u64).expect("problem");
            same_as_ideal(&g, &p);
        }
    }
    for (x, (rows, cols, w)) in [(4, 4, 1), (2, 8, 4), (5, 3, 2)].into_iter().enumerate() {
        let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, w).with_acc(FP16);
        let g = Gemm::random(13, 10, 29, ws(cfg, rows, cols), 80 + x as u64).expect("problem");
        same_as_ideal(&g, &p);
    }
    for preset in [Preset::Volta, Preset::Ampere, Preset::Hopper] {
        let f = if preset == Preset::Hopper { E4M3 } else { FP16 };
        let params = preset.params(f, f).expect("preset");
        let w = params.block.max(8);
        let cfg = CoreConfig::new(f, f, AccMode::Nvidia(params), w);
        let g = Gemm::random(9, 6, 3 * w + 5, ws(cfg, 2, 3), 90).expect("problem");
        same_as_ideal(&g, &p);
    }
}

#[test]
fn a_row_chunk_longer_than_the_accumulator_and_wide_bands() {
    // M beyond the accumulator block's 1024 rows: two row chunks (the reads formula holds
    // per chunk, so the check below sums them).
    let cfg = ws(CoreConfig::new(FP16, FP16, AccMode::Ieee, 1), 4, 4);
    let g = Gemm::random(1030, 5, 9, cfg, 5).expect("problem");
    let ideal = run_clocked(&g, None).expect("ideal");
    let mem = run_memory(&g, &pc(40, 32, 0), None).expect("memory");
    assert_eq!(mem.run.run.out, ideal.out);
    // Folds of one band (F = 128 / (R w 2) = 16 folds a box) against one fold a box
    // (`--stages 1` cannot hold a band): the same D, more bytes loaded for the narrow boxes'
    // sake (each A box is a 16-byte inner extent per fold, and K = 40 spans three folds).
    let g = Gemm::random(40, 8, 40, cfg, 6).expect("problem");
    let wide = same_as_ideal(&g, &pc(100, 32, 0));
    let narrow = same_as_ideal(&g, &pc(100, 32, 1));
    assert_eq!(wide.run.run.out, narrow.run.run.out);
    assert!(wide.run.run.cycles < narrow.run.run.cycles);
}

#[test]
fn weights_are_read_once_per_pass_not_once_per_output_tile() {
    // The same GEMM in both dataflows on 4 x 4 FP16, w = 1: `os` reads B for every output
    // tile (M / R times), `ws` once per pass.
    let (m, n, k) = (32, 32, 32);
    let base = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    let os = Gemm::random(m, n, k, base, 11).expect("problem");
    let g_ws = Gemm::random(m, n, k, base.with_dataflow(Dataflow::Ws), 11).expect("problem");
    let p = pc(50, 32, 0);
    let r_os = run_memory(&os, &p, None).expect("os");
    let r_ws = same_as_ideal(&g_ws, &p);
    // os: every step of every tile reads R lanes of A and C lanes of B; C once per tile.
    let tiles = (m / 4 * n / 4) as u64;
    let os_b = tiles * k as u64 * 4 * 2;
    let os_reads = tiles * k as u64 * (4 * 2) + os_b + (m * n * 4) as u64;
    assert_eq!(r_os.run.smem_read_bytes, os_reads);
    let ws_b = (n / 4 * k.div_ceil(4)) as u64 * 4 * 4 * 2;
    assert_eq!(os_b / ws_b, (m / 4) as u64);
    assert!(r_ws.run.smem_read_bytes < r_os.run.smem_read_bytes);
    // TMA wrote into shared memory what it loaded, out-of-bounds fill included.
    assert!(r_ws.counters.tx_bytes >= r_ws.counters.bytes_loaded);
}

#[test]
fn what_the_ws_memory_path_cannot_lay_out_is_refused() {
    // 32 columns of FP16 in 16 spans: 64 lanes for one weight row.
    let cfg = ws(CoreConfig::new(FP16, FP16, AccMode::Ieee, 16), 1, 32);
    let g = Gemm::random(4, 32, 16, cfg, 1).expect("problem");
    match run_memory(&g, &pc(10, 16, 0), None) {
        Err(HwError::Unsupported(why)) => {
            assert!(
                why.contains("lanes") && why.contains("ws, --memory tma"),
                "{why}"
            )
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // A weight tile of 32 x 16 = 512 K positions: more than a box's 256 rows.
    let cfg = ws(CoreConfig::new(E4M3, E4M3, AccMode::Ieee, 16), 32, 1);
    let g = Gemm::random(4, 3, 16, cfg, 1).expect("problem");
    assert!(matches!(
        run_memory(&g, &pc(10, 16, 0), None),
        Err(HwError::Unsupported(why)) if why.contains("256")
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]
    #[test]
    fn random_problems_and_memory_parameters_match_the_ideal_ws_core(
        rows in 1usize..=6,
        cols in 1usize..=6,
        m in 1usize..40,
        n in 1usize..20,
        k in 1usize..50,
        wi in 0usize..3,
        latency in 1u32..200,
        bw in 1u32..64,
        stages in 0usize..5,
        seed in 0u64..1000,
    ) {
        let w = [1, 2, 4][wi];
        let cfg = ws(CoreConfig::new(FP16, E5M2, AccMode::Ieee, w), rows, cols);
        let g = Gemm::random(m, n, k, cfg, seed).expect("problem");
        same_as_ideal(&g, &pc(latency, bw, stages));
    }
}
