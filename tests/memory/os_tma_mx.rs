//! Block-scaled (MX, NVFP4) problems on the output-stationary core fed through the memory
//! path (`--dataflow os --memory tma`, [`MemoryPort::new_mx`]): A's and B's scales live in
//! global memory beside their operands (in blocks: a tile's 16-byte slots per chunk, one box
//! at inner coordinate 0), travel by TMA into
//! the same stages as their operands (one `expect_tx` for the chunk's four boxes), are read on
//! each chunk's first step beside the step's operand lanes and kept in registers, and go to
//! the array as the step's extras. D read back from global memory and the flags equal the
//! ideal-port `os` MX core bit for bit and the independent reference (`verify::check`), on
//! the `1..=8 x 1..=8` sizes (sampled by default) plus 16 x 16, 1 x 32, 32 x 1 and 32 x 32,
//! the block formats in rotation and every width MX allows in rotation, under varied memory
//! parameters; stalls only add cycles; D is stored once; the shared-memory reads equal a
//! closed form written here from the problem alone. No combination is refused on these sizes
//! (a step wider than a request is read in beats). `TCRTL_OS_MX_ALL=1` (or `--ignored`)
//! runs every size.
//!
//! [`MemoryPort::new_mx`]: tensorcore_rtl::hw::MemoryPort::new_mx

use crate::common::mx::random_problem;
use crate::pc;
use crate::sample;
use tensorcore_rtl::gemm::{run_clocked_mx, run_memory_mx, MxGemm, Problem};
use tensorcore_rtl::hw::{Dataflow, MemPortConfig};
use tensorcore_rtl::numerics::mx::BlockFormat;
use tensorcore_rtl::verify;

/// The memory parameters of sample `s`: latencies from 20 to 260 cycles, 8 to 32 bytes a
/// cycle, the automatic stage count or two or three stages.
fn pc_of(s: usize) -> MemPortConfig {
    pc(20 + (s as u32 % 4) * 80, 8 << (s % 3), [0, 0, 2, 3][s % 4])
}

/// What the `os` port must read from shared memory for the block-scaled `g` (elements and
/// scales a byte each, chunks of 128 elements of K): every tile reads, for each of its rows
/// and columns inside the problem, all `K` elements (`w` a step) and, on each chunk's first
/// step, the chunk's `128 / bs` scales; and its `R x C` C words (4 bytes each) once.
fn mx_smem_reads(g: &MxGemm) -> u64 {
    let (r, c) = (g.cfg.rows(), g.cfg.cols());
    let (tiles_m, tiles_n) = (g.m.div_ceil(r), g.n.div_ceil(c));
    let chunks = g.k.div_ceil(128);
    let per_line = (g.k + chunks * (128 / g.spec.block())) as u64;
    let lines = (tiles_n * g.m + tiles_m * g.n) as u64;
    lines * per_line + (tiles_m * tiles_n * r * c * 4) as u64
}

/// Runs the block-scaled `g` on the ideal port and through memory (`pc`); compares D, flags,
/// cycles, D stored once, the shared-memory reads, and D against the independent reference.
/// Returns the cycles (ideal, memory).
fn same_as_ideal(g: &MxGemm, pc: &MemPortConfig) -> (u64, u64) {
    let label = format!(
        "{} {} x {} os tma, {}x{}x{} w {} {:?} stages {}",
        g.spec.a.name(),
        g.cfg.rows(),
        g.cfg.cols(),
        g.m,
        g.n,
        g.k,
        g.cfg.width,
        pc.params,
        pc.stages
    );
    let ideal = run_clocked_mx(g, None).unwrap_or_else(|e| panic!("{label}: ideal: {e}"));
    let mem = run_memory_mx(g, pc, None).unwrap_or_else(|e| panic!("{label}: {e}"));
    let run = &mem.run.run;
    assert_eq!(run.out.d, ideal.out.d, "{label}: D");
    assert_eq!(run.out.flags, ideal.out.flags, "{label}: flags");
    assert!(run.cycles >= ideal.cycles, "{label}: cycles");
    assert_eq!(
        mem.counters.bytes_stored,
        (g.m * g.n * 4) as u64,
        "{label}: D stored once"
    );
    assert_eq!(
        mem.run.smem_read_bytes,
        mx_smem_reads(g),
        "{label}: smem reads"
    );
    assert!(
        mem.counters.tx_bytes >= mem.counters.bytes_loaded,
        "{label}"
    );
    let c = verify::check(Problem::Mx(g), None, &run.out.d)
        .expect("a reference")
        .expect("an MX check");
    assert!(
        c.mismatches.is_empty(),
        "{label}: {} against {}",
        c.mismatches.len(),
        c.reference
    );
    (ideal.cycles, run.cycles)
}

