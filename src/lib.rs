//! tensorcore-rtl: a bit-accurate, register-transfer-level model of a GPU-style tensor core.
//!
//! Layers (each depends only on those listed before it; see `docs/architecture.md`):
//! - [`par`]: the one parallel map (sweeps, the energy study, workload layers): results in
//!   the points' order on any number of threads.
//! - [`numerics`]: formats as data and the integer datapath stages (pure functions).
//! - [`rtl`]: the cycle engine (registers, wires, modules, simulator, VCD tracing).
//! - [`sparse`]: 2:4 structured sparsity (compression, metadata, the sparse functional model).
//! - [`verify`]: independent references and error statistics (never calls `numerics` arithmetic).
//! - [`tb`]: the self-checking testbench harness and the registry of `testbenches/*.rs`.
//! - [`energy`]: energy per event (a sourced table) and a run's estimate from its switching
//!   activity.
//! - [`course`]: the course's instructor tools (golden sets for the Verilog tasks, batch
//!   grading, the student edition).
//! - [`workload`]: layers of real networks (SCALE-Sim's topology files) lowered to GEMMs,
//!   run and checked layer by layer.

pub mod course;
pub mod energy;
pub mod gemm;
pub mod hw;
pub mod io;
pub mod numerics;
pub mod par;
pub mod rtl;
pub mod sparse;
pub mod sweep;
pub mod tb;
pub mod verify;
pub mod workload;
