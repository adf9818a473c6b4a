//! 2:4 sparse and block-scaled (MX, NVFP4) problems on the weight-stationary core fed through
//! the memory path (`--dataflow ws --memory tma`): the compressed A's metadata E travels by
//! TMA beside A in each A stage and is read with each row of A; A's block scales likewise,
//! and B's beside the weights in each weight stage, read as a stream of their own. D read
//! back from global memory and the flags equal the ideal `ws` run bit for bit and the
//! independent references (`verify::check`), on the array sizes the `ws` tests cover, the
//! formats in rotation, under varied memory parameters; stalls only add cycles; D is stored
//! once; the shared-memory reads equal what the dataflow must read, written here from the
//! problem alone. The default run samples the `1..=8 x 1..=8` sizes (plus 16 x 16, 1 x 32,
//! 32 x 1, 32 x 32); `cargo test --test memory ws_tma_extras:: -- --ignored` runs every one.

use crate::pc;
use crate::sample;
use tensorcore_rtl::gemm::{run_clocked_mx, run_memory_mx, CoreConfig, MemRun, MxGemm, Problem};
use tensorcore_rtl::hw::{Dataflow, HwError, MemPortConfig, MxSpec};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, TF32};
use tensorcore_rtl::numerics::mx::BlockFormat;
use tensorcore_rtl::sparse::{run_clocked_sparse_measured, run_memory_sparse, SparseGemm};
use tensorcore_rtl::verify;

/// The memory parameters of sample `s`: latencies from 20 to 260 cycles, 8 to 32 bytes a
/// cycle, the automatic stage count or one or two A stages.
fn pc_of(s: usize) -> MemPortConfig {
    pc(20 + (s as u32 % 4) * 80, 8 << (s % 3), [0, 0, 1, 2][s % 4])
}

fn ws(cfg: CoreConfig, rows: usize, cols: usize) -> CoreConfig {
    cfg.with_array(rows, cols)
        .expect("a valid array")
        .with_dataflow(Dataflow::Ws)
}

/// Bytes an element of `f` occupies in memory.
fn bytes_of(f: Format) -> u64 {
    u64::from(f.width().div_ceil(8).next_power_of_two())
}

/// A refusal of the weight-stationary memory path, before the run.
fn refused<T: std::fmt::Debug>(r: &Result<T, HwError>) -> Option<String> {
    match r {
        Err(HwError::Unsupported(why)) if why.contains("(ws, --memory tma)") => Some(why.clone()),
        _ => None,
    }
}

/// The checks every run through memory passes against its ideal run: D, flags, cycles (a
/// stall costs a cycle), D stored once as column-tile panels of `C` FP32 or FP16 words
/// padded to 16 bytes, and the shared-memory reads.
fn same_run(
    label: &str,
    mem: &MemRun,
    ideal: &tensorcore_rtl::gemm::ClockedRun,
    (m, n, cfg): (usize, usize, &CoreConfig),
    reads: u64,
) {
    assert_eq!(mem.run.run.out.d, ideal.out.d, "{label}: D");
    assert_eq!(mem.run.run.out.flags, ideal.out.flags, "{label}: flags");
    assert!(mem.run.run.cycles >= ideal.cycles, "{label}: cycles");
    assert!(
        mem.run.run.cycles >= ideal.cycles + mem.run.stall_cycles.min(1),
        "{label}: stalls and cycles"
    );
    let panel_row = (cfg.cols() as u64 * bytes_of(cfg.acc)).div_ceil(16) * 16;
    assert_eq!(
        mem.counters.bytes_stored,
        (m * n.div_ceil(cfg.cols())) as u64 * panel_row,
        "{label}: D stored once"
    );
    assert_eq!(mem.run.smem_read_bytes, reads, "{label}: smem reads");
    assert!(
        mem.counters.tx_bytes >= mem.counters.bytes_loaded,
        "{label}"
    );
}

