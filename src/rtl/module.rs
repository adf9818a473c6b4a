//! The block traits: [`Module`] (named, with registers, wires and children) and [`Design`] (a
//! top-level module the [`crate::rtl::Simulator`] runs), and the engine's [`Visitor`].

use super::bundle::Bundle;
use super::mem::Mem;
use super::reg::Reg;
use super::regfile::RegFile;
use super::value::Value;
use super::wire::{Input, Wire};

/// A hardware block: an instance name and a list of its signals and children.
///
/// `visit` is the block's *only* declaration of its state: the engine uses it to clock every
/// register at the rising edge, to apply reset, to build the signal table and to trace. List
/// every register, wire, input and child exactly once, in a fixed order:
///
/// ```
/// use tensorcore_rtl::rtl::{Module, Reg, Visitor, Wire};
/// struct Counter { name: String, count: Reg<u8>, wrap: Wire<bool> }
/// impl Module for Counter {
///     fn name(&self) -> &str { &self.name }
///     fn visit<V: Visitor>(&mut self, v: &mut V) {
///         v.reg(&mut self.count);
///         v.wire(&mut self.wrap);
///     }
/// }
/// ```
///
/// Combinational logic is an inherent method, by convention `fn comb(&mut self, inputs..) ->
/// outputs`, that reads its own registers' `q`, the arguments its parent passes (taken from
/// register outputs or from other children's return values) and writes its registers' `d` and
/// its wires. The parent calls its children's `comb` from its own.
pub trait Module {
    /// The instance name (one component of the hierarchical name, e.g. `pe_1_2`).
    fn name(&self) -> &str;
    /// Presents every register, wire, input and child to the visitor, in a fixed order.
    fn visit<V: Visitor>(&mut self, v: &mut V);

    /// Called by the engine once it has decided which of this block's wires are observed
    /// ([`Wire::is_observed`]): when the design is elaborated, and again when a peek or the
    /// settle check turns every wire on. A block may note here what its wires say, so that
    /// its combinational phase tests one flag per group of wave-only values instead of one
    /// per wire. The default does nothing; it must never change a register.
    fn observed(&mut self) {}
}

/// A top-level module: the unit the [`crate::rtl::Simulator`] runs.
pub trait Design: Module {
    /// The combinational phase of the whole design: compute every register's `d` (and every
    /// wire) from register outputs and inputs. Must be a pure function of those: calling it
    /// twice in a cycle gives the same result (the engine may, e.g. in
    /// [`crate::rtl::Simulator::settle`]).
    fn comb(&mut self);

    /// A counter of useful work done (items moved, FSM transitions...) for the watchdog. `None`
    /// (the default) makes the watchdog treat "some register changed value" as progress.
    fn progress(&self) -> Option<u64> {
        None
    }

    /// A human-readable description of the current state (e.g. the controller FSM state), used
    /// in watchdog errors. Called only when reporting.
    fn state(&self) -> String {
        String::new()
    }
}

mod sealed {
    pub trait Sealed {}
}
pub(in crate::rtl) use sealed::Sealed;

/// A pass of the engine over a module's signals (clock edge, elaboration, tracing, peeking).
///
/// Sealed: only the engine implements it, so only the engine commits registers or reads wires.
/// Calls are statically dispatched and inline into a block's `visit`.
pub trait Visitor: Sealed {
    /// A register.
    fn reg<T: Bundle>(&mut self, r: &mut Reg<T>);
    /// A named combinational wire.
    fn wire<T: Bundle>(&mut self, w: &mut Wire<T>);
    /// A testbench-driven input.
    fn input<T: Value>(&mut self, i: &mut Input<T>);
    /// A child module (a nested scope named [`Module::name`]).
    fn child<M: Module>(&mut self, m: &mut M);
    /// A memory array: its port signals form a nested scope named after it (like a child);
    /// the clock pass also commits its posted writes and its synchronous read. The contents
    /// are never traced.
    fn mem<T: Value>(&mut self, m: &mut Mem<T>) {
        self.child(m);
    }
    /// A register file: each slot is a register (a signal of the module, in slot order);
    /// the clock pass commits only the slots written since the last edge.
    fn reg_file<T: Bundle>(&mut self, f: &mut RegFile<T>) {
        for r in f.slots_mut() {
            self.reg(r);
        }
    }
}

/// The rising edge: commits every register (`q <- RST ? reset : d`). With `TRACK` it also
/// notes whether any register changed (for a watchdog without a progress counter); without
/// it the comparisons are skipped. Both are compile-time constants, so the common edge (no
/// reset, no tracking) is a run of plain copies.
pub(in crate::rtl) struct Clock<const RST: bool, const TRACK: bool> {
    pub changed: bool,
}

impl<const RST: bool, const TRACK: bool> Sealed for Clock<RST, TRACK> {}
impl<const RST: bool, const TRACK: bool> Visitor for Clock<RST, TRACK> {
    #[inline(always)]
    fn reg<T: Bundle>(&mut self, r: &mut Reg<T>) {
        if TRACK {
            self.changed |= r.commit(RST);
        } else {
            r.commit_fast(RST);
        }
    }
    #[inline(always)]
    fn wire<T: Bundle>(&mut self, _w: &mut Wire<T>) {}
    #[inline(always)]
    fn input<T: Value>(&mut self, _i: &mut Input<T>) {}
    #[inline(always)]
    fn child<M: Module>(&mut self, m: &mut M) {
        m.visit(self);
    }
    #[inline(always)]
    fn mem<T: Value>(&mut self, m: &mut Mem<T>) {
        m.visit(self);
        let changed = m.commit(RST);
        if TRACK {
            self.changed |= changed;
        }
    }
    #[inline(always)]
    fn reg_file<T: Bundle>(&mut self, f: &mut RegFile<T>) {
        if RST || TRACK {
            for r in f.slots_mut() {
                self.reg(r);
            }
            f.clear_written();
        } else {
            f.commit_written();
        }
    }
}
