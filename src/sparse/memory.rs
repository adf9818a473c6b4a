//! The 2:4 sparse GEMM through the memory path: the kept values of A, their metadata (E) and
//! B start in global memory and travel by TMA into the shared-memory stages like any operand;
//! the memory-fed port ([`crate::hw::MemoryPort::new_sparse`]) reads each step's kept A
//! lanes, metadata and `2w` B lanes from shared memory and offers them to the core in sparse
//! mode. D equals the ideal sparse run bit for bit (`tests/memory/sparse_tma.rs`). In the
//! weight-stationary dataflow the memory-fed `ws` supply
//! ([`crate::hw::ws::mem::WsMemoryPort::new_sparse`]) carries E beside A the same way
//! (`tests/memory/ws_tma.rs`).

use super::problem::SparseGemm;
use crate::gemm::memory::{run_port, run_ws_port};
use crate::gemm::MemRun;
use crate::hw::extras::SparseSelects;
use crate::hw::ws::mem::WsMemoryPort;
use crate::hw::{Dataflow, HwError, MemPortConfig, MemoryPort};
use crate::rtl::TraceConfig;

/// Runs `g` through the memory path built as `pc` says, optionally tracing.
pub fn run_memory_sparse(
    g: &SparseGemm,
    pc: &MemPortConfig,
    trace: Option<&TraceConfig>,
) -> Result<MemRun, HwError> {
    crate::hw::dispatch_width!(g.cfg.width, W => run_w::<W>(g, pc, trace))
}

fn run_w<const W: usize>(
    g: &SparseGemm,
    pc: &MemPortConfig,
    trace: Option<&TraceConfig>,
) -> Result<MemRun, HwError> {
    if g.cfg.dataflow() == Dataflow::Is {
        return Err(crate::hw::dataflow::is::unsupported("a 2:4 sparse GEMM"));
    }
    if g.cfg.dataflow() == Dataflow::Ws {
        let port = WsMemoryPort::<W, SparseSelects>::new_sparse(
            g.cfg,
            pc,
            g.m,
            g.n,
            g.k,
            g.a.values(),
            g.a.meta(),
            &g.b,
            &g.c,
        )?;
        return run_ws_port(g.cfg, port, g.macs(), pc, trace);
    }
    let port = MemoryPort::<W>::new_sparse(
        g.cfg,
        pc,
        g.m,
        g.n,
        g.k,
        g.a.values(),
        g.a.meta(),
        &g.b,
        &g.c,
    )?;
    run_port(g.cfg, port, g.macs(), pc, trace)
}
