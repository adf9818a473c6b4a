//! The interface of a core's top to the run loop (`gemm::clocked::run_core`): what a
//! testbench needs of any dataflow's top to start it, clock it until `Done`, collect D row by
//! row and read its monitors, so that one loop runs every dataflow.

use super::bundles::DRow;
use crate::hw::config::CoreConfig;
use crate::hw::feeder::Traffic;
use crate::numerics::flags::Flags;
use crate::rtl::Design;

/// The counts the run loop's monitors gather, each from the top's own registers: the top
/// adds to them before and after each clock edge and at the end ([`CoreTop::monitor_edge`],
/// [`CoreTop::monitor_end`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunMonitors {
    /// Cycles the controller spent feeding operand steps.
    pub compute_cycles: u64,
    /// Cycles the controller was ready for a step its supply did not have.
    pub stall_cycles: u64,
    /// Cycles in which a step was taken while loads were in flight behind the port.
    pub overlap_cycles: u64,
    /// Cycles a due shift window waited for the port (output-stationary).
    pub window_wait_cycles: u64,
    /// Cycles from the first step of tile 0 to the last accumulator write of tile 0
    /// (output-stationary; `None` until seen, 0 in the report where never seen).
    pub first_tile_cycles: Option<u64>,
}

/// When the run loop calls a top's monitor ([`CoreTop::monitor_edge`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edge {
    /// After the combinational phase settled, before the clock edge.
    Before,
    /// After the clock edge.
    After,
}

/// A core's top as the one run loop drives it: the cycle engine's [`Design`] plus its start
/// input, its `Done` state, the row of D in its output register and its monitors. Each
/// dataflow's top implements it; the loop itself knows no dataflow.
pub trait CoreTop: Design {
    /// The configuration the core was built for.
    fn config(&self) -> &CoreConfig;
    /// The problem's `(m, n, k)` as the array computes it: for a top whose output rows are
    /// columns of D ([`CoreTop::d_columns`]) the transposed problem's, `(n, m, k)`.
    fn dims(&self) -> (usize, usize, usize);
    /// Whether the rows the output register delivers are columns of D (the array computes
    /// `D^T = B^T A^T + C^T`: an input-stationary core, whose columns hold rows of A); the
    /// run loop transposes what it collected. False for every other top.
    fn d_columns(&self) -> bool {
        false
    }
    /// The `(row, column)` origin in D of output tile `tile`.
    fn tile_origin(&self, tile: usize) -> (usize, usize);
    /// Output tiles of the run.
    fn output_tiles(&self) -> usize;
    /// The schedule's cycle count of the whole run (the run loop's limit adds a margin).
    fn scheduled_cycles(&self) -> u64;
    /// Raises the start input for the next clock edge.
    fn start(&mut self);
    /// Whether the controller is in `Done`.
    fn is_done(&self) -> bool;
    /// The row of D the output register holds this cycle, if any.
    fn d_row(&self) -> Option<DRow<'_>>;
    /// An error the operand supply latched (a memory-system misuse), which stops the run.
    fn error(&self) -> Option<String>;
    /// Bytes the array's operand reads took from shared memory this cycle (0 on an ideal
    /// supply).
    fn smem_read_bytes(&self) -> u64;
    /// What the array read from its operand store, where the store counts it (A, B, C; the
    /// run loop adds D).
    fn traffic(&self) -> Option<Traffic>;
    /// The name of a PE that saw an accumulator or weight hazard, if any.
    fn hazard(&self) -> Option<String>;
    /// OR of the IEEE flags every PE raised.
    fn flags(&self) -> Flags;
    /// Declares the energy probes (the multipliers' and adders' inputs) for a run whose
    /// trace estimates energy; a top without probes ignores it.
    fn set_energy_probes(&mut self, _on: bool) {}
    /// Adds this cycle's observations to `m`, at `edge`.
    fn monitor_edge(&self, edge: Edge, m: &mut RunMonitors);
    /// Adds what the top counted itself over the run to `m`, when it reached `Done`.
    fn monitor_end(&self, m: &mut RunMonitors);
}
