//! The block traits: [`Module`] (named, with registers, wires and children) and [`Design`] (a
//! top-level module the [`crate::rtl::Simulator`] runs), and the engine's [`Visitor`].

use super::bank::{encode_field, BankField, RareBank, RegBank};
use super::bundle::{encode_signal, Bundle};
use super::delay::DelayLines;
use super::mem::Mem;
use super::reg::Reg;
use super::regfile::RegFile;
use super::signal::SignalMeta;
use super::value::Value;
use super::wire::{Input, NextWire, Wire};

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
/// The one exception: for a pass whose [`Visitor::OBSERVED_WIRES_ONLY`] is true, a block may
/// leave out a group of wires none of which is observed ([`Wire::is_observed`]).
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

/// A register-bank field that is a stage of a shift chain, as the operand registers of a
/// systolic array are: at every rising edge but a reset edge it takes the output of the
/// register that `from` names (the stage before it, a field of the same type and width of
/// another bank, presented earlier in the same visit), and it is named `id` for the stage
/// after it. The chain's first stage has no `from`. Ids are the block's to choose; within one
/// visit a `from` refers to the stage last presented with that id.
///
/// The link changes nothing but the cost of counting toggles: a stage's values are the stage
/// before it's, one cycle later, so the counter finds a stage's toggles from the one before it
/// instead of walking its values ([`Visitor::bank_reg_linked`]). It checks the claim at the
/// first and last edge of every batch it counts and walks the values where it does not hold
/// there; a debug build also asserts it at every edge in between (a link that does not hold
/// mid-batch would make a release build's totals wrong). A field of more than one word is
/// walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// This stage's name.
    pub id: u32,
    /// The stage it takes its value from (none for the chain's first).
    pub from: Option<u32>,
}

/// A pass of the engine over a module's signals (clock edge, elaboration, tracing, peeking).
///
/// Sealed: only the engine implements it, so only the engine commits registers or reads wires.
/// Calls are statically dispatched and inline into a block's `visit`.
pub trait Visitor: Sealed + Sized {
    /// Whether this pass reads only the wires somebody observes
    /// ([`Wire::is_observed`]): a block may then leave out a group of wires none of which is
    /// observed (it must present every other signal as usual). False for every pass that
    /// builds or reads the signal table by position.
    const OBSERVED_WIRES_ONLY: bool = false;

    /// A register.
    fn reg<T: Bundle>(&mut self, r: &mut Reg<T>);
    /// A named combinational wire.
    fn wire<T: Bundle>(&mut self, w: &mut Wire<T>);
    /// A testbench-driven input.
    fn input<T: Value>(&mut self, i: &mut Input<T>);
    /// A child module (a nested scope named [`Module::name`]): by default, its signals in
    /// place (a pass that names scopes overrides it).
    #[inline(always)]
    fn child<M: Module>(&mut self, m: &mut M) {
        m.visit(self);
    }
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
    /// Field `i` of a register bank (declared `i`-th, read by `get`): a register of the
    /// module, visited where it stands in the module's signal list.
    fn bank_reg<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        i: usize,
        get: impl Fn(&S) -> &T,
    );
    /// A wire that shows field `get` of a register bank's next value ([`NextWire`]: the net
    /// on that field register's D input), visited where it stands in the module's signal
    /// list.
    fn bank_next<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        w: &mut NextWire<T>,
        get: impl Fn(&S) -> &T,
    );
    /// Field `i` of a register bank, as [`Visitor::bank_reg`], that is a stage of a shift
    /// chain ([`Link`]). Only the toggle counter reads the link.
    #[inline(always)]
    fn bank_reg_linked<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        i: usize,
        get: impl Fn(&S) -> &T,
        link: Link,
    ) {
        let _ = link;
        self.bank_reg(b, i, get);
    }
    /// A wire that shows a register bank's next value, as [`Visitor::bank_next`], where the
    /// field register is a stage of a shift chain (`link`, the field's own). Only the toggle
    /// counter reads the link.
    #[inline(always)]
    fn bank_next_linked<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        w: &mut NextWire<T>,
        get: impl Fn(&S) -> &T,
        link: Link,
    ) {
        let _ = link;
        self.bank_next(b, w, get);
    }
    /// A register bank's edge: visited once, after every field of the bank and every
    /// [`NextWire`] that shows one.
    fn bank<S: Copy + 'static>(&mut self, b: &mut RegBank<S>);
    /// A rare bank's edge (its fields are visited as a [`RegBank`]'s, through
    /// [`RareBank::bank_mut`]): visited once, after every field.
    fn rare_bank<S: Copy + 'static>(&mut self, b: &mut RareBank<S>);
    /// Declared field `field` (read by `get`) of stage `stage` of delay lines: a register of
    /// the module, visited where it stands in the module's signal list.
    fn delay_reg<E: Copy + 'static, T: Bundle>(
        &mut self,
        dl: &mut DelayLines<E>,
        stage: usize,
        field: usize,
        get: impl Fn(&E) -> &T,
    );
    /// The delay lines' edge: visited once, after every stage's registers.
    fn delay<E: Copy + 'static>(&mut self, dl: &mut DelayLines<E>);
}

