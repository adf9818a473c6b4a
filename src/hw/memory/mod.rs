//! `hw::memory`: the memory path of the tensor core as clocked blocks: global memory
//! ([`GlobalMemory`], scope `gmem`), banked shared memory ([`SharedMemory`], `smem`), the TMA
//! engine ([`TmaEngine`], `tma`) with its descriptors ([`TensorMap`]) and swizzle
//! ([`swizzle()`]), mbarriers ([`MBarrier`], `mbar_<i>`), all held by [`MemorySystem`] (`mem`),
//! plus a one-load testbench top ([`TmaHarness`], `tma_top`) and a scripted one
//! ([`MemScript`], `script_top`). See `docs/memory.md` for every port's timing.
//!
//! # Embedding the memory system in a design
//! ```
//! use tensorcore_rtl::hw::memory::*;
//! use tensorcore_rtl::rtl::{Design, Module, Reg, Simulator, Visitor};
//!
//! /// A producer that loads one 64 x 8 fp16 box with the 128B swizzle and waits for it.
//! struct Top { mem: MemorySystem, step: Reg<u8>, ops: Vec<MbarOp> }
//! impl Module for Top {
//!     fn name(&self) -> &str { "top" }
//!     fn visit<V: Visitor>(&mut self, v: &mut V) { v.reg(&mut self.step); v.child(&mut self.mem); }
//! }
//! impl Design for Top {
//!     fn comb(&mut self) {
//!         let regs = self.mem.out(); // register outputs: tma_ready, mbar_phase, ...
//!         self.ops.clear();
//!         let mut cmd = None;
//!         match self.step.q() {
//!             0 => { self.ops.push(MbarOp { bar: 0, op: MbarOpKind::Init(1) }); self.step.set_d(1); }
//!             1 => {
//!                 cmd = Some(TmaCmd { op: TmaOp::Load, desc: 0, coords: [0, 0, 0, 0, 0], smem_addr: 0, mbar: 0 });
//!                 if regs.tma_ready { // accepted this cycle: expect the box's bytes
//!                     self.ops.push(MbarOp { bar: 0, op: MbarOpKind::ArriveExpectTx(1024) });
//!                     self.step.set_d(2);
//!                 }
//!             }
//!             2 if self.mem.try_wait_parity(0, false) => self.step.set_d(3),
//!             _ => {}
//!         }
//!         self.mem.comb(&MemIn { tma_cmd: cmd, mbar_ops: &self.ops, ..MemIn::default() });
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let params = MemParams { latency: 20, ..MemParams::default() };
//! let mut mem = MemorySystem::new(params, 4096, 1)?;
//! let tensor: Vec<u8> = (0..2048u32).map(|i| i as u8).collect(); // 64 x 16 fp16 at address 0
//! mem.host_write(0, &tensor);
//! let mut map = TensorMap::dense(ElemType::Fp16, 0, &[64, 16], &[64, 8]);
//! map.swizzle = Swizzle::B128;
//! mem.set_descriptor(0, map)?;
//! let mut sim = Simulator::new(Top { mem, step: Reg::new("step", 2, 0)?, ops: Vec::new() })?;
//! sim.reset(1)?;
//! sim.run_until(|t| t.step.q() == 3 || t.mem.error().is_some(), 10_000)?;
//! assert!(sim.top().mem.error().is_none());
//! // Row 1, chunk 0 of the box sits at chunk 0 ^ (1 & 7) = 1 of shared-memory row 1.
//! let phys = swizzle(128, Swizzle::B128);
//! assert_eq!(phys, 128 + 16);
//! assert_eq!(sim.top().mem.smem_host_read(phys, 16), &tensor[128..144]);
//! # Ok(()) }
//! ```

pub mod box_load;
pub mod clients;
pub mod gmem;
pub mod harness;
pub mod level;
pub mod mbarrier;
pub mod params;
pub mod smem;
pub mod swizzle;
pub mod system;
pub mod tensor_map;
pub mod tma;

pub use clients::{ClientArbiter, ClientCountError, MAX_CLIENTS};
pub use gmem::{GlobalMemory, GmemFault, GmemOut, GmemReq, GmemResp};
pub use harness::{
    run_loads, run_loads_over, run_script, HarnessError, HarnessLoad, LoadRun, MemScript, Stim,
    StimLog, TmaHarness,
};
pub use level::MemLevel;
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