/// The widths MX allows for `fmt` (powers of two up to its block size).
fn widths(fmt: BlockFormat) -> Vec<usize> {
    (0..)
        .map(|e| 1usize << e)
        .take_while(|&w| w <= fmt.block_size())
        .collect()
}

/// Every sampled size, the block formats and the widths in rotation: K of one to five
/// blocks (one chunk) and, every other sample, past a chunk of 128 elements (two or three
/// chunks, the last partial).
fn sizes_run(all: bool) {
    for (s, (rows, cols)) in sample(all) {
        let fmt = BlockFormat::ALL[s % BlockFormat::ALL.len()];
        let ws = widths(fmt);
        let w = ws[(s / BlockFormat::ALL.len() + s) % ws.len()];
        let bs = fmt.block_size();
        let blocks = if s % 2 == 0 {
            1 + (7 * s) % 5
        } else {
            128 / bs + 1 + s % (256 / bs)
        };
        let shape = (rows + 1 + s % 5, cols + 1 + s % 3, bs * blocks);
        let g = mx_problem_os(fmt, shape, (rows, cols, w), 9000 + s as u64);
        same_as_ideal(&g, &pc_of(s));
    }
}

fn every_size() -> bool {
    std::env::var_os("TCRTL_OS_MX_ALL").is_some()
}

#[test]
fn block_scaled_matches_the_ideal_os_core_on_sampled_sizes() {
    sizes_run(every_size());
}

#[test]
#[ignore = "every size: run with --ignored (or TCRTL_OS_MX_ALL=1)"]
fn block_scaled_matches_the_ideal_os_core_on_every_size() {
    sizes_run(true);
}

#[test]
fn every_block_format_and_width_on_the_default_core() {
    // Each block format at each width it allows, on the 4 x 4 core, K of two chunks and a
    // partial third (the panel reused along a tile row).
    for (x, fmt) in BlockFormat::ALL.into_iter().enumerate() {
        for (y, w) in widths(fmt).into_iter().enumerate() {
            let bs = fmt.block_size();
            let k = bs * (256 / bs + 2);
            let g = mx_problem_os(fmt, (9, 7, k), (4, 4, w), 300 + (8 * x + y) as u64);
            same_as_ideal(&g, &pc(60 + 30 * y as u32, 16, 0));
        }
    }
}

#[test]
fn stream_mode_and_a_tall_array() {
    // N within one tile column (no panel: A and its scales stream through the stages), and
    // a tall array whose step's read takes several beats (32 rows of 32 bytes and scales).
    for (x, fmt) in [BlockFormat::MxFp8E5M2, BlockFormat::NvFp4]
        .into_iter()
        .enumerate()
    {
        let bs = fmt.block_size();
        let g = mx_problem_os(fmt, (6, 3, 6 * bs), (2, 4, bs), 400 + x as u64);
        same_as_ideal(&g, &pc(100, 8, 2));
        let g = mx_problem_os(fmt, (40, 5, 5 * bs), (32, 2, bs), 410 + x as u64);
        same_as_ideal(&g, &pc(40, 32, 0));
    }
}

#[test]
fn the_64x64x256_mxfp8_gemm_through_memory() {
    // The figure docs/memory.md quotes: 64 x 64 x 256 mxfp8e4m3 at w = 32 on the 4 x 4 core.
    let g = mx_problem_os(BlockFormat::MxFp8E4M3, (64, 64, 256), (4, 4, 32), 64);
    let (ideal, mem) = same_as_ideal(&g, &MemPortConfig::default());
    assert!(mem > ideal, "{mem} against {ideal}");
}

/// A random block-scaled problem on a `rows x cols` `os` array at width `w`.
fn mx_problem_os(
    fmt: BlockFormat,
    shape: (usize, usize, usize),
    array: (usize, usize, usize),
    seed: u64,
) -> MxGemm {
    random_problem(fmt, shape, array, Dataflow::Os, seed)
}
