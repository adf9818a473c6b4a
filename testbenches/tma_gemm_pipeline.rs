//! `tma_gemm_pipeline`: GEMMs through the memory path (global memory -> TMA -> shared-memory
//! stages -> feeder -> mesh -> shared memory -> TMA store -> global memory). A 12 x 16 x 256
//! FP16 GEMM, double-buffered (two operand stages) with a 24-cycle memory, is traced: its waves
//! show TMA loads of the next K-chunk in flight while the mesh computes the current one. Then
//! the same problem with the stage count chosen to cover a 400-cycle latency, and an E4M3
//! NVIDIA-Hopper GEMM (w = 4) on ragged shapes. Every element of D, read back from global
//! memory, is checked against the independent reference and against the ideal path; the
//! overlap of loads and compute, the bytes moved and the stall bound are checked too.

use crate::gemm::{CoreConfig, Gemm, Problem};
use crate::hw::memory::MemParams;
use crate::hw::MemPortConfig;
use crate::numerics::dot::{AccMode, Preset};
use crate::numerics::format::{E4M3, FP16};
use crate::tb::Bench;
use crate::verify::gemm_ref::Reference;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str =
    "double-buffered GEMM through TMA and shared memory: loads overlap compute; D vs references";

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    let fp16 = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    let hopper = CoreConfig::new(E4M3, E4M3, AccMode::Nvidia(Preset::Hopper.params(E4M3, E4M3).map_err(|e| e.to_string())?), 4);
    let mem = |latency, bw, stages| MemPortConfig {
        params: MemParams {
            latency,
            bytes_per_cycle: bw,
            ..MemParams::default()
        },
        stages,
        swizzle: true,
    };
    let cases = [
        ("fp16 double-buffered", fp16, (12, 16, 256), mem(24, 32, 2), None, true),
        ("fp16 latency 400", fp16, (12, 16, 256), mem(400, 16, 0), None, false),
        ("e4m3 hopper w4", hopper, (7, 10, 300), mem(100, 32, 0), Some(Preset::Hopper), false),
    ];
    for (seed, (label, cfg, (m, n, k), pc, preset, traced)) in cases.into_iter().enumerate() {
        let g = Gemm::random(m, n, k, cfg, 40 + seed as u64).map_err(|e| e.to_string())?;
        let trace = traced.then(|| {
            // The pipeline's story: steps into the array, TMA commands and requests in flight,
            // the two stages' barriers, the ring of stages, conflicts.
            for glob in [
                "controller.state",
                "controller.take",
                "controller.stall",
                "controller.feed_tile",
                "mem.arbiter.tma_cmd",
                "mem.tma.cmd_valid",
                "mem.tma.cmd_ready",
                "mem.gmem.req_valid",
                "mem.gmem.in_flight",
                "mem.gmem.resp_valid",
                "mem.mbar_0.phase",
                "mem.mbar_0.tx",
                "mem.mbar_1.phase",
                "mem.mbar_1.tx",
                "mem.producer.producer_chunk",
                "mem.consumer.released",
                "mem.rd_accept",
                "mem.smem.conflict",
            ] {
                tb.trace_only(glob);
            }
            tb.trace()
        });
        let r = tb
            .run_gemm(Problem::Dense(&g), Some(&pc), trace.as_ref())
            .map_err(|e| format!("{label}: {e}"))?
            .memory
            .ok_or_else(|| format!("{label}: a memory-path run without its counters"))?;
        let run = &r.run.run;
        tb.add_cycles(run.cycles);
        tb.check_waveform(label, trace.as_ref());
        // D from global memory against the independent reference and the ideal path.
        let reference = Reference::for_problem(&g, preset)?;
        let want = reference.gemm(&g);
        for (i, (&got, &w)) in run.out.d.iter().zip(&want).enumerate() {
            tb.check_bits(
                format!("{label}: D[{}][{}] vs {}", i / g.n, i % g.n, reference.name()),
                got,
                w,
            );
        }
        let ideal = tb
            .run_gemm(Problem::Dense(&g), None, None)
            .map_err(|e| format!("{label}: {e}"))?
            .run;
        tb.check_eq(format!("{label}: flags as the ideal path"), run.out.flags, ideal.out.flags);
        tb.check(
            format!("{label}: {} cycles >= ideal {}", run.cycles, ideal.cycles),
            run.cycles >= ideal.cycles,
        );
        // Bytes: every C and D element once; B once per tile per chunk, A once per tile row
        // (panel mode) or per tile (stream mode); the TMA counts out-of-bounds fill too.
        tb.check_eq(
            format!("{label}: bytes stored = M N 4"),
            r.counters.bytes_stored,
            (g.m * g.n * 4) as u64,
        );
        let lay = r
            .layout
            .os()
            .ok_or_else(|| format!("{label}: an output-stationary run without its layout"))?;
        let (tm, tn) = (g.m.div_ceil(4), g.n.div_ceil(4));
        let chunk = |es: u32| (4 * lay.kc) as u64 * u64::from(es);
        let a_loads = if lay.panel { tm } else { tm * tn };
        let tx = (a_loads * lay.chunks) as u64 * chunk(lay.esa)
            + (tm * tn * lay.chunks) as u64 * chunk(lay.esb)
            + (tm * tn * 64) as u64;
        tb.check_eq(format!("{label}: TMA transaction bytes"), r.counters.tx_bytes, tx);
        // Loads overlap compute: most steps are taken while a TMA load is in flight.
        let steps = (tm * tn * g.k.div_ceil(cfg.width)) as u64;
        tb.check(
            format!(
                "{label}: {} of {steps} steps taken with loads in flight",
                r.run.overlap_cycles
            ),
            2 * r.run.overlap_cycles > steps,
        );
    }
    Ok(())
}
