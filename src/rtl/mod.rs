//! `rtl`: the cycle engine.
//!
//! Fixed-width values ([`Value`], [`Wide`]), registers ([`Reg`]: `d`/`q`, synchronous reset),
//! memory arrays ([`Mem`]: writes committed at the edge, synchronous and register-file reads),
//! named combinational wires ([`Wire`]), testbench inputs ([`Input`]), blocks ([`Module`],
//! [`Design`]) with hierarchical names, the [`Simulator`] (step, run, run-until, [`Watchdog`])
//! and waveform tracing to VCD or FST with a GTKWave save file ([`TraceConfig`]).
//!
//! # The contract
//! Each cycle has two phases. In the *combinational phase* every block computes its registers'
//! next values (`d`) and its wires from register outputs (`q`) and inputs, all of which are
//! stable during the phase. At the *rising edge* the engine commits `d -> q` for every register
//! at once. Types enforce it: `q` has no setter (only the engine's clock pass commits it), a
//! register's pending `d` and a wire's value cannot be read by block code, and a child's inputs
//! are the arguments of its `comb` method, so the only values a block can read are stable ones
//! or values Rust's own data flow has already computed. Evaluation order of blocks therefore
//! cannot change a result; the tests shuffle it and compare waveforms byte for byte.
//!
//! # Writing a block and running it
//! ```
//! use tensorcore_rtl::rtl::*;
//!
//! /// A counter that counts while `en` is high.
//! struct Counter { name: &'static str, count: Reg<u8>, wrap: Wire<bool> }
//! impl Counter {
//!     fn new(name: &'static str) -> Result<Self> {
//!         Ok(Self { name, count: Reg::new("count", 4, 0)?, wrap: Wire::new("wrap", 1, false)? })
//!     }
//!     // Combinational logic: read own `q`s and arguments, write own `d`s and wires.
//!     fn comb(&mut self, en: bool) {
//!         let c = self.count.q();
//!         self.wrap.set(c == 15);
//!         if en { self.count.set_d(c.wrapping_add(1)); } // truncated to 4 bits
//!     }
//! }
//! impl Module for Counter {
//!     fn name(&self) -> &str { self.name } // the instance name: one scope level
//!     fn visit<V: Visitor>(&mut self, v: &mut V) { v.reg(&mut self.count); v.wire(&mut self.wrap); }
//! }
//!
//! /// The top: an input and two counters (children are visited with `v.child`).
//! struct Top { en: Input<bool>, lo: Counter, hi: Counter }
//! impl Module for Top {
//!     fn name(&self) -> &str { "top" }
//!     fn visit<V: Visitor>(&mut self, v: &mut V) {
//!         v.input(&mut self.en);
//!         v.child(&mut self.lo);
//!         v.child(&mut self.hi);
//!     }
//! }
//! impl Design for Top {
//!     fn comb(&mut self) {
//!         let carry = self.lo.count.q() == 15; // a register output: stable this cycle
//!         self.lo.comb(self.en.get());
//!         self.hi.comb(self.en.get() && carry);
//!     }
//! }
//!
//! # fn main() -> Result<()> {
//! # let dir = std::env::temp_dir().join(format!("rtl_doc_{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).map_err(|e| RtlError::TraceIo { path: dir.clone(), action: "mkdir", source: e })?;
//! let top = Top { en: Input::new("en", 1, true)?, lo: Counter::new("lo")?, hi: Counter::new("hi")? };
//! let cfg = TraceConfig::vcd(dir.join("counter.vcd")).glob("hi").window(0, 100);
//! let mut sim = Simulator::with_trace(top, &cfg)?;
//! sim.set_watchdog(1000);
//! sim.reset(2)?;
//! sim.run_until(|t| t.hi.count.q() == 2, 100)?;
//! let (_top, summary) = sim.finish()?; // writes counter.vcd and counter.gtkw
//! assert!(summary.is_some());
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(())
//! # }
//! ```
//!
//! The signals of `hi` are then `top.hi.count` and `top.hi.wrap`; `clk` and `rst` are always in
//! the `top` scope. See `docs/waves.md` and `docs/architecture.md`.

mod bank;
pub mod bounded;
mod bundle;
mod delay;
pub mod demo;
mod error;
pub mod file;
mod mem;
mod module;
mod observe;
mod reg;
mod regfile;
mod signal;
mod sim;
mod table;
mod trace;
mod value;
mod watchdog;
mod wire;

pub use bank::{RareBank, RegBank};
pub use bundle::{pack_field, Bundle};
pub use delay::DelayLines;
pub use error::{Result, RtlError};
pub use mem::Mem;
pub use module::{Design, Link, Module, SignalKind, Visitor};
pub use reg::Reg;
pub use regfile::RegFile;
pub use signal::{Display, Labels};
pub use sim::Simulator;
pub use table::{SignalInfo, SignalValue};
pub use trace::{
    ActivityReport, Charge, PowerModel, PowerTrace, SignalActivity, TraceConfig, TraceFormat,
    TraceSummary, PERIOD,
};
pub use value::{low_mask_u64, Value, Wide};
pub use watchdog::Watchdog;
pub use wire::{Input, NextWire, Wire};
