//! Registers: a `d` input written by combinational logic and a `q` output committed by the
//! engine's clock edge.

use std::borrow::Cow;

use super::error::{Result, RtlError};
use super::value::Value;

/// Value labels of a signal: `(value, name)` pairs, e.g. an FSM's state names. Read only when
/// the GTKWave save file is written (they become a translate filter file); never in the clock
/// loop and never in the waveform itself.
pub type Labels = &'static [(u64, &'static str)];

/// A clocked register with synchronous reset.
///
/// Block code reads [`Reg::q`] (the value latched at the last rising edge) and writes the next
/// value with [`Reg::set_d`]. Only the engine's clock edge moves `d` into `q` (all registers at
/// once, after every combinational phase has run), so `q` is stable for the whole combinational
/// phase and reading it is independent of evaluation order. There is no way for block code to
/// assign `q`:
///
/// ```compile_fail
/// use tensorcore_rtl::rtl::Reg;
/// let mut r = Reg::new("count", 8, 0u8).unwrap();
/// r.q = 5; // error: field `q` is private
/// ```
///
/// Nor can another block read a register's pending `d` (that would depend on whether its owner's
/// combinational phase ran first):
///
/// ```compile_fail
/// use tensorcore_rtl::rtl::Reg;
/// let r = Reg::new("count", 8, 0u8).unwrap();
/// let _ = r.d(); // error: `d` is private to the engine
/// ```
///
/// A register not written in a cycle holds its value. Values written with `set_d` are truncated
/// to the declared width. At power-on, and at every edge while `rst` is high, `q` takes the reset
/// value.
#[derive(Debug, Clone)]
pub struct Reg<T: Value> {
    q: T,
    d: T,
    reset: T,
    width: u32,
    name: Cow<'static, str>,
    labels: Labels,
}

impl<T: Value> Reg<T> {
    /// A register of `width` bits named `name` (local to its module) with reset value `reset`.
    ///
    /// Fails if `width` is 0 or more than `T` holds, or if `reset` does not fit in `width` bits.
    pub fn new(name: impl Into<Cow<'static, str>>, width: u32, reset: T) -> Result<Self> {
        let name = name.into();
        check_width::<T>(&name, width)?;
        if reset.mask(width) != reset {
            return Err(RtlError::ResetTooWide {
                name: name.into_owned(),
                width,
            });
        }
        Ok(Self {
            q: reset,
            d: reset,
            reset,
            width,
            name,
            labels: &[],
        })
    }

    /// Attaches value labels (e.g. FSM state names): GTKWave then shows the name instead of the
    /// number, through a translate filter file written beside the `.gtkw` save file. The
    /// waveform itself is unchanged.
    ///
    /// ```
    /// use tensorcore_rtl::rtl::Reg;
    /// let r = Reg::new("state", 2, 0u8).unwrap().with_labels(&[(0, "Idle"), (1, "Busy")]);
    /// assert_eq!(r.labels()[1], (1, "Busy"));
    /// ```
    pub fn with_labels(mut self, labels: Labels) -> Self {
        self.labels = labels;
        self
    }

    /// The value labels (empty if none).
    pub fn labels(&self) -> Labels {
        self.labels
    }

    /// The output latched at the last rising edge.
    #[inline(always)]
    pub fn q(&self) -> T {
        self.q
    }

    /// Sets the value to be latched at the next rising edge (truncated to the width).
    #[inline(always)]
    pub fn set_d(&mut self, value: T) {
        self.d = value.mask(self.width);
    }

    /// The declared width in bits.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The local name (the last component of its hierarchical name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The reset value.
    pub fn reset_value(&self) -> T {
        self.reset
    }

    /// The pending next value; engine-only (reading another block's `d` would depend on
    /// evaluation order).
    #[inline(always)]
    pub(in crate::rtl) fn d(&self) -> T {
        self.d
    }

    /// The rising edge: `q <- rst ? reset : d`. Returns whether `q` changed. Engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn commit(&mut self, rst: bool) -> bool {
        let next = if rst { self.reset } else { self.d };
        let changed = next != self.q;
        self.q = next;
        self.d = next;
        changed
    }
}

pub(in crate::rtl) fn check_width<T: Value>(name: &str, width: u32) -> Result<()> {
    if width == 0 || width > T::CAPACITY {
        return Err(RtlError::BadWidth {
            name: name.to_string(),
            width,
            capacity: T::CAPACITY,
        });
    }
    Ok(())
}
