//! The report of one GEMM job ([`RunReport`]): what [`crate::job::run`] returns, serialised
//! as the `tcrtl gemm --json` object and as the dict the Python package's `gemm` returns (both
//! through serde, so their keys and values are the same by construction).
//!
//! Every key means something for the run it describes. The problem's kind decides a few
//! ([`ArithKeys`]: the preset and GPU rule of a floating-point run, the overflow rule of an
//! integer one, the block and tensor scales of a block-scaled one); a 2:4-sparse run adds its
//! [`SparseReport`], a run promoted to FP32 its [`PromoteReport`]; the memory section ([`MemoryReport`]) depends on the memory path and the
//! dataflow: the output-stationary port's A-panel reuse, swizzle, shift-window waits and
//! overlap cycles appear on `os` runs only ([`OsMemory`]), the weight-stationary supply's
//! weight stages on `ws` runs only ([`WsMemory`]).

use super::GemmRun;
use crate::energy::EnergyReport;
use crate::gemm::memory::{MemRun, RunLayout};
use crate::hw::memory::{MemParams, Swizzle};
use crate::hw::{Dataflow, Traffic};
use crate::numerics::flags::Flags;
use crate::sparse::clocked::sparse_figures;
use crate::sparse::SparseGemm;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// Where `dense_cycles` comes from in an output-stationary sparse run: the schedule formula of
/// the dense problem (equal to the measured dense run: `tests/sparse/clocked.rs`,
/// `tests/hw/timing.rs`).
pub const DENSE_CYCLES_SOURCE: &str = "schedule formula (Schedule::total_cycles, K dense)";

/// [`DENSE_CYCLES_SOURCE`] of a weight-stationary run (its own formula, `docs/timing.md`).
pub const WS_DENSE_CYCLES_SOURCE: &str = "schedule formula (WsSchedule::total_cycles, K dense)";

/// What one GEMM job ran and measured.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// Rows of A and D.
    pub m: usize,
    /// Columns of B and D.
    pub n: usize,
    /// The inner dimension.
    pub k: usize,
    /// A's format.
    pub format: &'static str,
    /// B's format.
    pub format_b: &'static str,
    /// The accumulation: the mode (`ieee`, `fused`, `nvidia`), `int32` or `fused` (MX).
    pub acc: &'static str,
    /// The keys of the problem's kind.
    #[serde(flatten)]
    pub arith: ArithKeys,
    /// Products per PE step.
    pub width: usize,
    /// PE rows.
    pub rows: usize,
    /// PE columns.
    pub cols: usize,
    /// `os` or `ws`.
    pub dataflow: &'static str,
    /// C's and D's format (`fp32`, `fp16`, `int32`).
    pub out_format: &'static str,
    /// Clock cycles of the run.
    pub cycles: u64,
    /// Output tiles.
    pub tiles: usize,
    /// Useful multiply-accumulates (a 2:4-sparse run: the kept values').
    pub macs: u64,
    /// MAC slots used (`M * N * K`).
    pub mac_slots_used: u64,
    /// MAC slots offered (`cycles * R * C * w`).
    pub mac_slots_offered: u64,
    /// Used / offered slots.
    pub utilization: f64,
    /// Wall-clock seconds the simulation took.
    pub sim_seconds: f64,
    /// Simulated cycles per wall-clock second.
    pub cycles_per_second: f64,
    /// Useful MACs per wall-clock second.
    pub macs_per_second: f64,
    /// The IEEE flags D raised (serialised as their names).
    #[serde(serialize_with = "flag_names")]
    pub flags: Flags,
    /// The file D was written to, when the front end wrote one.
    pub out: Option<String>,
    /// The waveform written, if any.
    pub waves: Option<String>,
    /// D checked against a reference (random problems, or when asked).
    pub check: Option<CheckReport>,
    /// A 2:4-sparse run's figures.
    #[serde(flatten)]
    pub sparse: Option<SparseReport>,
    /// A run promoted to FP32 every N products: its chunks.
    #[serde(flatten)]
    pub promote: Option<PromoteReport>,
    /// The memory path.
    pub memory: MemoryReport,
    /// What the array read from the ideal operand store and wrote as D (dense runs on the
    /// ideal store).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "traffic_section"
    )]
    pub traffic: Option<Traffic>,
    /// The energy estimate, when asked for.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "energy_section"
    )]
    pub energy: Option<EnergyReport>,
    /// D's bit patterns (row-major; not serialised: the CLI writes them to a file, Python
    /// returns them as an array).
    #[serde(skip)]
    pub d: Vec<u32>,
    /// Row-major indices of the elements of D the check found wrong (not serialised; the
    /// count is `check.mismatches`).
    #[serde(skip)]
    pub mismatch_at: Vec<usize>,
}

