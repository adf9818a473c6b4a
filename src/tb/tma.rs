//! Helpers of the TMA testbenches (`tma_*`): a deterministic tensor image, one load through
//! [`run_loads`](crate::hw::memory::run_loads) checked byte for byte against the independent reference
//! [`crate::verify::tma_ref`], and a scripted run of the memory system ([`MemScript`](crate::hw::memory::MemScript)).

use super::Bench;
use crate::hw::memory::{
    run_loads, run_script, HarnessLoad, LoadRun, MemParams, MemScript, MemorySystem, Stim, Swizzle,
    TensorMap,
};
use crate::rtl::{Simulator, TraceConfig};
use crate::verify::tma_ref;

/// A deterministic byte image of `n` bytes (xorshift from `seed`).
pub fn pattern(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// The chunk mask of a swizzle mode as docs/memory.md ("Swizzle formula") states it (32B: 1,
/// 64B: 3, 128B: 7), typed in here rather than taken from the code under test.
pub fn doc_mask(s: Swizzle) -> u32 {
    match s {
        Swizzle::B32 => 1,
        Swizzle::B64 => 3,
        Swizzle::B128 => 7,
        _ => 0,
    }
}

/// Parameters for the testbenches: short latency so the waves stay readable.
pub fn bench_params() -> MemParams {
    MemParams {
        latency: 24,
        bytes_per_cycle: 32,
        request_bytes: 64,
        requests_in_flight: 16,
        smem_bytes: 32 * 1024,
        ..MemParams::default()
    }
}

/// Runs one load of `map` at `coords` into `base` (tracing if `trace` is given), adds its
/// cycles and checks the whole shared-memory image, the transaction bytes and the
/// out-of-bounds count against the reference. Returns the run.
pub fn check_load(
    tb: &mut Bench,
    what: &str,
    img: &[u8],
    map: TensorMap,
    coords: [i32; 5],
    base: u32,
    trace: Option<&TraceConfig>,
) -> Result<LoadRun, String> {
    let params = bench_params();
    let load = HarnessLoad {
        desc: 0,
        coords,
        smem_addr: base,
    };
    let (run, top) = run_loads(params, img.len() as u64 + 64, img, &[map], &[load], trace)
        .map_err(|e| format!("{what}: {e}"))?;
    tb.add_cycles(run.cycles);
    let (dense, oob) = tma_ref::dense_box(img, &map, &coords);
    let mut want = vec![0u8; params.smem_bytes as usize];
    let (row, pitch) = tma_ref::row_layout(&map);
    tma_ref::place_rows(&dense, row, pitch, base, doc_mask(map.swizzle), &mut want);
    let got = top.mem().smem_host_read(0, want.len());
    for (row, (g, w)) in got.chunks(128).zip(want.chunks(128)).enumerate() {
        if g != w || w.iter().any(|&b| b != 0) {
            tb.check_eq(format!("{what}: smem row {row}"), g, w);
        }
    }
    tb.check_eq(
        format!("{what}: tx bytes"),
        run.counters.tx_bytes,
        dense.len() as u64,
    );
    tb.check_eq(
        format!("{what}: oob elements"),
        run.counters.oob_elements,
        oob,
    );
    Ok(run)
}

/// Builds a memory system with `bars` mbarriers, `img` at global address 0 and `maps` in the
/// descriptor slots, and runs `steps` (tracing if `trace`). Returns the simulator after the
/// run and the cycles.
pub fn run_steps(
    img: &[u8],
    maps: &[TensorMap],
    bars: usize,
    steps: Vec<Stim>,
    trace: Option<&TraceConfig>,
) -> Result<(Simulator<MemScript>, u64), String> {
    let params = bench_params();
    let mut mem =
        MemorySystem::new(params, img.len() as u64 + 64, bars).map_err(|e| e.to_string())?;
    mem.host_write(0, img);
    for (i, m) in maps.iter().enumerate() {
        mem.set_descriptor(i, *m).map_err(|e| e.to_string())?;
    }
    let top = MemScript::new(mem, steps).map_err(|e| e.to_string())?;
    let mut sim = match trace {
        Some(t) => Simulator::with_trace(top, t),
        None => Simulator::new(top),
    }
    .map_err(|e| e.to_string())?;
    sim.reset(1).map_err(|e| e.to_string())?;
    let cycles = run_script(&mut sim, 1_000_000).map_err(|e| e.to_string())?;
    Ok((sim, cycles))
}

/// Narrows a TMA testbench's waveform to the signals that tell the story: the testbench FSM,
/// the TMA state, walk and handshakes, the global-memory channels, the shared-memory ports
/// and conflicts, and every mbarrier.
pub fn trace_story(tb: &mut Bench) {
    for g in [
        "tma_top.state",
        "tma_top.load",
        "script_top.step",
        "tma.state",
        "tma.cmd_*",
        "tma.k?",
        "tma.req_*",
        "tma.wr_*",
        "tma.rd_*",
        "tma.complete_tx",
        "tma.queue_count",
        "tma.stores_outstanding",
        "gmem.req_*",
        "gmem.resp_*",
        "gmem.in_flight",
        "gmem.credit",
        "smem.rd_*",
        "smem.wr_*",
        "smem.conflict",
        "smem.bank_conflicts",
        "mbar_*",
    ] {
        tb.trace_only(g);
    }
}
