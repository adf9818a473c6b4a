//! GEMM on the tensor core: the problem description shared by every runner, the fast
//! functional model that must give the same bits as the clocked run, and the clocked run.

pub mod clocked;
pub mod functional;
pub mod memory;
pub mod mx;
pub mod mx_input;
pub mod problem;
pub mod promote;
pub mod rng;
pub mod roofline;

pub use crate::hw::CoreConfig;
pub use clocked::{run_clocked, ClockedRun};
pub use functional::run_functional;
pub use memory::{run_memory, run_memory_mx, MemRun, RunLayout};
pub use mx::{run_clocked_mx, MxGemm};
pub use mx_input::{MxInput, MxInputError, MxOperand, MxOptions};
pub use problem::{Gemm, GemmError, GemmOutput};

/// The mode dispatch, a run's energy and the energy study at their former paths: they sit in
/// the layer above `gemm` and `sparse` ([`crate::dispatch`]); these names are doors to it, and
/// nothing in `gemm` uses them.
pub use crate::dispatch::{self, energy, energy_study, run, GemmRun, Problem, RunError};