impl RunReport {
    /// The report as a JSON value (keys in sorted order, as `tcrtl gemm --json` prints it).
    pub fn to_json(&self) -> serde_json::Value {
        // A report holds no map with non-string keys and no non-finite float that serde_json
        // could refuse (a non-finite float becomes null).
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// The keys of the problem's kind.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum ArithKeys {
    /// A dense or 2:4-sparse floating-point problem.
    Float {
        /// The GPU preset (nvidia mode), or null.
        preset: Option<&'static str>,
        /// The GPU whose rule the nvidia mode runs, or null.
        gpu: Option<&'static str>,
        /// Its matrix instruction, or null.
        instr: Option<&'static str>,
        /// The seed of a generated problem, or null for given operands.
        seed: Option<u64>,
    },
    /// An integer problem.
    Int {
        /// `wrap` or `satfinite`.
        overflow: &'static str,
        /// The seed of a random problem, or null for given operands.
        seed: Option<u64>,
    },
    /// A block-scaled (MX, NVFP4) problem.
    Mx {
        /// Elements per scale block.
        block: usize,
        /// A's FP32 tensor scale (NVFP4), or null.
        a_tensor_scale: Option<f32>,
        /// B's FP32 tensor scale (NVFP4), or null.
        b_tensor_scale: Option<f32>,
    },
}

/// D compared with a reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// The reference's name.
    pub reference: &'static str,
    /// Elements of D that differ from it.
    pub mismatches: usize,
}

/// A 2:4-sparse run: the steps, the measured compute-phase cycles, and the dense-equivalent
/// cycles and steps from the schedule formula.
#[derive(Clone, Debug, Serialize)]
pub struct SparseReport {
    /// Always true.
    pub sparse: bool,
    /// Compute steps a tile (`os`) or folds of K (`ws`).
    pub steps_per_tile: usize,
    /// The same for the dense problem.
    pub dense_steps_per_tile: usize,
    /// Measured cycles of the compute phase (`os`) or of rows fed (`ws`).
    pub compute_cycles: u64,
    /// The same for the dense problem, from the schedule formula.
    pub dense_compute_cycles: u64,
    /// `compute_cycles / dense_compute_cycles`.
    pub compute_ratio: f64,
    /// The dense problem's total cycles, from the schedule formula.
    pub dense_cycles: u64,
    /// Which formula `dense_cycles` comes from.
    pub dense_cycles_source: &'static str,
    /// `cycles / dense_cycles`.
    pub cycles_ratio: f64,
}

impl SparseReport {
    /// The figures of the sparse problem `g` and its run `done`.
    pub fn new(g: &SparseGemm, done: &GemmRun) -> SparseReport {
        let f = sparse_figures(g);
        let compute = done.measured.as_ref().map_or(0, |r| r.compute_cycles);
        SparseReport {
            sparse: true,
            steps_per_tile: f.steps,
            dense_steps_per_tile: f.dense_steps,
            compute_cycles: compute,
            dense_compute_cycles: f.dense_compute_cycles,
            compute_ratio: compute as f64 / f.dense_compute_cycles as f64,
            dense_cycles: f.dense_total_cycles,
            dense_cycles_source: match g.cfg.dataflow() {
                Dataflow::Os => DENSE_CYCLES_SOURCE,
                Dataflow::Ws | Dataflow::Is => WS_DENSE_CYCLES_SOURCE,
            },
            cycles_ratio: done.run.cycles as f64 / f.dense_total_cycles as f64,
        }
    }
}