/// What the `ws` dataflow must read from shared memory for the sparse `g` (M at most 1024):
/// every pass (`ceil(N / C)` column tiles by `ceil((K/2) / (R w))` folds of kept values)
/// reads its weight tile once, `R` rows of `max(2w, 4)` dense K positions (the groups its
/// kept values select from) by `C` columns; each of the M rows of A once, `R w` kept values
/// and their metadata, 2 bits a value (`R w / 4` bytes, or where a fold may start inside a
/// byte, the `ceil((2 R w + 6) / 8)` bytes that cover it wherever it starts); every output
/// block reads its M rows of C once.
fn sparse_smem_reads(g: &SparseGemm) -> u64 {
    let (r, c, w) = (g.cfg.rows(), g.cfg.cols(), g.cfg.width);
    let fold = (r * w) as u64;
    let passes = (g.n.div_ceil(c) * (g.k / 2).div_ceil(r * w)) as u64;
    let b_lanes = if w < 2 { 4 } else { 2 * w } as u64;
    let weights = passes * r as u64 * b_lanes * c as u64 * bytes_of(g.cfg.fmt_b);
    let e = if fold.is_multiple_of(4) {
        fold / 4
    } else {
        (2 * fold + 6).div_ceil(8)
    };
    let a = passes * g.m as u64 * (fold * bytes_of(g.cfg.fmt_a) + e);
    let cw = (g.m * g.n.div_ceil(c) * c) as u64 * bytes_of(g.cfg.acc);
    weights + a + cw
}

/// What the `ws` dataflow must read for the block-scaled `g` (`w` = the block size, one
/// K-block a PE; elements and scales a byte each): every pass reads its weight tile (`R w`
/// K positions by `C` columns) and, as a stream of their own, B's `R` rows of `C` scales;
/// each row of A once a pass, `R w` elements and their `R` scales; C once per output block.
fn mx_smem_reads(g: &MxGemm) -> u64 {
    let (r, c, w) = (g.cfg.rows(), g.cfg.cols(), g.cfg.width);
    let passes = (g.n.div_ceil(c) * g.k.div_ceil(r * w)) as u64;
    let (r, c, w) = (r as u64, c as u64, w as u64);
    let weights = passes * r * (w * c + c);
    let a = passes * g.m as u64 * (r * w + r);
    let cw = (g.m * g.n.div_ceil(g.cfg.cols()) * g.cfg.cols()) as u64 * 4;
    weights + a + cw
}

/// Runs the sparse `g` ideal and through memory (`pc`); compares. Returns the refusal, if
/// the memory path refused the problem before the run.
fn sparse_same_as_ideal(g: &SparseGemm, pc: &MemPortConfig) -> Option<String> {
    let label = format!(
        "sparse {} x {} ws tma, {}x{}x{} {} w {} {:?} {:?}",
        g.cfg.rows(),
        g.cfg.cols(),
        g.m,
        g.n,
        g.k,
        g.cfg.fmt_a.name,
        g.cfg.width,
        g.cfg.mode,
        pc.params
    );
    let ideal = run_clocked_sparse_measured(g, None).unwrap_or_else(|e| panic!("{label}: {e}"));
    let mem = run_memory_sparse(g, pc, None);
    if let Some(why) = refused(&mem) {
        return Some(why);
    }
    let mem = mem.unwrap_or_else(|e| panic!("{label}: {e}"));
    same_run(
        &label,
        &mem,
        &ideal.run,
        (g.m, g.n, &g.cfg),
        sparse_smem_reads(g),
    );
    let c = verify::check(Problem::Sparse(g), None, &mem.run.run.out.d)
        .expect("a reference")
        .expect("a sparse check");
    assert!(
        c.mismatches.is_empty(),
        "{label}: {} against {}",
        c.mismatches.len(),
        c.reference
    );
    None
}

/// The sparse problem of sample `s` on `rows x cols`, at width `w`: K spanning one fold of
/// kept values, several and a partial last one.
fn sparse_problem(s: usize, (rows, cols): (usize, usize), w: usize) -> SparseGemm {
    let fmts = [FP16, BF16, E4M3, E5M2, TF32];
    let f = fmts[s % fmts.len()];
    let mode = if s.is_multiple_of(2) {
        AccMode::Ieee
    } else {
        AccMode::Fused
    };
    let m = rows + 1 + s % 7;
    let n = cols + 1 + s % 4;
    let k = 4 * (1 + (13 * s) % (rows * w + 2));
    let cfg = ws(CoreConfig::new(f, f, mode, w), rows, cols);
    SparseGemm::random(m, n, k, cfg, 7000 + s as u64).expect("problem")
}

