//! Files in and out: `.npy` matrices, `$readmemh` hex images, and atomic writes that never
//! leave a half-written file looking complete; the golden `$readmemh` folder of a GEMM; the
//! operand grammar (how a typed value or bit pattern is read for a format).

pub mod arith;
pub mod atomic;
pub mod golden;
pub mod memh;
pub mod mx_check;
pub mod npy;
pub mod npy_header;
pub mod output;
pub mod values;

/// Bounded reads of input files: `crate::rtl::bounded`, beside the output file, so that the
/// layers below `io` that read a file (`verify`'s measurement loader) share it.
pub use crate::rtl::bounded;
pub use atomic::AtomicFile;
pub use output::{OutputFile, OutputPlan};