/// A dense run promoted to FP32 every `promote_every` products along K (one core run a
/// K-chunk, added outside the core).
#[derive(Clone, Debug, Serialize)]
pub struct PromoteReport {
    /// The promotion interval N.
    pub promote_every: usize,
    /// K-chunks run.
    pub chunks: usize,
    /// Each chunk's cycles, in k order.
    pub chunk_cycles: Vec<u64>,
}

/// The memory path of a run: the ideal operand store, or the TMA memory path.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MemoryReport {
    /// The zero-latency operand store.
    Ideal(IdealMemory),
    /// Global memory, TMA loads into shared-memory stages, TMA store of D.
    Tma(TmaMemory),
}

/// The ideal store: no stalls.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IdealMemory {
    /// `ideal`.
    pub path: &'static str,
    /// Always 0.
    pub stall_cycles: u64,
    /// Always 0 (output-stationary runs only: the weight-stationary core has no shift
    /// window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_wait_cycles: Option<u64>,
}

/// The TMA memory path's counters, layout and parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TmaMemory {
    /// `tma`.
    pub path: &'static str,
    /// Bytes TMA loaded from global memory.
    pub bytes_loaded: u64,
    /// Bytes TMA stored to global memory (D).
    pub bytes_stored: u64,
    /// Bytes the loads delivered into shared memory.
    pub tx_bytes: u64,
    /// Cycles the core waited for its operands.
    pub stall_cycles: u64,
    /// Shared-memory bank conflicts.
    pub bank_conflicts: u64,
    /// Elements filled out of bounds.
    pub oob_elements: u64,
    /// Global-memory requests.
    pub requests: u64,
    /// Operand stages (`os`) or A stages (`ws`).
    pub stages: usize,
    /// Bytes the array's operand reads took from shared memory.
    pub smem_read_bytes: u64,
    /// Bytes written into shared memory (the loads' `tx_bytes`).
    pub smem_write_bytes: u64,
    /// The memory parameters used.
    #[serde(serialize_with = "params_section")]
    pub params: MemParams,
    /// The dataflow's own keys.
    #[serde(flatten)]
    pub dataflow: DataflowMemory,
}

/// The memory keys of one dataflow.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum DataflowMemory {
    /// The output-stationary memory port.
    Os(OsMemory),
    /// The weight-stationary supply.
    Ws(WsMemory),
}

/// The output-stationary memory port's keys.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OsMemory {
    /// A's panel kept in shared memory across a row of tiles.
    pub a_panel_reuse: bool,
    /// The operand tiles swizzled in shared memory.
    pub swizzle: bool,
    /// Cycles a due shift window waited for the port.
    pub window_wait_cycles: u64,
    /// Cycles a step was taken while loads were in flight.
    pub overlap_cycles: u64,
}

/// The weight-stationary supply's keys.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WsMemory {
    /// Weight (B) stages in shared memory.
    pub weight_stages: usize,
}

impl MemoryReport {
    /// The section of a run in `dataflow` through the memory path (`run`), or on the ideal
    /// store (`None`).
    pub fn new(dataflow: Dataflow, run: Option<&MemRun>) -> MemoryReport {
        let Some(r) = run else {
            return MemoryReport::Ideal(IdealMemory {
                path: "ideal",
                stall_cycles: 0,
                window_wait_cycles: (dataflow == Dataflow::Os).then_some(0),
            });
        };
        let c = &r.counters;
        let dataflow = match &r.layout {
            RunLayout::Os(l) => DataflowMemory::Os(OsMemory {
                a_panel_reuse: l.panel,
                swizzle: l.swz_b != Swizzle::None,
                window_wait_cycles: r.run.window_wait_cycles,
                overlap_cycles: r.run.overlap_cycles,
            }),
            RunLayout::Ws(l) => DataflowMemory::Ws(WsMemory {
                weight_stages: l.w_stages,
            }),
        };
        MemoryReport::Tma(TmaMemory {
            path: "tma",
            bytes_loaded: c.bytes_loaded,
            bytes_stored: c.bytes_stored,
            tx_bytes: c.tx_bytes,
            stall_cycles: r.run.stall_cycles,
            bank_conflicts: c.bank_conflicts,
            oob_elements: c.oob_elements,
            requests: c.requests,
            stages: r.layout.stages(),
            smem_read_bytes: r.run.smem_read_bytes,
            smem_write_bytes: c.tx_bytes,
            params: r.params,
            dataflow,
        })
    }