/// Every sampled size, the formats in rotation: the rotation's width, halved while the memory
/// path refuses it (a weight row of `2w` spans of `C` columns past a request's lanes, or a
/// weight tile past a box's 256 rows: the large arrays), down to one that runs.
fn sparse_sizes(all: bool) {
    let widths = [1, 2, 4, 8];
    for (s, (rows, cols)) in sample(all) {
        let mut w = widths[(s / 3) % widths.len()];
        if s % 5 == 4 {
            // TF32: a B bus of four 32-bit values does not fit one lane group at w = 1.
            w = w.max(2);
        }
        loop {
            let g = sparse_problem(s, (rows, cols), w);
            match sparse_same_as_ideal(&g, &pc_of(s)) {
                None => break,
                Some(why) => {
                    assert!(rows > 8 || cols > 8, "{rows} x {cols} w {w}: {why}");
                    assert!(w > 2, "{rows} x {cols}: refused down to w = {w}: {why}");
                    w /= 2;
                }
            }
        }
    }
}

#[test]
fn sparse_matches_the_ideal_ws_core_on_sampled_sizes() {
    sparse_sizes(false);
}

#[test]
#[ignore = "every size: run with --ignored"]
fn sparse_matches_the_ideal_ws_core_on_every_size() {
    sparse_sizes(true);
}

/// Runs the block-scaled `g` ideal and through memory; compares. Returns the refusal, if
/// the memory path refused the problem before the run.
fn mx_same_as_ideal(g: &MxGemm, pc: &MemPortConfig) -> Option<String> {
    let label = format!(
        "{} {} x {} ws tma, {}x{}x{} {:?}",
        g.spec.a.name(),
        g.cfg.rows(),
        g.cfg.cols(),
        g.m,
        g.n,
        g.k,
        pc.params
    );
    let ideal = run_clocked_mx(g, None).unwrap_or_else(|e| panic!("{label}: {e}"));
    let mem = run_memory_mx(g, pc, None);
    if let Some(why) = refused(&mem) {
        return Some(why);
    }
    let mem = mem.unwrap_or_else(|e| panic!("{label}: {e}"));
    same_run(&label, &mem, &ideal, (g.m, g.n, &g.cfg), mx_smem_reads(g));
    let c = verify::check(Problem::Mx(g), None, &mem.run.run.out.d)
        .expect("a reference")
        .expect("an MX check");
    assert!(
        c.mismatches.is_empty(),
        "{label}: {} against {}",
        c.mismatches.len(),
        c.reference
    );
    None
}

/// Every sampled size, the block formats in rotation (K of one to `2R + 1` blocks: one fold,
/// several, a partial last one). On the large arrays a format that cannot be laid out (a
/// weight tile of `R` blocks of 32 past a box's 256 rows; 32 spans of 32 columns past a
/// request) is refused with its reason, and NVFP4 (blocks of 16) runs where it fits.
fn mx_sizes(all: bool) {
    for (s, (rows, cols)) in sample(all) {
        let fmt = BlockFormat::ALL[s % BlockFormat::ALL.len()];
        let bs = fmt.block_size();
        let shape = (
            rows + 1 + s % 5,
            cols + 1 + s % 3,
            bs * (1 + (7 * s) % (2 * rows + 1)),
        );
        let g = mx_problem_ws(fmt, shape, (rows, cols), 9000 + s as u64);
        let Some(why) = mx_same_as_ideal(&g, &pc_of(s)) else {
            continue;
        };
        assert!(rows > 8 || cols > 8, "{fmt} on {rows} x {cols}: {why}");
        assert!(why.contains("256") || why.contains("lanes"), "{why}");
        let nv = BlockFormat::NvFp4;
        let shape = (rows + 1, cols + 2, 16 * (1 + s % 3));
        let g = mx_problem_ws(nv, shape, (rows, cols), 9500 + s as u64);
        match mx_same_as_ideal(&g, &pc_of(s)) {
            None => assert!(rows * 16 <= 256, "{rows} x {cols}"),
            Some(why) => {
                assert!(rows * 16 > 256, "nvfp4 on {rows} x {cols}: {why}");
                assert!(why.contains("256 rows"), "{why}");
            }
        }
    }
}

#[test]
fn block_scaled_matches_the_ideal_ws_core_on_sampled_sizes() {
    mx_sizes(false);
}

#[test]
#[ignore = "every size: run with --ignored"]
fn block_scaled_matches_the_ideal_ws_core_on_every_size() {
    mx_sizes(true);
}

