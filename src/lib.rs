//! tensorcore-rtl: a bit-accurate, register-transfer-level model of a GPU-style tensor core.
//!
//! Layers (each imports only layers listed before it; docs/architecture.md, "The code", and
//! the structure test `tests/cli/structure/` that enforces the table):
//! - [`par`]: the one parallel map (sweeps, the energy study, workload layers): results in
//!   the points' order on any number of threads.
//! - [`numerics`]: formats as data and the integer datapath stages (pure functions).
//! - [`rtl`]: the cycle engine (registers, wires, modules, simulator, VCD tracing), the output
//!   file and bounded input reads.
//! - [`hw`]: the blocks (PE, mesh, controller, ports, tops, memory system).
//! - [`energy`]: energy per event (a sourced table) and a run's estimate from its switching
//!   activity.
//! - [`gemm`]: a GEMM problem, the functional model and the clocked runs.
//! - [`sparse`]: 2:4 structured sparsity (compression, metadata, the sparse functional model).
//! - [`dispatch`]: one problem of any mode and its run (`dispatch::run`), a run's energy, the
//!   energy study's cases.
//! - [`verify`]: independent references and error statistics (never calls `numerics` arithmetic).
//! - [`workload`]: layers of real networks (SCALE-Sim's topology files) lowered to GEMMs,
//!   run and checked layer by layer.
//! - [`sweep`]: error sweeps of a mode's dot product against the exact result as K grows.
//! - [`io`]: files in and out, and the checks the front doors share.
//! - [`job`]: one GEMM as a front door asks for it (`job::GemmJob`: operands from files,
//!   arrays or a seed, sparse, MX, integers) and its report (`job::report::RunReport`).
//! - [`tb`]: the self-checking testbench harness and the registry of `testbenches/*.rs`.
//! - [`course`]: the course's instructor tools (golden sets for the Verilog tasks, batch
//!   grading, the student edition).
//! - [`prelude`]: the names a GEMM run needs, from one place.

pub mod course;
pub mod dispatch;
pub mod energy;
pub mod gemm;
pub mod hw;
pub mod io;
pub mod job;
pub mod numerics;
pub mod par;
pub mod prelude;
pub mod rtl;
pub mod sparse;
pub mod sweep;
pub mod tb;
pub mod verify;
pub mod workload;
