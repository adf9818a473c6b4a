//! GEMM on the tensor core: the problem description shared by every runner, and the fast
//! functional model that must give the same bits as the clocked run.

pub mod functional;
pub mod problem;
pub mod rng;

pub use functional::run_functional;
pub use problem::{Gemm, GemmConfig, GemmError, GemmOutput};
