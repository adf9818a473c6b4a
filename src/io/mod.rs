//! Files in and out: `.npy` matrices, `$readmemh` hex images, and atomic writes that never
//! leave a half-written file looking complete.

pub mod atomic;
pub mod memh;
pub mod npy;
pub mod output;

pub use atomic::AtomicFile;
pub use output::{OutputFile, OutputPlan};
