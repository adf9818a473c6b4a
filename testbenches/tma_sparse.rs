//! `tma_sparse`: 2:4 sparse GEMMs through the memory path. The kept values of A, their
//! metadata (2 bits a kept value, `M x ceil(K/8)` bytes) and B start in global memory, travel by
//! TMA into the shared-memory stages (A and its metadata into the A panels when N spans more
//! than one tile), and the memory-fed port offers each step's kept A lanes, selects and `2w`
//! B lanes to the core in sparse mode. An FP16 fused GEMM (w = 4) through a double-buffered
//! 30-cycle memory is traced; an E4M3 ieee GEMM (w = 8) on a ragged shape and a BF16 ieee
//! GEMM (w = 1) with FP16 output follow. Every element of D, read back from global memory, is
//! checked against `verify::sparse`'s reference and the ideal-path sparse run; and the stated
//! fact of the layout: the sparse run loads the dense run's bytes less half of A's, plus the
//! metadata.

use crate::gemm::{CoreConfig, Problem};
use crate::hw::memory::MemParams;
use crate::hw::MemPortConfig;
use crate::numerics::dot::AccMode;
use crate::numerics::format::{BF16, E4M3, FP16, FP32};
use crate::sparse::SparseGemm;
use crate::tb::Bench;
use crate::verify::sparse::{sparse_reference, SparseRef};

/// One line for `tcrtl tb list`.
pub const ABOUT: &str =
    "2:4 sparse GEMM through TMA: kept A, metadata and B from global memory; D vs verify::sparse";

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    let cfg = |fmt, mode, width, acc| CoreConfig::new(fmt, fmt, mode, width).with_acc(acc);
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
        ("fp16 fused w4", cfg(FP16, AccMode::Fused, 4, FP32), (8, 12, 264), mem(30, 32, 2), true),
        ("e4m3 ieee w8", cfg(E4M3, AccMode::Ieee, 8, FP32), (7, 5, 300), mem(120, 16, 0), false),
        ("bf16 ieee w1 fp16 out", cfg(BF16, AccMode::Ieee, 1, FP16), (6, 9, 36), mem(60, 8, 0), false),
    ];
    for (seed, (label, cfg, (m, n, k), pc, traced)) in cases.into_iter().enumerate() {
        let g = SparseGemm::random(m, n, k, cfg, 70 + seed as u64).map_err(|e| e.to_string())?;
        let trace = traced.then(|| {
            // The sparse pipeline: the producer's loads (A, E, B sub-boxes), the stage barrier,
            // the consumer's reads, the held metadata, the PE's selects.
            for glob in [
                "controller.state",
                "controller.take",
                "controller.stall",
                "mem.arbiter.tma_cmd",
                "mem.producer.producer_chunk",
                "mem.producer.producer_part",
                "mem.mbar_0.phase",
                "mem.mbar_0.tx",
                "mem.rd_accept",
                "mem.consumer.hold_e_0",
                "mem.smem.conflict",
            ] {
                tb.trace_only(glob);
            }
            tb.trace()
        });
        let r = tb
            .run_gemm(Problem::Sparse(&g), Some(&pc), trace.as_ref())
            .map_err(|e| format!("{label}: {e}"))?
            .memory
            .ok_or_else(|| format!("{label}: a memory-path run without its counters"))?;
        let run = &r.run.run;
        tb.add_cycles(run.cycles);
        tb.check_waveform(label, trace.as_ref());
        let how = match cfg.mode {
            AccMode::Fused => SparseRef::Fused { width: cfg.width },
            _ => SparseRef::Ieee,
        };
        let want = sparse_reference(&g.reference_operands(), how);
        for (i, (&got, &w)) in run.out.d.iter().zip(&want).enumerate() {
            tb.check_bits(
                format!("{label}: D[{}][{}] vs sparse_reference", i / g.n, i % g.n),
                got,
                w,
            );
        }
        let ideal = tb
            .run_gemm(Problem::Sparse(&g), None, None)
            .map_err(|e| format!("{label}: {e}"))?
            .run;
        tb.check_eq(format!("{label}: D as the ideal sparse run"), &run.out.d, &ideal.out.d);
        tb.check_eq(format!("{label}: flags as the ideal sparse run"), run.out.flags, ideal.out.flags);
        tb.check(
            format!("{label}: {} cycles >= ideal {}", run.cycles, ideal.cycles),
            run.cycles >= ideal.cycles,
        );
        // Bytes: the dense run of the same problem (the decompressed A) loads A's M x K
        // elements; the sparse run loads half of them plus M x ceil(K/8) metadata bytes, with the
        // same A reuse (panel or stream), and the same B, C and D.
        let dense_g = g.dense();
        let dense = tb
            .run_gemm(Problem::Dense(&dense_g), Some(&pc), None)
            .map_err(|e| format!("{label}: {e}"))?
            .memory
            .ok_or_else(|| format!("{label}: a memory-path run without its counters"))?;
        let es = u64::from(cfg.fmt_a.width() / 8);
        let a_loads = if r.layout.panel() { 1 } else { n.div_ceil(4) } as u64;
        let a = (m * k) as u64 * es * a_loads;
        let meta = (m * k.div_ceil(8)) as u64 * a_loads;
        tb.check_eq(
            format!("{label}: A/E panel reuse as the dense run"),
            r.layout.panel(),
            dense.layout.panel(),
        );
        tb.check_eq(
            format!("{label}: bytes loaded = dense - A/2 + metadata"),
            r.counters.bytes_loaded,
            dense.counters.bytes_loaded - a / 2 + meta,
        );
        tb.check_eq(
            format!("{label}: bytes stored as dense"),
            r.counters.bytes_stored,
            dense.counters.bytes_stored,
        );
    }
    Ok(())
}
