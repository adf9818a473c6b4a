//! TEMPORARY stand-in for `crate::gemm::{run_clocked, ClockedRun}` until the clocked tensor
//! core (branch `hw`) is merged: the same signature and fields, computed by the functional
//! model with `cycles = 0` and no waveform. Deleted when the real core lands.

use crate::gemm::{run_functional, Gemm, GemmOutput};
use crate::rtl::TraceConfig;

/// The result of a (stand-in) clocked GEMM run.
#[derive(Clone, Debug)]
pub struct ClockedRun {
    /// D and flags.
    pub out: GemmOutput,
    /// Clock cycles (0: no clock was simulated).
    pub cycles: u64,
    /// 4x4 output tiles.
    pub tiles: usize,
    /// MAC slots used.
    pub mac_slots_used: u64,
    /// MAC slots offered.
    pub mac_slots_offered: u64,
    /// Wall-clock seconds of the run.
    pub sim_seconds: f64,
}

impl ClockedRun {
    /// Used over offered MAC slots (0 when nothing was offered).
    pub fn utilization(&self) -> f64 {
        if self.mac_slots_offered == 0 {
            0.0
        } else {
            self.mac_slots_used as f64 / self.mac_slots_offered as f64
        }
    }

    /// Simulated cycles per wall-clock second.
    pub fn cycles_per_second(&self) -> f64 {
        if self.sim_seconds > 0.0 {
            self.cycles as f64 / self.sim_seconds
        } else {
            0.0
        }
    }
}

/// Runs `g` on the functional model (the trace request is ignored).
pub fn run_clocked(g: &Gemm, _trace: Option<&TraceConfig>) -> Result<ClockedRun, String> {
    let t = std::time::Instant::now();
    let out = run_functional(g).map_err(|e| e.to_string())?;
    Ok(ClockedRun {
        out,
        cycles: 0,
        tiles: g.m.div_ceil(4) * g.n.div_ceil(4),
        mac_slots_used: g.macs(),
        mac_slots_offered: 0,
        sim_seconds: t.elapsed().as_secs_f64(),
    })
}
