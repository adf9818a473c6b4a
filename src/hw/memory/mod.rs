//! `hw::memory`: the memory path of the tensor core as clocked blocks: global memory
//! ([`GlobalMemory`], scope `gmem`), banked shared memory ([`SharedMemory`], `smem`), the TMA
//! engine ([`TmaEngine`], `tma`) with its descriptors ([`TensorMap`]) and swizzle
//! ([`swizzle()`]), mbarriers ([`MBarrier`], `mbar_<i>`), all held by [`MemorySystem`] (`mem`),
//! plus a one-load testbench top ([`TmaHarness`], `tma_top`). See `docs/memory.md`.

pub mod gmem;
pub mod harness;
pub mod mbarrier;
pub mod params;
pub mod smem;
pub mod swizzle;
pub mod system;
pub mod tensor_map;
pub mod tma;

pub use gmem::{GlobalMemory, GmemFault, GmemOut, GmemReq, GmemResp};
pub use harness::{
    run_loads, run_script, HarnessError, HarnessLoad, LoadRun, MemScript, Stim, StimLog, TmaHarness,
};
pub use mbarrier::{MBarrier, MbarMisuse, MbarOp, MbarOpKind, MbarState, MBAR_MAX};
pub use params::{MemParams, ParamError};
pub use smem::{bank_passes, SharedMemory, SmemFault, SmemLane, SmemOut, SmemWriteLane};
pub use swizzle::{swizzle, Swizzle};
pub use system::{
    MemBuildError, MemCounters, MemError, MemFault, MemIn, MemOut, MemorySystem, DESCRIPTORS,
    MAX_MBARS,
};
pub use tensor_map::{ElemType, Interleave, MapMode, OobFill, TensorMap, TensorMapError};
pub use tma::{TmaCmd, TmaEngine, TmaFault, TmaOp};
