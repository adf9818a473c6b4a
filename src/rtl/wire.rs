//! Named combinational values ([`Wire`]) and testbench-driven top-level inputs ([`Input`]).

use std::borrow::Cow;
use std::marker::PhantomData;

use super::bundle::Bundle;
use super::error::Result;
use super::signal::{signal_accessors, Boxed, SignalMeta};
use super::value::{low_mask_u64, Value};

/// A named combinational signal, exposed for tracing.
///
/// A block computes its combinational values as ordinary Rust locals and publishes the ones worth
/// seeing in a waveform with [`Wire::set`]. A wire is *write-only* for block code: no block can
/// read another block's wire, so no result can depend on whether the other block's
/// combinational phase ran first. Combinational values that another block needs are passed as
/// return values of the producer's `comb` method, where Rust's data flow fixes the order.
///
/// ```compile_fail
/// use tensorcore_rtl::rtl::Wire;
/// let w = Wire::new("lzc", 5, 0u8).unwrap();
/// let _ = w.get(); // error: wires are readable by the engine (tracer, `Simulator::peek`) only
/// ```
///
/// A wire not set in a cycle keeps its previous value in the trace, so a block should drive
/// every wire every cycle (the PE drives its idle datapath wires to 0: operand isolation).
///
/// # Wires only for the waves
/// A wire nobody reads costs one predictable branch. The simulator decides once, when the
/// design is elaborated, which wires are *observed*: with [`crate::rtl::Simulator::with_trace`]
/// the ones the trace selects (its globs; the window does not matter), with
/// [`crate::rtl::Simulator::new`] none. [`crate::rtl::Simulator::settle`],
/// [`crate::rtl::Simulator::peek`], [`crate::rtl::Simulator::values`] and the settle check
/// ([`crate::rtl::Simulator::set_check_comb`]) turn every wire on for the rest of the run, and
/// `peek`/`values` then re-run the combinational phase, so every reader sees this cycle's
/// values. A wire not yet in a simulator is observed.
///
/// An unobserved wire stores nothing: [`Wire::set`] skips the store (and the optimiser may
/// skip a pure argument's computation with it), and [`Wire::set_with`] does not even call its
/// closure, for values assembled only for the waves.
///
/// ```
/// use tensorcore_rtl::rtl::Wire;
/// let mut w = Wire::new("exp_sum", 8, 0u8).unwrap();
/// w.set_with(|| 3 + 4); // computed: a wire outside a simulator is observed
/// assert!(w.is_observed());
/// ```
///
/// A wire may hold a [`Bundle`] record as well as a plain value.
#[derive(Debug, Clone)]
pub struct Wire<T: Bundle> {
    value: T,
    width: u32,
    /// The mask of the low `min(width, 64)` bits (see [`Bundle::truncate_with`]).
    low: u64,
    observed: bool,
    meta: Boxed,
}

signal_accessors!(Wire, Bundle);

impl<T: Bundle> Wire<T> {
    /// A wire of `width` bits named `name`, starting at `initial`.
    pub fn new(name: impl Into<Cow<'static, str>>, width: u32, initial: T) -> Result<Self> {
        Ok(Self {
            meta: SignalMeta::new::<T>(name, width)?,
            value: initial.truncate(width),
            width,
            low: low_mask_u64(width),
            observed: true,
        })
    }

    /// Publishes this cycle's value (truncated to the width); a no-op while the wire is not
    /// observed.
    #[inline(always)]
    pub fn set(&mut self, value: T) {
        if self.observed {
            self.value = value.truncate_with(self.width, self.low);
        }
    }

    /// Publishes this cycle's value computed by `value`, which runs only while the wire is
    /// observed (traced, or peeked; see the type's documentation). For values assembled only
    /// for the waves: an untraced run pays one branch.
    #[inline(always)]
    pub fn set_with(&mut self, value: impl FnOnce() -> T) {
        if self.observed {
            self.value = value().truncate_with(self.width, self.low);
        }
    }

    /// Whether anything reads this wire (a tracer that selects it, a peek, the settle check),
    /// fixed when the design is elaborated. A block may use it to skip assembling several
    /// wave-only values at once; it never changes a register's value.
    #[inline(always)]
    pub fn is_observed(&self) -> bool {
        self.observed
    }

    /// Turns the wire's observation on or off (the simulator's elaboration pass). Engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn observe(&mut self, on: bool) {
        self.observed = on;
    }

    #[inline(always)]
    pub(in crate::rtl) fn get(&self) -> T {
        self.value
    }
}

/// A named wire that carries a register-bank field's next value: the net on the field
/// register's D input, as `a_in` is the D input of a PE's `a_out` register. Its value is
/// whatever the block's combinational phase wrote into the field with
/// [`crate::rtl::RegBank::set`] this cycle, so it stores nothing and the combinational phase
/// pays nothing for it, traced or not; the block presents it where it stands in its signal
/// list with [`crate::rtl::Visitor::bank_next`] (the bank and the field's accessor beside
/// it). Traced, it is a wire like any other: the same name, width, display and value a
/// [`Wire`] set to the field's next value would show.
///
/// Like every wire it is readable by the engine only: block code cannot read a register's
/// next value through it.
///
/// ```
/// use tensorcore_rtl::rtl::NextWire;
/// let w = NextWire::<u16>::new("a_in", 16).unwrap().in_overview();
/// assert_eq!(w.width(), 16);
/// assert!(w.is_overview());
/// ```
#[derive(Debug, Clone)]
pub struct NextWire<T: Bundle> {
    width: u32,
    meta: Boxed,
    value: PhantomData<fn() -> T>,
}

signal_accessors!(NextWire, Bundle);

impl<T: Bundle> NextWire<T> {
    /// A wire of `width` bits named `name` that shows a field of type `T`.
    pub fn new(name: impl Into<Cow<'static, str>>, width: u32) -> Result<Self> {
        Ok(Self {
            meta: SignalMeta::new::<T>(name, width)?,
            width,
            value: PhantomData,
        })
    }
}

/// A top-level input driven by the testbench between cycles (e.g. `start`, a data word).
///
/// The testbench sets it through [`crate::rtl::Simulator::top_mut`] before a step; during the
/// combinational phase it is stable, so reading it is order independent. Inside a design, pass
/// values to child blocks as arguments of their `comb` method instead.
#[derive(Debug, Clone)]
pub struct Input<T: Value> {
    value: T,
    width: u32,
    meta: Boxed,
}

signal_accessors!(Input, Value);

impl<T: Value> Input<T> {
    /// An input of `width` bits named `name`, starting at `initial`.
    pub fn new(name: impl Into<Cow<'static, str>>, width: u32, initial: T) -> Result<Self> {
        Ok(Self {
            meta: SignalMeta::new::<T>(name, width)?,
            value: initial.mask(width),
            width,
        })
    }

    /// Drives the input (truncated to the width). Call between steps.
    pub fn set(&mut self, value: T) {
        self.value = value.mask(self.width);
    }

    /// The driven value.
    #[inline(always)]
    pub fn get(&self) -> T {
        self.value
    }
}