/// The common rising edge: commits every register (`q <- d`), no reset, no change tracking:
/// a run of plain copies, the only pass that runs every cycle of an untraced simulation.
pub(in crate::rtl) struct Clock;

impl Sealed for Clock {}
impl Visitor for Clock {
    #[inline(always)]
    fn reg<T: Bundle>(&mut self, r: &mut Reg<T>) {
        r.commit_fast(false);
    }
    #[inline(always)]
    fn wire<T: Bundle>(&mut self, _w: &mut Wire<T>) {}
    #[inline(always)]
    fn input<T: Value>(&mut self, _i: &mut Input<T>) {}
    #[inline(always)]
    fn mem<T: Value>(&mut self, m: &mut Mem<T>) {
        m.visit(self);
        m.commit_fast();
    }
    #[inline(always)]
    fn reg_file<T: Bundle>(&mut self, f: &mut RegFile<T>) {
        f.commit_written();
    }
    #[inline(always)]
    fn bank_reg<S: Copy + 'static, T: Bundle>(
        &mut self,
        _b: &mut RegBank<S>,
        _i: usize,
        _get: impl Fn(&S) -> &T,
    ) {
    }
    #[inline(always)]
    fn bank_next<S: Copy + 'static, T: Bundle>(
        &mut self,
        _b: &mut RegBank<S>,
        _w: &mut NextWire<T>,
        _get: impl Fn(&S) -> &T,
    ) {
    }
    #[inline(always)]
    fn bank<S: Copy + 'static>(&mut self, b: &mut RegBank<S>) {
        b.commit_fast();
    }
    #[inline(always)]
    fn rare_bank<S: Copy + 'static>(&mut self, b: &mut RareBank<S>) {
        b.commit_fast();
    }
    #[inline(always)]
    fn delay_reg<E: Copy + 'static, T: Bundle>(
        &mut self,
        _dl: &mut DelayLines<E>,
        _stage: usize,
        _field: usize,
        _get: impl Fn(&E) -> &T,
    ) {
    }
    #[inline(always)]
    fn delay<E: Copy + 'static>(&mut self, dl: &mut DelayLines<E>) {
        dl.commit_fast();
    }
}

/// The rarer rising edges: under reset (`rst`: every register takes its reset value) and/or
/// noting whether any register changed (`track`: for a watchdog without a progress counter).
/// Both are run-time flags, so one instance of each block's `visit` serves the three cases.
pub(in crate::rtl) struct ClockChecked {
    pub rst: bool,
    pub track: bool,
    pub changed: bool,
}

impl Sealed for ClockChecked {}
impl Visitor for ClockChecked {
    #[inline]
    fn reg<T: Bundle>(&mut self, r: &mut Reg<T>) {
        if self.track {
            self.changed |= r.commit(self.rst);
        } else {
            r.commit_fast(self.rst);
        }
    }
    #[inline]
    fn wire<T: Bundle>(&mut self, _w: &mut Wire<T>) {}
    #[inline]
    fn input<T: Value>(&mut self, _i: &mut Input<T>) {}
    #[inline]
    fn mem<T: Value>(&mut self, m: &mut Mem<T>) {
        m.visit(self);
        let changed = m.commit(self.rst);
        self.changed |= self.track && changed;
    }
    #[inline]
    fn reg_file<T: Bundle>(&mut self, f: &mut RegFile<T>) {
        for r in f.slots_mut() {
            self.reg(r);
        }
        f.clear_written();
    }
    #[inline]
    fn bank_reg<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        i: usize,
        get: impl Fn(&S) -> &T,
    ) {
        if self.track {
            let next = if self.rst { b.reset() } else { b.d() };
            let width = b.field_meta(i).width;
            self.changed |= !get(next).same_bits(get(b.q()), width);
        }
    }
    #[inline]
    fn bank_next<S: Copy + 'static, T: Bundle>(
        &mut self,
        _b: &mut RegBank<S>,
        _w: &mut NextWire<T>,
        _get: impl Fn(&S) -> &T,
    ) {
    }
    #[inline]
    fn bank<S: Copy + 'static>(&mut self, b: &mut RegBank<S>) {
        b.commit(self.rst);
    }
    #[inline]
    fn rare_bank<S: Copy + 'static>(&mut self, b: &mut RareBank<S>) {
        b.commit(self.rst);
    }
    #[inline]
    fn delay_reg<E: Copy + 'static, T: Bundle>(
        &mut self,
        dl: &mut DelayLines<E>,
        stage: usize,
        field: usize,
        get: impl Fn(&E) -> &T,
    ) {
        if self.track {
            let next = if self.rst {
                *dl.reset_value()
            } else {
                dl.d_of(stage)
            };
            let width = dl.field_meta(field, stage).width;
            self.changed |= !get(&next).same_bits(get(&dl.q_of(stage)), width);
        }
    }
    #[inline]
    fn delay<E: Copy + 'static>(&mut self, dl: &mut DelayLines<E>) {
        dl.commit(self.rst);
    }
}