#[test]
fn every_block_format_and_odd_folds_through_memory() {
    // Each block format on a non-square array, K of three folds and a partial one.
    for (x, fmt) in BlockFormat::ALL.into_iter().enumerate() {
        let bs = fmt.block_size();
        let g = mx_problem_ws(fmt, (7, 6, 7 * bs), (3, 2), 300 + x as u64);
        assert_eq!(mx_same_as_ideal(&g, &pc(60 + 30 * x as u32, 16, 0)), None);
    }
    // 2:4 sparse at w = 1 on an odd R: a fold of R kept values starts mid-group, and its
    // metadata mid-byte (the weight tile spans 2R + 2 dense rows).
    for (x, (rows, cols, w)) in [(3, 5, 1), (5, 3, 2), (7, 1, 1), (1, 7, 1)]
        .into_iter()
        .enumerate()
    {
        let cfg = ws(CoreConfig::new(FP16, E4M3, AccMode::Ieee, w), rows, cols);
        let g = SparseGemm::random(11, 9, 4 * (3 * rows + 1), cfg, 50 + x as u64).expect("problem");
        assert_eq!(sparse_same_as_ideal(&g, &pc(40, 8, x % 3)), None);
    }
}

#[test]
fn row_chunks_longer_than_the_accumulator() {
    // M beyond the accumulator block's 1024 rows: two row chunks, the side blocks of the
    // second chunk's boxes of rows after the first's (the reads formulas hold per chunk, so
    // only D, flags and cycles are compared here).
    let cfg = ws(CoreConfig::new(FP16, FP16, AccMode::Ieee, 2), 3, 2);
    let g = SparseGemm::random(1030, 3, 24, cfg, 11).expect("problem");
    let ideal = run_clocked_sparse_measured(&g, None).expect("ideal");
    let mem = run_memory_sparse(&g, &pc(60, 32, 0), None).expect("memory");
    assert_eq!(mem.run.run.out, ideal.run.out);
    assert!(mem.run.run.cycles >= ideal.run.cycles);
    let g = mx_problem_ws(BlockFormat::NvFp4, (1030, 3, 48), (2, 2), 12);
    let ideal = run_clocked_mx(&g, None).expect("ideal");
    let mem = run_memory_mx(&g, &pc(60, 32, 0), None).expect("memory");
    assert_eq!(mem.run.run.out, ideal.out);
    assert!(mem.run.run.cycles >= ideal.cycles);
}

#[test]
fn what_the_ws_memory_path_cannot_lay_out_beside_the_operands_is_refused() {
    // MX (blocks of 32, w = 32) on 16 rows: a weight tile of 512 K positions.
    let g = mx_problem_ws(BlockFormat::MxFp8E4M3, (4, 4, 64), (16, 2), 1);
    let why = refused(&run_memory_mx(&g, &pc(10, 16, 0), None)).expect("a refusal");
    assert!(why.contains("256 rows"), "{why}");
    // MX on 32 columns: a weight row of 32 spans of 32 bytes, 64 lanes.
    let g = mx_problem_ws(BlockFormat::MxFp4, (4, 40, 64), (1, 32), 2);
    let why = refused(&run_memory_mx(&g, &pc(10, 16, 0), None)).expect("a refusal");
    assert!(why.contains("64 lanes"), "{why}");
    // 2:4 sparse FP16 at w = 8 on 32 columns: 16 spans of 64 bytes.
    let cfg = ws(CoreConfig::new(FP16, FP16, AccMode::Ieee, 8), 2, 32);
    let g = SparseGemm::random(4, 33, 32, cfg, 3).expect("problem");
    let why = refused(&run_memory_sparse(&g, &pc(10, 16, 0), None)).expect("a refusal");
    assert!(why.contains("weight row") && why.contains("lanes"), "{why}");
    // 2:4 sparse on 32 rows at w = 8: the groups of 256 kept values span 512 rows of B.
    let cfg = ws(CoreConfig::new(E4M3, E4M3, AccMode::Ieee, 8), 32, 1);
    let g = SparseGemm::random(4, 3, 64, cfg, 4).expect("problem");
    let why = refused(&run_memory_sparse(&g, &pc(10, 16, 0), None)).expect("a refusal");
    assert!(
        why.contains("2:4 sparse weight tile") && why.contains("256"),
        "{why}"
    );
}

/// A random block-scaled problem on a `rows x cols` `ws` array (width = the block size).
fn mx_problem_ws(
    fmt: BlockFormat,
    shape: (usize, usize, usize),
    (rows, cols): (usize, usize),
    seed: u64,
) -> MxGemm {
    let bs = MxSpec::new(fmt, fmt).block();
    crate::common::mx::random_problem(fmt, shape, (rows, cols, bs), Dataflow::Ws, seed)
}
