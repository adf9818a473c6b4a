//! Named combinational values ([`Wire`]) and testbench-driven top-level inputs ([`Input`]).

use std::borrow::Cow;

use super::error::Result;
use super::signal::{signal_accessors, SignalMeta};
use super::value::Value;

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
#[derive(Debug, Clone)]
pub struct Wire<T: Value> {
    value: T,
    meta: SignalMeta,
}

signal_accessors!(Wire);

impl<T: Value> Wire<T> {
    /// A wire of `width` bits named `name`, starting at `initial`.
    pub fn new(name: impl Into<Cow<'static, str>>, width: u32, initial: T) -> Result<Self> {
        Ok(Self {
            meta: SignalMeta::new::<T>(name, width)?,
            value: initial.mask(width),
        })
    }

    /// Publishes this cycle's value (truncated to the width).
    #[inline(always)]
    pub fn set(&mut self, value: T) {
        self.value = value.mask(self.meta.width);
    }

    #[inline(always)]
    pub(in crate::rtl) fn get(&self) -> T {
        self.value
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
    meta: SignalMeta,
}

signal_accessors!(Input);

impl<T: Value> Input<T> {
    /// An input of `width` bits named `name`, starting at `initial`.
    pub fn new(name: impl Into<Cow<'static, str>>, width: u32, initial: T) -> Result<Self> {
        Ok(Self {
            meta: SignalMeta::new::<T>(name, width)?,
            value: initial.mask(width),
        })
    }

    /// Drives the input (truncated to the width). Call between steps.
    pub fn set(&mut self, value: T) {
        self.value = value.mask(self.meta.width);
    }

    /// The driven value.
    #[inline(always)]
    pub fn get(&self) -> T {
        self.value
    }
}