    /// The section as a JSON value.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The one-line text summary of a run through the memory path (`None` on the ideal
    /// store).
    pub fn line(&self) -> Option<String> {
        let MemoryReport::Tma(t) = self else {
            return None;
        };
        let panel = matches!(&t.dataflow, DataflowMemory::Os(o) if o.a_panel_reuse);
        Some(format!(
            "memory (tma, latency {} cycles, {} B/cycle, {} stages{}): {} B loaded, {} B stored, {} stall cycles, {} bank conflicts",
            t.params.latency,
            t.params.bytes_per_cycle,
            t.stages,
            if panel { ", A panel reused" } else { "" },
            t.bytes_loaded,
            t.bytes_stored,
            t.stall_cycles,
            t.bank_conflicts
        ))
    }
}

/// The JSON object of a memory parameter set.
pub fn params_json(p: &MemParams) -> serde_json::Value {
    serde_json::json!({
        "latency": p.latency,
        "bytes_per_cycle": p.bytes_per_cycle,
        "request_bytes": p.request_bytes,
        "requests_in_flight": p.requests_in_flight,
        "smem_bytes": p.smem_bytes,
        "banks": p.banks,
        "bank_bytes": p.bank_bytes,
    })
}

fn flag_names<S: Serializer>(f: &Flags, s: S) -> Result<S::Ok, S::Error> {
    f.names().serialize(s)
}

fn params_section<S: Serializer>(p: &MemParams, s: S) -> Result<S::Ok, S::Error> {
    params_json(p).serialize(s)
}

/// The JSON object of the operand store's traffic.
pub fn traffic_json(t: &Traffic) -> serde_json::Value {
    serde_json::json!({
        "a_read_bytes": t.a_read_bytes(),
        "b_read_bytes": t.b_read_bytes(),
        "c_read_bytes": t.c_read_bytes(),
        "d_write_bytes": t.d_write_bytes(),
    })
}

fn traffic_section<S: Serializer>(t: &Option<Traffic>, s: S) -> Result<S::Ok, S::Error> {
    t.as_ref().map(traffic_json).serialize(s)
}

/// The JSON object of an energy estimate: the totals and, by block, the energy, the count,
/// its unit and the energy of one.
pub fn energy_json(e: &EnergyReport) -> serde_json::Value {
    serde_json::to_value(EnergySection(e)).unwrap_or(serde_json::Value::Null)
}

fn energy_section<S: Serializer>(e: &Option<EnergyReport>, s: S) -> Result<S::Ok, S::Error> {
    e.as_ref().map(EnergySection).serialize(s)
}

/// An energy estimate as its JSON object.
struct EnergySection<'a>(&'a EnergyReport);

impl Serialize for EnergySection<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = self.0;
        let by_block: serde_json::Map<String, serde_json::Value> = e
            .by_block
            .iter()
            .map(|b| {
                (
                    b.block.to_string(),
                    serde_json::json!({
                        "pj": b.pj, "count": b.count, "unit": b.unit, "pj_each": b.pj_each,
                    }),
                )
            })
            .collect();
        let mut m = s.serialize_map(Some(8))?;
        m.serialize_entry("tech", e.tech)?;
        m.serialize_entry("clock_ghz", &e.clock_ghz)?;
        m.serialize_entry("total_pj", &e.total_pj)?;
        m.serialize_entry("pj_per_mac", &e.pj_per_mac)?;
        m.serialize_entry("power_w", &e.power_w)?;
        m.serialize_entry("macs", &e.macs)?;
        m.serialize_entry("cycles", &e.cycles)?;
        m.serialize_entry("by_block", &by_block)?;
        m.end()
    }
}