/// What kind of signal a table entry is, and a cold pass is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalKind {
    /// A register's `q` output.
    Reg,
    /// A named combinational wire.
    Wire,
    /// A testbench-driven input.
    Input,
}

/// One register, wire or input as a cold pass sees it: through one object-safe interface, so
/// that every cold pass (elaboration, observation, peeks, the settle check) shares a single
/// instance of each block's `visit` ([`Cold`]) instead of one per pass.
pub(in crate::rtl) trait SignalAccess {
    /// Name, labels and viewer hints.
    fn meta(&self) -> &SignalMeta;
    /// Declared width in bits.
    fn width(&self) -> u32;
    /// Storage words of the value type.
    fn words(&self) -> usize;
    /// The current value (a register's `q`), encoded into `out` (`words()` long).
    fn encode_now(&self, out: &mut [u64]);
    /// A register's pending `d` (a wire's or input's value), encoded into `out`.
    fn encode_next(&self, out: &mut [u64]);
    /// Turns a wire's observation on or off (nothing for registers and inputs).
    fn observe(&mut self, _on: bool) {}
    /// Whether this is a field register (of a register bank or a stage of delay lines),
    /// whose outputs the record keeps for the toggle counter.
    fn is_field(&self) -> bool {
        false
    }
    /// Whether this is a register-bank field's next value shown as a wire
    /// ([`NextWire`]), which the toggle counter reads from the bank's kept outputs.
    fn is_next(&self) -> bool {
        false
    }
}

impl<T: Bundle> SignalAccess for Reg<T> {
    fn meta(&self) -> &SignalMeta {
        self.meta_ref()
    }
    fn width(&self) -> u32 {
        Reg::width(self)
    }
    fn words(&self) -> usize {
        T::WORDS
    }
    fn encode_now(&self, out: &mut [u64]) {
        encode_signal(&self.q(), Reg::width(self), out);
    }
    fn encode_next(&self, out: &mut [u64]) {
        encode_signal(&self.d(), Reg::width(self), out);
    }
}

impl<T: Bundle> SignalAccess for Wire<T> {
    fn meta(&self) -> &SignalMeta {
        self.meta_ref()
    }
    fn width(&self) -> u32 {
        Wire::width(self)
    }
    fn words(&self) -> usize {
        T::WORDS
    }
    fn encode_now(&self, out: &mut [u64]) {
        encode_signal(&self.get(), Wire::width(self), out);
    }
    fn encode_next(&self, out: &mut [u64]) {
        self.encode_now(out);
    }
    fn observe(&mut self, on: bool) {
        Wire::observe(self, on);
    }
}

impl<T: Value> SignalAccess for Input<T> {
    fn meta(&self) -> &SignalMeta {
        self.meta_ref()
    }
    fn width(&self) -> u32 {
        Input::width(self)
    }
    fn words(&self) -> usize {
        T::WORDS
    }
    fn encode_now(&self, out: &mut [u64]) {
        encode_signal(&self.get(), Input::width(self), out);
    }
    fn encode_next(&self, out: &mut [u64]) {
        self.encode_now(out);
    }
}

/// A field register as a cold pass sees it (field `i` of a register bank, or one register of a
/// stage of delay lines): its output and next value, read when the view is made. Generic over
/// the field's type only, so every field of one type shares one view (a view that kept the
/// field's accessor closure was one more type, and one more copy of the encoders, per field).
struct FieldView<'a, T: Bundle> {
    meta: &'a BankField,
    q: T,
    d: T,
}

impl<T: Bundle> SignalAccess for FieldView<'_, T> {
    fn meta(&self) -> &SignalMeta {
        &self.meta.meta
    }
    fn width(&self) -> u32 {
        self.meta.width
    }
    fn words(&self) -> usize {
        T::WORDS
    }
    fn encode_now(&self, out: &mut [u64]) {
        encode_field(&self.q, self.width(), out);
    }
    fn encode_next(&self, out: &mut [u64]) {
        encode_field(&self.d, self.width(), out);
    }
    fn is_field(&self) -> bool {
        true
    }
}

