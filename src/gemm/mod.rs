//! GEMM on the tensor core: the problem description shared by every runner, the fast
//! functional model that must give the same bits as the clocked run, and the clocked run.

pub mod clocked;
pub mod dispatch;
pub mod energy;
pub mod energy_study;
pub mod functional;
pub mod job;
pub mod memory;
pub mod mx;
pub mod mx_input;
pub mod pattern;
pub mod problem;
pub mod promote;
pub mod report;
pub mod rng;
pub mod roofline;

pub use crate::hw::CoreConfig;
pub use clocked::{run_clocked, ClockedRun};
pub use dispatch::{run, GemmRun, Problem, RunError};
pub use functional::run_functional;
pub use job::{run as run_job, GemmJob, JobError, JobProblem, Operands};
pub use memory::{run_memory, run_memory_mx, MemRun, RunLayout};
pub use mx::{run_clocked_mx, MxGemm};
pub use mx_input::{MxInput, MxInputError, MxOperand, MxOptions};
pub use problem::{Gemm, GemmError, GemmOutput};
pub use report::{MemoryReport, RunReport};
