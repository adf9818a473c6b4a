//! The course's instructor tools: golden problems for the Verilog tasks and the grading of
//! a class.
//!
//! - [`directed`]: directed golden sets for the PE and mesh tasks (signed zeros, subnormals,
//!   infinities, NaNs, the largest magnitudes, ties), each a folder like `tcrtl gemm --memh`.
//! - [`mac_golden`]: the golden trace of lab 0's MAC mesh, from the model's `MacMesh`.
//! - [`compare`]: a student's result folder against a golden one (`tcrtl grade`).
//! - [`spec`], [`batch`], [`sim`], [`report`]: grading a class against hidden tests
//!   (`tcrtl grade batch`) under Icarus Verilog and Verilator.
//! - [`edition`]: the student edition (no answers, no references) and the instructor edition.
//!
//! The labs and the port interfaces of the tasks are in `docs/course/`.

pub mod batch;
pub mod compare;
pub mod directed;
pub mod edition;
pub mod mac_golden;
pub mod report;
pub mod sim;
pub mod spec;