/// A [`NextWire`] as a cold pass sees it: the wire and the field's next value, read when the
/// view is made.
struct NextView<'a, T: Bundle> {
    wire: &'a NextWire<T>,
    next: T,
}

impl<T: Bundle> SignalAccess for NextView<'_, T> {
    fn meta(&self) -> &SignalMeta {
        self.wire.meta_ref()
    }
    fn width(&self) -> u32 {
        self.wire.width()
    }
    fn words(&self) -> usize {
        T::WORDS
    }
    fn encode_now(&self, out: &mut [u64]) {
        encode_field(&self.next, self.width(), out);
    }
    fn encode_next(&self, out: &mut [u64]) {
        self.encode_now(out);
    }
    fn is_next(&self) -> bool {
        true
    }
}

/// A pass over the design that runs rarely (at elaboration, on a peek, in the settle check):
/// it sees each signal through [`SignalAccess`] and each scope by name.
pub(in crate::rtl) trait ColdPass {
    /// A signal of the current scope, in visit order.
    fn signal(&mut self, kind: SignalKind, s: &mut dyn SignalAccess);
    /// Entering the child scope `name`.
    fn enter(&mut self, _name: &str) {}
    /// Leaving the scope entered last.
    fn leave(&mut self) {}
    /// Whether each block is told ([`Module::observed`]) after its signals were visited.
    fn tells_observed(&self) -> bool {
        false
    }
}

/// The visitor of every [`ColdPass`]: one instance of each block's `visit` for all of them.
pub(in crate::rtl) struct Cold<'a>(pub &'a mut dyn ColdPass);

impl Cold<'_> {
    /// Runs `pass` over `top` (and tells `top` of its wires' observation if the pass does).
    pub fn run<M: Module>(top: &mut M, pass: &mut dyn ColdPass) {
        let tells = pass.tells_observed();
        top.visit(&mut Cold(pass));
        if tells {
            top.observed();
        }
    }
}

impl Sealed for Cold<'_> {}
impl Visitor for Cold<'_> {
    fn reg<T: Bundle>(&mut self, r: &mut Reg<T>) {
        self.0.signal(SignalKind::Reg, r);
    }
    fn wire<T: Bundle>(&mut self, w: &mut Wire<T>) {
        self.0.signal(SignalKind::Wire, w);
    }
    fn input<T: Value>(&mut self, i: &mut Input<T>) {
        self.0.signal(SignalKind::Input, i);
    }
    fn child<M: Module>(&mut self, m: &mut M) {
        self.0.enter(m.name());
        m.visit(self);
        self.0.leave();
        if self.0.tells_observed() {
            m.observed();
        }
    }
    fn bank_reg<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        i: usize,
        get: impl Fn(&S) -> &T,
    ) {
        let mut view = FieldView {
            meta: b.field_meta(i),
            q: *get(b.q()),
            d: *get(b.d()),
        };
        self.0.signal(SignalKind::Reg, &mut view);
    }
    fn bank_next<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        w: &mut NextWire<T>,
        get: impl Fn(&S) -> &T,
    ) {
        let next = *get(b.d());
        self.0
            .signal(SignalKind::Wire, &mut NextView { wire: w, next });
    }
    fn bank<S: Copy + 'static>(&mut self, _b: &mut RegBank<S>) {}
    fn rare_bank<S: Copy + 'static>(&mut self, _b: &mut RareBank<S>) {}
    fn delay_reg<E: Copy + 'static, T: Bundle>(
        &mut self,
        dl: &mut DelayLines<E>,
        stage: usize,
        field: usize,
        get: impl Fn(&E) -> &T,
    ) {
        let mut view = FieldView {
            meta: dl.field_meta(field, stage),
            q: *get(&dl.q_of(stage)),
            d: *get(&dl.d_of(stage)),
        };
        self.0.signal(SignalKind::Reg, &mut view);
    }
    fn delay<E: Copy + 'static>(&mut self, _dl: &mut DelayLines<E>) {}
}

/// A memory array is a module: its port signals, in a nested scope named after it (the
/// engine's passes reach it through [`Visitor::mem`]).
impl<T: Value> Module for Mem<T> {
    fn name(&self) -> &str {
        &self.name
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.wire(&mut self.we);
        v.wire(&mut self.waddr);
        v.wire(&mut self.wlen);
        v.wire(&mut self.wdata);
        v.wire(&mut self.re);
        v.wire(&mut self.raddr);
        v.wire(&mut self.rlen);
        v.reg(&mut self.rdata);
    }
}
