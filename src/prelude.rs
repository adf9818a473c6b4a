//! The names a GEMM run needs, from one place: `use tensorcore_rtl::prelude::*;`.
//!
//! The core's configuration and the formats and modes it takes, the problem types of every
//! mode (dense, 2:4 sparse, block-scaled), the one run entry ([`run`]) and the direct runners,
//! the engine's simulator and tracing, and the errors they return. Everything here is a
//! re-export; each item's own module documents it.
//!
//! ```
//! use tensorcore_rtl::prelude::*;
//!
//! // D = A x B + C, 4 x 4 x 2: FP16 operands all 1.0 (0x3C00), C = 0, FP32 accumulator.
//! let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
//! let g = Gemm::new(4, 4, 2, cfg, vec![0x3C00; 8], vec![0x3C00; 8], vec![0; 16])?;
//! let done = run(Problem::Dense(&g), None, None)?;
//! // Every element is K = 2 (FP32 0x40000000), exactly, and the functional model agrees.
//! assert_eq!(done.run.out.d, vec![0x4000_0000; 16]);
//! assert_eq!(done.run.out.d, run_functional(&g)?.d);
//! assert_eq!(done.run.out.flags, Flags::NONE);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use crate::dispatch::{run, GemmRun, Problem, RunError};
pub use crate::gemm::{
    run_clocked, run_clocked_mx, run_functional, run_memory, run_memory_mx, ClockedRun, Gemm,
    GemmError, GemmOutput, MemRun, MxGemm,
};
pub use crate::hw::{
    CoreConfig, Dataflow, HwError, MemPortConfig, MxTileBuffer, SparseTileBuffer, TileBuffer,
};
pub use crate::numerics::dot::{AccMode, DotError, Preset};
pub use crate::numerics::flags::{Flags, RoundingMode};
pub use crate::numerics::format::{
    Format, BF16, E2M1, E2M3, E3M2, E4M3, E5M2, E8M0, FP16, FP32, FP64, TF32,
};
pub use crate::numerics::int::{IntFormat, IntMode, IntOverflow, S32, S4, S8, U4, U8};
pub use crate::numerics::mx::BlockFormat;
pub use crate::rtl::{RtlError, Simulator, TraceConfig, TraceFormat};
pub use crate::sparse::{Compressed, Prune, SparseError, SparseGemm};
