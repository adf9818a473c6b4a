//! `tma_box_2d`: TMA loads of 2-D boxes fully inside a tensor, through the clocked memory
//! system (`hw::memory::TmaHarness`: `mbarrier.init(1)`, the command with
//! `arrive.expect_tx(box bytes)`, `try_wait.parity(0)`), checked byte for byte against the
//! independent reference `verify::tma_ref` (numpy-style slicing, dense placement): fp16, fp32
//! and u8 boxes at several coordinates (each inner start at a 16-byte boundary, as the GPU
//! requires), and the load time against the documented timing
//! (`L + 4 + (N - 1) * R / B` cycles for N requests of R bytes at B bytes per cycle). The
//! waveform traces the fp16 32 x 16 load.

use crate::hw::memory::{ElemType, TensorMap};
use crate::tb::tma::{bench_params, check_load, pattern};
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "TMA 2-D box loads (fp16, fp32, u8) vs verify::tma_ref, load time vs the documented timing";

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    crate::tb::tma::trace_story(tb);
    let img = pattern(64 * 48 * 4, 11);
    let p = bench_params();
    let fp16 = TensorMap::dense(ElemType::Fp16, 0, &[64, 48], &[32, 16]);
    let trace = tb.trace();
    let run = check_load(tb, "fp16 32x16 at (8,4)", &img, fp16, [8, 4, 0, 0, 0], 0, Some(&trace))?;
    // 16 rows of 64 B: 16 requests of 64 B, one every 64 / 32 = 2 cycles.
    let want = u64::from(p.latency) + 4 + 15 * u64::from(p.request_bytes / p.bytes_per_cycle);
    tb.check_eq("fp16 32x16: cycles", run.cycles, want);
    tb.check_eq("fp16 32x16: requests", run.counters.requests, 16);
    check_load(tb, "fp16 32x16 at (32,32)", &img, fp16, [32, 32, 0, 0, 0], 1024, None)?;
    let fp32 = TensorMap::dense(ElemType::Fp32, 0, &[32, 48], &[16, 8]);
    check_load(tb, "fp32 16x8 at (4,17)", &img, fp32, [4, 17, 0, 0, 0], 4096, None)?;
    let u8m = TensorMap::dense(ElemType::U8, 0, &[128, 64], &[128, 4]);
    check_load(tb, "u8 128x4 at (0,60)", &img, u8m, [0, 60, 0, 0, 0], 128, None)?;
    Ok(())
}
